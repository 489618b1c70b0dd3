#!/usr/bin/env bash
# bench/b1/compare.sh BUILD_A BUILD_B - B1 decode tok/s of two sgc builds side
# by side: is B faster than A? Each build compiles the model with its own
# bin/sgc and runs it through its own runtime (bench/b1/sgc_decode.c linked
# against BUILD/runtime and BUILD/lib); per round and thread count, one fresh
# process of each, A and B alternating which goes first. Prints min/median/max
# tok/s of each, the median over rounds of the per-round ratio B/A (> 1: B is
# faster), and the git revision of each build's source tree.
#
#   ROUNDS     rounds (default 5; fewer only to check the script)
#   THREADS    thread counts (default "1 2")
#   MODEL_DIR  system_graph.json + weights (default B1_DIR, else /tmp/sgc-b1)
#   DTYPE      --compute-dtype (default bf16)
#   GGUF       a GGUF file to compile and run instead of MODEL_DIR's graph and
#              weights, e.g. B1 at Q4_0 (`sgc quantize --type=q4_0 /tmp/sgc-b1
#              /tmp/b1-q4_0.gguf`): the block-encoded kernels of two builds
#   STEPS      timed decode steps a process (default 64); PROMPT tokens (32)
#   PREFILL    also time a prefill of this many tokens (default 0: none; B2
#              is 512), PREFILL_REPS calls a process (default 3, median)
#   A_ENV, B_ENV  environment assignments for each side's processes, e.g.
#              A_ENV=SGC_DECODE_WEIGHTS=map B_ENV=SGC_DECODE_WEIGHTS=copy
#              with the same build twice: the weights in place against the
#              copy on huge pages (sgc_decode.c)
#
# The B1 model (Gemma-3-shaped ~270M, random bf16 weights, ~1 GiB) is written
# by `tools/gen-golden/gen-golden --b1 /tmp/sgc-b1` (after
# `tools/gen-golden/setup-venv`; ~40 s). To check the script without it:
#   ROUNDS=1 MODEL_DIR=examples/tiny-gemma4 bench/b1/compare.sh build build
# A second build of another revision, e.g. HEAD~1, next to build/:
#   git worktree add /tmp/sgc-prev HEAD~1
#   cmake -S /tmp/sgc-prev -B /tmp/sgc-prev/build -G Ninja -DCMAKE_BUILD_TYPE=Release
#   ninja -C /tmp/sgc-prev/build
#   bench/b1/compare.sh /tmp/sgc-prev/build build
# Ratios are what to read on a shared host (bench/README.md); "other" is the
# median CPUs other processes kept busy during the timed part: a 2-thread row
# with other load near 1 measured the neighbours.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
(($# == 2)) || usage
ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-1 2}
MODEL_DIR=${MODEL_DIR:-${B1_DIR:-/tmp/sgc-b1}}
DTYPE=${DTYPE:-bf16}
STEPS=${STEPS:-64}
PROMPT=${PROMPT:-32}
PREFILL=${PREFILL:-0}
PREFILL_REPS=${PREFILL_REPS:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a positive integer" >&2; exit 2; }

if [[ -n ${GGUF:-} ]]; then
  [[ -f $GGUF ]] || { echo "error: GGUF=$GGUF is no file" >&2; exit 1; }
  # The graph comes from the file, and the file is the weights.
  MODEL_DIR=$(cd "$(dirname "$GGUF")" && pwd)/$(basename "$GGUF")
  source_model=$MODEL_DIR
elif [[ ! -f $MODEL_DIR/system_graph.json ]]; then
  echo "error: no model in $MODEL_DIR: make the B1 model with" \
    "'tools/gen-golden/gen-golden --b1 $MODEL_DIR' (see the header of $0)" >&2
  exit 1
else
  MODEL_DIR=$(cd "$MODEL_DIR" && pwd)
  source_model=$MODEL_DIR/system_graph.json
fi
W=$BENCH_WORK/compare
mkdir -p "$W"

# Per build: its path, the model it compiled, its harness, its revision.
declare -A dir so harness revision
for x in A B; do
  b=$1
  shift
  [[ -x $b/bin/sgc && -f $b/CMakeCache.txt ]] ||
    { echo "error: $b is not an sgc build directory (no bin/sgc or CMakeCache.txt)" >&2; exit 1; }
  dir[$x]=$(cd "$b" && pwd)
  key=$(cksum <<<"${dir[$x]}" | cut -d' ' -f1)
  so[$x]=$W/$x-$key-$DTYPE.so
  harness[$x]=$BENCH_WORK/bin/sgc_decode-$key
  revision[$x]=$(build_revision "${dir[$x]}")
  "${dir[$x]}/bin/sgc" compile "$source_model" --target=cpu \
    --compute-dtype="$DTYPE" -o "${so[$x]}"
  build_sgc_decode "${dir[$x]}" "${harness[$x]}"
done

# One fresh process: appends "build threads round key value" lines.
results=$(mktemp)
out=$(mktemp)
trap 'rm -f "$results" "$out"' EXIT
declare -A side_env=([A]="${A_ENV:-}" [B]="${B_ENV:-}")
run_one() { # BUILD THREADS ROUND
  # shellcheck disable=SC2086 # the assignments split on spaces on purpose
  env ${side_env[$1]} "${harness[$1]}" "${so[$1]}" "$MODEL_DIR" "$2" "$PROMPT" \
    "$STEPS" "$PREFILL" "$PREFILL_REPS" >"$out"
  sed -n 's/^\([a-z_0-9]*\)=\(.*\)$/\1 \2/p' "$out" |
    while read -r k v; do echo "$1 $2 $3 $k ${v// /_}"; done >>"$results"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < ROUNDS; ++r)); do
  i=0
  for t in $THREADS; do
    # Who goes first alternates over rounds and thread counts.
    if (((r + i) % 2)); then order=(B A); else order=(A B); fi
    for x in "${order[@]}"; do run_one "$x" "$t" "$r"; done
    i=$((i + 1))
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

get() { # BUILD THREADS ROUND KEY
  awk -v x="$1" -v t="$2" -v r="$3" -v k="$4" \
    '$1 == x && $2 == t && $3 == r && $4 == k { print $5 }' "$results"
}
toks() { # BUILD THREADS: decode tok/s of every round, one a line
  for ((r = 0; r < ROUNDS; ++r)); do
    get "$1" "$2" $r decode_ms_median | awk '{ print 1000 / $1 }'
  done
}
prefill_toks() { # BUILD THREADS: prefill tok/s of every round, one a line
  for ((r = 0; r < ROUNDS; ++r)); do
    get "$1" "$2" $r prefill_s_median | awk -v n="$PREFILL" '{ print n / $1 }'
  done
}
ratios() { # THREADS KEY: median (range) of A/B of KEY (a time) over rounds
  for ((r = 0; r < ROUNDS; ++r)); do
    awk -v a="$(get A "$1" $r "$2")" -v b="$(get B "$1" $r "$2")" \
      'BEGIN { print a / b }' # speed B / speed A = time A / time B
  done | sort -g | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.3f (%.3f-%.3f)\n", m, v[1], v[NR] }'
}

machine_note
echo "load average before/after the run: $load_before / $load_after"
for x in A B; do
  echo "$x: ${dir[$x]} at ${revision[$x]}${side_env[$x]:+, env ${side_env[$x]}}," \
    "weights copied at bind: $(get $x "${THREADS%% *}" 0 weights_copied_bytes) B"
done
echo "B1 decode, batch 1, greedy: $MODEL_DIR, --compute-dtype=$DTYPE, $PROMPT-token prompt;" \
  "$STEPS timed steps a process (median step); $ROUNDS round(s) of fresh processes, A and B interleaved"
fmt='| %-7s | %-22s | %-22s | %-21s | %-9s |\n'
printf "$fmt" threads "A tok/s min/med/max" "B tok/s min/med/max" "B/A median (range)" "other A/B"
printf '|%s|%s|%s|%s|%s|\n' --------- ------------------------ ------------------------ \
  ----------------------- -----------
for t in $THREADS; do
  ratio=$(ratios "$t" decode_ms_median)
  other=$(for x in A B; do
    for ((r = 0; r < ROUNDS; ++r)); do get $x "$t" $r other_load; done | median | xargs printf %.1f
    echo
  done | paste -sd/)
  printf "$fmt" "$t" "$(toks A "$t" | stats)" "$(toks B "$t" | stats)" "$ratio" "$other"
done
if ((PREFILL > 0)); then
  echo
  echo "B2 prefill of $PREFILL tokens (median of $PREFILL_REPS calls a process), same processes"
  printf "$fmt" threads "A tok/s min/med/max" "B tok/s min/med/max" "B/A median (range)" ""
  printf '|%s|%s|%s|%s|%s|\n' --------- ------------------------ ------------------------ \
    ----------------------- -----------
  for t in $THREADS; do
    printf "$fmt" "$t" "$(prefill_toks A "$t" | stats)" "$(prefill_toks B "$t" | stats)" \
      "$(ratios "$t" prefill_s_median)" ""
  done
fi

# The two builds should generate the same tokens; a difference is worth a
# look before trusting the speed-up (it can also be rounding in a new kernel).
t=${THREADS%% *}
ids_a=$(get A "$t" 0 generated)
ids_b=$(get B "$t" 0 generated)
if [[ $ids_a == "$ids_b" ]]; then
  echo "greedy ids (round 0, $t thread(s)): the same in A and B: ${ids_a//,/ }"
else
  echo "greedy ids (round 0, $t thread(s)) DIFFER: A ${ids_a//,/ } / B ${ids_b//,/ }"
fi
