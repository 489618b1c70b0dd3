/*
 * pending_file.cc - write_all (pending_file is header-only).
 */
#include "lib/support/pending_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sgc {

status write_all(int fd, const void *data, size_t n, const std::string &path) {
  const auto *p = static_cast<const uint8_t *>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, std::min(n, size_t{1} << 30));
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return bad_input_error(quote(path) + ": cannot write: " +
                             std::strerror(w < 0 ? errno : EIO));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return status();
}


pending_file::pending_file(std::string path)
    : path_(std::move(path)),
      tmp_(path_ + ".tmp-" + std::to_string(::getpid())) {}

status pending_file::open() {
  struct stat st;
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return bad_input_error(quote(path_) + ": cannot write: " +
                           std::strerror(EISDIR));
  if (exists && !S_ISREG(st.st_mode)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    in_place_ = true;
    return fd_ < 0 ? cannot("open") : status();
  }
#ifdef O_TMPFILE
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path_.substr(0, slash);
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd_ >= 0) {
    anonymous_ = true;
    return status();
  }
#endif
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    return bad_input_error(quote(tmp_) +
                           ": cannot create: " + std::strerror(errno));
  named_ = true;
  return status();
}

status pending_file::commit() {
  if (anonymous_) {
    // Give the file a name (the temporary one: linkat cannot replace).
    ::unlink(tmp_.c_str());
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp_.c_str(),
                 AT_SYMLINK_FOLLOW) != 0 &&
        ::linkat(fd_, "", AT_FDCWD, tmp_.c_str(), AT_EMPTY_PATH) != 0)
      return cannot("link " + quote(tmp_));
    named_ = true;
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    return cannot("close");
  if (!in_place_ && ::rename(tmp_.c_str(), path_.c_str()) != 0)
    return cannot("rename " + quote(tmp_));
  named_ = false;
  return status();
}

void pending_file::abandon() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  if (named_)
    ::unlink(tmp_.c_str());
  named_ = false;
}

status pending_file::cannot(const std::string &what) {
  const int err = errno;
  abandon();
  return bad_input_error(quote(path_) + ": cannot " + what + ": " +
                         std::strerror(err));
}

} // namespace sgc
