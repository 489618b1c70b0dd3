#!/usr/bin/env bash
# bench/b7/run.sh [ROUNDS] - B7 of PERFORMANCE.md: the server under load.
# sgc-serve and llama-server on the B1 model (sgc: bf16 with the default
# decode batches; llama.cpp: the same weights as a BF16 GGUF), each with 16
# slots and the same threads; for concurrency 1, 4 and 16, bench/b7/
# load_client.py sends streamed completions (a 32-token prompt of ids,
# 64 tokens each, ignore_eos, greedy) and measures the summed generated
# tok/s, time to first token and inter-token latency. Servers take turns,
# one at a time, in an order swapped each round; a round is one server
# process per server. The table: medians over rounds.
#
#   B1_DIR, SGC_BUILD: as bench/b1/run.sh
#   B7_THREADS   threads for both servers (default: all CPUs)
#   B7_REQUESTS  requests per client (default 4 at concurrency 1, 2 above)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a positive integer" >&2; exit 2; }
B1_DIR=${B1_DIR:-/tmp/sgc-b1}
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
THREADS=${B7_THREADS:-$(nproc)}
SLOTS=16 PROMPT=32 NEW=64 CTX=128
CLIENT=$BENCH_SRC/bench/b7/load_client.py
if [[ ! -f $B1_DIR/model.safetensors ]]; then
  echo "writing the B1 model to $B1_DIR (~1 GiB, ~40 s)" >&2
  "$BENCH_SRC/tools/gen-golden/gen-golden" --b1 "$B1_DIR" >&2
fi
[[ -x $LLAMA/bin/llama-server ]] || { echo "error: llama-server $LLAMA_NOT_BUILT" >&2; exit 1; }
GGUF=$LLAMA/b1-bf16.gguf
[[ -f $GGUF ]] || "$BENCH_SRC/bench/llamacpp/convert.sh" >&2
# B1 has no tokenizer of its own: both servers read the placeholder that
# convert.sh made for the GGUF (prompts are sent as ids).
TOKENIZER=$LLAMA/b1-hf/tokenizer.model
SO=$(b1_so "$SGC_BUILD" "$B1_DIR" bf16)
OUT=$BENCH_WORK/b7
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.log

wait_healthy() { # URL PID LOG
  for _ in $(seq 600); do
    curl -sf "$1/health" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { tail -5 "$3" >&2; return 1; }
    sleep 0.5
  done
  return 1
}

serve() { # NAME ROUND: starts the server, runs the three loads, stops it
  local name=$1 r=$2 port=$((18700 + RANDOM % 1000)) pid
  local log=$OUT/$name-r$r.log
  if [[ $name == sgc ]]; then
    "$SGC_BUILD/bin/sgc-serve" "$SO" --weights "$B1_DIR/model.safetensors" \
      --tokenizer "$TOKENIZER" --port "$port" --parallel "$SLOTS" \
      --max-context "$CTX" --threads "$THREADS" >"$log" 2>&1 &
  else
    "$LLAMA/bin/llama-server" -m "$GGUF" --port "$port" -np "$SLOTS" \
      -c $((SLOTS * CTX)) -t "$THREADS" -tb "$THREADS" --no-webui \
      >"$log" 2>&1 &
  fi
  pid=$!
  wait_healthy "http://127.0.0.1:$port" "$pid" "$log" || { kill "$pid"; echo "error: $name did not start" >&2; exit 1; }
  # One untimed request first (page faults, thread pools).
  python3 "$CLIENT" "http://127.0.0.1:$port" --concurrency 1 --requests 1 \
    --prompt-len "$PROMPT" --max-tokens 8 >/dev/null
  for c in 1 4 16; do
    local req=$((c == 1 ? ${B7_REQUESTS:-4} : ${B7_REQUESTS:-2}))
    python3 "$CLIENT" "http://127.0.0.1:$port" --concurrency "$c" --requests "$req" \
      --prompt-len "$PROMPT" --max-tokens "$NEW" > "$OUT/$name-r$r-c$c.json"
    echo "round $((r + 1)) $name c=$c: $(cat "$OUT/$name-r$r-c$c.json")" >&2
  done
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
}

for ((r = 0; r < ROUNDS; ++r)); do
  if ((r % 2 == 0)); then serve sgc "$r"; serve llama "$r"; else serve llama "$r"; serve sgc "$r"; fi
done

field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
med() { # NAME C FIELD
  for ((r = 0; r < ROUNDS; ++r)); do field "$OUT/$1-r$r-c$2.json" "$3"; done | median
}

echo "### $(date -u '+%Y-%m-%d %H:%M') UTC — B7: sgc-serve vs llama-server on the B1 model (sgc $(build_revision "$SGC_BUILD"))"
echo
echo "$(machine_note); $ROUNDS rounds; $SLOTS slots and $THREADS threads each; streamed /v1/completions, $PROMPT-token prompts, $NEW tokens each (ignore_eos, greedy); sgc bf16 (decode batches 1, 2, 4, 8, 16), llama.cpp $(cat "$LLAMA/VERSION" 2>/dev/null) BF16 GGUF"
echo
echo "| concurrency | sgc tok/s | llama-server tok/s | sgc / llama-server, per round: median (range) | sgc TTFT p50 ms | llama TTFT p50 ms | sgc ITL p50 / p99 ms | llama ITL p50 / p99 ms |"
echo "|---|---|---|---|---|---|---|---|"
ratios() { # C: each round's sgc / llama-server, then "median (min-max)"
  for ((r = 0; r < ROUNDS; ++r)); do
    awk -v a="$(field "$OUT/sgc-r$r-c$1.json" tok_s)" -v b="$(field "$OUT/llama-r$r-c$1.json" tok_s)" \
      'BEGIN { printf "%.3f\n", a / b }'
  done | sort -g | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f× (%.2f-%.2f)\n", m, v[1], v[NR] }'
}
for c in 1 4 16; do
  echo "| $c | $(med sgc $c tok_s) | $(med llama $c tok_s) | $(ratios $c) | $(med sgc $c ttft_p50_ms) | $(med llama $c ttft_p50_ms) | $(med sgc $c itl_p50_ms) / $(med sgc $c itl_p99_ms) | $(med llama $c itl_p50_ms) / $(med llama $c itl_p99_ms) |"
done
s1=$(med sgc 1 tok_s) s16=$(med sgc 16 tok_s)
echo
echo "tok/s: generated tokens of all clients / the run's wall time (the client runs on the same host). sgc at concurrency 16 / concurrency 1: $(awk -v a="$s16" -v b="$s1" 'BEGIN { printf "%.2f", a / b }')× (target ≥ 3×; ≥ 1.2× llama-server at 4 and 16). TTFT: request sent to the first token; ITL: between a request's tokens (a chunk of k tokens counts its gap k times, / k)."
