/*
 * png_decoder.cc - PNG through Debian's libpng 1.6, to RGB as PIL's
 * convert("RGB") does: alpha channels dropped (not composited), palettes
 * and low bit depths expanded, 16-bit samples cut to their high byte,
 * except 16-bit grayscale (PIL mode "I;16"), which PIL clamps to 255.
 * No gamma or colour management (PIL applies none).
 *
 * A tRNS chunk (a transparent colour, not an alpha channel) survives PIL's
 * convert("RGB") as info["transparency"], and the processors' own
 * convert_to_rgb then composites onto white: every pixel of that colour
 * becomes white. Which colour PIL keeps depends on the PNG's type, quirks
 * included (transparent_key below); a palette tRNS with partial alphas is
 * dropped.
 *
 * libpng reports errors by longjmp. The only frame that calls setjmp
 * (read_png) holds trivially destructible locals; everything it fills is
 * owned by its caller, so a longjmp skips no destructor.
 */
#include "runtime/src/image/image.h"

#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>

namespace sgc::runtime::image {
namespace {

struct png_source {
  const uint8_t *data;
  size_t size;
  size_t pos;
  char message[256]; ///< libpng's error message, or ours
};

struct png_raw {
  uint64_t limit = max_pixels;
  uint32_t width = 0, height = 0;
  int color_type = 0; ///< as stored in IHDR
  int channels = 0;   ///< after the transforms
  int bit_depth = 0;  ///< 8 or 16 after the transforms
  size_t rowbytes = 0;
  bool too_large = false;
  bool rows_done = false;
  bool has_key = false; ///< pixels of colour key[] turn white
  uint8_t key[3] = {0, 0, 0};
  std::vector<uint8_t> pixels;
  std::vector<png_bytep> rows;
  std::vector<uint8_t> exif;
};

void on_error(png_structp png, png_const_charp msg) {
  auto *src = static_cast<png_source *>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof src->message, "%s", msg);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

void on_read(png_structp png, png_bytep out, size_t n) {
  auto *src = static_cast<png_source *>(png_get_io_ptr(png));
  if (n > src->size - src->pos)
    png_error(png, "file is truncated");
  std::memcpy(out, src->data + src->pos, n);
  src->pos += n;
}

void copy_exif(png_structp png, png_infop info, png_raw *raw) {
  png_uint_32 n = 0;
  png_bytep p = nullptr;
  if (raw->exif.empty() && png_get_eXIf_1(png, info, &n, &p) && p && n)
    raw->exif.assign(p, p + n);
}

/// The colour PIL's convert("RGB") keeps as info["transparency"] for a
/// tRNS chunk (PngImagePlugin + Image.convert), as 8-bit RGB:
///  - palette: only a tRNS of one 0x00 among 0xff entries (PIL's "simple
///    palette"), the colour of that index;
///  - 8-bit gray g: (g, g, g); 2- and 4-bit gray: the raw, unscaled g;
///  - 1-bit gray (PIL mode "1", stored as g * 255) and 16-bit gray (mode
///    "I;16", g): an int, which RGB conversion reads as 0xBBGGRR;
///  - RGB: each component cut to its low byte.
void transparent_key(png_structp png, png_infop info, png_raw *raw) {
  png_bytep alpha = nullptr;
  int count = 0;
  png_color_16p color = nullptr;
  if (!png_get_valid(png, info, PNG_INFO_tRNS) ||
      !png_get_tRNS(png, info, &alpha, &count, &color))
    return;
  const int depth = png_get_bit_depth(png, info);
  auto set = [&](unsigned r, unsigned g, unsigned b) {
    raw->has_key = true;
    raw->key[0] = uint8_t(r & 0xff);
    raw->key[1] = uint8_t(g & 0xff);
    raw->key[2] = uint8_t(b & 0xff);
  };
  if (raw->color_type == PNG_COLOR_TYPE_PALETTE) {
    int zero = -1;
    for (int i = 0; i < count; ++i) {
      if (alpha[i] == 0 && zero < 0)
        zero = i;
      else if (alpha[i] != 0xff)
        return;
    }
    png_colorp palette = nullptr;
    int entries = 0;
    if (zero >= 0 && png_get_PLTE(png, info, &palette, &entries) &&
        zero < entries)
      set(palette[zero].red, palette[zero].green, palette[zero].blue);
  } else if (raw->color_type == PNG_COLOR_TYPE_GRAY && color) {
    const unsigned g = color->gray;
    if (depth == 1 || depth == 16) {
      const unsigned t = depth == 1 ? g * 255 : g;
      set(t, t >> 8, t >> 16);
    } else {
      set(g, g, g);
    }
  } else if (raw->color_type == PNG_COLOR_TYPE_RGB && color) {
    set(color->red, color->green, color->blue);
  }
}

/// 0 on success, 1 on a libpng error (message in |src|), 2 when the header
/// gives dimensions past the limits, -1 when libpng cannot start.
int read_png(png_source *src, png_raw *raw) {
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, src, on_error, on_warning);
  if (!png)
    return -1;
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return -1;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return 1;
  }
  png_set_read_fn(png, src, on_read);
  // Our own limit applies below; libpng's default (1,000,000 a side) would
  // let 100000x100000 through to the allocation.
  png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
  png_read_info(png, info);
  raw->width = png_get_image_width(png, info);
  raw->height = png_get_image_height(png, info);
  if (!within_limits(raw->width, raw->height, raw->limit)) {
    raw->too_large = true;
    png_destroy_read_struct(&png, &info, nullptr);
    return 2;
  }
  raw->color_type = png_get_color_type(png, info);
  transparent_key(png, info, raw);
  if (raw->color_type == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (raw->color_type == PNG_COLOR_TYPE_GRAY &&
      png_get_bit_depth(png, info) < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  raw->channels = png_get_channels(png, info);
  raw->bit_depth = png_get_bit_depth(png, info);
  raw->rowbytes = png_get_rowbytes(png, info);
  copy_exif(png, info, raw);
  raw->pixels.resize(raw->rowbytes * raw->height);
  raw->rows.resize(raw->height);
  for (uint32_t y = 0; y < raw->height; ++y)
    raw->rows[y] = raw->pixels.data() + size_t(y) * raw->rowbytes;
  png_read_image(png, raw->rows.data());
  raw->rows_done = true;
  // Chunks after the image data may hold the EXIF block. A broken tail
  // after complete pixels is ignored, as PIL does.
  png_read_end(png, info);
  copy_exif(png, info, raw);
  png_destroy_read_struct(&png, &info, nullptr);
  return 0;
}

} // namespace

status decode_png(const uint8_t *data, size_t size, const std::string &label,
                  rgb_image *out, std::vector<uint8_t> *exif, uint64_t limit) {
  png_source src{data, size, 0, {0}};
  png_raw raw;
  raw.limit = limit;
  int rc = read_png(&src, &raw);
  if (rc == -1)
    return internal_error(label + ": libpng could not start");
  if (rc == 2)
    return check_dimensions(raw.width, raw.height, label, limit);
  if (rc == 1 && !raw.rows_done)
    return bad_input_error(label + ": PNG: " + src.message);
  const int ch = raw.channels;
  const bool wide = raw.bit_depth == 16;
  if ((ch < 1 || ch > 4) || (raw.bit_depth != 8 && !wide) ||
      raw.rowbytes < size_t(raw.width) * ch * (wide ? 2 : 1))
    return internal_error(label +
                          ": PNG: unexpected layout after libpng's "
                          "transforms (" +
                          std::to_string(ch) + " channels of " +
                          std::to_string(raw.bit_depth) + " bits)");
  out->width = int32_t(raw.width);
  out->height = int32_t(raw.height);
  out->pixels.resize(size_t(raw.width) * raw.height * 3);
  // 16-bit grayscale without alpha is PIL's "I;16": convert("RGB") clamps.
  const bool clamp16 = wide && ch == 1;
  for (uint32_t y = 0; y < raw.height; ++y) {
    const uint8_t *row = raw.rows[y];
    uint8_t *o = out->pixels.data() + size_t(y) * raw.width * 3;
    for (uint32_t x = 0; x < raw.width; ++x, o += 3) {
      uint8_t v[4];
      for (int c = 0; c < ch; ++c) {
        const uint8_t *s = row + (size_t(x) * ch + c) * (wide ? 2 : 1);
        if (!wide)
          v[c] = s[0];
        else if (clamp16)
          v[c] = uint8_t(std::min<unsigned>(255u, unsigned(s[0]) << 8 | s[1]));
        else
          v[c] = s[0];
      }
      if (ch <= 2) {
        o[0] = o[1] = o[2] = v[0];
      } else {
        o[0] = v[0];
        o[1] = v[1];
        o[2] = v[2];
      }
    }
  }
  if (raw.has_key)
    for (uint8_t *o = out->pixels.data(), *e = o + out->pixels.size(); o < e;
         o += 3)
      if (o[0] == raw.key[0] && o[1] == raw.key[1] && o[2] == raw.key[2])
        o[0] = o[1] = o[2] = 255;
  *exif = std::move(raw.exif);
  return {};
}

} // namespace sgc::runtime::image
