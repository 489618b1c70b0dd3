/*
 * sentencepiece_proto.cc - see sentencepiece_proto.h. A minimal protobuf
 * reader (varints, and skipping every wire type but groups) and writer
 * (varints, floats, length-delimited fields).
 */
#include "lib/tokenizer/sentencepiece_proto.h"

#include <cstring>

namespace sgc {

namespace {

struct reader {
  std::string_view data;
  size_t pos = 0;

  bool done() const { return pos >= data.size(); }
  bool varint(uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= data.size())
        return false;
      const auto b = static_cast<unsigned char>(data[pos++]);
      *v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80))
        return true;
    }
    return false;
  }
  /// Reads one field's key and, for length-delimited fields, its bytes;
  /// |*value| receives a varint's value or a fixed32's bits; fixed64s are
  /// skipped.
  bool field(uint32_t *number, int *wire, std::string_view *bytes,
             uint64_t *value) {
    uint64_t key = 0;
    if (!varint(&key))
      return false;
    *number = static_cast<uint32_t>(key >> 3);
    *wire = static_cast<int>(key & 7);
    switch (*wire) {
    case 0:
      return varint(value);
    case 1:
      pos += 8;
      return pos <= data.size();
    case 2: {
      uint64_t len = 0;
      if (!varint(&len) || len > data.size() - pos)
        return false;
      *bytes = data.substr(pos, len);
      pos += len;
      return true;
    }
    case 5: // fixed32: its bits in |*value|
      if (data.size() - pos < 4)
        return false;
      *value = 0;
      for (int i = 0; i < 4; ++i)
        *value |= uint64_t{static_cast<unsigned char>(data[pos + i])} << (8 * i);
      pos += 4;
      return true;
    default:
      return false;
    }
  }
};

struct writer {
  std::string out;

  void varint(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  void key(uint32_t number, int wire) { varint(uint64_t{number} << 3 | wire); }
  void integer(uint32_t number, uint64_t v) {
    key(number, 0);
    varint(v);
  }
  void fixed_float(uint32_t number, float f) {
    key(number, 5);
    uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<char>(bits >> (8 * i)));
  }
  void bytes(uint32_t number, std::string_view b) {
    key(number, 2);
    varint(b.size());
    out.append(b);
  }
};

// Field numbers of sentencepiece_model.proto.
enum : uint32_t {
  kModelPieces = 1,
  kModelTrainerSpec = 2,
  kModelNormalizerSpec = 3,
  kPiecePiece = 1,
  kPieceScore = 2,
  kPieceType = 3,
  kTrainerModelType = 3,
  kTrainerVocabSize = 4,
  kTrainerByteFallback = 35,
  kTrainerBosPiece = 46,
  kTrainerEosPiece = 47,
  kTrainerPadPiece = 48,
  kNormalizerName = 1,
  kNormalizerAddDummyPrefix = 3,
  kNormalizerRemoveExtraWhitespaces = 4,
  kNormalizerEscapeWhitespaces = 5,
};
constexpr uint64_t kModelTypeBpe = 2;

float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace

std::string write_sentencepiece_model(const sentencepiece_vocabulary &v) {
  writer model;
  bool bytes = false;
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    writer piece;
    piece.bytes(kPiecePiece, v.pieces[i]);
    piece.fixed_float(kPieceScore, v.scores[i]);
    piece.integer(kPieceType, static_cast<uint64_t>(v.types[i]));
    model.bytes(kModelPieces, piece.out);
    bytes = bytes || v.types[i] == kPieceByte;
  }
  writer trainer;
  trainer.integer(kTrainerModelType, kModelTypeBpe);
  trainer.integer(kTrainerVocabSize, v.pieces.size());
  trainer.integer(kTrainerByteFallback, bytes ? 1 : 0);
  // The defaults ("<s>", "</s>", "<pad>") would find other pieces.
  trainer.bytes(kTrainerBosPiece, v.bos_piece);
  trainer.bytes(kTrainerEosPiece, v.eos_piece);
  trainer.bytes(kTrainerPadPiece, v.pad_piece);
  model.bytes(kModelTrainerSpec, trainer.out);
  writer normalizer;
  normalizer.bytes(kNormalizerName, "identity");
  normalizer.integer(kNormalizerAddDummyPrefix, 0);
  normalizer.integer(kNormalizerRemoveExtraWhitespaces, 0);
  normalizer.integer(kNormalizerEscapeWhitespaces, 1);
  model.bytes(kModelNormalizerSpec, normalizer.out);
  return model.out;
}

namespace {
/// Calls |visit(number, wire, bytes, value)| for each field of the message
/// |data| (reader::field's arguments); false when it is malformed or
/// |visit| returns false.
template <typename Visit> bool each_field(std::string_view data, Visit visit) {
  reader r{data};
  while (!r.done()) {
    uint32_t number = 0;
    int wire = 0;
    std::string_view bytes;
    uint64_t value = 0;
    if (!r.field(&number, &wire, &bytes, &value) ||
        !visit(number, wire, bytes, value))
      return false;
  }
  return true;
}
} // namespace

bool read_sentencepiece_facts(std::string_view bytes, sentencepiece_facts *out) {
  *out = sentencepiece_facts();
  return each_field(bytes, [&](uint32_t number, int wire, std::string_view sub,
                               uint64_t) {
    if (wire != 2 || (number != kModelPieces && number != kModelNormalizerSpec))
      return true;
    int type = kPieceNormal; // unless stated
    bool ok = each_field(sub, [&](uint32_t n, int w, std::string_view, uint64_t v) {
      if (number == kModelPieces && n == kPieceType && w == 0)
        type = static_cast<int>(v);
      if (number == kModelNormalizerSpec && n == kNormalizerAddDummyPrefix && w == 0)
        out->add_dummy_prefix = v != 0;
      return true;
    });
    if (number == kModelPieces)
      out->piece_types.push_back(type);
    return ok;
  });
}

bool read_sentencepiece_model(std::string_view bytes,
                              sentencepiece_vocabulary *out) {
  *out = sentencepiece_vocabulary();
  bool ok = each_field(bytes, [&](uint32_t number, int wire,
                                  std::string_view sub, uint64_t) {
    if (number != kModelPieces || wire != 2)
      return true;
    std::string piece;
    float score = 0;
    int type = kPieceNormal;
    bool fields = each_field(sub, [&](uint32_t n, int w, std::string_view b,
                                      uint64_t v) {
      if (n == kPiecePiece && w == 2)
        piece = std::string(b);
      else if (n == kPieceScore && w == 5)
        score = bits_to_float(static_cast<uint32_t>(v));
      else if (n == kPieceType && w == 0)
        type = static_cast<int>(v);
      return true;
    });
    out->pieces.push_back(std::move(piece));
    out->scores.push_back(score);
    out->types.push_back(type);
    return fields;
  });
  return ok && !out->pieces.empty();
}

} // namespace sgc
