/*
 * image_errors_test.cc - broken image files, one table: each is refused by
 * sgc_image_load with SGC_STATUS_BAD_INPUT and one message that names the
 * file and what is wrong, and nothing crashes (libpng's and libjpeg's
 * longjmp error paths included). The files are made here from the
 * committed test images: truncated at many points, corrupted mid-stream,
 * headers claiming 100000x100000 or 65000x65000 pixels (refused before
 * any pixel buffer exists), other formats, empty and missing files.
 */
#include <sgc/runtime.h>

#include "test/unit/test_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

const std::string images_dir =
    std::string(SGC_SOURCE_DIR) + "/test/Inputs/images/";

uint32_t crc32(const std::string &bytes) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k)
      c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::string be32(uint32_t v) {
  return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

std::string png_chunk(const std::string &type, const std::string &data) {
  return be32(uint32_t(data.size())) + type + data + be32(crc32(type + data));
}

const std::string png_sig = "\x89PNG\r\n\x1a\n";

/// A PNG whose IHDR says |w| x |h| (8-bit RGB) and whose IDAT is |idat|.
std::string png_with_size(uint32_t w, uint32_t h,
                          const std::string &idat = "") {
  std::string ihdr = be32(w) + be32(h) + std::string("\x08\x02\x00\x00\x00", 5);
  return png_sig + png_chunk("IHDR", ihdr) + png_chunk("IDAT", idat) +
         png_chunk("IEND", "");
}

/// |png| with byte |at| of its first IDAT's data flipped and the CRC fixed,
/// so that libpng gets to zlib's error, not a CRC error.
std::string corrupt_idat(std::string png, size_t at) {
  size_t pos = 8;
  while (pos + 12 <= png.size()) {
    uint32_t len = uint32_t(uint8_t(png[pos])) << 24 |
                   uint32_t(uint8_t(png[pos + 1])) << 16 |
                   uint32_t(uint8_t(png[pos + 2])) << 8 | uint8_t(png[pos + 3]);
    if (png.compare(pos + 4, 4, "IDAT") == 0) {
      for (size_t i = at; i < at + 8 && i < len; ++i)
        png[pos + 8 + i] = char(png[pos + 8 + i] ^ 0x5a);
      const std::string crc = be32(crc32(png.substr(pos + 4, 4 + len)));
      png.replace(pos + 8 + len, 4, crc);
      return png;
    }
    pos += 12 + len;
  }
  ADD_FAILURE() << "no IDAT";
  return png;
}

/// Offset of the first JPEG marker 0xFF |m| in |jpg|.
size_t marker(const std::string &jpg, unsigned char m) {
  for (size_t i = 2; i + 1 < jpg.size(); ++i)
    if (uint8_t(jpg[i]) == 0xff && uint8_t(jpg[i + 1]) == m)
      return i;
  ADD_FAILURE() << "no marker " << int(m);
  return 0;
}

/// |jpg| with the SOF frame size set to |w| x |h|.
std::string jpeg_with_size(std::string jpg, uint16_t w, uint16_t h) {
  size_t sof = marker(jpg, 0xc0);
  jpg[sof + 5] = char(h >> 8);
  jpg[sof + 6] = char(h);
  jpg[sof + 7] = char(w >> 8);
  jpg[sof + 8] = char(w);
  return jpg;
}

struct broken_case {
  std::string name;
  std::string bytes;
  std::string expect; ///< in the message, after the path
};

std::vector<broken_case> broken_files() {
  const std::string png = sgc_test::read_file(images_dir + "rgb_37x53.png");
  const std::string jpg = sgc_test::read_file(images_dir + "rgb_61x43.jpg");
  const std::string prog =
      sgc_test::read_file(images_dir + "progressive_50x38.jpg");
  std::vector<broken_case> t = {
      {"empty.png", "", "file is empty"},
      {"text.png", "hello, I am not an image\n", "not a PNG or JPEG file"},
      {"anim.gif", "GIF89a\x01\x00\x01\x00\x80\x00\x00", "a GIF image"},
      {"bitmap.bmp", "BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00",
       "a BMP image"},
      {"image.webp", std::string("RIFF\x24\x00\x00\x00WEBPVP8 ", 16),
       "a WebP image"},
      {"scan.tif", std::string("II*\x00\x08\x00\x00\x00", 8), "a TIFF image"},
      {"signature-only.png", png_sig, "PNG: file is truncated"},
      {"huge.png", png_with_size(100000, 100000),
       "image is 100000x100000 pixels, more than the limit of 89478485 pixels"},
      {"wide.png", png_with_size(70000, 1),
       "image is 70000x1 pixels, more than the limit"},
      {"zero-width.png", png_with_size(0, 10), "PNG: "},
      {"no-data.png", png_with_size(4, 4), "PNG: "},
      {"bad-ihdr-crc.png",
       png_sig + png.substr(8, 25).replace(20, 1, "\x7f") + png.substr(33),
       "PNG: "},
      {"corrupt-idat.png", corrupt_idat(png, 40), "PNG: "},
      {"corrupt-zlib-header.png", corrupt_idat(png, 0), "PNG: "},
      {"huge.jpg", jpeg_with_size(jpg, 65000, 65000),
       "image is 65000x65000 pixels, more than the limit of 89478485 pixels"},
      {"zero-height.jpg", jpeg_with_size(jpg, 61, 0), "JPEG: Empty JPEG image"},
      {"soi-only.jpg", jpg.substr(0, 4), "JPEG: file is truncated"},
      {"no-scan.jpg", jpg.substr(0, marker(jpg, 0xda)),
       "JPEG: file is truncated"},
      {"bad-huffman.jpg",
       jpg.substr(0, marker(jpg, 0xc4) + 5) + std::string(16, '\xff') +
           jpg.substr(marker(jpg, 0xc4) + 21),
       "JPEG: "},
      {"sof-garbage.jpg",
       jpg.substr(0, marker(jpg, 0xc0) + 4) +
           std::string("\x00\x00\x00\x00\x00", 5) +
           jpg.substr(marker(jpg, 0xc0) + 9),
       "JPEG: Empty JPEG image"},
  };
  // Truncated at many points: inside the headers, the tables, the scan.
  for (size_t cut : {9u, 20u, 33u, 40u, 100u, 400u, 1500u, 3000u, 4000u})
    if (cut < png.size())
      t.push_back(
          {"cut-" + std::to_string(cut) + ".png", png.substr(0, cut), "PNG: "});
  for (size_t cut : {3u, 10u, 30u, 100u, 200u, 400u, 800u, 1200u, 1800u, 2200u})
    if (cut < jpg.size())
      t.push_back({"cut-" + std::to_string(cut) + ".jpg", jpg.substr(0, cut),
                   "JPEG: file is truncated"});
  for (size_t cut : {300u, 700u, 1000u, 1500u, 1900u})
    if (cut < prog.size())
      t.push_back({"progressive-cut-" + std::to_string(cut) + ".jpg",
                   prog.substr(0, cut), "JPEG: file is truncated"});
  return t;
}

struct image_deleter {
  void operator()(sgc_image_t *i) const { sgc_image_release(i); }
};

sgc_status_t *load(const std::string &path, sgc_image_family_t family) {
  sgc_image_options_t opt;
  sgc_image_options_default(family, &opt);
  sgc_image_t *raw = nullptr;
  sgc_status_t *st = sgc_image_load(path.c_str(), &opt, &raw);
  sgc_image_release(raw);
  return st;
}

TEST(ImageErrors, BrokenFilesAreRefusedNamingFileAndProblem) {
  sgc_test::temp_dir dir;
  const auto table = broken_files();
  EXPECT_GE(table.size(), 40u);
  for (const broken_case &c : table) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.file(c.name);
    sgc_test::write_file(path, c.bytes);
    for (sgc_image_family_t family :
         {SGC_IMAGE_FAMILY_GEMMA3, SGC_IMAGE_FAMILY_GEMMA4}) {
      sgc_status_t *st = load(path, family);
      ASSERT_NE(st, nullptr) << "accepted";
      EXPECT_EQ(sgc_status_code(st), SGC_STATUS_BAD_INPUT);
      const std::string msg = sgc_status_message(st);
      EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      sgc_status_free(st);
    }
  }
}

TEST(ImageErrors, MissingFileAndDirectory) {
  sgc_test::temp_dir dir;
  sgc_status_t *st = load(dir.file("absent.png"), SGC_IMAGE_FAMILY_GEMMA3);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_BAD_INPUT);
  EXPECT_EQ(std::string(sgc_status_message(st)),
            dir.file("absent.png") +
                ": cannot open: No such file or directory");
  sgc_status_free(st);
  st = load(dir.path(), SGC_IMAGE_FAMILY_GEMMA3);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_BAD_INPUT);
  EXPECT_NE(std::string(sgc_status_message(st)).find(dir.path() + ": "),
            std::string::npos);
  sgc_status_free(st);
}

// Corrupt entropy-coded data is only a warning to libjpeg (and to PIL, which
// decodes such files too): never a crash, and if refused, a clear message.
TEST(ImageErrors, CorruptJpegScanDoesNotCrash) {
  sgc_test::temp_dir dir;
  std::string jpg = sgc_test::read_file(images_dir + "rgb_61x43.jpg");
  const size_t sos = marker(jpg, 0xda);
  for (size_t off = sos + 20; off + 4 < jpg.size(); off += 97) {
    std::string bad = jpg;
    for (size_t i = off; i < off + 4; ++i)
      bad[i] = char(bad[i] ^ 0xa5);
    const std::string path = dir.file("scan-" + std::to_string(off) + ".jpg");
    sgc_test::write_file(path, bad);
    sgc_status_t *st = load(path, SGC_IMAGE_FAMILY_GEMMA4);
    if (st) {
      EXPECT_EQ(sgc_status_code(st), SGC_STATUS_BAD_INPUT);
      EXPECT_EQ(std::string(sgc_status_message(st)).rfind(path + ": ", 0), 0u);
    }
    sgc_status_free(st);
  }
}

TEST(ImageErrors, BadOptionsAreUsageErrors) {
  const std::string path = images_dir + "rgb_37x53.png";
  sgc_image_options_t opt;
  sgc_image_options_default(SGC_IMAGE_FAMILY_GEMMA4, &opt);
  opt.max_soft_tokens = 100;
  sgc_image_t *raw = nullptr;
  sgc_status_t *st = sgc_image_load(path.c_str(), &opt, &raw);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_USAGE);
  EXPECT_EQ(std::string(sgc_status_message(st)),
            "max soft tokens must be one of 70, 140, 280, 560, 1120 (Gemma 4's "
            "budgets), got 100");
  sgc_status_free(st);
  sgc_image_options_default(SGC_IMAGE_FAMILY_GEMMA3, &opt);
  opt.image_size = 0;
  st = sgc_image_load(path.c_str(), &opt, &raw);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_USAGE);
  sgc_status_free(st);
  opt.family = sgc_image_family_t(7);
  st = sgc_image_load(path.c_str(), &opt, &raw);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_USAGE);
  sgc_status_free(st);
  EXPECT_EQ(raw, nullptr);
}

} // namespace
