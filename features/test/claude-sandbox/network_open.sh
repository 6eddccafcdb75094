#!/bin/bash
# shellcheck disable=SC2016 # the checks are bash -c scripts, expanded where they run
# Scenario network_open: the sandbox uses the container's network as it is.
set -e
# shellcheck source=/dev/null
source dev-container-features-test-lib

check "network = open" grep -qx 'network = open' /etc/claude-sandbox.conf
check "doctor is all ok" /usr/libexec/claude-sandbox/claude-sandbox doctor
check "claude --version runs it through the sandbox" bash -c 'claude --version | grep -q "(Claude Code)"'

reportResults
