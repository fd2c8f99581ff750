#!/usr/bin/env bash
# `rolly info` on a valid file (text and --json), on damaged ones, and on paths it cannot read.
#
#   info_test.sh ROLLY GENERATOR     (GENERATOR: examples/format_basics, writes a valid save)
set -u
ROLLY="$1"
GENERATOR="$2"
. "$(dirname "$0")/lib.sh"

good="$WORK/saves/sample.rsav"
make_sample "$good"

# A valid file: every part, exit 0, nothing on stderr.
run "$ROLLY" info "$good"
expect_exit 0
expect_empty_stderr
expect_line "file: $good ($(stat -c %s "$good") bytes)"
expect_line '  format version: 1'
expect_line '  min reader version: 1'
expect_match '^  prelude checksum: [0-9a-f]{16} ok$'
expect_match '^  header checksum: [0-9a-f]{16} ok$'
expect_match '^  directory checksum: [0-9a-f]{16} ok$'
expect_match '^  file checksum: [0-9a-f]{16} ok$'
expect_line '  slot name: "slot-1"'
expect_line '  title: "Chapter 2: The Mill"'
expect_line '  sequence: 7'
expect_line '  game data version: 3'
expect_line '  library version: 0.1.0'
expect_line '  kind: Manual'
expect_match '^  save time: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$'
expect_line '  custom versions: 2'
expect_line '    "MyGame.Inventory": 2'
expect_line 'chunks: 2'
expect_match '^  chunk 0 \(TEST "world"\): flags 0, codec zstd, stored [0-9]+, decoded [0-9]+, checksum ok$'
expect_match '^  chunk 1 \(TEST "note"\): flags 0, codec stored, stored 11, decoded 11, checksum ok$'
expect_line 'status: ok'

# The same as JSON: one valid JSON object with the same facts.
run "$ROLLY" info --json "$good"
expect_exit 0
expect_empty_stderr
printf '%s\n' "$out" | python3 -m json.tool >/dev/null || fail "not valid JSON"
printf '%s\n' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["valid"] is True and d["status"] == "Ok" and d["message"] == "", d
assert d["prelude"]["format_version"] == 1
assert all(c["state"] == "ok" for c in d["prelude"]["checksums"].values())
h = d["header"]
assert h["slot_name"] == "slot-1" and h["kind_name"] == "Manual" and h["library_version"] == "0.1.0"
assert h["custom_versions"] == [{"key": "MyGame.Inventory", "version": 2},
                                {"key": "MyGame.Quests", "version": 5}]
assert [c["key"] for c in d["chunks"]] == ["world", "note"]
assert d["chunks"][0]["codec_name"] == "zstd" and d["chunks"][1]["codec_name"] == "stored"
assert all(c["checksum"]["state"] == "ok" for c in d["chunks"])
' || fail "JSON does not hold the expected fields"

# The last chunk damaged: still shows the header and the chunks, names the part, exits 1.
damaged="$WORK/damaged.rsav"
flip_byte "$good" "$damaged" -1
run "$ROLLY" info "$damaged"
expect_exit 1
expect_empty_stderr
expect_line '  slot name: "slot-1"'
expect_match '^  file checksum: [0-9a-f]{16} damaged \(actual [0-9a-f]{16}\)$'
expect_match '^  chunk 0 \(TEST "world"\): stored [0-9]+, checksum ok$'
expect_match '^  chunk 1 \(TEST "note"\): stored 11, checksum damaged \(recorded [0-9a-f]{16}, actual [0-9a-f]{16}\)$'
expect_line 'status: Damaged: chunk 1 (TEST "note"): checksum does not match'

run "$ROLLY" info --json "$damaged"
expect_exit 1
printf '%s\n' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["valid"] is False and d["status"] == "Damaged", d
assert d["message"] == "chunk 1 (TEST \"note\"): checksum does not match", d["message"]
assert d["chunks_complete"] is False
assert [c["checksum"]["state"] for c in d["chunks"]] == ["ok", "damaged"]
assert d["chunks"][1]["codec"] is None and d["header"]["title"] == "Chapter 2: The Mill"
' || fail "JSON of a damaged file does not hold the expected fields"

# A damaged header: the header is not shown, the status names it.
flip_byte "$good" "$WORK/header.rsav" 70
run "$ROLLY" info "$WORK/header.rsav"
expect_exit 1
expect_line 'header: not readable (Damaged: header: checksum does not match)'
expect_line 'status: Damaged: header: checksum does not match'

# A truncated file.
head -c 100 "$good" >"$WORK/short.rsav"
run "$ROLLY" info "$WORK/short.rsav"
expect_exit 1
expect_match '^status: Damaged: file: truncated: 100 bytes of the recorded [0-9]+$'

# Not a save at all.
printf 'hello' >"$WORK/hello.txt"
run "$ROLLY" info "$WORK/hello.txt"
expect_exit 1
expect_line 'prelude: not readable'
expect_match '^status: Damaged: prelude: '
run "$ROLLY" info --json "$WORK/hello.txt"
expect_exit 1
printf '%s\n' "$out" | python3 -m json.tool >/dev/null || fail "not valid JSON"

# Paths it cannot read: exit 2, the reason on stderr, nothing on stdout.
run "$ROLLY" info "$WORK/missing.rsav"
expect_exit 2
expect_empty_stdout
expect_err_match "^rolly info: cannot read $WORK/missing.rsav: No such file or directory$"
run "$ROLLY" info "$WORK"
expect_exit 2
expect_err_match "^rolly info: cannot read $WORK: Is a directory$"

# Larger than any valid file (sparse, so it takes no space): refused without being read.
truncate -s 1200M "$WORK/huge.rsav"
run "$ROLLY" info "$WORK/huge.rsav"
expect_exit 1
expect_match '^status: Damaged: file: 1258291200 bytes, larger than any file this version can read \([0-9]+ bytes\); not read$'
# At the bound (64 bytes + 16 MiB + 16 MiB + 1 GiB) the file is read, and found damaged; one byte
# past, it is refused unread.
truncate -s 1107296320 "$WORK/bound.rsav"
run "$ROLLY" info "$WORK/bound.rsav"
expect_exit 1
expect_match '^status: Damaged: prelude'
truncate -s 1107296321 "$WORK/bound.rsav"
run "$ROLLY" info "$WORK/bound.rsav"
expect_exit 1
expect_match '^status: Damaged: file: 1107296321 bytes, larger than any file this version can read'
rm -f "$WORK/bound.rsav"

# Usage errors.
run "$ROLLY" info
expect_exit 2
expect_empty_stdout
run "$ROLLY" info "$good" "$good"
expect_exit 2
run "$ROLLY" info --no-such-option "$good"
expect_exit 2

finish
