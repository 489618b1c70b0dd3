/*
 * bpe_model.cc - see bpe_model.h. The merge loop follows HF's: a queue of
 * candidate pairs ordered by (rank, position), stale entries skipped.
 */
#include "runtime/src/tokenizer/bpe_model.h"

#include "runtime/src/tokenizer/unicode.h"

#include <cstdio>
#include <queue>

namespace sgc::runtime {

namespace {

/// Reads one merge: "a b" (exactly one space) or ["a", "b"].
status read_merge(const json_cursor &c, std::string *a, std::string *b) {
  if (c.is_string()) {
    std::string line;
    if (status st = c.get(&line); !st.ok())
      return st;
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
      return c.error("expected \"a b\" (two parts separated by one space)");
    *a = line.substr(0, space);
    *b = line.substr(space + 1);
    return {};
  }
  if (!c.is_array() || c.size() != 2)
    return c.error("expected \"a b\" or [\"a\", \"b\"]");
  if (status st = c.at(size_t{0}).get(a); !st.ok())
    return st;
  return c.at(size_t{1}).get(b);
}

} // namespace

status bpe_model::parse(const json_cursor &c, bpe_model *out) {
  if (status st = c.expect_object(); !st.ok())
    return st;
  // Absent, null, "" (affixes) and 0 (dropout) all mean none, as in HF.
  for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json_cursor v = c.at(key);
    if (!v.is_null() && !(v.is_string() && v.value().get<std::string>().empty()))
      return v.error("only null or \"\" is supported");
  }
  {
    const json_cursor v = c.at("dropout");
    if (!v.is_null() && !(v.value().is_number() && v.value().get<double>() == 0.0))
      return v.error("only null or 0 is supported");
  }
  for (auto [key, flag] : {std::pair<const char *, bool *>{"fuse_unk", &out->fuse_unk_},
                           {"byte_fallback", &out->byte_fallback_},
                           {"ignore_merges", &out->ignore_merges_}})
    if (status st = c.get_optional(key, flag); !st.ok())
      return st;

  const json_cursor vocab = c.at("vocab");
  if (status st = vocab.expect_object(); !st.ok())
    return st;
  out->vocab_.reserve(vocab.size());
  out->pieces_.reserve(vocab.size());
  for (auto it = vocab.value().begin(); it != vocab.value().end(); ++it) {
    int64_t id = 0;
    const json_cursor entry = vocab.at(it.key().c_str());
    if (status st = entry.get(&id); !st.ok())
      return st;
    if (id < 0 || id >= (int64_t{1} << 24))
      return entry.error("id " + std::to_string(id) + " is out of range");
    if (static_cast<size_t>(id) >= out->pieces_.size())
      out->pieces_.resize(static_cast<size_t>(id) + 1);
    if (!out->pieces_[id].empty())
      return entry.error("id " + std::to_string(id) + " is also " +
                         quote(out->pieces_[id]));
    out->pieces_[id] = it.key();
    out->vocab_.emplace(it.key(), static_cast<int32_t>(id));
  }

  std::string unk;
  if (status st = c.get_optional("unk_token", &unk); !st.ok())
    return st;
  if (!unk.empty()) {
    auto it = out->vocab_.find(unk);
    if (it == out->vocab_.end())
      return c.at("unk_token").error(quote(unk) + " is not in the vocabulary");
    out->unk_id_ = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto it = out->vocab_.find(name);
    out->byte_ids_[b] = it == out->vocab_.end() ? -1 : it->second;
  }

  const json_cursor merges = c.at("merges");
  if (status st = merges.expect_array(); !st.ok())
    return st;
  out->merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json_cursor m = merges.at(i);
    std::string a, b;
    if (status st = read_merge(m, &a, &b); !st.ok())
      return st;
    auto ia = out->vocab_.find(a), ib = out->vocab_.find(b),
         ir = out->vocab_.find(a + b);
    for (auto [it, what] : {std::pair{ia, &a}, {ib, &b}})
      if (it == out->vocab_.end())
        return m.error(quote(*what) + " is not in the vocabulary");
    if (ir == out->vocab_.end())
      return m.error("the merged piece " + quote(a + b) +
                     " is not in the vocabulary");
    // A repeated pair keeps its last rank, as HF's map does.
    out->merges_[pair_key(ia->second, ib->second)] =
        merge{static_cast<uint32_t>(i), ir->second};
  }
  return {};
}

void bpe_model::encode(std::string_view word, std::vector<int32_t> *ids) const {
  if (ignore_merges_) {
    auto it = vocab_.find(std::string(word));
    if (it != vocab_.end()) {
      ids->push_back(it->second);
      return;
    }
  }
  // One symbol per character; byte pieces for characters not in the
  // vocabulary (all or nothing per character), else the unknown token.
  std::vector<int32_t> symbols;
  int32_t pending_unk = -1;
  for (size_t pos = 0; pos < word.size();) {
    size_t len = 0;
    unicode::decode_at(word, pos, &len);
    const std::string ch(word.substr(pos, len));
    pos += len;
    auto it = vocab_.find(ch);
    if (it != vocab_.end()) {
      if (pending_unk >= 0) {
        symbols.push_back(pending_unk);
        pending_unk = -1;
      }
      symbols.push_back(it->second);
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (unsigned char b : ch)
        all = all && byte_ids_[b] >= 0;
      if (all) {
        // As HF: a pending unknown is not flushed before byte pieces.
        for (unsigned char b : ch)
          symbols.push_back(byte_ids_[b]);
        continue;
      }
    }
    if (unk_id_ >= 0) {
      if (pending_unk >= 0 && !fuse_unk_)
        symbols.push_back(pending_unk);
      pending_unk = unk_id_;
    }
  }
  if (pending_unk >= 0)
    symbols.push_back(pending_unk);
  merge_all(&symbols);
  ids->insert(ids->end(), symbols.begin(), symbols.end());
}

void bpe_model::merge_all(std::vector<int32_t> *symbols) const {
  const size_t n = symbols->size();
  if (n < 2)
    return;
  std::vector<int32_t> &id = *symbols;
  std::vector<long> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<long>(i) - 1;
    next[i] = i + 1 < n ? static_cast<long>(i + 1) : -1;
  }
  struct candidate {
    uint32_t rank;
    size_t pos;
    int32_t result;
    bool operator>(const candidate &o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<candidate, std::vector<candidate>, std::greater<>> queue;
  auto offer = [&](size_t pos) {
    if (next[pos] < 0)
      return;
    auto it = merges_.find(pair_key(id[pos], id[next[pos]]));
    if (it != merges_.end())
      queue.push({it->second.rank, pos, it->second.result});
  };
  for (size_t i = 0; i + 1 < n; ++i)
    offer(i);
  while (!queue.empty()) {
    const candidate top = queue.top();
    queue.pop();
    if (!alive[top.pos] || next[top.pos] < 0)
      continue;
    const size_t right = static_cast<size_t>(next[top.pos]);
    auto it = merges_.find(pair_key(id[top.pos], id[right]));
    if (it == merges_.end() || it->second.result != top.result)
      continue; // stale
    id[top.pos] = top.result;
    alive[right] = false;
    next[top.pos] = next[right];
    if (next[right] >= 0)
      prev[static_cast<size_t>(next[right])] = static_cast<long>(top.pos);
    if (prev[top.pos] >= 0)
      offer(static_cast<size_t>(prev[top.pos]));
    offer(top.pos);
  }
  std::vector<int32_t> out;
  for (size_t i = 0; i < n; ++i)
    if (alive[i])
      out.push_back(id[i]);
  id = std::move(out);
}

} // namespace sgc::runtime
