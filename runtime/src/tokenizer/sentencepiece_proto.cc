/*
 * sentencepiece_proto.cc - see sentencepiece_proto.h. A minimal protobuf
 * reader: varints, and skipping every wire type but groups.
 */
#include "runtime/src/tokenizer/sentencepiece_proto.h"

namespace sgc::runtime {

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
  /// other values are skipped (|*value| receives a varint's value).
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
    case 5:
      pos += 4;
      return pos <= data.size();
    default:
      return false;
    }
  }
};

} // namespace

bool read_sentencepiece_facts(std::string_view bytes, sentencepiece_facts *out) {
  *out = sentencepiece_facts();
  reader r{bytes};
  while (!r.done()) {
    uint32_t number = 0;
    int wire = 0;
    std::string_view sub;
    uint64_t value = 0;
    if (!r.field(&number, &wire, &sub, &value))
      return false;
    if (wire != 2 || (number != 1 && number != 3))
      continue;
    reader inner{sub};
    int type = 1; // NORMAL unless stated
    while (!inner.done()) {
      uint32_t n = 0;
      int w = 0;
      std::string_view b;
      uint64_t v = 0;
      if (!inner.field(&n, &w, &b, &v))
        return false;
      if (number == 1 && n == 3 && w == 0)
        type = static_cast<int>(v);
      if (number == 3 && n == 3 && w == 0)
        out->add_dummy_prefix = v != 0;
    }
    if (number == 1)
      out->piece_types.push_back(type);
  }
  return true;
}

} // namespace sgc::runtime
