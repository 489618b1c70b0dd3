// engine.h - the thread that owns the session: requests wait for a
// sequence slot, join the running batch, and leave it when they end or
// their client goes (sgc_batch_t: one prefill chunk and one batched decode
// step per step).
#ifndef SGC_TOOLS_SGC_SERVE_ENGINE_H
#define SGC_TOOLS_SGC_SERVE_ENGINE_H

#include "tools/sgc-serve/metrics.h"
#include "tools/sgc-serve/served_model.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sgc::serve {

/// One generated token as the client sees it.
struct token_out {
  /// -1: text only (what the end of the answer settled).
  int32_t id = -1;
  std::string text;
  /// With logprobs: log-softmax of the token, and the most likely tokens.
  double logprob = 0;
  std::vector<std::pair<int32_t, double>> top;
};

/// A generation request; shared by its HTTP worker and the engine.
struct job {
  // Set before submit.
  std::vector<int32_t> prompt;
  sgc_generate_options_t options{}; // sampling, max_new_tokens, stop tokens
  std::vector<std::string> stop_strings;
  /// A prompt with images: the images in prompt order, their layout
  /// (blocks and soft-token slots of |prompt|'s rows), and their soft tokens
  /// once the engine ran the tower.
  std::vector<std::shared_ptr<sgc_image_t>> images;
  std::shared_ptr<sgc_prompt_layout_t> layout;
  std::vector<float> soft_tokens;
  /// Top logprobs per token to report; -1: no logprobs.
  int logprobs = -1;
  double t_arrival = 0;

  // Written by the engine, read under |mu|.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<token_out> out;
  bool done = false;
  /// "stop", "length"; or an error (|error| set, |error_status| 4xx/5xx).
  std::string finish_reason, error;
  int error_status = 0;
  int64_t generated = 0;

  /// Set by the HTTP side when the client has gone.
  std::atomic<bool> cancelled{false};

  // The engine's own.
  sgc_sequence_request_t request{};
  sgc_text_stream_t *text = nullptr;
  std::vector<float> row;
  bool stop_string = false;
  int32_t last_token = -1;
  double t_first = 0, t_last = 0;
  class engine *owner = nullptr;

  ~job();
};

class engine {
public:
  engine(served_model &model, metrics &m, int max_queue);
  ~engine();

  enum class admission { accepted, queue_full, draining };
  admission submit(std::shared_ptr<job> j);

  /// From now on every submit is refused (SIGTERM).
  void begin_drain();
  bool draining() const { return draining_; }
  /// Nothing running or waiting.
  bool idle() const;
  /// Ends every request now with |why| (the drain deadline).
  void cancel_all(const std::string &why);

private:
  void run();
  /// Moves waiting jobs into free slots.
  void admit();
  /// Runs the vision tower on a job's images (between steps: the session
  /// is this thread's); false with the job finished on failure.
  bool encode_images(job &j);
  void finish(job &j, int error_status = 0, const std::string &error = {});
  static int on_token(void *user, int32_t token);
  static void on_logits(void *user, sgc_logits_kind_t kind, int64_t index,
                        const float *row, int64_t vocab);

  served_model &model_;
  metrics &metrics_;
  int max_queue_;
  sgc_batch_t *batch_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<job>> waiting_;
  std::vector<std::shared_ptr<job>> running_; // the engine thread's
  std::atomic<int> running_count_{0};
  bool stop_ = false;
  std::string cancel_all_;
  std::atomic<bool> draining_{false};
  std::thread thread_;
};

double now_seconds();

} // namespace sgc::serve

#endif // SGC_TOOLS_SGC_SERVE_ENGINE_H
