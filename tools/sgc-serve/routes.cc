// routes.cc - the endpoints of SERVE.md section 1.
#include "tools/sgc-serve/routes.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace sgc::serve {

using nlohmann::json;

namespace {

std::string dump(const json &j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// Counts a request in flight for as long as it is handled.
struct in_flight_guard {
  std::atomic<int> &n;
  explicit in_flight_guard(std::atomic<int> &count) : n(count) { ++n; }
  ~in_flight_guard() { --n; }
};

/// The text of one token on its own (what logprobs show).
std::string token_text(const sgc_tokenizer_t *t, int32_t id) {
  char *text = nullptr;
  size_t len = 0;
  if (sgc_status_t *st = sgc_tokenizer_decode(t, &id, 1, 0, &text, &len)) {
    sgc_status_free(st);
    return "";
  }
  std::string out(text, len);
  std::free(text);
  return out;
}

json bytes_of(const std::string &s) {
  json b = json::array();
  for (unsigned char c : s)
    b.push_back(static_cast<int>(c));
  return b;
}

/// Chat logprobs entries for |tokens| (ids >= 0 only).
json chat_logprobs(const sgc_tokenizer_t *t, const std::vector<token_out> &tokens) {
  json content = json::array();
  for (const token_out &o : tokens) {
    if (o.id < 0)
      continue;
    const std::string text = token_text(t, o.id);
    json top = json::array();
    for (const auto &[id, lp] : o.top) {
      const std::string s = token_text(t, id);
      top.push_back({{"token", s}, {"logprob", lp}, {"bytes", bytes_of(s)}});
    }
    content.push_back({{"token", text},
                       {"logprob", o.logprob},
                       {"bytes", bytes_of(text)},
                       {"top_logprobs", top}});
  }
  return json{{"content", content}};
}

/// The legacy completions logprobs object; |offset| is the text offset of
/// the first token.
json completion_logprobs(const sgc_tokenizer_t *t,
                         const std::vector<token_out> &tokens, size_t offset) {
  json out = {{"tokens", json::array()},
              {"token_logprobs", json::array()},
              {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (const token_out &o : tokens) {
    if (o.id < 0)
      continue;
    const std::string text = token_text(t, o.id);
    json top = json::object();
    for (const auto &[id, lp] : o.top)
      top[token_text(t, id)] = lp;
    out["tokens"].push_back(text);
    out["token_logprobs"].push_back(o.logprob);
    out["top_logprobs"].push_back(top);
    out["text_offset"].push_back(offset);
    offset += o.text.size();
  }
  return out;
}

bool constant_time_equal(const std::string &a, const std::string &b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  return diff == 0 && !b.empty();
}

} // namespace

routes::routes(const options &o, metrics &m)
    : options_(o), metrics_(m),
      started_(static_cast<int64_t>(std::time(nullptr))) {}

void routes::set_ready(served_model *model, engine *e) {
  model_ = model;
  engine_ = e;
  ready_ = true;
}

http_headers routes::cors_headers(const http_request &r) const {
  const std::string origin = r.header("origin");
  if (origin.empty())
    return {};
  for (const std::string &allowed : options_.cors_origins)
    if (allowed == "*" || allowed == origin)
      return {{"Access-Control-Allow-Origin", allowed == "*" ? "*" : origin},
              {"Vary", "Origin"}};
  return {};
}

bool routes::authorized(const http_request &r) const {
  if (options_.api_key.empty())
    return true;
  return constant_time_equal(r.header("authorization"),
                             "Bearer " + options_.api_key);
}

int routes::send_json(http_connection &c, int status, const std::string &body,
                      const http_headers &extra) {
  c.send(status, "application/json", body, extra);
  return status;
}

int routes::send_error(http_connection &c, const api_error &e,
                       const http_headers &extra) {
  return send_json(c, e.status, e.json(), extra);
}

void routes::bad_request(http_connection &c, int status,
                         const std::string &why) {
  api_error e;
  e.status = status;
  e.message = why;
  c.set_keep_alive(false);
  send_error(c, e, {});
  metrics_.count_response(status);
  std::fprintf(stderr, "sgc-serve: %s - - %d (%s)\n", c.peer().c_str(),
               status, why.c_str());
}

void routes::handle(http_connection &c, const http_request &r) {
  in_flight_guard guard(in_flight_);
  const double t0 = now_seconds();
  const http_headers cors = cors_headers(r);
  std::string note;
  int status = 500;
  try {
    status = dispatch(c, r, cors, &note);
  } catch (const std::exception &e) {
    // A bug of ours: the client gets a 500, the server goes on.
    api_error err;
    err.status = 500;
    err.type = "server_error";
    err.message = std::string("internal error: ") + e.what();
    note = err.message;
    c.set_keep_alive(false);
    send_error(c, err, cors);
  }
  metrics_.count_response(status);
  std::fprintf(stderr, "sgc-serve: %s %s %s %d %.1f ms%s%s\n",
               c.peer().c_str(), r.method.c_str(), r.target.c_str(), status,
               (now_seconds() - t0) * 1e3, note.empty() ? "" : " ",
               note.c_str());
}

int routes::dispatch(http_connection &c, const http_request &r,
                     const http_headers &cors, std::string *note) {
  const std::string path = r.path();
  api_error e;
  if (r.method == "OPTIONS" && !options_.cors_origins.empty()) {
    http_headers h = cors;
    h.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    h.emplace_back("Access-Control-Allow-Headers",
                   "Authorization, Content-Type");
    h.emplace_back("Access-Control-Max-Age", "600");
    c.send(204, "", "", h);
    return 204;
  }
  struct route {
    const char *method, *path;
  };
  static const route known[] = {
      {"GET", "/health"},           {"GET", "/metrics"},
      {"GET", "/v1/models"},        {"POST", "/v1/chat/completions"},
      {"POST", "/v1/completions"},  {"POST", "/tokenize"},
      {"POST", "/detokenize"}};
  const route *found = nullptr;
  bool path_known = false;
  for (const route &k : known)
    if (path == k.path) {
      path_known = true;
      if (r.method == k.method)
        found = &k;
    }
  if (!found) {
    e.status = path_known ? 405 : 404;
    e.type = path_known ? "invalid_request_error" : "not_found_error";
    e.message = (path_known ? "method not allowed: " : "no such endpoint: ") +
                r.method + " " + path;
    return send_error(c, e, cors);
  }

  if (path == "/health") {
    if (!ready_ || draining_) {
      const json body = {{"error",
                          {{"code", 503},
                           {"message", ready_ ? "Shutting down"
                                              : "Loading model"},
                           {"type", "unavailable_error"}}}};
      return send_json(c, 503, dump(body), cors);
    }
    return send_json(c, 200, R"({"status":"ok"})", cors);
  }
  if (path == "/metrics") {
    c.send(200, "text/plain; version=0.0.4", metrics_.render(), cors);
    return 200;
  }
  if (!authorized(r)) {
    e.status = 401;
    e.type = "authentication_error";
    e.code = "invalid_api_key";
    e.message = "a valid API key is required: send 'Authorization: Bearer "
                "KEY' (--api-key)";
    return send_error(c, e, cors);
  }
  if (!ready_) {
    e.status = 503;
    e.type = "unavailable_error";
    e.message = "Loading model";
    http_headers h = cors;
    h.emplace_back("Retry-After", "1");
    return send_error(c, e, h);
  }
  if (path == "/v1/models") {
    const json body = {
        {"object", "list"},
        {"data",
         {{{"id", model_->id()},
           {"object", "model"},
           {"created", started_},
           {"owned_by", "sgc"},
           {"max_model_len", model_->context()}}}}};
    return send_json(c, 200, dump(body), cors);
  }
  if (path == "/tokenize")
    return tokenize(c, r, cors);
  if (path == "/detokenize")
    return detokenize(c, r, cors);
  return generate(c, r, path == "/v1/chat/completions", cors, note);
}

int routes::tokenize(http_connection &c, const http_request &r,
                     const http_headers &cors) {
  api_error e;
  json o = json::parse(r.body, nullptr, false);
  const char *key = o.is_object() && o.contains("prompt") ? "prompt" : "content";
  if (!o.is_object() || !o.contains(key) || !o[key].is_string()) {
    e.param = "content";
    e.message = "the body must be {\"content\": \"text\"} (or \"prompt\")";
    return send_error(c, e, cors);
  }
  bool add_special = false;
  if (o.contains("add_special")) {
    if (!o["add_special"].is_boolean()) {
      e.param = "add_special";
      e.message = "add_special: must be true or false";
      return send_error(c, e, cors);
    }
    add_special = o["add_special"];
  }
  const std::string text = o[key];
  int32_t *ids = nullptr;
  size_t n = 0;
  if (sgc_status_t *st = sgc_tokenizer_encode(
          model_->tokenizer(), text.data(), text.size(), add_special, &ids, &n)) {
    e.param = key;
    e.message = std::string(key) + ": " + describe(st);
    return send_error(c, e, cors);
  }
  const json body = {{"tokens", std::vector<int32_t>(ids, ids + n)},
                     {"count", n},
                     {"max_model_len", model_->context()}};
  std::free(ids);
  return send_json(c, 200, dump(body), cors);
}

int routes::detokenize(http_connection &c, const http_request &r,
                       const http_headers &cors) {
  api_error e;
  e.param = "tokens";
  json o = json::parse(r.body, nullptr, false);
  if (!o.is_object() || !o.contains("tokens") || !o["tokens"].is_array()) {
    e.message = "the body must be {\"tokens\": [ids]}";
    return send_error(c, e, cors);
  }
  std::vector<int32_t> ids;
  const int32_t vocab = sgc_tokenizer_vocab_size(model_->tokenizer());
  for (const json &id : o["tokens"]) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= vocab) {
      e.message = "tokens: every id must be an integer in [0, " +
                  std::to_string(vocab) + "), not " + id.dump();
      return send_error(c, e, cors);
    }
    ids.push_back(id.get<int32_t>());
  }
  char *text = nullptr;
  size_t len = 0;
  if (sgc_status_t *st = sgc_tokenizer_decode(model_->tokenizer(), ids.data(),
                                              ids.size(), 0, &text, &len)) {
    e.message = "tokens: " + describe(st);
    return send_error(c, e, cors);
  }
  const json body = {{"content", std::string(text, len)}};
  std::free(text);
  return send_json(c, 200, dump(body), cors);
}

int routes::generate(http_connection &c, const http_request &r, bool chat,
                     const http_headers &cors, std::string *note) {
  generation_request g;
  api_error e;
  if (!parse_generation(*model_, r.body, chat, &g, &e))
    return send_error(c, e, cors);
  std::shared_ptr<job> j = g.work;
  j->t_arrival = now_seconds();
  switch (engine_->submit(j)) {
  case engine::admission::accepted:
    break;
  case engine::admission::queue_full: {
    e.status = 503;
    e.type = "unavailable_error";
    e.message = "the server is busy: every sequence slot is in use and " +
                std::to_string(options_.max_queue) +
                " requests are waiting (--max-queue)";
    http_headers h = cors;
    h.emplace_back("Retry-After", "1");
    return send_error(c, e, h);
  }
  case engine::admission::draining:
    e.status = 503;
    e.type = "unavailable_error";
    e.message = "the server is shutting down";
    c.set_keep_alive(false);
    return send_error(c, e, cors);
  }

  const std::string id = (chat ? "chatcmpl-" : "cmpl-") +
                         std::to_string(started_) + "-" +
                         std::to_string(next_id_++);
  const int64_t created = static_cast<int64_t>(std::time(nullptr));
  const json head = {{"id", id},
                     {"object", chat ? "chat.completion.chunk" : "text_completion"},
                     {"created", created},
                     {"model", model_->id()}};
  const sgc_tokenizer_t *tok = model_->tokenizer();
  const int64_t n_prompt = static_cast<int64_t>(j->prompt.size());
  const auto usage = [&](int64_t generated) {
    return json{{"prompt_tokens", n_prompt},
                {"completion_tokens", generated},
                {"total_tokens", n_prompt + generated}};
  };

  // Waits for tokens (or the end); false when the client has gone, which
  // is looked at every 100 ms however fast tokens come.
  std::vector<token_out> batch;
  double checked = now_seconds();
  const auto next = [&](bool *done) {
    std::unique_lock<std::mutex> lock(j->mu);
    for (;;) {
      if (j->out.empty() && !j->done)
        j->cv.wait_for(lock, std::chrono::milliseconds(100));
      if (now_seconds() - checked >= 0.1) {
        checked = now_seconds();
        lock.unlock();
        const bool gone = c.client_gone();
        lock.lock();
        if (gone) {
          j->cancelled = true;
          return false;
        }
      }
      if (!j->out.empty() || j->done)
        break;
    }
    batch.assign(std::make_move_iterator(j->out.begin()),
                 std::make_move_iterator(j->out.end()));
    j->out.clear();
    *done = j->done;
    return true;
  };

  std::string text;
  std::vector<token_out> all;
  bool done = false;
  if (!g.stream) {
    while (!done)
      if (!next(&done)) {
        *note = "client went away";
        return 499;
      }
      else
        for (token_out &o : batch) {
          text += o.text;
          all.push_back(std::move(o));
        }
    if (j->error_status) {
      e.status = j->error_status;
      e.type = j->error_status >= 500 ? "server_error" : "invalid_request_error";
      e.message = j->error;
      return send_error(c, e, cors);
    }
    json choice = {{"index", 0}, {"finish_reason", j->finish_reason}};
    if (chat) {
      choice["message"] = {{"role", "assistant"}, {"content", text}};
      choice["logprobs"] = g.logprobs ? chat_logprobs(tok, all) : json();
    } else {
      choice["text"] = text;
      choice["logprobs"] = g.logprobs ? completion_logprobs(tok, all, 0) : json();
    }
    if (g.token_ids) {
      json ids = json::array();
      for (const token_out &o : all)
        if (o.id >= 0)
          ids.push_back(o.id);
      choice["token_ids"] = ids;
    }
    json body = head;
    body["object"] = chat ? "chat.completion" : "text_completion";
    if (g.token_ids)
      body["prompt_token_ids"] = j->prompt;
    body["choices"] = json::array({choice});
    body["usage"] = usage(j->generated);
    *note = "prompt " + std::to_string(n_prompt) + " completion " +
            std::to_string(j->generated) + " finish " + j->finish_reason;
    return send_json(c, 200, dump(body), cors);
  }

  // Streaming: a chunk per settled piece of text.
  const auto chunk = [&](const json &choice_delta, const json &finish,
                         const json &logprobs,
                         const std::vector<token_out> *tokens = nullptr) {
    json c2 = head;
    json choice = {{"index", 0}, {"logprobs", logprobs}, {"finish_reason", finish}};
    if (g.token_ids && tokens) {
      json ids = json::array();
      for (const token_out &o : *tokens)
        if (o.id >= 0)
          ids.push_back(o.id);
      choice["token_ids"] = ids;
    }
    if (chat)
      choice["delta"] = choice_delta;
    else
      choice["text"] = choice_delta;
    c2["choices"] = json::array({choice});
    if (g.include_usage)
      c2["usage"] = nullptr;
    return dump(c2);
  };
  bool ok = c.start_events(cors);
  if (ok && chat)
    ok = c.send_event(chunk({{"role", "assistant"}, {"content", ""}}, nullptr,
                            nullptr));
  size_t offset = 0;
  while (ok && !done) {
    if (!next(&done)) {
      ok = false;
      break;
    }
    std::string piece;
    for (const token_out &o : batch)
      piece += o.text;
    if (batch.empty() || (piece.empty() && !g.logprobs && !g.token_ids))
      continue;
    const json lp = !g.logprobs ? json()
                    : chat      ? chat_logprobs(tok, batch)
                                : completion_logprobs(tok, batch, offset);
    offset += piece.size();
    ok = c.send_event(chat ? chunk({{"content", piece}}, nullptr, lp, &batch)
                           : chunk(piece, nullptr, lp, &batch));
  }
  if (!ok) {
    j->cancelled = true;
    *note = "client went away";
    return 499;
  }
  if (j->error_status) {
    // An error after the stream started: an error event, as the peers send.
    e.status = j->error_status;
    e.type = j->error_status >= 500 ? "server_error" : "invalid_request_error";
    e.message = j->error;
    c.send_event(e.json());
    c.end_events();
    *note = "error " + j->error;
    return 200;
  }
  ok = c.send_event(chat ? chunk(json::object(), j->finish_reason, nullptr)
                         : chunk("", j->finish_reason, nullptr));
  if (ok && g.include_usage) {
    json last = head;
    last["choices"] = json::array();
    last["usage"] = usage(j->generated);
    ok = c.send_event(dump(last));
  }
  if (ok)
    ok = c.send_event("[DONE]") && c.end_events();
  *note = "prompt " + std::to_string(n_prompt) + " completion " +
          std::to_string(j->generated) + " finish " + j->finish_reason +
          " stream";
  return 200;
}

} // namespace sgc::serve
