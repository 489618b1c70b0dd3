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
 * before SentencePiece sees it, as llama.cpp matches them.)
 *
 * A "gemma4" vocabulary - Gemma 4's BPE - is the vocab, merges and added
 * tokens of the tokenizer.json it came from; Gemma 4's normalizer (spaces
 * become U+2581), pre-tokenizer (split after each space), byte fallback and
 * decoder are not stored, so they are written back as that tokenizer.json
 * has them and the file is read by the same tokenizer as a tokenizer.json.
 * A merge is stored as "first second", split at the first space after its
 * first byte (llama.cpp's rule). Other vocabularies ("gpt2", ...) are
 * refused by name.
 */
#include "runtime/src/tokenizer/gguf_vocabulary.h"

#include <unordered_map>
#include <unordered_set>

namespace sgc::runtime {

namespace {

/// The code points of UTF-8 |s| (its bytes that do not continue one).
size_t code_points(const std::string &s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

class vocabulary_reader {
public:
  vocabulary_reader(const gguf::header &h, const std::string &path)
      : h_(h), path_(path) {}

  /// The model name, "llama" or "gemma4".
  status model(std::string *name) const;
  status read(sentencepiece_vocabulary *v, tokenizer_config *config);
  status read_bpe(nlohmann::json *doc, tokenizer_config *config);

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
  /// The special tokens' ids, each -1 when its key is absent.
  struct special_ids {
    int64_t bos = -1, eos = -1, pad = -1, unk = -1;
  };
  status read_special_ids(size_t n, special_ids *ids) const;
  /// The config's special token names (from |tokens|) and add_bos_token /
  /// add_eos_token (absent: llama.cpp adds BOS and no EOS).
  status name_specials(const gguf::value &tokens, const special_ids &ids,
                       tokenizer_config *config) const;
  /// The tokens, scores and types, checked (types 1..6, unique non-empty
  /// tokens).
  status pieces(const gguf::value **tokens, const gguf::value **scores,
                const gguf::value **types) const;

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

status vocabulary_reader::model(std::string *name) const {
  const gguf::value *model = h_.find("tokenizer.ggml.model");
  if (!model)
    return fail("tokenizer.ggml.model",
                "missing: the file carries no tokenizer (give --tokenizer "
                "PATH)");
  if (model->type != gguf::value_type::string)
    return fail("tokenizer.ggml.model",
                std::string("is ") + gguf::value_type_name(model->type) +
                    ", expected STRING");
  if (model->text != "llama" && model->text != "gemma4")
    return fail("tokenizer.ggml.model",
                "'" + model->text +
                    "' is not supported: sgc reads Gemma 3's SentencePiece-"
                    "style 'llama' vocabulary and Gemma 4's 'gemma4' BPE; "
                    "give --tokenizer PATH");
  *name = model->text;
  return {};
}

status vocabulary_reader::pieces(const gguf::value **tokens,
                                 const gguf::value **scores,
                                 const gguf::value **types) const {
  if (status s = array("tokenizer.ggml.tokens", gguf::value_type::string, 0,
                       tokens);
      !s.ok())
    return s;
  const size_t n = (*tokens)->size();
  if (n == 0)
    return fail("tokenizer.ggml.tokens", "is empty");
  if (status s = array("tokenizer.ggml.scores", gguf::value_type::f32, n,
                       scores);
      !s.ok())
    return s;
  if (status s = array("tokenizer.ggml.token_type", gguf::value_type::i32, n,
                       types);
      !s.ok())
    return s;
  std::unordered_map<std::string_view, size_t> seen;
  for (size_t i = 0; i < n; ++i) {
    const auto at = [i](const char *key) {
      return std::string(key) + "[" + std::to_string(i) + "]";
    };
    const int64_t type = (*types)->element_int(i);
    if (type < kPieceNormal || type > kPieceByte)
      return fail(at("tokenizer.ggml.token_type"),
                  std::to_string(type) +
                      " is not a token type (1 normal .. 6 byte)");
    const std::string &piece = (*tokens)->strings[i];
    if (piece.empty())
      return fail(at("tokenizer.ggml.tokens"), "is empty");
    if (auto [it, fresh] = seen.emplace(piece, i); !fresh)
      return fail(at("tokenizer.ggml.tokens"),
                  "'" + piece + "' is also token " + std::to_string(it->second));
  }
  return {};
}

status vocabulary_reader::read_special_ids(size_t n, special_ids *ids) const {
  for (auto [key, id] : {std::pair{"tokenizer.ggml.bos_token_id", &ids->bos},
                         std::pair{"tokenizer.ggml.eos_token_id", &ids->eos},
                         std::pair{"tokenizer.ggml.padding_token_id", &ids->pad},
                         std::pair{"tokenizer.ggml.unknown_token_id", &ids->unk}})
    if (status s = token_id(key, n, id); !s.ok())
      return s;
  return {};
}

status vocabulary_reader::name_specials(const gguf::value &tokens,
                                        const special_ids &ids,
                                        tokenizer_config *config) const {
  const auto name = [&](int64_t id) {
    return id < 0 ? std::string() : tokens.strings[static_cast<size_t>(id)];
  };
  config->bos_token = name(ids.bos);
  config->eos_token = name(ids.eos);
  config->pad_token = name(ids.pad);
  config->unk_token = name(ids.unk);
  config->add_bos_token = true;
  config->add_eos_token = false;
  if (status s = flag("tokenizer.ggml.add_bos_token", &config->add_bos_token);
      !s.ok())
    return s;
  return flag("tokenizer.ggml.add_eos_token", &config->add_eos_token);
}

status vocabulary_reader::read(sentencepiece_vocabulary *v,
                               tokenizer_config *config) {
  std::string kind;
  if (status s = model(&kind); !s.ok())
    return s;
  if (kind != "llama")
    return fail("tokenizer.ggml.model", "'" + kind + "' is not the "
                                        "SentencePiece-style 'llama'");
  const gguf::value *tokens = nullptr, *scores = nullptr, *types = nullptr;
  if (status s = pieces(&tokens, &scores, &types); !s.ok())
    return s;
  const size_t n = tokens->size();

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
  std::unordered_map<std::string_view, size_t> seen;
  size_t unknown = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t type = types->element_int(i);
    unknown += type == kPieceUnknown;
    v->pieces[i] = tokens->strings[i];
    v->scores[i] = static_cast<float>(scores->element_double(i));
    v->types[i] = static_cast<int>(type);
    seen.emplace(tokens->strings[i], i);
  }
  special_ids ids;
  if (status s = read_special_ids(n, &ids); !s.ok())
    return s;
  // The converter types every special added token control, <unk> among
  // them (Gemma's tokenizer_config.json marks it special), and writes its id
  // only when the HF config names one; SentencePiece needs exactly one
  // unknown piece: the id key's, else Gemma's "<unk>" (HF's default name).
  if (auto it = seen.find("<unk>");
      ids.unk < 0 && unknown == 0 && it != seen.end())
    ids.unk = static_cast<int64_t>(it->second);
  if (ids.unk >= 0 &&
      v->types[static_cast<size_t>(ids.unk)] != kPieceUnknown) {
    v->types[static_cast<size_t>(ids.unk)] = kPieceUnknown;
    ++unknown;
  }
  if (unknown != 1)
    return fail("tokenizer.ggml.token_type",
                std::to_string(unknown) +
                    " tokens of type 2 (unknown) or named by "
                    "tokenizer.ggml.unknown_token_id; SentencePiece needs one");
  if (status s = name_specials(*tokens, ids, config); !s.ok())
    return s;
  v->bos_piece = config->bos_token;
  v->eos_piece = config->eos_token;
  v->pad_piece = config->pad_token;
  return {};
}

status vocabulary_reader::read_bpe(nlohmann::json *doc,
                                   tokenizer_config *config) {
  std::string kind;
  if (status s = model(&kind); !s.ok())
    return s;
  if (kind != "gemma4")
    return fail("tokenizer.ggml.model", "'" + kind + "' is not the BPE "
                                        "'gemma4'");
  const gguf::value *tokens = nullptr, *scores = nullptr, *types = nullptr;
  if (status s = pieces(&tokens, &scores, &types); !s.ok())
    return s;
  const size_t n = tokens->size();
  const gguf::value *merges = nullptr;
  if (status s = array("tokenizer.ggml.merges", gguf::value_type::string, 0,
                       &merges);
      !s.ok())
    return s;
  nlohmann::json pairs = nlohmann::json::array();
  std::unordered_set<std::string> merged;
  for (size_t i = 0; i < merges->size(); ++i) {
    const std::string &m = merges->strings[i];
    const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (space == std::string::npos || space + 1 == m.size())
      return fail("tokenizer.ggml.merges[" + std::to_string(i) + "]",
                  "'" + m + "' is not two pieces joined by a space");
    pairs.push_back({m.substr(0, space), m.substr(space + 1)});
    merged.insert(m.substr(0, space) + m.substr(space + 1));
  }
  // The tokenizer.json's added tokens, all special in Gemma 4's. The
  // converter types those transformers lists as special control, renders
  // Gemma 4's tool and channel markers user-defined, and types the other
  // added tokens normal: pieces of more than one character that no merge
  // makes, which BPE never produces.
  static const std::unordered_set<std::string_view> kVisibleMarkers = {
      "<|channel>",       "<channel|>",       "<|tool_call>", "<tool_call|>",
      "<|tool_response>", "<tool_response|>", "<|\"|>"};
  nlohmann::json vocab = nlohmann::json::object();
  nlohmann::json added = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) {
    const std::string &piece = tokens->strings[i];
    vocab[piece] = i;
    const int64_t type = types->element_int(i);
    const bool unreachable = type == kPieceNormal &&
                             code_points(piece) > 1 && !merged.count(piece);
    if (type != kPieceControl && type != kPieceUserDefined && !unreachable)
      continue;
    const bool special =
        type != kPieceUserDefined || kVisibleMarkers.count(piece) != 0;
    added.push_back({{"id", i},
                     {"content", piece},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", special}});
  }
  special_ids ids;
  if (status s = read_special_ids(n, &ids); !s.ok())
    return s;
  if (ids.unk < 0 && vocab.contains("<unk>"))
    ids.unk = vocab["<unk>"].get<int64_t>();
  if (ids.bos < 0)
    return fail("tokenizer.ggml.bos_token_id",
                "missing: a gemma4 vocabulary names its BOS token");
  if (status s = name_specials(*tokens, ids, config); !s.ok())
    return s;
  const std::string &bos = config->bos_token;

  const std::string space = " ", marker = "\xe2\x96\x81"; // U+2581
  nlohmann::json single = nlohmann::json::array();
  nlohmann::json specials = nlohmann::json::object();
  if (*config->add_bos_token) {
    single.push_back({{"SpecialToken", {{"id", bos}, {"type_id", 0}}}});
    specials[bos] = {{"id", bos}, {"ids", {ids.bos}}, {"tokens", {bos}}};
  }
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  *doc = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer",
       {{"type", "Replace"},
        {"pattern", {{"String", space}}},
        {"content", marker}}},
      {"pre_tokenizer",
       {{"type", "Split"},
        {"pattern", {{"String", space}}},
        {"behavior", "MergedWithPrevious"},
        {"invert", false}}},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", single},
        {"pair", nullptr},
        {"special_tokens", specials}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"},
           {"pattern", {{"String", marker}}},
           {"content", space}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}}}}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token",
         ids.unk < 0 ? nlohmann::json() : nlohmann::json(config->unk_token)},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", true},
        {"byte_fallback", true},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", pairs}}},
  };
  return {};
}

} // namespace

status read_gguf_vocabulary_model(const gguf::header &h,
                                  const std::string &path,
                                  std::string *model) {
  return vocabulary_reader(h, path).model(model);
}

status read_gguf_vocabulary(const gguf::header &h, const std::string &path,
                            sentencepiece_vocabulary *vocabulary,
                            tokenizer_config *config) {
  *vocabulary = sentencepiece_vocabulary();
  *config = tokenizer_config();
  return vocabulary_reader(h, path).read(vocabulary, config);
}

status read_gguf_bpe_vocabulary(const gguf::header &h, const std::string &path,
                                nlohmann::json *doc,
                                tokenizer_config *config) {
  *doc = nlohmann::json();
  *config = tokenizer_config();
  return vocabulary_reader(h, path).read_bpe(doc, config);
}

} // namespace sgc::runtime
