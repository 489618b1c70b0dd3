#!/usr/bin/env python3
"""Prints token ids from a golden's meta.json: `golden-ids.py DIR KEY [SEP]`
(KEY: input_ids, decode_ids_f32, decode_ids_bf16). Standard library only."""
import json
import os
import sys

directory, key = sys.argv[1], sys.argv[2]
sep = sys.argv[3] if len(sys.argv) > 3 else ","
with open(os.path.join(directory, "meta.json")) as f:
    print(sep.join(str(i) for i in json.load(f)[key]))
