#!/usr/bin/env bash
# bench/b7a/run.sh [ROUNDS] - B7a of PERFORMANCE.md: decode tok/s summed over
# B = 1, 2, 4, 8, 16 sequences decoded together on the B1 model (bf16, the
# batched entries sgc compile builds by default), and the cost of a B step
# against a B = 1 step, in the same process.
#
# Each round is one process (bench/b7a/batch_decode.c) that binds the
# weights once and, for each B in an order rotated each round, creates a
# session of B sequence slots, prefills B 32..47-token prompts, runs 4 untimed
# batched greedy steps and then N timed ones (sgc_session_decode_batch for all
# B rows + the host's argmax of each); a B's figure is its median step. The
# table: per B the median over rounds of tok/s (B / step) and of the step's
# cost over the same round's B = 1 step, 1 and 2 threads.
#
#   B1_DIR, SGC_BUILD: as bench/b1/run.sh
#   B7A_STEPS   timed steps per B (default 32)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a positive integer" >&2; exit 2; }
B1_DIR=${B1_DIR:-/tmp/sgc-b1}
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
STEPS=${B7A_STEPS:-32}
if [[ ! -f $B1_DIR/model.safetensors ]]; then
  echo "writing the B1 model to $B1_DIR (~1 GiB, ~40 s)" >&2
  "$BENCH_SRC/tools/gen-golden/gen-golden" --b1 "$B1_DIR" >&2
fi
HARNESS=$BENCH_WORK/bin/batch_decode
build_sgc_client "$SGC_BUILD" "$HARNESS" "$BENCH_SRC/bench/b7a/batch_decode.c"
SO=$(b1_so "$SGC_BUILD" "$B1_DIR" bf16)
SIZES=(1 2 4 8 16)
OUT=$BENCH_WORK/b7a
mkdir -p "$OUT"
rm -f "$OUT"/*.txt

for ((r = 0; r < ROUNDS; ++r)); do
  for t in 1 2; do
    order=("${SIZES[@]:r%5}" "${SIZES[@]:0:r%5}")
    "$HARNESS" "$SO" "$B1_DIR/model.safetensors" "$t" "$STEPS" "${order[@]}" \
      > "$OUT/r$r-t$t.txt"
    echo "round $((r + 1)) threads $t: $(tr '\n' ' ' < "$OUT/r$r-t$t.txt")" >&2
  done
done

echo "### $(date -u '+%Y-%m-%d %H:%M') UTC — B7a: batched decode on the B1 model (sgc $(build_revision "$SGC_BUILD"))"
echo
echo "$(machine_note); $ROUNDS rounds, $STEPS timed steps per B; bf16, the default decode batches (1, 2, 4, 8, 16)"
echo
echo "| B | tok/s, 1 thread | B step / 1-row step, 1 thread | tok/s, 2 threads | B step / 1-row step, 2 threads | other load (max) |"
echo "|---|---|---|---|---|---|"
for b in "${SIZES[@]}"; do
  row="| $b"
  other=0
  for t in 1 2; do
    toks=() ratios=()
    for ((r = 0; r < ROUNDS; ++r)); do
      f=$OUT/r$r-t$t.txt
      one=$(sed -n 's/^B=1 step_ms_median=\([0-9.]*\).*/\1/p' "$f")
      line=$(grep "^B=$b " "$f")
      ms=$(sed -n 's/.*step_ms_median=\([0-9.]*\).*/\1/p' <<<"$line")
      toks+=("$(sed -n 's/.*tok_s=\([0-9.]*\).*/\1/p' <<<"$line")")
      ratios+=("$(awk -v a="$ms" -v b="$one" 'BEGIN { printf "%.3f", a / b }')")
      o=$(sed -n 's/.*other_load=\([0-9.]*\).*/\1/p' <<<"$line")
      other=$(awk -v a="$o" -v b="$other" 'BEGIN { print (a > b ? a : b) }')
    done
    row+=" | $(printf "%s\n" "${toks[@]}" | median) | $(printf "%s\n" "${ratios[@]}" | median)×"
  done
  echo "$row | $other |"
done
echo
echo "tok/s = B / the median step (one sgc_session_decode_batch call + B host argmaxes); 16 vs 1 is the issue's target (≥ 3×)."
