"""sgc-serve with the official openai client: completions and chat, whole
and streamed, against Hugging Face references.

  - /v1/completions on the three prompts of tiny-gemma3's batch goldens,
    greedy: the token ids (vLLM's return_token_ids) are HF's greedy ids
    (until a stop token, which must end it with finish_reason "stop"); the
    text is their decode; logprobs are HF's f32 log-softmax (1e-3), the top
    one HF's argmax.
  - streamed: the same text and ids, usage in a last chunk.
  - /v1/chat/completions on the chat fixture's text cases of both families
    (tiny-gemma3 and tiny-gemma4): the prompt ids are what /tokenize makes of
    transformers' rendered text (Gemma 4's thinking channel stripped from
    history included); the template's refusals are 400s with its message;
    streamed deltas add up to the whole answer, the first carries the role.
"""
import argparse
import os
import sys

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import batch_golden, chat_cases  # noqa: E402
from server import Server, check  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--serve", required=True)
p.add_argument("--model", required=True)
p.add_argument("--gemma4-model", required=True)
p.add_argument("--examples", required=True)
p.add_argument("--fixture", required=True)
p.add_argument("--log", required=True)
a = p.parse_args()

g = os.path.join(a.examples, "tiny-gemma3")
srv = Server(a.serve, a.model, g, a.log, ["--parallel", "4", "--alias", "tiny"])
srv.wait_ready()
client = openai.OpenAI(base_url=srv.url + "/v1", api_key="unused")
STOPS = {1, 106}  # <eos>, <end_of_turn>

models = client.models.list()
check([m.id for m in models.data] == ["tiny"], "models lists the alias")

for k in (1, 2, 3):
    prompt, greedy, log_softmax_row = batch_golden(
        os.path.join(g, "batch%d.golden.safetensors" % k))
    r = client.completions.create(
        model="tiny", prompt=prompt, max_tokens=len(greedy), temperature=0,
        logprobs=2, extra_body={"return_token_ids": True})
    ids = r.choices[0].token_ids
    end = next((i + 1 for i, t in enumerate(greedy) if t in STOPS), len(greedy))
    check(ids == greedy[:end], "prompt %d: HF's greedy ids %s, ours %s" % (k, greedy[:end], ids))
    check(r.choices[0].finish_reason == ("stop" if end < len(greedy) or greedy[-1] in STOPS else "length"),
          "prompt %d: finish_reason %s" % (k, r.choices[0].finish_reason))
    check(r.usage.prompt_tokens == len(prompt) and r.usage.completion_tokens == len(ids),
          "prompt %d: usage %s" % (k, r.usage))
    status, body, _ = srv.post("/detokenize", {"tokens": [t for t in ids if t not in STOPS]})
    check(r.choices[0].text == body["content"], "prompt %d: text is the ids' decode" % k)
    lp = r.choices[0].logprobs
    worst = 0.0
    for i, t in enumerate(ids):
        ref = log_softmax_row(i)
        top2 = sorted(ref, reverse=True)[:2]
        # Greedy takes HF's argmax; the top entries are HF's two best (two
        # tokens with the same text share one key of the legacy dict).
        worst = max(worst, abs(lp.token_logprobs[i] - ref[t]),
                    abs(lp.token_logprobs[i] - top2[0]))
        for value in lp.top_logprobs[i].values():
            worst = max(worst, min(abs(value - r) for r in top2))
    check(worst < 1e-3, "prompt %d: logprobs within 1e-3 of HF's log-softmax (worst %.2e)" % (k, worst))

    stream = client.completions.create(
        model="tiny", prompt=prompt, max_tokens=len(greedy), temperature=0,
        stream=True, stream_options={"include_usage": True},
        extra_body={"return_token_ids": True})
    text, sids, usage, finish = "", [], None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for c in chunk.choices:
            text += c.text
            sids += getattr(c, "token_ids", None) or []
            finish = c.finish_reason or finish
    check(text == r.choices[0].text and sids == ids and finish == r.choices[0].finish_reason,
          "prompt %d: the stream adds up to the whole answer" % k)
    check(usage is not None and usage.completion_tokens == len(ids),
          "prompt %d: usage in the stream's last chunk" % k)



def chat_checks(srv, client, family):
    n = 0
    for case in chat_cases(a.fixture, family):
        n += 1
        messages = case["messages"]
        name = "%s chat '%s'" % (family, case["name"])
        if "error" in case:
            try:
                client.chat.completions.create(model="tiny", messages=messages, max_tokens=1)
                check(False, "%s: refused" % name)
            except openai.BadRequestError as e:
                check(case["error"] in e.message,
                      "%s: 400 with the template's refusal (%s)" % (name, e.message))
            continue
        status, tok, _ = srv.post("/tokenize", {"content": case["text"]})
        r = client.chat.completions.create(
            model="tiny", messages=messages, max_tokens=6, temperature=0,
            extra_body={"return_token_ids": True})
        check(r.model_extra["prompt_token_ids"] == tok["tokens"],
              "%s: the prompt is transformers' rendering" % name)
        check(r.choices[0].message.role == "assistant", "%s: role" % name)
        stream = client.chat.completions.create(
            model="tiny", messages=messages, max_tokens=6, temperature=0, stream=True)
        first, text = None, ""
        for chunk in stream:
            for c in chunk.choices:
                if first is None:
                    first = c.delta.role
                text += c.delta.content or ""
        check(first == "assistant" and text == r.choices[0].message.content,
              "%s: streamed deltas add up (%r)" % (name, text))
    check(n >= 3, "%s: %d chat cases" % (family, n))


chat_checks(srv, client, "gemma3")
check(srv.stop() == 0, "SIGTERM: exit 0")

# Gemma 4's format (its thinking channel stripped from history as the
# template does: the fixture's "thinking channel in an answer").
g4 = Server(a.serve, a.gemma4_model, os.path.join(a.examples, "tiny-gemma4"),
            a.log + ".gemma4", ["--alias", "tiny"])
g4.wait_ready()
chat_checks(g4, openai.OpenAI(base_url=g4.url + "/v1", api_key="unused"), "gemma4")
check(g4.stop() == 0, "gemma4: SIGTERM: exit 0")
