/*
 * decoder.cc - see decoder.h.
 */
#include "runtime/src/tokenizer/decoder.h"

#include "runtime/src/tokenizer/normalizer.h"
#include "runtime/src/tokenizer/unicode.h"

namespace sgc::runtime {

namespace {

const char kReplacement[] = "\xEF\xBF\xBD"; // U+FFFD

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

void flush_bytes(std::string *bytes, std::vector<std::string> *out) {
  if (bytes->empty())
    return;
  if (unicode::valid(*bytes))
    out->push_back(*bytes);
  else
    for (size_t i = 0; i < bytes->size(); ++i)
      out->push_back(kReplacement);
  bytes->clear();
}

std::vector<std::string> byte_fallback(std::vector<std::string> tokens) {
  std::vector<std::string> out;
  std::string bytes;
  for (std::string &t : tokens) {
    const int b = byte_piece_value(t);
    if (b >= 0) {
      bytes.push_back(static_cast<char>(b));
      continue;
    }
    flush_bytes(&bytes, &out);
    out.push_back(std::move(t));
  }
  flush_bytes(&bytes, &out);
  return out;
}

/// Removes up to |start| leading and |stop| trailing |ch| characters.
std::string strip(const std::string &t, const std::string &ch, size_t start,
                  size_t stop) {
  size_t begin = 0, end = t.size();
  for (size_t i = 0; i < start && end - begin >= ch.size() &&
                     t.compare(begin, ch.size(), ch) == 0;
       ++i)
    begin += ch.size();
  for (size_t i = 0; i < stop && end - begin >= ch.size() &&
                     t.compare(end - ch.size(), ch.size(), ch) == 0;
       ++i)
    end -= ch.size();
  return t.substr(begin, end - begin);
}

} // namespace

int byte_piece_value(const std::string &piece) {
  // Rust's u8::from_str_radix on the two characters: a leading '+' is
  // accepted, as there.
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>')
    return -1;
  const int hi = hex_digit(piece[3]), lo = hex_digit(piece[4]);
  if (piece[3] == '+' && lo >= 0)
    return lo;
  if (hi < 0 || lo < 0)
    return -1;
  return hi * 16 + lo;
}

decoder decoder::gemma() {
  decoder d;
  d.none_ = false;
  d.steps_.push_back({step::replace, "\xE2\x96\x81", " "});
  d.steps_.push_back({step::byte_fallback, {}, {}});
  d.steps_.push_back({step::fuse, {}, {}});
  return d;
}

status decoder::parse(const json_cursor &c, decoder *out) {
  *out = decoder();
  if (c.is_null())
    return {};
  out->none_ = false;
  return parse_into(c, &out->steps_);
}

status decoder::parse_into(const json_cursor &c, std::vector<step> *steps) {
  std::string type;
  if (status st = c.expect_object(); !st.ok())
    return st;
  if (status st = c.get_required("type", &type); !st.ok())
    return st;
  if (type == "Sequence") {
    const json_cursor list = c.at("decoders");
    if (status st = list.expect_array(); !st.ok())
      return st;
    for (size_t i = 0; i < list.size(); ++i)
      if (status st = parse_into(list.at(i), steps); !st.ok())
        return st;
    return {};
  }
  step s{step::fuse, {}, {}};
  if (type == "Replace") {
    s.kind = step::replace;
    if (status st = parse_string_pattern(c.at("pattern"), &s.pattern); !st.ok())
      return st;
    if (status st = c.get_required("content", &s.content); !st.ok())
      return st;
  } else if (type == "ByteFallback") {
    s.kind = step::byte_fallback;
  } else if (type == "Fuse") {
    s.kind = step::fuse;
  } else if (type == "Strip") {
    s.kind = step::strip;
    int64_t start = 0, stop = 0;
    if (status st = c.get_required("content", &s.content); !st.ok())
      return st;
    size_t len = 0;
    if (s.content.empty() ||
        (unicode::decode_at(s.content, 0, &len), len != s.content.size()))
      return c.at("content").error("expected one character");
    if (status st = c.get_required("start", &start); !st.ok())
      return st;
    if (status st = c.get_required("stop", &stop); !st.ok())
      return st;
    if (start < 0 || stop < 0)
      return c.error("start and stop must not be negative");
    s.start = static_cast<size_t>(start);
    s.stop = static_cast<size_t>(stop);
  } else {
    return c.at("type").error(quote(type) + " is not supported");
  }
  steps->push_back(std::move(s));
  return {};
}

bool decoder::concatenates() const {
  if (none_)
    return false; // joined with spaces: a cut would lose one
  for (const step &s : steps_)
    if (s.kind == step::strip)
      return false;
  return true;
}

std::string decoder::apply(std::vector<std::string> tokens) const {
  std::string out;
  if (none_) {
    for (size_t i = 0; i < tokens.size(); ++i)
      out += (i ? " " : "") + tokens[i];
    return out;
  }
  for (const step &s : steps_) {
    switch (s.kind) {
    case step::replace:
      for (std::string &t : tokens)
        t = replace_all(t, s.pattern, s.content);
      break;
    case step::byte_fallback:
      tokens = byte_fallback(std::move(tokens));
      break;
    case step::fuse: {
      std::string all;
      for (const std::string &t : tokens)
        all += t;
      tokens.assign(1, std::move(all));
      break;
    }
    case step::strip:
      for (std::string &t : tokens)
        t = strip(t, s.content, s.start, s.stop);
      break;
    }
  }
  for (const std::string &t : tokens)
    out += t;
  return out;
}

} // namespace sgc::runtime
