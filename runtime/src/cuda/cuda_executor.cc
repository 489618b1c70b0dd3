/*
 * cuda_executor.cc - replays a CUDA model's plan with the driver API.
 *
 * Per call: one host-to-device copy of the step state and the tokens
 * (pinned, contiguous), the phase's launches (decode: one graph launch),
 * one device-to-host copy of the logits rows, one stream synchronization.
 * The launches never change between calls: what differs per token lives
 * in the step state, which is why one captured graph serves every token.
 * With SGC_CUDA_PROFILE or SGC_CUDA_DUMP (launch_trace.h) decode launches
 * one by one too: events around each launch, or the written operands
 * copied back after it. Every launch but a phase's first of a kernel that
 * waits for its predecessor (SGC_ABI_CUDA_KERNEL_WAITS) asks for
 * programmatic stream serialization, in the graph too: the kernel is set up
 * while the one before drains (on an H200 a gain within the run-to-run
 * spread of graph decode).
 */
#include "runtime/src/cuda/cuda_executor.h"

#include "lib/support/dtype.h"
#include "runtime/src/memory.h"
#include "runtime/src/weights.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace sgc {
namespace runtime {

namespace {
/// cuMemAlloc gives 256-byte aligned memory; sub-buffers keep that.
constexpr uint64_t device_alignment = 256;
} // namespace

status cuda_executor::create(std::shared_ptr<model_library> model,
                             const options &o, std::unique_ptr<executor> *out) {
  std::unique_ptr<cuda_executor> e(new cuda_executor());
  e->model_ = std::move(model);
  e->progress_ = o.progress;
  e->progress_user_ = o.progress_user;
  e->staging_bytes_ = o.staging_bytes ? o.staging_bytes : 1;
  const char *pdl = std::getenv("SGC_CUDA_PDL");
  e->programmatic_ =
      o.programmatic_launch && !(pdl && std::string_view(pdl) == "0");
  status st = select_cuda_variant(*e->model_, o.variant, &e->variant_);
  if (st.ok())
    st = e->open(o);
  const std::string profile =
      o.profile_path.empty()
          ? trace_path_from_environment(cuda_profile_variable)
          : o.profile_path;
  const std::string dump = o.dump_path.empty()
                               ? trace_path_from_environment(cuda_dump_variable)
                               : o.dump_path;
  if (st.ok() && !profile.empty())
    st = launch_profile::open(profile, *e->model_, e->variant_->name,
                              &e->profile_);
  if (st.ok() && !dump.empty())
    st = launch_dump::open(dump, &e->dump_);
  if (!st.ok())
    return st;
  *out = std::move(e);
  return status();
}

status cuda_executor::open(const options &o) {
  status st = probe_cuda(o.library, o.ordinal, nullptr);
  if (!st.ok())
    return st;
  st = load_cuda_api(o.library, &api_);
  if (!st.ok())
    return st;
  const cuda_api &api = *api_;
  // Stream capture turns programmatic launches into graph edges from CUDA
  // 12.3 on (the decode graph); an older driver launches without.
  int driver = 0;
  if (programmatic_ &&
      (api.cuDriverGetVersion(&driver) != cu::success || driver < 12030))
    programmatic_ = false;
  SGC_CU_TRY(api, api.cuDeviceGet(&device_, o.ordinal),
             "cannot open CUDA device " + std::to_string(o.ordinal));
  SGC_CU_TRY(api, api.cuDevicePrimaryCtxRetain(&context_, device_),
             "cannot open CUDA device " + std::to_string(o.ordinal));
  retained_ = true;
  SGC_CU_TRY(api, api.cuCtxSetCurrent(context_),
             "cannot open CUDA device " + std::to_string(o.ordinal));
  SGC_CU_TRY(api, api.cuStreamCreate(&stream_, cu::stream_non_blocking),
             "cannot create a CUDA stream");

  const std::string variant = quote(variant_->name);
  SGC_CU_TRY(api, api.cuModuleLoadData(&module_, variant_->fatbin),
             "cannot load the fatbin of CUDA variant " + variant + " of " +
                 model_->describe());
  const sgc_model_v2_t &t = model_->table();
  functions_.resize(variant_->num_functions);
  for (uint32_t k = 0; k < variant_->num_functions; ++k) {
    const sgc_abi_cuda_kernel_t &kernel = variant_->kernels[k];
    const std::string what =
        "kernel " + quote(kernel.name) + " of CUDA variant " + variant;
    SGC_CU_TRY(api,
               api.cuModuleGetFunction(&functions_[k], module_, kernel.name),
               "the fatbin lacks " + what);
    // The fatbin's parameter list must be the one the plan passes: one
    // 8-byte value per operand (drivers older than 12.4 cannot tell).
    if (api.cuFuncGetParamInfo) {
      for (size_t i = 0; i <= kernel.num_params; ++i) {
        size_t offset = 0, size = 0;
        const cu::result r =
            api.cuFuncGetParamInfo(functions_[k], i, &offset, &size);
        if (r == cu::error_not_supported)
          break; // this driver cannot tell for this kernel
        if (i == kernel.num_params ? r == cu::success
                                   : r != cu::success || size != 8)
          return bad_input_error(model_->path() + ": " + what +
                                 " does not take the " +
                                 std::to_string(kernel.num_params) +
                                 " 8-byte parameters the model lists")
              .note(i == kernel.num_params
                        ? "the fatbin's kernel has a parameter " +
                              std::to_string(i) + " too"
                        : "the fatbin's parameter " + std::to_string(i) +
                              (r == cu::success
                                   ? " has " + std::to_string(size) + " bytes"
                                   : " is absent"));
      }
    }
    // Every kernel launched with dynamic shared memory opts in to its
    // most: without it the driver allows 48 KiB less the kernel's static
    // bytes, which the runtime does not know (a kernel with 40 KiB static
    // and 16 KiB dynamic fails at its first launch).
    const uint32_t shared = max_dynamic_shared_bytes(t, k);
    if (shared > 0)
      SGC_CU_TRY(api,
                 api.cuFuncSetAttribute(
                     functions_[k],
                     cu::func_attribute_max_dynamic_shared_size_bytes,
                     static_cast<int>(shared)),
                 what + " cannot have " + std::to_string(shared) +
                     " bytes of dynamic shared memory");
  }
  return status();
}

cuda_executor::~cuda_executor() {
  if (!api_ || !retained_)
    return;
  // Errors are ignored: nothing can be done about them here.
  const cuda_api &api = *api_;
  api.cuCtxSetCurrent(context_);
  if (stream_)
    api.cuStreamSynchronize(stream_);
  for (cu::event e : events_)
    if (e)
      api.cuEventDestroy(e);
  if (decode_graph_)
    api.cuGraphExecDestroy(decode_graph_);
  if (graph_)
    api.cuGraphDestroy(graph_);
  for (cu::deviceptr p : device_memory_)
    api.cuMemFree(p);
  for (void *p : host_memory_)
    api.cuMemFreeHost(p);
  if (module_)
    api.cuModuleUnload(module_);
  if (stream_)
    api.cuStreamDestroy(stream_);
  api.cuDevicePrimaryCtxRelease(device_);
}

status cuda_executor::device_alloc(uint64_t bytes, const char *what,
                                   cu::deviceptr *out) {
  const cuda_api &api = *api_;
  cu::deviceptr p = 0;
  SGC_CU_TRY(api, api.cuMemAlloc(&p, std::max<uint64_t>(bytes, 1)),
             std::string("cannot allocate ") + what + " on the GPU (" +
                 with_commas(bytes) + " B)");
  device_memory_.push_back(p);
  SGC_CU_TRY(api, api.cuMemsetD8Async(p, 0, bytes, stream_),
             std::string("cannot clear ") + what + " on the GPU");
  *out = p;
  return status();
}

status cuda_executor::host_alloc(uint64_t bytes, const char *what, void **out) {
  const cuda_api &api = *api_;
  void *p = nullptr;
  SGC_CU_TRY(api, api.cuMemAllocHost(&p, std::max<uint64_t>(bytes, 1)),
             std::string("cannot allocate pinned host memory for ") + what +
                 " (" + with_commas(bytes) + " B)");
  host_memory_.push_back(p);
  *out = p;
  return status();
}

status cuda_executor::allocate(int64_t context, int32_t sequences) {
  if (sequences != 1)
    return device_error("a CUDA session holds one sequence so far (asked "
                        "for " + std::to_string(sequences) + ")");
  const sgc_model_v2_t &t = model_->table();
  const cuda_api &api = *api_;
  SGC_CU_TRY(api, api.cuCtxSetCurrent(context_), "cannot use the CUDA device");
  context_length_ = context;

  // The KV cache as one allocation, every buffer 256-byte aligned.
  std::vector<uint64_t> offsets;
  uint64_t kv_total = 0;
  status offsets_status = model_->kv_buffer_offsets(
      context, 1, device_alignment, &offsets, &kv_total);
  if (!offsets_status.ok())
    return offsets_status;
  int64_t max_tokens = 1;
  for (uint32_t p = 0; p < t.num_phases; ++p)
    max_tokens = std::max(max_tokens, t.phases[p].max_tokens);
  call_bytes_ = sizeof(sgc_abi_step_state_t) +
                static_cast<uint64_t>(max_tokens) * sizeof(int32_t);

  // Everything the session puts on the device, checked against what the
  // device has free before anything is allocated.
  size_t free_bytes = 0, total_bytes = 0;
  SGC_CU_TRY(api, api.cuMemGetInfo(&free_bytes, &total_bytes),
             "cannot query the GPU's memory");
  const uint64_t needed =
      model_->weight_bytes() + kv_total + t.workspace_bytes + call_bytes_;
  if (needed > free_bytes)
    return device_error("the model does not fit in the GPU's free memory: " +
                        with_commas(needed) + " B needed, " +
                        with_commas(free_bytes) + " B free")
        .note("weights " + with_commas(model_->weight_bytes()) +
              " B + KV cache at context " + with_commas(context) + " " +
              with_commas(kv_total) + " B + workspace " +
              with_commas(t.workspace_bytes) + " B")
        .note("--max-context makes the KV cache smaller");

  cu::deviceptr kv = 0, workspace = 0;
  status st = device_alloc(kv_total, "the KV cache", &kv);
  if (st.ok())
    st = device_alloc(t.workspace_bytes, "the workspace", &workspace);
  if (st.ok())
    st = device_alloc(call_bytes_, "the step state", &call_device_);
  if (st.ok())
    st = host_alloc(call_bytes_, "the step state", &call_host_);
  uint64_t logits_bytes = 0;
  for (uint32_t p = 0; p < t.num_phases; ++p)
    logits_bytes = std::max<uint64_t>(
        logits_bytes,
        workspace_operand_bytes(t.phases[p].logits, t.phases[p].max_tokens));
  if (st.ok())
    st = host_alloc(logits_bytes, "the logits", &logits_host_);
  if (!st.ok())
    return st;
  kv_bytes_ = model_->kv_cache_bytes_at(context);
  buffers_.step_state = call_device_;
  buffers_.tokens = call_device_ + sizeof(sgc_abi_step_state_t);
  buffers_.workspace = workspace;
  for (uint32_t i = 0; i < t.num_layers; ++i) {
    buffers_.k_cache.push_back(kv + offsets[2 * i]);
    buffers_.v_cache.push_back(model_->v_bytes(i) ? kv + offsets[2 * i + 1]
                                                  : 0);
  }
  SGC_CU_TRY(api, api.cuStreamSynchronize(stream_),
             "cannot clear the GPU's buffers");
  return status();
}

status cuda_executor::bind(const bound_weights &weights) {
  const sgc_model_v2_t &t = model_->table();
  const cuda_api &api = *api_;
  const std::vector<const void *> &host = weights.pointers();
  if (host.size() != t.num_tensors)
    return internal_error("the weights do not match the model's manifest");
  if (!call_device_)
    return internal_error("bind before allocate");
  SGC_CU_TRY(api, api.cuCtxSetCurrent(context_), "cannot use the CUDA device");

  // One device allocation for every tensor, 256-byte aligned each.
  std::vector<uint64_t> offsets(t.num_tensors);
  uint64_t total = 0;
  for (uint32_t i = 0; i < t.num_tensors; ++i) {
    if (!align_up(total, device_alignment, &offsets[i]))
      return internal_error("weight size overflows");
    total = offsets[i] + t.tensors[i].bytes;
  }
  cu::deviceptr base = 0;
  status st = device_alloc(total, "the weights", &base);
  if (!st.ok())
    return st;

  // Host to device through two pinned buffers: one is filled from the
  // mapped checkpoint while the other is being copied.
  const uint64_t weight_bytes = model_->weight_bytes();
  const uint64_t chunk =
      std::min(staging_bytes_, std::max<uint64_t>(weight_bytes, 1));
  void *staging[2] = {nullptr, nullptr};
  st = host_alloc(chunk, "the weight upload", &staging[0]);
  if (st.ok())
    st = host_alloc(chunk, "the weight upload", &staging[1]);
  if (!st.ok())
    return st;
  uint64_t done = 0;
  int which = 0;
  for (uint32_t i = 0; i < t.num_tensors; ++i) {
    const uint8_t *src = static_cast<const uint8_t *>(host[i]);
    for (uint64_t at = 0; at < t.tensors[i].bytes; at += chunk) {
      const uint64_t n = std::min(chunk, t.tensors[i].bytes - at);
      std::memcpy(staging[which], src + at, n);
      // The copy of the other buffer (queued last time) must be done
      // before this one is queued and the other is refilled.
      SGC_CU_TRY(api, api.cuStreamSynchronize(stream_),
                 "cannot copy the weights to the GPU");
      SGC_CU_TRY(api,
                 api.cuMemcpyHtoDAsync(base + offsets[i] + at, staging[which],
                                       n, stream_),
                 "cannot copy tensor " + quote(t.tensors[i].name) +
                     " to the GPU");
      which ^= 1;
      done += n;
      if (progress_)
        progress_(progress_user_, done, weight_bytes);
    }
  }
  SGC_CU_TRY(api, api.cuStreamSynchronize(stream_),
             "cannot copy the weights to the GPU");
  if (progress_ && weight_bytes == 0)
    progress_(progress_user_, 0, 0);
  // The staging buffers are not needed again.
  for (void *p : staging) {
    api.cuMemFreeHost(p);
    host_memory_.erase(std::find(host_memory_.begin(), host_memory_.end(), p));
  }

  buffers_.weights.resize(t.num_tensors);
  for (uint32_t i = 0; i < t.num_tensors; ++i)
    buffers_.weights[i] = base + offsets[i];
  params_.assign(t.num_steps, {});
  param_pointers_.assign(t.num_steps, {});
  for (uint32_t s = 0; s < t.num_steps; ++s) {
    step_params(t, t.steps[s], buffers_, &params_[s]);
    for (uint64_t &v : params_[s])
      param_pointers_[s].push_back(&v);
  }
  bound_ = true;
  return status();
}

status cuda_executor::launch_steps(const sgc_abi_phase_t &phase, int64_t n,
                                   bool capturing) {
  const sgc_model_v2_t &t = model_->table();
  const cuda_api &api = *api_;
  const bool timed = profile_ && !capturing;
  if (timed && events_.empty())
    events_.assign(2 * static_cast<size_t>(t.num_steps), nullptr);
  for (uint32_t s = phase.first_step; s < phase.first_step + phase.num_steps;
       ++s) {
    if (timed) {
      for (size_t k = 2 * s; k < 2 * s + 2; ++k)
        if (!events_[k])
          SGC_CU_TRY(api, api.cuEventCreate(&events_[k], cu::event_default),
                     "cannot create a CUDA event for SGC_CUDA_PROFILE");
      SGC_CU_TRY(api, api.cuEventRecord(events_[2 * s], stream_),
                 "cannot record a CUDA event for SGC_CUDA_PROFILE");
    }
    const sgc_abi_step_t &step = t.steps[s];
    uint32_t grid[3];
    launch_grid(step, n, grid);
    cu::launch_config c{};
    c.grid_x = grid[0];
    c.grid_y = grid[1];
    c.grid_z = grid[2];
    c.block_x = step.block[0];
    c.block_y = step.block[1];
    c.block_z = step.block[2];
    c.shared_mem_bytes = step.dynamic_shared_bytes;
    c.h_stream = stream_;
    // A kernel that waits for its predecessor may be set up while it
    // drains (PDL), also inside the captured graph; not the phase's first,
    // which follows a copy.
    cu::launch_attribute pdl{};
    if (programmatic_ && s != phase.first_step &&
        (variant_->kernels[step.function].flags & SGC_ABI_CUDA_KERNEL_WAITS)) {
      pdl.id = cu::launch_attribute_programmatic_stream_serialization;
      pdl.value.programmatic_stream_serialization_allowed = 1;
      c.attrs = &pdl;
      c.num_attrs = 1;
    }
    SGC_CU_TRY(api,
               api.cuLaunchKernelEx(&c, functions_[step.function],
                                    param_pointers_[s].data(), nullptr),
               "cannot launch kernel " +
                   quote(variant_->kernels[step.function].name) + " (" +
                   step_name(t, phase, s) + ")");
    if (timed)
      SGC_CU_TRY(api, api.cuEventRecord(events_[2 * s + 1], stream_),
                 "cannot record a CUDA event for SGC_CUDA_PROFILE");
    if (dump_ && !capturing) {
      status st = dump_step(phase, s, n);
      if (!st.ok())
        return st;
    }
  }
  return status();
}

status cuda_executor::dump_step(const sgc_abi_phase_t &phase, uint32_t s,
                                int64_t n) {
  const sgc_model_v2_t &t = model_->table();
  const cuda_api &api = *api_;
  const sgc_abi_step_t &step = t.steps[s];
  const char *kernel = variant_->kernels[step.function].name;
  SGC_CU_TRY(api, api.cuStreamSynchronize(stream_),
             "the GPU failed while running kernel " + quote(kernel) + " (" +
                 step_name(t, phase, s) + ")");
  std::vector<launch_dump::operand> operands;
  launch_dump::operands(*model_, step, params_[s], n, context_length_,
                        &operands);
  for (const launch_dump::operand &o : operands) {
    dump_host_.resize(static_cast<size_t>(o.bytes));
    SGC_CU_TRY(
        api,
        api.cuMemcpyDtoHAsync(dump_host_.data(), o.address, o.bytes, stream_),
        "cannot copy an operand of " + step_name(t, phase, s) +
            " for SGC_CUDA_DUMP");
    SGC_CU_TRY(api, api.cuStreamSynchronize(stream_),
               "cannot copy an operand of " + step_name(t, phase, s) +
                   " for SGC_CUDA_DUMP");
    status st =
        dump_->write(calls_, t, phase, s, n, kernel, o, dump_host_.data());
    if (!st.ok())
      return st;
  }
  return status();
}

status cuda_executor::profile_rows(const sgc_abi_phase_t &phase, int64_t n) {
  const sgc_model_v2_t &t = model_->table();
  const cuda_api &api = *api_;
  const uint32_t last = phase.first_step + phase.num_steps;
  if (phase.num_steps)
    SGC_CU_TRY(api, api.cuEventSynchronize(events_[2 * (last - 1) + 1]),
               "cannot wait for the events of SGC_CUDA_PROFILE");
  for (uint32_t s = phase.first_step; s < last; ++s) {
    float ms = 0;
    SGC_CU_TRY(
        api, api.cuEventElapsedTime(&ms, events_[2 * s], events_[2 * s + 1]),
        "cannot time " + step_name(t, phase, s) + " for SGC_CUDA_PROFILE");
    uint32_t grid[3];
    launch_grid(t.steps[s], n, grid);
    profile_->row(calls_, t, phase, s, n,
                  variant_->kernels[t.steps[s].function].name, grid,
                  static_cast<double>(ms) * 1e3);
  }
  return profile_->flush();
}

status cuda_executor::capture(const sgc_abi_phase_t &phase) {
  const cuda_api &api = *api_;
  SGC_CU_TRY(
      api,
      api.cuStreamBeginCapture(stream_, cu::stream_capture_mode_thread_local),
      "cannot capture the decode phase into a CUDA graph");
  // Decode takes one token a call: the graph serves every call.
  status st = launch_steps(phase, 1, /*capturing=*/true);
  // Capture must end even when a launch failed, or the stream stays
  // unusable.
  const cu::result r = api.cuStreamEndCapture(stream_, &graph_);
  if (!st.ok()) {
    if (r == cu::success && graph_)
      api.cuGraphDestroy(graph_);
    graph_ = nullptr;
    return st;
  }
  if (r != cu::success)
    return cuda_call_error(api, r, "api.cuStreamEndCapture(stream_, &graph_)",
                           __FILE__, __LINE__,
                           "cannot capture the decode phase into a CUDA graph");
  SGC_CU_TRY(api, api.cuGraphInstantiateWithFlags(&decode_graph_, graph_, 0),
             "cannot instantiate the decode phase's CUDA graph");
  return status();
}

status cuda_executor::run(const sgc_abi_phase_t &phase, const int32_t *tokens,
                          int64_t n, int64_t pos0, float *logits,
                          bool all_positions, int32_t *argmax) {
  const sgc_model_v2_t &t = model_->table();
  const cuda_api &api = *api_;
  if (!bound_)
    return internal_error("no weights are bound");
  SGC_CU_TRY(api, api.cuCtxSetCurrent(context_), "cannot use the CUDA device");

  // The step state and the tokens: one copy, ordered before the launches.
  const sgc_abi_step_state_t state =
      step_state(pos0, n, context_length_, all_positions);
  std::memcpy(call_host_, &state, sizeof state);
  std::memcpy(static_cast<uint8_t *>(call_host_) + sizeof state, tokens,
              static_cast<size_t>(n) * sizeof(int32_t));
  SGC_CU_TRY(api,
             api.cuMemcpyHtoDAsync(call_device_, call_host_,
                                   sizeof state + n * sizeof(int32_t), stream_),
             "cannot copy the step state to the GPU");

  status st;
  // Traced calls run launch by launch: events cannot time the launches of
  // a graph, and the dump copies after every launch.
  if (phase.kind == SGC_ABI_PHASE_DECODE && !profile_ && !dump_) {
    if (!decode_graph_ && !(st = capture(phase)).ok())
      return st;
    SGC_CU_TRY(api, api.cuGraphLaunch(decode_graph_, stream_),
               "cannot launch the decode phase's CUDA graph");
  } else if (!(st = launch_steps(phase, n)).ok()) {
    return st;
  }

  // The argmax (4 bytes), or the logits rows back. Row-wise steps ran on
  // every row (a kernel reads the token count from the step state, so a
  // one-row view is not a thing on the GPU); only the rows asked for are
  // copied.
  const sgc_abi_operand_t &lo = phase.logits;
  const uint64_t row_bytes = workspace_operand_bytes(lo, 1);
  const int64_t first = all_positions ? 0 : n - 1;
  const int64_t rows = n - first;
  const sgc_abi_operand_t *best = argmax ? model_->argmax(phase) : nullptr;
  if (argmax && !best)
    return internal_error("the phase has no argmax operand");
  if (best)
    SGC_CU_TRY(api,
               api.cuMemcpyDtoHAsync(logits_host_,
                                     buffers_.workspace + best->offset,
                                     sizeof *argmax, stream_),
               "cannot copy the argmax from the GPU");
  else
    SGC_CU_TRY(api,
               api.cuMemcpyDtoHAsync(
                   logits_host_,
                   buffers_.workspace + lo.offset +
                       static_cast<uint64_t>(first) * row_bytes,
                   static_cast<uint64_t>(rows) * row_bytes, stream_),
               "cannot copy the logits from the GPU");
  SGC_CU_TRY(api, api.cuStreamSynchronize(stream_),
             "the GPU failed while running the " +
                 std::string(phase.kind == SGC_ABI_PHASE_DECODE ? "decode"
                                                                : "prefill") +
                 " phase");
  if (profile_ && !(st = profile_rows(phase, n)).ok())
    return st;
  if (dump_ && !(st = dump_->flush()).ok())
    return st;
  ++calls_;
  if (best)
    std::memcpy(argmax, logits_host_, sizeof *argmax);
  else
    logits_to_f32(logits_host_, lo.dtype, rows, t.vocab_size, logits);
  return status();
}

} // namespace runtime
} // namespace sgc
