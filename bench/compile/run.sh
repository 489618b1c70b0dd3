#!/usr/bin/env bash
# bench/compile/run.sh [RUNS] [BUILD_DIR] - B3 of PERFORMANCE.md: the time to
# compile each full seed graph (examples/*.system_graph.json) into a model
# .so with `sgc compile --target=T` for each T of $TARGETS (default: cpu, and
# cuda:sm_90a where the CUDA toolkit's ptxas is on PATH; default bf16
# compute), RUNS runs each (default 3), seeds and targets interleaved. Reports wall seconds min/median/max, the
# median CPU seconds (user + sys: less sensitive to other load on the host
# than wall time), the peak RSS, the .so size, and the median against the
# target (< 10 s on 2 cores). One more run per seed with --mlir-timing gives
# the share of the time outside the MLIR passes ("Rest": LLVM optimization,
# code generation for each CPU variant, linking). A benchmark, not a test: it
# exits 0 unless sgc fails; rows over the target are marked SLOW. ~1.5 min.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
RUNS=${1:-3}
BUILD=$(cd "${2:-$BENCH_SRC/build}" && pwd)
SGC=$BUILD/bin/sgc
TARGET_S=10
W=$BENCH_WORK/compile
mkdir -p "$W"

source "$(dirname "${BASH_SOURCE[0]}")/seeds.sh"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < RUNS; ++r)); do
  for seed in "${seeds[@]}"; do
    for target in "${targets[@]}"; do
      name=$(basename "$seed" .system_graph.json)@$target
      rm -f "$W/$name.so"
      /usr/bin/time -f "%e %U %S %M" -o "$W/time.txt" \
        "$SGC" compile "$seed" --target="$target" -o "$W/$name.so"
      read -r wall user sys rss <"$W/time.txt"
      echo "$name $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $rss \
$(stat -c %s "$W/$name.so")" >>"$results"
    done
  done
done
names=()
for seed in "${seeds[@]}"; do
  for target in "${targets[@]}"; do
    name=$(basename "$seed" .system_graph.json)@$target
    names+=("$name")
    "$SGC" compile "$seed" --target="$target" -o "$W/$name.so" --mlir-timing 2>"$W/$name.timing"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

machine_note
echo "load average before/after: $load_before / $load_after; $RUNS runs a seed, interleaved"
fmt='| %-29s | %-15s | %-7s | %-11s | %-10s | %-12s | %-8s | %-7s |\n'
printf "$fmt" "seed@target" "wall s" "CPU s" "peak RSS" ".so size" "outside MLIR" "% of 10s" verdict
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ------------------------------- ----------------- --------- \
  ------------- ------------ -------------- ---------- ---------
for name in "${names[@]}"; do
  wall=$(awk -v n=$name '$1 == n { print $2 }' "$results" | stats)
  med=$(awk -v n=$name '$1 == n { print $2 }' "$results" | median)
  cpu=$(awk -v n=$name '$1 == n { print $3 }' "$results" | median | xargs printf %.1f)
  rss=$(awk -v n=$name '$1 == n { print $4 }' "$results" | median)
  size=$(awk -v n=$name '$1 == n { print $5 }' "$results" | tail -1)
  verdict=ok
  awk -v m="$med" -v t=$TARGET_S 'BEGIN { exit !(m >= t) }' && verdict=SLOW
  printf "$fmt" "$name" "$wall" "$cpu" "$(awk -v k="$rss" 'BEGIN { printf "%.0f MiB", k / 1024 }')" \
    "$(awk -v b="$size" 'BEGIN { printf "%.0f KiB", b / 1024 }')" \
    "$(awk '$NF == "Rest" { r = $1 } $NF == "Total" { t = $1 }
        END { if (t > 0) printf "%.0f %%", 100 * r / t; else print "-" }' "$W/$name.timing")" \
    "$(awk -v m="$med" -v t=$TARGET_S 'BEGIN { printf "%.0f %%", 100 * m / t }')" "$verdict"
done
