"""The READMEs' Python examples run as written (from the repository root,
where their paths point)."""

from __future__ import annotations

import os
import re

import pytest

from conftest import BINDINGS, REPO


def python_blocks(path):
    text = path.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize(
    "readme", [BINDINGS / "README.md", REPO / "README.md"], ids=["bindings", "root"]
)
def test_readme_example_runs(readme, monkeypatch):
    blocks = python_blocks(readme)
    assert blocks, f"{readme} has no ```python example"
    monkeypatch.chdir(REPO)
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, str(readme), "exec"), namespace)
        # The example trimmed something and holds its result.
        assert namespace["t"].output
        assert os.fspath(REPO)
