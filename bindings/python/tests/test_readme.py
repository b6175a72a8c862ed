"""The READMEs' Python examples run as written: the package's from any
folder, printing what its README shows; the repository's from the root,
where its paths point."""

from __future__ import annotations

import re

import pytest

from conftest import BINDINGS, REPO


def python_blocks(path):
    text = path.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_package_example_runs_anywhere_and_prints_what_it_shows(tmp_path, monkeypatch, capsys):
    readme = BINDINGS / "README.md"
    text = readme.read_text(encoding="utf-8")
    found = re.search(r"```python\n(.*?)```.*?```text\n(.*?)```", text, flags=re.S)
    assert found, f"{readme} has no ```python example followed by its output"
    code, shown = found.groups()
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(readme), "exec"), {})
    assert capsys.readouterr().out == shown


def test_the_repository_example_runs():
    readme = REPO / "README.md"
    blocks = python_blocks(readme)
    assert blocks, f"{readme} has no ```python example"
    for block in blocks:
        namespace: dict = {}
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(REPO)
            exec(compile(block, str(readme), "exec"), namespace)
        # The example trimmed something and holds its result.
        assert namespace["t"].output
