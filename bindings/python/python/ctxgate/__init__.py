"""ctxgate for Python: decide, in-process, what of an app's screen may be
sent to an AI agent.

A host builds a `Gate` once and calls `Gate.trim` before every agent
request. It reads the provider's answer (protocol 0.2.0), checks it, applies
the policy, scopes it to the user's action, fits it to a budget in bytes or
o200k_base tokens, and returns the output with a report of what was
withheld and why. On any error it raises a `ctxgate.Error` subclass and
returns nothing: send nothing.

The work runs in Rust with the GIL released; one `Gate` may be shared by
any number of threads.
"""

from __future__ import annotations

import datetime as _datetime
import json as _json
import os as _os
from typing import Any, Literal, Sequence, Union

from . import _ctxgate
from . import _errors
from ._errors import (
    BudgetUnreachable,
    DeadlineExceeded,
    Error,
    InternalError,
    InvalidInput,
    IoError,
    LimitExceeded,
    NotConforming,
    PolicyError,
    UsageError,
)

# The exception classes are listed once, in `_errors`.
__all__ = ["Gate", "Trimmed", "import_tree", "IMPORT_FORMATS", *_errors.__all__]

Answer = Union[bytes, str, "dict[str, Any]"]
PathLike = Union[str, "_os.PathLike[str]"]

#: The formats `import_tree` reads (`ctxgate import --from`), from the
#: library's own list.
IMPORT_FORMATS: "tuple[str, ...]" = _ctxgate.IMPORT_FORMATS


class Trimmed:
    """What may be sent, and the report of what was not."""

    __slots__ = ("_output", "_native_report", "_report_json", "_report")

    def __init__(self, output: str, report: _ctxgate.Report) -> None:
        self._output = output
        self._native_report = report
        self._report_json: str | None = None
        self._report: dict[str, Any] | None = None

    @property
    def output(self) -> str:
        """The bytes to send, as text: exactly what the budget measured."""
        return self._output

    @property
    def report(self) -> dict[str, Any]:
        """The report, as `ctxgate trim --report` writes it: per element its
        outcome and deciding rule, totals, budgets, redactions, the policy's
        hash. Ids, rule ids and counts only: never text. Kept in Rust after
        `trim`; serialized (without the GIL) and built into a dict on first
        access, so a host that only logs some reports pays for those."""
        if self._report is None:
            self._report = _json.loads(self._json())
        return self._report

    def _json(self) -> str:
        if self._report_json is None:
            self._report_json = self._native_report.json()
        return self._report_json

    def __repr__(self) -> str:
        return f"Trimmed(output=<{len(self._output)} chars>, report=<{len(self._json())} bytes of JSON>)"


def _count(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"`{name}` must be an int, not {type(value).__name__}")
    if value < 0:
        raise UsageError(f"`{name}` must be at least 1, not {value}")
    return value


def _seconds(timeout: object) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, _datetime.timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise UsageError(
            f"`timeout` is seconds (a number or a timedelta), not {type(timeout).__name__}"
        )
    return float(timeout)


class Gate:
    """A compiled policy and the limits on what is read.

    `Gate()` uses the embedded default policy; `Gate(policy=path)` a `.rego`
    file or a folder of them (tests excepted); `Gate(policy=[path, ...])`
    several. The keyword limits raise or lower the library's defaults.
    Building compiles the policy and loads the token vocabulary once per
    process, so the first request is as fast as the rest.
    """

    __slots__ = ("_gate",)

    def __init__(
        self,
        policy: PathLike | Sequence[PathLike] | None = None,
        *,
        max_input_bytes: int | None = None,
        max_elements: int | None = None,
        max_depth: int | None = None,
        max_content_bytes: int | None = None,
        max_projections: int | None = None,
    ) -> None:
        self._gate = _ctxgate.Gate(
            policy,
            max_input_bytes=_count("max_input_bytes", max_input_bytes),
            max_elements=_count("max_elements", max_elements),
            max_depth=_count("max_depth", max_depth),
            max_content_bytes=_count("max_content_bytes", max_content_bytes),
            max_projections=_count("max_projections", max_projections),
        )

    @property
    def policy_hash(self) -> str:
        """The policy set's hash, as reports name it."""
        return self._gate.policy_hash

    def trim(
        self,
        answer: Answer,
        action: str = "focus",
        target: str | None = None,
        *,
        max_tokens: int | None = None,
        max_bytes: int | None = None,
        format: Literal["json", "outline"] = "json",
        timeout: float | _datetime.timedelta | None = None,
    ) -> Trimmed:
        """Trims `answer` (bytes or str of JSON, or a dict) for `action`
        (`selection`, `focus`, `window`, `app`, or a host's own word),
        narrowed to the element `target` when given. A budget can only lower
        the policy's. `timeout` is seconds from this call (default 5).
        Raises a `ctxgate.Error` subclass on any failure."""
        if not isinstance(action, str):
            raise UsageError(f"`action` must be a str, not {type(action).__name__}")
        if target is not None and not isinstance(target, str):
            raise UsageError(f"`target` must be a str or None, not {type(target).__name__}")
        if not isinstance(format, str):
            raise UsageError(f"`format` must be `json` or `outline`, not {type(format).__name__}")
        output, report = self._gate.trim(
            answer,
            action,
            target,
            None if max_tokens is None else _count("max_tokens", max_tokens),
            None if max_bytes is None else _count("max_bytes", max_bytes),
            format,
            None if timeout is None else _seconds(timeout),
        )
        return Trimmed(output, report)

    def check(self, answer: Answer) -> list[dict[str, Any]]:
        """Every conformance finding of `answer` (errors and warnings), each
        a dict with `pointer`, `id` (None when unknown), `requirement`,
        `severity` (`error` or `warning`) and `message`. An empty list: it
        conforms. Raises `InvalidInput` when it is not JSON at all and
        `LimitExceeded` over a limit."""
        return self._gate.check(answer)


def import_tree(format: str, text: str | bytes) -> dict[str, Any]:
    """An operating system's accessibility tree (`format` one of
    `IMPORT_FORMATS`) as a conforming 0.2.0 answer, as `ctxgate import`
    writes it. Secure fields' values are never read into it."""
    return _ctxgate.import_tree(format, text)
