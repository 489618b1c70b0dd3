/*
 * model.h - what sgc-emu-sample reads of a compiled CUDA model: the table
 * (dlopen + sgc_model_query), the emulator's kernels, the kernel specs that
 * kernel-specs.py printed, and memory for one step's operands.
 */
#ifndef SGC_TEST_TARGET_CUDA_EMU_SAMPLE_MODEL_H
#define SGC_TEST_TARGET_CUDA_EMU_SAMPLE_MODEL_H

#include <sgc/abi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace emu_sample {

/// A kernel's sg.kernel_spec entries (scalars and integer arrays).
struct kernel_spec {
  std::map<std::string, std::string> fields;
  bool has(const std::string &key) const { return fields.count(key) != 0; }
  /// The entry as a number / integer list / text; exits with one error line
  /// naming the kernel when it is missing or malformed.
  double number(const std::string &kernel, const std::string &key) const;
  std::vector<int64_t> integers(const std::string &kernel,
                                const std::string &key) const;
  std::string text(const std::string &kernel, const std::string &key) const;
};

/// Reads `NAME key=value ...` lines; false with |error| set on a bad file.
bool read_specs(const std::string &path,
                std::map<std::string, kernel_spec> *out, std::string *error);

/// Zero-filled anonymous memory that stays unbacked until touched, so a
/// 2 GiB LM head costs only the rows a sampled CTA reads.
class lazy_memory {
public:
  explicit lazy_memory(uint64_t bytes);
  ~lazy_memory();
  lazy_memory(const lazy_memory &) = delete;
  lazy_memory &operator=(const lazy_memory &) = delete;
  void *data() const { return data_; }
  uint64_t bytes() const { return bytes_; }

private:
  void *data_ = nullptr;
  uint64_t bytes_ = 0;
};

/// One operand of a step, in memory of its own.
struct operand {
  const sgc_abi_operand_t *abi = nullptr;
  uint32_t dtype = 0;
  std::vector<int64_t> shape; ///< token dimension at the phase's max
  std::string what;           ///< for messages
  std::shared_ptr<lazy_memory> memory;
  uint16_t *bf16() const { return static_cast<uint16_t *>(memory->data()); }
  float *f32() const { return static_cast<float *>(memory->data()); }
};

/// A compiled CUDA model opened for emulation.
class model {
public:
  /// Opens |path|; false with |error| set (naming the file) otherwise.
  bool open(const std::string &path, std::string *error);
  const sgc_model_v2_t &table() const { return *table_; }
  const std::string &path() const { return path_; }
  /// The emulated variant's kernel name and host function of step |s|.
  const char *kernel_name(const sgc_abi_step_t &s) const;
  sgc_abi_emu_kernel_fn_t kernel_fn(const sgc_abi_step_t &s) const;
  uint32_t static_shared_bytes(const sgc_abi_step_t &s) const;
  const sgc_abi_cuda_emu_t &emu() const { return *emu_; }
  /// The phase of |kind| (SGC_ABI_PHASE_*), or null.
  const sgc_abi_phase_t *phase(uint32_t kind) const;
  /// Memory for every operand of |s| (one block per distinct buffer; a
  /// full-attention cache with |full_slots| slots; the token dimension at
  /// |tokens|, the phase's max_tokens). Operand 0 of a CUDA step is the
  /// step state.
  std::vector<operand> operands(const sgc_abi_step_t &s, int64_t full_slots,
                                int64_t tokens) const;

private:
  std::string path_;
  void *handle_ = nullptr;
  const sgc_model_v2_t *table_ = nullptr;
  const sgc_abi_variant_t *variant_ = nullptr;
  const sgc_abi_cuda_emu_t *emu_ = nullptr;
};

} // namespace emu_sample

#endif // SGC_TEST_TARGET_CUDA_EMU_SAMPLE_MODEL_H
