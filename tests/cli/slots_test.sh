#!/usr/bin/env bash
# `rolly slots DIR`: the slots of a folder from its index, text and JSON, a slot whose newest copy
# is damaged, a folder without an index, metadata larger than a listing carries, and the usage
# errors.
#
#   slots_test.sh ROLLY STORE_EXAMPLE SAVE_SLOTS
#     STORE_EXAMPLE: examples/store_basics, saves 3 slots
#     SAVE_SLOTS: tests/cli/save_slots, saves slots with metadata of chosen sizes
set -u
ROLLY="$1"
EXAMPLE="$2"
SAVE_SLOTS="$3"
. "$(dirname "$0")/lib.sh"

saves="$WORK/saves"
"$EXAMPLE" "$saves" >/dev/null || { echo "FAIL: store_basics could not save" >&2; exit 1; }

run "$ROLLY" slots "$saves"
expect_exit 0
expect_empty_stderr
expect_line "folder: $saves (prefix rolly)"
expect_line "slots: 3"
expect_match '^  "Slot 1": title "The Mill, later", Manual, saved [0-9-]+T[0-9:.]+Z, sequence 2, [0-9]+ bytes$'
expect_line '    loads copy b (copy a valid, copy b valid)'
expect_match '^  "Autosave": title "On the road", Manual, saved .*, sequence 1, [0-9]+ bytes$'
expect_match '^  "Slot 2": title "The Keep"'

run "$ROLLY" slots "$saves" --json
expect_exit 0
printf '%s\n' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
names = [s["name"] for s in d["slots"]]
assert names == ["Autosave", "Slot 1", "Slot 2"], names
s = d["slots"][1]
assert s["sequence"] == 2 and s["copy"] == "b" and s["copy_a"] == "valid", s
assert s["recovered"] is False and s["damaged"] is False, s
' || fail "JSON does not list the slots as saved"

# Without the index, the slots are rebuilt from the saves' headers (nothing is written), and a
# save the game is writing meanwhile (its temporary file) is left alone.
rm -f "$saves"/rolly.index.*.rsav
printf 'a save being written' > "$saves/rolly.slot.^slot~203.a.rsav.tmp"
before="$(ls "$saves" | sort)"
run "$ROLLY" slots "$saves"
expect_exit 0
expect_line "slots: 3"
[ "$(ls "$saves" | sort)" = "$before" ] || fail "slots wrote into the folder"
rm -f "$saves/rolly.slot.^slot~203.a.rsav.tmp"

# The newest copy of Slot 1 (copy b) damaged in its last byte: --verify checks the copies whole, so
# it finds that a load takes copy a; exit 1.
flip_byte "$saves/rolly.slot.^slot~201.b.rsav" "$WORK/b.rsav" -1
cp "$WORK/b.rsav" "$saves/rolly.slot.^slot~201.b.rsav"
run "$ROLLY" slots "$saves" --verify
expect_exit 1
expect_line '    loads copy a (copy a valid, copy b damaged); recovered: the newest save is damaged, the older copy loads'
# What it shows of the slot is copy a's, its size too (the index describes copy b).
a_size="$(stat -c %s "$saves/rolly.slot.^slot~201.a.rsav")"
b_size="$(stat -c %s "$saves/rolly.slot.^slot~201.b.rsav")"
[ "$a_size" != "$b_size" ] || fail "the two copies of Slot 1 have one size; the check below sees nothing"
expect_match "^  \"Slot 1\": title \"The Mill\", Manual, .*sequence 1, $a_size bytes\$"

# Damaged in its header, the rebuild from headers sees it too.
flip_byte "$saves/rolly.slot.^slot~201.b.rsav" "$WORK/b.rsav" 70
cp "$WORK/b.rsav" "$saves/rolly.slot.^slot~201.b.rsav"
run "$ROLLY" slots "$saves"
expect_exit 1
expect_match '^  "Slot 1": title "The Mill", Manual, .*sequence 1, '
expect_line '    loads copy a (copy a valid, copy b damaged); recovered: the newest save is damaged, the older copy loads'

# The index carries a slot's metadata up to 4,096 bytes (store::kMaxListedMetadataSize): past
# that, the listing leaves it out and metadata_size is null; at it, the size. The same from a
# rebuild without the index; --verify reads the size from the copy, whatever it is.
meta="$WORK/meta"
"$SAVE_SLOTS" "$meta" "At bound=4096" "Past bound=4097" >/dev/null ||
  { echo "FAIL: save_slots could not save" >&2; exit 1; }
# "NAME:SIZE" of each listed slot, from the JSON in $out (None for null).
metadata_sizes() {
  printf '%s\n' "$out" | python3 -c '
import json, sys
print(" ".join("%s:%s" % (s["name"], s["metadata_size"]) for s in json.load(sys.stdin)["slots"]))'
}
ls "$meta"/rolly.index.*.rsav >/dev/null 2>&1 || fail "save_slots wrote no slot index"
run "$ROLLY" slots "$meta" --json
expect_exit 0
[ "$(metadata_sizes)" = "At bound:4096 Past bound:None" ] ||
  fail "metadata sizes from the index: $(metadata_sizes)"
rm -f "$meta"/rolly.index.*.rsav
run "$ROLLY" slots "$meta" --json
expect_exit 0
[ "$(metadata_sizes)" = "At bound:4096 Past bound:None" ] ||
  fail "metadata sizes from a rebuild: $(metadata_sizes)"
run "$ROLLY" slots "$meta" --json --verify
expect_exit 0
[ "$(metadata_sizes)" = "At bound:4096 Past bound:4097" ] ||
  fail "metadata sizes from the copies: $(metadata_sizes)"

# Another prefix lists nothing; a bad prefix and a missing folder are usage errors.
run "$ROLLY" slots "$saves" --prefix other
expect_exit 0
expect_line "slots: 0"
run "$ROLLY" slots "$saves" --prefix 'Bad Prefix'
expect_exit 2
run "$ROLLY" slots "$WORK/missing"
expect_exit 2
expect_err_match "^rolly slots: .*missing is not a folder$"

finish
