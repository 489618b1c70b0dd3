/*
 * embed_check.cc - decode embed (Embed.cpp): out = bf16(f32(table[id]) *
 * scale) with Gemma's scale sqrt(width) rounded to bf16 (HF's normalizer is
 * a bf16 tensor: gemma-text.md §10), computed here, not read from the spec.
 * Three launches: a seeded id, the table's last row, and an id past the
 * table, which reads row 0 (the kernel's guard; the runtime rejects such
 * ids before calling).
 */
#include "test/Target/CUDA/emu-sample/check.h"

#include <chrono>
#include <cmath>
#include <cstring>

namespace emu_sample {

check_result check_embed(kernel_case &c) {
  check_result r;
  if (c.ops.size() != 4 || c.ops[1].dtype != SGC_ABI_DTYPE_I32 ||
      c.ops[2].shape.size() != 2 || c.ops[2].dtype != SGC_ABI_DTYPE_BF16 ||
      c.ops[3].dtype != SGC_ABI_DTYPE_BF16) {
    r.error = "the step's operands are not (state, i32 ids, bf16 table, bf16 "
              "out)";
    return r;
  }
  const operand &ids = c.ops[1], &table = c.ops[2], &out = c.ops[3];
  const int64_t vocab = table.shape[0], width = table.shape[1];
  const double scale = round_bf16(std::sqrt(static_cast<double>(width)));
  r.ctas = sample_blocks(c.step->grid[0], {}, c);
  auto *state = static_cast<sgc_abi_step_state_t *>(c.ops[0].memory->data());
  state->position = c.opt.position;
  state->num_tokens = 1;
  state->full_slots = c.opt.full_slots;

  // Row 0 and the rows read, filled (the rest of the table stays unbacked).
  const int64_t seeded = 1 + static_cast<int64_t>(c.random->bits() % (vocab - 2));
  for (int64_t row : {int64_t{0}, seeded, vocab - 1})
    c.random->fill_bf16(table.bf16() + row * width, width, 0.05);
  bool planted = false;
  for (const int64_t id : {seeded, vocab - 1, vocab}) {
    static_cast<int32_t *>(ids.memory->data())[0] = static_cast<int32_t>(id);
    std::memset(out.memory->data(), 0xFF, out.memory->bytes());
    const auto start = std::chrono::steady_clock::now();
    r.error = run_blocks(c, r.ctas, {3});
    r.seconds += std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start).count();
    if (!r.error.empty())
      return r;
    const int64_t row = id < vocab ? id : 0;
    for (int64_t i = 0; i < width; ++i) {
      double e = bf16_value(table.bf16()[row * width + i]);
      // The planted bug: the reference doubles the first id's first element.
      if (c.opt.plant_bug && !planted) {
        planted = true;
        e *= 2;
      }
      const interval y = round_bf16(f32_rounded(interval(e) * interval(scale)));
      compare(bf16_value(out.bf16()[i]), y,
              "id " + std::to_string(id) + " column " + std::to_string(i), &r);
    }
  }
  return r;
}

} // namespace emu_sample
