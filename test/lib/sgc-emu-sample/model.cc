/*
 * model.cc - opening a compiled CUDA model for sgc-emu-sample.
 */
#include "test/lib/sgc-emu-sample/model.h"

#include <dlfcn.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>

namespace emu_sample {

namespace {
[[noreturn]] void spec_error(const std::string &kernel, const std::string &key,
                             const std::string &why) {
  std::fprintf(stderr, "sgc-emu-sample: kernel %s: spec entry '%s' %s\n",
               kernel.c_str(), key.c_str(), why.c_str());
  std::exit(1);
}

uint64_t dtype_bytes(uint32_t dtype) {
  switch (dtype) {
  case SGC_ABI_DTYPE_BF16:
  case SGC_ABI_DTYPE_F16:
    return 2;
  case SGC_ABI_DTYPE_F32:
  case SGC_ABI_DTYPE_I32:
    return 4;
  default:
    return 8;
  }
}
} // namespace

double kernel_spec::number(const std::string &kernel,
                           const std::string &key) const {
  auto it = fields.find(key);
  if (it == fields.end())
    spec_error(kernel, key, "is missing");
  char *end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end)
    spec_error(kernel, key, "is not a number: " + it->second);
  return v;
}

std::vector<int64_t> kernel_spec::integers(const std::string &kernel,
                                           const std::string &key) const {
  auto it = fields.find(key);
  if (it == fields.end())
    spec_error(kernel, key, "is missing");
  std::vector<int64_t> out;
  std::stringstream in(it->second);
  std::string item;
  while (std::getline(in, item, ',')) {
    char *end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end)
      spec_error(kernel, key, "is not a list of integers: " + it->second);
    out.push_back(v);
  }
  return out;
}

std::string kernel_spec::text(const std::string &kernel,
                              const std::string &key) const {
  auto it = fields.find(key);
  if (it == fields.end())
    spec_error(kernel, key, "is missing");
  return it->second;
}

bool read_specs(const std::string &path,
                std::map<std::string, kernel_spec> *out, std::string *error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot be read";
    return false;
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::stringstream words(line);
    std::string name, field;
    if (!(words >> name))
      continue;
    kernel_spec s;
    while (words >> field) {
      const size_t eq = field.find('=');
      if (eq == std::string::npos || eq == 0) {
        *error = path + ":" + std::to_string(number) + ": '" + field +
                 "' is not key=value";
        return false;
      }
      s.fields[field.substr(0, eq)] = field.substr(eq + 1);
    }
    (*out)[name] = std::move(s);
  }
  if (out->empty()) {
    *error = path + ": no kernel specs";
    return false;
  }
  return true;
}

lazy_memory::lazy_memory(uint64_t bytes) : bytes_(bytes) {
  void *p = mmap(nullptr, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::bad_alloc();
  data_ = p;
}

lazy_memory::~lazy_memory() { munmap(data_, bytes_ ? bytes_ : 1); }

bool model::open(const std::string &path, std::string *error) {
  path_ = path;
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char *why = dlerror();
    *error = path + ": cannot be loaded: " + (why ? why : "dlopen failed");
    return false;
  }
  auto query =
      reinterpret_cast<sgc_abi_query_fn_t>(dlsym(handle_, "sgc_model_query"));
  const sgc_abi_header_t *h =
      query ? query(SGC_ABI_VERSION_MAJOR, SGC_ABI_VERSION_MINOR) : nullptr;
  if (!h || h->magic != SGC_ABI_MAGIC || h->version_major != 2 ||
      h->struct_size < SGC_ABI_MODEL_V2_2_SIZE) {
    *error = path + ": not an sgc model of ABI 2.2 or later";
    return false;
  }
  table_ = reinterpret_cast<const sgc_model_v2_t *>(h);
  emu_ = table_->cuda_emu;
  if (table_->device != SGC_ABI_DEVICE_CUDA || !emu_) {
    *error = path + ": not a CUDA model with emulator kernels (compile it "
                    "with --target=cuda:sm_90a)";
    return false;
  }
  for (uint32_t v = 0; v < table_->num_variants; ++v)
    if (emu_->variant &&
        std::strcmp(table_->variants[v].name, emu_->variant) == 0)
      variant_ = &table_->variants[v];
  if (!variant_ || emu_->num_kernels != variant_->num_functions) {
    *error = path + ": the emulator's kernels match no CUDA variant";
    return false;
  }
  return true;
}

const char *model::kernel_name(const sgc_abi_step_t &s) const {
  return variant_->kernels[s.function].name;
}

sgc_abi_emu_kernel_fn_t model::kernel_fn(const sgc_abi_step_t &s) const {
  return emu_->kernels[s.function];
}

uint32_t model::static_shared_bytes(const sgc_abi_step_t &s) const {
  return emu_->static_shared_bytes ? emu_->static_shared_bytes[s.function] : 0;
}

const sgc_abi_phase_t *model::phase(uint32_t kind) const {
  for (uint32_t p = 0; p < table_->num_phases; ++p)
    if (table_->phases[p].kind == kind)
      return &table_->phases[p];
  return nullptr;
}

std::vector<operand> model::operands(const sgc_abi_step_t &s,
                                     int64_t full_slots, int64_t tokens) const {
  const sgc_model_v2_t &t = *table_;
  std::vector<operand> out;
  // One block per distinct buffer: an operand passed twice (V read from
  // the K cache) is the same memory.
  std::map<std::string, std::shared_ptr<lazy_memory>> by_key;
  for (uint32_t j = 0; j < s.num_operands; ++j) {
    const sgc_abi_operand_t &o = t.operands[s.first_operand + j];
    operand op;
    op.abi = &o;
    std::string key = std::to_string(o.kind) + ":" + std::to_string(o.index) +
                      ":" + std::to_string(o.offset);
    switch (o.kind) {
    case SGC_ABI_OPERAND_TOKENS: // int32 [n_tokens]
      op.what = "the token ids";
      op.shape = {tokens};
      op.dtype = SGC_ABI_DTYPE_I32;
      break;
    case SGC_ABI_OPERAND_POSITION:
      op.what = "the step state";
      op.shape = {4};
      op.dtype = SGC_ABI_DTYPE_I64;
      break;
    case SGC_ABI_OPERAND_WEIGHT: {
      const sgc_abi_tensor_t &w = t.tensors[o.index];
      op.what = std::string("weight ") + w.name;
      op.shape.assign(w.shape, w.shape + w.rank);
      op.dtype = w.dtype;
      break;
    }
    case SGC_ABI_OPERAND_K_CACHE:
    case SGC_ABI_OPERAND_V_CACHE: {
      const sgc_abi_kv_layer_t &l = t.kv_layers[o.index];
      const bool k = o.kind == SGC_ABI_OPERAND_K_CACHE;
      op.what =
          "layer " + std::to_string(o.index) + (k ? " K" : " V") + " cache";
      const int64_t slots = l.kind == SGC_ABI_KV_FULL ? full_slots : l.slots;
      op.shape = {slots, l.kv_heads, l.head_dim};
      op.dtype = l.dtype;
      break;
    }
    default: // WORKSPACE
      op.what = "workspace operand " + std::to_string(j);
      op.dtype = o.dtype;
      for (uint32_t d = 0; d < o.rank; ++d)
        op.shape.push_back(o.shape[d] == SGC_ABI_DIM_TOKENS ? tokens
                                                            : o.shape[d]);
      break;
    }
    uint64_t bytes = dtype_bytes(op.dtype);
    for (int64_t d : op.shape)
      bytes *= static_cast<uint64_t>(d);
    auto &mem = by_key[key];
    if (!mem)
      mem = std::make_shared<lazy_memory>(bytes);
    op.memory = mem;
    out.push_back(std::move(op));
  }
  return out;
}

} // namespace emu_sample
