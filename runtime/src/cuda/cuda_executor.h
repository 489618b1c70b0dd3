/*
 * cuda_executor.h - the plan on an NVIDIA GPU through the driver API: the
 * variant's fatbin loaded once into the device's primary context, its
 * kernels resolved once, weights copied to the device once, the KV cache,
 * workspace, tokens and step state in device memory, each step one
 * cuLaunchKernelEx, and the decode phase captured once into a CUDA graph
 * that every token replays.
 */
#ifndef SGC_RUNTIME_SRC_CUDA_CUDA_EXECUTOR_H
#define SGC_RUNTIME_SRC_CUDA_CUDA_EXECUTOR_H

#include "runtime/src/cuda/cuda_driver.h"
#include "runtime/src/cuda/launch_plan.h"
#include "runtime/src/cuda/launch_trace.h"
#include "runtime/src/executor.h"
#include "runtime/src/model.h"

#include <sgc/runtime.h>

#include <memory>
#include <string>
#include <vector>

namespace sgc {
namespace runtime {

class cuda_executor final : public executor {
public:
  struct options {
    /// The driver library (tests pass a fake one).
    std::string library = cuda_driver_library;
    int ordinal = 0;
    /// A variant by name, or null/empty for the first CUDA variant.
    const char *variant = nullptr;
    /// Called as the weights are copied to the device (may be null).
    sgc_progress_fn_t progress = nullptr;
    void *progress_user = nullptr;
    /// Bytes of each of the two pinned buffers the weights are copied
    /// through (tests make it small to see the chunks).
    uint64_t staging_bytes = 32ull << 20;
    /// launch_trace.h: per-launch GPU times, and every launch's written
    /// operands; empty: SGC_CUDA_PROFILE / SGC_CUDA_DUMP from the
    /// environment (unset: neither). Either makes the decode phase run
    /// launch by launch instead of as the captured graph.
    std::string profile_path;
    std::string dump_path;
    /// Kernels flagged SGC_ABI_CUDA_KERNEL_WAITS launch with programmatic
    /// stream serialization (PDL); SGC_CUDA_PDL=0 in the environment turns
    /// it off too (an A/B of the launch gaps).
    bool programmatic_launch = true;
  };

  /// Opens the driver, the device's primary context and a stream, loads the
  /// variant's fatbin and resolves its kernels (each launched with dynamic
  /// shared memory opts in to the most any step asks for).
  static status create(std::shared_ptr<model_library> model, const options &o,
                       std::unique_ptr<executor> *out);
  ~cuda_executor() override;

  status allocate(int64_t context, int32_t sequences) override;
  void use_sequence(int32_t) override {}
  status bind(const bound_weights &weights) override;
  status run(const sgc_abi_phase_t &phase, const int32_t *tokens, int64_t n,
             int64_t pos0, float *logits, bool all_positions,
             int32_t *argmax) override;

  const char *variant_name() const override { return variant_->name; }
  uint64_t kv_cache_bytes() const override { return kv_bytes_; }
  uint64_t workspace_bytes() const override {
    return model_->table().workspace_bytes;
  }
  int32_t num_threads() const override { return 1; }

private:
  cuda_executor() = default;
  status open(const options &o);
  /// Device memory of |bytes|, zeroed; recorded for the destructor.
  status device_alloc(uint64_t bytes, const char *what, cu::deviceptr *out);
  status host_alloc(uint64_t bytes, const char *what, void **out);
  /// Queues the steps of |phase| for a call of |n| tokens on the stream;
  /// outside a capture, with the profile's events around each launch and
  /// the dump's copies after it.
  status launch_steps(const sgc_abi_phase_t &phase, int64_t n,
                      bool capturing = false);
  /// The dump's records of step |s| once it has run.
  status dump_step(const sgc_abi_phase_t &phase, uint32_t s, int64_t n);
  /// The profile's rows of the call that just ended.
  status profile_rows(const sgc_abi_phase_t &phase, int64_t n);
  /// Captures the decode phase into graph_exec_.
  status capture(const sgc_abi_phase_t &phase);

  std::shared_ptr<model_library> model_;
  const sgc_abi_variant_t *variant_ = nullptr;
  const cuda_api *api_ = nullptr;
  sgc_progress_fn_t progress_ = nullptr;
  void *progress_user_ = nullptr;
  uint64_t staging_bytes_ = 0;
  cu::device device_ = 0;
  bool retained_ = false;
  cu::context context_ = nullptr;
  cu::stream stream_ = nullptr;
  cu::module module_ = nullptr;
  std::vector<cu::function> functions_;
  std::vector<cu::deviceptr> device_memory_;
  std::vector<void *> host_memory_;

  int64_t context_length_ = 0;
  uint64_t kv_bytes_ = 0;
  /// The step state followed by the tokens, on the device and pinned on
  /// the host: one copy per call.
  cu::deviceptr call_device_ = 0;
  void *call_host_ = nullptr;
  uint64_t call_bytes_ = 0;
  void *logits_host_ = nullptr;
  plan_buffers buffers_;
  bool bound_ = false;
  /// Per step of the plan: its parameter values and pointers to them.
  std::vector<std::vector<uint64_t>> params_;
  std::vector<std::vector<void *>> param_pointers_;
  cu::graph graph_ = nullptr;
  cu::graph_exec decode_graph_ = nullptr;
  /// options::programmatic_launch and SGC_CUDA_PDL.
  bool programmatic_ = true;

  /// SGC_CUDA_PROFILE / SGC_CUDA_DUMP (null when not asked for).
  std::unique_ptr<launch_profile> profile_;
  std::unique_ptr<launch_dump> dump_;
  /// The profile's events, a start and an end per step of the plan,
  /// created when first recorded.
  std::vector<cu::event> events_;
  std::vector<uint8_t> dump_host_;
  /// Calls run so far (the trace files' call column).
  int64_t calls_ = 0;
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CUDA_CUDA_EXECUTOR_H
