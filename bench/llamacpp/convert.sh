#!/usr/bin/env bash
# bench/llamacpp/convert.sh - the B1 checkpoint as a BF16 GGUF for llama.cpp,
# converted by llama.cpp's own convert_hf_to_gguf.py, then checked bit for bit
# against the checkpoint sgc reads (check_gguf.py).
#
#   B1_DIR          the B1 model (default /tmp/sgc-b1, with its hf/ copy;
#                   `tools/gen-golden/gen-golden --b1 B1_DIR` writes it)
#   SGC_BENCH_WORK  scratch folder (default /tmp/sgc-bench)
#   PEER_PY         python with torch + sentencepiece (default the gen-golden
#                   venv: tools/gen-golden/setup-venv)
#
# Needs bench/llamacpp/setup.sh first (for the vendored converter and gguf-py;
# gguf-py is used from that tree, not installed). Writes, under
# $SGC_BENCH_WORK/llamacpp: b1-hf/ (config.json, a copy of the checkpoint, the
# placeholder tokenizer.model; B1_DIR stays untouched) and b1-bf16.gguf.
# Skips the conversion when the GGUF is newer than the checkpoint; always
# runs the check. ~1 min.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
B1_DIR=${B1_DIR:-/tmp/sgc-b1}
PEER_PY=${PEER_PY:-$BENCH_SRC/tools/gen-golden/.venv/bin/python}
L=$BENCH_WORK/llamacpp
here=$BENCH_SRC/bench/llamacpp
[[ -f $L/src/convert_hf_to_gguf.py ]] ||
  { echo "error: no llama.cpp tree in $L/src: run bench/llamacpp/setup.sh" >&2; exit 1; }
for f in config.json model.safetensors; do
  [[ -f $B1_DIR/hf/$f ]] || { echo "error: $B1_DIR/hf/$f is missing: run" \
    "'tools/gen-golden/gen-golden --b1 $B1_DIR'" >&2; exit 1; }
done
[[ -f $B1_DIR/model.safetensors ]] || { echo "error: $B1_DIR/model.safetensors is missing" >&2; exit 1; }
export PYTHONPATH=$L/src/gguf-py${PYTHONPATH:+:$PYTHONPATH}

hf=$L/b1-hf
gguf=$L/b1-bf16.gguf
if [[ ! $gguf -nt $B1_DIR/hf/model.safetensors || ! $gguf -nt $B1_DIR/hf/config.json ]]; then
  rm -rf "$hf" "$gguf"
  mkdir -p "$hf"
  cp "$B1_DIR/hf/config.json" "$B1_DIR/hf/model.safetensors" "$hf/"
  vocab=$("$PEER_PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["vocab_size"])' \
    "$hf/config.json")
  "$PEER_PY" "$here/placeholder_tokenizer.py" "$vocab" "$hf/tokenizer.model"
  nice -n 19 "$PEER_PY" "$L/src/convert_hf_to_gguf.py" "$hf" --outtype bf16 \
    --outfile "$gguf.tmp" >"$L/convert.log" 2>&1 || { tail -30 "$L/convert.log" >&2; exit 1; }
  mv "$gguf.tmp" "$gguf"
  # The copy served the converter only.
  rm -f "$hf/model.safetensors"
fi
"$PEER_PY" "$here/check_gguf.py" "$gguf" "$B1_DIR/model.safetensors"
echo "GGUF: $gguf"
