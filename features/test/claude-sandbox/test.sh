#!/bin/bash
# shellcheck disable=SC2016 # the checks are bash -c scripts, expanded where they run
# `devcontainer features test`: the feature with its default options, as the
# remote user. dev-container-features-test-lib is the CLI's own.
set -e
# shellcheck source=/dev/null
source dev-container-features-test-lib

check "claude is the launcher" bash -c '[ "$(readlink -f "$(command -v claude)")" = /usr/libexec/claude-sandbox/claude-sandbox ]'
check "the real Claude Code is off PATH" test -x /usr/libexec/claude-sandbox/claude
check "claude --version runs it through the sandbox" bash -c 'claude --version | grep -q "(Claude Code)"'
check "doctor is all ok" /usr/libexec/claude-sandbox/claude-sandbox doctor
check "network = allowlist" grep -qx 'network = allowlist' /etc/claude-sandbox.conf
check "credentials = proxy" grep -qx 'credentials = proxy' /etc/claude-sandbox.conf
check "no npm install tree left" test ! -e /var/cache/claude-sandbox/npm
check "no apt lists left" bash -c '[ -z "$(ls /var/lib/apt/lists/ | grep -v -e ^lock$ -e ^partial$)" ]'

reportResults
