"""N calls of one request in one process, for callgrind: the difference
between N = 300 and N = 100 is 200 calls' instructions, start-up cancelled
(BENCHMARKS.md, "Python"; instructions.py runs it on every row).

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
      python bench/loop.py FILE N [ACTION FORMAT BUDGET]

ACTION FORMAT BUDGET default to `selection outline tokens:2000` (the
README's example); BUDGET is `tokens:N` or `bytes:N`. One `ctxgate.Gate()`,
three warm-up calls (as examples/warm_request.rs makes), then N calls of
`gate.trim(bytes, ...)`, the report not read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ctxgate


def main() -> None:
    if len(sys.argv) not in (3, 6):
        sys.exit("usage: loop.py FILE N [ACTION FORMAT BUDGET]")
    data = Path(sys.argv[1]).read_bytes()
    runs = int(sys.argv[2])
    action, format, budget = sys.argv[3:6] if len(sys.argv) == 6 else ("selection", "outline", "tokens:2000")
    unit, n = budget.split(":")
    kwargs = {"max_tokens" if unit == "tokens" else "max_bytes": int(n)}
    gate = ctxgate.Gate()
    for _ in range(3 + runs):
        gate.trim(data, action, format=format, timeout=60, **kwargs)


if __name__ == "__main__":
    main()
