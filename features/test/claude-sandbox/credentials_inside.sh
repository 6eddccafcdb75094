#!/bin/bash
# shellcheck disable=SC2016 # the checks are bash -c scripts, expanded where they run
# Scenario credentials_inside: the login enters the sandbox (Bedrock, Vertex,
# an apiKeyHelper).
set -e
# shellcheck source=/dev/null
source dev-container-features-test-lib

check "credentials = inside" grep -qx 'credentials = inside' /etc/claude-sandbox.conf
check "doctor is all ok" /usr/libexec/claude-sandbox/claude-sandbox doctor

reportResults
