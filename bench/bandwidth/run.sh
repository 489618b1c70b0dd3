#!/usr/bin/env bash
# bench/bandwidth/run.sh [ROUNDS] - the memory-bandwidth reference (CPU.md §1).
#
# Each round runs read-sum, copy and copy-nt on 1 and 2 threads, every one a
# fresh `bw` process (1 warm-up + 5 timed reps over 1 GiB; it reports the
# median), in an order rotated from round to round. The table gives, per
# kernel and thread count, min/median/max GB/s of the per-process medians,
# and the median (range) over rounds of the ratio to the same round's
# read-sum on the same number of threads. The read-sum 2-thread row's ratio
# is to the 1-thread read-sum (the scaling). The last line gives the "other
# load" (CPUs other processes kept busy during the timed reps,
# bench/other_load.h).
# ~10 s a round.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
ROUNDS=${1:-5}
build_bw

results=$(mktemp)
trap 'rm -f "$results"' EXIT
cases=("read-sum 1" "read-sum 2" "copy 1" "copy 2" "copy-nt 1" "copy-nt 2")
n=${#cases[@]}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < ROUNDS; ++r)); do
  for ((i = 0; i < n; ++i)); do
    c=${cases[$(((i + r) % n))]}
    set -- $c
    "$BW" "$1" "$2" 1024 5 | awk -v r=$r '{ print r, $1, $2, $4, $6 }' >>"$results"
  done
done

machine_note
echo "load average before/after the run: $load_before / $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bandwidth reference: $ROUNDS rounds, fresh processes, 1 GiB per rep, GB/s = 1e9 B/s"
printf '| %-9s | %-18s | %-24s | %-18s | %-26s |\n' kernel "1 thread GB/s" \
  "1t: % of read-sum 1t" "2 threads GB/s" "2t: % of read-sum 2t"
printf '|%s|%s|%s|%s|%s|\n' ----------- -------------------- \
  -------------------------- -------------------- ----------------------------
for k in read-sum copy copy-nt; do
  row=("$k")
  for t in 1 2; do
    row+=("$(awk -v k=$k -v t=$t '$2 == k && $3 == t { print $4 }' "$results" | stats)")
    # Ratio per round to the same round's read-sum (2t read-sum: to 1t).
    rt=$t
    [[ $k == read-sum && $t == 2 ]] && rt=1
    row+=("$(awk -v k=$k -v t=$t -v rt=$rt '
        $2 == "read-sum" && $3 == rt { ref[$1] = $4 }
        $2 == k && $3 == t { v[$1] = $4 }
        END { for (r in v) if (ref[r] > 0) print v[r] / ref[r] }' "$results" | pct_stats)")
  done
  [[ $k == read-sum ]] && row[4]="${row[4]} of 1t"
  printf '| %-9s | %-18s | %-24s | %-18s | %-26s |\n' "${row[@]}"
done
for t in 1 2; do
  echo "other load during the $t-thread runs, CPUs min/med/max: $(awk -v t=$t '$3 == t { print $5 }' "$results" | stats)"
done
