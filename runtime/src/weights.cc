/*
 * weights.cc - checking a checkpoint against the manifest, zero-copy
 * binding, dummy weights.
 */
#include "runtime/src/weights.h"

#include "lib/support/dtype.h"
#include "runtime/src/compressed_tensors.h"
#include "runtime/src/cpu/cpu_features.h"
#include "runtime/src/dummy.h"
#include "runtime/src/thread_pool.h"
#include "runtime/src/weight_source.h"

#include <algorithm>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace sgc {
namespace runtime {

namespace {

constexpr uint64_t tensor_alignment = 64;
constexpr uint64_t progress_step = uint64_t{64} << 20;
/// Elements per dummy-fill work item.
constexpr uint64_t fill_block = uint64_t{1} << 18;

std::string tensor_signature(uint32_t dt, const int64_t *shape, size_t rank) {
  return std::string(dtype_name(static_cast<dtype>(dt))) + " " +
         shape_string(shape, rank);
}

/// Reads every page of [p, p + n) so later accesses do not fault.
void populate_range(const uint8_t *p, uint64_t n) {
  if (n == 0)
    return;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + n;
  if (::madvise(reinterpret_cast<void *>(begin), end - begin,
                MADV_POPULATE_READ) == 0)
    return;
  volatile uint8_t sink = 0;
  for (uintptr_t a = begin; a < end; a += page)
    sink ^= *reinterpret_cast<const volatile uint8_t *>(
        a < reinterpret_cast<uintptr_t>(p) ? reinterpret_cast<uintptr_t>(p)
                                           : a);
  (void)sink;
}

int thread_count(int32_t requested) {
  return requested > 0 ? requested : physical_core_count();
}

/// A unit of the weight copy (a huge page).
constexpr uint64_t copy_piece = uint64_t{2} << 20;
/// AUTO copies checkpoints of at least this many bytes (smaller ones gain
/// little from huge pages and stay zero copy).
constexpr uint64_t auto_copy_min_bytes = uint64_t{64} << 20;
/// A checkpoint that does not fit the model: notes per kind (missing,
/// mismatched) before the rest is counted.
constexpr size_t notes_per_kind = 10;

} // namespace

status bound_weights::bind(std::shared_ptr<model_library> model,
                           const char *path,
                           const sgc_weights_options_t &options,
                           std::shared_ptr<bound_weights> *out) {
  auto w = std::make_shared<bound_weights>();
  w->model_ = std::move(model);
  sgc_load_format_t format = options.format;
  if (format == SGC_LOAD_FORMAT_AUTO) {
    if (!path || !*path)
      return usage_error("no weights given")
          .note("give a checkpoint path, or use the dummy load format for "
                "random weights");
    format = SGC_LOAD_FORMAT_SAFETENSORS;
  }
  status st;
  switch (format) {
  case SGC_LOAD_FORMAT_SAFETENSORS:
    if (!path || !*path)
      return usage_error("the safetensors load format needs a weights path");
    st = w->bind_checkpoint(path, options);
    break;
  case SGC_LOAD_FORMAT_DUMMY:
    st = w->bind_dummy(options);
    break;
  default:
    return usage_error("unknown load format " +
                       std::to_string(static_cast<int>(format)));
  }
  if (!st.ok())
    return st;
  w->format_ = format;
  *out = std::move(w);
  return status();
}

status bound_weights::choose_placement(int requested,
                                       sgc_weights_placement_t *out) const {
  switch (requested) {
  case SGC_WEIGHTS_MAP:
  case SGC_WEIGHTS_COPY:
    *out = static_cast<sgc_weights_placement_t>(requested);
    return status();
  case SGC_WEIGHTS_AUTO: {
    // Copy where it pays and is safe: the CPU streams the weights every
    // decode step (a CUDA model uploads them), huge pages exist, and the
    // copy leaves half the available memory (the checkpoint's page cache
    // is counted as available; it is what the copy displaces).
    const uint64_t available = available_memory_bytes();
    const bool copy = model_->table().device == SGC_ABI_DEVICE_CPU &&
                      bytes_ >= auto_copy_min_bytes && huge_pages_available() &&
                      available > 0 && bytes_ <= available / 2;
    *out = copy ? SGC_WEIGHTS_COPY : SGC_WEIGHTS_MAP;
    return status();
  }
  }
  return usage_error("unknown weights placement " + std::to_string(requested));
}

status bound_weights::bind_checkpoint(const std::string &path,
                                      const sgc_weights_options_t &options) {
  status st = weight_source::open(path, &source_);
  if (!st.ok())
    return st;
  const sgc_model_v2_t &t = model_->table();

  std::vector<std::string> missing, mismatched;
  std::vector<source_tensor> found(t.num_tensors);
  sources_.assign(t.num_tensors, std::string());
  for (uint32_t i = 0; i < t.num_tensors; ++i) {
    const sgc_abi_tensor_t &m = t.tensors[i];
    const std::string name = m.name;
    const std::string want = tensor_signature(m.dtype, m.shape, m.rank);
    source_tensor &e = found[i];
    bool present = source_->find(name, &e);
    // Other spellings come from the manifest (the compiler knows the
    // family's checkpoint prefixes, and a GGUF's tensor names).
    std::vector<std::string> alts(m.alt_names, m.alt_names + m.num_alt_names);
    for (size_t a = 0; !present && a < alts.size(); ++a)
      present = source_->find(alts[a], &e);
    if (!present) {
      std::string text = "missing tensor " + quote(name) + " (" + want + ")";
      for (const std::string &a : alts)
        text += ", also looked for " + quote(a);
      missing.push_back(std::move(text));
      continue;
    }
    const bool same_dtype = static_cast<uint32_t>(e.type) == m.dtype;
    const bool same_shape =
        e.shape.size() == m.rank &&
        std::equal(e.shape.begin(), e.shape.end(), m.shape);
    if (!same_dtype || !same_shape) {
      std::string text = "tensor " + quote(e.name) + " in " + quote(e.file) +
                         ": the checkpoint has " + e.type_name + " " +
                         shape_string(e.shape.data(), e.shape.size()) +
                         ", the model expects " + want;
      if (!same_dtype && same_shape)
        text += " (the model was compiled for " +
                std::string(dtype_name(static_cast<dtype>(m.dtype))) +
                " weights here; recompile it for this file's encoding)";
      mismatched.push_back(std::move(text));
      continue;
    }
    sources_[i] = e.name;
  }
  if (!missing.empty() || !mismatched.empty()) {
    std::string counts;
    if (!missing.empty())
      counts += std::to_string(missing.size()) + " missing";
    if (!mismatched.empty())
      counts += std::string(counts.empty() ? "" : " and ") +
                std::to_string(mismatched.size()) + " mismatched";
    status err =
        mismatch_error("checkpoint " + quote(path) + " does not fit model " +
                       quote(t.model_id) + ": " + counts + " of " +
                       std::to_string(t.num_tensors) + " tensors");
    // The first few of each kind say what is wrong; a checkpoint of another
    // model would otherwise print hundreds of lines.
    auto add_notes = [&](std::vector<std::string> &lines, const char *kind) {
      for (size_t i = 0; i < lines.size() && i < notes_per_kind; ++i)
        err.note(std::move(lines[i]));
      if (lines.size() > notes_per_kind)
        err.note("... and " + std::to_string(lines.size() - notes_per_kind) +
                 " more " + kind + " tensors (sgc-run --inspect-weights " +
                 quote(path) + " lists what the checkpoint holds)");
    };
    add_notes(missing, "missing");
    add_notes(mismatched, "mismatched");
    return err;
  }

  // Pointers: in place unless the placement copies every tensor, one is
  // misaligned for its element type (a block encoding's kernels read bytes
  // and its f16 scales unaligned) or is packed from compressed-tensors
  // parts.
  for (uint32_t i = 0; i < t.num_tensors; ++i)
    bytes_ += found[i].bytes;
  // A C caller may put any int in the field; read it as one (loading an
  // out-of-range value through the C++ enum type is undefined).
  int requested;
  static_assert(sizeof requested == sizeof options.placement, "an int enum");
  std::memcpy(&requested, &options.placement, sizeof requested);
  st = choose_placement(requested, &placement_);
  if (!st.ok())
    return st;
  std::vector<uint32_t> to_copy;
  std::vector<uint64_t> copy_offsets;
  uint64_t copy_bytes = 0;
  pointers_.assign(t.num_tensors, nullptr);
  for (uint32_t i = 0; i < t.num_tensors; ++i) {
    const source_tensor &e = found[i];
    const uint32_t esize = dtype_is_block(e.type) ? 1 : dtype_size(e.type);
    if (placement_ == SGC_WEIGHTS_COPY || e.is_packed() ||
        e.file_offset % esize != 0) {
      to_copy.push_back(i);
      uint64_t a;
      if (!align_up(copy_bytes, tensor_alignment, &a))
        return internal_error("weight copy size overflows");
      copy_offsets.push_back(a);
      copy_bytes = a + e.bytes;
    } else {
      pointers_[i] = e.data;
    }
  }
  if (copy_bytes > 0) {
    if (placement_ == SGC_WEIGHTS_COPY) {
      st = check_memory_budget(copy_bytes, "a copy of the weights");
      if (!st.ok())
        return std::move(st).note(
            "bind them in place instead (sgc-run --weights-memory=map)");
    }
    st = anon_memory::allocate(copy_bytes, "a copy of the weights", &owned_,
                               /*huge_pages=*/placement_ == SGC_WEIGHTS_COPY);
    if (!st.ok())
      return st;
    // In huge-page pieces over the threads: the copy is bounded by memory
    // bandwidth, which one core does not reach.
    // A packed tensor's piece is whole blocks, packed from its parts.
    struct piece {
      const uint8_t *from;
      uint8_t *to;
      uint64_t bytes;
      const source_tensor *packed;
      uint64_t first_block;
    };
    std::vector<piece> pieces;
    for (size_t c = 0; c < to_copy.size(); ++c) {
      const source_tensor &e = found[to_copy[c]];
      uint8_t *to = owned_.data() + copy_offsets[c];
      pointers_[to_copy[c]] = to;
      const uint64_t unit = e.is_packed() ? dtype_block_bytes(e.type) : 1;
      const uint64_t step = copy_piece / unit * unit;
      for (uint64_t off = 0; off < e.bytes; off += step)
        pieces.push_back({e.data ? e.data + off : nullptr, to + off,
                          std::min(step, e.bytes - off),
                          e.is_packed() ? &e : nullptr, off / unit});
    }
    std::vector<char> bad(pieces.size(), 0);
    thread_pool pool(thread_count(options.num_threads));
    pool.run(static_cast<int64_t>(pieces.size()), [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) {
        const piece &q = pieces[static_cast<size_t>(k)];
        if (q.packed)
          bad[static_cast<size_t>(k)] = !pack_blocks(
              *q.packed, q.first_block,
              q.bytes / dtype_block_bytes(q.packed->type), q.to);
        else
          std::memcpy(q.to, q.from, static_cast<size_t>(q.bytes));
      }
    });
    for (size_t k = 0; k < pieces.size(); ++k)
      if (bad[k])
        return bad_input_error(
            "checkpoint " + quote(path) + ": tensor " +
            quote(pieces[k].packed->name) + " in " +
            quote(pieces[k].packed->file) +
            " holds an e4m3 NaN (0x7f or 0xff), which no FP8 checkpoint "
            "writer stores");
    copied_ = copy_bytes;
  }

  if (options.populate || options.progress) {
    uint64_t done = 0;
    if (options.progress)
      options.progress(options.progress_user, 0, bytes_);
    for (uint32_t i = 0; i < t.num_tensors; ++i) {
      const auto *p = static_cast<const uint8_t *>(pointers_[i]);
      const uint64_t n = found[i].bytes;
      for (uint64_t off = 0; off < n; off += progress_step) {
        const uint64_t len = std::min(progress_step, n - off);
        if (options.populate)
          populate_range(p + off, len);
        done += len;
        if (options.progress)
          options.progress(options.progress_user, done, bytes_);
      }
    }
  }
  return status();
}

status bound_weights::bind_dummy(const sgc_weights_options_t &options) {
  const sgc_model_v2_t &t = model_->table();
  std::vector<uint64_t> offsets(t.num_tensors);
  uint64_t total = 0;
  for (uint32_t i = 0; i < t.num_tensors; ++i) {
    if (!align_up(total, tensor_alignment, &offsets[i]))
      return internal_error("dummy weight size overflows");
    total = offsets[i] + t.tensors[i].bytes;
    bytes_ += t.tensors[i].bytes;
  }
  status st = check_memory_budget(total, "the dummy weights");
  if (!st.ok())
    return st;
  st = anon_memory::allocate(total, "dummy weights", &owned_,
                             /*huge_pages=*/true);
  placement_ = SGC_WEIGHTS_COPY;
  if (!st.ok())
    return st;
  copied_ = bytes_;

  struct work_item {
    uint32_t tensor;
    uint64_t first;
    uint64_t count;
  };
  std::vector<work_item> items;
  for (uint32_t i = 0; i < t.num_tensors; ++i) {
    // Fill units: elements, or blocks of a block encoding.
    const uint32_t esize = dtype_block_bytes(static_cast<dtype>(t.tensors[i].dtype));
    const uint64_t n = t.tensors[i].bytes / esize;
    for (uint64_t first = 0; first < n; first += fill_block)
      items.push_back({i, first, std::min(fill_block, n - first)});
  }
  std::vector<uint64_t> seeds(t.num_tensors);
  pointers_.resize(t.num_tensors);
  sources_.resize(t.num_tensors);
  for (uint32_t i = 0; i < t.num_tensors; ++i) {
    seeds[i] = dummy_seed(t.tensors[i].name);
    pointers_[i] = owned_.data() + offsets[i];
    sources_[i] = t.tensors[i].name;
  }

  thread_pool pool(thread_count(options.num_threads));
  const size_t batch = static_cast<size_t>(pool.size()) * 16;
  uint64_t done = 0;
  if (options.progress)
    options.progress(options.progress_user, 0, bytes_);
  for (size_t b = 0; b < items.size(); b += batch) {
    const size_t end = std::min(items.size(), b + batch);
    pool.run(static_cast<int64_t>(end - b), [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) {
        const work_item &w = items[b + static_cast<size_t>(k)];
        const sgc_abi_tensor_t &m = t.tensors[w.tensor];
        const uint32_t esize = dtype_block_bytes(static_cast<dtype>(m.dtype));
        fill_dummy(seeds[w.tensor], m.dtype, m.fill, w.first, w.count,
                   owned_.data() + offsets[w.tensor] + w.first * esize);
      }
    });
    for (size_t k = b; k < end; ++k)
      done += items[k].count * dtype_block_bytes(static_cast<dtype>(
                                    t.tensors[items[k].tensor].dtype));
    if (options.progress)
      options.progress(options.progress_user, done, bytes_);
  }
  return status();
}

status write_dummy_weights(const model_library &model, const std::string &path,
                           const sgc_weights_options_t &options) {
  const sgc_model_v2_t &t = model.table();
  for (uint32_t i = 0; i < t.num_tensors; ++i)
    if (dtype_is_block(static_cast<dtype>(t.tensors[i].dtype)))
      return usage_error("cannot write dummy weights for " +
                         quote(model.path()) + " as safetensors: tensor " +
                         quote(t.tensors[i].name) + " is " +
                         dtype_name(static_cast<dtype>(t.tensors[i].dtype)) +
                         ", which only GGUF files hold")
          .note("run it with --load-format=dummy instead");
  thread_pool pool(thread_count(options.num_threads));
  std::vector<safetensors::tensor_source> sources(t.num_tensors);
  for (uint32_t i = 0; i < t.num_tensors; ++i) {
    const sgc_abi_tensor_t &m = t.tensors[i];
    safetensors::tensor_source &s = sources[i];
    s.name = m.name;
    s.type = static_cast<dtype>(m.dtype);
    s.shape.assign(m.shape, m.shape + m.rank);
    const uint64_t seed = dummy_seed(m.name);
    const uint32_t esize = dtype_size(s.type);
    const uint32_t dt = m.dtype, fill = m.fill;
    s.generate = [&pool, seed, esize, dt, fill](uint64_t offset, void *dst,
                                                size_t bytes) -> status {
      const uint64_t first = offset / esize;
      const int64_t count = static_cast<int64_t>(bytes / esize);
      pool.run(count, [&](int64_t lo, int64_t hi) {
        fill_dummy(seed, dt, fill, first + static_cast<uint64_t>(lo),
                   static_cast<uint64_t>(hi - lo),
                   static_cast<uint8_t *>(dst) + lo * esize);
      });
      return status();
    };
  }
  std::map<std::string, std::string> metadata = {
      {"format", "pt"},
      {"sgc_dummy_weights", "1"},
      {"sgc_model_id", t.model_id},
  };
  safetensors::write_progress progress;
  if (options.progress)
    progress = [&](uint64_t done, uint64_t total) {
      options.progress(options.progress_user, done, total);
    };
  return safetensors::write(path, sources, metadata, progress);
}

} // namespace runtime
} // namespace sgc
