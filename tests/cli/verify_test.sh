#!/usr/bin/env bash
# `rolly verify` over several files: one line each, and the exit code of the worst.
#
#   verify_test.sh ROLLY GENERATOR     (GENERATOR: examples/format_basics, writes a valid save)
set -u
ROLLY="$1"
GENERATOR="$2"
. "$(dirname "$0")/lib.sh"

good="$WORK/good.rsav"
other="$WORK/other.rsav"
make_sample "$good"
make_sample "$other"
flip_byte "$good" "$WORK/chunk.rsav" -1
flip_byte "$good" "$WORK/header.rsav" 70
head -c 100 "$good" >"$WORK/short.rsav"

# Every file valid: exit 0.
run "$ROLLY" verify "$good" "$other"
expect_exit 0
expect_empty_stderr
expect_line "$good: ok"
expect_line "$other: ok"

# Mixed: each damaged file names its part; exit 1.
run "$ROLLY" verify "$good" "$WORK/chunk.rsav" "$WORK/header.rsav" "$WORK/short.rsav" "$other"
expect_exit 1
expect_empty_stderr
expect_line "$good: ok"
expect_line "$WORK/chunk.rsav: Damaged: chunk 1 (TEST \"note\"): checksum does not match"
expect_line "$WORK/header.rsav: Damaged: header: checksum does not match"
expect_match "^$WORK/short.rsav: Damaged: file: truncated: 100 bytes of the recorded [0-9]+$"
expect_line "$other: ok"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 5 ] || fail "expected 5 lines"

# A missing path: a line on stderr with the OS's reason, the other files still checked, exit 2
# (which wins over a damaged file's 1).
run "$ROLLY" verify "$good" "$WORK/missing.rsav" "$WORK/chunk.rsav"
expect_exit 2
expect_line "$good: ok"
expect_line "$WORK/chunk.rsav: Damaged: chunk 1 (TEST \"note\"): checksum does not match"
expect_err_match "^rolly verify: cannot read $WORK/missing.rsav: No such file or directory$"
expect_no_match "missing"

run "$ROLLY" verify "$WORK/missing.rsav"
expect_exit 2
expect_empty_stdout

# A file larger than any valid one is refused unread, as damaged.
truncate -s 1200M "$WORK/huge.rsav"
run "$ROLLY" verify "$WORK/huge.rsav" "$good"
expect_exit 1
expect_match "^$WORK/huge.rsav: Damaged: file: 1258291200 bytes, larger than any file this version can read"
expect_line "$good: ok"

# --known-chunk takes one ID each time and checks it.
run "$ROLLY" verify --known-chunk MYGM "$good" --known-chunk SAVE "$other"
expect_exit 0
expect_line "$good: ok"
expect_line "$other: ok"
run "$ROLLY" verify --known-chunk TOOLONG "$good"
expect_exit 2
expect_empty_stdout

# No files: a usage error.
run "$ROLLY" verify
expect_exit 2
expect_empty_stdout
expect_err_match 'FILE is required'

finish
