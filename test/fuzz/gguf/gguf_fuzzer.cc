/*
 * gguf_fuzzer.cc - libFuzzer target for the GGUF reader (lib/gguf) and the
 * runtime's reading of a GGUF vocabulary (tokenizer.ggml.*). Any input must
 * yield either a header that satisfies every invariant the reader
 * promises, or a bad_input status; an accepted "llama" vocabulary is one
 * SentencePiece can take, and its ModelProto reads back with the same
 * piece types; an accepted "gemma4" one is a tokenizer.json whose vocab
 * holds every token once and whose merges and added tokens name them;
 * never a crash, hang, leak or sanitizer report.
 *
 * Seeds: test/Inputs/gguf/, and seeds/vocabulary{,4}.gguf (ok.gguf and
 * ok4.gguf of test/tools/sgc-tokenize/Inputs/gguf-vocabularies.py); see
 * scripts/test-sanitized.
 */
#include "lib/gguf/gguf.h"
#include "runtime/src/tokenizer/gguf_vocabulary.h"

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

namespace {

/// A "gemma4" vocabulary: refused as bad input, or a tokenizer.json whose
/// vocab holds each token once, whose added tokens are tokens at their ids
/// and whose merges are pairs of strings.
int check_bpe(const sgc::gguf::header &h) {
  nlohmann::json doc;
  sgc::runtime::tokenizer_config config;
  const sgc::status s =
      sgc::runtime::read_gguf_bpe_vocabulary(h, "fuzz", &doc, &config);
  if (!s.ok()) {
    if (s.code() != sgc::status_code::bad_input || s.message().empty())
      std::abort();
    return 0;
  }
  const nlohmann::json &vocab = doc["model"]["vocab"];
  const sgc::gguf::value *tokens = h.find("tokenizer.ggml.tokens");
  if (!tokens || vocab.size() != tokens->strings.size())
    std::abort();
  for (const nlohmann::json &a : doc["added_tokens"]) {
    const size_t id = a["id"].get<size_t>();
    if (id >= tokens->strings.size() ||
        a["content"].get<std::string>() != tokens->strings[id])
      std::abort();
  }
  for (const nlohmann::json &m : doc["model"]["merges"])
    if (m.size() != 2 || m[0].get<std::string>().empty() ||
        m[1].get<std::string>().empty())
      std::abort();
  return 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sgc::gguf::header h;
  const sgc::status st = sgc::gguf::parse(data, size, "fuzz", &h);
  if (!st.ok()) {
    if (st.code() != sgc::status_code::bad_input || st.message().empty())
      std::abort();
    return 0;
  }
  // Invariants of an accepted image.
  if (h.version != sgc::gguf::supported_version || h.alignment == 0 ||
      (h.alignment & (h.alignment - 1)) != 0 ||
      h.data_offset % h.alignment != 0 || h.data_offset + h.data_bytes != size)
    std::abort();
  std::set<std::string> keys, names;
  for (const sgc::gguf::metadata_entry &e : h.metadata)
    if (e.key.empty() || !keys.insert(e.key).second)
      std::abort();
  for (const sgc::gguf::tensor_info &t : h.tensors) {
    const sgc::gguf::type_traits *traits = sgc::gguf::find_type(t.type);
    if (!traits || t.name.empty() || !names.insert(t.name).second ||
        t.dims.empty() || t.dims.size() > 4 ||
        t.dims[0] % traits->block_elements != 0 ||
        t.elements() / traits->block_elements * traits->block_bytes !=
            t.bytes ||
        t.offset % h.alignment != 0 || t.offset > h.data_bytes ||
        t.bytes > h.data_bytes - t.offset)
      std::abort();
    for (const sgc::gguf::tensor_info &u : h.tensors)
      if (&u != &t && u.offset < t.offset + t.bytes &&
          t.offset < u.offset + u.bytes)
        std::abort(); // overlapping data
  }
  std::string kind;
  if (sgc::status ks = sgc::runtime::read_gguf_vocabulary_model(h, "fuzz", &kind);
      !ks.ok()) {
    if (ks.code() != sgc::status_code::bad_input || ks.message().empty())
      std::abort();
    return 0;
  }
  if (kind == "gemma4")
    return check_bpe(h);
  sgc::sentencepiece_vocabulary v;
  sgc::runtime::tokenizer_config config;
  const sgc::status vs = sgc::runtime::read_gguf_vocabulary(h, "fuzz", &v, &config);
  if (!vs.ok()) {
    if (vs.code() != sgc::status_code::bad_input || vs.message().empty())
      std::abort();
    return 0;
  }
  std::set<std::string> pieces;
  size_t unknown = 0;
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    if (v.pieces[i].empty() || !pieces.insert(v.pieces[i]).second)
      std::abort();
    unknown += v.types[i] == sgc::kPieceUnknown;
  }
  if (v.pieces.empty() || v.scores.size() != v.pieces.size() ||
      v.types.size() != v.pieces.size() || unknown != 1)
    std::abort();
  sgc::sentencepiece_facts facts;
  if (!sgc::read_sentencepiece_facts(
          sgc::write_sentencepiece_model(v), &facts) ||
      facts.piece_types != v.types || facts.add_dummy_prefix)
    std::abort();
  return 0;
}
