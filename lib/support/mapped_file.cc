/*
 * mapped_file.cc - mmap of checkpoint files.
 */
#include "lib/support/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sgc {

namespace {

status sys_error(const std::string &path, const char *what, int err) {
  return bad_input_error(quote(path) + ": " + what + ": " + std::strerror(err));
}

/// Opens |path| for reading and checks that it is a regular file.
status open_regular(const std::string &path, int *out_fd, uint64_t *size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sys_error(path, "cannot open", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return sys_error(path, "cannot stat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return bad_input_error(quote(path) + ": not a regular file");
  }
  *out_fd = fd;
  *size = static_cast<uint64_t>(st.st_size);
  return status();
}

} // namespace

mapped_file::~mapped_file() { reset(); }

mapped_file::mapped_file(mapped_file &&other) noexcept
    : data_(other.data_), size_(other.size_), path_(std::move(other.path_)) {
  other.data_ = nullptr;
  other.size_ = 0;
}

mapped_file &mapped_file::operator=(mapped_file &&other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void mapped_file::reset() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

status mapped_file::open(const std::string &path, mapped_file *out) {
  out->reset();
  int fd = -1;
  uint64_t size = 0;
  status st = open_regular(path, &fd, &size);
  if (!st.ok())
    return st;
  out->path_ = path;
  if (size == 0) {
    ::close(fd);
    return status();
  }
  if (size > static_cast<uint64_t>(SIZE_MAX)) {
    ::close(fd);
    return bad_input_error(quote(path) + ": file too large to map");
  }
  void *p =
      ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED)
    return sys_error(path, "cannot map", err);
  out->data_ = static_cast<const uint8_t *>(p);
  out->size_ = size;
  return status();
}

status read_small_file(const std::string &path, uint64_t max_bytes,
                       std::string *out) {
  int fd = -1;
  uint64_t size = 0;
  status st = open_regular(path, &fd, &size);
  if (!st.ok())
    return st;
  if (size > max_bytes) {
    ::close(fd);
    return bad_input_error(quote(path) + ": file is " + std::to_string(size) +
                           " bytes, more than the limit of " +
                           std::to_string(max_bytes));
  }
  out->assign(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t n = ::read(fd, &(*out)[done], out->size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      return sys_error(path, "cannot read", err);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return status();
}

void drop_pages(const uint8_t *data, uint64_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin)
    ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

int path_kind(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return 0;
  if (S_ISREG(st.st_mode))
    return 1;
  if (S_ISDIR(st.st_mode))
    return 2;
  return 3;
}

} // namespace sgc
