#!/usr/bin/env python3
"""Writes a secret of every shape the default policy redacts, and secret-like
titles, into the titles and text content of a real tree (derived from
tests/fixtures/answers/aria-insurance-navigator-upload.json, whose source and
license tests/fixtures/SOURCES.md names).

usage: secrets.py OUT.json   (run from the repository's root)
"""
import json
import sys

SHAPES = [
    "4111 1111 1111 1111", "card 5500-0000-0000-0004 exp 12/29", "٤١١١١١١١١١١١١١١١",
    "AKIAIOSFODNN7EXAMPLE", "ASIA1234567890ABCDEF",
    "AccountKey=" + "A" * 86 + "==", "ghp_" + "a" * 36, "github_pat_" + "b" * 22,
    "glpat-" + "c" * 20, "xoxb-1234567890-abc",
    "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "sk_live_" + "d" * 16, "whsec_" + "e" * 16, "sk-proj-" + "f" * 20, "AIza" + "g" * 35,
    "GOCSPX-" + "h" * 28, "ya29." + "i" * 20, "npm_" + "j" * 36,
    "pypi-AgEIcHlwaS5vcmc" + "k" * 50, "hf_" + "l" * 34,
    "SG." + "m" * 22 + "." + "n" * 43, "SK" + "0123456789abcdef" * 2, "shpat_" + "a" * 32,
    "dop_v1_" + "b" * 64, "dapi" + "c" * 32, "AGE-SECRET-KEY-1" + "Q" * 58,
    "eyJhbGciOi.eyJzdWIiOi.SflKxwRJSM", "Authorization: Bearer abcdefghijklmnop1234",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
    # Titles the secret-title rule masks, some in Unicode case folds.
    "Password", "confirmPassword", "PIN code", "One-time code", "2FA", "user_pin", "Kennwort",
    "Pa\u017f\u017fword", "\u212aennwort", "CONTRASE\u00d1A",
]


def main():
    tree = json.load(open("tests/fixtures/answers/aria-insurance-navigator-upload.json"))
    n = 0

    def walk(e):
        nonlocal n
        e["title"] = (e.get("title") or "") + " " + SHAPES[n % len(SHAPES)]
        n += 1
        for c in e.get("content") or []:
            if isinstance(c, dict) and isinstance(c.get("text"), str):
                c["text"] += " " + SHAPES[n % len(SHAPES)]
                n += 1
        for c in e.get("children") or []:
            walk(c)

    walk(tree["root"])
    json.dump(tree, open(sys.argv[1], "w"))
    print(f"{n} secrets written")


if __name__ == "__main__":
    main()
