"""Writes a placeholder SentencePiece tokenizer.model for a random model.

usage: python placeholder_tokenizer.py VOCAB_SIZE OUT.model

llama.cpp's converter takes a Gemma vocabulary from tokenizer.model; the B1
model (random weights) has none. The ids follow Gemma's layout where the
runtime cares (PERFORMANCE.md, "Peers"): pad 0, eos 1, bos 2 (control),
unk 3, ids 4-259 the 256 byte-fallback pieces <0x00>..<0xFF> (llama.cpp's
tokenizer needs them to encode arbitrary text), then normal pieces with
score 0 up to VOCAB_SIZE. Their text is "p<id>", so plain letters never
merge: a prompt of N letters "a" is N byte tokens (bench/b4 relies on it).
"""

import sys

from sentencepiece import SentencePieceProcessor
from sentencepiece import sentencepiece_model_pb2 as pb

if len(sys.argv) != 3:
    sys.exit(__doc__)
vocab, out = int(sys.argv[1]), sys.argv[2]
if vocab < 260:
    sys.exit(f"placeholder_tokenizer: vocab {vocab} < 260 (4 specials + 256 bytes)")

P = pb.ModelProto.SentencePiece
m = pb.ModelProto()
for text, kind in (("<pad>", P.CONTROL), ("<eos>", P.CONTROL), ("<bos>", P.CONTROL),
                   ("<unk>", P.UNKNOWN)):
    m.pieces.add(piece=text, score=0.0, type=kind)
for b in range(256):
    m.pieces.add(piece=f"<0x{b:02X}>", score=0.0, type=P.BYTE)
for i in range(260, vocab):
    m.pieces.add(piece=f"p{i}", score=0.0, type=P.NORMAL)

t = m.trainer_spec
t.model_type = pb.TrainerSpec.BPE  # as Gemma's own tokenizer.model
t.vocab_size = vocab
t.byte_fallback = True
t.pad_id, t.eos_id, t.bos_id, t.unk_id = 0, 1, 2, 3
# SentencePiece finds the specials by these names, not by the ids above.
t.pad_piece, t.eos_piece, t.bos_piece, t.unk_piece = "<pad>", "<eos>", "<bos>", "<unk>"
n = m.normalizer_spec
n.name = "identity"
n.add_dummy_prefix = False
n.remove_extra_whitespaces = False

with open(out, "wb") as f:
    f.write(m.SerializeToString())

# Read it back the way the converter will, and check the layout.
sp = SentencePieceProcessor()
sp.LoadFromFile(out)
ok = (sp.vocab_size() == vocab and sp.pad_id() == 0 and sp.eos_id() == 1 and
      sp.bos_id() == 2 and sp.unk_id() == 3 and sp.IsByte(4) and sp.IsByte(259) and
      sp.IdToPiece(4 + 0x61) == "<0x61>" and sp.EncodeAsIds("aaa") == [4 + 0x61] * 3)
if not ok:
    sys.exit(f"placeholder_tokenizer: {out} does not read back as written")
print(f"wrote {out}: {vocab} pieces")
