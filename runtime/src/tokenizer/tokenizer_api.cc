/*
 * tokenizer_api.cc - the tokenizer part of the C API (sgc/runtime.h) over
 * runtime/src/tokenizer. Nothing throws across the boundary.
 */
#include <sgc/runtime.h>

#include "runtime/src/api_status.h"
#include "runtime/src/tokenizer/detokenizer.h"
#include "runtime/src/tokenizer/stop_strings.h"
#include "runtime/src/tokenizer/tokenizer.h"

#include <cstdlib>
#include <cstring>

using sgc::runtime::status_from_exception;
using sgc::runtime::status_to_c;

struct sgc_tokenizer_t {
  std::shared_ptr<const sgc::runtime::tokenizer> impl;
};

struct sgc_detokenizer_t {
  sgc::runtime::detokenizer impl;
  /// The last text handed out (the C API returns a pointer into it).
  std::string text;
};

struct sgc_text_stream_t {
  sgc::runtime::detokenizer text;
  sgc::runtime::stop_strings stops;
  /// The decoded piece, and the settled text handed out.
  std::string piece, out;
};

namespace {

sgc_status_t *null_argument(const char *what) {
  return status_to_c(sgc::usage_error(std::string(what) + " must not be NULL"));
}

/// A malloc'ed copy of |s| with a NUL; nullptr when out of memory.
char *malloc_copy(const std::string &s) {
  char *p = static_cast<char *>(std::malloc(s.size() + 1));
  if (p) {
    std::memcpy(p, s.data(), s.size());
    p[s.size()] = '\0';
  }
  return p;
}

} // namespace

extern "C" {

sgc_status_t *sgc_tokenizer_open(const char *path, sgc_tokenizer_t **out) {
  try {
    if (!path)
      return null_argument("path");
    if (!out)
      return null_argument("out_tokenizer");
    std::shared_ptr<const sgc::runtime::tokenizer> t;
    if (sgc::status st = sgc::runtime::open_tokenizer(path, &t); !st.ok())
      return status_to_c(std::move(st));
    *out = new sgc_tokenizer_t{std::move(t)};
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

void sgc_tokenizer_release(sgc_tokenizer_t *t) { delete t; }

const char *sgc_tokenizer_kind(const sgc_tokenizer_t *t) {
  return t ? t->impl->kind() : "";
}

int32_t sgc_tokenizer_vocab_size(const sgc_tokenizer_t *t) {
  return t ? t->impl->vocab_size() : 0;
}

int32_t sgc_tokenizer_token_id(const sgc_tokenizer_t *t, const char *piece) {
  if (!t || !piece)
    return -1;
  try {
    return t->impl->token_id(piece);
  } catch (...) {
    return -1;
  }
}

const char *sgc_tokenizer_piece(const sgc_tokenizer_t *t, int32_t id) {
  if (!t)
    return nullptr;
  const std::string *p = t->impl->piece(id);
  return p ? p->c_str() : nullptr;
}

int32_t sgc_tokenizer_bos_id(const sgc_tokenizer_t *t) {
  return t ? t->impl->bos_id() : -1;
}

int32_t sgc_tokenizer_eos_id(const sgc_tokenizer_t *t) {
  return t ? t->impl->eos_id() : -1;
}

int32_t sgc_tokenizer_pad_id(const sgc_tokenizer_t *t) {
  return t ? t->impl->pad_id() : -1;
}

int sgc_tokenizer_is_special(const sgc_tokenizer_t *t, int32_t id) {
  return t && t->impl->piece(id) && t->impl->is_special(id) ? 1 : 0;
}

sgc_status_t *sgc_tokenizer_encode(const sgc_tokenizer_t *t, const char *text,
                                   size_t len, int add_bos, int32_t **out_ids,
                                   size_t *out_count) {
  try {
    if (!t)
      return null_argument("tokenizer");
    if (!text && len)
      return null_argument("text");
    if (!out_ids || !out_count)
      return null_argument("out_ids and out_count");
    std::vector<int32_t> ids;
    if (sgc::status st = sgc::runtime::encode_checked(
            *t->impl, std::string_view(text ? text : "", len), add_bos != 0,
            &ids);
        !st.ok())
      return status_to_c(std::move(st));
    int32_t *p = nullptr;
    if (!ids.empty()) {
      p = static_cast<int32_t *>(std::malloc(ids.size() * sizeof(int32_t)));
      if (!p)
        throw std::bad_alloc();
      std::memcpy(p, ids.data(), ids.size() * sizeof(int32_t));
    }
    *out_ids = p;
    *out_count = ids.size();
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

sgc_status_t *sgc_tokenizer_decode(const sgc_tokenizer_t *t,
                                   const int32_t *ids, size_t count,
                                   int skip_special, char **out_text,
                                   size_t *out_len) {
  try {
    if (!t)
      return null_argument("tokenizer");
    if (!ids && count)
      return null_argument("ids");
    if (!out_text)
      return null_argument("out_text");
    std::string text;
    if (sgc::status st = sgc::runtime::decode_checked(
            *t->impl, std::vector<int32_t>(ids, ids + count),
            skip_special != 0, &text);
        !st.ok())
      return status_to_c(std::move(st));
    char *p = malloc_copy(text);
    if (!p)
      throw std::bad_alloc();
    *out_text = p;
    if (out_len)
      *out_len = text.size();
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

sgc_status_t *sgc_detokenizer_create(const sgc_tokenizer_t *t,
                                     int skip_special,
                                     sgc_detokenizer_t **out) {
  try {
    if (!t)
      return null_argument("tokenizer");
    if (!out)
      return null_argument("out_detokenizer");
    *out = new sgc_detokenizer_t{
        sgc::runtime::detokenizer(t->impl, skip_special != 0), std::string()};
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

sgc_status_t *sgc_detokenizer_push(sgc_detokenizer_t *d, int32_t token,
                                   const char **out_text, size_t *out_len) {
  try {
    if (!d)
      return null_argument("detokenizer");
    if (!out_text)
      return null_argument("out_text");
    if (sgc::status st = d->impl.push(token, &d->text); !st.ok())
      return status_to_c(std::move(st));
    *out_text = d->text.c_str();
    if (out_len)
      *out_len = d->text.size();
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

sgc_status_t *sgc_detokenizer_finish(sgc_detokenizer_t *d,
                                     const char **out_text, size_t *out_len) {
  try {
    if (!d)
      return null_argument("detokenizer");
    if (!out_text)
      return null_argument("out_text");
    if (sgc::status st = d->impl.finish(&d->text); !st.ok())
      return status_to_c(std::move(st));
    *out_text = d->text.c_str();
    if (out_len)
      *out_len = d->text.size();
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

void sgc_detokenizer_reset(sgc_detokenizer_t *d) {
  if (d)
    d->impl.reset();
}

void sgc_detokenizer_release(sgc_detokenizer_t *d) { delete d; }

sgc_status_t *sgc_text_stream_create(const sgc_tokenizer_t *t,
                                     int skip_special,
                                     const char *const *stops,
                                     size_t num_stops,
                                     sgc_text_stream_t **out) {
  try {
    if (!t)
      return null_argument("tokenizer");
    if (!out)
      return null_argument("out_stream");
    if (num_stops && !stops)
      return null_argument("stops");
    std::vector<std::string> list;
    for (size_t i = 0; i < num_stops; ++i) {
      if (!stops[i])
        return null_argument("a stop string");
      list.emplace_back(stops[i]);
    }
    *out = new sgc_text_stream_t{
        sgc::runtime::detokenizer(t->impl, skip_special != 0),
        sgc::runtime::stop_strings(std::move(list)), {}, {}};
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

} // extern "C"

namespace {

/// The part push and finish share: |step| produces the settled text in
/// s->out (unless a stop string matched already), which is handed out.
template <typename Step>
sgc_status_t *text_stream_call(sgc_text_stream_t *s, const char **out_text,
                               size_t *out_len, int *out_stopped, Step step) {
  try {
    if (!s)
      return null_argument("stream");
    if (!out_text)
      return null_argument("out_text");
    s->out.clear();
    if (!s->stops.matched())
      if (sgc::status st = step(); !st.ok())
        return status_to_c(std::move(st));
    *out_text = s->out.c_str();
    if (out_len)
      *out_len = s->out.size();
    if (out_stopped)
      *out_stopped = s->stops.matched() ? 1 : 0;
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

} // namespace

extern "C" {

sgc_status_t *sgc_text_stream_push(sgc_text_stream_t *s, int32_t token,
                                   const char **out_text, size_t *out_len,
                                   int *out_stopped) {
  return text_stream_call(s, out_text, out_len, out_stopped, [&] {
    sgc::status st = s->text.push(token, &s->piece);
    if (st.ok())
      s->stops.push(s->piece, &s->out);
    return st;
  });
}

sgc_status_t *sgc_text_stream_finish(sgc_text_stream_t *s,
                                     const char **out_text, size_t *out_len,
                                     int *out_stopped) {
  return text_stream_call(s, out_text, out_len, out_stopped, [&] {
    sgc::status st = s->text.finish(&s->piece);
    if (st.ok()) {
      std::string rest;
      s->stops.push(s->piece, &s->out);
      s->stops.finish(&rest);
      s->out += rest;
    }
    return st;
  });
}

void sgc_text_stream_release(sgc_text_stream_t *s) { delete s; }

} // extern "C"
