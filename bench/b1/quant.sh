#!/usr/bin/env bash
# bench/b1/quant.sh [ROUNDS] - B1 decode (batch 1, greedy) at Q8_0 and Q4_0:
# sgc and llama.cpp on the same GGUF files, 1 and 2 threads, against the
# same round's read-sum bandwidth at each file's bytes.
#
# The files: llama.cpp's BF16 GGUF of B1 (bench/llamacpp/convert.sh,
# checked bit for bit against the checkpoint), then its llama-quantize to
# Q8_0 and Q4_0 (B1's tied embedding, 640 wide, is no multiple of 256:
# llama-quantize falls back from Q6_K to Q8_0 for it in the Q4_0 file). sgc
# compiles each file (`sgc compile FILE.gguf`) and runs it on that file:
# its block-encoded kernels read the weights as they are stored and
# dequantize in registers (weight-only, f32 FMA on bf16 activations); llama.cpp
# quantizes the activations and uses integer dot products.
#
# Each round runs, as fresh processes in an order rotated each round: the
# 1- and 2-thread read-sum, and per encoding and thread count sgc
# (bench/b1/sgc_decode.c: a 32-token prompt, 8 warm-up steps, then N timed
# greedy steps; median step) and llama-bench (-p 0 -n N -r LLAMA_REPS;
# median repetition / N). Bytes per token: the file's tensor bytes (every
# weight once; the tied head is the embedding) + the KV cache read at the
# mean timed position. Needs bench/llamacpp/setup.sh (llama-quantize).
#
#   B1_DIR, SGC_BUILD, SGC_DECODE_STEPS, LLAMA_DECODE_STEPS, LLAMA_REPS: as
#   bench/b1/run.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a positive integer" >&2; exit 2; }
B1_DIR=${B1_DIR:-/tmp/sgc-b1}
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
SGC_STEPS=${SGC_DECODE_STEPS:-64}
LLAMA_STEPS=${LLAMA_DECODE_STEPS:-64}
LLAMA_REPS=${LLAMA_REPS:-3}
PROMPT=32
W=$BENCH_WORK/b1-quant
mkdir -p "$W"
[[ -x $LLAMA/bin/llama-quantize ]] ||
  { echo "error: no llama-quantize in $LLAMA/bin: run bench/llamacpp/setup.sh" >&2; exit 1; }
if [[ ! -f $B1_DIR/hf/model.safetensors ]]; then
  echo "writing the B1 model to $B1_DIR (~1 GiB, ~40 s)" >&2
  "$BENCH_SRC/tools/gen-golden/gen-golden" --b1 "$B1_DIR" >&2
fi
gguf_check=$(B1_DIR=$B1_DIR "$BENCH_SRC/bench/llamacpp/convert.sh" | grep '^check_gguf: OK') ||
  { echo "error: the BF16 GGUF does not match the checkpoint" >&2; exit 1; }

declare -A file so
for enc in Q8_0 Q4_0; do
  file[$enc]=$W/b1-$enc.gguf
  quantize_gguf "$LLAMA/b1-bf16.gguf" $enc "${file[$enc]}" "$W/quantize.log"
  so[$enc]=$W/b1-$enc.so
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
  llama)
    llama_bench_case "$out" "$W/llama.log" -m "${file[$enc]}" -p 0 -n "$LLAMA_STEPS" -t "$t" \
      -r "$LLAMA_REPS"
    ;;
  esac
  record_case "$out" "$results" $r $impl $enc $t
}
cases=("ref - 1" "ref - 2")
for enc in Q8_0 Q4_0; do for t in 1 2; do cases+=("sgc $enc $t" "llama $enc $t"); done; done
n=${#cases[@]}
for ((r = 0; r < ROUNDS; ++r)); do
  for ((i = 0; i < n; ++i)); do run_case $r ${cases[$(((i + r) % n))]}; done
done

machine_note
echo "sgc: $SGC_BUILD at $(build_revision "$SGC_BUILD")"
echo "llama.cpp: $(llama_version), GGML_NATIVE; $(basename "$LLAMA/b1-bf16.gguf"): ${gguf_check#check_gguf: }"
echo
echo "B1 decode at Q8_0 / Q4_0, batch 1, greedy; $ROUNDS rounds, fresh processes; sgc $SGC_STEPS" \
  "timed steps after a 32-token prompt, llama.cpp $LLAMA_REPS x $LLAMA_STEPS from an empty context"
decode_table "$results" $ROUNDS $PROMPT "$SGC_STEPS" Q8_0 Q4_0
