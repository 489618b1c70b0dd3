/*
 * json_tokenizer.cc - the Hugging Face tokenizers format (tokenizer.json):
 * the parts Gemma's files use, each read by its own file; anything else is
 * refused naming the JSON path.
 */
#include "runtime/src/tokenizer/bpe_model.h"
#include "runtime/src/tokenizer/factories.h"
#include "runtime/src/tokenizer/pipeline.h"
#include "runtime/src/tokenizer/pre_tokenizer.h"

namespace sgc::runtime {

namespace {

class json_tokenizer final : public pipeline_tokenizer {
public:
  const char *kind() const override { return "tokenizer.json"; }
  /// |doc| is the file |label|'s JSON (errors name |label| and the path).
  status load(const std::string &label, const nlohmann::json &doc,
              const tokenizer_config &config);

private:
  status encode_run(const std::string &run,
                    std::vector<int32_t> *ids) const override {
    for (const std::string &word : pre_tokenizer_.apply(run))
      model_.encode(word, ids);
    return {};
  }
  status read_added_tokens(const json_cursor &list);

  bpe_model model_;
  pre_tokenizer pre_tokenizer_;
};

status json_tokenizer::read_added_tokens(const json_cursor &list) {
  if (list.is_null())
    return {};
  if (status st = list.expect_array(); !st.ok())
    return st;
  for (size_t i = 0; i < list.size(); ++i) {
    const json_cursor c = list.at(i);
    if (status st = c.expect_object(); !st.ok())
      return st;
    added_token t;
    int64_t id = 0;
    // HF's AddedToken defaults: normalized true, the rest false.
    t.normalized = true;
    if (status st = c.get_required("id", &id); !st.ok())
      return st;
    if (id < 0 || id >= (int64_t{1} << 24))
      return c.at("id").error("id " + std::to_string(id) + " is out of range");
    t.id = static_cast<int32_t>(id);
    if (status st = c.get_required("content", &t.content); !st.ok())
      return st;
    for (auto [key, flag] :
         {std::pair<const char *, bool *>{"special", &t.special},
          {"lstrip", &t.lstrip},
          {"rstrip", &t.rstrip},
          {"normalized", &t.normalized},
          {"single_word", &t.single_word}})
      if (status st = c.get_optional(key, flag); !st.ok())
        return st;
    add_token(t);
  }
  return {};
}

status json_tokenizer::load(const std::string &label,
                            const nlohmann::json &doc,
                            const tokenizer_config &config) {
  const json_cursor root(&label, &doc);
  if (status st = root.expect_object(); !st.ok())
    return st;
  // Truncation and padding would change what encode returns.
  for (const char *key : {"truncation", "padding"})
    if (!root.at(key).is_null())
      return root.at(key).error("only null is supported");

  const json_cursor model = root.at("model");
  std::string type;
  if (status st = model.expect_object(); !st.ok())
    return st;
  if (status st = model.get_required("type", &type); !st.ok())
    return st;
  if (type != "BPE")
    return model.at("type").error(quote(type) + " is not supported");
  if (status st = bpe_model::parse(model, &model_); !st.ok())
    return st;
  if (status st = normalizer::parse(root.at("normalizer"), &normalizer_);
      !st.ok())
    return st;
  if (status st = pre_tokenizer::parse(root.at("pre_tokenizer"),
                                       &pre_tokenizer_);
      !st.ok())
    return st;
  if (status st = decoder::parse(root.at("decoder"), &decoder_); !st.ok())
    return st;
  post_processor post;
  if (status st = post_processor::parse(root.at("post_processor"), &post);
      !st.ok())
    return st;

  set_model_pieces(model_.pieces());
  if (status st = read_added_tokens(root.at("added_tokens")); !st.ok())
    return st;
  if (status st = finish_setup(config, std::move(post)); !st.ok())
    return root.at("post_processor").error(st.message());
  return {};
}

} // namespace

status open_tokenizer_json(const std::string &path,
                           const tokenizer_config &config,
                           std::shared_ptr<const tokenizer> *out) {
  nlohmann::json doc;
  if (status st = read_json_file(path, &doc); !st.ok())
    return st;
  return open_tokenizer_document(path, doc, config, out);
}

status open_tokenizer_document(const std::string &label,
                               const nlohmann::json &doc,
                               const tokenizer_config &config,
                               std::shared_ptr<const tokenizer> *out) {
  auto t = std::make_shared<json_tokenizer>();
  if (status st = t->load(label, doc, config); !st.ok())
    return st;
  *out = std::move(t);
  return {};
}

} // namespace sgc::runtime
