#!/bin/bash
# shellcheck disable=SC2016 # the checks are bash -c scripts, expanded where they run
# The CLI's duplicate test: the feature installed twice in one image (with
# its defaults and with other options). The second install finishes the
# first: one launcher, one real binary, one conf.
set -e
# shellcheck source=/dev/null
source dev-container-features-test-lib

check "claude is the launcher" bash -c '[ "$(readlink -f "$(command -v claude)")" = /usr/libexec/claude-sandbox/claude-sandbox ]'
check "one network line in the conf" bash -c '[ "$(grep -c "^network = " /etc/claude-sandbox.conf)" = 1 ]'
check "doctor is all ok" /usr/libexec/claude-sandbox/claude-sandbox doctor

reportResults
