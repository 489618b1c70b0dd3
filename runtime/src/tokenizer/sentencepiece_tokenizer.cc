/*
 * sentencepiece_tokenizer.cc - tokenizer.model through libsentencepiece.
 *
 * libsentencepiece encodes the text between added tokens (it matches
 * user-defined pieces itself, but not control pieces such as <bos>: HF
 * does, so the added-token split comes first). Decoding is HF's: the
 * pieces through Gemma's decoder (Replace, ByteFallback, Fuse), which
 * keeps special pieces as text unless skipped and turns a bad byte run
 * into U+FFFD per byte, where libsentencepiece would drop control pieces.
 * Models that add a dummy prefix (Llama 2 style) are refused: HF decodes
 * those with a Strip this file does not add.
 */
#include "runtime/src/tokenizer/factories.h"
#include "runtime/src/tokenizer/pipeline.h"
#include "lib/tokenizer/sentencepiece_proto.h"

#include <sentencepiece_processor.h>

#include <fstream>
#include <sstream>

namespace sgc::runtime {

namespace {

class sentencepiece_tokenizer final : public pipeline_tokenizer {
public:
  const char *kind() const override { return "sentencepiece"; }
  /// A serialized ModelProto; |label| names its file in errors.
  status load(const std::string &bytes, const std::string &label,
              const tokenizer_config &config);

private:
  status encode_run(const std::string &run,
                    std::vector<int32_t> *ids) const override {
    std::vector<int> out;
    const auto st = sp_.Encode(run, &out);
    if (!st.ok())
      return internal_error("sentencepiece: " + st.ToString());
    ids->insert(ids->end(), out.begin(), out.end());
    return {};
  }

  sentencepiece::SentencePieceProcessor sp_;
};

status sentencepiece_tokenizer::load(const std::string &bytes,
                                     const std::string &path,
                                     const tokenizer_config &config) {
  const auto st = sp_.LoadFromSerializedProto(bytes);
  if (!st.ok())
    return bad_input_error(path + ": not a SentencePiece model: " +
                           st.ToString());
  const int n = sp_.GetPieceSize();
  std::vector<std::string> pieces(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    pieces[i] = sp_.IdToPiece(i);
    if (pieces[i].empty())
      return bad_input_error(path + ": piece " + std::to_string(i) +
                             " is empty");
  }
  sentencepiece_facts facts;
  if (!read_sentencepiece_facts(bytes, &facts) ||
      facts.piece_types.size() != static_cast<size_t>(n))
    return bad_input_error(path + ": cannot read the pieces' types");
  if (facts.add_dummy_prefix)
    return bad_input_error(
        path + ": the model adds a dummy prefix (normalizer_spec "
               "add_dummy_prefix); only Gemma-style models without one are "
               "supported");
  set_model_pieces(std::move(pieces));
  decoder_ = decoder::gemma();

  // What HF's converter makes added tokens: control and unknown pieces
  // (special), user-defined pieces (not special); then the flags of
  // tokenizer_config.json's added_tokens_decoder.
  for (int i = 0; i < n; ++i) {
    const bool control = sp_.IsControl(i) || sp_.IsUnknown(i);
    if (!control && facts.piece_types[i] != kPieceUserDefined)
      continue;
    added_token t;
    t.id = i;
    t.content = sp_.IdToPiece(i);
    t.special = control;
    add_token(t);
  }
  for (const added_token &t : config.added_tokens) {
    if (t.id >= n)
      return bad_input_error(path + ": tokenizer_config.json: "
                                    "$.added_tokens_decoder." +
                             std::to_string(t.id) +
                             ": the id is past the model's " +
                             std::to_string(n) + " pieces");
    if (t.content != sp_.IdToPiece(t.id))
      return bad_input_error(
          path + ": tokenizer_config.json: $.added_tokens_decoder." +
          std::to_string(t.id) + ": " + quote(t.content) +
          " is not the model's piece " + quote(sp_.IdToPiece(t.id)));
    add_token(t);
  }

  // As transformers: BOS only when tokenizer_config.json's add_bos_token
  // asks for it (Gemma's does).
  if (status s = finish_setup(config, post_processor()); !s.ok())
    return bad_input_error(path + ": " + s.message());
  if (bos_id_ < 0 && sp_.bos_id() >= 0)
    bos_id_ = sp_.bos_id();
  if (eos_id_ < 0 && sp_.eos_id() >= 0)
    eos_id_ = sp_.eos_id();
  if (pad_id_ < 0 && sp_.pad_id() >= 0)
    pad_id_ = sp_.pad_id();
  return {};
}

} // namespace

status open_sentencepiece(const std::string &path,
                          const tokenizer_config &config,
                          std::shared_ptr<const tokenizer> *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return bad_input_error(path + ": cannot open");
  std::ostringstream buf;
  buf << in.rdbuf();
  return open_sentencepiece_model(buf.str(), path, config, out);
}

status open_sentencepiece_model(const std::string &bytes,
                                const std::string &label,
                                const tokenizer_config &config,
                                std::shared_ptr<const tokenizer> *out) {
  auto t = std::make_shared<sentencepiece_tokenizer>();
  if (status st = t->load(bytes, label, config); !st.ok())
    return st;
  *out = std::move(t);
  return {};
}

} // namespace sgc::runtime
