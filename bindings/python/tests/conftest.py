"""Shared by the tests: where the repository's real trees are, and the
`ctxgate` command (for comparing with what the CLI writes).

The trees are the repository's own (`tests/fixtures/answers/`, real OS
accessibility trees that `ctxgate import` converted; their sources are in
`tests/fixtures/SOURCES.md`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

BINDINGS = Path(__file__).resolve().parent.parent
REPO = BINDINGS.parent.parent
ANSWERS = sorted((REPO / "tests" / "fixtures" / "answers").glob("*.json"))
POLICIES = Path(__file__).resolve().parent / "policies"
DEFAULT_POLICY = REPO / "policies" / "default.rego"

assert ANSWERS, f"no real trees under {REPO / 'tests/fixtures/answers'}"


def ctxgate_binary() -> str:
    """The `ctxgate` command: $CTXGATE_BIN, else the repository's build
    (`cargo build` or `cargo test` makes it), else one on PATH."""
    if os.environ.get("CTXGATE_BIN"):
        return os.environ["CTXGATE_BIN"]
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("release", "debug"):
        candidate = target / profile / "ctxgate"
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("ctxgate")
    if found:
        return found
    pytest.fail("no `ctxgate` command: run `cargo build` at the repository root or set CTXGATE_BIN")


@pytest.fixture(scope="session")
def cli() -> str:
    return ctxgate_binary()


def answer_id(path: Path) -> str:
    return path.stem
