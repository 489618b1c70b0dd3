// engine.cc - admission, steps, cancellation, and what each token reports.
#include "tools/sgc-serve/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sgc::serve {

double now_seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

job::~job() { sgc_text_stream_release(text); }

namespace {

/// SGC_SERVE_TEST_STEP_DELAY_MS paces the steps: the cancellation and drain
/// tests need answers slow enough to be interrupted in the middle.
void test_delay() {
  static const long ms = [] {
    const char *v = std::getenv("SGC_SERVE_TEST_STEP_DELAY_MS");
    return v ? std::max(0L, std::strtol(v, nullptr, 10)) : 0L;
  }();
  if (ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

} // namespace

engine::engine(served_model &model, metrics &m, int max_queue)
    : model_(model), metrics_(m), max_queue_(max_queue) {
  if (sgc_status_t *st = sgc_batch_create(model.session(), &batch_)) {
    std::fprintf(stderr, "sgc-serve: %s\n", describe(st).c_str());
    std::abort(); // only with a NULL session, which load() rules out
  }
  metrics_.slots_total = model.slots();
  thread_ = std::thread([this] { run(); });
}

engine::~engine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cancel_all_ = "the server is shutting down";
  }
  cv_.notify_all();
  thread_.join();
  sgc_batch_release(batch_);
}

engine::admission engine::submit(std::shared_ptr<job> j) {
  std::lock_guard<std::mutex> lock(mu_);
  if (draining_ || stop_)
    return admission::draining;
  // A free slot takes the request at once; otherwise it waits its turn.
  const int free_slots = model_.slots() - running_count_.load() -
                         static_cast<int>(waiting_.size());
  if (free_slots <= 0 && static_cast<int>(waiting_.size()) >= max_queue_)
    return admission::queue_full;
  j->owner = this;
  waiting_.push_back(std::move(j));
  metrics_.waiting = static_cast<int64_t>(waiting_.size());
  cv_.notify_all();
  return admission::accepted;
}

void engine::begin_drain() { draining_ = true; }

bool engine::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_.empty() && running_count_.load() == 0;
}

void engine::cancel_all(const std::string &why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_all_ = why;
  }
  cv_.notify_all();
}

void engine::finish(job &j, int error_status, const std::string &error) {
  std::string rest;
  if (!error_status && j.text) {
    const char *tail = nullptr;
    size_t len = 0;
    int stopped = 0;
    if (sgc_status_t *st =
            sgc_text_stream_finish(j.text, &tail, &len, &stopped)) {
      error_status = 500;
      rest = describe(st);
    } else {
      rest.assign(tail, len);
      j.stop_string = j.stop_string || stopped;
    }
  }
  const double t = now_seconds();
  if (!error_status && j.generated > 0)
    metrics_.e2e_latency.observe(t - j.t_arrival);
  std::lock_guard<std::mutex> lock(j.mu);
  if (error_status) {
    j.error_status = error_status;
    j.error = error.empty() ? rest : error;
  } else {
    if (!rest.empty())
      j.out.push_back(token_out{-1, rest, 0, {}});
    j.finish_reason =
        j.stop_string || (!j.options.ignore_eos && model_.is_stop(j.last_token))
            ? "stop"
            : "length";
  }
  j.done = true;
  j.cv.notify_all();
}

void engine::admit() {
  for (;;) {
    std::shared_ptr<job> j;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (waiting_.empty() || sgc_batch_free_slots(batch_) == 0)
        return;
      j = std::move(waiting_.front());
      waiting_.pop_front();
      metrics_.waiting = static_cast<int64_t>(waiting_.size());
    }
    if (j->cancelled) {
      finish(*j, 499, "the client went away");
      continue;
    }
    if (!j->images.empty() && !encode_images(*j))
      continue;
    std::vector<const char *> stops;
    for (const std::string &s : j->stop_strings)
      stops.push_back(s.c_str());
    sgc_status_t *st = sgc_text_stream_create(model_.tokenizer(), 1,
                                              stops.data(), stops.size(),
                                              &j->text);
    j->options.on_token = on_token;
    j->options.on_logits = j->logprobs >= 0 ? on_logits : nullptr;
    j->options.user = j.get();
    j->request.prompt = j->prompt.data();
    j->request.n_prompt = static_cast<int64_t>(j->prompt.size());
    j->request.options = &j->options;
    if (!st)
      st = sgc_batch_add(batch_, &j->request, nullptr);
    if (st) {
      int code = 0;
      const std::string why = describe(st, &code);
      finish(*j, code == SGC_STATUS_USAGE ? 400 : 500, why);
      continue;
    }
    metrics_.prompt_tokens += static_cast<int64_t>(j->prompt.size());
    running_.push_back(std::move(j));
    running_count_ = static_cast<int>(running_.size());
    metrics_.running = running_count_.load();
  }
}

bool engine::encode_images(job &j) {
  const sgc_model_image_info_t &v = *model_.vision();
  std::vector<float> one(static_cast<size_t>(v.soft_tokens * v.hidden_size));
  j.soft_tokens.clear();
  for (size_t i = 0; i < j.images.size(); ++i) {
    int64_t count = 0;
    if (sgc_status_t *st = sgc_session_encode_image(
            model_.session(), j.images[i].get(), one.data(), &count)) {
      finish(j, 500, "image " + std::to_string(i + 1) + ": " + describe(st));
      return false;
    }
    // Gemma 4: the rows past the image's own soft tokens are padding.
    j.soft_tokens.insert(j.soft_tokens.end(), one.begin(),
                         one.begin() + count * v.hidden_size);
  }
  if (static_cast<int64_t>(j.soft_tokens.size()) !=
      sgc_prompt_layout_soft_tokens(j.layout.get()) * v.hidden_size) {
    finish(j, 500, "the images gave another count of soft tokens than "
                   "their prompt blocks hold");
    return false;
  }
  j.options.prompt_image_blocks = sgc_prompt_layout_blocks(j.layout.get());
  j.options.prompt_soft_slots = sgc_prompt_layout_soft_slots(j.layout.get());
  j.options.image_soft_tokens = j.soft_tokens.data();
  return true;
}

void engine::run() {
  std::vector<sgc_sequence_request_t *> ended(
      static_cast<size_t>(model_.slots()));
  for (;;) {
    std::string cancel_why;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] {
        return stop_ || !cancel_all_.empty() || !waiting_.empty() ||
               !running_.empty();
      });
      cancel_why = cancel_all_;
      if (!cancel_why.empty()) {
        for (auto &j : waiting_)
          running_.push_back(std::move(j)); // ended below, never started
        waiting_.clear();
        metrics_.waiting = 0;
        cancel_all_.clear();
      }
      if (stop_ && cancel_why.empty() && running_.empty())
        break;
    }
    if (!cancel_why.empty()) {
      for (auto &j : running_) {
        sgc_batch_cancel(batch_, &j->request);
        finish(*j, 503, cancel_why);
      }
      running_.clear();
      running_count_ = 0;
      metrics_.running = 0;
      if (stop_)
        break;
      continue;
    }
    admit();
    // Clients that went away leave before the step.
    for (size_t i = 0; i < running_.size();) {
      if (running_[i]->cancelled) {
        sgc_batch_cancel(batch_, &running_[i]->request);
        finish(*running_[i], 499, "the client went away");
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    if (running_.empty()) {
      running_count_ = 0;
      metrics_.running = 0;
      continue;
    }
    test_delay();
    size_t n_ended = 0;
    sgc_status_t *st = sgc_batch_step(batch_, ended.data(), &n_ended);
    for (size_t e = 0; e < n_ended; ++e) {
      job *j = static_cast<job *>(ended[e]->options->user);
      finish(*j);
      running_.erase(std::find_if(running_.begin(), running_.end(),
                                  [&](const auto &r) { return r.get() == j; }));
    }
    if (st) {
      // A failing step ends every request it was running.
      const std::string why = describe(st);
      std::fprintf(stderr, "sgc-serve: a step failed: %s\n", why.c_str());
      for (auto &j : running_) {
        sgc_batch_cancel(batch_, &j->request);
        finish(*j, 500, why);
      }
      running_.clear();
    }
    running_count_ = static_cast<int>(running_.size());
    metrics_.running = running_count_.load();
  }
}

void engine::on_logits(void *user, sgc_logits_kind_t, int64_t,
                       const float *row, int64_t vocab) {
  job &j = *static_cast<job *>(user);
  j.row.assign(row, row + vocab);
}

namespace {

/// log-softmax of |row| at |token|, and the |k| most likely tokens (ties to
/// the lower id).
void logprobs_of(const std::vector<float> &row, int32_t token, int k,
                 token_out *out) {
  const float top = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (float x : row)
    sum += std::exp(static_cast<double>(x) - top);
  const double lse = top + std::log(sum);
  out->logprob = row[static_cast<size_t>(token)] - lse;
  if (k <= 0)
    return;
  std::vector<int32_t> ids(row.size());
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<int32_t>(i);
  const size_t n = std::min(ids.size(), static_cast<size_t>(k));
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n),
                    ids.end(), [&](int32_t a, int32_t b) {
                      const float x = row[static_cast<size_t>(a)],
                                  y = row[static_cast<size_t>(b)];
                      return x > y || (x == y && a < b);
                    });
  for (size_t i = 0; i < n; ++i)
    out->top.emplace_back(ids[i], row[static_cast<size_t>(ids[i])] - lse);
}

} // namespace

int engine::on_token(void *user, int32_t token) {
  job &j = *static_cast<job *>(user);
  engine &e = *j.owner;
  const double t = now_seconds();
  if (j.generated == 0)
    e.metrics_.time_to_first_token.observe(t - j.t_arrival);
  else
    e.metrics_.time_per_output_token.observe(t - j.t_last);
  if (j.generated == 0)
    j.t_first = t;
  j.t_last = t;
  ++j.generated;
  ++e.metrics_.generation_tokens;
  j.last_token = token;

  token_out o;
  o.id = token;
  const char *piece = nullptr;
  size_t len = 0;
  int stopped = 0;
  if (sgc_status_t *st =
          sgc_text_stream_push(j.text, token, &piece, &len, &stopped)) {
    std::fprintf(stderr, "sgc-serve: %s\n", describe(st).c_str());
    return 1;
  }
  o.text.assign(piece, len);
  if (j.logprobs >= 0 && !j.row.empty())
    logprobs_of(j.row, token, j.logprobs, &o);
  {
    std::lock_guard<std::mutex> lock(j.mu);
    j.out.push_back(std::move(o));
    j.cv.notify_all();
  }
  if (stopped) {
    j.stop_string = true;
    return 1;
  }
  return j.cancelled ? 1 : 0;
}

} // namespace sgc::serve
