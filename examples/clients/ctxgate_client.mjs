// A ctxgate client for Node hosts, no dependencies: `child_process` and
// `readline`. Starts `ctxgate serve` once and sends JSON-RPC 2.0 requests,
// one per line; replies are matched to requests by id. Usage:
//
//     node ctxgate_client.mjs ANSWER.json [ACTION]
//
// prints the trimmed output and the report's outcome counts. Set CTXGATE to
// the binary's path if `ctxgate` is not on PATH.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

export class GateError extends Error {
  constructor(error) {
    super(error.message);
    this.kind = error.data.kind; // `budget_unreachable`, `not_conforming`, ...
    this.data = error.data;
  }
}

export class Gate {
  constructor(args = [], binary = process.env.CTXGATE ?? "ctxgate") {
    this.proc = spawn(binary, ["serve", ...args], { stdio: ["pipe", "pipe", "inherit"] });
    this.pending = new Map();
    this.nextId = 1;
    createInterface({ input: this.proc.stdout }).on("line", (line) => {
      const reply = JSON.parse(line);
      const { resolve, reject } = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error) reject(new GateError(reply.error));
      else resolve(reply.result);
    });
  }

  call(method, params = null) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }

  trim(answer, action = "focus", options = {}) {
    return this.call("trim", { answer, action, ...options });
  }

  // End of input: the server finishes what it has and exits 0.
  close() {
    return new Promise((resolve) => {
      this.proc.on("exit", (code) => resolve(code));
      this.proc.stdin.end();
    });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const answer = JSON.parse(readFileSync(process.argv[2], "utf8"));
  const gate = new Gate();
  const result = await gate.trim(answer, process.argv[3] ?? "focus", { max_tokens: 2000 });
  console.log(result.output);
  const policy = await gate.call("policy");
  console.log(JSON.stringify({ policy: policy.hash, outcomes: result.report.outcomes }));
  try {
    await gate.trim(answer, "focus", { max_bytes: 1 });
  } catch (e) {
    console.log(JSON.stringify({ error: e.kind, needed: e.data.needed ?? null }));
  }
  process.exit(await gate.close());
}
