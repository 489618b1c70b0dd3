#!/usr/bin/env python3
"""Chat-format fixtures: what Hugging Face transformers' apply_chat_template makes of a set of
conversations under each family's real chat template, for sgc-run's renderer to equal.

  .venv/bin/python gen_chat.py            write test/Inputs/chat/chat-templates.json and
                                          test/Inputs/chat/prompt-ids.json
  .venv/bin/python gen_chat.py --check    compare with the committed files (exit 1 on a difference)

prompt-ids.json: the ids Hugging Face's tokenizer of each tiny model (examples/tiny-gemma{3,4},
loaded with AutoTokenizer from the directory, chat template included) gives a few prompts:
apply_chat_template(tokenize=True) for chat turns, tokenizer(text) for raw text. sgc-run --prompt
must send exactly these ids (test/e2e/prompt-text.test). examples/tiny-gemma4/tokenizer_config.json
(bos/eos/pad/unk names, as every Gemma 4 checkpoint ships one) is what makes the template's
bos_token "<bos>" there.

The templates are the tiny models' chat_template.jinja (examples/tiny-gemma{3,4}/), copies of
the published ones (see SOURCES below). Each is set as the chat_template of a tokenizer object
and rendered with tokenize=False, as a user of transformers would; a conversation the template
refuses (raise_exception) is recorded with "error" instead of "text". A message's content is a
string or, for the cases with images, a content list of {"type": "image"} items and then one
{"type": "text"} item.
"""

import argparse
import json
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TRANSFORMERS_VERBOSITY"] = "error"

import transformers  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402
from tokenizers.models import WordLevel  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "test", "Inputs", "chat", "chat-templates.json")
OUT_IDS = os.path.join(ROOT, "test", "Inputs", "chat", "prompt-ids.json")

# (name, system prompt or None, user text, raw)
PROMPTS = [
    ("chat turn", None, "Why is the sky blue?", False),
    ("chat turn with a system prompt", "You are terse.", "Hello there", False),
    ("chat turn, unicode and spaces", None, "  Grüße,   世界! 🙂 ", False),
    ("raw text", None, "Why is the sky blue?", True),
    ("raw text with a special-token literal", None, "a <start_of_turn> b", True),
]

# Where each committed template came from.
SOURCES = {
    "gemma3": {
        "template": "examples/tiny-gemma3/chat_template.jinja",
        "source": "the chat_template of google/gemma-3-*-it's tokenizer_config.json (Gemma 3 "
        "instruction-tuned checkpoints on the Hugging Face Hub; the same text in every size)",
    },
    "gemma4": {
        "template": "examples/tiny-gemma4/chat_template.jinja",
        "source": "google/gemma-4-31B-it chat_template.jinja as copied into llama.cpp "
        "(models/templates/google-gemma-4-31B-it.jinja, llama.cpp commit 0c1e5709, vendored "
        "by llama-cpp-python 0.3.36)",
    },
}

S = "system"
U = "user"
A = "assistant"
IMG = {"type": "image"}  # an image content item: the template writes its marker


def txt(text):
    return {"type": "text", "text": text}


# (name, messages, add_generation_prompt)
CASES = [
    ("single turn", [(U, "Why is the sky blue?")], True),
    ("single turn, no generation prompt", [(U, "Hello")], False),
    ("system prompt", [(S, "You are terse."), (U, "Why is the sky blue?")], True),
    ("multi-turn", [(U, "Hi"), (A, "Hello! How can I help?"), (U, "Tell me a joke.")], True),
    ("multi-turn with a system prompt",
     [(S, "Answer in French."), (U, "Hi"), (A, "Bonjour !"), (U, "Count to 3."),
      (A, "Un, deux, trois."), (U, "Thanks")], True),
    ("conversation ending with the model", [(U, "Hi"), (A, "Hello.")], False),
    ("whitespace is trimmed", [(U, "  \n\tpadded question \n "), (A, "\n answer  \n"),
                               (U, "next\n")], True),
    ("unicode whitespace is trimmed", [(U, "\u3000\u00a0wide\u2003\u2029"), (A, "\u0085ok\u000b")],
     True),
    ("system prompt kept as given", [(S, "  Be brief.\n"), (U, " q ")], True),
    ("unicode", [(U, "Grüße, 世界! 🙂"), (A, "¡Hola! 😀"), (U, "日本語で")], True),
    ("special-token literals in content",
     [(U, "what does <end_of_turn> or <turn|> mean?"), (A, "<start_of_turn> is a marker")], True),
    ("empty content", [(U, ""), (A, ""), (U, "x")], True),
    ("newlines inside content", [(U, "line 1\nline 2\n\nline 4")], True),
    ("only a system prompt", [(S, "Alone.")], True),
    ("thinking channel in an answer",
     [(U, "2+2?"), (A, "<|channel>thought\nadd them<channel|>4"), (U, "and 3+3?")], True),
    ("two user turns in a row", [(U, "one"), (U, "two")], True),
    ("conversation starting with the model", [(A, "I start."), (U, "ok")], True),
    ("two model turns in a row", [(U, "q"), (A, "first"), (A, "second"), (U, "r")], True),
    ("system role later on", [(U, "q"), (S, "late system")], True),
    # Content lists [image..., text], as a user of a vision model writes a turn: sgc-run renders
    # the images as the template's marker (then expanded by the processor's rule).
    ("an image before the text", [(U, [IMG, txt("  What is this? ")])], True),
    ("two images and a system prompt", [(S, "Be brief."), (U, [IMG, IMG, txt("Compare.")])], True),
    ("an image in a later turn", [(U, "Hi"), (A, "Hello."), (U, [IMG, txt("And this?")])], True),
]


def make_tokenizer(template):
    vocab = {"<bos>": 0, "<eos>": 1, "<unk>": 2}
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(WordLevel(vocab, unk_token="<unk>")),
        bos_token="<bos>", eos_token="<eos>", unk_token="<unk>")
    tok.chat_template = template
    return tok


def render(tok, messages, generation_prompt):
    conversation = [{"role": r, "content": c} for r, c in messages]
    try:
        return {"text": tok.apply_chat_template(conversation, tokenize=False,
                                                add_generation_prompt=generation_prompt)}
    except Exception as e:  # the template's raise_exception (jinja2 TemplateError)
        return {"error": str(e)}


def build():
    out = {
        "generator": "tools/gen-golden/gen_chat.py",
        "transformers": transformers.__version__,
        "bos_token": "<bos>",
        "families": {},
    }
    for family, info in SOURCES.items():
        with open(os.path.join(ROOT, info["template"]), encoding="utf-8") as f:
            tok = make_tokenizer(f.read())
        cases = []
        for name, messages, gen in CASES:
            case = {"name": name,
                    "messages": [{"role": r, "content": c} for r, c in messages],
                    "add_generation_prompt": gen}
            case.update(render(tok, messages, gen))
            cases.append(case)
        out["families"][family] = {"template": info["template"], "source": info["source"],
                                   "cases": cases}
    return json.dumps(out, indent=1, ensure_ascii=False) + "\n"


def build_ids():
    out = {"generator": "tools/gen-golden/gen_chat.py", "transformers": transformers.__version__,
           "models": {}}
    for model in ("tiny-gemma3", "tiny-gemma4"):
        tok = transformers.AutoTokenizer.from_pretrained(os.path.join(ROOT, "examples", model))
        cases = []
        for name, system, text, raw in PROMPTS:
            if raw:
                ids = tok(text)["input_ids"]
            else:
                conv = ([{"role": "system", "content": system}] if system else []) + \
                    [{"role": "user", "content": text}]
                ids = tok.apply_chat_template(conv, tokenize=True, add_generation_prompt=True)
                ids = ids["input_ids"] if not isinstance(ids, list) else ids
            cases.append({"name": name, "system": system, "prompt": text, "raw": raw,
                          "ids": list(ids)})
        out["models"][model] = cases
    return json.dumps(out, indent=1, ensure_ascii=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the committed file")
    args = ap.parse_args()
    status = 0
    for path, text in ((OUT, build()), (OUT_IDS, build_ids())):
        if args.check:
            with open(path, encoding="utf-8") as f:
                same = f.read() == text
            print(("OK " if same else "DIFF ") + os.path.relpath(path, ROOT))
            status |= 0 if same else 1
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print("wrote " + os.path.relpath(path, ROOT))
    return status


if __name__ == "__main__":
    sys.exit(main())
