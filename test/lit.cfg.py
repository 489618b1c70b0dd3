# -*- Python -*-
# lit configuration of the sgc test suite (lit + FileCheck from llvm-22-tools).

import os
import platform

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "SGC"
# An external shell, so tests can check exact exit codes with $?.
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test", ".json"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.sgc_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "unit", "fuzz"]

# FileCheck variables are scoped to a CHECK-LABEL block (STYLE.md habit 4).
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
# Models compile with one-token decode only (sgc compile's default adds the
# batched entries: seconds a model); test/batching compiles the default.
config.environment["SGC_DECODE_BATCH"] = "1"

config.substitutions.append(("%sgc_src_root", config.sgc_src_root))
config.substitutions.append(("%examples", os.path.join(config.sgc_src_root, "examples")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%sgc_bin", config.sgc_tools_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "ASAN_OPTIONS", "UBSAN_OPTIONS",
                                     "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()

tool_dirs = [config.sgc_tools_dir, config.llvm_tools_dir]
tools = ["sgc", "sgc-opt", "sgc-run", "sgc-emu-sample", "not", "count",
         "FileCheck"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], tool_dirs)
llvm_config.with_environment("PATH", config.sgc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# sgc-run is part of the build unless the runtime is configured out.
if os.path.exists(os.path.join(config.sgc_tools_dir, "sgc-run")):
    config.available_features.add("sgc-run")

# The sampled-CTA checks of the full seeds' CUDA kernels
# (test/lib/sgc-emu-sample), built with the runtime's tests.
if os.path.exists(os.path.join(config.sgc_tools_dir, "sgc-emu-sample")):
    config.available_features.add("sgc-emu-sample")

# An x86-64 Linux host: checks that read /proc/cpuinfo and x86 code.
if platform.machine() == "x86_64" and platform.system() == "Linux":
    config.available_features.add("x86_64-linux")
    # The host variant runs vdpbf16ps (the bf16 tiles, pair rows and
    # attention sums).
    with open("/proc/cpuinfo") as cpuinfo:
        words = cpuinfo.read().split()
    if "avx512_bf16" in words:
        config.available_features.add("avx512-bf16")
    # Checks of how Intel's vdpbf16ps rounds (another vendor's may differ).
    if "GenuineIntel" in words:
        config.available_features.add("cpu-intel")

# The ASan + UBSan build (scripts/test-sanitized) runs this suite again.
if config.sgc_sanitized.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("sanitized")

# The CUDA target assembles its kernels with the toolkit's ptxas and
# fatbinary (scripts/setup checks for them); the emulator runs them here.
import shutil
# Lowered kernels run in a few tests under mlir-runner with MLIR's C runner
# utilities (vector.print).
runner_utils = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib",
                            "libmlir_c_runner_utils.so")
if shutil.which("mlir-runner", path=config.llvm_tools_dir) and \
        os.path.exists(runner_utils):
    config.available_features.add("mlir-runner")
    config.substitutions.append(("%mlir_c_runner_utils", runner_utils))
if shutil.which("ptxas") and shutil.which("fatbinary"):
    config.available_features.add("ptxas")
# The SASS tests read the cubins with nvdisasm (scripts/cuda-tools).
nvdisasm = os.path.join(config.sgc_src_root, ".cuda-tools", "bin", "nvdisasm")
if os.path.exists(nvdisasm):
    config.available_features.add("nvdisasm")
    config.substitutions.append(("%nvdisasm", nvdisasm))

# The cuda feature needs a CUDA build and a device that answers; CPU-only
# machines (CI) skip the folders that require it.
if os.path.exists("/dev/nvidia0"):
    config.available_features.add("cuda")
