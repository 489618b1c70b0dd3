#!/usr/bin/env bash
# bench/llamacpp/setup.sh - builds llama.cpp, the CPU peer of B1/B2/B4
# (PERFORMANCE.md, "Peers"), from the llama-cpp-python source distribution on
# PyPI, which vendors llama.cpp (no git clone, no network once downloaded).
# Idempotent: each step is skipped when its output exists.
#
#   SGC_BENCH_WORK  scratch folder (default /tmp/sgc-bench); everything goes
#                   to $SGC_BENCH_WORK/llamacpp, never into the repository
#   PEER_PY         python with pip (default tools/gen-golden/.venv/bin/python)
#   JOBS            build jobs (default 2); the build runs under nice -n 19
#
# Result: $SGC_BENCH_WORK/llamacpp/bin/{llama-bench,llama-completion,llama-quantize,
# llama-server} (llama-quantize makes the Q4_0 goldens and bench files;
# llama-server is B7's peer) and
# $SGC_BENCH_WORK/llamacpp/src -> the vendored llama.cpp tree (its
# convert_hf_to_gguf.py and gguf-py are what convert.sh uses).
# ~10-15 min on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
# The pinned release; its vendored llama.cpp is the peer the tables name.
LLAMA_CPP_PYTHON_VERSION=0.3.36
PEER_PY=${PEER_PY:-$BENCH_SRC/tools/gen-golden/.venv/bin/python}
JOBS=${JOBS:-2}
L=$BENCH_WORK/llamacpp
mkdir -p "$L/dl"
sdist=$L/dl/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz
if [[ ! -f $sdist ]]; then
  "$PEER_PY" -m pip download "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" \
    --no-binary :all: --no-deps -d "$L/dl"
fi
[[ -f $sdist ]] || { echo "error: pip did not write $sdist" >&2; exit 1; }

src=$L/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp
if [[ ! -f $src/CMakeLists.txt ]]; then
  tar -xzf "$sdist" -C "$L"
fi
[[ -f $src/CMakeLists.txt ]] || { echo "error: no vendor/llama.cpp in $sdist" >&2; exit 1; }
ln -sfn "$src" "$L/src"

# CPU only, the host's ISA (AVX2/FMA/F16C here), no optional downloads.
b=$L/build
# (A build configured before llama-server joined is configured again.)
if [[ ! -f $b/build.ninja ]] || ! grep -q "LLAMA_BUILD_SERVER:BOOL=ON" "$b/CMakeCache.txt"; then
  cmake -S "$src" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_OPENMP=ON -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON \
    -DBUILD_SHARED_LIBS=OFF >"$L/cmake.log" 2>&1 ||
    { tail -30 "$L/cmake.log" >&2; exit 1; }
fi
# The CLI that runs a prompt and exits was llama-cli before it became a chat
# front end; newer trees call it llama-completion.
# (The target list is read whole first: grep -q closing the pipe early would
# fail the pipeline under pipefail and pick the wrong name.)
cli=llama-completion
targets=$(ninja -C "$b" -t targets all 2>/dev/null)
grep -q "^$cli:" <<<"$targets" || cli=llama-cli
nice -n 19 ninja -C "$b" -j"$JOBS" llama-bench "$cli" llama-quantize llama-server \
  llama-perplexity >"$L/build.log" 2>&1 ||
  { tail -30 "$L/build.log" >&2; exit 1; }
mkdir -p "$L/bin"
ln -sf "$b/bin/llama-bench" "$L/bin/llama-bench"
ln -sf "$b/bin/$cli" "$L/bin/llama-completion"
ln -sf "$b/bin/llama-quantize" "$L/bin/llama-quantize"
ln -sf "$b/bin/llama-server" "$L/bin/llama-server"
ln -sf "$b/bin/llama-perplexity" "$L/bin/llama-perplexity"
echo "$LLAMA_CPP_PYTHON_VERSION" >"$L/VERSION"
echo "llama.cpp (llama-cpp-python $LLAMA_CPP_PYTHON_VERSION) built: $L/bin"
