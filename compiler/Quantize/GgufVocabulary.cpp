//===- GgufVocabulary.cpp - an HF tokenizer as GGUF metadata --------------===//
//
// Part of sgc. What llama.cpp's convert_hf_to_gguf.py writes for a Gemma 3
// folder with a tokenizer.model (its SentencePiece vocabulary and gguf-py's
// SpecialVocab), as facts: the pieces as libsentencepiece reports them
// (user-defined pieces read as normal: its API cannot tell them apart), the
// added tokens on top with score -1000, the special ids found in the order
// bos, eos, unk, sep, pad, cls, mask, and no prefix space.
//
//===----------------------------------------------------------------------===//

#include "compiler/Quantize/GgufVocabulary.h"

#include "lib/tokenizer/sentencepiece_proto.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <map>
#include <optional>
#include <set>

using namespace mlir;
using json = nlohmann::json;

namespace {

/// The special token kinds gguf-py's SpecialVocab looks for, in its order,
/// with the GGUF key of the id ("" where gguf-py writes none) and of the
/// add-flag ("" where it writes none).
struct SpecialKind {
  const char *name, *idKey, *addKey;
};
const SpecialKind kSpecialKinds[] = {
    {"bos", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.add_bos_token"},
    {"eos", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.add_eos_token"},
    {"unk", "tokenizer.ggml.unknown_token_id", ""},
    {"sep", "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.add_sep_token"},
    {"pad", "tokenizer.ggml.padding_token_id", ""},
    {"cls", "", ""},
    {"mask", "tokenizer.ggml.mask_token_id", ""},
};

// GGUF token types (llama.cpp's llama_token_type) are SentencePiece's
// piece types, number for number.
constexpr int32_t kNormal = ::sgc::kPieceNormal, kUnknown = ::sgc::kPieceUnknown,
                  kControl = ::sgc::kPieceControl,
                  kUserDefined = ::sgc::kPieceUserDefined,
                  kUnused = ::sgc::kPieceUnused, kByte = ::sgc::kPieceByte;

/// A file of the folder read whole, or nullopt when absent.
class FolderFiles {
public:
  FolderFiles(MLIRContext *ctx, StringRef dir) : ctx(ctx), dir(dir.str()) {}

  std::string path(StringRef name) const {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }
  Location loc(StringRef name) const {
    return FileLineColLoc::get(ctx, path(name), 0, 0);
  }
  /// The bytes of `name`; nullopt when there is no such file.
  std::optional<std::string> read(StringRef name) const {
    auto buffer = llvm::MemoryBuffer::getFile(path(name), /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return std::nullopt;
    return (*buffer)->getBuffer().str();
  }
  /// `name` parsed as JSON: nullopt when absent, failure when malformed.
  FailureOr<std::optional<json>> readJson(StringRef name) const {
    std::optional<std::string> text = read(name);
    if (!text)
      return std::optional<json>();
    json parsed = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded())
      return emitError(loc(name)) << "not valid JSON", failure();
    return std::optional<json>(std::move(parsed));
  }

  MLIRContext *ctx;
  std::string dir;
};

/// A special token's text in tokenizer_config.json: a string, or an
/// object's "content".
std::optional<std::string> tokenText(const json &entry) {
  if (entry.is_string())
    return entry.get<std::string>();
  if (entry.is_object() && entry.contains("content") &&
      entry["content"].is_string())
    return entry["content"].get<std::string>();
  return std::nullopt;
}

/// The converter's does_token_look_special for an added token not marked
/// special.
bool looksSpecial(StringRef text) {
  return text == "<pad>" || text == "<mask>" || text == "<2mass>" ||
         text == "[@BOS@]" ||
         (text.starts_with("<|") && text.ends_with("|>")) ||
         (text.starts_with("<\xef\xbd\x9c") && text.ends_with("\xef\xbd\x9c>")) ||
         (text.starts_with("<unused") && text.ends_with(">"));
}

/// gguf-py's SpecialVocab: ids and add-flags, each kept at its first
/// finding, in the order found.
struct SpecialVocab {
  std::vector<std::pair<std::string, int64_t>> ids;
  std::vector<std::pair<std::string, bool>> adds;
  std::optional<std::string> chatTemplate;
  std::vector<std::string> merges;
  int64_t vocabSize = 0;

  bool hasId(StringRef kind) const {
    return llvm::any_of(ids, [&](auto &e) { return e.first == kind; });
  }
  bool hasAdd(StringRef kind) const {
    return llvm::any_of(adds, [&](auto &e) { return e.first == kind; });
  }
  void setId(StringRef kind, const json &id) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= vocabSize || hasId(kind))
      return;
    ids.push_back({kind.str(), id.get<int64_t>()});
  }
  void setAdd(StringRef kind, bool flag) {
    if (!hasAdd(kind))
      adds.push_back({kind.str(), flag});
  }
  /// A post-processor's flag replaces an earlier one in its place.
  void overrideAdd(StringRef kind, bool flag) {
    for (auto &e : adds)
      if (e.first == kind) {
        e.second = flag;
        return;
      }
    adds.push_back({kind.str(), flag});
  }
};

/// The id of an item's SpecialToken in a TemplateProcessing template ("" if
/// the item is a Sequence).
std::string specialOf(const json &item) {
  if (item.is_object() && item.contains("SpecialToken") &&
      item["SpecialToken"].is_object())
    return item["SpecialToken"].value("id", "");
  return "";
}

/// The id of an item's Sequence ("A", "B"; "" for a SpecialToken).
std::string sequenceOf(const json &item) {
  if (item.is_object() && item.contains("Sequence") &&
      item["Sequence"].is_object())
    return item["Sequence"].value("id", "");
  return "";
}

/// tokenizer.json's TemplateProcessing, as gguf-py's SpecialVocab reads it:
/// a leading special token that is the BOS means add_bos, a trailing one
/// that is the EOS add_eos, and a separator (the SEP or EOS) between A and B
/// in the pair template add_sep. (A trailing special token other than the
/// configured EOS, which gguf-py then takes as the EOS, is not followed:
/// Gemma has none.)
void readPostProcessor(const json &tokenizer, const json *config,
                       SpecialVocab &vocab) {
  auto configured = [&](const char *key) -> std::string {
    if (!config || !config->contains(key))
      return "";
    return tokenText((*config)[key]).value_or("");
  };
  const json *post = tokenizer.contains("post_processor")
                         ? &tokenizer["post_processor"]
                         : nullptr;
  if (!post || !post->is_object())
    return;
  std::vector<const json *> processors;
  if (post->contains("processors") && (*post)["processors"].is_array())
    for (const json &p : (*post)["processors"])
      processors.push_back(&p);
  else
    processors.push_back(post);
  std::string bos = configured("bos_token"), cls = configured("cls_token");
  std::string eos = configured("eos_token"), sep = configured("sep_token");
  for (const json *p : processors) {
    std::string type = p->value("type", "");
    if (type == "ByteLevel") {
      vocab.setAdd("bos", false);
      vocab.setAdd("eos", false);
    }
    if (type != "TemplateProcessing" || !p->contains("single") ||
        !(*p)["single"].is_array())
      continue;
    const json &single = (*p)["single"];
    std::string first, last;
    if (single.size() > 1) {
      first = specialOf(single.front());
      last = specialOf(single.back());
      if (!first.empty())
        vocab.overrideAdd("bos", first == bos || first == cls);
      if (!last.empty())
        vocab.overrideAdd("eos", last == eos);
    }
    if (!p->contains("pair") || !(*p)["pair"].is_array())
      continue;
    std::vector<json> pair((*p)["pair"].begin(), (*p)["pair"].end());
    // The pair template without the single one's leading and trailing
    // special tokens: A, the separators, B.
    size_t begin =
        !first.empty() && !pair.empty() && specialOf(pair.front()) == first;
    size_t end = pair.size() -
                 (!last.empty() && !pair.empty() && specialOf(pair.back()) == last);
    if (end < begin + 3 || sequenceOf(pair[begin]) != "A" ||
        sequenceOf(pair[end - 1]) != "B")
      continue;
    bool addSep = false;
    std::string entry = specialOf(pair[begin + 1]);
    if (!entry.empty() && (entry == sep || entry == eos) && last.empty())
      addSep = true;
    if (end - begin == 4) {
      std::string second = specialOf(pair[begin + 2]);
      if (!second.empty() && (second == sep || second == eos))
        addSep = true;
    }
    vocab.overrideAdd("sep", addSep);
  }
}

/// gguf-py's SpecialVocab of the folder: tokenizer.json's merges (when
/// `merges`), its post-processor's add-flags, tokenizer_config.json's
/// chat template, add-flags and special tokens (looked up among
/// tokenizer.json's added tokens), then config.json's *_token_id.
/// `tokenizerJson` and `tc`: the folder's tokenizer.json and
/// tokenizer_config.json as the caller parsed them (null where absent).
FailureOr<SpecialVocab> readSpecialVocab(const FolderFiles &files,
                                         const json *tokenizerJson,
                                         const json *tc, const json &config,
                                         int64_t vocabSize, bool merges) {
  SpecialVocab special;
  special.vocabSize = vocabSize;
  json addedTokens = json::array();
  if (tokenizerJson) {
    const json &tj = *tokenizerJson;
    if (merges && tj.contains("model") && tj["model"].is_object() &&
        tj["model"].contains("merges") && tj["model"]["merges"].is_array()) {
      for (const json &m : tj["model"]["merges"]) {
        if (m.is_string()) {
          special.merges.push_back(m.get<std::string>());
          continue;
        }
        if (!m.is_array() || m.size() != 2 || !m[0].is_string() ||
            !m[1].is_string())
          return emitError(files.loc("tokenizer.json"))
                 << "model.merges: an entry is neither \"a b\" nor [a, b]",
                 failure();
        // A space inside a part is written as U+0120 (gguf-py).
        std::string joined;
        for (int i = 0; i < 2; ++i) {
          if (i)
            joined += ' ';
          for (char c : m[i].get<std::string>())
            joined += c == ' ' ? std::string("\xc4\xa0") : std::string(1, c);
        }
        special.merges.push_back(std::move(joined));
      }
    }
    readPostProcessor(tj, tc, special);
    if (tj.contains("added_tokens") && tj["added_tokens"].is_array())
      addedTokens = tj["added_tokens"];
  }
  if (!tc)
    return special;
  if (tc->contains("chat_template") && (*tc)["chat_template"].is_string()) {
    special.chatTemplate = (*tc)["chat_template"].get<std::string>();
  } else if (std::optional<std::string> jinja = files.read("chat_template.jinja")) {
    special.chatTemplate = *jinja;
  } else {
    FailureOr<std::optional<json>> ct = files.readJson("chat_template.json");
    if (failed(ct))
      return failure();
    if (*ct && (*ct)->contains("chat_template") &&
        (**ct)["chat_template"].is_string())
      special.chatTemplate = (**ct)["chat_template"].get<std::string>();
  }
  for (const SpecialKind &kind : kSpecialKinds) {
    std::string addKey = std::string("add_") + kind.name + "_token";
    if (tc->contains(addKey) && (*tc)[addKey].is_boolean())
      special.setAdd(kind.name, (*tc)[addKey].get<bool>());
    std::string tokenKey = std::string(kind.name) + "_token";
    if (!tc->contains(tokenKey))
      continue;
    std::optional<std::string> text = tokenText((*tc)[tokenKey]);
    if (!text)
      continue;
    for (const json &a : addedTokens)
      if (a.is_object() && a.value("content", "") == *text && a.contains("id")) {
        special.setId(kind.name, a["id"]);
        break;
      }
  }
  for (const SpecialKind &kind : kSpecialKinds) {
    std::string key = std::string(kind.name) + "_token_id";
    if (config.contains(key))
      special.setId(kind.name, config[key]);
    else if (config.contains("text_config") &&
             config["text_config"].is_object() &&
             config["text_config"].contains(key))
      special.setId(kind.name, config["text_config"][key]);
  }
  return special;
}

/// Writes what SpecialVocab.add_to_gguf writes, in its order.
void writeSpecialVocab(const SpecialVocab &special, ::sgc::gguf::writer &out) {
  if (!special.merges.empty())
    out.set_strings("tokenizer.ggml.merges", special.merges);
  auto kindOf = [](StringRef name) {
    return *llvm::find_if(kSpecialKinds,
                          [&](const SpecialKind &k) { return name == k.name; });
  };
  for (auto &[name, id] : special.ids)
    if (*kindOf(name).idKey)
      out.set_u32(kindOf(name).idKey, static_cast<uint32_t>(id));
  for (auto &[name, flag] : special.adds)
    if (*kindOf(name).addKey)
      out.set_bool(kindOf(name).addKey, flag);
  if (special.chatTemplate)
    out.set_string("tokenizer.chat_template", *special.chatTemplate);
}

} // namespace

FailureOr<int64_t> mlir::sgc::writeGemma3Vocabulary(MLIRContext *ctx,
                                                    StringRef dir,
                                                    const json &config,
                                                    ::sgc::gguf::writer &out) {
  FolderFiles files(ctx, dir);
  std::optional<std::string> model = files.read("tokenizer.model");
  if (!model)
    return emitError(files.loc("tokenizer.model"))
           << "no such file: sgc quantize writes a Gemma 3 vocabulary from "
              "its SentencePiece model",
           failure();
  ::sgc::sentencepiece_vocabulary pieces;
  if (!::sgc::read_sentencepiece_model(*model, &pieces))
    return emitError(files.loc("tokenizer.model"))
           << "not a SentencePiece model (no well-formed ModelProto pieces)",
           failure();

  // The config's vocabulary (text_config's keys over the top level's), else
  // the tokenizer's.
  json hparams = config;
  if (config.contains("text_config") && config["text_config"].is_object())
    for (auto &[key, val] : config["text_config"].items())
      hparams[key] = val;
  int64_t vocabSize = static_cast<int64_t>(pieces.pieces.size());
  for (const char *key : {"vocab_size_per_layer_input", "vocab_size"})
    if (hparams.contains(key) && hparams[key].is_number_integer()) {
      vocabSize = hparams[key].get<int64_t>();
      break;
    }
  if (vocabSize <= 0 || vocabSize > (int64_t{1} << 24))
    return emitError(files.loc("config.json"))
           << "vocab_size " << vocabSize << " is out of range", failure();

  std::vector<std::string> tokens(static_cast<size_t>(vocabSize));
  std::vector<float> scores(tokens.size(), -10000.0f);
  std::vector<int32_t> types(tokens.size(), kUnused);
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = "[PAD" + std::to_string(i) + "]";
  for (size_t i = 0; i < std::min(tokens.size(), pieces.pieces.size()); ++i) {
    tokens[i] = pieces.pieces[i];
    scores[i] = pieces.scores[i];
    // libsentencepiece, which the converter asks, cannot tell a
    // user-defined piece from a normal one.
    int t = pieces.types[i];
    types[i] = t == kUnknown || t == kControl || t == kUnused || t == kByte
                   ? t
                   : kNormal;
  }
  FailureOr<std::optional<json>> added = files.readJson("added_tokens.json");
  if (failed(added))
    return failure();
  if (*added && (*added)->is_object())
    for (auto &[text, id] : (*added)->items())
      if (id.is_number_integer() && id.get<int64_t>() >= 0 &&
          id.get<int64_t>() < vocabSize) {
        size_t i = static_cast<size_t>(id.get<int64_t>());
        tokens[i] = text;
        scores[i] = -1000.0f;
        types[i] = kUserDefined;
      }
  FailureOr<std::optional<json>> tokenizerConfig =
      files.readJson("tokenizer_config.json");
  if (failed(tokenizerConfig))
    return failure();
  const json *tc = *tokenizerConfig ? &**tokenizerConfig : nullptr;
  if (tc && tc->contains("added_tokens_decoder") &&
      (*tc)["added_tokens_decoder"].is_object()) {
    for (auto &[key, entry] : (*tc)["added_tokens_decoder"].items()) {
      int64_t id;
      if (StringRef(key).getAsInteger(10, id) || id < 0 || id >= vocabSize ||
          !entry.is_object() || !entry.contains("content") ||
          !entry["content"].is_string())
        continue;
      std::string text = entry["content"].get<std::string>();
      size_t i = static_cast<size_t>(id);
      if (entry.value("special", false) || looksSpecial(text)) {
        types[i] = kControl;
      } else {
        // User-defined spaces are pre-normalized: U+2581 -> ' '.
        for (size_t at; (at = text.find("\xe2\x96\x81")) != std::string::npos;)
          text.replace(at, 3, " ");
        types[i] = kUserDefined;
      }
      scores[i] = -1000.0f;
      tokens[i] = std::move(text);
    }
  }

  FailureOr<std::optional<json>> tokenizerJson = files.readJson("tokenizer.json");
  if (failed(tokenizerJson))
    return failure();
  FailureOr<SpecialVocab> special = readSpecialVocab(
      files, *tokenizerJson ? &**tokenizerJson : nullptr, tc, config,
      vocabSize, /*merges=*/false);
  if (failed(special))
    return failure();

  out.set_string("tokenizer.ggml.model", "llama");
  out.set_string("tokenizer.ggml.pre", "default");
  out.set_strings("tokenizer.ggml.tokens", std::move(tokens));
  out.set_f32s("tokenizer.ggml.scores", scores);
  out.set_i32s("tokenizer.ggml.token_type", types);
  writeSpecialVocab(*special, out);
  out.set_bool("tokenizer.ggml.add_space_prefix", false);
  return vocabSize;
}

namespace {
/// The tokenizer's special tokens (transformers' all_special_tokens): the
/// named ones of tokenizer_config.json, GemmaTokenizer's defaults where it
/// names none, its additional and extra special tokens.
std::set<std::string> specialTokens(const json *tc) {
  std::set<std::string> out;
  if (!tc)
    return out;
  bool gemma = StringRef(tc->value("tokenizer_class", "")).starts_with("Gemma");
  const std::pair<const char *, const char *> named[] = {
      {"bos_token", "<bos>"}, {"eos_token", "<eos>"}, {"unk_token", "<unk>"},
      {"sep_token", nullptr}, {"pad_token", "<pad>"}, {"cls_token", nullptr},
      {"mask_token", "<mask>"}};
  for (auto [key, fallback] : named) {
    if (tc->contains(key)) {
      if (std::optional<std::string> text = tokenText((*tc)[key]))
        out.insert(*text);
    } else if (gemma && fallback) {
      out.insert(fallback);
    }
  }
  for (const char *key : {"additional_special_tokens", "extra_special_tokens"}) {
    if (!tc->contains(key))
      continue;
    const json &list = (*tc)[key];
    if (list.is_array() || list.is_object())
      for (const json &item : list)
        if (std::optional<std::string> text = tokenText(item))
          out.insert(*text);
  }
  return out;
}

/// "<0x0A>": a byte-fallback piece.
bool isBytePiece(StringRef text) {
  return text.size() == 6 && text.starts_with("<0x") && text.ends_with(">") &&
         llvm::isHexDigit(text[3]) && llvm::isHexDigit(text[4]);
}
} // namespace

FailureOr<int64_t> mlir::sgc::writeGemma4Vocabulary(MLIRContext *ctx,
                                                    StringRef dir,
                                                    const json &config,
                                                    ::sgc::gguf::writer &out) {
  FolderFiles files(ctx, dir);
  FailureOr<std::optional<json>> tokenizerJson = files.readJson("tokenizer.json");
  if (failed(tokenizerJson))
    return failure();
  Location loc = files.loc("tokenizer.json");
  if (!*tokenizerJson)
    return emitError(loc) << "no such file: sgc quantize writes a Gemma 4 "
                             "vocabulary from its BPE tokenizer",
           failure();
  const json &tj = **tokenizerJson;
  // LlamaHfVocab's test: a BPE model with byte fallback, a Sequence decoder.
  if (!tj.contains("model") || !tj["model"].is_object() ||
      tj["model"].value("type", "") != "BPE" ||
      !tj["model"].value("byte_fallback", false) ||
      !tj["model"].contains("vocab") || !tj["model"]["vocab"].is_object() ||
      !tj.contains("decoder") || !tj["decoder"].is_object() ||
      tj["decoder"].value("type", "") != "Sequence")
    return emitError(loc) << "not a BPE tokenizer with byte fallback and a "
                             "Sequence decoder (what llama.cpp's converter "
                             "reads for Gemma 4)",
           failure();
  FailureOr<std::optional<json>> tokenizerConfig =
      files.readJson("tokenizer_config.json");
  if (failed(tokenizerConfig))
    return failure();
  const json *tc = *tokenizerConfig ? &**tokenizerConfig : nullptr;

  // The vocabulary with its added tokens (transformers' get_vocab()).
  const json &vocab = tj["model"]["vocab"];
  int64_t baseSize = static_cast<int64_t>(vocab.size());
  std::map<int64_t, std::string> byId;
  std::map<std::string, int64_t> idOf;
  for (auto &[text, id] : vocab.items()) {
    if (!id.is_number_integer())
      return emitError(loc) << "model.vocab['" << text << "'] is not an id",
             failure();
    byId[id.get<int64_t>()] = text;
    idOf[text] = id.get<int64_t>();
  }
  std::map<int64_t, std::string> addedPast;
  if (tj.contains("added_tokens") && tj["added_tokens"].is_array())
    for (const json &a : tj["added_tokens"]) {
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() ||
          !a.contains("content") || !a["content"].is_string())
        return emitError(loc) << "added_tokens: an entry without an integer "
                                 "id and a content string",
               failure();
      int64_t id = a["id"].get<int64_t>();
      std::string text = a["content"].get<std::string>();
      byId[id] = text;
      idOf[text] = id;
      if (id >= baseSize)
        addedPast[id] = text;
    }
  std::set<int64_t> specialIds;
  for (const std::string &text : specialTokens(tc))
    if (auto it = idOf.find(text); it != idOf.end())
      specialIds.insert(it->second);
  static const llvm::StringSet<> kVisible = {
      "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>",
      "<|tool_response>", "<tool_response|>", "<|\"|>"};

  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  auto push = [&](const std::string &text, int32_t type) {
    tokens.push_back(text);
    types.push_back(kVisible.contains(text) ? kUserDefined : type);
  };
  for (int64_t id = 0; id < baseSize; ++id) {
    auto it = byId.find(id);
    if (it == byId.end())
      return emitError(loc) << "model.vocab has no token of id " << id
                            << " (ids must run 0.." << baseSize - 1 << ")",
             failure();
    push(it->second, isBytePiece(it->second) ? kByte
                     : specialIds.count(id)  ? kControl
                                             : kNormal);
  }
  for (auto &[id, text] : addedPast)
    push(text, specialIds.count(id) ? kControl : kUserDefined);
  int64_t count = static_cast<int64_t>(tokens.size());

  FailureOr<SpecialVocab> special =
      readSpecialVocab(files, &tj, tc, config,
                       std::numeric_limits<int64_t>::max(), /*merges=*/true);
  if (failed(special))
    return failure();
  out.set_string("tokenizer.ggml.model", "gemma4");
  out.set_strings("tokenizer.ggml.tokens", std::move(tokens));
  out.set_f32s("tokenizer.ggml.scores", std::vector<float>(count, -1000.0f));
  out.set_i32s("tokenizer.ggml.token_type", types);
  writeSpecialVocab(*special, out);
  out.set_bool("tokenizer.ggml.add_space_prefix", false);
  out.set_bool("tokenizer.ggml.add_bos_token", true);
  return count;
}

int64_t mlir::sgc::writePlaceholderVocabulary(int64_t size,
                                              ::sgc::gguf::writer &out) {
  std::vector<std::string> tokens = {"<pad>", "<eos>", "<bos>", "<unk>"};
  std::vector<int32_t> types = {kControl, kControl, kControl, kUnknown};
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(llvm::formatv("<0x{0:X2}>", b).str());
    types.push_back(kByte);
  }
  while (int64_t(tokens.size()) < size) {
    tokens.push_back("p" + std::to_string(tokens.size()));
    types.push_back(kNormal);
  }
  tokens.resize(size_t(size));
  types.resize(size_t(size));
  out.set_string("tokenizer.ggml.model", "llama");
  out.set_string("tokenizer.ggml.pre", "default");
  out.set_strings("tokenizer.ggml.tokens", std::move(tokens));
  out.set_f32s("tokenizer.ggml.scores", std::vector<float>(size_t(size), 0.0f));
  out.set_i32s("tokenizer.ggml.token_type", types);
  out.set_u32("tokenizer.ggml.bos_token_id", 2);
  out.set_u32("tokenizer.ggml.eos_token_id", 1);
  out.set_u32("tokenizer.ggml.unknown_token_id", 3);
  out.set_u32("tokenizer.ggml.padding_token_id", 0);
  out.set_bool("tokenizer.ggml.add_bos_token", true);
  out.set_bool("tokenizer.ggml.add_space_prefix", false);
  return size;
}
