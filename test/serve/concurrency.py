"""Eight concurrent greedy requests (openai client, one thread each) give
the texts and token ids the same requests give one at a time: sequences
decoded together (--parallel 4: batched decode entries, four waiting) are
each what they are alone."""
import os
import sys
import threading

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server, arguments, check  # noqa: E402

p = arguments()
a = p.parse_args()

srv = Server(a.serve, a.model, a.weights, a.log, ["--parallel", "4", "--alias", "tiny"])
srv.wait_ready()
client = openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", max_retries=0)
QUESTIONS = ["Why is the sky blue?", "Name three rivers.", "2 + 2 =",
             "Tell me a story about a fox", "What is a compiler?", "Hello",
             "Translate 'cat' to French", "List the planets"]


def ask(i, out):
    if i % 2:
        r = client.chat.completions.create(
            messages=[{"role": "user", "content": QUESTIONS[i]}], model="tiny",
            max_tokens=24 + i, temperature=0, extra_body={"return_token_ids": True,
                                                           "ignore_eos": True})
        out[i] = (r.choices[0].message.content, r.choices[0].token_ids)
    else:
        r = client.completions.create(
            prompt=QUESTIONS[i], model="tiny",
            max_tokens=24 + i, temperature=0, extra_body={"return_token_ids": True})
        out[i] = (r.choices[0].text, r.choices[0].token_ids)


alone = [None] * 8
for i in range(8):
    ask(i, alone)
together = [None] * 8
threads = [threading.Thread(target=ask, args=(i, together)) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join(300)
for i in range(8):
    check(together[i] is not None and together[i] == alone[i],
          "request %d: %d tokens, the same together as alone" % (i, len(alone[i][1])))
check(len(set(ids for _, ids in [(t, tuple(x)) for t, x in alone])) > 1,
      "the eight answers are not all the same")
check(srv.stop() == 0, "SIGTERM: exit 0")
