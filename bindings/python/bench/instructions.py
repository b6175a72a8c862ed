"""Instructions per call, Python package against the Rust library's warm
request, on every row of bench.py (9 real trees × 2 requests), counted by
callgrind: 300 calls minus 100 in one process, each side (loop.py for
Python, examples/warm_request.rs with `--only ACTION` for Rust), so that
start-up cancels and a shared machine's load does not enter the figures.
BENCHMARKS.md, "Python".

    cd bindings/python && cargo build --release --locked --example warm_request
    python bench/instructions.py [--rust target/release/examples/warm_request] [--jobs 2]

Needs valgrind and the package installed in the running Python.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BENCH = Path(__file__).resolve().parent
BINDINGS = BENCH.parent
REPO = BINDINGS.parent.parent

# The same requests as bench.py and examples/warm_request.rs.
REQUESTS = [
    ("selection", "outline", "tokens:2000"),
    ("app", "json", "tokens:4000"),
]
LOW, HIGH = 100, 300


def refs(cmd: list[str]) -> int:
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return int(re.search(r"I\s+refs:\s+([\d,]+)", run.stderr).group(1).replace(",", ""))


def per_call(cmd_of) -> float:
    return (refs(cmd_of(HIGH)) - refs(cmd_of(LOW))) / (HIGH - LOW)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rust", default=str(BINDINGS / "target" / "release" / "examples" / "warm_request"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    files = sorted((REPO / "tests" / "fixtures" / "answers").glob("*.json"))
    rows = [(f, r) for f in files for r in REQUESTS]

    def measure(row):
        path, (action, format, budget) = row
        py = per_call(lambda n: [sys.executable, str(BENCH / "loop.py"), str(path), str(n), action, format, budget])
        rs = per_call(lambda n: [args.rust, "--only", action, str(n), str(path)])
        return py, rs

    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(measure, rows))
    print("| tree | request | Rust, per call | Python, per call | Python ÷ Rust |")
    print("|---|---|---|---|---|")
    for (path, (action, format, budget)), (py, rs) in zip(rows, results):
        print(
            f"| {path.stem} | {action} {format} {budget} | {rs / 1e3:,.0f} k "
            f"| {py / 1e3:,.0f} k | {py / rs:.3f}× |"
        )
    ratios = [py / rs for py, rs in results]
    print(f"\nPython ÷ Rust: median {statistics.median(ratios):.3f}×, max {max(ratios):.3f}×")


if __name__ == "__main__":
    main()
