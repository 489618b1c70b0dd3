/*
 * memory.cc - anonymous mappings.
 */
#include "runtime/src/memory.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>

namespace sgc {
namespace runtime {

anon_memory::~anon_memory() {
  if (data_)
    ::munmap(data_, size_);
}

anon_memory::anon_memory(anon_memory &&other) noexcept
    : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

anon_memory &anon_memory::operator=(anon_memory &&other) noexcept {
  if (this != &other) {
    if (data_)
      ::munmap(data_, size_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

status anon_memory::allocate(uint64_t bytes, const std::string &what,
                             anon_memory *out) {
  *out = anon_memory();
  if (bytes == 0)
    return status();
  if (bytes > static_cast<uint64_t>(SIZE_MAX / 2))
    return internal_error("cannot allocate " + std::to_string(bytes) +
                          " bytes for " + what + ": too large");
  void *p = ::mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return internal_error("cannot allocate " + std::to_string(bytes) +
                          " bytes for " + what + ": " + std::strerror(errno));
  out->data_ = static_cast<uint8_t *>(p);
  out->size_ = bytes;
  return status();
}

} // namespace runtime
} // namespace sgc
