#!/usr/bin/env bash
# bench/b8/run.sh [ROUNDS] - B8 (issue 28): a gemma-3-4b-it-shaped model
# (bench/b8/make_gguf.py: hidden 2560, 34 layers, every K a multiple of 256,
# random weights) in BF16, Q8_0, Q4_0 and Q4_K_M, sgc and llama.cpp on the same GGUF
# files: decode (batch 1, greedy) on 1 and 2 threads against the same
# round's read-sum bandwidth at each file's bytes, and a PREFILL-token
# prefill on 2 threads.
#
# The files: make_gguf.py writes the BF16 one (7.8 GB, once; never
# committed), llama-quantize turns it into Q8_0 (every matrix), Q4_0
# (every matrix Q4_0, the tied embedding Q6_K) and Q4_K_M (matrices Q4_K;
# the embedding and the more-bits attn_v / ffn_down Q6_K). sgc compiles each file
# (`sgc compile FILE.gguf`) and runs it on that file (bench/b1/sgc_decode.c:
# a 32-token prompt, warm-up steps, then SGC_DECODE_STEPS timed greedy steps;
# the median step; the prefill a separate process). llama-bench: -p 0 -n
# LLAMA_DECODE_STEPS -r LLAMA_REPS, and -p PREFILL -n 0. Every case is a
# fresh process, in an order rotated each round. Bytes per token: the
# file's tensor bytes (the tied head is the embedding) + the KV cache read
# at the mean timed position.
#
#   B8_DIR             where the GGUF files go (default $SGC_BENCH_WORK/b8)
#   SGC_BUILD          the build (default build/)
#   SGC_DECODE_STEPS   timed sgc steps a process (default 16)
#   LLAMA_DECODE_STEPS / LLAMA_REPS  llama-bench (default 16 / 2)
#   PREFILL            prompt tokens of the prefill cases (default 256; 0: none)
#   ENCODINGS          default "BF16 Q8_0 Q4_0 Q4_K_M"
#   PREFILL_ENCODINGS  default "Q4_0 Q4_K_M"
# Needs bench/llamacpp/setup.sh (llama-bench, llama-quantize) and numpy
# (tools/gen-golden/.venv). ~15 min a round on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-1}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a positive integer" >&2; exit 2; }
B8_DIR=${B8_DIR:-$BENCH_WORK/b8}
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
SGC_STEPS=${SGC_DECODE_STEPS:-16}
LLAMA_STEPS=${LLAMA_DECODE_STEPS:-16}
LLAMA_REPS=${LLAMA_REPS:-2}
PREFILL=${PREFILL:-256}
ENCODINGS=${ENCODINGS:-BF16 Q8_0 Q4_0 Q4_K_M}
PREFILL_ENCODINGS=${PREFILL_ENCODINGS:-Q4_0 Q4_K_M}
PEER_PY=${PEER_PY:-$BENCH_SRC/tools/gen-golden/.venv/bin/python}
PROMPT=32
mkdir -p "$B8_DIR"
[[ -x $LLAMA/bin/llama-quantize && -x $LLAMA/bin/llama-bench ]] ||
  { echo "error: no llama-quantize/llama-bench in $LLAMA/bin: run bench/llamacpp/setup.sh" >&2; exit 1; }

declare -A file so
file[BF16]=$B8_DIR/b8-BF16.gguf
if [[ ! -f ${file[BF16]} ]]; then
  echo "writing B8 to ${file[BF16]} (7.8 GB, a few minutes)" >&2
  "$PEER_PY" "$BENCH_SRC/bench/b8/make_gguf.py" "${file[BF16]}.part" && mv "${file[BF16]}.part" "${file[BF16]}"
fi
for enc in $ENCODINGS; do
  file[$enc]=$B8_DIR/b8-$enc.gguf
  [[ $enc == BF16 ]] || quantize_gguf "${file[BF16]}" $enc "${file[$enc]}" "$B8_DIR/quantize.log"
  so[$enc]=$B8_DIR/b8-$enc.so
  "$SGC_BUILD/bin/sgc" compile "${file[$enc]}" --target=cpu -o "${so[$enc]}"
done
harness=$BENCH_WORK/bin/sgc_decode
build_sgc_decode "$SGC_BUILD" "$harness"
build_bw

results=$(mktemp)
out=$(mktemp)
trap 'rm -f "$results" "$out"' EXIT
run_case() { # ROUND IMPL ENC THREADS
  local r=$1 impl=$2 enc=$3 t=$4 g o
  case $impl in
  ref)
    ref_case "$out" "$t"
    ;;
  sgc) "$harness" "${so[$enc]}" "${file[$enc]}" "$t" $PROMPT "$SGC_STEPS" >"$out" ;;
  sgc-pf) "$harness" "${so[$enc]}" "${file[$enc]}" "$t" $PROMPT 1 "$PREFILL" 1 >"$out" ;;
  llama | llama-pf)
    local args=(-p 0 -n "$LLAMA_STEPS" -r "$LLAMA_REPS")
    [[ $impl == llama-pf ]] && args=(-p "$PREFILL" -n 0 -r 1)
    llama_bench_case "$out" "$B8_DIR/llama.log" -m "${file[$enc]}" "${args[@]}" -t "$t"
    ;;
  esac
  record_case "$out" "$results" $r $impl $enc $t
}
cases=("ref - 1" "ref - 2")
for enc in $ENCODINGS; do for t in 1 2; do cases+=("sgc $enc $t" "llama $enc $t"); done; done
if ((PREFILL > 0)); then
  for enc in $PREFILL_ENCODINGS; do cases+=("sgc-pf $enc 2" "llama-pf $enc 2"); done
fi
n=${#cases[@]}
for ((r = 0; r < ROUNDS; ++r)); do
  for ((i = 0; i < n; ++i)); do run_case $r ${cases[$(((i + r) % n))]}; done
done

get() { result_value "$results" "$@"; }
ratio_stats() { # IMPL_A IMPL_B ENC T KEY: B's / A's KEY per round, "m (lo-hi)"
  for ((r = 0; r < ROUNDS; ++r)); do
    awk -v a="$(get $r $1 $3 $4 $5)" -v b="$(get $r $2 $3 $4 $5)" 'BEGIN { print b / a }'
  done | times_stats
}
machine_note
echo "sgc: $SGC_BUILD at $(build_revision "$SGC_BUILD")"
echo "llama.cpp: $(llama_version), GGML_NATIVE; B8 from bench/b8/make_gguf.py, the others by its llama-quantize"
echo
echo "B8 decode, batch 1, greedy; $ROUNDS rounds, fresh processes; sgc $SGC_STEPS timed steps" \
  "after a $PROMPT-token prompt, llama.cpp $LLAMA_REPS x $LLAMA_STEPS from an empty context"
decode_table "$results" $ROUNDS $PROMPT "$SGC_STEPS" $ENCODINGS
if ((PREFILL > 0)); then
  echo
  echo "B8 prefill, $PREFILL-token prompt, 2 threads, one prefill a process"
  pfmt='| %-5s | %-10s | %-8s | %-18s |\n'
  printf "$pfmt" file impl "tok/s" "x llama.cpp"
  printf '|%s|%s|%s|%s|\n' ------- ------------ ---------- --------------------
  for enc in $PREFILL_ENCODINGS; do
    for impl in sgc-pf llama-pf; do
      tok=$(for ((r = 0; r < ROUNDS; ++r)); do get $r $impl $enc 2 prefill_s_median; done |
        awk -v p="$PREFILL" '{ print p / $1 }' | median)
      xl=""
      [[ $impl == sgc-pf ]] && xl=$(ratio_stats sgc-pf llama-pf $enc 2 prefill_s_median)
      printf "$pfmt" $enc "$([[ $impl == sgc-pf ]] && echo sgc || echo llama.cpp)" \
        "$(printf %.1f "$tok")" "$xl"
    done
  done
fi
echo
echo "% of ceiling: tok/s over (the round's read-sum GB/s / bytes per token); x llama.cpp:" \
  "llama.cpp's time over sgc's, per round (median, range)."
