/*
 * launch_trace.cc - the per-launch profile and dump files of the CUDA
 * executors.
 */
#include "runtime/src/cuda/launch_trace.h"

#include "lib/support/dtype.h"
#include "runtime/src/cuda/launch_plan.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

namespace sgc {
namespace runtime {

namespace {

status file_error(const std::string &path, const char *what) {
  return usage_error("cannot " + std::string(what) + " " + quote(path) + ": " +
                     std::strerror(errno));
}

/// Grid or block as "x,y,z".
std::string dims(const uint32_t d[3]) {
  return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," +
         std::to_string(d[2]);
}

} // namespace

std::string trace_path_from_environment(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

const char *phase_kind_name(uint32_t kind) {
  switch (kind) {
  case SGC_ABI_PHASE_PREFILL:
    return "prefill";
  case SGC_ABI_PHASE_DECODE:
    return "decode";
  default:
    return "encode_image";
  }
}

uint64_t step_weight_bytes(const sgc_model_v2_t &t,
                           const sgc_abi_step_t &step) {
  std::set<uint32_t> seen;
  uint64_t bytes = 0;
  for (uint32_t j = 0; j < step.num_operands; ++j) {
    const sgc_abi_operand_t &o = t.operands[step.first_operand + j];
    if (o.kind == SGC_ABI_OPERAND_WEIGHT && seen.insert(o.index).second)
      bytes += t.tensors[o.index].bytes;
  }
  return bytes;
}

//===--- the profile ------------------------------------------------------===//

status launch_profile::open(const std::string &path, const model_library &model,
                            const char *variant,
                            std::unique_ptr<launch_profile> *out) {
  std::unique_ptr<launch_profile> p(new launch_profile());
  p->path_ = path;
  p->file_ = std::fopen(path.c_str(), "w");
  if (!p->file_)
    return file_error(path, "create the launch profile")
        .note("set by " + std::string(cuda_profile_variable));
  std::fprintf(p->file_,
               "# sgc launch profile: model %s variant %s weight_bytes %llu\n"
               "call\tphase\tstep\tlayer\tkernel\ttokens\tgrid\tblock\tsmem\t"
               "weight_bytes\tus\n",
               model.path().c_str(), variant,
               static_cast<unsigned long long>(model.weight_bytes()));
  *out = std::move(p);
  return status();
}

launch_profile::~launch_profile() {
  if (file_)
    std::fclose(file_);
}

void launch_profile::row(int64_t call, const sgc_model_v2_t &t,
                         const sgc_abi_phase_t &phase, uint32_t s, int64_t n,
                         const char *kernel, const uint32_t grid[3],
                         double microseconds) {
  const sgc_abi_step_t &step = t.steps[s];
  std::fprintf(file_, "%lld\t%s\t%u\t%d\t%s\t%lld\t%s\t%s\t%u\t%llu\t%.3f\n",
               static_cast<long long>(call), phase_kind_name(phase.kind),
               s - phase.first_step, step.layer, kernel,
               static_cast<long long>(n), dims(grid).c_str(),
               dims(step.block).c_str(), step.dynamic_shared_bytes,
               static_cast<unsigned long long>(step_weight_bytes(t, step)),
               microseconds);
}

status launch_profile::flush() {
  if (std::fflush(file_) != 0 || std::ferror(file_))
    return file_error(path_, "write the launch profile");
  return status();
}

//===--- the dump ---------------------------------------------------------===//

status launch_dump::open(const std::string &path,
                         std::unique_ptr<launch_dump> *out) {
  std::unique_ptr<launch_dump> d(new launch_dump());
  d->path_ = path;
  d->file_ = std::fopen(path.c_str(), "wb");
  if (!d->file_)
    return file_error(path, "create the launch dump")
        .note("set by " + std::string(cuda_dump_variable));
  *out = std::move(d);
  return status();
}

launch_dump::~launch_dump() {
  if (file_)
    std::fclose(file_);
}

void launch_dump::operands(const model_library &model,
                           const sgc_abi_step_t &step,
                           const std::vector<uint64_t> &params, int64_t n,
                           int64_t context, std::vector<operand> *out) {
  const sgc_model_v2_t &t = model.table();
  out->clear();
  for (uint32_t j = 0; j < step.num_operands; ++j) {
    const sgc_abi_operand_t &o = t.operands[step.first_operand + j];
    operand d;
    d.index = j;
    d.address = params[j];
    switch (o.kind) {
    case SGC_ABI_OPERAND_WORKSPACE:
      d.bytes = workspace_operand_bytes(o, n);
      d.kind = "workspace";
      d.dtype = o.dtype;
      break;
    case SGC_ABI_OPERAND_K_CACHE:
      d.bytes = model.k_bytes_at(o.index, context);
      d.kind = "k_cache";
      d.dtype = t.kv_layers[o.index].dtype;
      break;
    case SGC_ABI_OPERAND_V_CACHE:
      d.bytes = model.v_bytes_at(o.index, context);
      d.kind = "v_cache";
      d.dtype = t.kv_layers[o.index].dtype;
      break;
    default: // inputs only: tokens, step state, weights, image rows
      continue;
    }
    bool seen = false;
    for (const operand &other : *out)
      seen |= other.address == d.address && other.bytes == d.bytes;
    if (!seen && d.bytes)
      out->push_back(d);
  }
}

status launch_dump::write(int64_t call, const sgc_model_v2_t &t,
                          const sgc_abi_phase_t &phase, uint32_t s, int64_t n,
                          const char *kernel, const operand &o,
                          const void *data) {
  const sgc_abi_step_t &step = t.steps[s];
  std::fprintf(file_,
               "{\"call\":%lld,\"phase\":\"%s\",\"step\":%u,\"layer\":%d,"
               "\"kernel\":\"%s\",\"tokens\":%lld,\"operand\":%u,"
               "\"kind\":\"%s\",\"dtype\":\"%s\",\"bytes\":%llu}\n",
               static_cast<long long>(call), phase_kind_name(phase.kind),
               s - phase.first_step, step.layer, kernel,
               static_cast<long long>(n), o.index, o.kind,
               dtype_name(static_cast<dtype>(o.dtype)),
               static_cast<unsigned long long>(o.bytes));
  if (std::fwrite(data, 1, o.bytes, file_) != o.bytes || std::ferror(file_))
    return file_error(path_, "write the launch dump");
  return status();
}

status launch_dump::flush() {
  if (std::fflush(file_) != 0 || std::ferror(file_))
    return file_error(path_, "write the launch dump");
  return status();
}

} // namespace runtime
} // namespace sgc
