#!/bin/bash
# shellcheck disable=SC2016 # the checks are bash -c scripts, expanded where they run
# Scenario claude_version: the claudeVersion pin is the Claude Code installed.
set -e
# shellcheck source=/dev/null
source dev-container-features-test-lib

check "the pinned version runs" bash -c 'claude --version | grep -qx "2.1.332 (Claude Code)"'

reportResults
