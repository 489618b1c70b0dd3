# shellcheck shell=bash
# bench/common.sh - sourced by the bench/*/run.sh scripts (bash).
#
#   SGC_BENCH_WORK   scratch folder for built helpers and big files
#                    (default /tmp/sgc-bench; never inside the repository)
#   CC               C compiler for the helpers (default: cc)

BENCH_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_WORK=${SGC_BENCH_WORK:-/tmp/sgc-bench}
mkdir -p "$BENCH_WORK/bin"

# build_c OUT SRC... [-- FLAGS...]: compiles C helpers with -O3 -march=native
# unless OUT is newer than every source.
build_c() {
  local out=$1 srcs=() flags=()
  shift
  while (($#)) && [[ $1 != -- ]]; do srcs+=("$1"); shift; done
  [[ ${1:-} == -- ]] && shift
  flags=("$@")
  local stale=0 s
  [[ -x $out ]] || stale=1
  for s in "${srcs[@]}" "$BENCH_SRC/bench/other_load.h"; do [[ $s -nt $out ]] && stale=1; done
  if ((stale)); then
    "${CC:-cc}" -O3 -march=native -std=gnu11 -Wall -o "$out" "${srcs[@]}" \
      "${flags[@]}" -lpthread -lm
  fi
}

# The same-run reference: builds bench/bandwidth/bw.c once.
BW=$BENCH_WORK/bin/bw
build_bw() { build_c "$BW" "$BENCH_SRC/bench/bandwidth/bw.c"; }

# ref_bw THREADS [MIB]: "median-GB/s other-load" of one fresh read-sum
# process (other load: CPUs other processes kept busy, bench/other_load.h).
ref_bw() { "$BW" read-sum "$1" "${2:-1024}" 5 | awk '{ print $4, $6 }'; }

# ref_case OUT THREADS: ref_bw on THREADS as KEY=VALUE lines (ref_gbs,
# other_load) into OUT, as a harness writes its own.
ref_case() {
  local g o
  read -r g o < <(ref_bw "$2")
  printf 'ref_gbs=%s\nother_load=%s\n' "$g" "$o" >"$1"
}

# record_case OUT RESULTS FIELD...: OUT's KEY=VALUE lines appended to
# RESULTS as "FIELD... KEY VALUE" (spaces in VALUE become _).
record_case() {
  local out=$1 results=$2 k v
  shift 2
  sed -n 's/^\([a-z_0-9]*\)=\(.*\)$/\1 \2/p' "$out" |
    while read -r k v; do echo "$* $k ${v// /_}"; done >>"$results"
}

# The same-run compute ceiling: builds bench/fma/fma.c once.
FMA=$BENCH_WORK/bin/fma
build_fma() { build_c "$FMA" "$BENCH_SRC/bench/fma/fma.c"; }

# ref_fma THREADS: "median-GFLOP/s other-load" of one fresh f32 FMA-peak
# process (20 M iterations x 12 chains a thread and rep, 5 reps).
ref_fma() { "$FMA" "$1" 20 5 | awk '{ print $4, $6 }'; }

# ref_dot THREADS: the same for vdpbf16ps (the bf16 tiles' ceiling); fails
# (exit 3) where -march=native has no AVX512-BF16.
ref_dot() { "$FMA" "$1" 20 5 dot | awk '{ print $4, $6 }'; }

# Whether this host's -march=native has AVX512-BF16 (vdpbf16ps).
host_has_bf16_dot() { grep -qw avx512_bf16 /proc/cpuinfo; }

# stats [FMT]: reads numbers (one a line) and prints "min/med/max" with FMT
# (default %.1f; the median of an even count is the mean of the middle two).
stats() {
  sort -g | awk -v f="${1:-%.1f}" '{ v[NR] = $1 }
    END {
      if (NR == 0) { print "-"; exit }
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf f "/" f "/" f "\n", v[1], m, v[NR]
    }'
}

# median: reads numbers, prints the median (%.4g).
median() {
  sort -g | awk '{ v[NR] = $1 }
    END {
      if (NR == 0) { print "nan"; exit }
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "%.4g\n", m
    }'
}

# pct_stats: reads ratios (0.93 = 93 %), prints "93 % (88-97)":
# median and range over rounds.
pct_stats() {
  sort -g | awk '{ v[NR] = $1 * 100 }
    END {
      if (NR == 0) { print "-"; exit }
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "%.0f %% (%.0f-%.0f)\n", m, v[1], v[NR]
    }'
}

# machine_note: one line describing the machine and its load right now.
machine_note() {
  local model cpus load
  model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
  cpus=$(nproc)
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "machine: $model ($(host_family)), $cpus CPUs, load average $load, $(date -u '+%Y-%m-%d %H:%M UTC')"
}

# host_family: "AuthenticAMD family 19h model 11h, znver4: avx2 avx512f ...":
# the CPU's vendor, family and model (what the runtime's per-host choices
# key on, runtime/src/cpu/host_tuning.cc), LLVM's name for it (sgc's host
# variant) and the vector ISA extensions the kernels use where present.
host_family() {
  local vendor family model cpu isa f
  vendor=$(sed -n 's/^vendor_id\s*: //p' /proc/cpuinfo | head -1)
  family=$(sed -n 's/^cpu family\s*: //p' /proc/cpuinfo | head -1)
  model=$(sed -n 's/^model\s*: //p' /proc/cpuinfo | head -1)
  cpu=$(clang-22 -march=native -### -c -x c /dev/null 2>&1 |
    grep -o '"-target-cpu" "[^"]*"' | cut -d'"' -f4)
  isa=""
  for f in avx2 fma avx512f avx512bw avx512_vnni avx512_bf16 avx512_fp16 amx_bf16; do
    grep -qw "$f" /proc/cpuinfo && isa="$isa $f"
  done
  printf '%s family %xh model %xh, %s:%s\n' "$vendor" "$family" "$model" "${cpu:-unknown}" "$isa"
}


# --- builds (a CMake build directory, `scripts/build` makes build/) ---

# build_source BUILD: the source tree BUILD was configured from.
build_source() { sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$1/CMakeCache.txt"; }

# build_runtime_libs BUILD: the static libraries a runtime client links, in
# link order.
build_runtime_libs() {
  echo "$1/runtime/libsgc_runtime.a $1/lib/libsgc_safetensors.a $1/lib/libsgc_gguf.a $1/lib/libsgc_sentencepiece.a $1/lib/libsgc_support.a"
}

# build_revision BUILD: "<commit> <subject>" of BUILD's source tree, with
# "+ uncommitted changes" when tracked files differ from it, and a warning
# when ninja would rebuild sgc or the runtime there: the binaries then
# predate the tree and the revision only bounds what they were built from.
build_revision() {
  local src rev note="" targets
  src=$(build_source "$1")
  rev=$(git -C "$src" log -1 --format='%h %s' 2>/dev/null | cut -c1-72) || rev="(not a git tree)"
  git -C "$src" diff --quiet HEAD -- 2>/dev/null || note=" + uncommitted changes"
  targets=(bin/sgc runtime/libsgc_runtime.a lib/libsgc_safetensors.a lib/libsgc_gguf.a lib/libsgc_sentencepiece.a lib/libsgc_support.a)
  if command -v ninja >/dev/null && [[ -f $1/build.ninja ]] &&
    ! ninja -C "$1" -n "${targets[@]}" 2>/dev/null | grep -q 'no work to do'; then
    note+="; WARNING: out of date with $src (ninja would rebuild)"
  fi
  echo "$rev$note"
}

# build_sgc_decode BUILD OUT: links bench/b1/sgc_decode.c against BUILD's
# runtime and the sgc/runtime.h of BUILD's source tree, unless OUT is newer
# than all of them. Waits up to a minute for libraries being rebuilt.
build_sgc_decode() { build_sgc_client "$1" "$2" "$BENCH_SRC/bench/b1/sgc_decode.c"; }

# build_sgc_client BUILD OUT SRC: the same for another C client of the
# runtime's API.
build_sgc_client() {
  local build=$1 out=$2 client=$3 src libs l try ok stale=0
  src=$(build_source "$build")
  read -r -a libs <<<"$(build_runtime_libs "$build")"
  for ((try = 0; try < 12; ++try)); do
    ok=1
    for l in "${libs[@]}"; do [[ -f $l ]] || ok=0; done
    ((ok)) && break
    sleep 5
  done
  for l in "${libs[@]}"; do
    [[ -f $l ]] || { echo "error: $l is missing: build the runtime in $build" >&2; return 1; }
  done
  [[ -x $out ]] || stale=1
  for l in "${libs[@]}" "$client" "$BENCH_SRC/bench/other_load.h" \
    "$src"/runtime/include/sgc/*.h "$src"/runtime/include/sgc/runtime/*.h; do
    [[ $l -nt $out ]] && stale=1
  done
  if ((stale)); then
    local api=()
    grep -rq 'sgc_session_cpu_variant' "$src/runtime/include/sgc" &&
      api=(-DSGC_RUNTIME_CPU_VARIANT_API)
    grep -rq 'sgc_weights_placement_t' "$src/runtime/include/sgc" &&
      api+=(-DSGC_RUNTIME_WEIGHTS_PLACEMENT_API)
    "${CC:-cc}" -O2 -std=gnu11 -Wall -I "$src/runtime/include" "${api[@]}" \
      -c "$client" -o "$out.o"
    # Runtimes with tokenizers read tokenizer.model through libsentencepiece.
    local extra=()
    grep -rq 'sgc_tokenizer_open' "$src/runtime/include/sgc" && extra=(-lsentencepiece)
    # Runtimes with images decode through libpng and libjpeg.
    grep -rq 'sgc_image_load' "$src/runtime/include/sgc" && extra+=(-lpng -ljpeg)
    # Runtimes with the CUDA kernel emulator (--device cuda-emu) run it on
    # Boost.Context fibers (libsgc_support again after it: static order).
    [[ -f $build/runtime/libsgc_cuda_emu.a ]] &&
      extra=("$build/runtime/libsgc_cuda_emu.a" "$build/lib/libsgc_support.a" "${extra[@]}" -lboost_context)
    "${CXX:-c++}" -o "$out" "$out.o" "${libs[@]}" "${extra[@]}" -ldl -lpthread -static-libstdc++
    rm -f "$out.o"
  fi
}


# --- the B1 model and its peers ---

# b1_so SGC_BUILD B1_DIR DTYPE: path of the B1 model compiled by
# SGC_BUILD/bin/sgc with --compute-dtype=DTYPE, compiled unless newer than
# both.
b1_so() {
  local so=$BENCH_WORK/b1/b1-$3.so
  mkdir -p "$BENCH_WORK/b1"
  if [[ ! $so -nt $1/bin/sgc || ! $so -nt $2/system_graph.json ]]; then
    "$1/bin/sgc" compile "$2/system_graph.json" --target=cpu --compute-dtype="$3" -o "$so" >&2
  fi
  echo "$so"
}

# b1_decoder_params B1_DIR: weights of the decoder's matrices (every 2-D
# tensor of a layer: q, k, v, o, gate, up, down), from the checkpoint's
# header. Embedding and LM head excluded; prefill FLOP/token = 2 x this.
b1_decoder_params() {
  python3 - "$1/model.safetensors" <<'PY'
import json, math, struct, sys
with open(sys.argv[1], "rb") as f:
    h = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
print(sum(math.prod(t["shape"]) for k, t in h.items()
          if ".layers." in k and len(t.get("shape", ())) == 2))
PY
}

# llama.cpp, the CPU peer (bench/llamacpp/setup.sh builds it there).
LLAMA=$BENCH_WORK/llamacpp
LLAMA_NOT_BUILT="not built (run bench/llamacpp/setup.sh)"
llama_built() { [[ -x $LLAMA/bin/llama-bench && -x $LLAMA/bin/llama-completion ]]; }
# llama_version: "llama-cpp-python X (llama.cpp <commit>)".
llama_version() {
  echo "llama-cpp-python $(cat "$LLAMA/VERSION" 2>/dev/null || echo '?')" \
    "(vendored llama.cpp, commit $("$LLAMA/bin/llama-bench" --version 2>&1 |
      sed -n 's/^version: .*commit \([0-9a-f]*\).*/\1/p' | head -1))"
}

# llama_bench_case OUT LOG ARGS...: one llama-bench process (ARGS: -m FILE and
# the test, e.g. -p 0 -n 64 -t 1 -r 3) as the key=value lines the bench
# scripts read (parse_bench.py) plus other_load, in OUT; its stderr in LOG,
# shown when it fails.
llama_bench_case() {
  local out=$1 log=$2
  shift 2
  timed_run "$out.json" "$LLAMA/bin/llama-bench" "$@" -o json 2>"$log" ||
    { cat "$log" >&2; return 1; }
  sed -n '/^\[/,/^\]/p' "$out.json" | python3 "$BENCH_SRC/bench/llamacpp/parse_bench.py" >"$out"
  grep '^other_load=' "$out.json" >>"$out"
  rm -f "$out.json"
}

# quantize_gguf SRC ENC OUT LOG: llama-quantize SRC into OUT as ENC unless OUT
# is newer than SRC; its output in LOG, the end of it shown when it fails.
quantize_gguf() {
  [[ $3 -nt $1 ]] && return 0
  "$LLAMA/bin/llama-quantize" "$1" "$3" "$2" >"$4" 2>&1 || { tail -20 "$4" >&2; return 1; }
}

# times_stats: reads ratios, prints "1.05x (1.04-1.07)": median and range.
times_stats() {
  sort -g | awk '{ v[NR] = $1 }
    END {
      if (NR == 0) { print "-"; exit }
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "%.2fx (%.2f-%.2f)\n", m, v[1], v[NR]
    }'
}

# result_value RESULTS ROUND IMPL ENC THREADS KEY: that line's VALUE.
result_value() {
  awk -v r=$2 -v i=$3 -v d=$4 -v t=$5 -v k=$6 \
    '$1 == r && $2 == i && $3 == d && $4 == t && $5 == k { print $6 }' "$1"
}

# decode_table RESULTS ROUNDS PROMPT STEPS ENC...: the decode table of
# bench/b1/quant.sh and bench/b8/run.sh from RESULTS lines "ROUND IMPL ENC
# THREADS KEY VALUE" (impl sgc, llama and ref; sgc's weight_bytes and
# kv_bytes_per_token from round 0): per encoding and 1 and 2 threads, tok/s
# (median over rounds), sgc's time over llama.cpp's, and tok/s over the
# round's read-sum ceiling at the bytes a token reads (the weights + the KV
# cache at the mean timed position after PROMPT tokens and STEPS steps).
decode_table() {
  local results=$1 rounds=$2 prompt=$3 steps=$4 enc t impl r bt tok pct xl
  shift 4
  local fmt='| %-5s | %-3s | %-9s | %-10s | %-6s | %-18s | %-18s |\n'
  printf "$fmt" file thr "MB/token" impl "tok/s" "x llama.cpp" "% of ceiling"
  printf '|%s|%s|%s|%s|%s|%s|%s|\n' ------- ----- ----------- ------------ -------- \
    -------------------- --------------------
  for enc in "$@"; do
    bt=$(awk -v w="$(result_value "$results" 0 sgc $enc 1 weight_bytes)" \
      -v kv="$(result_value "$results" 0 sgc $enc 1 kv_bytes_per_token)" -v p=$prompt \
      -v s=$steps 'BEGIN { printf "%.0f", w + kv * (p + 1 + s / 2) }')
    for t in 1 2; do
      for impl in sgc llama; do
        tok=$(for ((r = 0; r < rounds; ++r)); do
          result_value "$results" $r $impl $enc $t decode_ms_median
        done | awk '{ print 1000 / $1 }' | median)
        pct=$(for ((r = 0; r < rounds; ++r)); do
          awk -v m="$(result_value "$results" $r $impl $enc $t decode_ms_median)" \
            -v g="$(result_value "$results" $r ref - $t ref_gbs)" -v b="$bt" \
            'BEGIN { print (1000 / m) / (g * 1e9 / b) }'
        done | pct_stats)
        xl=""
        [[ $impl == sgc ]] && xl=$(for ((r = 0; r < rounds; ++r)); do
          awk -v m="$(result_value "$results" $r sgc $enc $t decode_ms_median)" \
            -v p="$(result_value "$results" $r llama $enc $t decode_ms_median)" 'BEGIN { print p / m }'
        done | times_stats)
        printf "$fmt" $enc $t "$(awk -v b="$bt" 'BEGIN { printf "%.1f", b / 1e6 }')" \
          "$([[ $impl == sgc ]] && echo sgc || echo llama.cpp)" "$(printf %.1f "$tok")" "$xl" "$pct"
      done
    done
  done
}

# proc_busy: "busy total" ticks of /proc/stat, all CPUs (see other_load.h).
proc_busy() { awk '/^cpu / { t = 0; for (i = 2; i <= 11; ++i) t += $i; print t - $5 - $6, t; exit }' /proc/stat; }

# timed_run OUT CMD...: runs CMD with stdout to OUT and appends to OUT
# "wall_s=" (wall time of the process, fork to exit) and "other_load="
# (CPUs other processes kept busy meanwhile: busy CPUs minus the process's
# own user + sys time, over the wall time; other_load.h for peers that do
# not report it themselves). Fails when CMD does.
timed_run() {
  local out=$1 b0 t0 b1 t1 w0 w1 cpu tf
  shift
  tf=$(mktemp)
  read -r b0 t0 < <(proc_busy)
  w0=$(date +%s%N)
  if ! /usr/bin/time -f '%U %S' -o "$tf" "$@" >"$out"; then
    rm -f "$tf"
    return 1
  fi
  w1=$(date +%s%N)
  read -r b1 t1 < <(proc_busy)
  cpu=$(tail -1 "$tf" | awk '{ print $1 + $2 }')
  rm -f "$tf"
  awk -v w0="$w0" -v w1="$w1" -v b0="$b0" -v t0="$t0" -v b1="$b1" -v t1="$t1" \
    -v cpu="$cpu" -v n="$(nproc)" 'BEGIN {
      wall = (w1 - w0) / 1e9
      busy = (t1 > t0) ? (b1 - b0) / (t1 - t0) * n : 0
      o = (wall > 0) ? busy - cpu / wall : 0
      printf "wall_s=%.4f\nother_load=%.2f\n", wall, (o > 0) ? o : 0 }' >>"$out"
}
