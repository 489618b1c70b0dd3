#!/usr/bin/env bash
# bench/fma/run.sh [ROUNDS] - the f32 FMA-throughput reference: the compute
# ceiling for prefill, next to bench/bandwidth's memory ceiling for decode.
#
# Each round runs bench/fma/fma.c on 1 and 2 threads (thread i pinned to cpu
# i), each a fresh process (1 warm-up + 5 timed reps of 20 M iterations x 12
# independent vector-FMA chains a thread; it reports the median), the order
# alternating from round to round. FLOP = 2 per FMA lane (AVX2: 8 lanes,
# AVX-512: 16). The table gives min/median/max GFLOP/s of the per-process
# medians, the per-core rate, and the 2-thread scaling per round.
# ~3 s a round.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-5}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a positive integer" >&2; exit 2; }
build_fma

results=$(mktemp)
trap 'rm -f "$results"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < ROUNDS; ++r)); do
  if ((r % 2)); then order=(2 1); else order=(1 2); fi
  for t in "${order[@]}"; do
    read -r g o < <(ref_fma "$t")
    echo "$r $t $g $o" >>"$results"
  done
done

machine_note
echo "load average before/after the run: $load_before / $(cut -d' ' -f1-3 /proc/loadavg)"
echo "f32 FMA peak: $ROUNDS rounds, fresh processes, 12 independent chains a thread," \
  "register-only; GFLOP/s = 2 x FMA lanes / s"
fmt='| %-7s | %-20s | %-16s | %-22s | %-13s |\n'
printf "$fmt" threads "GFLOP/s min/med/max" "per core (med)" "x 1 thread (per round)" "other (med)"
printf '|%s|%s|%s|%s|%s|\n' --------- ---------------------- ------------------ \
  ------------------------ ---------------
for t in 1 2; do
  med=$(awk -v t=$t '$2 == t { print $3 }' "$results" | median)
  scale=""
  if ((t == 2)); then
    scale=$(awk '$2 == 1 { one[$1] = $3 } $2 == 2 { two[$1] = $3 }
      END { for (r in two) if (one[r] > 0) print two[r] / one[r] }' "$results" |
      sort -g | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.2fx (%.2f-%.2f)\n", m, v[1], v[NR] }')
  fi
  printf "$fmt" "$t" "$(awk -v t=$t '$2 == t { print $3 }' "$results" | stats)" \
    "$(awk -v m="$med" -v t=$t 'BEGIN { printf "%.1f", m / t }')" "$scale" \
    "$(awk -v t=$t '$2 == t { print $4 }' "$results" | median | xargs printf %.1f)"
done
