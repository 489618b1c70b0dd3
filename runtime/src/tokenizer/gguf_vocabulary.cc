/*
 * gguf_vocabulary.cc - the vocabulary a GGUF file carries (tokenizer.ggml.*),
 * as llama.cpp's converter writes it from a Hugging Face folder.
 *
 * A "llama" (SentencePiece-style) vocabulary - Gemma 3's - is the pieces,
 * scores and types of the tokenizer.model it came from, so it is written
 * back as a ModelProto and read by the same SentencePiece tokenizer as a
 * tokenizer.model: Gemma's normalizer (the file keeps no normalizer; the
 * converter marks Gemma's files add_space_prefix = false), BPE by score,
 * byte fallback; tokenizer_config.json's add_bos_token / add_eos_token and
 * special ids are keys of their own. (The converter writes a user-defined
 * added token's U+2581 as a space; such tokens are matched in the raw text
 * before SentencePiece sees it, as llama.cpp matches them.) Other
 * vocabularies (Gemma 4's "gemma4" BPE, "gpt2") are refused by name.
 */
#include "runtime/src/tokenizer/gguf_vocabulary.h"

#include <unordered_map>

namespace sgc::runtime {

namespace {

class vocabulary_reader {
public:
  vocabulary_reader(const gguf::header &h, const std::string &path)
      : h_(h), path_(path) {}

  status read(sentencepiece_vocabulary *v, tokenizer_config *config);

private:
  status fail(std::string_view key, const std::string &what) const {
    return bad_input_error(path_ + ": " + std::string(key) + ": " + what);
  }
  /// The array |key| of |n| elements (n = 0: any count) of |element|.
  status array(std::string_view key, gguf::value_type element, size_t n,
               const gguf::value **out) const;
  /// An optional bool; |*out| untouched when absent.
  status flag(std::string_view key, std::optional<bool> *out) const;
  /// An optional token id below |n|; -1 when absent.
  status token_id(std::string_view key, size_t n, int64_t *out) const;

  const gguf::header &h_;
  const std::string &path_;
};

status vocabulary_reader::array(std::string_view key, gguf::value_type element,
                                size_t n, const gguf::value **out) const {
  const gguf::value *v = h_.find(key);
  if (!v)
    return fail(key, "missing (llama.cpp's converter writes it with the "
                     "vocabulary)");
  if (v->type != gguf::value_type::array || v->element_type != element)
    return fail(key, std::string("is ") + gguf::value_type_name(v->type) +
                         (v->type == gguf::value_type::array
                              ? std::string(" of ") +
                                    gguf::value_type_name(v->element_type)
                              : std::string()) +
                         ", expected an ARRAY of " +
                         gguf::value_type_name(element));
  if (n && v->size() != n)
    return fail(key, "has " + std::to_string(v->size()) +
                         " elements, tokenizer.ggml.tokens " +
                         std::to_string(n));
  *out = v;
  return {};
}

status vocabulary_reader::flag(std::string_view key,
                               std::optional<bool> *out) const {
  const gguf::value *v = h_.find(key);
  if (!v)
    return {};
  if (v->type != gguf::value_type::boolean)
    return fail(key, std::string("is ") + gguf::value_type_name(v->type) +
                         ", expected BOOL");
  *out = v->bits != 0;
  return {};
}

status vocabulary_reader::token_id(std::string_view key, size_t n,
                                   int64_t *out) const {
  *out = -1;
  const gguf::value *v = h_.find(key);
  if (!v)
    return {};
  if (!v->is_integer() || v->type == gguf::value_type::boolean)
    return fail(key, std::string("is ") + gguf::value_type_name(v->type) +
                         ", expected an integer");
  const int64_t id = v->as_int();
  if (id < 0 || static_cast<uint64_t>(id) >= n)
    return fail(key, std::to_string(id) + " is not a token id (" +
                         std::to_string(n) + " tokens)");
  *out = id;
  return {};
}

status vocabulary_reader::read(sentencepiece_vocabulary *v,
                               tokenizer_config *config) {
  const gguf::value *model = h_.find("tokenizer.ggml.model");
  if (!model)
    return fail("tokenizer.ggml.model",
                "missing: the file carries no tokenizer (give --tokenizer "
                "PATH)");
  if (model->type != gguf::value_type::string)
    return fail("tokenizer.ggml.model",
                std::string("is ") + gguf::value_type_name(model->type) +
                    ", expected STRING");
  if (model->text != "llama")
    return fail("tokenizer.ggml.model",
                "'" + model->text +
                    "' is not supported: sgc reads the SentencePiece-style "
                    "'llama' vocabulary (Gemma 3's); give --tokenizer PATH");

  const gguf::value *tokens = nullptr, *scores = nullptr, *types = nullptr;
  if (status s = array("tokenizer.ggml.tokens", gguf::value_type::string, 0,
                       &tokens);
      !s.ok())
    return s;
  const size_t n = tokens->size();
  if (n == 0)
    return fail("tokenizer.ggml.tokens", "is empty");
  if (status s = array("tokenizer.ggml.scores", gguf::value_type::f32, n,
                       &scores);
      !s.ok())
    return s;
  if (status s = array("tokenizer.ggml.token_type", gguf::value_type::i32, n,
                       &types);
      !s.ok())
    return s;

  std::optional<bool> space_prefix;
  if (status s = flag("tokenizer.ggml.add_space_prefix", &space_prefix);
      !s.ok())
    return s;
  if (space_prefix.value_or(true))
    return fail("tokenizer.ggml.add_space_prefix",
                std::string(space_prefix ? "true" : "absent (llama.cpp reads "
                                                    "that as true)") +
                    ": only Gemma-style vocabularies without a dummy prefix "
                    "are supported");

  v->pieces.resize(n);
  v->scores.resize(n);
  v->types.resize(n);
  // Keys view the header's strings, which outlive the loop.
  std::unordered_map<std::string_view, size_t> seen;
  size_t unknown = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto at = [i](const char *key) {
      return std::string(key) + "[" + std::to_string(i) + "]";
    };
    const int64_t type = types->element_int(i);
    if (type < kPieceNormal || type > kPieceByte)
      return fail(at("tokenizer.ggml.token_type"),
                  std::to_string(type) +
                      " is not a token type (1 normal .. 6 byte)");
    const std::string &piece = tokens->strings[i];
    if (piece.empty())
      return fail(at("tokenizer.ggml.tokens"), "is empty");
    if (auto [it, fresh] = seen.emplace(piece, i); !fresh)
      return fail(at("tokenizer.ggml.tokens"),
                  "'" + piece + "' is also token " + std::to_string(it->second));
    unknown += type == kPieceUnknown;
    v->pieces[i] = piece;
    v->scores[i] = static_cast<float>(scores->element_double(i));
    v->types[i] = static_cast<int>(type);
  }
  int64_t bos = -1, eos = -1, pad = -1, unk = -1;
  for (auto [key, id] : {std::pair{"tokenizer.ggml.bos_token_id", &bos},
                         std::pair{"tokenizer.ggml.eos_token_id", &eos},
                         std::pair{"tokenizer.ggml.padding_token_id", &pad},
                         std::pair{"tokenizer.ggml.unknown_token_id", &unk}})
    if (status s = token_id(key, n, id); !s.ok())
      return s;
  // The converter types every special added token control, <unk> among
  // them (Gemma's tokenizer_config.json marks it special), and writes its id
  // only when the HF config names one; SentencePiece needs exactly one
  // unknown piece: the id key's, else Gemma's "<unk>" (HF's default name).
  if (auto it = seen.find("<unk>"); unk < 0 && unknown == 0 && it != seen.end())
    unk = static_cast<int64_t>(it->second);
  if (unk >= 0 && v->types[static_cast<size_t>(unk)] != kPieceUnknown) {
    v->types[static_cast<size_t>(unk)] = kPieceUnknown;
    ++unknown;
  }
  if (unknown != 1)
    return fail("tokenizer.ggml.token_type",
                std::to_string(unknown) +
                    " tokens of type 2 (unknown) or named by "
                    "tokenizer.ggml.unknown_token_id; SentencePiece needs one");
  const auto name = [&](int64_t id) {
    return id < 0 ? std::string() : v->pieces[static_cast<size_t>(id)];
  };
  v->bos_piece = name(bos);
  v->eos_piece = name(eos);
  v->pad_piece = name(pad);
  config->bos_token = v->bos_piece;
  config->eos_token = v->eos_piece;
  config->pad_token = v->pad_piece;
  config->unk_token = name(unk);
  // Absent, llama.cpp adds BOS and no EOS around a "llama" vocabulary.
  config->add_bos_token = true;
  config->add_eos_token = false;
  if (status s = flag("tokenizer.ggml.add_bos_token", &config->add_bos_token);
      !s.ok())
    return s;
  return flag("tokenizer.ggml.add_eos_token", &config->add_eos_token);
}

} // namespace

status read_gguf_vocabulary(const gguf::header &h, const std::string &path,
                            sentencepiece_vocabulary *vocabulary,
                            tokenizer_config *config) {
  *vocabulary = sentencepiece_vocabulary();
  *config = tokenizer_config();
  return vocabulary_reader(h, path).read(vocabulary, config);
}

} // namespace sgc::runtime
