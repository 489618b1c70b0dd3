// api_request.cc - the fields of SERVE.md section 1, checked one by one.
#include "tools/sgc-serve/api_request.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <random>

namespace sgc::serve {

using nlohmann::json;

std::string api_error::json() const {
  nlohmann::json e = {{"message", message}, {"type", type}};
  e["param"] = param.empty() ? nlohmann::json() : nlohmann::json(param);
  e["code"] = code.empty() ? nlohmann::json(status) : nlohmann::json(code);
  return nlohmann::json{{"error", e}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

/// Fails with a 400 naming |param|.
struct bad_field {
  std::string param, message;
};

[[noreturn]] void reject(const std::string &param, const std::string &why) {
  throw bad_field{param, param + ": " + why};
}

/// The member |name| of |o|, or nullptr when absent or null.
const json *field(const json &o, const char *name) {
  const auto it = o.find(name);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

double number(const json &o, const char *name, double lo, double hi,
              double fallback) {
  const json *v = field(o, name);
  if (!v)
    return fallback;
  if (!v->is_number())
    reject(name, "must be a number");
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi))
    reject(name, "must be in [" + json(lo).dump() + ", " + json(hi).dump() +
                     "], not " + v->dump());
  return x;
}

int64_t integer(const json &o, const char *name, int64_t lo, int64_t hi,
                int64_t fallback) {
  const json *v = field(o, name);
  if (!v)
    return fallback;
  if (!v->is_number_integer())
    reject(name, "must be an integer");
  const int64_t x = v->is_number_unsigned()
                        ? static_cast<int64_t>(std::min<uint64_t>(
                              v->get<uint64_t>(), INT64_MAX))
                        : v->get<int64_t>();
  if (x < lo || x > hi)
    reject(name, "must be in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], not " + v->dump());
  return x;
}

bool boolean(const json &o, const char *name, bool fallback) {
  const json *v = field(o, name);
  if (!v)
    return fallback;
  if (!v->is_boolean())
    reject(name, "must be true or false");
  return v->get<bool>();
}

/// Fields the server does not take yet: refused by name unless they ask
/// for what it does anyway.
void refuse_unsupported(const json &o) {
  if (const json *n = field(o, "n"); n && !(n->is_number_integer() && *n == 1))
    reject("n", "only n = 1 is supported");
  if (const json *b = field(o, "best_of"); b && !(b->is_number_integer() && *b == 1))
    reject("best_of", "only best_of = 1 is supported");
  for (const char *name : {"tools", "functions"})
    if (const json *t = field(o, name); t && !(t->is_array() && t->empty()))
      reject(name, "tools are not supported");
  for (const char *name : {"tool_choice", "function_call"})
    if (const json *t = field(o, name); t && !(t->is_string() && *t == "none"))
      reject(name, "tools are not supported");
  if (const json *r = field(o, "response_format");
      r && !(r->is_object() && r->value("type", "") == "text"))
    reject("response_format", "only {\"type\": \"text\"} is supported");
  if (const json *b = field(o, "logit_bias"); b && !(b->is_object() && b->empty()))
    reject("logit_bias", "is not supported");
  for (const char *name : {"presence_penalty", "frequency_penalty"})
    if (const json *p = field(o, name); p && !(p->is_number() && *p == 0))
      reject(name, "is not supported (repetition_penalty is)");
  if (boolean(o, "echo", false))
    reject("echo", "is not supported");
  if (const json *s = field(o, "suffix"); s && !(s->is_string() && s->empty()))
    reject("suffix", "is not supported");
}

/// Each text part trimmed as the templates trim ('| trim'), in order.
std::string trimmed(const std::string &s) {
  const char *ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos)
    return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string message_text(const json &content, const std::string &where) {
  if (content.is_string())
    return content.get<std::string>();
  if (!content.is_array())
    reject(where, "must be a string or a list of content parts");
  std::string text;
  for (size_t k = 0; k < content.size(); ++k) {
    const json &part = content[k];
    const std::string at = where + "[" + std::to_string(k) + "]";
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
      reject(at, "must be an object with a \"type\"");
    const std::string type = part["type"];
    if (type == "text") {
      if (!part.contains("text") || !part["text"].is_string())
        reject(at + ".text", "must be a string");
      text += trimmed(part["text"].get<std::string>());
    } else if (type == "image_url") {
      const json *url = field(part, "image_url");
      if (!url || !url->is_object() || !url->contains("url") ||
          !(*url)["url"].is_string())
        reject(at + ".image_url.url", "must be a string");
      if ((*url)["url"].get<std::string>().rfind("data:", 0) != 0)
        reject(at + ".image_url.url",
               "remote images are not fetched: send a data: URI");
      reject(at, "images are not served yet (sgc-serve takes text parts; "
                 "sgc-run --image runs them)");
    } else {
      reject(at + ".type", "'" + type + "' is not a supported content part");
    }
  }
  return text;
}

std::vector<int32_t> chat_prompt(const served_model &model, const json &o) {
  const json *messages = field(o, "messages");
  if (!messages)
    reject("messages", "is required");
  if (!messages->is_array() || messages->empty())
    reject("messages", "must be a non-empty list");
  if (model.chat_format() == SGC_CHAT_NONE)
    throw bad_field{"messages", "this model has no chat template: use "
                                "/v1/completions"};
  std::vector<std::string> roles, texts;
  for (size_t i = 0; i < messages->size(); ++i) {
    const json &m = (*messages)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object())
      reject(at, "must be an object");
    const json *role = field(m, "role");
    if (!role || !role->is_string())
      reject(at + ".role", "must be a string");
    const std::string r = *role;
    if (r != "system" && r != "developer" && r != "user" && r != "assistant")
      reject(at + ".role", "'" + r + "' is not supported (system, "
                                     "developer, user, assistant)");
    if (field(m, "tool_calls"))
      reject(at + ".tool_calls", "tools are not supported");
    const json *content = field(m, "content");
    if (!content && r != "assistant")
      reject(at + ".content", "is required");
    roles.push_back(r == "developer" ? "system" : r);
    texts.push_back(content ? message_text(*content, at + ".content") : "");
  }
  std::vector<sgc_chat_message_t> list(roles.size());
  for (size_t i = 0; i < roles.size(); ++i)
    list[i] = sgc_chat_message_t{roles[i].c_str(), texts[i].c_str(), 0};
  char *rendered = nullptr;
  const char *why = nullptr;
  if (sgc_chat_render(model.chat_format(), model.bos_text().c_str(),
                      list.data(), list.size(), 1, &rendered, &why))
    throw bad_field{"messages", std::string("messages: ") + why};
  int32_t *ids = nullptr;
  size_t n = 0;
  sgc_status_t *st = sgc_tokenizer_encode(model.tokenizer(), rendered,
                                          std::strlen(rendered), 0, &ids, &n);
  std::free(rendered);
  if (st)
    throw bad_field{"messages", "messages: " + describe(st)};
  std::vector<int32_t> out(ids, ids + n);
  std::free(ids);
  return out;
}

std::vector<int32_t> completion_prompt(const served_model &model,
                                       const json &o) {
  const json *prompt = field(o, "prompt");
  if (!prompt)
    reject("prompt", "is required");
  const json *p = prompt;
  if (p->is_array() && p->size() == 1 && (*p)[0].is_string())
    p = &(*p)[0];
  if (p->is_array()) { // token ids
    if (p->empty())
      reject("prompt", "must not be empty");
    std::vector<int32_t> ids;
    const int32_t vocab = sgc_tokenizer_vocab_size(model.tokenizer());
    for (const json &id : *p) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
          id.get<int64_t>() >= vocab)
        reject("prompt", "must be a string or a list of token ids in [0, " +
                             std::to_string(vocab) + ")");
      ids.push_back(id.get<int32_t>());
    }
    return ids;
  }
  if (!p->is_string())
    reject("prompt", "must be a string (one prompt) or a list of token ids");
  const std::string text = *p;
  int32_t *ids = nullptr;
  size_t n = 0;
  if (sgc_status_t *st = sgc_tokenizer_encode(
          model.tokenizer(), text.data(), text.size(), 1, &ids, &n))
    throw bad_field{"prompt", "prompt: " + describe(st)};
  std::vector<int32_t> out(ids, ids + n);
  std::free(ids);
  if (out.empty())
    reject("prompt", "must not be empty");
  return out;
}

std::vector<std::string> stop_strings(const json &o) {
  const json *stop = field(o, "stop");
  if (!stop)
    return {};
  if (stop->is_string())
    return {stop->get<std::string>()};
  if (!stop->is_array())
    reject("stop", "must be a string or a list of strings");
  std::vector<std::string> out;
  for (const json &s : *stop) {
    if (!s.is_string())
      reject("stop", "must be a string or a list of strings");
    out.push_back(s);
  }
  return out;
}

} // namespace

bool parse_generation(const served_model &model, const std::string &body,
                      bool chat, generation_request *out, api_error *error) {
  json o;
  try {
    o = json::parse(body);
  } catch (const json::parse_error &e) {
    error->message = std::string("the body is not valid JSON: ") + e.what();
    return false;
  }
  if (!o.is_object()) {
    error->message = "the body must be a JSON object";
    return false;
  }
  try {
    if (const json *m = field(o, "model")) {
      if (!m->is_string())
        reject("model", "must be a string");
      if (*m != model.id()) {
        error->status = 404;
        error->param = "model";
        error->code = "model_not_found";
        error->message = "The model '" + m->get<std::string>() +
                         "' does not exist (this server has '" + model.id() +
                         "')";
        return false;
      }
    }
    refuse_unsupported(o);
    auto j = std::make_shared<job>();
    out->chat = chat;
    out->stream = boolean(o, "stream", false);
    out->token_ids = boolean(o, "return_token_ids", false);
    if (const json *so = field(o, "stream_options")) {
      if (!so->is_object())
        reject("stream_options", "must be an object");
      out->include_usage = boolean(*so, "include_usage", false);
    }
    if (chat) {
      out->logprobs = boolean(o, "logprobs", false);
      const int64_t top = integer(o, "top_logprobs", 0, 20, 0);
      if (field(o, "top_logprobs") && !out->logprobs)
        reject("top_logprobs", "needs logprobs: true");
      j->logprobs = out->logprobs ? static_cast<int>(top) : -1;
    } else {
      const json *lp = field(o, "logprobs");
      out->logprobs = lp != nullptr;
      j->logprobs = lp ? static_cast<int>(integer(o, "logprobs", 0, 20, 0)) : -1;
    }

    const sampling_defaults &d = model.defaults();
    sgc_generate_options_default(&j->options);
    j->options.temperature =
        static_cast<float>(number(o, "temperature", 0, 2, d.temperature));
    j->options.top_p = static_cast<float>(number(o, "top_p", 0, 1, d.top_p));
    if (field(o, "top_p") && j->options.top_p <= 0)
      reject("top_p", "must be greater than 0");
    const int64_t top_k = integer(o, "top_k", -1, INT32_MAX, d.top_k);
    j->options.top_k = static_cast<int32_t>(top_k < 0 ? 0 : top_k);
    j->options.min_p = static_cast<float>(number(o, "min_p", 0, 1, d.min_p));
    j->options.repetition_penalty = static_cast<float>(
        number(o, "repetition_penalty", 1e-3, 100, d.repetition_penalty));
    if (const json *seed = field(o, "seed")) {
      if (!seed->is_number_integer())
        reject("seed", "must be an integer");
      j->options.seed = seed->is_number_unsigned()
                            ? seed->get<uint64_t>()
                            : static_cast<uint64_t>(seed->get<int64_t>());
    } else {
      j->options.seed = std::random_device{}();
    }
    j->stop_strings = stop_strings(o);
    // vLLM's ignore_eos: only max_tokens and stop strings end the answer.
    if (boolean(o, "ignore_eos", false)) {
      j->options.ignore_eos = 1;
    } else {
      j->options.stop_tokens = model.extra_stops().data();
      j->options.num_stop_tokens = model.extra_stops().size();
    }

    j->prompt = chat ? chat_prompt(model, o) : completion_prompt(model, o);
    const int64_t room = model.context() - static_cast<int64_t>(j->prompt.size());
    if (room < 1) {
      error->status = 400;
      error->param = chat ? "messages" : "prompt";
      error->code = "context_length_exceeded";
      error->message = "the prompt is " + std::to_string(j->prompt.size()) +
                       " tokens; this server's context is " +
                       std::to_string(model.context()) +
                       " tokens, which leaves no room for an answer";
      return false;
    }
    // Default: to the end of the turn, as far as the context goes.
    const char *max_name = field(o, "max_completion_tokens")
                               ? "max_completion_tokens"
                               : "max_tokens";
    const int64_t wanted = integer(o, max_name, 1, INT64_MAX, room);
    j->options.max_new_tokens = std::min(wanted, room);
    out->work = std::move(j);
    return true;
  } catch (const bad_field &b) {
    error->status = 400;
    error->param = b.param;
    error->message = b.message;
    return false;
  } catch (const json::exception &e) {
    error->status = 400;
    error->message = std::string("the body has a value of the wrong type: ") +
                     e.what();
    return false;
  }
}

} // namespace sgc::serve
