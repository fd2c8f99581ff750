#!/usr/bin/env bash
# Runs every benchmark binary under BUILD_DIR/bench, one after the other (`make bench`).
#
#   tools/run-benchmarks.sh BUILD_DIR [benchmark flags...]
#
# Extra arguments go to every binary (Google Benchmark flags, e.g. --benchmark_filter=Write or
# --benchmark_min_time=0.5). Benchmarks are not tests: they are not in ctest, and this script
# fails only when a binary fails (a benchmark that errors), never on a missed performance target;
# each binary prints its own ratios against its peers and marks the targets.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [benchmark flags...]" >&2
  exit 2
fi
build_dir=$1
shift
bench_dir=$build_dir/bench
if [ ! -d "$bench_dir" ]; then
  echo "rolly: $bench_dir does not exist; configure with -DROLLY_BUILD_BENCHMARKS=ON and build" >&2
  exit 1
fi

binaries=()
while IFS= read -r -d '' f; do
  binaries+=("$f")
done < <(find "$bench_dir" -maxdepth 1 -type f -perm -u+x -name '*_benchmark' -print0 | sort -z)
if [ ${#binaries[@]} -eq 0 ]; then
  echo "rolly: no benchmark binaries in $bench_dir; build them first" >&2
  exit 1
fi

status=0
for bin in "${binaries[@]}"; do
  echo "==> $(basename "$bin")"
  "$bin" "$@" || { echo "rolly: $(basename "$bin") failed" >&2; status=1; }
  echo
done
exit $status
