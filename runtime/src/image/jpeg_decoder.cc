/*
 * jpeg_decoder.cc - JPEG through Debian's libjpeg-turbo with its defaults
 * (integer IDCT, fancy upsampling), the decoder PIL wraps, to RGB as PIL's
 * convert("RGB") does: grayscale replicated; CMYK and YCCK read inverted
 * (PIL's "CMYK;I", Adobe's convention) and mapped with PIL's cmyk2rgb.
 * Like PIL, a file that ends before the image does is refused ("image file
 * is truncated"); corrupt-data warnings are not errors.
 *
 * libjpeg reports errors by longjmp. The only frame that calls setjmp
 * (read_jpeg) keeps its state in the caller's jpeg_context, so a longjmp
 * skips no destructor.
 */
#include "runtime/src/image/image.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
// jpeglib.h needs size_t and FILE first.
#include <jpeglib.h>

namespace sgc::runtime::image {
namespace {

struct jpeg_context {
  uint64_t limit = max_pixels;
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr err;
  jpeg_source_mgr src;
  std::jmp_buf jmp;
  char message[JMSG_LENGTH_MAX + 64];
  bool created = false;
  bool too_large = false;
  uint32_t width = 0, height = 0;
  int components = 0;
  bool cmyk = false;
  std::vector<uint8_t> pixels;
  std::vector<uint8_t> exif;
};

jpeg_context *context_of(j_common_ptr cinfo) {
  return static_cast<jpeg_context *>(cinfo->client_data);
}

void on_error_exit(j_common_ptr cinfo) {
  jpeg_context *ctx = context_of(cinfo);
  char text[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, text);
  std::snprintf(ctx->message, sizeof ctx->message, "%s", text);
  std::longjmp(ctx->jmp, 1);
}

void on_message(j_common_ptr, int) {}

void truncated(j_decompress_ptr cinfo) {
  jpeg_context *ctx = context_of(reinterpret_cast<j_common_ptr>(cinfo));
  std::snprintf(ctx->message, sizeof ctx->message,
                "file is truncated (the data ends before the image does)");
  std::longjmp(ctx->jmp, 1);
}

void src_init(j_decompress_ptr) {}
boolean src_fill(j_decompress_ptr cinfo) {
  truncated(cinfo);
  return FALSE;
}
void src_skip(j_decompress_ptr cinfo, long n) {
  if (n <= 0)
    return;
  if (size_t(n) > cinfo->src->bytes_in_buffer)
    truncated(cinfo);
  cinfo->src->next_input_byte += n;
  cinfo->src->bytes_in_buffer -= size_t(n);
}
void src_term(j_decompress_ptr) {}

/// 0 on success, 1 on an error (message in |ctx|), 2 when the header gives
/// dimensions past the limits.
int read_jpeg(jpeg_context *ctx, const uint8_t *data, size_t size) {
  ctx->cinfo.client_data = ctx;
  ctx->cinfo.err = jpeg_std_error(&ctx->err);
  ctx->err.error_exit = on_error_exit;
  ctx->err.emit_message = on_message;
  if (setjmp(ctx->jmp)) {
    if (ctx->created)
      jpeg_destroy_decompress(&ctx->cinfo);
    return 1;
  }
  jpeg_create_decompress(&ctx->cinfo);
  ctx->created = true;
  ctx->src.init_source = src_init;
  ctx->src.fill_input_buffer = src_fill;
  ctx->src.skip_input_data = src_skip;
  ctx->src.resync_to_restart = jpeg_resync_to_restart;
  ctx->src.term_source = src_term;
  ctx->src.next_input_byte = data;
  ctx->src.bytes_in_buffer = size;
  ctx->cinfo.src = &ctx->src;
  jpeg_save_markers(&ctx->cinfo, JPEG_APP0 + 1, 0xffff);
  jpeg_read_header(&ctx->cinfo, TRUE);
  ctx->width = ctx->cinfo.image_width;
  ctx->height = ctx->cinfo.image_height;
  if (!within_limits(ctx->width, ctx->height, ctx->limit)) {
    ctx->too_large = true;
    jpeg_destroy_decompress(&ctx->cinfo);
    return 2;
  }
  for (jpeg_saved_marker_ptr m = ctx->cinfo.marker_list; m; m = m->next)
    if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 &&
        std::memcmp(m->data, "Exif\0\0", 6) == 0) {
      ctx->exif.assign(m->data + 6, m->data + m->data_length);
      break;
    }
  switch (ctx->cinfo.jpeg_color_space) {
  case JCS_GRAYSCALE:
    ctx->cinfo.out_color_space = JCS_GRAYSCALE;
    break;
  case JCS_CMYK:
  case JCS_YCCK:
    ctx->cinfo.out_color_space = JCS_CMYK;
    ctx->cmyk = true;
    break;
  default:
    ctx->cinfo.out_color_space = JCS_RGB;
    break;
  }
  jpeg_start_decompress(&ctx->cinfo);
  ctx->components = ctx->cinfo.output_components;
  const size_t stride = size_t(ctx->cinfo.output_width) * ctx->components;
  ctx->pixels.resize(stride * ctx->cinfo.output_height);
  while (ctx->cinfo.output_scanline < ctx->cinfo.output_height) {
    JSAMPROW row = ctx->pixels.data() + stride * ctx->cinfo.output_scanline;
    jpeg_read_scanlines(&ctx->cinfo, &row, 1);
  }
  jpeg_finish_decompress(&ctx->cinfo);
  jpeg_destroy_decompress(&ctx->cinfo);
  return 0;
}

/// PIL's cmyk2rgb: 255 - k, less c scaled by it, with PIL's rounding.
uint8_t cmyk_channel(unsigned c, unsigned nk) {
  unsigned t = c * nk + 128;
  int v = int(nk) - int(((t >> 8) + t) >> 8);
  return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
}

} // namespace

status decode_jpeg(const uint8_t *data, size_t size, const std::string &label,
                   rgb_image *out, std::vector<uint8_t> *exif, uint64_t limit) {
  auto ctx = std::make_unique<jpeg_context>();
  ctx->limit = limit;
  int rc = read_jpeg(ctx.get(), data, size);
  if (rc == 2)
    return check_dimensions(ctx->width, ctx->height, label, limit);
  if (rc == 1)
    return bad_input_error(label + ": JPEG: " + ctx->message);
  const int ch = ctx->components;
  if (!(ch == 1 || ch == 3 || (ch == 4 && ctx->cmyk)))
    return internal_error(label + ": JPEG: unexpected output of " +
                          std::to_string(ch) + " components");
  out->width = int32_t(ctx->width);
  out->height = int32_t(ctx->height);
  const size_t n = size_t(ctx->width) * ctx->height;
  out->pixels.resize(n * 3);
  const uint8_t *s = ctx->pixels.data();
  uint8_t *o = out->pixels.data();
  for (size_t i = 0; i < n; ++i, o += 3) {
    if (ch == 1) {
      o[0] = o[1] = o[2] = s[i];
    } else if (ch == 3) {
      std::memcpy(o, s + i * 3, 3);
    } else {
      const uint8_t *p = s + i * 4;
      const unsigned nk = p[3]; // 255 - inverted k
      for (int c = 0; c < 3; ++c)
        o[c] = cmyk_channel(255u - p[c], nk);
    }
  }
  *exif = std::move(ctx->exif);
  return {};
}

} // namespace sgc::runtime::image
