#!/usr/bin/env bash
# The main job of `make demo`: `rolly demo` plays the sample game (10,000 actors), saves it into
# the slot "demo" under ./saves, starts a fresh game, loads the slot and compares the two worlds
# field by field (it exits non-zero on any difference); then `rolly verify` checks the save's two
# copies and `rolly info` shows what the file holds.
#
#   tools/demo.sh BUILD_DIR [rolly demo options...]
#
# The Makefile runs this from the repository root, where saves/ is ignored by git.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [rolly demo options...]" >&2
  exit 2
fi
build_dir=$1
shift
rolly=$build_dir/tools/rolly/rolly
if [ ! -x "$rolly" ]; then
  echo "demo: $rolly is missing; build first (make build)" >&2
  exit 1
fi

echo "== rolly demo $*"
"$rolly" demo "$@"
echo
save=$(ls saves/rolly.slot.demo.*.rsav | head -n 1)
echo "== rolly verify saves/rolly.slot.demo.*.rsav"
"$rolly" verify saves/rolly.slot.demo.*.rsav
echo
echo "== rolly info $save"
"$rolly" info "$save"
