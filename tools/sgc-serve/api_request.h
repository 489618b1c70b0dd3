// api_request.h - an OpenAI request body checked and turned into a job:
// every field the server takes, and a 4xx naming the one it cannot.
#ifndef SGC_TOOLS_SGC_SERVE_API_REQUEST_H
#define SGC_TOOLS_SGC_SERVE_API_REQUEST_H

#include "tools/sgc-serve/engine.h"
#include "tools/sgc-serve/served_model.h"

#include <memory>
#include <string>

namespace sgc::serve {

/// OpenAI's error object and the HTTP status it goes with.
struct api_error {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param; // the offending field, or empty
  std::string code;  // e.g. "model_not_found", or empty

  /// {"error": {"message", "type", "param", "code"}}.
  std::string json() const;
};

struct generation_request {
  bool chat = false;
  bool stream = false;
  bool include_usage = false;
  /// Chat: logprobs true; completions: logprobs given.
  bool logprobs = false;
  /// vLLM's return_token_ids: the prompt's and the answer's token ids.
  bool token_ids = false;
  std::shared_ptr<job> work;
};

/// Parses a /v1/chat/completions (|chat|) or /v1/completions body: the
/// prompt rendered and tokenized, the sampling and stop fields resolved.
bool parse_generation(const served_model &model, const std::string &body,
                      bool chat, generation_request *out, api_error *error);

} // namespace sgc::serve

#endif // SGC_TOOLS_SGC_SERVE_API_REQUEST_H
