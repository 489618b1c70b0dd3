/*
 * writer.cc - writing safetensors files (test fixtures, dummy weights,
 * dumped logits).
 */
#include "lib/safetensors/safetensors.h"

#include "lib/support/pending_file.h"
#include "lib/support/utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <numeric>
#include <sys/stat.h>
#include <unistd.h>

namespace sgc {
namespace safetensors {

namespace {

using json = nlohmann::json;

constexpr size_t chunk_bytes = size_t{8} << 20;

} // namespace

status write(const std::string &path, const std::vector<tensor_source> &tensors,
             const std::map<std::string, std::string> &metadata,
             const write_progress &progress) {
  const std::string where = quote(path);
  std::vector<uint64_t> sizes(tensors.size());
  std::vector<std::string_view> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const tensor_source &t = tensors[i];
    const std::string tw = where + ": tensor " + quote(t.name);
    if (t.name == "__metadata__" || !utf8_valid(t.name) ||
        t.name.find('\0') != std::string::npos)
      return usage_error(tw + ": not a valid tensor name");
    if (dtype_size(t.type) == 0)
      return usage_error(tw + ": invalid dtype");
    uint64_t count = 0;
    if (!element_count(t.shape, &count) ||
        __builtin_mul_overflow(count, uint64_t{dtype_size(t.type)}, &sizes[i]))
      return usage_error(tw + ": invalid shape " + shape_string(t.shape));
    if (sizes[i] > 0 && !t.data && !t.generate)
      return usage_error(tw + ": no data");
    names.push_back(t.name);
  }
  std::sort(names.begin(), names.end());
  if (std::adjacent_find(names.begin(), names.end()) != names.end())
    return usage_error(
        where + ": tensor " +
        quote(std::string(*std::adjacent_find(names.begin(), names.end()))) +
        " given twice");
  for (const auto &kv : metadata)
    if (!utf8_valid(kv.first) || !utf8_valid(kv.second))
      return usage_error(where + ": metadata is not valid UTF-8");

  // Layout: larger elements first, then by name.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const uint32_t sa = dtype_size(tensors[a].type);
    const uint32_t sb = dtype_size(tensors[b].type);
    if (sa != sb)
      return sa > sb;
    return tensors[a].name < tensors[b].name;
  });

  json h = json::object();
  if (!metadata.empty()) {
    json m = json::object();
    for (const auto &kv : metadata)
      m[kv.first] = kv.second;
    h["__metadata__"] = std::move(m);
  }
  uint64_t offset = 0;
  for (size_t i : order) {
    const tensor_source &t = tensors[i];
    json e = json::object();
    e["dtype"] = dtype_name(t.type);
    e["shape"] = t.shape;
    e["data_offsets"] = {offset, offset + sizes[i]};
    h[t.name] = std::move(e);
    offset += sizes[i];
  }
  const uint64_t total = offset;
  std::string text = h.dump();
  text.append((8 - text.size() % 8) % 8, ' ');

  pending_file out(path);
  if (status st = out.open(); !st.ok())
    return st;
  // On any failure below, |out| removes the partial file.
  const int fd = out.fd();

  uint8_t len[8];
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    len[i] = static_cast<uint8_t>(n >> (8 * i));
  status st = write_all(fd, len, 8, path);
  if (st.ok())
    st = write_all(fd, text.data(), text.size(), path);
  if (!st.ok())
    return st;

  std::vector<uint8_t> buf;
  uint64_t done = 0;
  if (progress)
    progress(0, total);
  for (size_t i : order) {
    const tensor_source &t = tensors[i];
    const uint32_t esize = dtype_size(t.type);
    uint64_t off = 0;
    while (off < sizes[i]) {
      size_t n_bytes = static_cast<size_t>(
          std::min<uint64_t>(sizes[i] - off, chunk_bytes / esize * esize));
      if (t.data) {
        st = write_all(fd, static_cast<const uint8_t *>(t.data) + off, n_bytes,
                       path);
      } else {
        buf.resize(n_bytes);
        st = t.generate(off, buf.data(), n_bytes);
        if (st.ok())
          st = write_all(fd, buf.data(), n_bytes, path);
      }
      if (!st.ok())
        return st;
      off += n_bytes;
      done += n_bytes;
      if (progress)
        progress(done, total);
    }
  }
  return out.commit();
}

} // namespace safetensors
} // namespace sgc
