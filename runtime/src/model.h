/*
 * model.h - a compiled model library: dlopen, ABI check, table validation.
 */
#ifndef SGC_RUNTIME_SRC_MODEL_H
#define SGC_RUNTIME_SRC_MODEL_H

#include "lib/support/status.h"

#include <sgc/abi.h>

#include <memory>
#include <string>
#include <vector>

namespace sgc {
namespace runtime {

class model_library {
public:
  /// Loads |path| and validates its table (see sgc_model_open for codes).
  static status open(const std::string &path,
                     std::shared_ptr<model_library> *out);
  ~model_library();
  model_library(const model_library &) = delete;
  model_library &operator=(const model_library &) = delete;

  const std::string &path() const { return path_; }
  const sgc_model_v2_t &table() const { return *table_; }
  /// The library's exported data or function |name|, or null.
  void *symbol(const char *name) const;
  uint32_t abi_minor() const { return table_->header.version_minor; }
  /// The 2.2 emulator table, or null (absent, or a 2.0/2.1 table).
  const sgc_abi_cuda_emu_t *cuda_emu() const {
    return table_->header.struct_size >= SGC_ABI_MODEL_V2_2_SIZE
               ? table_->cuda_emu
               : nullptr;
  }
  /// The 2.3 image component, or null (none, or an older table).
  const sgc_abi_image_t *image() const {
    return table_->header.struct_size >= SGC_ABI_MODEL_V2_3_SIZE
               ? table_->image
               : nullptr;
  }
  /// The 2.4 argmax operand of |phase| (one of the table's phases), or null
  /// (none, or an older table).
  const sgc_abi_operand_t *argmax(const sgc_abi_phase_t &phase) const {
    if (table_->header.struct_size < sizeof(sgc_model_v2_t) ||
        !table_->phase_argmax)
      return nullptr;
    const sgc_abi_operand_t &o = table_->phase_argmax[&phase - table_->phases];
    return o.rank ? &o : nullptr;
  }

  /// Sum of the manifest's bytes.
  uint64_t weight_bytes() const { return weight_bytes_; }
  /// Per-layer K and V buffer sizes (V is 0 without a V cache).
  uint64_t k_bytes(size_t layer) const { return k_bytes_[layer]; }
  uint64_t v_bytes(size_t layer) const { return v_bytes_[layer]; }
  /// Sum of all K and V buffers.
  uint64_t kv_cache_bytes() const { return kv_bytes_; }
  /// Slots layer |layer| needs for |context| positions: the plan's slots,
  /// or fewer when the context is shorter (a full layer holds one slot per
  /// position, a ring never more than the positions there are).
  int64_t slots_at(size_t layer, int64_t context) const;
  /// K and V bytes of layer |layer| (V: 0 without a V cache) at |context|.
  uint64_t k_bytes_at(size_t layer, int64_t context) const;
  uint64_t v_bytes_at(size_t layer, int64_t context) const;
  /// The KV cache for |context| positions (<= context_length).
  uint64_t kv_cache_bytes_at(int64_t context) const;
  /// Where each K and V buffer starts in one allocation of the caches of
  /// |sequences| sequences at |context|, each buffer |alignment|-aligned:
  /// offsets[2 * (s * layers + l)] is sequence s's layer l K buffer, + 1
  /// its V buffer; |total| the bytes of the allocation.
  status kv_buffer_offsets(int64_t context, int32_t sequences,
                           uint64_t alignment, std::vector<uint64_t> *offsets,
                           uint64_t *total) const;
  /// The phase of kind |kind| (SGC_ABI_PHASE_*), or null.
  const sgc_abi_phase_t *phase(uint32_t kind) const;
  /// The DECODE_BATCH phases of more than one row, fewest rows first.
  const std::vector<const sgc_abi_phase_t *> &decode_batches() const {
    return decode_batches_;
  }
  /// The most operands any step has.
  uint32_t max_step_operands() const { return max_step_operands_; }
  /// The encode_image phase's input: patches and values per patch (0, 0
  /// without a tower).
  int64_t image_patches() const { return image_patches_; }
  int64_t image_patch_values() const { return image_patch_values_; }
  /// Whether prefill takes image rows (soft tokens and blocks per row).
  bool prefill_takes_images() const { return prefill_takes_images_; }

  /// A short description for messages: 'id' ('path').
  std::string describe() const;

private:
  model_library() = default;
  status validate();
  status validate_plan();

  std::string path_;
  void *handle_ = nullptr;
  const sgc_model_v2_t *table_ = nullptr;
  uint64_t weight_bytes_ = 0;
  uint64_t kv_bytes_ = 0;
  uint32_t max_step_operands_ = 0;
  int64_t image_patches_ = 0, image_patch_values_ = 0;
  int64_t image_embed_width_ = 0;
  bool prefill_takes_images_ = false;
  std::vector<const sgc_abi_phase_t *> decode_batches_;
  std::vector<uint64_t> k_bytes_;
  std::vector<uint64_t> v_bytes_;
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_MODEL_H
