/*
 * check.h - one sampled-CTA check of a kernel: what a family's check gets
 * (the step, its operands, the spec, the options), the seeded inputs, the
 * emulator launch of the sampled blocks, and the comparison of every
 * output element of those blocks with the reference's interval.
 */
#ifndef SGC_TEST_TARGET_CUDA_EMU_SAMPLE_CHECK_H
#define SGC_TEST_TARGET_CUDA_EMU_SAMPLE_CHECK_H

#include "test/lib/sgc-emu-sample/interval.h"
#include "test/lib/sgc-emu-sample/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace emu_sample {

struct options {
  uint64_t seed = 1;
  int schedules = 3;
  /// Random CTAs sampled besides the first, the last and the boundaries.
  int random_ctas = 2;
  /// Decode position and the session's full-cache slots; a prefill call
  /// is |prefill_tokens| tokens ending there (of the phase's max_tokens).
  int64_t position = 1500;
  int64_t full_position = 1300;
  int64_t full_slots = 2048;
  int64_t prefill_tokens = 300;
  /// The reference sees one input element changed (the check must fail).
  bool plant_bug = false;
};

/// Seeded normal values (splitmix64 + Box-Muller: the same on every libc).
class normal_source {
public:
  explicit normal_source(uint64_t seed) : state_(seed) {}
  double next();
  /// |n| bf16 values of N(0, sigma) at |out|.
  void fill_bf16(uint16_t *out, uint64_t n, double sigma);
  uint64_t bits();

private:
  uint64_t state_;
  bool have_spare_ = false;
  double spare_ = 0;
};

double bf16_value(uint16_t v);
uint16_t to_bf16(double v);

/// The case a family's check works on.
struct kernel_case {
  const model *m = nullptr;
  uint32_t step_index = 0;
  const sgc_abi_step_t *step = nullptr;
  /// The call's tokens (1 in decode) and the phase's max_tokens (the
  /// grid's token blocks).
  int64_t tokens = 1, max_tokens = 1;
  std::string phase = "decode";
  std::string kernel;
  const kernel_spec *spec = nullptr;
  std::vector<operand> ops;
  options opt;
  normal_source *random = nullptr;
};

/// What a check found, printed as one line per kernel.
struct check_result {
  std::vector<uint32_t> ctas;
  int64_t outputs = 0;
  double max_error = 0;    ///< max |kernel - reference point|
  double bound_at_max = 0; ///< the interval's half on that side there
  double worst_ratio = 0;  ///< max error / bound over all outputs
  double max_bound = 0;
  int64_t outside = 0;       ///< outputs outside their interval
  std::string first_bad;     ///< where the first one is, with values
  int64_t untouched_bad = 0; ///< elements of other CTAs written
  std::string error;         ///< the emulator's error, if any
  double seconds = 0;
};

/// |kernel| compared with |range| (range.pt is the reference's value);
/// |where| names the element for the first failure.
void compare(double kernel, interval range, const std::string &where,
             check_result *r);

/// Counts into r->untouched_bad the elements of |out| ([rows, width] bf16,
/// filled with 0xFFFF) written in rows no sampled CTA owns: one CTA per
/// token row, rows at or past |tokens| belong to none.
void count_unwritten_rows(const operand &out, int64_t width, int64_t tokens,
                          check_result *r);

/// The sampled blocks of a grid of |blocks|: 0, the last, |extra| (each
/// block holding a boundary), and opt.random_ctas seeded others; sorted,
/// distinct.
std::vector<uint32_t> sample_blocks(uint32_t blocks,
                                    std::vector<uint32_t> extra,
                                    const kernel_case &c);

/// The step state of the call: the first token at |position|, |tokens|
/// tokens, the options' full-cache slots.
void set_step_state(const kernel_case &c, int64_t position, int64_t tokens);

/// Runs the step's sampled |blocks| in the emulator under opt.schedules;
/// operands listed in |outputs| are writable, every other is read-only.
/// Returns the emulator's error message, or "".
std::string run_blocks(const kernel_case &c,
                       const std::vector<uint32_t> &blocks,
                       const std::vector<uint32_t> &outputs);

/// One step of a row chain (RowChain.cpp), as its spec names it:
/// "rms_norm(eps=1e-06,offset=1,w)", "add", "mul", "layer_scalar".
struct chain_step {
  std::string op;
  double eps = 0;
  int64_t offset = 0;
  bool weight = false;
  int side = -1; ///< its side input's operand, or -1
};

/// The steps of a spec's "A;B;C" list (an RMSNorm only first); side inputs
/// are the operands from |first_side| on, |*next| the one after the last.
/// Returns "" or what is wrong.
std::string parse_chain(const std::string &list, int first_side,
                        std::vector<chain_step> *steps, int *next);
/// Seeded side inputs of the steps (bf16 or f32, as each operand is).
void fill_chain_sides(const kernel_case &c,
                      const std::vector<chain_step> &steps);
/// The chain over row |t|: |v| holds the row's input and receives its
/// result as intervals (each step rounded to |dtype|, the row's; the
/// RMSNorm's sum over |threads|).
void chain_row(const kernel_case &c, const std::vector<chain_step> &steps,
               int64_t t, int64_t width, int64_t threads,
               std::vector<interval> &v, uint32_t dtype);

/// Epilogues of the projections (gemv_check.cc), shared by gemv_rows and
/// gemm_mma: |v| rounded as stored in |dtype| (bf16 or f32); GELU(tanh) with
/// its f32 evaluation's error; softcap's three rounded steps.
interval round_to(interval v, uint32_t dtype);
interval gelu_of(interval z);
interval softcap_of(interval y, double cap, uint32_t dtype);

/// The keys an attention kernel reads, as intervals: its K rows, or on a
/// V-only cache (a spec with key_rotated: keys_from_values) the key at
/// position pos rebuilt from V's row, RoPE_pos(round(v · w_k))
/// (rebuilt_keys.cc).
class key_rows {
public:
  /// `weight`: the kernel's k_norm weight operand when the spec rebuilds
  /// keys, else null.
  key_rows(const kernel_case &c, const operand *weight);
  bool rebuilt() const { return weight_ != nullptr; }
  /// The key at position `pos` whose row (K's, or V's when rebuilt) starts
  /// at element `base` of `row`.
  std::vector<interval> at(const operand &row, int64_t base,
                           int64_t pos) const;

private:
  const operand *weight_;
  int64_t d_ = 0, rotated_ = 0, basis_ = 0;
  double theta_ = 0;
};

/// Family checks (gemv_check.cc, attention_check.cc, attn_prefill_check.cc,
/// qknorm_check.cc, row_chain_check.cc, embed_check.cc).
check_result check_gemv_rows(kernel_case &c);
check_result check_gemm_mma(kernel_case &c);
check_result check_kv_write(kernel_case &c);
check_result check_attn_decode(kernel_case &c);
check_result check_attn_prefill(kernel_case &c);
check_result check_qknorm_rope(kernel_case &c);
check_result check_row_chain(kernel_case &c);
check_result check_embed(kernel_case &c);

} // namespace emu_sample

#endif // SGC_TEST_TARGET_CUDA_EMU_SAMPLE_CHECK_H
