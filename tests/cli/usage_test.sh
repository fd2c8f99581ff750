#!/usr/bin/env bash
# The command line itself: no verb, an unknown verb, an unknown option, help and version.
#
#   usage_test.sh ROLLY
set -u
ROLLY="$1"
. "$(dirname "$0")/lib.sh"

run "$ROLLY"
expect_exit 2
expect_empty_stdout
expect_err_match '^rolly: a verb is required \(demo, info, slots or verify\)$'

run "$ROLLY" frobnicate file.rsav
expect_exit 2
expect_empty_stdout
expect_err_match "^rolly: unknown verb 'frobnicate' \(the verbs are demo, info, slots and verify\)$"

run "$ROLLY" --no-such-option
expect_exit 2
expect_empty_stdout
expect_err_match 'not expected: --no-such-option'

run "$ROLLY" --help
expect_exit 0
expect_match '^  info '
expect_match '^  verify '

run "$ROLLY" info --help
expect_exit 0
expect_match '^ +--json'

run "$ROLLY" --version
expect_exit 0
expect_match '^rolly [0-9]+\.[0-9]+\.[0-9]+$'

finish
