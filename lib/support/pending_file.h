/*
 * pending_file.h - a file that appears whole or not at all.
 *
 * What every writer of a big output shares (safetensors, GGUF): the bytes
 * go to a temporary next to the target and are renamed over it only when
 * complete, so a failure or a kill never leaves a half-written file and
 * never destroys the file that was there.
 */
#ifndef SGC_LIB_SUPPORT_PENDING_FILE_H
#define SGC_LIB_SUPPORT_PENDING_FILE_H

#include "lib/support/status.h"

#include <cstddef>
#include <string>

namespace sgc {

/// Writes all |n| bytes of |data| to |fd|, retrying short writes; errors
/// name |path|.
status write_all(int fd, const void *data, size_t n, const std::string &path);

/// The file being written. A reader of |path| sees the old file or the new
/// one, never a part: the bytes go to an unnamed file in |path|'s directory
/// (O_TMPFILE: nothing is left behind if the process dies) that is linked
/// and renamed over |path| when whole; to a named temporary next to it where
/// O_TMPFILE is not supported; to |path| itself when that exists and is not a
/// regular file (/dev/null).
class pending_file {
public:
  explicit pending_file(std::string path);
  ~pending_file() { abandon(); }
  pending_file(const pending_file &) = delete;
  pending_file &operator=(const pending_file &) = delete;

  int fd() const { return fd_; }
  status open();
  /// Puts the whole file at |path|.
  status commit();
  /// Removes what was written (nothing of an in-place write).
  void abandon();

private:
  status cannot(const std::string &what);

  std::string path_, tmp_;
  int fd_ = -1;
  bool in_place_ = false, anonymous_ = false, named_ = false;
};

} // namespace sgc

#endif // SGC_LIB_SUPPORT_PENDING_FILE_H
