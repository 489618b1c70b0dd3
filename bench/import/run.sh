#!/usr/bin/env bash
# Times the JSON front end: `sgc compile SEED --compile-to=import -o /dev/null`
# (read, validate, complete, build and verify the IR) on each full seed graph,
# 5 runs each, and prints the median next to the target (<= 0.3 s). Also
# times `sgc explain` (import + KV plan + printing). A benchmark, not a test:
# it exits 0 unless sgc fails; over-target rows are marked SLOW.
#
# usage: bench/import/run.sh [BUILD_DIR]     (default: build/; use a Release build)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
SGC=$BUILD/bin/sgc
RUNS=5
TARGET_MS=300

build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
if [[ $build_type != Release ]]; then
  echo "note: $BUILD is a '${build_type:-unknown}' build; figures are meant for Release" >&2
fi

# Prints the median wall time in milliseconds of RUNS runs of "$@".
median_ms() {
  local times=() start end
  for ((i = 0; i < RUNS; ++i)); do
    start=$(date +%s%N)
    "$@" > /dev/null
    end=$(date +%s%N)
    times+=($(((end - start) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$((RUNS / 2 + 1))p" |
    awk '{ printf "%.1f", $1 / 1000 }'
}

printf '%-36s %-8s %10s %10s\n' seed command "median ms" "target ms"
for seed in "$SRC"/examples/*.system_graph.json; do
  name=$(basename "$seed" .system_graph.json)
  for command in import explain; do
    if [[ $command == import ]]; then
      ms=$(median_ms "$SGC" compile "$seed" --compile-to=import -o /dev/null)
    else
      ms=$(median_ms "$SGC" explain "$seed")
    fi
    verdict=ok
    awk -v ms="$ms" -v t="$TARGET_MS" 'BEGIN { exit !(ms > t) }' && verdict=SLOW
    printf '%-36s %-8s %10s %10s  %s\n' "$name" "$command" "$ms" "$TARGET_MS" "$verdict"
  done
done
