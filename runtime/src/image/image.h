/*
 * image.h - the runtime's image pipeline: files in, model pixel tensors out,
 * as the Hugging Face processors that transformers 5.24 picks by default
 * (runtime/README.md, "Images"). Internal C++; the C API is image_api.cc.
 *
 *   decode_image_file   PNG or JPEG -> 8-bit RGB, as transformers'
 *                       load_image does (PIL open, EXIF orientation,
 *                       convert("RGB"))
 *   resize_rgb          torch's antialiased uint8 resize (bilinear/bicubic)
 *   gemma3_pixels       resize to a square, (x - 127.5) / 127.5, NCHW f32
 *   gemma4_pixels       aspect-preserving resize, x / 255, patches,
 *                       positions, padding
 */
#ifndef SGC_RUNTIME_IMAGE_IMAGE_H
#define SGC_RUNTIME_IMAGE_IMAGE_H

#include "lib/support/status.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace sgc::runtime::image {

/// Largest decoded image accepted, checked from the file header before any
/// pixel buffer is allocated: PIL's decompression-bomb warning threshold
/// (Image.MAX_IMAGE_PIXELS = 89,478,485 pixels, about 256 MiB of RGB), and
/// at most 65,535 pixels a side.
constexpr uint64_t max_pixels = 89478485;
constexpr int64_t max_side = 65535;
/// Largest file read (bytes).
constexpr uint64_t max_file_bytes = uint64_t{1} << 30;

/// 8-bit RGB, row-major, channels last (HWC).
struct rgb_image {
  int32_t width = 0;
  int32_t height = 0;
  std::vector<uint8_t> pixels;
};

/// Decodes a PNG or JPEG image from memory; |label| names it in messages.
/// The format is sniffed from the first bytes, not from the name.
/// |limit| bounds width x height (a server's --max-image-pixels; never
/// above max_pixels).
status decode_image(const uint8_t *data, size_t size, const std::string &label,
                    rgb_image *out, uint64_t limit = max_pixels);
/// Reads and decodes |path|.
status decode_image_file(const std::string &path, rgb_image *out);

// Format decoders (png_decoder.cc, jpeg_decoder.cc). They return the image
// in its stored orientation; |exif| receives the EXIF block (TIFF header
// first, "Exif\0\0" stripped) when the file has one.
status decode_png(const uint8_t *data, size_t size, const std::string &label,
                  rgb_image *out, std::vector<uint8_t> *exif,
                  uint64_t limit = max_pixels);
status decode_jpeg(const uint8_t *data, size_t size, const std::string &label,
                   rgb_image *out, std::vector<uint8_t> *exif,
                   uint64_t limit = max_pixels);

/// The EXIF Orientation tag (1..8) in |exif|, 1 when absent or unreadable
/// (PIL ignores a broken EXIF block too).
int exif_orientation(const std::vector<uint8_t> &exif);
/// Applies |orientation| as PIL's ImageOps.exif_transpose does.
void apply_orientation(int orientation, rgb_image *img);

/// Whether |width| x |height| is a non-empty image within the limits above.
inline bool within_limits(int64_t width, int64_t height,
                          uint64_t limit = max_pixels) {
  return width > 0 && height > 0 && width <= max_side && height <= max_side &&
         uint64_t(width) * uint64_t(height) <= std::min(limit, max_pixels);
}
/// Refuses dimensions past the limits above (within_limits false), naming
/// |label|.
status check_dimensions(int64_t width, int64_t height,
                        const std::string &label, uint64_t limit = max_pixels);

enum class filter { bilinear, bicubic };

/// Resizes as torch's uint8 antialiased interpolate (the path torchvision's
/// resize takes for uint8 CPU tensors): separable, horizontal pass first,
/// int16 fixed-point weights, each pass rounded to uint8. A pass whose size
/// does not change is skipped.
rgb_image resize_rgb(const rgb_image &in, int32_t width, int32_t height,
                     filter f);

/// Gemma 3 (Gemma3ImageProcessor): |size| x |size|, bilinear, NCHW f32 in
/// [-1, 1]: out is [3, size, size].
void gemma3_pixels(const rgb_image &img, int32_t size, std::vector<float> *out);

struct gemma4_params {
  int32_t patch_size = 16;
  int32_t pooling_kernel_size = 3;
  int32_t max_soft_tokens = 280;
};

struct gemma4_output {
  int32_t width = 0, height = 0; ///< after the resize
  int64_t max_patches = 0;
  int64_t patch_values = 0; ///< patch_size^2 * 3
  int64_t num_soft_tokens = 0;
  std::vector<float> pixel_values;   ///< [max_patches, patch_values]
  std::vector<int64_t> position_ids; ///< [max_patches, 2]: (x, y) / -1
};

/// The target size of Gemma4ImageProcessor's aspect-preserving resize, or
/// an error (a side that rounds to zero twice) naming |label|.
status gemma4_target_size(int64_t height, int64_t width, const gemma4_params &p,
                          const std::string &label, int32_t *out_height,
                          int32_t *out_width);
/// Gemma 4 (Gemma4ImageProcessor). |p| must be valid (check_gemma4_params).
status gemma4_pixels(const rgb_image &img, const gemma4_params &p,
                     const std::string &label, gemma4_output *out);
/// max_soft_tokens in {70, 140, 280, 560, 1120} (HF's set), patch and kernel
/// sizes in 1..64.
status check_gemma4_params(const gemma4_params &p);

} // namespace sgc::runtime::image

#endif // SGC_RUNTIME_IMAGE_IMAGE_H
