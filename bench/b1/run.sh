#!/usr/bin/env bash
# bench/b1/run.sh [ROUNDS] - B1 (CPU decode tok/s, batch 1) and B2 (prefill
# tok/s, 512-token prompt, 2 threads) of PERFORMANCE.md on the Gemma-3-shaped
# ~270M model: sgc next to llama.cpp (a BF16 GGUF bit-identical to the same
# checkpoint) and HF transformers on torch CPU, against the same run's memory
# bandwidth (decode) and f32 FMA peak (prefill).
#
#   B1_DIR        the model (default /tmp/sgc-b1; written by
#                 `tools/gen-golden/gen-golden --b1 B1_DIR` when missing, ~1 GiB)
#   SGC_BUILD     the build (default build/, what scripts/build makes):
#                 bin/sgc compiles the model
#   SGC_RT_BUILD  runtime build (default: SGC_BUILD): sgc_decode.c links its
#                 libsgc_runtime.a, libsgc_safetensors.a, libsgc_gguf.a,
#                 libsgc_support.a
#   PEER_PY       python with torch + transformers
#                 (default tools/gen-golden/.venv/bin/python)
#   SGC_DECODE_STEPS / HF_DECODE_STEPS / LLAMA_DECODE_STEPS  timed decode
#                 steps a process (default 64 / 24 / 64)
#   LLAMA_REPS    llama-bench repetitions a process (default 3, -r)
#   B2=0          skip the prefill cases
#
# llama.cpp is optional: bench/llamacpp/setup.sh builds it (~15 min, once);
# this script then converts the checkpoint (bench/llamacpp/convert.sh, ~1.5
# min the first time) and checks the GGUF bit for bit before every run.
# Without it the llama.cpp rows say so and the rest runs.
#
# Each round runs, as fresh processes in an order rotated each round: the 1-
# and 2-thread read-sum (bench/bandwidth/bw.c) and FMA peak (bench/fma/fma.c;
# on an AVX512-BF16 host also its 2-thread vdpbf16ps peak, "bf16 dot peak");
# sgc bf16/f32 decode (bench/b1/sgc_decode.c) on 1 and 2 threads; sgc
# bf16/f32 prefill, 2 threads; llama-bench decode (-p 0 -n 64 -t T) on 1 and 2
# threads and prefill (-p 512 -n 0 -t 2); HF bf16/f32 (bench/b1/hf_peer.py)
# on 1 and 2 threads, the 2-thread processes timing a 512-token prefill after
# their decode part. sgc and HF: a 32-token prompt and 8 greedy steps to warm
# up, then a fresh 32-token prompt and N timed greedy steps (forward + argmax,
# KV cache); a process reports its median step. llama-bench: its warm-up run,
# then LLAMA_REPS timed repetitions of N tokens from an empty context; the
# median repetition / N. Prefill: last-position logits only (sgc, HF; llama-
# bench computes one logits row per batch).
# Decode ceiling: the same round's read-sum GB/s (same threads) / bytes per
# token (every bf16 weight once, the tied LM head included, + the KV cache
# read at the mean timed position). Prefill share of the same round's
# 2-thread FMA peak: FLOP/token (the footer gives the formula) x 512 / time.
# "other": the median CPUs other processes kept busy during the timed part
# (bench/other_load.h; for llama-bench the whole process); a 2-thread row with
# other load near 1 measured the neighbours, not the code.
# ~3 min a round (with llama.cpp and B2), under load more.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a positive integer" >&2; exit 2; }
B1_DIR=${B1_DIR:-/tmp/sgc-b1}
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
SGC_RT_BUILD=$(cd "${SGC_RT_BUILD:-$SGC_BUILD}" && pwd)
PEER_PY=${PEER_PY:-$BENCH_SRC/tools/gen-golden/.venv/bin/python}
SGC_STEPS=${SGC_DECODE_STEPS:-64}
HF_STEPS=${HF_DECODE_STEPS:-24}
LLAMA_STEPS=${LLAMA_DECODE_STEPS:-64}
LLAMA_REPS=${LLAMA_REPS:-3}
B2=${B2:-1}
PROMPT=32
PREFILL=512
W=$BENCH_WORK/b1
mkdir -p "$W"
rm -f "$W/tuning"

if [[ ! -f $B1_DIR/system_graph.json || ! -f $B1_DIR/hf/model.safetensors ]]; then
  echo "writing the B1 model to $B1_DIR (~1 GiB, ~40 s)" >&2
  "$BENCH_SRC/tools/gen-golden/gen-golden" --b1 "$B1_DIR" >&2
fi

# --- sgc: the two model builds and the timing harness; the references ---
declare -A so
for dt in bf16 f32; do so[$dt]=$(b1_so "$SGC_BUILD" "$B1_DIR" $dt); done
harness=$BENCH_WORK/bin/sgc_decode
build_sgc_decode "$SGC_RT_BUILD" "$harness"
build_bw
build_fma

# --- llama.cpp: the GGUF, checked against the checkpoint ---
llama=0
gguf_check=""
if llama_built; then
  gguf_check=$(B1_DIR=$B1_DIR PEER_PY=$PEER_PY "$BENCH_SRC/bench/llamacpp/convert.sh" | grep '^check_gguf: OK') ||
    { echo "error: the GGUF does not match the checkpoint (bench/llamacpp/convert.sh)" >&2; exit 1; }
  gguf=$LLAMA/b1-bf16.gguf
  llama=1
fi

# run_case ROUND IMPL DTYPE THREADS: one fresh process; appends
# "round impl dtype threads key value" lines to $results.
results=$(mktemp)
out=$(mktemp)
trap 'rm -f "$results" "$out"' EXIT
run_case() {
  local r=$1 impl=$2 dt=$3 t=$4 g o prefill=(0 1)
  [[ $B2 != 0 && $t == 2 ]] && prefill=($PREFILL 1)
  case $impl in
  ref)
    read -r g o < <(ref_bw "$t")
    printf 'ref_gbs=%s\nother_load=%s\n' "$g" "$o" >"$out"
    ;;
  fma)
    read -r g o < <(ref_fma "$t")
    printf 'fma_gflops=%s\nother_load=%s\n' "$g" "$o" >"$out"
    ;;
  dot)
    read -r g o < <(ref_dot "$t")
    printf 'dot_gflops=%s\nother_load=%s\n' "$g" "$o" >"$out"
    ;;
  sgc) "$harness" "${so[$dt]}" "$B1_DIR" "$t" $PROMPT "$SGC_STEPS" >"$out" ;;
  sgc-pf) "$harness" "${so[$dt]}" "$B1_DIR" "$t" $PROMPT 1 $PREFILL 1 >"$out"
    # What the runtime chose for this host (the last bf16 prefill's).
    if [[ $dt == bf16 ]]; then sed -n 's/^tuning=//p' "$out" >"$W/tuning"; fi ;;
  llama | llama-pf)
    local args=(-p 0 -n "$LLAMA_STEPS")
    [[ $impl == llama-pf ]] && args=(-p $PREFILL -n 0)
    llama_bench_case "$out" "$W/llama.log" -m "$gguf" "${args[@]}" -t "$t" -r "$LLAMA_REPS"
    ;;
  hf) "$PEER_PY" "$BENCH_SRC/bench/b1/hf_peer.py" "$B1_DIR/hf" "$dt" "$t" $PROMPT \
    "$HF_STEPS" "${prefill[@]}" >"$out" 2>"$W/hf.log" ||
    { cat "$W/hf.log" >&2; return 1; } ;;
  esac
  sed -n 's/^\([a-z_0-9]*\)=\(.*\)$/\1 \2/p' "$out" |
    while read -r k v; do echo "$r $impl $dt $t $k ${v// /_}"; done >>"$results"
}

cases=("ref - 1" "ref - 2" "fma - 1" "fma - 2" "sgc bf16 1" "sgc bf16 2" "sgc f32 1"
  "sgc f32 2" "hf bf16 1" "hf bf16 2" "hf f32 1" "hf f32 2")
((llama)) && cases+=("llama bf16 1" "llama bf16 2")
dot=0
if [[ $B2 != 0 ]]; then
  cases+=("sgc-pf bf16 2" "sgc-pf f32 2")
  host_has_bf16_dot && { dot=1; cases+=("dot - 2"); }
  ((llama)) && cases+=("llama-pf bf16 2")
fi
n=${#cases[@]}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < ROUNDS; ++r)); do
  for ((i = 0; i < n; ++i)); do
    run_case $r ${cases[$(((i + r) % n))]}
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- tables ---
get() { # round impl dtype threads key
  awk -v r=$1 -v i=$2 -v d=$3 -v t=$4 -v k=$5 \
    '$1 == r && $2 == i && $3 == d && $4 == t && $5 == k { print $6 }' "$results"
}
series() { # impl dtype threads key: the value of every round, one a line
  local r
  for ((r = 0; r < ROUNDS; ++r)); do get $r "$@"; done
}
# x_stats: reads ratios, prints "1.23x (1.10-1.31)" (median and range).
x_stats() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "-"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2fx (%.2f-%.2f)\n", m, v[1], v[NR] }'
}
# speedup IMPL DTYPE THREADS KEY PEER_IMPL PEER_DTYPE: per round, the peer's
# time over this one's (> 1: faster than the peer); PEER_DTYPE "best" takes
# the faster HF of the round.
speedup() {
  local r m p b f
  for ((r = 0; r < ROUNDS; ++r)); do
    m=$(get $r $1 $2 $3 $4)
    if [[ $6 == best ]]; then
      b=$(get $r hf bf16 $3 $4)
      f=$(get $r hf f32 $3 $4)
      p=$(awk -v b="$b" -v f="$f" 'BEGIN { print (b < f) ? b : f }')
    else
      p=$(get $r $5 $6 $3 $4)
    fi
    awk -v m="$m" -v p="$p" 'BEGIN { print p / m }'
  done | x_stats
}
other() { series "$@" other_load | median | xargs printf %.1f; }
label() {
  case $1 in
  sgc | sgc-pf) echo "sgc $2" ;;
  llama | llama-pf) echo "llama.cpp $2" ;;
  hf) echo "HF $2" ;;
  esac
}

weight_bytes=$(get 0 sgc bf16 1 weight_bytes)
kv_tok=$(get 0 sgc bf16 1 kv_bytes_per_token)
# KV bytes read by one step at the mean timed position (prompt + warm token + half the steps).
bytes_tok=$(awk -v w="$weight_bytes" -v kv="$kv_tok" -v p=$PROMPT -v s="$SGC_STEPS" \
  'BEGIN { printf "%.0f", w + kv * (p + 1 + s / 2) }')

machine_note
echo "load average before/after the run: $load_before / $load_after"
echo "sgc: $SGC_BUILD at $(build_revision "$SGC_BUILD")"
[[ $SGC_RT_BUILD != "$SGC_BUILD" ]] && echo "sgc runtime: $SGC_RT_BUILD at $(build_revision "$SGC_RT_BUILD")"
if ((llama)); then
  echo "llama.cpp: $(llama_version), GGML_NATIVE, $(basename "$gguf"): ${gguf_check#check_gguf: }" \
    "(bf16 tensors bit-identical to $B1_DIR/model.safetensors)"
else
  echo "llama.cpp: $LLAMA_NOT_BUILT"
fi
echo "peer: $(get 0 hf bf16 1 variant | tr _ ' ' | sed 's/ bf16$//')"
echo
echo "B1 decode, batch 1, greedy; $ROUNDS rounds, fresh processes; timed steps a process:" \
  "sgc $SGC_STEPS after a 32-token prompt, HF $HF_STEPS after it, llama.cpp" \
  "$LLAMA_REPS x $LLAMA_STEPS from an empty context (median);" \
  "bytes/token $(awk -v b="$bytes_tok" 'BEGIN { printf "%.1f MB", b / 1e6 }') (bf16 weights + KV)"
fmt='| %-15s | %-3s | %-20s | %-5s | %-20s | %-20s | %-23s | %-5s |\n'
printf "$fmt" build thr "ms/token" "tok/s" "x llama.cpp" "x faster HF" "% of ceiling" other
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ----------------- ----- ---------------------- ------- \
  ---------------------- ---------------------- ------------------------- -------
for t in 1 2; do
  ceil=$(for ((r = 0; r < ROUNDS; ++r)); do
    awk -v g="$(get $r ref - $t ref_gbs)" -v b="$bytes_tok" 'BEGIN { print g * 1e9 / b }'
  done | median)
  printf "$fmt" "ceiling" $t "$(awk -v c="$ceil" 'BEGIN { printf "%.1f", 1000 / c }')" \
    "$(printf %.1f "$ceil")" "" "" "100 % (read $(series ref - $t ref_gbs | median) GB/s)" \
    "$(other ref - $t)"
  for c in "sgc bf16" "sgc f32" "llama bf16" "hf bf16" "hf f32"; do
    set -- $c
    if [[ $1 == llama ]] && ((!llama)); then
      printf "$fmt" "llama.cpp bf16" $t "$LLAMA_NOT_BUILT" "" "" "" "" ""
      continue
    fi
    ms=$(series $1 $2 $t decode_ms_median)
    pct=$(for ((r = 0; r < ROUNDS; ++r)); do
      awk -v m="$(get $r $1 $2 $t decode_ms_median)" -v g="$(get $r ref - $t ref_gbs)" \
        -v b="$bytes_tok" 'BEGIN { print (1000 / m) / (g * 1e9 / b) }'
    done | pct_stats)
    tok=$(echo "$ms" | awk '{ print 1000 / $1 }' | median)
    xl=""
    [[ $1 != llama ]] && { if ((llama)); then xl=$(speedup $1 $2 $t decode_ms_median llama bf16); else xl="not built"; fi; }
    xh=""
    [[ $1 != hf ]] && xh=$(speedup $1 $2 $t decode_ms_median hf best)
    printf "$fmt" "$(label $1 $2)" $t "$(echo "$ms" | stats)" "$(printf %.1f "$tok")" \
      "$xl" "$xh" "$pct" "$(other $1 $2 $t)"
  done
done
echo "x: per round, the peer's ms/token over this row's (> 1: faster), median (range);" \
  "% of ceiling: per round, tok/s over the read-sum ceiling on the same threads;" \
  "HF f32 moves twice the bytes (its own ceiling is half)"

# Agreement: the first 16 greedy ids (bf16 builds).
ids_sgc=$(get 0 sgc bf16 2 generated)
ids_hf=$(get 0 hf bf16 2 generated)
IFS=, read -r -a a <<<"$ids_sgc"
IFS=, read -r -a b <<<"$ids_hf"
common=$((${#a[@]} < ${#b[@]} ? ${#a[@]} : ${#b[@]}))
agree=same
for ((i = 0; i < common; ++i)); do [[ ${a[i]} == "${b[i]}" ]] || agree="DIFFERENT at step $i"; done
echo "greedy ids (round 0, 2 threads), sgc bf16: ${ids_sgc//,/ }"
echo "                                 HF bf16:  ${ids_hf//,/ }  ($agree over the first $common)"

if [[ $B2 != 0 ]]; then
  params=$(b1_decoder_params "$B1_DIR")
  flop_tok=$((2 * params))
  echo
  echo "B2 prefill, $PREFILL-token prompt, 2 threads, one prefill a process (after a warm-up" \
    "prompt; llama-bench: median of $LLAMA_REPS); $ROUNDS rounds"
  fmt2='| %-15s | %-23s | %-6s | %-17s | %-17s | %-7s | %-15s | %-5s | %-7s |\n'
  printf "$fmt2" build "time s min/med/max" "tok/s" "x llama.cpp" "x HF f32" "GFLOP/s" \
    "% of FMA peak" other argmax
  printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ----------------- ------------------------- -------- \
    ------------------- ------------------- --------- ----------------- ------- ---------
  printf "$fmt2" "FMA peak" "" "" "" "" "$(series fma - 2 fma_gflops | median | xargs printf %.1f)" \
    "100 %" "$(other fma - 2)" ""
  if ((dot)); then
    dpct=$(for ((r = 0; r < ROUNDS; ++r)); do
      awk -v d="$(get $r dot - 2 dot_gflops)" -v p="$(get $r fma - 2 fma_gflops)" 'BEGIN { print d / p }'
    done | pct_stats)
    printf "$fmt2" "bf16 dot peak" "" "" "" "" \
      "$(series dot - 2 dot_gflops | median | xargs printf %.1f)" "$dpct" "$(other dot - 2)" ""
  fi
  for c in "sgc-pf bf16" "sgc-pf f32" "llama-pf bf16" "hf bf16" "hf f32"; do
    set -- $c
    if [[ $1 == llama-pf ]] && ((!llama)); then
      printf "$fmt2" "llama.cpp bf16" "$LLAMA_NOT_BUILT" "" "" "" "" "" "" ""
      continue
    fi
    s=$(series $1 $2 2 prefill_s_median)
    tok=$(echo "$s" | awk -v n=$PREFILL '{ print n / $1 }' | median)
    gf=$(echo "$s" | awk -v n=$PREFILL -v f=$flop_tok '{ print f * n / $1 / 1e9 }' | median)
    pct=$(for ((r = 0; r < ROUNDS; ++r)); do
      awk -v s="$(get $r $1 $2 2 prefill_s_median)" -v p="$(get $r fma - 2 fma_gflops)" \
        -v n=$PREFILL -v f=$flop_tok 'BEGIN { print f * n / s / 1e9 / p }'
    done | pct_stats)
    xl=""
    [[ $1 != llama-pf ]] && { if ((llama)); then xl=$(speedup $1 $2 2 prefill_s_median llama-pf bf16); else xl="not built"; fi; }
    xh=""
    [[ $1 != hf || $2 != f32 ]] && xh=$(speedup $1 $2 2 prefill_s_median hf f32)
    printf "$fmt2" "$(label $1 $2)" "$(echo "$s" | stats %.3f)" \
      "$(printf %.1f "$tok")" "$xl" "$xh" "$(printf %.1f "$gf")" "$pct" "$(other $1 $2 2)" \
      "$(get 0 $1 $2 2 prefill_argmax)"
  done
  echo "FLOP/token = 2 x $params decoder weights (q, k, v, o, gate, up, down of every layer)" \
    "= $(awk -v f=$flop_tok 'BEGIN { printf "%.4f", f / 1e9 }') GFLOP; embedding lookup, norms," \
    "attention scores and the LM head (wanted for the last position only) not counted;" \
    "GFLOP/s = FLOP/token x $PREFILL / time; % of FMA peak: per round, over the same round's" \
    "2-thread f32 FMA peak (bench/fma)"
  if ((dot)); then
    share=$(for ((r = 0; r < ROUNDS; ++r)); do
      awk -v s="$(get $r sgc-pf bf16 2 prefill_s_median)" -v d="$(get $r dot - 2 dot_gflops)" \
        -v n=$PREFILL -v f=$flop_tok 'BEGIN { print f * n / s / 1e9 / d }'
    done | pct_stats)
    echo "bf16 dot peak: the same probe timing vdpbf16ps (bench/fma, 'dot'; the instruction of" \
      "llama.cpp's bf16 GEMM, and of sgc's where the runtime keeps it), 2 threads; sgc bf16" \
      "reaches $share of it"
  fi
  if [[ -s $W/tuning ]]; then echo "sgc's runtime on this host: $(cat "$W/tuning")"; fi
fi
