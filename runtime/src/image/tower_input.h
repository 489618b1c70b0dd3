/*
 * tower_input.h - a preprocessed image as the compiled vision tower takes
 * it: the encode_image phase's patches [N, P] f32 and patch positions
 * [N, 2] i32 (lib/abi/sgc/abi.h, SGC_ABI_OPERAND_PIXELS).
 */
#ifndef SGC_RUNTIME_IMAGE_TOWER_INPUT_H
#define SGC_RUNTIME_IMAGE_TOWER_INPUT_H

#include "lib/support/status.h"
#include "runtime/src/image/image_handle.h"

#include <sgc/abi.h>

#include <cstdint>
#include <vector>

namespace sgc::runtime::image {

struct tower_input {
  std::vector<float> patches;      ///< [N, P]
  std::vector<int32_t> positions;  ///< [N, 2]: (column, row), -1 padding
  int64_t soft_tokens = 0;         ///< the image's own soft tokens
};

/// Gemma 3: the [3, S, S] image cut into (S/p)^2 row-major patches, each
/// (channel, ky, kx) as the patch convolution reads it. Gemma 4: the
/// processor's patches as they are, positions narrowed to int32. The image
/// must have been made for this tower (|family| "gemma3" / "gemma4", |facts|,
/// |patches| x |values|); an error says what differs.
status make_tower_input(const sgc_image_t &img, const char *family,
                        const sgc_abi_image_t &facts, int64_t patches,
                        int64_t values, tower_input *out);

} // namespace sgc::runtime::image

#endif // SGC_RUNTIME_IMAGE_TOWER_INPUT_H
