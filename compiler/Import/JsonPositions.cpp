//===- JsonPositions.cpp - JSON path -> byte offset index -----------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/JsonPositions.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cstring>

using namespace mlir::sgc::import;

static bool isIdentifier(llvm::StringRef key) {
  if (key.empty() || !(llvm::isAlpha(key[0]) || key[0] == '_'))
    return false;
  return llvm::all_of(key, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

void mlir::sgc::import::appendJsonKey(std::string &path, llvm::StringRef key) {
  if (isIdentifier(key)) {
    path += '.';
    path += key;
    return;
  }
  path += "[\"";
  for (unsigned char c : key) {
    if (c == '"' || c == '\\') {
      path += '\\';
      path += static_cast<char>(c);
    } else if (c < 0x20) {
      static const char hex[] = "0123456789abcdef";
      path += "\\u00";
      path += hex[c >> 4];
      path += hex[c & 15];
    } else {
      path += static_cast<char>(c);
    }
  }
  path += "\"]";
}

void mlir::sgc::import::appendJsonIndex(std::string &path, size_t index) {
  path += '[';
  path += std::to_string(index);
  path += ']';
}

JsonPositions::JsonPositions(llvm::StringRef text, unsigned maxDepth)
    : text(text) {
  lineStarts.push_back(0);
  for (size_t i = 0, e = text.size(); i < e; ++i)
    if (text[i] == '\n')
      lineStarts.push_back(i + 1);
  scan(maxDepth);
}

std::optional<size_t> JsonPositions::lookup(llvm::StringRef path) const {
  auto it = offsets.find(path);
  if (it == offsets.end())
    return std::nullopt;
  return it->second;
}

std::string JsonPositions::pathAt(size_t offset) const {
  auto it =
      std::upper_bound(inOrder.begin(), inOrder.end(), offset,
                       [](size_t o, const llvm::StringMapEntry<size_t> *e) {
                         return o < e->getValue();
                       });
  if (it == inOrder.begin())
    return "$";
  return (*std::prev(it))->getKey().str();
}

std::pair<unsigned, unsigned> JsonPositions::lineColumn(size_t offset) const {
  offset = std::min(offset, text.size());
  auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
  size_t line = it - lineStarts.begin(); // >= 1: lineStarts[0] == 0
  size_t column = offset - lineStarts[line - 1] + 1;
  return {static_cast<unsigned>(line), static_cast<unsigned>(column)};
}

namespace {
/// Appends the UTF-8 encoding of `cp` to `out`.
void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// A lexer over the text; every method leaves `i` after what it consumed
/// and returns false on text that is not JSON.
struct Lexer {
  const char *s;
  size_t n;
  size_t i = 0;

  void skipSpace() {
    while (i < n &&
           (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
      ++i;
  }
  bool hex4(uint32_t &out) {
    if (n - i < 4)
      return false;
    out = 0;
    for (int k = 0; k < 4; ++k) {
      unsigned v;
      char c = s[i++];
      if (c >= '0' && c <= '9')
        v = c - '0';
      else if (c >= 'a' && c <= 'f')
        v = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v = c - 'A' + 10;
      else
        return false;
      out = out * 16 + v;
    }
    return true;
  }
  /// A string starting at `i` (a '"'); decoded into `out` when given.
  bool string(std::string *out) {
    ++i;
    while (i < n) {
      unsigned char c = s[i];
      if (c == '"') {
        ++i;
        return true;
      }
      if (c < 0x20)
        return false;
      if (c != '\\') {
        if (out)
          *out += static_cast<char>(c);
        ++i;
        continue;
      }
      if (++i >= n)
        return false;
      char e = s[i++];
      char simple = 0;
      switch (e) {
      case '"':
      case '\\':
      case '/':
        simple = e;
        break;
      case 'b':
        simple = '\b';
        break;
      case 'f':
        simple = '\f';
        break;
      case 'n':
        simple = '\n';
        break;
      case 'r':
        simple = '\r';
        break;
      case 't':
        simple = '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (n - i < 2 || s[i] != '\\' || s[i + 1] != 'u')
            return false;
          i += 2;
          if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF)
            return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return false;
        }
        if (out)
          appendUtf8(*out, cp);
        continue;
      }
      default:
        return false;
      }
      if (out)
        *out += simple;
    }
    return false;
  }
  bool digits() {
    size_t start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
      ++i;
    return i > start;
  }
  bool number() {
    if (s[i] == '-')
      ++i;
    if (i < n && s[i] == '0')
      ++i;
    else if (!digits())
      return false;
    if (i < n && s[i] == '.') {
      ++i;
      if (!digits())
        return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < n && (s[i] == '+' || s[i] == '-'))
        ++i;
      if (!digits())
        return false;
    }
    return true;
  }
  bool literal(const char *word) {
    size_t len = std::strlen(word);
    if (n - i < len || std::memcmp(s + i, word, len) != 0)
      return false;
    i += len;
    return true;
  }
};
} // namespace

void JsonPositions::scan(unsigned maxDepth) {
  struct Frame {
    bool object;
    /// Length of the container's own path.
    size_t pathLen;
    size_t count;
  };
  std::vector<Frame> stack;
  std::string path = "$";
  Lexer lex{text.data(), text.size()};
  if (text.starts_with("\xEF\xBB\xBF"))
    lex.i = 3;
  auto stop = [&](Status why) {
    status = why;
    stopOffset = lex.i;
    stopPath = path;
  };
  // After '{' or ',' in an object: a key, ':', and the member's path.
  auto member = [&]() -> bool {
    lex.skipSpace();
    size_t keyOffset = lex.i;
    std::string key;
    if (lex.i >= lex.n || lex.s[lex.i] != '"' || !lex.string(&key))
      return false;
    lex.skipSpace();
    if (lex.i >= lex.n || lex.s[lex.i] != ':')
      return false;
    ++lex.i;
    path.resize(stack.back().pathLen);
    appendJsonKey(path, key);
    if (!duplicate && offsets.count(path))
      duplicate = Duplicate{path, key, keyOffset};
    return true;
  };

  bool wantValue = true;
  while (true) {
    lex.skipSpace();
    if (wantValue) {
      if (lex.i >= lex.n)
        return stop(Status::Malformed);
      auto [entry, inserted] = offsets.try_emplace(path, lex.i);
      if (inserted)
        inOrder.push_back(&*entry);
      char c = lex.s[lex.i];
      if (c == '{' || c == '[') {
        if (stack.size() + 1 > maxDepth)
          return stop(Status::TooDeep);
        bool object = c == '{';
        stack.push_back({object, path.size(), 0});
        ++lex.i;
        lex.skipSpace();
        if (lex.i < lex.n && lex.s[lex.i] == (object ? '}' : ']')) {
          ++lex.i;
          stack.pop_back();
          wantValue = false;
          continue;
        }
        if (object) {
          if (!member())
            return stop(Status::Malformed);
        } else {
          appendJsonIndex(path, 0);
        }
        continue;
      }
      bool ok;
      if (c == '"')
        ok = lex.string(nullptr);
      else if (c == 't')
        ok = lex.literal("true");
      else if (c == 'f')
        ok = lex.literal("false");
      else if (c == 'n')
        ok = lex.literal("null");
      else if (c == '-' || (c >= '0' && c <= '9'))
        ok = lex.number();
      else
        ok = false;
      if (!ok)
        return stop(Status::Malformed);
      wantValue = false;
      continue;
    }
    // After a value.
    if (stack.empty()) {
      if (lex.i != lex.n)
        return stop(Status::Malformed);
      return;
    }
    Frame &top = stack.back();
    path.resize(top.pathLen);
    if (lex.i >= lex.n)
      return stop(Status::Malformed);
    char c = lex.s[lex.i];
    if (c == ',') {
      ++lex.i;
      if (top.object) {
        if (!member())
          return stop(Status::Malformed);
      } else {
        appendJsonIndex(path, ++top.count);
      }
      wantValue = true;
      continue;
    }
    if (c == (top.object ? '}' : ']')) {
      ++lex.i;
      stack.pop_back();
      continue;
    }
    return stop(Status::Malformed);
  }
}
