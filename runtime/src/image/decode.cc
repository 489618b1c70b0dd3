/*
 * decode.cc - image files to 8-bit RGB: reading, format sniffing, the size
 * limits, and the EXIF orientation (transformers' load_image applies it).
 */
#include "runtime/src/image/image.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace sgc::runtime::image {

status check_dimensions(int64_t width, int64_t height,
                        const std::string &label, uint64_t limit) {
  if (within_limits(width, height, limit))
    return {};
  if (width <= 0 || height <= 0)
    return bad_input_error(label + ": the header gives an empty image (" +
                           std::to_string(width) + "x" +
                           std::to_string(height) + ")");
  return bad_input_error(label + ": image is " + std::to_string(width) + "x" +
                         std::to_string(height) +
                         " pixels, more than the limit of " +
                         std::to_string(std::min(limit, max_pixels)) +
                         " pixels (" +
                         std::to_string(max_side) + " a side)");
}

status decode_image(const uint8_t *data, size_t size, const std::string &label,
                    rgb_image *out, uint64_t limit) {
  static const uint8_t png_magic[8] = {0x89, 'P',  'N',  'G',
                                       '\r', '\n', 0x1a, '\n'};
  if (size == 0)
    return bad_input_error(label + ": file is empty");
  std::vector<uint8_t> exif;
  rgb_image img;
  if (size >= 8 && std::memcmp(data, png_magic, 8) == 0) {
    if (status st = decode_png(data, size, label, &img, &exif, limit);
        !st.ok())
      return st;
  } else if (size >= 3 && data[0] == 0xff && data[1] == 0xd8 &&
             data[2] == 0xff) {
    if (status st = decode_jpeg(data, size, label, &img, &exif, limit);
        !st.ok())
      return st;
  } else {
    const char *what = "not a PNG or JPEG file";
    if (size >= 6 && (std::memcmp(data, "GIF87a", 6) == 0 ||
                      std::memcmp(data, "GIF89a", 6) == 0))
      what = "a GIF image; only PNG and JPEG are supported";
    else if (size >= 2 && data[0] == 'B' && data[1] == 'M')
      what = "a BMP image; only PNG and JPEG are supported";
    else if (size >= 12 && std::memcmp(data, "RIFF", 4) == 0 &&
             std::memcmp(data + 8, "WEBP", 4) == 0)
      what = "a WebP image; only PNG and JPEG are supported";
    else if (size >= 4 && (std::memcmp(data, "II*\0", 4) == 0 ||
                           std::memcmp(data, "MM\0*", 4) == 0))
      what = "a TIFF image; only PNG and JPEG are supported";
    return bad_input_error(label + ": " + what);
  }
  apply_orientation(exif_orientation(exif), &img);
  *out = std::move(img);
  return {};
}

status decode_image_file(const std::string &path, rgb_image *out) {
  std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "rb"),
                                           &std::fclose);
  if (!f)
    return bad_input_error(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    if (bytes.size() + n > max_file_bytes)
      return bad_input_error(path + ": file is larger than " +
                             std::to_string(max_file_bytes) + " bytes");
    bytes.insert(bytes.end(), buf, buf + n);
  }
  if (std::ferror(f.get()))
    return bad_input_error(path + ": read error: " + std::strerror(errno));
  return decode_image(bytes.data(), bytes.size(), path, out);
}

//===----------------------------------------------------------------------===//
// EXIF orientation
//===----------------------------------------------------------------------===//

int exif_orientation(const std::vector<uint8_t> &exif) {
  const uint8_t *p = exif.data();
  size_t n = exif.size();
  if (n >= 6 && std::memcmp(p, "Exif\0\0", 6) == 0) {
    p += 6;
    n -= 6;
  }
  if (n < 8)
    return 1;
  bool le;
  if (p[0] == 'I' && p[1] == 'I')
    le = true;
  else if (p[0] == 'M' && p[1] == 'M')
    le = false;
  else
    return 1;
  auto u16 = [&](size_t at) -> uint32_t {
    return le ? p[at] | p[at + 1] << 8 : p[at] << 8 | p[at + 1];
  };
  auto u32 = [&](size_t at) -> uint32_t {
    return le ? u16(at) | u16(at + 2) << 16 : u16(at) << 16 | u16(at + 2);
  };
  if (u16(2) != 42)
    return 1;
  uint64_t ifd = u32(4);
  if (ifd + 2 > n)
    return 1;
  uint32_t count = u16(ifd);
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t e = ifd + 2 + uint64_t(i) * 12;
    if (e + 12 > n)
      return 1;
    // Orientation: tag 0x0112, SHORT, one value in the entry itself.
    if (u16(e) == 0x0112 && u16(e + 2) == 3) {
      uint32_t v = u16(e + 8);
      return v >= 1 && v <= 8 ? int(v) : 1;
    }
  }
  return 1;
}

void apply_orientation(int orientation, rgb_image *img) {
  if (orientation <= 1 || orientation > 8)
    return;
  const int64_t w = img->width, h = img->height;
  const bool swap = orientation >= 5; // transpose, rotations by 90 degrees
  const int64_t ow = swap ? h : w, oh = swap ? w : h;
  std::vector<uint8_t> out(size_t(ow * oh * 3));
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x) {
      int64_t sx = 0, sy = 0; // source pixel of output (x, y)
      switch (orientation) {
      case 2: // mirror
        sx = w - 1 - x;
        sy = y;
        break;
      case 3: // 180 degrees
        sx = w - 1 - x;
        sy = h - 1 - y;
        break;
      case 4: // flip
        sx = x;
        sy = h - 1 - y;
        break;
      case 5: // transpose
        sx = y;
        sy = x;
        break;
      case 6: // 90 clockwise
        sx = y;
        sy = h - 1 - x;
        break;
      case 7: // transverse
        sx = w - 1 - y;
        sy = h - 1 - x;
        break;
      case 8: // 90 counter-clockwise
        sx = w - 1 - y;
        sy = x;
        break;
      }
      std::memcpy(&out[size_t((y * ow + x) * 3)],
                  &img->pixels[size_t((sy * w + sx) * 3)], 3);
    }
  img->width = int32_t(ow);
  img->height = int32_t(oh);
  img->pixels = std::move(out);
}

} // namespace sgc::runtime::image
