#!/usr/bin/env bash
# Installs the library from BUILD_DIR into a temporary prefix, then builds and runs the consumer
# project against it twice: through find_package(rolly) and through pkg-config.
set -euo pipefail
build=${1:?usage: check.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$here/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer"

pc_dir=$(dirname "$(find "$tmp/prefix" -name rolly.pc | head -1)")
# The .pc file names the prefix it was configured for; a relocated install redefines it.
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --define-variable=prefix="$tmp/prefix" \
  --cflags --libs --static rolly)
# shellcheck disable=SC2086
g++ "$here/consumer/main.cc" -o "$tmp/consumer_pc" $flags
"$tmp/consumer_pc"
echo "package: find_package and pkg-config consumers built and ran"
