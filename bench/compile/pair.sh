#!/usr/bin/env bash
# bench/compile/pair.sh OLD_BUILD NEW_BUILD [RUNS] - B3 of two builds in one
# run, for "not slower": each seed graph compiled by OLD_BUILD/bin/sgc and
# NEW_BUILD/bin/sgc in alternation, RUNS times each (default 5), for each
# target of $TARGETS (default as run.sh). Prints, per seed@target, the mean
# and median CPU seconds (user + sys) and median wall seconds of each build
# and the new/old ratio of the mean CPU seconds. Alternating compile by
# compile keeps the host's drift out of the ratio, which two separate run.sh
# runs do not (their noise was as large as a 10 % effect). OLD_NAME and
# NEW_NAME label the columns (default: the folders). ~1 min a seed@target.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
[[ $# -ge 2 ]] || { echo "usage: $0 OLD_BUILD NEW_BUILD [RUNS]" >&2; exit 2; }
OLD=$(cd "$1" && pwd)/bin/sgc
NEW=$(cd "$2" && pwd)/bin/sgc
RUNS=${3:-5}
OLD_NAME=${OLD_NAME:-$1}
NEW_NAME=${NEW_NAME:-$2}
W=$BENCH_WORK/compile-pair
mkdir -p "$W"
source "$(dirname "${BASH_SOURCE[0]}")/seeds.sh"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((r = 0; r < RUNS; ++r)); do
  for seed in "${seeds[@]}"; do
    for target in "${targets[@]}"; do
      name=$(basename "$seed" .system_graph.json)@$target
      for side in old new; do
        sgc=$OLD
        [[ $side == new ]] && sgc=$NEW
        /usr/bin/time -f "%e %U %S" -o "$W/time.txt" \
          "$sgc" compile "$seed" --target="$target" -o "$W/$side.so"
        read -r wall user sys <"$W/time.txt"
        echo "$name $side $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" >>"$results"
      done
    done
  done
done

machine_note
echo "old: $OLD_NAME; new: $NEW_NAME; $RUNS compiles each, alternated"
fmt='| %-29s | %-22s | %-22s | %-9s |\n'
printf "$fmt" "seed@target" "old CPU s mean/median" "new CPU s mean/median" "new/old"
printf '|%s|%s|%s|%s|\n' ------------------------------- ------------------------ \
  ------------------------ -----------
mean() { awk '{ s += $1 } END { printf "%.2f", s / NR }'; }
for seed in "${seeds[@]}"; do
  for target in "${targets[@]}"; do
    name=$(basename "$seed" .system_graph.json)@$target
    cpu() { awk -v n="$name" -v s="$1" '$1 == n && $2 == s { print $4 }' "$results"; }
    old_mean=$(cpu old | mean)
    new_mean=$(cpu new | mean)
    printf "$fmt" "$name" "$old_mean / $(cpu old | median)" "$new_mean / $(cpu new | median)" \
      "$(awk -v a="$new_mean" -v b="$old_mean" 'BEGIN { printf "%.3f", a / b }')"
  done
done
