#!/bin/bash
# shellcheck disable=SC2016 # the checks are bash -c scripts, expanded where they run
# Scenario remote_user_root: the remote user is root; the sandbox still
# holds (Claude Code runs as root only with IS_SANDBOX=1, which only the
# launcher sets, inside).
set -e
# shellcheck source=/dev/null
source dev-container-features-test-lib

check "the remote user is root" bash -c '[ "$(id -u)" = 0 ]'
check "claude is the launcher" bash -c '[ "$(readlink -f "$(command -v claude)")" = /usr/libexec/claude-sandbox/claude-sandbox ]'
check "doctor is all ok" /usr/libexec/claude-sandbox/claude-sandbox doctor
check "claude --version runs it through the sandbox" bash -c 'claude --version | grep -q "(Claude Code)"'

reportResults
