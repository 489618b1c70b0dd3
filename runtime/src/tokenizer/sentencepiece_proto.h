/*
 * sentencepiece_proto.h - the two facts about a tokenizer.model that
 * libsentencepiece 0.1.97's API does not tell: each piece's type (it has no
 * IsUserDefined) and normalizer_spec.add_dummy_prefix. Read straight from
 * the protobuf wire format (ModelProto.pieces = 1, with SentencePiece.type
 * = 3; ModelProto.normalizer_spec = 3, with add_dummy_prefix = 3).
 */
#ifndef SGC_RUNTIME_TOKENIZER_SENTENCEPIECE_PROTO_H
#define SGC_RUNTIME_TOKENIZER_SENTENCEPIECE_PROTO_H

#include <cstdint>
#include <string_view>
#include <vector>

namespace sgc::runtime {

struct sentencepiece_facts {
  /// SentencePiece.Type per piece: 1 normal, 2 unknown, 3 control,
  /// 4 user-defined, 5 unused, 6 byte.
  std::vector<int> piece_types;
  bool add_dummy_prefix = true; ///< the proto's default
};

enum : int { kPieceUserDefined = 4 };

/// False when |bytes| is not a well-formed ModelProto (as far as read).
bool read_sentencepiece_facts(std::string_view bytes, sentencepiece_facts *out);

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_SENTENCEPIECE_PROTO_H
