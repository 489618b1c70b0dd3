// served_model.h - what the server serves: the compiled model, its weights
// and session, and what the checkpoint's own files decide (tokenizer, chat
// format, stop tokens, generation_config.json's sampling defaults).
#ifndef SGC_TOOLS_SGC_SERVE_SERVED_MODEL_H
#define SGC_TOOLS_SGC_SERVE_SERVED_MODEL_H

#include "tools/sgc-serve/options.h"

#include <sgc/runtime.h>

#include <string>
#include <vector>

namespace sgc::serve {

/// Sampling defaults for fields a request leaves out: generation_config.json
/// when it asks to sample, else OpenAI's (temperature 1, everything kept).
struct sampling_defaults {
  float temperature = 1.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
};

class served_model {
public:
  served_model() = default;
  served_model(const served_model &) = delete;
  served_model &operator=(const served_model &) = delete;
  ~served_model();

  /// Opens everything; on failure the message names the file (and prints
  /// nothing) and the exit code is the status's.
  int load(const options &o, std::string *error);

  /// The id clients name: --alias, else the .so's file name without .so.
  const std::string &id() const { return id_; }
  sgc_session_t *session() const { return session_; }
  const sgc_tokenizer_t *tokenizer() const { return tokenizer_; }
  sgc_chat_format_t chat_format() const { return format_; }
  const std::string &bos_text() const { return bos_text_; }
  int64_t context() const { return context_; }
  int32_t slots() const { return slots_; }
  /// Tokens the runtime stops at beyond the model's own (passed as
  /// stop_tokens), and every token that ends a turn (for finish_reason).
  const std::vector<int32_t> &extra_stops() const { return extra_stops_; }
  bool is_stop(int32_t token) const;
  const sampling_defaults &defaults() const { return defaults_; }
  /// The vision tower, when the model was compiled with one.
  const sgc_model_image_info_t *vision() const {
    return has_vision_ ? &vision_ : nullptr;
  }
  uint64_t max_image_pixels() const { return max_image_pixels_; }

private:
  std::string id_;
  sgc_model_t *model_ = nullptr;
  sgc_weights_t *weights_ = nullptr;
  sgc_session_t *session_ = nullptr;
  sgc_tokenizer_t *tokenizer_ = nullptr;
  sgc_chat_format_t format_ = SGC_CHAT_NONE;
  std::string bos_text_;
  int64_t context_ = 0;
  int32_t slots_ = 1;
  std::vector<int32_t> extra_stops_, all_stops_;
  sampling_defaults defaults_;
  bool has_vision_ = false;
  sgc_model_image_info_t vision_{};
  uint64_t max_image_pixels_ = 0;
};

/// "CODE_NAME: message; note; note" of a runtime status (freed here).
std::string describe(sgc_status_t *status, int *code = nullptr);

} // namespace sgc::serve

#endif // SGC_TOOLS_SGC_SERVE_SERVED_MODEL_H
