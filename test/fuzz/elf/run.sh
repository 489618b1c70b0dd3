#!/bin/sh
# Runs the ELF-check fuzzer briefly: 100000 mutations (30 s at most) of the
# seeds in WORK_DIR/seeds, new inputs in WORK_DIR/corpus (emptied first),
# crash reproducers in WORK_DIR/artifacts. Exits non-zero on a crash, a
# sanitizer report, a hang or a broken invariant (see elf_fuzzer.cc).
#
# usage: test/fuzz/elf/run.sh FUZZER WORK_DIR [RUNS]
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 FUZZER WORK_DIR [RUNS]" >&2
  exit 2
fi
fuzzer=$1
work=$2
runs=${3:-100000}
cd "$work"
rm -rf corpus
mkdir -p corpus artifacts
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
exec "$fuzzer" -runs="$runs" -max_total_time=30 -seed=1 -timeout=10 \
  -rss_limit_mb=2048 -max_len=32768 -print_final_stats=1 \
  -artifact_prefix=artifacts/ corpus seeds
