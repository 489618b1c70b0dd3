#!/usr/bin/env bash
# bench/open-checkpoint/run.sh [BUILD_DIR] [WORK_DIR]
#
# Writes a synthetic 1 GiB sharded checkpoint, then reports (not a test):
#  - the time to open it (validate every shard header + mmap), min/median/max
#  - resident memory after opening, and after touching every tensor page
#  - /usr/bin/time figures for a whole `sgc-run --inspect-weights` process.
# Targets (issue 4): open <= 0.1 s, RSS < 50 MB until tensors are touched.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-rt}
work=${2:-$build/bench/open-checkpoint}

cmake --build "$build" --target sgc-bench-open-checkpoint sgc-run >/dev/null
tool="$build/bin/sgc-bench-open-checkpoint"
mkdir -p "$work"
if [[ ! -f "$work/ckpt/model.safetensors.index.json" ]]; then
  mkdir -p "$work/ckpt"
  "$tool" generate "$work/ckpt" 1024 4
fi
du -sh "$work/ckpt"
"$tool" measure "$work/ckpt" 7
echo "--- whole process: sgc-run --inspect-weights (output discarded)"
/usr/bin/time -f "wall %e s, max RSS %M KiB" \
  "$build/bin/sgc-run" --inspect-weights "$work/ckpt" >/dev/null
