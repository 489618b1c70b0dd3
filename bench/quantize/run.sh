#!/usr/bin/env bash
# bench/quantize/run.sh [TYPES] - sgc quantize against llama.cpp's own route
# from an HF checkpoint to a quantized GGUF (issue 34, item 2): the folder of
# bench/quantize/make_checkpoint.py (Gemma 3 4B's text widths, QUANTIZE_LAYERS
# layers, default 12: a 3.6 GB bf16 checkpoint), turned into each TYPE
# (default "q8_0 q4_0 q4_k_m") by
#   sgc quantize HF OUT --type TYPE                        (one pass)
#   convert_hf_to_gguf.py HF --outtype bf16, llama-quantize BF16 OUT TYPE
# on all cores, each a fresh process: wall seconds and peak resident memory
# (GNU time), and whether the two files are the same bytes (cmp). The
# converter's BF16 file is made once and its time counted into each type's
# llama.cpp total. Files go to $SGC_BENCH_WORK/quantize (the checkpoint kept,
# the GGUFs removed after each type).
# Needs bench/llamacpp/setup.sh (its tree, llama-quantize) and numpy
# (tools/gen-golden/.venv). ~10 min on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
TYPES=${1:-q8_0 q4_0 q4_k_m}
LAYERS=${QUANTIZE_LAYERS:-12}
DIR=$BENCH_WORK/quantize
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
PEER_PY=${PEER_PY:-$BENCH_SRC/tools/gen-golden/.venv/bin/python}
[[ -x $LLAMA/bin/llama-quantize ]] ||
  { echo "error: no llama-quantize in $LLAMA/bin: run bench/llamacpp/setup.sh" >&2; exit 1; }
mkdir -p "$DIR"
HF=$DIR/hf
if [[ ! -f $HF/model.safetensors || $(python3 -c "import json; print(json.load(open('$HF/config.json'))['num_hidden_layers'])") != "$LAYERS" ]]; then
  echo "writing the checkpoint to $HF ($LAYERS layers)" >&2
  "$PEER_PY" "$BENCH_SRC/bench/quantize/make_checkpoint.py" "$HF" "$LAYERS"
fi

# timed OUT CMD...: "seconds peak_kB" of CMD into OUT (its output in OUT.log).
timed() {
  local out=$1
  shift
  /usr/bin/time -f "%e %M" -o "$out" "$@" >"$out.log" 2>&1 || { tail -20 "$out.log" >&2; return 1; }
}
timed "$DIR/convert.time" "$PEER_PY" "$LLAMA/src/convert_hf_to_gguf.py" "$HF" --outtype bf16 \
  --outfile "$DIR/bf16.gguf"
read -r conv_s conv_kb <"$DIR/convert.time"

machine_note
echo "sgc: $SGC_BUILD at $(build_revision "$SGC_BUILD")"
echo "llama.cpp: $(llama_version); checkpoint: bench/quantize/make_checkpoint.py, $LAYERS layers," \
  "$(awk '{ printf "%.2f GB", $1 / 1e9 }' <<<"$(stat -c %s "$HF/model.safetensors")") bf16"
echo
fmt='| %-7s | %-9s | %-11s | %-13s | %-15s | %-9s | %-11s | %-9s |\n'
printf "$fmt" type "sgc s" "sgc peak" "convert s" "llama-quantize" "llama s" "x llama" "same bytes"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' --------- ----------- ------------- --------------- \
  ----------------- ----------- ------------- -----------
for t in $TYPES; do
  timed "$DIR/sgc.time" "$SGC_BUILD/bin/sgc" quantize "$HF" "$DIR/sgc-$t.gguf" --type "$t"
  timed "$DIR/llama.time" "$LLAMA/bin/llama-quantize" "$DIR/bf16.gguf" "$DIR/llama-$t.gguf" \
    "$(tr a-z A-Z <<<"$t")"
  read -r sgc_s sgc_kb <"$DIR/sgc.time"
  read -r lq_s lq_kb <"$DIR/llama.time"
  same=$(cmp -s "$DIR/sgc-$t.gguf" "$DIR/llama-$t.gguf" && echo yes || echo no)
  printf "$fmt" "$t" "$sgc_s" "$(awk -v k="$sgc_kb" 'BEGIN { printf "%.2f GB", k / 1e6 }')" \
    "$conv_s" "$lq_s ($(awk -v k="$lq_kb" 'BEGIN { printf "%.1f GB", k / 1e6 }'))" \
    "$(awk -v a="$conv_s" -v b="$lq_s" 'BEGIN { printf "%.1f", a + b }')" \
    "$(awk -v a="$conv_s" -v b="$lq_s" -v s="$sgc_s" 'BEGIN { printf "%.2fx", (a + b) / s }')" "$same"
  rm -f "$DIR/sgc-$t.gguf" "$DIR/llama-$t.gguf"
done
rm -f "$DIR/bf16.gguf"
echo
echo "convert s: convert_hf_to_gguf.py --outtype bf16 once (peak $(awk -v k="$conv_kb" \
  'BEGIN { printf "%.1f GB", k / 1e6 }')); llama s: convert + llama-quantize;" \
  "x llama: llama.cpp's total over sgc's; peaks: GNU time's maximum resident set."
