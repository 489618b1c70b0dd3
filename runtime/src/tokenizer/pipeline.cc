/*
 * pipeline.cc - see pipeline.h.
 */
#include "runtime/src/tokenizer/pipeline.h"

namespace sgc::runtime {

int32_t pipeline_tokenizer::token_id(std::string_view piece) const {
  auto it = ids_.find(std::string(piece));
  return it == ids_.end() ? -1 : it->second;
}

const std::string *pipeline_tokenizer::piece(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= pieces_.size() || !present_[id])
    return nullptr;
  return &pieces_[id];
}

bool pipeline_tokenizer::is_special(int32_t id) const {
  const added_token *t = added_.find(id);
  return t && t->special;
}

bool pipeline_tokenizer::is_byte_piece(int32_t id) const {
  const std::string *p = piece(id);
  return p && !added_.find(id) && byte_piece_value(*p) >= 0;
}

void pipeline_tokenizer::set_model_pieces(std::vector<std::string> pieces) {
  pieces_ = std::move(pieces);
  present_.assign(pieces_.size(), false);
  ids_.clear();
  ids_.reserve(pieces_.size());
  for (size_t i = 0; i < pieces_.size(); ++i) {
    if (pieces_[i].empty())
      continue;
    present_[i] = true;
    ids_.emplace(pieces_[i], static_cast<int32_t>(i));
  }
}

void pipeline_tokenizer::add_token(const added_token &t) {
  if (t.content.empty() || t.id < 0)
    return;
  if (static_cast<size_t>(t.id) >= pieces_.size()) {
    pieces_.resize(static_cast<size_t>(t.id) + 1);
    present_.resize(pieces_.size(), false);
  }
  pieces_[t.id] = t.content;
  present_[t.id] = true;
  ids_[t.content] = t.id; // added tokens first, as HF's token_to_id
  added_.add(t, normalizer_);
}

int32_t pipeline_tokenizer::id_of(const std::string &name) const {
  return name.empty() ? -1 : token_id(name);
}

status pipeline_tokenizer::finish_setup(const tokenizer_config &config,
                                        post_processor post) {
  auto pick = [&](const std::string &configured, const char *gemma) {
    return configured.empty() ? token_id(gemma) : id_of(configured);
  };
  bos_id_ = pick(config.bos_token, "<bos>");
  eos_id_ = pick(config.eos_token, "<eos>");
  pad_id_ = pick(config.pad_token, "<pad>");
  for (const std::string *name : {&config.bos_token, &config.eos_token,
                                  &config.pad_token, &config.unk_token}) {
    const int32_t id = id_of(*name);
    if (id >= 0 && !added_.find(id)) {
      added_token t;
      t.id = id;
      t.content = *name;
      t.special = true;
      add_token(t);
    }
  }
  if (config.add_bos_token || config.add_eos_token) {
    post = post_processor();
    if (config.add_bos_token.value_or(false) && bos_id_ >= 0)
      post.prefix.push_back(bos_id_);
    if (config.add_eos_token.value_or(false) && eos_id_ >= 0)
      post.suffix.push_back(eos_id_);
  }
  for (const auto *list : {&post.prefix, &post.suffix})
    for (int32_t id : *list)
      if (!piece(id))
        return bad_input_error("token id " + std::to_string(id) +
                               " is not in the vocabulary");
  post_ = std::move(post);
  return {};
}

status pipeline_tokenizer::encode(std::string_view text, bool add_special,
                                  std::vector<int32_t> *ids) const {
  if (add_special)
    ids->insert(ids->end(), post_.prefix.begin(), post_.prefix.end());
  for (const segment &s : added_.split(text, normalizer_)) {
    if (s.id >= 0) {
      ids->push_back(s.id);
      continue;
    }
    if (status st = encode_run(s.text, ids); !st.ok())
      return st;
  }
  if (add_special)
    ids->insert(ids->end(), post_.suffix.begin(), post_.suffix.end());
  return {};
}

status pipeline_tokenizer::decode(const std::vector<int32_t> &ids,
                                  bool skip_special, std::string *text) const {
  std::vector<std::string> strings;
  strings.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string *form = added_.decode_form(id);
    if (!form)
      form = piece(id);
    if (!form)
      continue; // HF drops ids it does not know; callers check the range
    if (skip_special && added_.is_special_content(*form))
      continue;
    strings.push_back(*form);
  }
  *text = decoder_.apply(std::move(strings));
  return {};
}

} // namespace sgc::runtime
