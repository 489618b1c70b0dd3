/*
 * session.cc - device checks, the executor, argument checks and the chunked
 * prefill + decode loop.
 */
#include "runtime/src/session.h"

#include "runtime/src/image/prompt_layout.h"
#include "runtime/src/image/tower_input.h"

#include "runtime/src/cpu/cpu_executor.h"
#include "runtime/src/cuda/cuda_driver.h"
#include "runtime/src/cuda/cuda_executor.h"
#include "runtime/src/cuda/emu_executor.h"
#include "runtime/src/sampler.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace sgc {
namespace runtime {

status session::create(std::shared_ptr<model_library> model,
                       std::shared_ptr<bound_weights> weights,
                       const sgc_session_options_t &options,
                       std::unique_ptr<session> *out) {
  const sgc_model_v2_t &t = model->table();
  if (weights->model() != model)
    return usage_error("the weights were bound to another model");
  if (options.num_threads < 0)
    return usage_error("thread count must be positive, not " +
                       std::to_string(options.num_threads));

  // Device.
  switch (options.device) {
  case SGC_DEVICE_CPU:
    if (t.device != SGC_ABI_DEVICE_CPU)
      return mismatch_error("model " + model->describe() +
                            " was compiled for target " + quote(t.target) +
                            " and cannot run on the CPU");
    break;
  case SGC_DEVICE_CUDA: {
    status st =
        probe_cuda(cuda_driver_library, options.device_ordinal, nullptr);
    if (!st.ok())
      return st;
  }
    [[fallthrough]];
  case SGC_DEVICE_CUDA_EMU:
    if (t.device != SGC_ABI_DEVICE_CUDA)
      return mismatch_error("model " + model->describe() +
                            " was compiled for target " + quote(t.target) +
                            ", not for CUDA")
          .note("compile it with --target=cuda:<arch> to run it on the GPU");
    if (options.device == SGC_DEVICE_CUDA_EMU && !model->cuda_emu())
      return mismatch_error("model " + model->describe() +
                            " carries no kernels for the CUDA emulator")
          .note("the compiler adds them for tests; use --device cuda");
    break;
  default:
    return usage_error("unknown device kind " +
                       std::to_string(static_cast<int>(options.device)));
  }

  std::unique_ptr<session> s(new session());
  s->model_ = model;
  s->weights_ = weights;
  if (options.max_context < 0)
    return usage_error("the context must be positive, not " +
                       std::to_string(options.max_context));
  s->context_ = options.max_context > 0
                    ? std::min(options.max_context, t.context_length)
                    : t.context_length;
  s->context_limited_ = options.max_context > 0;
  if (options.num_sequences < 0)
    return usage_error("the sequence count must be positive, not " +
                       std::to_string(options.num_sequences));
  s->num_sequences_ = std::max(options.num_sequences, 1);
  status st;
  if (options.device == SGC_DEVICE_CPU) {
    st = cpu_executor::create(model, options.variant, options.num_threads,
                              &s->executor_);
  } else if (options.device == SGC_DEVICE_CUDA) {
    cuda_executor::options o;
    o.ordinal = options.device_ordinal;
    o.variant = options.variant;
    o.progress = options.progress;
    o.progress_user = options.progress_user;
    st = cuda_executor::create(model, o, &s->executor_);
  } else {
    st = create_emu_executor(model, options.variant, &s->executor_);
  }
  if (st.ok())
    st = s->executor_->allocate(s->context_, s->num_sequences_);
  if (st.ok())
    st = s->executor_->bind(*weights);
  // A prefill of a model with images reads each row's soft token and block
  // from these (text rows: block -1).
  if (st.ok() && model->prefill_takes_images()) {
    const int64_t width =
        model->phase(SGC_ABI_PHASE_ENCODE_IMAGE)->logits.shape[1];
    s->image_embeds_.assign(static_cast<size_t>(t.max_prefill_chunk * width),
                            0.0f);
    s->image_blocks_.assign(static_cast<size_t>(t.max_prefill_chunk), -1);
    st = s->executor_->bind_image_rows(s->image_embeds_.data(),
                                       s->image_blocks_.data());
  }
  if (!st.ok())
    return st;
  *out = std::move(s);
  return status();
}

std::string session::context_name() const {
  return (context_limited_ ? "context of " : "context length ") +
         std::to_string(context_) +
         (context_limited_ ? " (--max-context; the model's is " +
                                 std::to_string(model_->table().context_length) +
                                 ")"
                           : "");
}

status session::check_tokens(const int32_t *tokens, int64_t n) const {
  const int64_t vocab = model_->table().vocab_size;
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab)
      return usage_error("token id " + std::to_string(tokens[i]) +
                         " (at index " + std::to_string(i) +
                         ") is outside the vocabulary [0, " +
                         std::to_string(vocab) + ")");
  return status();
}

status session::prefill(const int32_t *tokens, int64_t n, int64_t pos0,
                        float *logits, bool all_positions,
                        const image_rows *images) {
  const sgc_model_v2_t &t = model_->table();
  if (!tokens || !logits)
    return usage_error("prefill needs tokens and a logits buffer");
  if (n < 1 || n > t.max_prefill_chunk)
    return usage_error("prefill chunk of " + std::to_string(n) +
                       " tokens is outside [1, " +
                       std::to_string(t.max_prefill_chunk) + "]");
  if (pos0 < 0 || pos0 > context_ - n)
    return usage_error("positions " + std::to_string(pos0) + ".." +
                       std::to_string(pos0 + n - 1) + " exceed the " +
                       context_name());
  status st = check_tokens(tokens, n);
  if (!st.ok())
    return st;
  if (images && !model_->prefill_takes_images())
    return usage_error(model_->describe() + " has no vision tower to take "
                                            "images");
  if (model_->prefill_takes_images())
    set_image_rows(images, n);
  return executor_->run(*model_->phase(SGC_ABI_PHASE_PREFILL), tokens, n, pos0,
                        logits, all_positions, nullptr);
}

status session::decode(int32_t token, int64_t pos, float *logits,
                       int32_t *argmax) {
  if (!logits && !argmax)
    return usage_error("decode needs a logits buffer");
  if (pos < 0 || pos >= context_)
    return usage_error("position " + std::to_string(pos) +
                       " is outside the " + context_name());
  status st = check_tokens(&token, 1);
  if (!st.ok())
    return st;
  const sgc_abi_phase_t &phase = *model_->phase(SGC_ABI_PHASE_DECODE);
  if (argmax && !model_->argmax(phase))
    return usage_error(model_->describe() +
                       " computes no argmax: decode to logits");
  st = executor_->run(phase, &token, 1, pos, logits, false, argmax);
  if (st.ok() && argmax &&
      (*argmax < 0 || *argmax >= model_->table().vocab_size))
    return internal_error("the device's argmax " + std::to_string(*argmax) +
                          " is outside the vocabulary");
  return st;
}

status session::use_sequence(int32_t sequence) {
  if (sequence < 0 || sequence >= num_sequences_)
    return usage_error("sequence slot " + std::to_string(sequence) +
                       " is outside the session's " +
                       std::to_string(num_sequences_) + " slots");
  sequence_ = sequence;
  executor_->use_sequence(sequence);
  return status();
}

status session::decode_batch(int64_t n, const int32_t *sequences,
                             const int32_t *tokens, const int64_t *positions,
                             float *logits) {
  if (n < 1 || !sequences || !tokens || !positions || !logits)
    return usage_error("a batched decode needs at least one row with its "
                       "sequence, token, position and logits");
  std::vector<bool> seen(static_cast<size_t>(num_sequences_), false);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t s = sequences[i];
    if (s < 0 || s >= num_sequences_ || seen[static_cast<size_t>(s)])
      return usage_error("row " + std::to_string(i) + ": sequence slot " +
                         std::to_string(s) +
                         (s < 0 || s >= num_sequences_
                              ? " is outside the session's " +
                                    std::to_string(num_sequences_) + " slots"
                              : " is in the call twice"));
    seen[static_cast<size_t>(s)] = true;
    if (positions[i] < 0 || positions[i] >= context_)
      return usage_error("row " + std::to_string(i) + ": position " +
                         std::to_string(positions[i]) + " is outside the " +
                         context_name());
  }
  status st = check_tokens(tokens, n);
  if (!st.ok())
    return st;
  const int64_t vocab = model_->table().vocab_size;
  const auto &batches = model_->decode_batches();
  const int32_t keep = sequence_;
  for (int64_t i = 0; i < n;) {
    const int64_t left = n - i;
    // The smallest entry that holds the rest, else the largest; a row
    // alone takes the one-token decode.
    const sgc_abi_phase_t *phase = nullptr;
    for (const sgc_abi_phase_t *b : batches)
      if (!phase || phase->max_tokens < left)
        phase = b;
    if (left == 1 || !phase) {
      executor_->use_sequence(sequences[i]);
      st = executor_->run(*model_->phase(SGC_ABI_PHASE_DECODE), tokens + i, 1,
                          positions[i], logits + i * vocab, false, nullptr);
      ++i;
      if (!st.ok())
        break;
      continue;
    }
    // Rows past the sequences given repeat the last one: they compute and
    // write exactly what it does, and their logits are dropped.
    const int64_t rows = phase->max_tokens, take = std::min(rows, left);
    batch_tokens_.resize(rows);
    batch_sequences_.resize(rows);
    batch_positions_.resize(rows);
    // A full entry writes straight into the caller's rows; a padded one
    // into ours, its first |take| rows copied out.
    float *out = logits + i * vocab;
    if (take < rows) {
      batch_logits_.resize(static_cast<size_t>(rows * vocab));
      out = batch_logits_.data();
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t from = i + std::min(r, take - 1);
      batch_tokens_[r] = tokens[from];
      batch_sequences_[r] = sequences[from];
      batch_positions_[r] = positions[from];
    }
    st = executor_->run_batch(*phase, batch_tokens_.data(),
                              batch_positions_.data(), batch_sequences_.data(),
                              out);
    if (!st.ok())
      break;
    if (take < rows)
      std::copy(batch_logits_.begin(), batch_logits_.begin() + take * vocab,
                logits + i * vocab);
    i += take;
  }
  executor_->use_sequence(keep);
  return st;
}

bool session::decodes_argmax() const {
  return model_->argmax(*model_->phase(SGC_ABI_PHASE_DECODE)) != nullptr;
}

void session::set_image_rows(const image_rows *images, int64_t n) {
  std::fill(image_blocks_.begin(), image_blocks_.begin() + n, -1);
  if (!images)
    return;
  const int64_t width =
      static_cast<int64_t>(image_embeds_.size()) / model_->table().max_prefill_chunk;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t slot = images->soft_slots[i];
    if (slot < 0)
      continue;
    image_blocks_[static_cast<size_t>(i)] = images->blocks[i];
    std::copy(images->soft_tokens + slot * width,
              images->soft_tokens + (slot + 1) * width,
              image_embeds_.begin() + i * width);
  }
}

status session::encode_image(const sgc_image_t &image, float *soft_tokens,
                             int64_t *count) {
  const sgc_abi_image_t *facts = model_->image();
  const sgc_abi_phase_t *phase = model_->phase(SGC_ABI_PHASE_ENCODE_IMAGE);
  if (!facts || !phase)
    return usage_error(model_->describe() +
                       " has no vision tower (compiled without its image "
                       "component, or the graph has none)");
  if (!soft_tokens)
    return usage_error("encode_image needs a soft-token buffer");
  image::tower_input in;
  status st = image::make_tower_input(
      image, model_->table().family, *facts, model_->image_patches(),
      model_->image_patch_values(), &in);
  if (!st.ok())
    return st;
  st = executor_->encode_image(*phase, in.patches.data(), in.positions.data(),
                               soft_tokens);
  if (st.ok() && count)
    *count = in.soft_tokens;
  return st;
}

status session::check_generate(const int32_t *prompt, int64_t n_prompt,
                               const sgc_generate_options_t &o,
                               int64_t *out_chunk) const {
  const sgc_model_v2_t &t = model_->table();
  if (!prompt || n_prompt < 1)
    return usage_error("the prompt is empty");
  if (o.max_new_tokens < 0)
    return usage_error("max new tokens must not be negative");
  if (o.num_cached_tokens > 0 && !o.cached_tokens)
    return usage_error("cached_tokens is NULL");
  // Positions 0..start-1 are in the cache already (an earlier turn).
  const int64_t start = static_cast<int64_t>(o.num_cached_tokens);
  if (start > context_ || n_prompt > context_ - start ||
      o.max_new_tokens > context_ - start - n_prompt)
    return usage_error(
        (start ? std::to_string(start) + " cached tokens plus the prompt ("
               : std::string("the prompt (")) +
        std::to_string(n_prompt) + " tokens) plus " +
        std::to_string(o.max_new_tokens) + " new tokens exceed the " +
        context_name());
  int64_t chunk = o.prefill_chunk;
  if (chunk < 0)
    return usage_error("prefill chunk must be positive");
  if (chunk == 0)
    chunk = t.max_prefill_chunk;
  if (chunk > t.max_prefill_chunk)
    return usage_error("prefill chunk " + std::to_string(chunk) +
                       " exceeds the model's maximum of " +
                       std::to_string(t.max_prefill_chunk));
  if (!(o.repetition_penalty >= 0.0f) || !(o.min_p >= 0.0f && o.min_p <= 1.0f))
    return usage_error("the repetition penalty must not be negative and "
                       "min_p must be in [0, 1]");
  if (o.num_stop_tokens > 0 && !o.stop_tokens)
    return usage_error("stop_tokens is NULL");
  if (o.num_feed_tokens > 0 && !o.feed_tokens)
    return usage_error("feed_tokens is NULL");
  if (o.prompt_image_blocks && (!o.prompt_soft_slots || !o.image_soft_tokens))
    return usage_error("image blocks need their soft-token slots and soft "
                       "tokens");
  status st = check_tokens(prompt, n_prompt);
  if (st.ok() && start)
    st = check_tokens(o.cached_tokens, start);
  if (st.ok() && o.num_feed_tokens)
    st = check_tokens(o.feed_tokens, static_cast<int64_t>(o.num_feed_tokens));
  *out_chunk = chunk;
  return st;
}

std::unordered_set<int32_t>
session::stop_tokens(const sgc_generate_options_t &o) const {
  const sgc_model_v2_t &t = model_->table();
  std::unordered_set<int32_t> stops(o.stop_tokens,
                                    o.stop_tokens + o.num_stop_tokens);
  if (!o.ignore_eos) {
    if (t.eos_token_id >= 0)
      stops.insert(t.eos_token_id);
    for (uint32_t i = 0; i < t.num_stop_tokens; ++i)
      stops.insert(t.stop_tokens[i]);
  }
  return stops;
}

sampling sampling_of(const sgc_generate_options_t &o) {
  sampling how;
  how.temperature = o.temperature;
  how.top_k = o.top_k;
  how.top_p = o.top_p;
  how.min_p = o.min_p;
  // 0 (a zero-initialized struct) means off, as 1 does.
  how.repetition_penalty =
      o.repetition_penalty > 0.0f ? o.repetition_penalty : 1.0f;
  how.seed = o.seed;
  return how;
}

status session::chunk_rows(const sgc_generate_options_t &o, int64_t n_prompt,
                           int64_t pos, int64_t chunk, int64_t *rows) const {
  *rows = std::min(chunk, n_prompt - pos);
  if (!o.prompt_image_blocks)
    return status();
  // A chunk never splits an image block: it ends before the block.
  const int64_t end = image::chunk_end_before_block(o.prompt_image_blocks,
                                                    n_prompt, pos, chunk);
  if (end < 0)
    return usage_error("the image block at prompt row " + std::to_string(pos) +
                       " is longer than the prefill chunk of " +
                       std::to_string(chunk) + " rows");
  *rows = end - pos;
  return status();
}

status session::generate(const int32_t *prompt, int64_t n_prompt,
                         const sgc_generate_options_t &o,
                         int64_t *out_num_generated) {
  const sgc_model_v2_t &t = model_->table();
  const int64_t vocab = t.vocab_size;
  if (out_num_generated)
    *out_num_generated = 0;
  int64_t chunk = 0;
  status st = check_generate(prompt, n_prompt, o, &chunk);
  if (!st.ok())
    return st;
  const int64_t start = static_cast<int64_t>(o.num_cached_tokens);
  const std::unordered_set<int32_t> stops = stop_tokens(o);

  const bool images = o.prompt_image_blocks != nullptr;
  const bool all = o.prefill_all_logits != 0;
  std::vector<float> logits(static_cast<size_t>((all ? chunk : 1) * vocab));
  int64_t last_rows = 0;
  for (int64_t pos = 0; pos < n_prompt; pos += last_rows) {
    int64_t n = 0;
    st = chunk_rows(o, n_prompt, pos, chunk, &n);
    if (!st.ok())
      return st;
    image_rows rows{o.image_soft_tokens,
                    images ? o.prompt_soft_slots + pos : nullptr,
                    images ? o.prompt_image_blocks + pos : nullptr};
    st = prefill(prompt + pos, n, start + pos, logits.data(), all,
                 images ? &rows : nullptr);
    if (!st.ok())
      return st;
    last_rows = n;
    if (o.on_logits) {
      if (all) {
        for (int64_t i = 0; i < n; ++i)
          o.on_logits(o.user, SGC_LOGITS_PREFILL, pos + i,
                      logits.data() + i * vocab, vocab);
      } else if (pos + n == n_prompt) {
        o.on_logits(o.user, SGC_LOGITS_PREFILL, n_prompt - 1, logits.data(),
                    vocab);
      }
    }
  }
  // The last position's row is the last row written.
  const float *last =
      all ? logits.data() + (last_rows - 1) * vocab : logits.data();
  std::vector<float> row(last, last + vocab);

  const sampling how = sampling_of(o);
  sampler pick(how);
  // What the repetition penalty sees: the prompt and what was generated.
  std::vector<int32_t> history(o.cached_tokens, o.cached_tokens + start);
  history.insert(history.end(), prompt, prompt + n_prompt);
  // A greedy decode that nobody reads the logits of takes the device's
  // argmax (the same rule as the sampler's): one token back, not the row.
  const bool device_greedy = how.temperature <= 0.0f &&
                             how.repetition_penalty == 1.0f && !o.on_logits &&
                             decodes_argmax();
  int32_t next = -1;
  int64_t generated = 0;
  for (int64_t step = 0; step < o.max_new_tokens; ++step) {
    const int32_t token =
        next >= 0 ? next : pick.sample(row.data(), vocab, history);
    ++generated;
    if (out_num_generated)
      *out_num_generated = generated;
    const bool stop_requested = o.on_token && o.on_token(o.user, token) != 0;
    if (stop_requested || stops.count(token) || step + 1 == o.max_new_tokens)
      break;
    const int32_t fed = static_cast<size_t>(step) < o.num_feed_tokens
                            ? o.feed_tokens[step]
                            : token;
    history.push_back(fed);
    st = device_greedy ? decode(fed, start + n_prompt + step, nullptr, &next)
                       : decode(fed, start + n_prompt + step, row.data());
    if (!st.ok())
      return st;
    if (o.on_logits)
      o.on_logits(o.user, SGC_LOGITS_DECODE, step, row.data(), vocab);
  }
  return status();
}

} // namespace runtime
} // namespace sgc
