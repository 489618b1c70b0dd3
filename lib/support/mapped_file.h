/*
 * mapped_file.h - a read-only memory map of a whole file (RAII).
 */
#ifndef SGC_LIB_SUPPORT_MAPPED_FILE_H
#define SGC_LIB_SUPPORT_MAPPED_FILE_H

#include "lib/support/status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace sgc {

class mapped_file {
public:
  mapped_file() = default;
  ~mapped_file();
  mapped_file(const mapped_file &) = delete;
  mapped_file &operator=(const mapped_file &) = delete;
  mapped_file(mapped_file &&other) noexcept;
  mapped_file &operator=(mapped_file &&other) noexcept;

  /// Maps |path| read-only (MAP_PRIVATE; pages load on first touch). An
  /// empty file maps to data() == nullptr, size() == 0. Errors name the path
  /// and the system reason; code bad_input.
  static status open(const std::string &path, mapped_file *out);

  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string &path() const { return path_; }

private:
  void reset();

  const uint8_t *data_ = nullptr;
  uint64_t size_ = 0;
  std::string path_;
};

/// Gives back the pages of a read-only mapping that [data, data + bytes)
/// touches, wholly inside it: a pass over a file bigger than memory keeps
/// only what it still needs resident (they are read again if touched).
void drop_pages(const uint8_t *data, uint64_t bytes);

/// Reads a whole (small) file into |out|, refusing files above |max_bytes|.
status read_small_file(const std::string &path, uint64_t max_bytes,
                       std::string *out);

/// Kind of filesystem entry at |path|: 0 absent, 1 regular file,
/// 2 directory, 3 other.
int path_kind(const std::string &path);

} // namespace sgc

#endif // SGC_LIB_SUPPORT_MAPPED_FILE_H
