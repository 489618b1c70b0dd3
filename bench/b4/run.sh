#!/usr/bin/env bash
# bench/b4/run.sh [ROUNDS] - B4 of PERFORMANCE.md: time from process start to
# the first generated token for a 512-token prompt, the checkpoint in the
# page cache, sgc-run next to llama.cpp's llama-completion on the same
# checkpoint (the GGUF bench/llamacpp/convert.sh writes and checks bit for bit).
#
#   B1_DIR     the model (default /tmp/sgc-b1; `tools/gen-golden/gen-golden
#              --b1 B1_DIR` writes it)
#   SGC_BUILD  the build (default build/): bin/sgc compiles the model,
#              bin/sgc-run runs it
#   DTYPE      sgc's --compute-dtype (default bf16)
#   THREADS    threads of both (default 2); CTX: the KV cache both plan for
#              (default 4096: sgc-run --max-context, llama.cpp -c)
#   PEER_PY    python for convert.sh (default tools/gen-golden/.venv/bin/python)
#
# Each round first reads the checkpoint, the GGUF and the compiled model once
# (into the page cache), then runs one fresh process of each, the order
# alternating from round to round:
#   sgc-run MODEL.so --weights B1_DIR --threads T --max-context CTX
#     --prompt-ids <512 ids> --max-new-tokens 1
#   llama-completion -m B1.gguf -f PROMPT -n 1 -t T -c CTX --temp 0 -no-cnv
#     --no-warmup
# The llama.cpp prompt is 511 letters "a": with the placeholder vocabulary
# (bench/llamacpp/placeholder_tokenizer.py) that is bos + 511 byte tokens =
# 512 tokens, which the script checks in llama.cpp's own timing report.
# sgc's ids are bench/b1/sgc_decode.c's. Time = wall clock of the process,
# fork to exit, the same for both (each exits right after its first token).
# --no-warmup spares llama.cpp its default empty warm-up pass. "other": CPUs
# other processes kept busy meanwhile. ~15 s a round.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-5}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a positive integer" >&2; exit 2; }
B1_DIR=${B1_DIR:-/tmp/sgc-b1}
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
PEER_PY=${PEER_PY:-$BENCH_SRC/tools/gen-golden/.venv/bin/python}
DTYPE=${DTYPE:-bf16}
THREADS=${THREADS:-2}
CTX=${CTX:-4096}
PROMPT=512
W=$BENCH_WORK/b4
mkdir -p "$W"

if [[ ! -f $B1_DIR/system_graph.json ]]; then
  echo "error: no B1 model in $B1_DIR: run 'tools/gen-golden/gen-golden --b1 $B1_DIR'" >&2
  exit 1
fi
so=$(b1_so "$SGC_BUILD" "$B1_DIR" "$DTYPE")
ids=$(awk -v n=$PROMPT 'BEGIN { for (i = 0; i < n; ++i)
  printf "%s%d", i ? "," : "", i ? 100 + (i * 7919) % 100000 : 2 }')

llama=0
if llama_built; then
  gguf_check=$(B1_DIR=$B1_DIR PEER_PY=$PEER_PY "$BENCH_SRC/bench/llamacpp/convert.sh" | grep '^check_gguf: OK') ||
    { echo "error: the GGUF does not match the checkpoint (bench/llamacpp/convert.sh)" >&2; exit 1; }
  gguf=$LLAMA/b1-bf16.gguf
  printf 'a%.0s' $(seq $((PROMPT - 1))) >"$W/prompt.txt"
  llama=1
fi

results=$(mktemp)
out=$(mktemp)
trap 'rm -f "$results" "$out"' EXIT
run_case() { # ROUND IMPL
  case $2 in
  sgc)
    timed_run "$out" "$SGC_BUILD/bin/sgc-run" "$so" --weights "$B1_DIR" --threads "$THREADS" \
      --max-context "$CTX" --prompt-ids "$ids" --max-new-tokens 1 --no-progress 2>"$W/sgc.log" ||
      { cat "$W/sgc.log" >&2; return 1; }
    echo "first=$(head -1 "$out")" >>"$out"
    ;;
  llama)
    timed_run "$out" "$LLAMA/bin/llama-completion" -m "$gguf" -f "$W/prompt.txt" -n 1 \
      -t "$THREADS" -c "$CTX" --temp 0 -no-cnv --no-warmup </dev/null 2>"$W/llama.log" ||
      { cat "$W/llama.log" >&2; return 1; }
    # llama_perf_context_print: "prompt eval time = X ms / N tokens (...)".
    local n
    n=$(sed -n 's/.*prompt eval time = .* \/ *\([0-9]*\) tokens.*/\1/p' "$W/llama.log" | head -1)
    [[ $n == "$PROMPT" ]] || { echo "error: llama-completion evaluated '${n:-?}' prompt" \
      "tokens, expected $PROMPT (see $W/llama.log)" >&2; return 1; }
    ;;
  esac
  sed -n 's/^\([a-z_0-9]*\)=\(.*\)$/\1 \2/p' "$out" |
    while read -r k v; do echo "$1 $2 $k ${v// /_}"; done >>"$results"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < ROUNDS; ++r)); do
  cat "$B1_DIR/model.safetensors" "$so" >/dev/null
  order=(sgc)
  if ((llama)); then
    cat "$gguf" >/dev/null
    if ((r % 2)); then order=(llama sgc); else order=(sgc llama); fi
  fi
  for x in "${order[@]}"; do run_case $r $x; done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

get() { # round impl key
  awk -v r=$1 -v i=$2 -v k=$3 '$1 == r && $2 == i && $3 == k { print $4 }' "$results"
}
series() { local r; for ((r = 0; r < ROUNDS; ++r)); do get $r "$@"; done; }

machine_note
echo "load average before/after the run: $load_before / $load_after"
echo "sgc: $SGC_BUILD at $(build_revision "$SGC_BUILD")"
if ((llama)); then
  echo "llama.cpp: $(llama_version), GGML_NATIVE, $(basename "$gguf"): ${gguf_check#check_gguf: }"
else
  echo "llama.cpp: $LLAMA_NOT_BUILT"
fi
echo "B4 time to first token: $PROMPT-token prompt, 1 new token, $THREADS threads, KV for $CTX" \
  "positions, checkpoint in the page cache; wall clock of the process, fork to exit;" \
  "$ROUNDS rounds, fresh processes, order alternating"
fmt='| %-16s | %-20s | %-6s | %-17s | %-5s |\n'
printf "$fmt" tool "wall s min/med/max" "tok/s" "x llama.cpp" other
printf '|%s|%s|%s|%s|%s|\n' ------------------ ---------------------- -------- ------------------- -------
for x in sgc llama; do
  if [[ $x == llama ]] && ((!llama)); then
    printf "$fmt" "llama.cpp bf16" "$LLAMA_NOT_BUILT" "" "" ""
    continue
  fi
  s=$(series $x wall_s)
  xl="not built"
  if ((llama)); then
    xl=$(for ((r = 0; r < ROUNDS; ++r)); do
      awk -v m="$(get $r $x wall_s)" -v p="$(get $r llama wall_s)" 'BEGIN { print p / m }'
    done | sort -g | awk '{ v[NR] = $1 } END {
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "%.2fx (%.2f-%.2f)\n", m, v[1], v[NR] }')
  fi
  [[ $x == llama ]] && xl=""
  label="sgc-run $DTYPE"
  [[ $x == llama ]] && label="llama.cpp bf16"
  printf "$fmt" "$label" "$(echo "$s" | stats %.3f)" \
    "$(echo "$s" | awk -v n=$PROMPT '{ print n / $1 }' | median | xargs printf %.1f)" "$xl" \
    "$(series $x other_load | median | xargs printf %.1f)"
done
echo "tok/s: $PROMPT / wall time (prompt throughput including start-up); x llama.cpp: per round," \
  "llama.cpp's time over this row's (> 1: sooner), median (range)"
echo "sgc's first token (round 0): $(get 0 sgc first) (llama.cpp's text vocabulary is a placeholder: not compared)"
