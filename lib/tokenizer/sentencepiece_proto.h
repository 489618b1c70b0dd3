/*
 * sentencepiece_proto.h - the protobuf wire format of a tokenizer.model
 * (ModelProto), both ways. Read whole: the vocabulary sgc quantize writes
 * into a GGUF. Read: the two facts libsentencepiece 0.1.97's
 * API does not tell, each piece's type (it has no IsUserDefined) and
 * normalizer_spec.add_dummy_prefix. Written: a model from a vocabulary
 * that arrives without its proto (a GGUF's tokenizer.ggml.*), for
 * libsentencepiece to load.
 */
#ifndef SGC_LIB_TOKENIZER_SENTENCEPIECE_PROTO_H
#define SGC_LIB_TOKENIZER_SENTENCEPIECE_PROTO_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sgc {

struct sentencepiece_facts {
  /// SentencePiece.Type per piece: 1 normal, 2 unknown, 3 control,
  /// 4 user-defined, 5 unused, 6 byte.
  std::vector<int> piece_types;
  bool add_dummy_prefix = true; ///< the proto's default
};

enum : int {
  kPieceNormal = 1,
  kPieceUnknown = 2,
  kPieceControl = 3,
  kPieceUserDefined = 4,
  kPieceUnused = 5,
  kPieceByte = 6
};

/// False when |bytes| is not a well-formed ModelProto (as far as read).
bool read_sentencepiece_facts(std::string_view bytes, sentencepiece_facts *out);

/// A SentencePiece BPE vocabulary without its proto.
struct sentencepiece_vocabulary {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<int> types; ///< SentencePiece.Type, as piece_types above
  /// The pieces SentencePiece finds bos/eos/pad by ("" when none).
  std::string bos_piece, eos_piece, pad_piece;
};

/// The pieces, scores and types of a serialized ModelProto (the other
/// fields are skipped). False when it is not well formed as far as read,
/// or holds no piece.
bool read_sentencepiece_model(std::string_view bytes,
                              sentencepiece_vocabulary *out);

/// A serialized ModelProto of |v|: the pieces (ModelProto.pieces = 1:
/// piece = 1, score = 2, type = 3), a BPE trainer spec (= 2) with byte
/// fallback when there are byte pieces, and Gemma's normalizer (= 3):
/// identity, no dummy prefix, whitespace kept and escaped as U+2581.
std::string write_sentencepiece_model(const sentencepiece_vocabulary &v);

} // namespace sgc

#endif // SGC_LIB_TOKENIZER_SENTENCEPIECE_PROTO_H
