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

# stats: reads numbers (one a line) and prints "min/med/max" with %.1f
# (the median of an even count is the mean of the middle two).
stats() {
  sort -g | awk '{ v[NR] = $1 }
    END {
      if (NR == 0) { print "-"; exit }
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "%.1f/%.1f/%.1f\n", v[1], m, v[NR]
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
  echo "machine: $model, $cpus CPUs, load average $load, $(date -u '+%Y-%m-%d %H:%M UTC')"
}

