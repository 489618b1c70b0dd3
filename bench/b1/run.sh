#!/usr/bin/env bash
# bench/b1/run.sh [ROUNDS] - B1 (CPU decode tok/s, batch 1) and B2 (prefill
# tok/s, 512-token prompt) of PERFORMANCE.md on the Gemma-3-shaped ~270M
# model, sgc next to HF transformers on torch CPU, same checkpoint.
#
#   B1_DIR        the model (default /tmp/sgc-b1; written by
#                 `tools/gen-golden/gen-golden --b1 B1_DIR` when missing, ~1 GiB)
#   SGC_BUILD     the build (default build/, what scripts/build makes):
#                 bin/sgc compiles the model
#   SGC_RT_BUILD  runtime build (default: SGC_BUILD): sgc_decode.c links its
#                 libsgc_runtime.a, libsgc_safetensors.a, libsgc_support.a
#   PEER_PY       python with torch + transformers
#                 (default tools/gen-golden/.venv/bin/python)
#   SGC_DECODE_STEPS / HF_DECODE_STEPS  timed decode steps (default 64 / 24)
#   B2=0          skip the prefill measurement
#
# The model is compiled twice (--compute-dtype=bf16 and f32; the weights stay
# bf16). Each round runs, as fresh processes in an order rotated each round:
# the 1- and 2-thread read-sum reference (bench/bandwidth/bw.c), sgc bf16/f32
# (bench/b1/sgc_decode.c) and HF bf16/f32 (bench/b1/hf_peer.py), each on 1
# and 2 threads. Both sides: a 32-token prompt and 8 greedy steps to warm up,
# then a fresh 32-token prompt and N timed greedy decode steps (forward +
# argmax, KV cache); a process reports its median step time. The ceiling is
# the same round's read-sum GB/s (same thread count) / bytes per token (every
# bf16 weight once, the tied LM head included, + the KV cache read at the
# mean timed position). B2 (round 0, 2 threads): one timed 512-token prefill
# per process after the decode part (last-position logits only).
# Targets: B1 >= 2x the faster peer and >= 70 % of the ceiling (2 threads);
# B2 >= 1x the peer. "other": the median CPUs other processes kept busy
# during the timed part (bench/other_load.h); a 2-thread row with other load
# near 1 measured the neighbours, not the code (torch's OpenMP barriers
# suffer most). ~2.5 min a round under load, plus ~1.5 min for B2.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-3}
B1_DIR=${B1_DIR:-/tmp/sgc-b1}
SGC_BUILD=$(cd "${SGC_BUILD:-$BENCH_SRC/build}" && pwd)
SGC_RT_BUILD=$(cd "${SGC_RT_BUILD:-$SGC_BUILD}" && pwd)
PEER_PY=${PEER_PY:-$BENCH_SRC/tools/gen-golden/.venv/bin/python}
SGC_STEPS=${SGC_DECODE_STEPS:-64}
HF_STEPS=${HF_DECODE_STEPS:-24}
PROMPT=32
W=$BENCH_WORK/b1
mkdir -p "$W"

if [[ ! -f $B1_DIR/system_graph.json || ! -f $B1_DIR/hf/model.safetensors ]]; then
  echo "writing the B1 model to $B1_DIR (~1 GiB, ~40 s)" >&2
  "$BENCH_SRC/tools/gen-golden/gen-golden" --b1 "$B1_DIR" >&2
fi

# --- sgc: the two model builds and the timing harness ---
for dt in bf16 f32; do
  so=$W/b1-$dt.so
  if [[ ! $so -nt $SGC_BUILD/bin/sgc || ! $so -nt $B1_DIR/system_graph.json ]]; then
    "$SGC_BUILD/bin/sgc" compile "$B1_DIR/system_graph.json" --target=cpu \
      --compute-dtype=$dt -o "$so"
  fi
done
harness=$BENCH_WORK/bin/sgc_decode
build_sgc_decode "$SGC_RT_BUILD" "$harness"
build_bw

# run_case ROUND IMPL DTYPE THREADS: one fresh process; appends
# "round impl dtype threads key value" lines to $results.
results=$(mktemp)
out=$(mktemp)
trap 'rm -f "$results" "$out"' EXIT
run_case() {
  local r=$1 impl=$2 dt=$3 t=$4 prefill=(0 1)
  [[ ${B2:-1} != 0 && $r == 0 && $t == 2 ]] && prefill=(512 1)
  case $impl in
  ref)
    read -r g o < <(ref_bw "$t")
    printf 'ref_gbs=%s\nother_load=%s\n' "$g" "$o" >"$out"
    ;;
  sgc) "$harness" "$W/b1-$dt.so" "$B1_DIR" "$t" $PROMPT "$SGC_STEPS" "${prefill[@]}" >"$out" ;;
  hf) "$PEER_PY" "$BENCH_SRC/bench/b1/hf_peer.py" "$B1_DIR/hf" "$dt" "$t" $PROMPT \
    "$HF_STEPS" "${prefill[@]}" >"$out" 2>"$W/hf.log" ||
    { cat "$W/hf.log" >&2; return 1; } ;;
  esac
  sed -n 's/^\([a-z_0-9]*\)=\(.*\)$/\1 \2/p' "$out" |
    while read -r k v; do echo "$r $impl $dt $t $k ${v// /_}"; done >>"$results"
}

cases=("ref - 1" "ref - 2" "sgc bf16 1" "sgc bf16 2" "sgc f32 1" "sgc f32 2"
  "hf bf16 1" "hf bf16 2" "hf f32 1" "hf f32 2")
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
weight_bytes=$(get 0 sgc bf16 1 weight_bytes)
kv_tok=$(get 0 sgc bf16 1 kv_bytes_per_token)
# KV bytes read by one step at the mean timed position (prompt + warm token + half the steps).
bytes_tok=$(awk -v w="$weight_bytes" -v kv="$kv_tok" -v p=$PROMPT -v s="$SGC_STEPS" \
  'BEGIN { printf "%.0f", w + kv * (p + 1 + s / 2) }')

# ratio IMPL DTYPE THREADS PEER: per round, tok/s over the peer's tok/s
# (= peer ms / ms); PEER is bf16, f32 or best (the faster HF of the round).
ratio() {
  local r m p b f
  for ((r = 0; r < ROUNDS; ++r)); do
    m=$(get $r $1 $2 $3 decode_ms_median)
    b=$(get $r hf bf16 $3 decode_ms_median)
    f=$(get $r hf f32 $3 decode_ms_median)
    case $4 in
    best) p=$(awk -v b="$b" -v f="$f" 'BEGIN { print (b < f) ? b : f }') ;;
    bf16) p=$b ;;
    f32) p=$f ;;
    esac
    awk -v m="$m" -v p="$p" 'BEGIN { print p / m }'
  done | sort -g | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2fx (%.2f-%.2f)\n", m, v[1], v[NR] }'
}

machine_note
echo "load average before/after the run: $load_before / $load_after"
echo "B1 decode, batch 1, greedy, 32-token prompt; $ROUNDS rounds, fresh processes;" \
  "sgc $SGC_STEPS / HF $HF_STEPS timed steps a process (median step);" \
  "bytes/token $(awk -v b="$bytes_tok" 'BEGIN { printf "%.1f MB", b / 1e6 }') (bf16 weights + KV)"
# other LABEL-ARGS: median other load over rounds (impl dtype threads).
other() {
  for ((r = 0; r < ROUNDS; ++r)); do get $r $1 $2 $3 other_load; done | median | xargs printf %.1f
}
fmt='| %-8s | %-3s | %-17s | %-5s | %-17s | %-17s | %-17s | %-22s | %-5s |\n'
printf "$fmt" build thr "ms/token" "tok/s" "x HF bf16" "x HF f32" "x faster HF" "% of ceiling" other
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ---------- ----- ------------------- ------- \
  ------------------- ------------------- ------------------- ------------------------ -------
for t in 1 2; do
  ceil=$(for ((r = 0; r < ROUNDS; ++r)); do
    awk -v g="$(get $r ref - $t ref_gbs)" -v b="$bytes_tok" 'BEGIN { print g * 1e9 / b }'
  done | median)
  printf "$fmt" "ceiling" $t "$(awk -v c="$ceil" 'BEGIN { printf "%.1f", 1000 / c }')" \
    "$(printf %.1f "$ceil")" "" "" "" "100 % (read $(for ((r = 0; r < ROUNDS; ++r)); do
      get $r ref - $t ref_gbs; done | median) GB/s)" "$(other ref - $t)"
  for c in "sgc bf16" "sgc f32" "hf bf16" "hf f32"; do
    set -- $c
    ms=$(for ((r = 0; r < ROUNDS; ++r)); do get $r $1 $2 $t decode_ms_median; done)
    pct=$(for ((r = 0; r < ROUNDS; ++r)); do
      awk -v m="$(get $r $1 $2 $t decode_ms_median)" -v g="$(get $r ref - $t ref_gbs)" \
        -v b="$bytes_tok" 'BEGIN { print (1000 / m) / (g * 1e9 / b) }'
    done | pct_stats)
    tok=$(echo "$ms" | awk '{ print 1000 / $1 }' | median)
    label="$1 $2"
    [[ $1 == hf ]] && label="HF $2"
    if [[ $1 == hf ]]; then
      printf "$fmt" "$label" $t "$(echo "$ms" | stats)" "$(printf %.1f "$tok")" \
        "$(ratio $1 $2 $t bf16)" "$(ratio $1 $2 $t f32)" "" "$pct" "$(other $1 $2 $t)"
    else
      printf "$fmt" "$label" $t "$(echo "$ms" | stats)" "$(printf %.1f "$tok")" \
        "$(ratio $1 $2 $t bf16)" "$(ratio $1 $2 $t f32)" "$(ratio $1 $2 $t best)" "$pct" \
        "$(other $1 $2 $t)"
    fi
  done
done

# Agreement: the first 16 greedy ids (bf16 builds) and the prefill argmax.
ids_sgc=$(get 0 sgc bf16 2 generated)
ids_hf=$(get 0 hf bf16 2 generated)
IFS=, read -r -a a <<<"$ids_sgc"
IFS=, read -r -a b <<<"$ids_hf"
common=$((${#a[@]} < ${#b[@]} ? ${#a[@]} : ${#b[@]}))
agree=same
for ((i = 0; i < common; ++i)); do [[ ${a[i]} == "${b[i]}" ]] || agree="DIFFERENT at step $i"; done
echo "greedy ids (round 0, 2 threads), sgc bf16: ${ids_sgc//,/ }"
echo "                                 HF bf16:  ${ids_hf//,/ }  ($agree over the first $common)"

if [[ ${B2:-1} != 0 ]]; then
  echo
  echo "B2 prefill, 512-token prompt, 2 threads, one process each (round 0); tok/s = 512 / time"
  fmt2='| %-9s | %-9s | %-9s | %-11s | %-11s | %-14s |\n'
  printf "$fmt2" build "time s" "tok/s" "x HF bf16" "x HF f32" "argmax"
  printf '|%s|%s|%s|%s|%s|%s|\n' ----------- ----------- ----------- ------------- \
    ------------- ----------------
  hb=$(get 0 hf bf16 2 prefill_s_median)
  hf=$(get 0 hf f32 2 prefill_s_median)
  for c in "sgc bf16" "sgc f32" "hf bf16" "hf f32"; do
    set -- $c
    s=$(get 0 $1 $2 2 prefill_s_median)
    label="$1 $2"
    [[ $1 == hf ]] && label="HF $2"
    printf "$fmt2" "$label" "$s" "$(awk -v s="$s" 'BEGIN { printf "%.1f", 512 / s }')" \
      "$(awk -v s="$s" -v p="$hb" 'BEGIN { printf "%.2fx", p / s }')" \
      "$(awk -v s="$s" -v p="$hf" 'BEGIN { printf "%.2fx", p / s }')" \
      "$(get 0 $1 $2 2 prefill_argmax)"
  done
fi
