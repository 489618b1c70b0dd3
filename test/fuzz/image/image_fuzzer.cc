/*
 * image_fuzzer.cc - libFuzzer target for the image decoders and the Gemma
 * processors (runtime/src/image). Any input must yield either an RGB image
 * within the limits, which then resizes and patches without trouble, or a
 * bad_input status naming the input; never a crash, hang, leak or sanitizer
 * report, whatever libpng's and libjpeg's longjmp error paths go through.
 *
 * Seeds: test/Inputs/images/ (the PNG and JPEG files).
 */
#include "runtime/src/image/image.h"

#include <cstdint>
#include <cstdlib>

namespace img = sgc::runtime::image;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  img::rgb_image rgb;
  const sgc::status st = img::decode_image(data, size, "fuzz", &rgb);
  if (!st.ok()) {
    if (st.code() != sgc::status_code::bad_input ||
        st.message().rfind("fuzz: ", 0) != 0)
      std::abort();
    return 0;
  }
  if (rgb.width < 1 || rgb.height < 1 ||
      uint64_t(rgb.width) * uint64_t(rgb.height) > img::max_pixels ||
      rgb.pixels.size() != size_t(rgb.width) * size_t(rgb.height) * 3)
    std::abort();
  // Keep the processors' part cheap: small outputs, inputs up to 256x256
  // (an antialiased resize of a megapixel image under ASan took ~10 ms an
  // input, most of the fuzzing time; larger images add no new edge cases).
  if (uint64_t(rgb.width) * uint64_t(rgb.height) > 1u << 16)
    return 0;
  std::vector<float> g3;
  img::gemma3_pixels(rgb, 14, &g3);
  if (g3.size() != 3 * 14 * 14)
    std::abort();
  img::gemma4_params p;
  p.patch_size = 2;
  p.max_soft_tokens = 70;
  img::gemma4_output g4;
  if (img::gemma4_pixels(rgb, p, "fuzz", &g4).ok() &&
      (g4.num_soft_tokens < 1 || g4.num_soft_tokens > 70 ||
       g4.pixel_values.size() != size_t(630 * 12)))
    std::abort();
  return 0;
}
