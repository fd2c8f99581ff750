#!/usr/bin/env bash
# The main job of `make demo` until the world layer exists: writes a sample save with the
# format_basics example, shows what `rolly info` says of it and checks it with `rolly verify`;
# then saves slots through the store (two copies each, a slot index) with the store_basics example
# and lists them with `rolly slots`.
#
#   tools/demo.sh BUILD_DIR
#
# The save goes to saves/sample.rsav under the current folder (the Makefile runs this from the
# repository root, where saves/ is ignored by git).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build_dir=$1
example=$build_dir/examples/format_basics
store_example=$build_dir/examples/store_basics
rolly=$build_dir/tools/rolly/rolly
for program in "$example" "$store_example" "$rolly"; do
  if [ ! -x "$program" ]; then
    echo "demo: $program is missing; build first (make build)" >&2
    exit 1
  fi
done

save=saves/sample.rsav

echo "== $example $save"
"$example" "$save"
echo
echo "== rolly info $save"
"$rolly" info "$save"
echo
echo "== rolly verify $save"
"$rolly" verify "$save"
echo
echo "== $store_example saves"
"$store_example" saves
echo
echo "== rolly slots saves"
"$rolly" slots saves
