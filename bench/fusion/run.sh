#!/usr/bin/env bash
# bench/fusion/run.sh [ROUNDS] - B1 decode with and without the fusion phase,
# side by side: the ~270M B1 model compiled twice (default and
# --disable-fusion, bf16), timed by bench/b1's harness as fresh processes in
# alternating order, on 1 and 2 threads. Prints ms/token min/median/max and
# the unfused/fused ratio of the medians (> 1: fusion is faster).
# Needs the B1 model in B1_DIR (default /tmp/sgc-b1; see bench/b1/run.sh);
# bench/b1's harness is linked against the runtime of SGC's build.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-5}
B1_DIR=${B1_DIR:-/tmp/sgc-b1}
SGC=${SGC:-$BENCH_SRC/build/bin/sgc}
HARNESS=$BENCH_WORK/bin/sgc_decode
W=$BENCH_WORK/fusion
mkdir -p "$W"
build_sgc_decode "$(cd "$(dirname "$SGC")/.." && pwd)" "$HARNESS"
"$SGC" compile "$B1_DIR/system_graph.json" --target=cpu -o "$W/fused.so"
"$SGC" compile "$B1_DIR/system_graph.json" --target=cpu --disable-fusion -o "$W/unfused.so"

declare -A times
for ((r = 0; r < ROUNDS; ++r)); do
  for t in 1 2; do
    order=(fused unfused)
    ((r % 2)) && order=(unfused fused)
    for v in "${order[@]}"; do
      ms=$("$HARNESS" "$W/$v.so" "$B1_DIR" "$t" 32 48 | sed -n 's/^decode_ms_median=//p')
      times[$v-$t]+="$ms "
    done
  done
done

stats() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {printf "%.1f/%.1f/%.1f", a[1], a[int((NR+1)/2)], a[NR]}'; }
median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
machine_note
echo "B1 decode, bf16, 32-token prompt, 48 timed steps a process, $ROUNDS rounds"
echo "| threads | fused ms/token | unfused ms/token | unfused / fused |"
echo "|---------|----------------|------------------|-----------------|"
for t in 1 2; do
  f=$(median "${times[fused-$t]}"); u=$(median "${times[unfused-$t]}")
  printf '| %s | %s | %s | %.3f |\n' "$t" "$(stats "${times[fused-$t]}")" \
    "$(stats "${times[unfused-$t]}")" "$(awk -v f="$f" -v u="$u" 'BEGIN {print u / f}')"
done
