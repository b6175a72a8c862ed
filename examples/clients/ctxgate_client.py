#!/usr/bin/env python3
"""A ctxgate client for Python hosts, standard library only.

Starts `ctxgate serve` once and sends JSON-RPC 2.0 requests over its stdin,
one per line; replies come back one per line on stdout. Usage:

    python3 ctxgate_client.py ANSWER.json [ACTION]

prints the trimmed output and the report's outcome counts. Set CTXGATE to
the binary's path if `ctxgate` is not on PATH.
"""
import itertools
import json
import os
import subprocess
import sys


class GateError(Exception):
    """A JSON-RPC error: `kind` is the error kind (`budget_unreachable`, ...)."""

    def __init__(self, error):
        super().__init__(error["message"])
        self.kind = error["data"]["kind"]
        self.data = error["data"]


class Gate:
    def __init__(self, *args, binary=os.environ.get("CTXGATE", "ctxgate")):
        self._proc = subprocess.Popen(
            [binary, "serve", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
        )
        self._ids = itertools.count(1)

    def call(self, method, params=None):
        request = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        reply = json.loads(self._proc.stdout.readline())
        if "error" in reply:
            raise GateError(reply["error"])
        return reply["result"]

    def trim(self, answer, action="focus", **options):
        return self.call("trim", {"answer": answer, "action": action, **options})

    def close(self):
        """End of input: the server finishes and exits 0."""
        self._proc.stdin.close()
        return self._proc.wait(timeout=30)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        answer = json.load(f)
    gate = Gate()
    result = gate.trim(answer, sys.argv[2] if len(sys.argv) > 2 else "focus", max_tokens=2000)
    print(result["output"])
    print(json.dumps({"policy": gate.call("policy")["hash"], "outcomes": result["report"]["outcomes"]}))
    try:
        gate.trim(answer, max_bytes=1)
    except GateError as e:
        print(json.dumps({"error": e.kind, "needed": e.data.get("needed")}))
    sys.exit(gate.close())
