#!/usr/bin/env python3
"""A chat with an image on the tiny vision models (issue 12: "a chat turn with an image"), from
Hugging Face transformers 5.24: the tokenizer each model lacked, and the greedy answers of short
conversations, for sgc-run --chat to equal (test/e2e/chat-image.test).

For examples/tiny-gemma3-vision and examples/tiny-gemma4-vision this writes, next to the files
gen_vision.py made (which it reads and leaves as they are; `gen-golden --vision --check` proves
them byte-identical):

  tokenizer.json, tokenizer_config.json   a tiny BPE tokenizer in Gemma's layout
      (gen_tokenizers.build_tokenizer_json): ids 0..4 <pad> <eos> <bos> <unk> <mask>, the family's
      turn markers, 256 byte pieces, learned pieces, and the image tokens at the ids the models use
      (gen_vision.IMAGE_IDS: BOI 500, EOI 501, image 502; Gemma 4 also video 503, audio 504,
      BOA 505, EOA 506), named as the released checkpoints name them; tokenizer_config.json's
      extra_special_tokens give the processors their boi/eoi/image tokens.
  chat_template.jinja   the text tiny model's (examples/tiny-gemma{3,4}/chat_template.jinja, the
      published template) as is
  chat.golden.json      the conversations below: per turn the text the processor tokenized, the
      ids of the rows that turn prefills (the last answer's last token first, as a cached
      continuation feeds it), the position they start at, the greedy answer ids, top-2 margins
      over the row range

How the reference is made: the family's processor (Gemma3Processor / Gemma4Processor, built from
the tokenizer above, the chat template and gen_vision.processor's image processor) renders the
first user turn with apply_chat_template (an image content item, then the text) and expands the
image. A later turn is the text the template renders after the model's answer (the conversation
rendered with a mark for the answer; the end-of-turn marker dropped when the answer ended with
it), expanded and tokenized by the processor (with its image for a turn with one); its rows are
the answer's last token (not yet run) and that text, at the position after the conversation so
far, which is kept as the model saw it (its generation prompt, its answers as generated). For
each turn the model (the committed model.safetensors, HF config gen_vision.hf_config, float32,
eager attention) runs the whole conversation so far in one forward, with all its images and
token types, then decodes greedily with that KV cache, one token a step, up to N tokens or the
first stop token (<eos>, the end-of-turn marker); for a turn with an image, again with that
image's pixels all 0 (gray), which must give another answer. HF's own cached continuation (the new rows
after the cache of the turns before) must give the same logits, within 1e-5 of the row range,
for a turn without an image; for a turn whose image comes after cached positions transformers
5.24 builds a causal mask without the image block (recorded as hf_cached_continuation_vs_whole),
so the whole forward, whose mask is gemma-vision.md G.9's, is the reference.

  gen-golden --vision-chat            write them (or .venv/bin/python gen_vision_chat.py)
  gen-golden --vision-chat --check    regenerate into a temp dir, compare byte for byte
"""

import gen_golden as G  # first: fixes the numeric environment before torch is imported

import argparse  # noqa: E402
import filecmp  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoTokenizer, Gemma3Processor, Gemma4Processor  # noqa: E402
from transformers.models.gemma4.feature_extraction_gemma4 import Gemma4AudioFeatureExtractor  # noqa: E402
from transformers.models.gemma4.video_processing_gemma4 import Gemma4VideoProcessor  # noqa: E402

import gen_tokenizers as T  # noqa: E402
import gen_vision as V  # noqa: E402

N = 6  # greedy tokens per answer
FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "chat.golden.json")

# The image tokens as the released tokenizers name them, at the tiny models' ids.
TOKENS = {
    "gemma3": {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
               "image_token": "<image_soft_token>"},
    "gemma4": {"boi_token": "<|image>", "eoi_token": "<image|>", "image_token": "<|image|>",
               "video_token": "<|video|>", "audio_token": "<|audio|>", "boa_token": "<|audio>",
               "eoa_token": "<audio|>"},
}
IDS = {"boi_token": V.IMAGE_IDS["boi"], "eoi_token": V.IMAGE_IDS["eoi"],
       "image_token": V.IMAGE_IDS["image"], "video_token": V.G4_OTHER_IDS["video"],
       "audio_token": V.G4_OTHER_IDS["audio"], "boa_token": V.G4_OTHER_IDS["boa"],
       "eoa_token": V.G4_OTHER_IDS["eoa"]}
END_OF_TURN = {"gemma3": "<end_of_turn>", "gemma4": "<turn|>"}
# The text tiny models' markers, less Gemma 4's media tokens (they sit at the fixed ids here).
MARKERS = {"gemma3": T.GEMMA3_MARKERS,
           "gemma4": [m for m in T.GEMMA4_MARKERS if m not in TOKENS["gemma4"].values()]}
TOKENIZER_SEED = {"gemma3": 15, "gemma4": 16}

# Per family (name, turns): a turn is (user text, images in front of it). The texts were picked
# (a few tried) so that every answer to a turn with an image changes when the image is gray:
# these random models mostly repeat one token, and Gemma 3's 4 soft tokens rarely move it.
CONVERSATIONS = {
    "gemma3": [("image first", [("What is in the picture?", 1), ("And the colours?", 0)]),
               ("image later", [("Hi", 0), ("Describe it.", 1)])],
    "gemma4": [("image first", [("What is this?", 1), ("And the colours?", 0)]),
               ("image later", [("Hello", 0), ("What is this?", 1)])],
}
# Every greedy step's top-2 margin over the row range must exceed this many times the f32
# tolerance (1e-4 of the row range): greedy equality is then a fair test.
MARGIN_FACTOR = 10
ANSWER_MARK = "\x01sgc-answer\x01"


def vocab_target():
    return 512


def build_tokenizer(name, outdir):
    """tokenizer.json with 512 ids: the learned pieces fill every id the fixed tokens leave."""
    fam = name
    fixed = {IDS[k]: v for k, v in TOKENS[fam].items()}
    want = vocab_target() - len(T.GEMMA_SPECIALS) - len(MARKERS[fam]) - len(T.BYTES) - len(fixed)
    path = os.path.join(outdir, "tokenizer.json")
    extra = {"extra_special_tokens": dict(TOKENS[fam])}
    # The trainer's pieces include the byte characters the byte pieces already hold: try sizes
    # until the unique learned pieces are exactly what is left.
    for learned in range(want, want + 64):
        pieces, _ = T.train_bpe_vocab(TOKENIZER_SEED[fam], learned)
        have = len(set(pieces) - set(T.GEMMA_SPECIALS + MARKERS[fam] + T.BYTES))
        if have == want:
            break
    else:
        raise AssertionError(f"{name}: no BPE size gives {want} learned pieces")
    T.build_tokenizer_json(path, TOKENIZER_SEED[fam], learned, MARKERS[fam], False, "gemma",
                           fixed=fixed, config_extra=extra)
    with open(path, encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    assert sorted(vocab.values()) == list(range(vocab_target())), f"{name}: ids not 0..511"
    for k, v in TOKENS[fam].items():
        assert vocab[v] == IDS[k], (k, v)
    return learned


def make_processor(spec, outdir, template):
    tok = AutoTokenizer.from_pretrained(outdir)
    ip = V.processor(spec)
    if spec["text"]["family"] == "gemma3":
        proc = Gemma3Processor(image_processor=ip, tokenizer=tok, chat_template=template,
                               image_seq_length=spec["tower"]["soft_tokens"])
    else:
        # Audio and video are not used; the processor wants their parts all the same.
        proc = Gemma4Processor(feature_extractor=Gemma4AudioFeatureExtractor(), image_processor=ip,
                               tokenizer=tok, video_processor=Gemma4VideoProcessor(),
                               chat_template=template,
                               image_seq_length=spec["tower"]["max_soft_tokens"])
    for k, v in TOKENS[spec["text"]["family"]].items():
        assert tok.convert_tokens_to_ids(v) == IDS[k], (k, v)
    return tok, proc


def user_message(text, images, image_path):
    return {"role": "user",
            "content": [{"type": "image", "path": image_path}] * images + [{"type": "text", "text": text}]}


def render(proc, messages):
    return proc.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


def process(proc, text, image_path, images):
    """The processor on a turn's text: ids, and the image tensors when it has images."""
    kw = dict(text=[text], return_tensors="pt", add_special_tokens=False)
    if images:
        kw["images"] = [[transformers.image_utils.load_image(image_path)] * images]
    return proc(**kw)


def model_kwargs(fam, batch, ids):
    """What the model gets with |ids|: the image tensors of |batch| and the rows' token types."""
    x = torch.tensor([ids], dtype=torch.long)
    kw = dict(input_ids=x)
    types = (x == V.IMAGE_IDS["image"]).long()
    kw["token_type_ids" if fam == "gemma3" else "mm_token_type_ids"] = types
    if batch is not None and "pixel_values" in batch:
        kw["pixel_values"] = batch["pixel_values"]
        if fam == "gemma4":
            kw["image_position_ids"] = batch["image_position_ids"]
    return kw


def whole_kwargs(fam, ids, pixel_values, position_ids):
    """The whole conversation so far with all its images and token types."""
    x = torch.tensor([ids], dtype=torch.long)
    kw = dict(input_ids=x, attention_mask=torch.ones_like(x))
    kw["token_type_ids" if fam == "gemma3" else "mm_token_type_ids"] = (x == V.IMAGE_IDS["image"]).long()
    if pixel_values:
        kw["pixel_values"] = torch.cat(pixel_values)
        if fam == "gemma4":
            kw["image_position_ids"] = torch.cat(position_ids)
    return kw


@torch.no_grad()
def answer(model, kw, start, stops):
    """One forward of |kw| (the whole conversation), then greedy decode with its KV cache: up to
    N tokens, stopping after a stop token; the last token is not fed (a continuation feeds it).
    Returns the ids, their top-2 margins over the row range, the logits of rows start.. and the
    cache."""
    total = kw["input_ids"].shape[1]
    out = model(**kw, use_cache=True)
    prefill = out.logits[0, start:].float().clone()
    cache, row = out.cache, prefill[-1]
    ids, margins = [], []
    for step in range(N):
        tok = G.greedy(row)
        top = torch.topk(row, 2).values
        margins.append(float((top[0] - top[1]) / (row.max() - row.min())))
        ids.append(tok)
        if tok in stops or step + 1 == N:
            break
        total += 1
        o = model(input_ids=torch.tensor([[tok]], dtype=torch.long),
                  attention_mask=torch.ones(1, total, dtype=torch.long), cache=cache, use_cache=True)
        cache, row = o.cache, o.logits[0, -1].float().clone()
    return ids, margins, prefill, cache


@torch.no_grad()
def continuation(model, fam, batch, rows, cache, total):
    """The rows after |cache| as a cached continuation (HF's cache of the turns before)."""
    kw = model_kwargs(fam, batch, rows)
    return model(**kw, attention_mask=torch.ones(1, total, dtype=torch.long), cache=cache,
                 use_cache=True).logits[0].float()


def soft_tokens(ids):
    """The lengths of the runs of image tokens in |ids|: each image's soft tokens."""
    runs, prev = [], False
    for t in ids:
        img = t == V.IMAGE_IDS["image"]
        if img and not prev:
            runs.append(0)
        if img:
            runs[-1] += 1
        prev = img
    return runs


def conversation(name, turns, spec, tok, proc, model, image_path, image_rel):
    fam = spec["text"]["family"]
    eot = tok.convert_tokens_to_ids(END_OF_TURN[fam])
    stops = {tok.eos_token_id, eot}
    messages, seq, cache = [], [], None
    pix, pos = [], []
    answers, out_turns = [], []
    for k, (text, images) in enumerate(turns):
        if k == 0:
            messages = [user_message(text, images, image_path)]
            turn_text = render(proc, messages)
            tail = []
        else:
            # What the template renders after the answer: the conversation with a mark for it.
            marked = messages + [{"role": "assistant", "content": [{"type": "text", "text": ANSWER_MARK}]},
                                 user_message(text, images, image_path)]
            full = render(proc, marked)
            before, _, turn_text = full.rpartition(ANSWER_MARK)
            # The turns so far as the template renders them before an answer: a prefix of what
            # the model saw (Gemma 4's generation prompt adds an empty thinking channel).
            assert prev_rendered.startswith(before), f"{name}: the template renders the earlier turns differently"
            closed = answers[-1][-1] == eot
            if closed and turn_text.startswith(END_OF_TURN[fam]):
                turn_text = turn_text[len(END_OF_TURN[fam]):]
            messages = marked
            tail = [answers[-1][-1]]
        prev_rendered = turn_text if k == 0 else prev_rendered + ANSWER_MARK + turn_text
        batch = process(proc, turn_text, image_path, images)
        own = batch["input_ids"][0].tolist()
        expanded = tok.decode(own, skip_special_tokens=False)
        rows = tail + own
        start = len(seq)
        if images:
            pix.append(batch["pixel_values"])
            if fam == "gemma4":
                pos.append(batch["image_position_ids"])
        ids, margins, prefill, new_cache = answer(model, whole_kwargs(fam, seq + rows, pix, pos),
                                                  start, stops)
        # HF's own cached continuation of the turns before: the same rows for a text turn; for
        # a turn whose image comes after cached positions transformers 5.24 drops the image
        # block's bidirectional mask (causal only), so there the whole forward is the reference.
        rel = None
        if cache is not None:
            cont = continuation(model, fam, batch if images else None, rows, cache, len(seq + rows))
            rel = ((cont - prefill).abs().amax(-1) / (prefill.amax(-1) - prefill.amin(-1))).max().item()
            assert images or rel < 1e-5, f"{name} turn {k + 1}: cached continuation vs whole {rel}"
        cache = new_cache
        # The answer depends on the image: with its pixels all 0 (a gray image) it is another.
        gray = None
        if images:
            gray_pix = pix[:-1] + [torch.zeros_like(pix[-1])]
            gray, _, _, _ = answer(model, whole_kwargs(fam, seq + rows, gray_pix, pos), start, stops)
            assert gray != ids, f"{name} turn {k + 1}: the same answer {ids} with a gray image"
        assert not any(i in V.RESERVED - {eot} for i in ids), f"{name} turn {k + 1}: answer {ids}"
        assert min(margins) > MARGIN_FACTOR * 1e-4, f"{name} turn {k + 1}: margins {margins}"
        assert len(soft_tokens(own)) == images, f"{name} turn {k + 1}: {soft_tokens(own)}"
        seq = seq + rows + ids[:-1]
        answers.append(ids)
        out_turns.append({
            "user": text, "images": images, "image": image_rel if images else None,
            "text": expanded, "rendered": turn_text, "prefill_ids": rows, "position": start,
            "image_soft_tokens": soft_tokens(own),
            "answer_ids": ids, "answer_text": tok.decode(ids, skip_special_tokens=False),
            "answer_ids_gray_image": gray, "stopped": ids[-1] in stops, "margins": [round(m, 6) for m in margins],
            "hf_cached_continuation_vs_whole": rel})
    return {"name": name, "turns": out_turns}


def build(name, outroot, quiet=False):
    say = (lambda *a: None) if quiet else print
    spec = V.VISION[name]
    fam = spec["text"]["family"]
    src = os.path.join(G.EXAMPLES, f"tiny-{name}-vision")
    outdir = os.path.join(outroot, f"tiny-{name}-vision")
    os.makedirs(outdir, exist_ok=True)
    learned = build_tokenizer(name, outdir)
    tmpl_src = os.path.join(G.EXAMPLES, f"tiny-{fam}", "chat_template.jinja")
    shutil.copyfile(tmpl_src, os.path.join(outdir, "chat_template.jinja"))
    with open(tmpl_src, encoding="utf-8") as f:
        template = f.read()
    tok, proc = make_processor(spec, outdir, template)
    with tempfile.TemporaryDirectory() as hfdir:
        # The committed checkpoint as transformers loads it: its names are save_pretrained's.
        V.hf_config(spec).save_pretrained(hfdir)
        shutil.copyfile(os.path.join(src, "model.safetensors"), os.path.join(hfdir, "model.safetensors"))
        model = V.load_reference(spec, hfdir, torch.float32)
        image_path = os.path.join(src, "image.png")
        convs = [conversation(c, turns, spec, tok, proc, model, image_path,
                              f"examples/tiny-{name}-vision/image.png")
                 for c, turns in CONVERSATIONS[fam]]
    with open(os.path.join(src, "meta.json"), encoding="utf-8") as f:
        sha = json.load(f)["sha256"]
    doc = {
        "generator": "tools/gen-golden/gen_vision_chat.py",
        "how": __doc__.split("How the reference is made: ")[1].split("\n\n")[0].replace("\n", " "),
        "versions": {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0]},
        "model": f"tiny-{name}-vision", "dtype": "float32", "attention": "eager",
        "processor": type(proc).__name__, "image_processor": type(proc.image_processor).__name__,
        "max_new_tokens": N, "stop_ids": sorted({tok.eos_token_id, tok.convert_tokens_to_ids(END_OF_TURN[fam])}),
        "tokenizer": {"seed": TOKENIZER_SEED[fam], "learned_pieces_trained": learned,
                      "special_tokens": {v: IDS[k] for k, v in TOKENS[fam].items()}},
        "checkpoint_sha256": {"model.safetensors": sha["model.safetensors"], "image.png": sha["image.png"]},
        "conversations": convs,
    }
    G.write_json(os.path.join(outdir, "chat.golden.json"), doc)
    say(f"== tiny-{name}-vision: {outdir}")
    for c in convs:
        for k, t in enumerate(c["turns"]):
            say(f"  {c['name']}, turn {k + 1}: {len(t['prefill_ids'])} rows at {t['position']}, "
                f"answer {t['answer_ids']} (min margin {min(t['margins']):.4f}, "
                f"HF cached continuation vs whole {t['hf_cached_continuation_vs_whole']})")
    return outdir


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="regenerate into a temp dir and compare bytes")
    args = ap.parse_args()
    names = sorted(V.VISION)
    if not args.check:
        for name in names:
            build(name, G.EXAMPLES)
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            build(name, tmp, quiet=True)
            for f in FILES:
                rel = os.path.join(f"tiny-{name}-vision", f)
                old, new = os.path.join(G.EXAMPLES, rel), os.path.join(tmp, rel)
                ok = os.path.exists(old) and filecmp.cmp(old, new, shallow=False)
                bad += not ok
                print(f"{'OK  ' if ok else 'DIFF'} examples/{rel}")
    print("check passed" if not bad else f"check FAILED: {bad} file(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
