// api_request.cc - the fields of SERVE.md section 1, checked one by one.
#include "tools/sgc-serve/api_request.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
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

/// Standard base64 (padding optional); false on any other character.
bool base64_decode(const std::string &in, size_t from, std::string *out) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out->clear();
  out->reserve((in.size() - from) / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t end = in.size();
  while (end > from && in[end - 1] == '=')
    --end;
  if (in.size() - end > 2)
    return false;
  for (size_t i = from; i < end; ++i) {
    const size_t v = alphabet.find(in[i]);
    if (v == std::string::npos)
      return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

/// The content parts of a message, in order, as the chat templates render
/// them: text trimmed, each image as the family's marker (collected in
/// |images|, decoded and preprocessed for the model's tower).
std::string message_text(const served_model &model, const json &content,
                         const std::string &where,
                         std::vector<std::shared_ptr<sgc_image_t>> *images) {
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
      continue;
    }
    if (type != "image_url")
      reject(at + ".type", "'" + type + "' is not a supported content part");
    const json *url = field(part, "image_url");
    if (!url || !url->is_object() || !url->contains("url") ||
        !(*url)["url"].is_string())
      reject(at + ".image_url.url", "must be a string");
    const std::string u = (*url)["url"];
    if (u.rfind("data:", 0) != 0)
      reject(at + ".image_url.url",
             "remote images are not fetched: send a data: URI");
    if (!model.vision())
      reject(at, "this model has no vision tower (compiled without its "
                 "image encoder): it takes text only");
    const size_t comma = u.find(',');
    if (comma == std::string::npos || comma < 12 ||
        u.compare(comma - 7, 7, ";base64") != 0)
      reject(at + ".image_url.url", "a data: URI with ';base64,' is expected");
    std::string bytes;
    if (!base64_decode(u, comma + 1, &bytes))
      reject(at + ".image_url.url", "the data is not valid base64");
    sgc_image_t *image = nullptr;
    if (sgc_status_t *st = sgc_image_load_memory(
            bytes.data(), bytes.size(), at.c_str(), model.max_image_pixels(),
            &model.vision()->options, &image)) {
      std::string why = describe(st);
      if (why.find("more than the limit") != std::string::npos)
        why += " (the server's --max-image-pixels)";
      throw bad_field{at, why};
    }
    images->emplace_back(image, sgc_image_release);
    text += sgc_chat_image_marker(model.chat_format());
  }
  return text;
}

/// An owned C string from the runtime.
using c_text = std::unique_ptr<char, decltype(&std::free)>;

std::vector<int32_t> tokenize(const served_model &model, const char *text,
                              size_t len, const char *param) {
  int32_t *ids = nullptr;
  size_t n = 0;
  if (sgc_status_t *st =
          sgc_tokenizer_encode(model.tokenizer(), text, len, 0, &ids, &n))
    throw bad_field{param, std::string(param) + ": " + describe(st)};
  std::vector<int32_t> out(ids, ids + n);
  std::free(ids);
  return out;
}

/// The chat prompt: rendered, images expanded as the family's processor
/// expands them, tokenized, and laid out.
void chat_prompt(const served_model &model, const json &o, job *j) {
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
    texts.push_back(content ? message_text(model, *content, at + ".content",
                                           &j->images)
                            : "");
  }
  std::vector<sgc_chat_message_t> list(roles.size());
  for (size_t i = 0; i < roles.size(); ++i)
    list[i] = sgc_chat_message_t{roles[i].c_str(), texts[i].c_str(), 0};
  char *raw = nullptr;
  const char *why = nullptr;
  if (sgc_chat_render(model.chat_format(), model.bos_text().c_str(),
                      list.data(), list.size(), 1, &raw, &why))
    throw bad_field{"messages", std::string("messages: ") + why};
  c_text rendered(raw, &std::free);
  if (j->images.empty()) {
    j->prompt = tokenize(model, rendered.get(), std::strlen(rendered.get()),
                         "messages");
    return;
  }
  // The processor's expansion: each marker becomes the image's block.
  const sgc_model_image_info_t &v = *model.vision();
  std::vector<int64_t> soft;
  for (const auto &image : j->images)
    soft.push_back(v.options.family == SGC_IMAGE_FAMILY_GEMMA3
                       ? v.soft_tokens
                       : sgc_image_soft_token_count(image.get()));
  const auto piece = [&](int32_t id) {
    const char *p = sgc_tokenizer_piece(model.tokenizer(), id);
    return p ? p : "";
  };
  char *expanded_raw = nullptr;
  size_t len = 0;
  if (sgc_status_t *st = sgc_prompt_expand_images(
          v.options.family, rendered.get(), std::strlen(rendered.get()),
          piece(v.tokens.image_token_id), piece(v.tokens.boi_token_id),
          piece(v.tokens.eoi_token_id), soft.data(), soft.size(),
          &expanded_raw, &len))
    throw bad_field{"messages", "messages: " + describe(st)};
  c_text expanded(expanded_raw, &std::free);
  const std::vector<int32_t> ids =
      tokenize(model, expanded.get(), len, "messages");
  sgc_prompt_layout_t *layout = nullptr;
  if (sgc_status_t *st = sgc_prompt_layout_create(
          ids.data(), ids.size(), &v.tokens, soft.data(), soft.size(),
          &layout))
    throw bad_field{"messages", "messages: " + describe(st)};
  j->layout.reset(layout, sgc_prompt_layout_release);
  const int32_t *laid = sgc_prompt_layout_ids(layout);
  j->prompt.assign(laid, laid + sgc_prompt_layout_length(layout));
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

    if (chat)
      chat_prompt(model, o, j.get());
    else
      j->prompt = completion_prompt(model, o);
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
