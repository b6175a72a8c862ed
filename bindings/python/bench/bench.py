"""Per-request time of the Python package against spawning the CLI and
against the Rust library's own warm request, on the repository's real trees
(tests/fixtures/answers/). Figures: BENCHMARKS.md, "Python".

    cd bindings/python && maturin develop --release        # the package, optimized
    (cd ../.. && cargo build --release --bin ctxgate)       # the CLI
    cargo build --release --example warm_request            # the Rust side
    python bench/bench.py [--runs 200] [--cli-runs 20]

In-process: one `ctxgate.Gate()` built and warmed, then `gate.trim(bytes,
...)` per request (the output str built; the report kept in Rust). Subprocess:
`subprocess.run(["ctxgate", "trim", FILE, ...], capture_output=True)` per
request, as a host without the package pays it (process start, policy
compile, token vocabulary, the request). Rust: `examples/warm_request.rs`,
`Gate::trim_bytes` on a warm gate. Medians. The "+ `.report`" column also
reads the report (serialized and built into a dict on first access).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import ctxgate

BINDINGS = Path(__file__).resolve().parent.parent
REPO = BINDINGS.parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))

# The same requests as examples/warm_request.rs.
REQUESTS = [
    ("selection", "outline", "tokens:2000"),
    ("app", "json", "tokens:4000"),
]


def budget_kwargs(budget: str) -> dict:
    unit, n = budget.split(":")
    return {"max_tokens" if unit == "tokens" else "max_bytes": int(n)}


def budget_args(budget: str) -> list[str]:
    unit, n = budget.split(":")
    return ["--max-tokens" if unit == "tokens" else "--max-bytes", n]


def timed_us(fn, runs: int) -> tuple[float, float]:
    """(median, least) µs per call."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6, min(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200, help="in-process and Rust requests per tree")
    parser.add_argument("--cli-runs", type=int, default=20, help="CLI processes per tree")
    parser.add_argument("--cli", default=str(TARGET / "release" / "ctxgate"))
    parser.add_argument("--rust", default=str(TARGET / "release" / "examples" / "warm_request"))
    args = parser.parse_args()
    files = sorted((REPO / "tests" / "fixtures" / "answers").glob("*.json"))

    rust = {}
    out = subprocess.run(
        [args.rust, str(args.runs)] + [str(f) for f in files], capture_output=True, check=True, text=True
    ).stdout
    for line in out.splitlines():
        file, action, format, budget, median, least = line.split("\t")
        rust[(Path(file).name, action, format, budget)] = (float(median), float(least))

    gate = ctxgate.Gate()
    rows = []
    for path in files:
        data = path.read_bytes()
        for action, format, budget in REQUESTS:
            kwargs = dict(action=action, format=format, timeout=60, **budget_kwargs(budget))
            cli_args = [args.cli, "trim", str(path), "--action", action, "--format", format] + budget_args(budget)
            # Same output both ways, or the comparison means nothing.
            expected = subprocess.run(cli_args, capture_output=True, check=True).stdout
            assert gate.trim(data, **kwargs).output.encode() == expected, path.name
            for _ in range(3):
                gate.trim(data, **kwargs)
            py = timed_us(lambda: gate.trim(data, **kwargs), args.runs)
            with_report = timed_us(lambda: gate.trim(data, **kwargs).report, args.runs)[0]
            cli = timed_us(lambda: subprocess.run(cli_args, capture_output=True, check=True), args.cli_runs)[0]
            rs = rust[(path.name, action, format, budget)]
            rows.append((path.name, len(data), action, format, budget, rs, py, with_report, cli))

    print(f"python {sys.version.split()[0]}, ctxgate package at {Path(ctxgate.__file__).parent}")
    print(
        "| tree | bytes | request | Rust warm µs median / least | Python µs median / least "
        "| ÷ Rust (least) | + `.report` dict µs | CLI process µs | CLI ÷ Python |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, size, action, format, budget, rs, py, with_report, cli in rows:
        print(
            f"| {name.removesuffix('.json')} | {size:,} | {action} {format} {budget} "
            f"| {rs[0]:,.0f} / {rs[1]:,.0f} | {py[0]:,.0f} / {py[1]:,.0f} | {py[1] / rs[1]:.2f}× "
            f"| {with_report:,.0f} | {cli:,.0f} | {cli / py[0]:,.0f}× |"
        )
    ratios = [py[1] / rs[1] for _, _, _, _, _, rs, py, _, _ in rows]
    speedups = [cli / py[0] for _, _, _, _, _, _, py, _, cli in rows]
    print(
        f"\nPython ÷ Rust (least times): median {statistics.median(ratios):.2f}×, max {max(ratios):.2f}×; "
        f"CLI ÷ Python (medians): median {statistics.median(speedups):,.0f}×, min {min(speedups):,.0f}×"
    )


if __name__ == "__main__":
    main()
