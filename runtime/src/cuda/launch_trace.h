/*
 * launch_trace.h - what the CUDA executors report per launch for the GPU
 * checks (scripts/device-check), asked for through the environment:
 *
 *   SGC_CUDA_PROFILE=PATH  (--device cuda) each launch's GPU time from an
 *       event pair recorded around it: a '#' line naming the model, then a
 *       TSV header and one row per launch (call, phase, step, layer,
 *       kernel, tokens, grid, block, dynamic shared bytes, the bytes of the
 *       weights the step reads, microseconds). The decode phase then runs
 *       its launches one by one instead of replaying the captured graph.
 *   SGC_CUDA_DUMP=PATH  (--device cuda and cuda-emu) after each launch, the
 *       bytes of every workspace and KV-cache operand of the step (what a
 *       kernel may write), each as one JSON header line and the raw bytes:
 *       bench/gpu/compare_launches.py names the first launch whose outputs
 *       differ between the GPU and the emulator.
 *
 * Without them the executors do exactly what they do otherwise.
 */
#ifndef SGC_RUNTIME_SRC_CUDA_LAUNCH_TRACE_H
#define SGC_RUNTIME_SRC_CUDA_LAUNCH_TRACE_H

#include "lib/support/status.h"
#include "runtime/src/model.h"

#include <sgc/abi.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace sgc {
namespace runtime {

constexpr const char *cuda_profile_variable = "SGC_CUDA_PROFILE";
constexpr const char *cuda_dump_variable = "SGC_CUDA_DUMP";

/// The value of environment variable |name|, or "" when unset.
std::string trace_path_from_environment(const char *name);

/// "prefill", "decode" or "encode_image".
const char *phase_kind_name(uint32_t kind);

/// Bytes of the manifest tensors |step| names as WEIGHT operands, each
/// tensor counted once (what a GEMV step streams from memory).
uint64_t step_weight_bytes(const sgc_model_v2_t &t, const sgc_abi_step_t &step);

/// SGC_CUDA_PROFILE's file: one row per launch.
class launch_profile {
public:
  /// Creates (truncates) |path| and writes the model line and the header.
  static status open(const std::string &path, const model_library &model,
                     const char *variant, std::unique_ptr<launch_profile> *out);
  ~launch_profile();

  /// One launch of step |s| (an index into the table's steps) of |phase|
  /// in call |call| (0-based over the session) of |n| tokens.
  void row(int64_t call, const sgc_model_v2_t &t, const sgc_abi_phase_t &phase,
           uint32_t s, int64_t n, const char *kernel, const uint32_t grid[3],
           double microseconds);
  /// Flushes the rows of a call; an error when the file cannot be written.
  status flush();

private:
  launch_profile() = default;
  std::string path_;
  FILE *file_ = nullptr;
};

/// SGC_CUDA_DUMP's file: every written operand after every launch.
class launch_dump {
public:
  /// An operand the dump records: step operand |index| at |address| (a
  /// device address on CUDA, a host address in the emulator).
  struct operand {
    uint32_t index = 0;
    uint64_t address = 0;
    uint64_t bytes = 0;
    const char *kind = ""; ///< "workspace", "k_cache", "v_cache"
    uint32_t dtype = 0;    ///< SGC_ABI_DTYPE_*
  };

  static status open(const std::string &path,
                     std::unique_ptr<launch_dump> *out);
  ~launch_dump();

  /// The workspace and cache operands of |step| for a call of |n| tokens in
  /// a session of |context| positions (an operand passed twice once), with
  /// their addresses from |params| (step_params).
  static void operands(const model_library &model, const sgc_abi_step_t &step,
                       const std::vector<uint64_t> &params, int64_t n,
                       int64_t context, std::vector<operand> *out);

  /// Appends one record: a JSON line naming the launch and the operand,
  /// then o.bytes bytes of |data|.
  status write(int64_t call, const sgc_model_v2_t &t,
               const sgc_abi_phase_t &phase, uint32_t s, int64_t n,
               const char *kernel, const operand &o, const void *data);
  /// Flushes the records of a call (a run cut short keeps them).
  status flush();

private:
  launch_dump() = default;
  std::string path_;
  FILE *file_ = nullptr;
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CUDA_LAUNCH_TRACE_H
