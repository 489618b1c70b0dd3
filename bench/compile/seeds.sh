# shellcheck shell=bash
# bench/compile/seeds.sh - sourced by bench/compile/*.sh after common.sh:
# `seeds` (the full seed graphs) and `targets` ($TARGETS, default cpu, and
# cuda:sm_90a where the CUDA toolkit's ptxas is on PATH).
seeds=("$BENCH_SRC"/examples/*.system_graph.json)
default_targets="cpu"
command -v ptxas >/dev/null && default_targets="cpu cuda:sm_90a"
read -r -a targets <<<"${TARGETS:-$default_targets}"
