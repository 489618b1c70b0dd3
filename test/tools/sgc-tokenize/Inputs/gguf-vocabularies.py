"""Writes small GGUF files holding only a vocabulary (tokenizer.ggml.*) into
argv[1] for gguf.test: ok.gguf, a SentencePiece-style ("llama") vocabulary
laid out as llama.cpp's converter writes Gemma 3's, and one file per
defect, each differing from ok.gguf in that one place.

ok.gguf: ids 0-3 <pad> <eos> <bos> <unk> (control; the unknown by its id
key), 4-259 the byte pieces, 260 "<start_of_turn>" (control), 261 "new york" (user-defined:
the converter writes U+2581 as a space), then "\u2581", "a", "b", "ab",
"\u2581a", "\u2581ab" at 262-267, scored so that "ab" merges before
"\u2581a" and "\u2581ab" last."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "backend-ops"))
from blocks import Array, write_gguf  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6
# <unk> typed control, as the converter types every special added token;
# tokenizer.ggml.unknown_token_id names it.
VOCAB = [("<pad>", 0.0, CONTROL), ("<eos>", 0.0, CONTROL), ("<bos>", 0.0, CONTROL),
         ("<unk>", 0.0, CONTROL)]
VOCAB += [("<0x%02X>" % b, 0.0, BYTE) for b in range(256)]
VOCAB += [("<start_of_turn>", -1000.0, CONTROL), ("new york", -1000.0, USER_DEFINED)]
VOCAB += [("\u2581", -1.0, NORMAL), ("a", -2.0, NORMAL), ("b", -3.0, NORMAL),
          ("ab", -4.0, NORMAL), ("\u2581a", -5.0, NORMAL), ("\u2581ab", -6.0, NORMAL)]


def meta(vocab=VOCAB, **changes):
    m = {
        "general.architecture": "gemma3",
        "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.pre": "default",
        "tokenizer.ggml.tokens": Array("str", [p for p, _, _ in vocab]),
        "tokenizer.ggml.scores": Array("f32", [s for _, s, _ in vocab]),
        "tokenizer.ggml.token_type": Array("i32", [t for _, _, t in vocab]),
        "tokenizer.ggml.bos_token_id": 2,
        "tokenizer.ggml.eos_token_id": 1,
        "tokenizer.ggml.unknown_token_id": 3,
        "tokenizer.ggml.padding_token_id": 0,
        "tokenizer.ggml.add_bos_token": True,
        "tokenizer.ggml.add_eos_token": False,
        "tokenizer.ggml.add_space_prefix": False,
        "tokenizer.chat_template": "{{ bos_token }}<start_of_turn>user\n",
    }
    for k, v in changes.items():
        key = "tokenizer.ggml." + k
        if v is None:
            m.pop(key, None)
        else:
            m[key] = v
    return m


def write(name, metadata):
    write_gguf(os.path.join(out, name), {}, metadata=metadata)


def replaced(i, entry):
    v = list(VOCAB)
    v[i] = entry
    return v


write("ok.gguf", meta())
write("no-vocabulary.gguf", {"general.architecture": "gemma3"})
write("gpt2.gguf", meta(model="gpt2"))
write("short-scores.gguf", meta(scores=Array("f32", [0.0] * (len(VOCAB) - 1))))
write("float-types.gguf", meta(token_type=Array("f32", [1.0] * len(VOCAB))))
write("type-7.gguf", meta(vocab=replaced(263, ("a", -2.0, 7))))
write("duplicate.gguf", meta(vocab=replaced(264, ("a", -3.0, NORMAL))))
write("empty-piece.gguf", meta(vocab=replaced(264, ("", -3.0, NORMAL))))
write("two-unknown.gguf", meta(vocab=replaced(264, ("b", -3.0, UNKNOWN))))
write("no-unknown.gguf", meta(vocab=replaced(3, ("[UNK]", 0.0, CONTROL)), unknown_token_id=None))
write("space-prefix.gguf", meta(add_space_prefix=None))
write("bos-past-end.gguf", meta(bos_token_id=len(VOCAB)))

# ok4.gguf: a "gemma4" (BPE) vocabulary as the converter writes Gemma 4's:
# ids 0-3 control, 4-259 bytes, 260 "<|turn>" (control), then "\u2581", "a",
# "b", "ab", "\u2581a", "\u2581ab" at 261-266, merged "a b", "\u2581 a",
# "\u2581 ab" in that order.
VOCAB4 = VOCAB[:260] + [("<|turn>", 0.0, CONTROL)]
VOCAB4 += [(p, 0.0, NORMAL) for p in ("\u2581", "a", "b", "ab", "\u2581a", "\u2581ab")]
MERGES4 = ["a b", "\u2581 a", "\u2581 ab"]


def meta4(**changes):
    base = dict(model="gemma4", pre="gemma4", merges=Array("str", MERGES4),
                unknown_token_id=None, add_space_prefix=False)
    m = meta(vocab=VOCAB4, **dict(base, **changes))
    m["general.architecture"] = "gemma4"
    return m


write("ok4.gguf", meta4())
write("g4-no-merges.gguf", meta4(merges=None))
write("g4-merge-one-piece.gguf", meta4(merges=Array("str", ["a b", "ab"])))
write("g4-merges-int.gguf", meta4(merges=Array("i32", [1, 2])))
write("g4-no-bos.gguf", meta4(bos_token_id=None))
write("g4-merge-unknown.gguf", meta4(merges=Array("str", MERGES4 + ["b zz"])))
