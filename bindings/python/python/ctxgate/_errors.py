"""The exceptions ctxgate raises: `Error` and one subclass per kind of
failure (the library's `ErrorKind`). On any of them nothing was trimmed and
nothing may be sent. Decide by class, never by message.

Every error has `message` and the positions the library knows (`line`,
`column`, `pointer`: None where there is none); some classes carry more.
No message or attribute carries an element's title, content, url or
attribute value.
"""

from __future__ import annotations

from typing import Any


class Error(Exception):
    """Any ctxgate failure. Nothing was trimmed; send nothing."""

    #: ctxgate's message: what is wrong, where, and what to do.
    message: str
    #: 1-based line of the input (or policy file) at fault, if known.
    line: int | None
    #: 1-based column, if known.
    column: int | None
    #: JSON pointer of the element or field at fault, if known.
    pointer: str | None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.line = None
        self.column = None
        self.pointer = None

    def __str__(self) -> str:
        return self.message


class InvalidInput(Error):
    """The input is not what it claims to be: not JSON, not UTF-8, a dict
    holding something JSON cannot, not a tree of the import format."""


class NotConforming(Error):
    """The answer does not conform to protocol 0.2.0 (or a 0.1 answer cannot
    be upgraded). `findings` lists every finding, as `Gate.check` returns
    them."""

    findings: list[dict[str, Any]]

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.findings = []


class LimitExceeded(Error):
    """The input passes one of the gate's limits (size, elements, depth,
    content per element, distinct projections)."""


class BudgetUnreachable(Error):
    """Not even the root and the kept elements fit the budget. `needed` is
    the smallest budget that works, in `unit` (`bytes` or `tokens`);
    `budget` is the one asked for."""

    budget: int
    needed: int
    unit: str

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.budget = 0
        self.needed = 0
        self.unit = ""


class PolicyError(Error):
    """The policy failed to load, to compile or to evaluate (fail closed).
    `file`, `line` and `column` say where, for a load or compile error."""

    file: str | None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.file = None


class DeadlineExceeded(Error):
    """The request ran past its timeout; `stage` names the stage that was
    running and `timeout` the request's deadline in seconds."""

    stage: str
    timeout: float

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.stage = ""
        self.timeout = 0.0


class IoError(Error, OSError):
    """Reading a file (a policy) failed; `path` names it."""

    path: str | None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.path = None

    def __str__(self) -> str:
        return self.message


class UsageError(Error, ValueError):
    """The request asks for something that cannot be done: an unknown
    target, format or import format, a budget of 0, both budgets, a
    timeout that is not positive."""


class InternalError(Error):
    """A bug in ctxgate: an invariant did not hold; nothing was sent."""


__all__ = [
    "Error",
    "InvalidInput",
    "NotConforming",
    "LimitExceeded",
    "BudgetUnreachable",
    "PolicyError",
    "DeadlineExceeded",
    "IoError",
    "UsageError",
    "InternalError",
]
