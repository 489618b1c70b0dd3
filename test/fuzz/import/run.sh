#!/usr/bin/env bash
# Builds the libFuzzer target of the JSON front end (parseSystemGraph and the
# family tensor tables) with clang-22 under ASan + UBSan and runs it for a
# fixed number of inputs (or SGC_FUZZ_SECONDS, default 120, whichever ends
# first), seeded with the seed graphs and the importer's
# lit inputs (test/Import/Inputs). Exits non-zero on a crash, a sanitizer
# report, a hang (-timeout), or a broken diagnostic contract (a rejected
# input with other than exactly one error).
#
# usage: test/fuzz/import/run.sh BUILD_DIR [RUNS]     (RUNS defaults to 100000)
# Writes BUILD_DIR/fuzz/import/{fuzz-import,corpus/,*.log}; the source tree
# is read only. The production code is compiled exactly as it is: no
# exceptions, no RTTI, like the MLIR-side targets.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [RUNS]" >&2
  exit 2
fi
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=$(cd "$1" && pwd)
RUNS=${2:-100000}
OUT=$BUILD/fuzz/import
CXX=${SGC_FUZZ_CXX:-clang++-22}
LLVM_CONFIG=${SGC_LLVM_CONFIG:-llvm-config-22}
LIBDIR=$("$LLVM_CONFIG" --libdir)
INCDIR=$("$LLVM_CONFIG" --includedir)
mkdir -p "$OUT/obj" "$OUT/corpus"

SOURCES=(
  test/fuzz/import/fuzz_import.cpp
  compiler/Import/GraphParser.cpp
  compiler/Import/PerceptionParser.cpp
  compiler/Import/ExecutionParser.cpp
  compiler/Import/JsonReader.cpp
  compiler/Import/JsonPositions.cpp
  compiler/Import/FamilyCompletions.cpp
  compiler/Import/FamilyFacts.cpp
  compiler/Import/TensorTable.cpp
  compiler/Import/Gguf/GgufNames.cpp
)
# nlohmann's internal assertions trap instead of vanishing under NDEBUG
# (which must match libMLIR's release build).
FLAGS=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fno-rtti -fno-exceptions
       -DNDEBUG '-DJSON_ASSERT(x)=((x) ? (void)0 : __builtin_trap())'
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -I"$SRC" -I"$BUILD" -isystem "$INCDIR")

# Compile what changed, two at a time.
objects=()
pids=()
for src in "${SOURCES[@]}"; do
  obj=$OUT/obj/$(basename "${src%.cpp}").o
  objects+=("$obj")
  # Any importer header may change what an object holds.
  stale=0
  for header in "$SRC"/compiler/Import/*.h; do
    if [[ $header -nt $obj ]]; then stale=1; fi
  done
  if [[ ! -f $obj || $SRC/$src -nt $obj || $stale == 1 || $0 -nt $obj ]]; then
    "$CXX" "${FLAGS[@]}" -c "$SRC/$src" -o "$obj" &
    pids+=($!)
    if [[ ${#pids[@]} -ge 2 ]]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
  fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
"$CXX" "${FLAGS[@]}" "${objects[@]}" -o "$OUT/fuzz-import" \
  -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lMLIR -lLLVM

# New inputs go to the build tree's corpus (first directory); the seeds are
# the two seed graphs, the lit inputs and a few hand-written oddities.
rm -rf "$OUT/seeds"
mkdir -p "$OUT/seeds"
cp "$SRC"/examples/*.system_graph.json "$SRC"/test/Import/Inputs/*.json \
  "$SRC"/test/fuzz/import/corpus/* "$OUT/seeds/"
cd "$OUT"
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
./fuzz-import -runs="$RUNS" -max_total_time="${SGC_FUZZ_SECONDS:-120}" -seed=1 -timeout=10 -rss_limit_mb=2048 \
  -max_len=16384 -print_final_stats=1 \
  -dict="$SRC/test/fuzz/import/json.dict" \
  corpus seeds > fuzz.log 2>&1 || {
  status=$?
  tail -n 60 fuzz.log >&2
  echo "error: the import fuzzer failed (exit $status); log: $OUT/fuzz.log" >&2
  exit 1
}
grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done)' fuzz.log || true
echo "import fuzzer: $RUNS runs, no failures"
