#!/usr/bin/env bash
# bench/gemv/run.sh [ROUNDS] [BUILD_DIR] - every decode GEMV shape of the
# ~270M B1 model (PERFORMANCE.md), as sgc emits it, cold (CPU.md §2.1); and
# the seeds' decode shapes with Q4_0 weights (sgc's kernels only: the C
# variants read bf16).
#
# Builds one sg module with an `sg.linear` per distinct shape, lowers it with
# `sgc compile --compile-to=codegen`, translates it (mlir-translate-22) and
# compiles it with clang-22 -O3 -march=native into a .so, then runs
# gemv_bench.c on it: the sgc kernels ("sgc"), a hand-written C kernel of
# the same structure ("c-fma", exact widening + FMA, 1 row at a time) and
# the same with a software prefetch 1 KiB ahead in the weight stream
# ("c-fma-pf"), on 1 and 2 threads. Each round runs the 1- and 2-thread
# read-sum reference (bench/bandwidth/bw.c) and the six variant x thread
# processes, in an order
# rotated each round; every process measures all shapes (1 GiB warm-up, 5
# reps of >= 1 GiB, it reports the median).
#
# Table: GB/s min/median/max over rounds; % = median (range) over rounds of
# GB/s / same-round read-sum GB/s (1 thread: of the 1-thread read-sum; 2
# threads: of the 2-thread read-sum, and of the 1-thread one). Target
# (CPU.md §6): >= 80 % of 1-thread read bandwidth on 1 thread. The last
# rows combine the shapes into one decode step's GEMVs (18 layers x q,k,v,o,
# gate,up,down + the LM head): bytes / sum of per-shape times. "other": the
# median CPUs other processes kept busy during the timed reps, 1t/2t runs
# (bench/other_load.h); 2-thread figures with other load near 1 measured the
# neighbours. ~40 s a round.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-3}
BUILD=$(cd "${2:-$BENCH_SRC/build}" && pwd)
SGC=$BUILD/bin/sgc
W=$BENCH_WORK/gemv
mkdir -p "$W"

# name count N K: the decode GEMVs of one token (k and v share a shape, as do
# gate and up; both are listed once with their combined count).
SHAPES=(
  "q 18 1024 640"
  "k,v 36 256 640"
  "o 18 640 1024"
  "gate,up 36 2048 640"
  "down 18 640 2048"
  "lm_head 1 262144 640"
)

# The seeds' decode GEMVs at Q4_0 (issue 28: Google's QAT files), sgc only:
# gemma-3-12b-it's q, k/v, o, gate/up, down, gemma-4-31B-it's gate/up,
# down and B8's (bench/b8) gate/up, down. Not part of the B1 mix below.
Q4_SHAPES=(
  "g3-q 4096 3840"
  "g3-k,v 2048 3840"
  "g3-o 3840 4096"
  "g3-gate,up 15360 3840"
  "g3-down 3840 15360"
  "g4-gate,up 21504 5376"
  "g4-down 5376 21504"
  "b8-gate,up 10240 2560"
  "b8-down 2560 10240"
)

# --- the kernels, as sgc lowers them ---
gemv_func() { # NAME N K WEIGHT_ELEMENT
  echo "func.func @gemv_$1(%x: tensor<1x$3xbf16>, %w: tensor<$2x$3x$4>) -> tensor<1x$2xbf16> {"
  echo "  %y = sg.linear %x, %w : (tensor<1x$3xbf16>, tensor<$2x$3x$4>) -> tensor<1x$2xbf16>"
  echo "  return %y : tensor<1x$2xbf16>"
  echo "}"
}
{
  for s in "${SHAPES[@]}"; do
    set -- $s
    gemv_func "$3x$4" $3 $4 bf16
  done
  for s in "${Q4_SHAPES[@]}"; do
    set -- $s
    gemv_func "q4_$2x$3" $2 $3 '!sg.quant<"Q4_0">'
  done
} >"$W/gemv.mlir"
"$SGC" compile "$W/gemv.mlir" --compile-to=codegen -o "$W/gemv.llvm.mlir"
# The row kernels' signatures (name, x and y element types) from the IR
# before LLVM lowering: func.func @sgc_linear_...(memref<?xKxXT>,
# memref<NxKxbf16>, memref<?xNxYT>, index, index), or with the bf16 copy of
# the rows after the f32 one (the bf16 dot kernels: XT "dot").
"$SGC" compile "$W/gemv.mlir" --compile-to=lower -o "$W/gemv.lower.mlir"
kernel_specs=$(sed -n \
  -e 's/^ *func\.func @\(sgc_linear_\([0-9]*x[0-9]*\)_[A-Za-z0-9_]*\)(%[a-z0-9]*: memref<?x[0-9]*xf32>, %[a-z0-9]*: memref<?x[0-9]*xbf16>, %[a-z0-9]*: memref<[0-9]*x[0-9]*xbf16>, %[a-z0-9]*: memref<?x[0-9]*x\([a-z0-9]*\)>, %[a-z0-9]*: index, %[a-z0-9]*: index).*/\2:_mlir_ciface_\1:dot:\3/p' \
  -e 's/^ *func\.func @\(sgc_linear_\([0-9]*x[0-9]*\)_[A-Za-z0-9_]*\)(%[a-z0-9]*: memref<?x[0-9]*x\([a-z0-9]*\)>, %[a-z0-9]*: memref<[0-9]*x[0-9]*xbf16>, %[a-z0-9]*: memref<?x[0-9]*x\([a-z0-9]*\)>, %[a-z0-9]*: index, %[a-z0-9]*: index).*/\2:_mlir_ciface_\1:\3:\4/p' \
  "$W/gemv.lower.mlir")
# Q4_0 kernels (the dot form, with the int8 rows' activations after xb
# where the kernel has them: XT "dot8"): memref<NxBYTESxi8> weights.
q4_specs=$(sed -n \
  -e 's/^ *func\.func @\(sgc_linear_\([0-9]*x[0-9]*\)_q4_0_[A-Za-z0-9_]*\)(%[a-z0-9]*: memref<?x[0-9]*xf32>, %[a-z0-9]*: memref<?x[0-9]*xbf16>, %[a-z0-9]*: memref<?x[0-9]*xi8>, %[a-z0-9]*: memref<[0-9]*x[0-9]*xi8>, %[a-z0-9]*: memref<?x[0-9]*x\([a-z0-9]*\)>, %[a-z0-9]*: index, %[a-z0-9]*: index).*/\2:_mlir_ciface_\1:dot8:\3:q4_0/p' \
  -e 's/^ *func\.func @\(sgc_linear_\([0-9]*x[0-9]*\)_q4_0_[A-Za-z0-9_]*\)(%[a-z0-9]*: memref<?x[0-9]*xf32>, %[a-z0-9]*: memref<?x[0-9]*xbf16>, %[a-z0-9]*: memref<[0-9]*x[0-9]*xi8>, %[a-z0-9]*: memref<?x[0-9]*x\([a-z0-9]*\)>, %[a-z0-9]*: index, %[a-z0-9]*: index).*/\2:_mlir_ciface_\1:dot:\3:q4_0/p' \
  "$W/gemv.lower.mlir")
mlir-translate-22 --mlir-to-llvmir "$W/gemv.llvm.mlir" -o "$W/gemv.ll"
# The generated wrappers call a per-shape dispatcher the model glue defines;
# the harness calls the row kernels directly, so stub the dispatchers.
grep -o '_mlir_ciface_sgc_dispatch_[A-Za-z0-9_]*' "$W/gemv.ll" | sort -u |
  sed 's/.*/void &(void *x, void *w, void *y) { (void)x; (void)w; (void)y; __builtin_trap(); }/' \
    >"$W/stubs.c"
# The bf16 pair rows' prefetch distance, which the runtime sets for its host
# (runtime/src/cpu/host_tuning.cc): SGC_ROW_PREFETCH_BYTES as the runtime
# reads it, else the compiled default.
echo "long long sgc_cpu_row_prefetch_bytes = ${SGC_ROW_PREFETCH_BYTES:-4096};" >>"$W/stubs.c"
# The bf16 tiles' instruction (the runtime probes it): decode never tiles.
echo "long long sgc_cpu_bf16_on_fma = 0;" >>"$W/stubs.c"
# The per-variant flag, defined as the object emitter defines it: an
# internal constant, 1 where this host has AVX512-BF16 (clang compiles for
# -march=native), so the branch folds and a host without it never sees the
# instruction (an external flag left vdpbf16ps for LLVM to select on znver3).
dot=0
grep -qw avx512_bf16 /proc/cpuinfo && dot=1
sed -i "s/^@sgc_cpu_bf16_dot = external constant i8\$/@sgc_cpu_bf16_dot = internal constant i8 $dot/" "$W/gemv.ll"
grep -q "^@sgc_cpu_bf16_dot = internal constant i8 $dot\$" "$W/gemv.ll" ||
  { echo "error: no @sgc_cpu_bf16_dot declaration to define in $W/gemv.ll" >&2; exit 1; }
# The int8 rows' flag likewise: 1 where this host has AVX512-VNNI (and BW).
int8=0
grep -qw avx512_vnni /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && int8=1
sed -i "s/^@sgc_cpu_int8_dot = external constant i8\$/@sgc_cpu_int8_dot = internal constant i8 $int8/" "$W/gemv.ll"
# Where the 4-bit rows prefetch, as the object emitter sets it: L2 (0) on
# AMD Zen, L1 (1) elsewhere.
l1=1
grep -q AuthenticAMD /proc/cpuinfo && l1=0
sed -i "s/^@sgc_cpu_prefetch_to_l1 = external constant i8\$/@sgc_cpu_prefetch_to_l1 = internal constant i8 $l1/" "$W/gemv.ll"
clang-22 -O3 -march=native -fPIC -shared -Wno-override-module \
  -o "$W/libsgc_gemv.so" "$W/gemv.ll" "$W/stubs.c"
build_c "$BENCH_WORK/bin/gemv_bench" "$BENCH_SRC/bench/gemv/gemv_bench.c" -- -ldl
build_bw

shape_args=()
for s in "${SHAPES[@]}"; do
  set -- $s
  spec=$(grep -m1 "^$3x$4:" <<<"$kernel_specs" || true)
  if [[ -z $spec ]]; then
    echo "error: no sgc_linear kernel for $3x$4 in $W/gemv.lower.mlir" >&2
    exit 1
  fi
  shape_args+=("$spec")
done
q4_args=()
for s in "${Q4_SHAPES[@]}"; do
  set -- $s
  spec=$(grep -m1 "^$2x$3:" <<<"$q4_specs" || true)
  [[ -n $spec ]] || { echo "error: no Q4_0 sgc_linear kernel for $2x$3 in $W/gemv.lower.mlir" >&2; exit 1; }
  q4_args+=("$spec")
done

results=$(mktemp)
trap 'rm -f "$results"' EXIT
cases=("ref 1" "ref 2" "sgc 1" "sgc 2" "c-fma 1" "c-fma 2" "c-fma-pf 1" "c-fma-pf 2" "sgc-q4 1"
  "sgc-q4 2")
n=${#cases[@]}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < ROUNDS; ++r)); do
  for ((i = 0; i < n; ++i)); do
    set -- ${cases[$(((i + r) % n))]}
    if [[ $1 == ref ]]; then
      read -r g o < <(ref_bw "$2")
      echo "$r ref $2 - 0 $g 0 0 $o" >>"$results"
    elif [[ $1 == sgc-q4 ]]; then
      "$BENCH_WORK/bin/gemv_bench" "$W/libsgc_gemv.so" sgc "$2" "${q4_args[@]}" |
        awk -v r=$r '{ print r, $2, $3, $1, $4, $5, $6, $7, $8 }' >>"$results"
    else
      "$BENCH_WORK/bin/gemv_bench" "$W/libsgc_gemv.so" "$1" "$2" "${shape_args[@]}" |
        awk -v r=$r '{ print r, $2, $3, $1, $4, $5, $6, $7, $8 }' >>"$results"
    fi
  done
done
# results: round variant threads shape min med max err other-load

# The decode-step mix, per round and variant/threads: bytes / sum of times.
mix=$(printf '%s\n' "${SHAPES[@]}" | awk '
    NR == FNR { cnt[$3 "x" $4] = $2; bytes[$3 "x" $4] = $3 * $4 * 2; next }
    $2 != "ref" && ($4 in cnt) {
      k = $1 " " $2 " " $3; t[k] += cnt[$4] * bytes[$4] / ($6 * 1e9); b[k] += cnt[$4] * bytes[$4]
      o[k] += $9; n[k]++
    }
    END { for (k in t) print k, "mix", 0, b[k] / t[k] / 1e9, 0, 0, o[k] / n[k], b[k], t[k] }' - "$results")
echo "$mix" >>"$results"

col() { # variant threads shape -> GB/s stats over rounds
  awk -v v=$1 -v t=$2 -v s=$3 '$2 == v && $3 == t && $4 == s { print $6 }' "$results" | stats
}
pct() { # variant threads shape ref_threads -> % of the same-round reference
  awk -v v=$1 -v t=$2 -v s=$3 -v rt=$4 '
    $2 == "ref" && $3 == rt { ref[$1] = $6 }
    $2 == v && $3 == t && $4 == s { x[$1] = $6 }
    END { for (r in x) if (ref[r] > 0) print x[r] / ref[r] }' "$results" | pct_stats
}
other() { # variant shape -> "1t/2t" median other load over rounds
  local t a=()
  for t in 1 2; do
    a+=("$(awk -v v=$1 -v t=$t -v s=$2 '$2 == v && $3 == t && $4 == s { print $9 }' "$results" |
      median | xargs printf %.1f)")
  done
  echo "${a[0]}/${a[1]}"
}
maxerr() {
  awk -v v=$1 -v s=$2 '$2 == v && $4 == s && $8 > m { m = $8 } END { printf "%.0e", m }' "$results"
}

machine_note
echo "load average before/after the run: $load_before / $(cut -d' ' -f1-3 /proc/loadavg)"
sgc_types=$(cut -d: -f3,4 <<<"$kernel_specs" | sort -u | sed 's/\(.*\):\(.*\)/x \1, y \2/' | paste -sd';')
echo "GEMV, cold weights (1 GiB pool, round-robin), bf16 W; sgc: $sgc_types, bf16 rows prefetch ${SGC_ROW_PREFETCH_BYTES:-4096} B ahead; c-fma(-pf): x f32, y bf16;" \
  "$ROUNDS rounds, fresh processes"
fmt='| %-18s | %-8s | %-14s | %-13s | %-14s | %-13s | %-15s | %-5s | %-7s |\n'
printf "$fmt" "shape (N x K)" variant "1t GB/s" "1t % read-1t" "2t GB/s" "2t % read-2t" "2t % read-1t" \
  err "other"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' -------------------- ---------- ---------------- \
  --------------- ---------------- --------------- ----------------- ------- ---------
printf "$fmt" "read-sum (ref)" "" "$(col ref 1 -)" "100 %" "$(col ref 2 -)" "100 %" \
  "$(pct ref 2 - 1)" "" "$(other ref -)"
for s in "${SHAPES[@]}" "mix 0 0 0"; do
  set -- $s
  shape=$3x$4
  label="$1 $shape"
  if [[ $1 == mix ]]; then
    shape=mix
    label="decode-step mix"
  fi
  for v in sgc c-fma c-fma-pf; do
    e=$(maxerr $v $shape)
    [[ $shape == mix ]] && e=""
    printf "$fmt" "$label" "$v" "$(col $v 1 $shape)" "$(pct $v 1 $shape 1)" \
      "$(col $v 2 $shape)" "$(pct $v 2 $shape 2)" "$(pct $v 2 $shape 1)" "$e" "$(other $v $shape)"
  done
done
echo
echo "Q4_0 (ggml blocks, 18 B a 32 weights) at the seeds' decode shapes, sgc only; GB/s of the blocks' bytes"
qfmt='| %-24s | %-14s | %-13s | %-14s | %-13s | %-5s |\n'
printf "$qfmt" "shape (N x K)" "1t GB/s" "1t % read-1t" "2t GB/s" "2t % read-2t" err
printf '|%s|%s|%s|%s|%s|%s|\n' -------------------------- ---------------- --------------- \
  ---------------- --------------- -------
for s in "${Q4_SHAPES[@]}"; do
  set -- $s
  shape=$2x$3-q4_0
  printf "$qfmt" "$1 $2x$3" "$(col sgc 1 $shape)" "$(pct sgc 1 $shape 1)" "$(col sgc 2 $shape)" \
    "$(pct sgc 2 $shape 2)" "$(maxerr sgc $shape)"
done
# GEMV-only decode rate of the mix (tok/s = 1 / sum of times), for scale.
awk '$4 == "mix" { print $2, $3, 1 / $11 }' "$results" | sort | awk '
  { k = $1 " " $2 " thread(s)"; v[k] = v[k] " " sprintf("%.0f", $3) }
  END { for (k in v) print "GEMV-only decode step, " k ": tok/s per round:" v[k] }' | sort
