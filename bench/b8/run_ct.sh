#!/usr/bin/env bash
# bench/b8/run_ct.sh [ROUNDS] - B8 decode from compressed-tensors folders
# (issue 35): FP8 (e4m3, a bf16 scale per output channel) and INT4
# (symmetric groups of 32), written by bench/b8/make_ct.py with random
# values at the gemma-3-4b-it shape, next to run.sh's GGUF files of the same
# shape (GGUF_ENCODINGS, default "BF16 Q8_0 Q4_0": make them with run.sh or
# `sgc quantize ... --dummy-weights` first). sgc only: llama.cpp reads
# neither format. Decode, batch 1, greedy, on 1 and 2 threads
# (bench/b1/sgc_decode.c: a 32-token prompt, warm-up steps, the median of
# SGC_DECODE_STEPS timed steps), each a fresh process in an order rotated
# each round, against the same round's read-sum bandwidth at the bytes a
# token reads (the weights as bound: FP8 and INT4 as the runtime packs them,
# an f32 scale a block, plus the KV cache at the mean timed position).
#
#   B8_DIR, SGC_BUILD, SGC_DECODE_STEPS, PEER_PY as in run.sh
#   B8_CONFIG        the Gemma 3 config of B8 (default $B8_DIR/config.json)
#   GGUF_ENCODINGS   default "BF16 Q8_0 Q4_0"
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-1}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a positive integer" >&2; exit 2; }
B8_DIR=${B8_DIR:-$BENCH_WORK/b8}
B8_CONFIG=${B8_CONFIG:-$B8_DIR/config.json}
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
SGC_STEPS=${SGC_DECODE_STEPS:-16}
GGUF_ENCODINGS=${GGUF_ENCODINGS:-BF16 Q8_0 Q4_0}
PEER_PY=${PEER_PY:-$BENCH_SRC/tools/gen-golden/.venv/bin/python}
PROMPT=32

declare -A weights so
for enc in $GGUF_ENCODINGS; do
  weights[$enc]=$B8_DIR/b8-$enc.gguf
  [[ -s ${weights[$enc]} ]] || { echo "error: no ${weights[$enc]} (bench/b8/run.sh makes it)" >&2; exit 1; }
done
for enc in FP8 INT4; do
  weights[$enc]=$B8_DIR/b8-ct-${enc,,}
  [[ -d ${weights[$enc]} ]] ||
    "$PEER_PY" "$BENCH_SRC/bench/b8/make_ct.py" "$B8_CONFIG" "${weights[$enc]}" "${enc,,}"
done
ENCODINGS="$GGUF_ENCODINGS FP8 INT4"
for enc in $ENCODINGS; do
  so[$enc]=$B8_DIR/b8-$enc.so
  "$SGC_BUILD/bin/sgc" compile "${weights[$enc]}" --target=cpu -o "${so[$enc]}"
done
harness=$BENCH_WORK/bin/sgc_decode
build_sgc_decode "$SGC_BUILD" "$harness"
build_bw

results=$(mktemp)
out=$(mktemp)
trap 'rm -f "$results" "$out"' EXIT
run_case() { # ROUND IMPL ENC THREADS
  local r=$1 impl=$2 enc=$3 t=$4 g o
  if [[ $impl == ref ]]; then
    ref_case "$out" "$t"
  else
    "$harness" "${so[$enc]}" "${weights[$enc]}" "$t" $PROMPT "$SGC_STEPS" >"$out"
  fi
  record_case "$out" "$results" $r $impl $enc $t
}
cases=("ref - 1" "ref - 2")
for enc in $ENCODINGS; do for t in 1 2; do cases+=("sgc $enc $t"); done; done
n=${#cases[@]}
for ((r = 0; r < ROUNDS; ++r)); do
  for ((i = 0; i < n; ++i)); do run_case $r ${cases[$(((i + r) % n))]}; done
done

get() { result_value "$results" "$@"; }
machine_note
echo "sgc: $SGC_BUILD at $(build_revision "$SGC_BUILD")"
echo "B8 (gemma-3-4b-it shape) decode, batch 1, greedy, sgc; $ROUNDS rounds, fresh processes," \
  "$SGC_STEPS timed steps after a $PROMPT-token prompt; FP8 / INT4: bench/b8/make_ct.py folders"
fmt='| %-5s | %-3s | %-9s | %-6s | %-18s | %-18s |\n'
printf "$fmt" file thr "MB/token" "tok/s" "% of ceiling" "x Q4_0"
printf '|%s|%s|%s|%s|%s|%s|\n' ------- ----- ----------- -------- -------------------- --------------------
for enc in $ENCODINGS; do
  bt=$(awk -v w="$(get 0 sgc $enc 1 weight_bytes)" -v kv="$(get 0 sgc $enc 1 kv_bytes_per_token)" \
    -v p=$PROMPT -v s=$SGC_STEPS 'BEGIN { printf "%.0f", w + kv * (p + 1 + s / 2) }')
  for t in 1 2; do
    tok=$(for ((r = 0; r < ROUNDS; ++r)); do get $r sgc $enc $t decode_ms_median; done |
      awk '{ print 1000 / $1 }' | median)
    pct=$(for ((r = 0; r < ROUNDS; ++r)); do
      awk -v m="$(get $r sgc $enc $t decode_ms_median)" -v g="$(get $r ref - $t ref_gbs)" \
        -v b="$bt" 'BEGIN { print (1000 / m) / (g * 1e9 / b) }'
    done | pct_stats)
    xq=$(for ((r = 0; r < ROUNDS; ++r)); do
      awk -v m="$(get $r sgc $enc $t decode_ms_median)" -v q="$(get $r sgc Q4_0 $t decode_ms_median)" \
        'BEGIN { if (q == "") print "nan"; else print q / m }'
    done | times_stats)
    printf "$fmt" $enc $t "$(awk -v b="$bt" 'BEGIN { printf "%.1f", b / 1e6 }')" \
      "$(printf %.1f "$tok")" "$pct" "$xq"
  done
done
echo
echo "% of ceiling: tok/s over (the round's read-sum GB/s / bytes per token); x Q4_0: sgc's Q4_0" \
  "time over this row's, per round (median, range)."
