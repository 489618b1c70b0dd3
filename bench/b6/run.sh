#!/usr/bin/env bash
# bench/b6/run.sh [SEEDS] - B6 (issue 34, item 4): the seeds at full size in
# Q4_0, sgc next to llama.cpp on the same file. Each seed (default
# "gemma-3-12b-it gemma-4-31B-it"; the HF configs of test/Inputs/hf-configs)
# becomes a Q4_0 GGUF written by `sgc quantize --dummy-weights` (seeded random
# weights, the converter's metadata, a placeholder vocabulary; never
# committed; removed after the seed), then on 2 threads:
#   sgc:       sgc compile FILE; sgc-run --prompt-ids (PROMPT ids, default 512)
#              --max-new-tokens NEW (default 128) --max-context 4096 --json:
#              time to first token and decode tok/s; its logits dumped
#   llama.cpp: llama-bench -p PROMPT -n NEW -r 1 (prefill and decode tok/s;
#              its time to first token is PROMPT / prefill tok/s)
#   correctness: llama_logits.cc (tools/gen-golden) on the same file, fed the
#              prompt and sgc's first 15 greedy tokens; compare_rows.py: the
#              largest row difference and greedy agreement at every step
#              where llama.cpp's margin decides (QUANT.md 5.3)
#   ceiling:   the read-sum bandwidth (bench/bandwidth) over the file's bytes
#              (every weight read once a token; the KV cache is not counted)
# Needs bench/llamacpp/setup.sh, numpy (tools/gen-golden/.venv) and the
# disk for one file (gemma-4-31B-it: 18 GB). ~25 minutes on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
SEEDS=${1:-gemma-3-12b-it gemma-4-31B-it}
PROMPT=${PROMPT:-512}
NEW=${NEW:-128}
DIR=$BENCH_WORK/b6
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
PEER_PY=${PEER_PY:-$BENCH_SRC/tools/gen-golden/.venv/bin/python}
mkdir -p "$DIR"
[[ -x $LLAMA/bin/llama-bench ]] || { echo "error: run bench/llamacpp/setup.sh first" >&2; exit 1; }
c++ -O2 -std=c++17 -I"$LLAMA/src/include" -I"$LLAMA/src/ggml/include" \
  "$BENCH_SRC/tools/gen-golden/llama_logits.cc" -o "$DIR/llama_logits" \
  "$LLAMA/build/src/libllama.a" "$LLAMA/build/ggml/src/libggml.a" \
  "$LLAMA/build/ggml/src/libggml-cpu.a" "$LLAMA/build/ggml/src/libggml-base.a" \
  -fopenmp -lpthread -ldl
build_bw
bw=$(ref_bw 2 | awk '{ print $1 }')
ids=$(python3 -c "import random; r = random.Random(6); print(','.join(str(r.randrange(300, 262000)) for _ in range($PROMPT)))")

rows=()
for seed in $SEEDS; do
  file=$DIR/$seed-Q4_0.gguf
  so=$DIR/$seed-Q4_0.so
  /usr/bin/time -f %e -o "$DIR/quantize.time" "$SGC_BUILD/bin/sgc" quantize \
    "$BENCH_SRC/test/Inputs/hf-configs/$seed" "$file" --type q4_0 --dummy-weights 2>"$DIR/quantize.log" ||
    { tail -5 "$DIR/quantize.log" >&2; exit 1; }
  /usr/bin/time -f %e -o "$DIR/compile.time" "$SGC_BUILD/bin/sgc" compile "$file" --target=cpu -o "$so"
  "$SGC_BUILD/bin/sgc-run" "$so" --weights "$file" --prompt-ids "$ids" --max-new-tokens "$NEW" \
    --max-context 4096 --threads 2 --ignore-eos --json --no-progress \
    --dump-logits "$DIR/sgc.logits" >"$DIR/sgc.json"
  read -r ttft decode gen < <(python3 -c "import json; j = json.load(open('$DIR/sgc.json'))
print(j['time_to_first_token_s'], j['decode_tokens_per_s'], ','.join(map(str, j['ids'][:15])))")
  llama_bench_case "$DIR/llama-pp" "$DIR/llama.log" -m "$file" -p "$PROMPT" -n 0 -t 2 -r 1
  llama_bench_case "$DIR/llama-tg" "$DIR/llama.log" -m "$file" -p 0 -n "$NEW" -t 2 -r 1
  lpp=$(sed -n 's/^prefill_s_median=//p' "$DIR/llama-pp")
  ltg=$(sed -n 's/^decode_ms_median=//p' "$DIR/llama-tg")
  "$DIR/llama_logits" "$file" "$ids" "$gen" "$DIR/llama.f32" >"$DIR/llama_logits.log" 2>&1
  check=$("$PEER_PY" "$BENCH_SRC/bench/b6/compare_rows.py" "$DIR/sgc.logits" "$DIR/llama.f32" \
    "$PROMPT" 16 262144) || true
  bytes=$(stat -c %s "$file")
  rows+=("$(printf '| %-15s | %-8s | %-6s | %-9s | %-9s | %-9s | %-9s | %-7s | %-8s |' "$seed" \
    "$(awk -v b="$bytes" 'BEGIN { printf "%.2f GB", b / 1e9 }')" "$(cat "$DIR/quantize.time")" \
    "$(printf %.1f "$ttft")" "$(printf %.1f "$lpp")" "$(printf %.2f "$decode")" \
    "$(awk -v m="$ltg" 'BEGIN { printf "%.2f", 1000 / m }')" \
    "$(awk -v d="$decode" -v m="$ltg" 'BEGIN { printf "%.2fx", d * m / 1000 }')" \
    "$(awk -v d="$decode" -v b="$bytes" -v bw="$bw" 'BEGIN { printf "%.0f %%", 100 * d * b / (bw * 1e9) }')")")
  rows+=("|   $check")
  rm -f "$file" "$DIR/sgc.logits" "$DIR/llama.f32"
done
machine_note
echo "sgc: $SGC_BUILD at $(build_revision "$SGC_BUILD")"
echo "llama.cpp: $(llama_version); ceiling: read-sum $bw GB/s on 2 threads (bench/bandwidth)"
echo
echo "B6: Q4_0, dummy weights (sgc quantize --dummy-weights), $PROMPT-token prompt, $NEW new tokens, 2 threads"
printf '| %-15s | %-8s | %-6s | %-9s | %-9s | %-9s | %-9s | %-7s | %-8s |\n' seed file "write s" \
  "sgc TTFT" "llama TTFT" "sgc tok/s" "llama tok/s" "x llama" "ceiling"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ----------------- ---------- -------- ----------- \
  ----------- ----------- ----------- --------- ----------
printf '%s\n' "${rows[@]}"
