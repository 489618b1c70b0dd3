/*
 * embed_check.cc - decode embed (Embed.cpp): out = bf16(f32(table[id]) *
 * scale) with Gemma's scale sqrt(width) rounded to bf16 (HF's normalizer is
 * a bf16 tensor: gemma-text.md §10), computed here, not read from the spec.
 * Three launches; each sampled token gets in turn a seeded id, the table's
 * last row, and an id past the table, which reads row 0 (the kernel's
 * guard; the runtime rejects such ids before calling). Prefill: the call's
 * tokens of the phase's max, blocks past them must write nothing.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include <algorithm>
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
  const int64_t n = c.tokens;
  const double scale = round_bf16(std::sqrt(static_cast<double>(width)));
  // Token blocks: first, last, the call's last token and the first past it.
  r.ctas = sample_blocks(
      c.step->grid[0], {static_cast<uint32_t>(n - 1), static_cast<uint32_t>(n)},
      c);
  set_step_state(c, c.opt.position - (n - 1), n);

  // Each sampled token's ids, one a launch: a seeded one, the last, and one
  // past the table; row 0 and the rows read filled (the rest of the table
  // stays unbacked).
  std::vector<int64_t> seeded;
  for (size_t i = 0; i < r.ctas.size(); ++i)
    seeded.push_back(1 + static_cast<int64_t>(c.random->bits() % (vocab - 2)));
  c.random->fill_bf16(table.bf16(), width, 0.05);
  for (int64_t row : seeded)
    c.random->fill_bf16(table.bf16() + row * width, width, 0.05);
  c.random->fill_bf16(table.bf16() + (vocab - 1) * width, width, 0.05);
  bool planted = false;
  for (int launch = 0; launch < 3; ++launch) {
    auto *id_of = static_cast<int32_t *>(ids.memory->data());
    for (size_t i = 0; i < r.ctas.size(); ++i) {
      const int64_t pick = (launch + static_cast<int64_t>(i)) % 3;
      if (r.ctas[i] < n)
        id_of[r.ctas[i]] = static_cast<int32_t>(pick == 0   ? seeded[i]
                                                : pick == 1 ? vocab - 1
                                                            : vocab);
    }
    std::memset(out.memory->data(), 0xFF, out.memory->bytes());
    const auto start = std::chrono::steady_clock::now();
    r.error = run_blocks(c, r.ctas, {3});
    r.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!r.error.empty())
      return r;
    for (uint32_t t : r.ctas) {
      if (t >= n)
        continue;
      const int64_t id = id_of[t];
      const int64_t row = id < vocab ? id : 0;
      for (int64_t i = 0; i < width; ++i) {
        double e = bf16_value(table.bf16()[row * width + i]);
        // The planted bug: the reference doubles the first element checked.
        if (c.opt.plant_bug && !planted) {
          planted = true;
          e *= 2;
        }
        const interval y =
            round_bf16(f32_rounded(interval(e) * interval(scale)));
        compare(bf16_value(out.bf16()[t * width + i]), y,
                "token " + std::to_string(t) + " id " + std::to_string(id) +
                    " column " + std::to_string(i),
                &r);
      }
    }
    // Rows of tokens that did not run (or are past the call) unwritten.
    count_unwritten_rows(out, width, n, &r);
  }
  return r;
}

} // namespace emu_sample
