#!/usr/bin/env python3
"""Writes the hostile shapes measured in BENCHMARKS.md ("Hostile shapes") into
the folder given (default: the current one). Deterministic; no recursion, so
any depth can be written. See BENCHMARKS.md for the commands that time them."""
import json
import os
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)


def write(name, text):
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


def dump(obj):
    return json.dumps(obj, separators=(",", ":"))


head = '{"protocol":"0.2.0","instance":"hostile","root":'

# 1,000,000 Text siblings in one Window.
kids = ",".join('{"id":"t%d","role":"Text","content":[{"type":"text","text":"x"}]}' % i for i in range(1_000_000))
write("siblings-1m.json", head + '{"id":"app","role":"Application","title":"A","children":[{"id":"w","role":"Window","focused":true,"children":[' + kids + "]}]}}")

# A tree 100,000 elements deep (refused by max_depth; with the limit raised, by R3).
n = 100_000
write("deep-100k.json", head + "".join('{"id":"e%d","role":"Group","children":[' % i for i in range(n)) + '{"id":"leaf","role":"Text"}' + "]}" * n + "}")

# 19 chains of 1,000 nested Groups, each with a distinct subrole (within every default limit).
def chain(c, depth):
    opening = "".join('{"id":"c%d-%d","role":"Group","subrole":"sub-%d-%d-xxxxxxxxxxxxxxxxxxxx","children":[' % (c, d, c, d) for d in range(depth))
    return opening + '{"id":"c%d-leaf","role":"Text","content":[{"type":"text","text":"leaf"}]}' % c + "]}" * depth

write("chains-19x1000.json", head + '{"id":"app","role":"Application","title":"A","children":[{"id":"w","role":"Window","focused":true,"children":[' + ",".join(chain(c, 1000) for c in range(19)) + "]}]}}")

# 0.1 answers: parent chains of 16,000 and 200,000 items.
for count, name in [(16_000, "v01-chain-16k.json"), (200_000, "v01-chain-200k.json")]:
    items = [{"id": "i0", "type": "pane"}] + [{"id": "i%d" % i, "type": "group", "parent": "i%d" % (i - 1)} for i in range(1, count)]
    write(name, dump({"protocol": "0.1", "instance": "h", "items": items}))

# Policy sources nested 24 deep with `{` and with `(`.
write("nested-brace-24.rego", "package ctxgate\n\nx := " + "{" * 24 + "1" + "}" * 24 + "\n")
write("nested-paren-24.rego", "package ctxgate\n\nx := " + "(" * 24 + "1" + ")" * 24 + "\n")
