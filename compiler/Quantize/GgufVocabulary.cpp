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

#include <optional>

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

// GGUF token types (llama.cpp's llama_token_type).
enum : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

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
};

/// tokenizer.json's TemplateProcessing: a leading special token that is
/// the BOS means add_bos, a trailing one that is the EOS add_eos. (A
/// trailing special token other than the configured EOS, which the
/// converter then takes as the EOS, is not followed: Gemma has none.)
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
  for (const json *p : processors) {
    std::string type = p->value("type", "");
    if (type == "ByteLevel") {
      vocab.setAdd("bos", false);
      vocab.setAdd("eos", false);
    }
    if (type != "TemplateProcessing" || !p->contains("single") ||
        !(*p)["single"].is_array() || (*p)["single"].size() < 2)
      continue;
    auto special = [](const json &item) -> std::string {
      if (item.contains("SpecialToken") && item["SpecialToken"].is_object())
        return item["SpecialToken"].value("id", "");
      return "";
    };
    const json &single = (*p)["single"];
    if (std::string first = special(single.front()); !first.empty())
      vocab.setAdd("bos", first == configured("bos_token") ||
                              first == configured("cls_token"));
    if (std::string last = special(single.back()); !last.empty())
      vocab.setAdd("eos", last == configured("eos_token"));
  }
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
    int t = pieces.types[i];
    types[i] = t == ::sgc::kPieceUnknown   ? kUnknown
               : t == ::sgc::kPieceControl ? kControl
               : t == ::sgc::kPieceUnused  ? kUnused
               : t == ::sgc::kPieceByte    ? kByte
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

  SpecialVocab special;
  special.vocabSize = vocabSize;
  FailureOr<std::optional<json>> tokenizerJson = files.readJson("tokenizer.json");
  if (failed(tokenizerJson))
    return failure();
  json addedTokens = json::array();
  if (*tokenizerJson) {
    readPostProcessor(**tokenizerJson, tc, special);
    if ((*tokenizerJson)->contains("added_tokens") &&
        (**tokenizerJson)["added_tokens"].is_array())
      addedTokens = (**tokenizerJson)["added_tokens"];
  }
  if (tc) {
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
        if (a.is_object() && a.value("content", "") == *text &&
            a.contains("id")) {
          special.setId(kind.name, a["id"]);
          break;
        }
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

  out.set_string("tokenizer.ggml.model", "llama");
  out.set_string("tokenizer.ggml.pre", "default");
  out.set_strings("tokenizer.ggml.tokens", std::move(tokens));
  out.set_f32s("tokenizer.ggml.scores", scores);
  out.set_i32s("tokenizer.ggml.token_type", types);
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
  out.set_bool("tokenizer.ggml.add_space_prefix", false);
  return vocabSize;
}
