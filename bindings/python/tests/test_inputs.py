"""bytes, str and dict answers give the same output and report, and the
report is exactly what `ctxgate trim --report` writes for the same tree."""

from __future__ import annotations

import gc
import json
import subprocess

import pytest

import ctxgate
from conftest import ANSWERS, answer_id, ctxgate_binary

REQUESTS = [
    {"action": "selection", "format": "outline", "max_tokens": 2000},
    {"action": "focus", "format": "json"},
    {"action": "window", "format": "outline", "max_bytes": 6000},
    {"action": "app", "format": "json", "max_tokens": 1500},
]


@pytest.fixture(scope="module")
def gate():
    return ctxgate.Gate()


@pytest.mark.parametrize("path", ANSWERS, ids=answer_id)
def test_bytes_str_and_dict_give_identical_results(gate, path):
    raw = path.read_bytes()
    forms = [raw, raw.decode("utf-8"), json.loads(raw)]
    for request in REQUESTS:
        results = [gate.trim(form, **request) for form in forms]
        outputs = {r.output for r in results}
        assert len(outputs) == 1, request
        # A warm gate decides from its cache: only the evaluation count
        # may differ between the calls.
        reports = [dict(r.report, evaluations=None) for r in results]
        assert reports[0] == reports[1] == reports[2], request
    assert gate.check(forms[0]) == gate.check(forms[1]) == gate.check(forms[2])


def test_a_dict_keeps_its_key_order(gate):
    raw = ANSWERS[0].read_bytes()
    answer = json.loads(raw)
    # The dict is serialized in its own order: JSON output of `app` with
    # no budget keeps every attribute object's order as the provider wrote it.
    assert gate.trim(answer, action="app").output == gate.trim(raw, action="app").output


@pytest.mark.parametrize("path", ANSWERS[:4], ids=answer_id)
@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: r["action"])
def test_output_and_report_are_what_the_cli_writes(cli, tmp_path, path, request_):
    report_file = tmp_path / "report.json"
    args = [cli, "trim", str(path), "--action", request_["action"], "--format", request_["format"]]
    if "max_tokens" in request_:
        args += ["--max-tokens", str(request_["max_tokens"])]
    if "max_bytes" in request_:
        args += ["--max-bytes", str(request_["max_bytes"])]
    run = subprocess.run(args + ["--report", str(report_file)], capture_output=True, check=True)
    # A new gate: its decisions are not cached yet, as in the CLI's process.
    t = ctxgate.Gate().trim(path.read_bytes(), **request_)
    assert t.output.encode("utf-8") == run.stdout
    assert t.report == json.loads(report_file.read_text(encoding="utf-8"))


def test_the_report_read_later_is_the_one_read_at_once(gate):
    # The report stays in Rust until read: read after its answer (a str
    # and a dict built here) is gone and other requests ran, it is the same
    # as the report read at once, and the same dict when read again.
    raw = ANSWERS[0].read_bytes()
    request = {"action": "app", "format": "json", "max_tokens": 1500}
    now = gate.trim(raw, **request)
    expected = dict(now.report, evaluations=None)
    later = [gate.trim(raw.decode("utf-8") + " ", **request), gate.trim(json.loads(raw), **request)]
    gc.collect()
    for path in ANSWERS[1:4]:
        gate.trim(path.read_bytes(), **request).report
    for t in later:
        assert repr(t).endswith(" bytes of JSON>)")
        assert dict(t.report, evaluations=None) == expected
        assert t.report is t.report
    assert repr(now).startswith(f"Trimmed(output=<{len(now.output)} chars>, report=<")


def test_check_of_a_conforming_tree_is_empty_and_findings_are_dicts(gate):
    for path in ANSWERS:
        assert all(f["severity"] == "warning" for f in gate.check(path.read_bytes()))
    answer = json.loads(ANSWERS[0].read_bytes())
    answer["root"]["children"].append(dict(answer["root"]["children"][0]))
    findings = gate.check(answer)
    assert findings and findings[0]["requirement"] == "R4"
    assert findings[0]["severity"] == "error"
    assert findings[0]["pointer"].startswith("/root/children/")


def test_import_tree_gives_a_conforming_answer(gate):
    dump = "AXWebArea AXTitle='Sign in'\n++AXTextField AXTitle='Email' AXValue='ada@example.com'\n++AXSecureTextField AXTitle='Password' AXValue='hunter2'\n"
    answer = ctxgate.import_tree("ax-dump", dump)
    assert answer["protocol"] == "0.2.0"
    assert "hunter2" not in json.dumps(answer)
    assert gate.check(answer) == []
    assert ctxgate.import_tree("ax-dump", dump.encode()) == answer
    assert gate.trim(answer, action="app").output


def test_import_formats_are_the_cli_s_and_each_is_read():
    # The CLI names its formats when given an unknown one; the package's
    # tuple comes from the same list in the library.
    run = subprocess.run(
        [ctxgate_binary(), "import", "--from", "no-such-format"],
        input=b"",
        capture_output=True,
    )
    assert run.returncode != 0
    message = run.stderr.decode()
    listed = message.split("possible values:")[1].split("]")[0]
    assert [f.strip() for f in listed.split(",")] == list(ctxgate.IMPORT_FORMATS)
    assert len(set(ctxgate.IMPORT_FORMATS)) == len(ctxgate.IMPORT_FORMATS) >= 5
    for name in ctxgate.IMPORT_FORMATS:
        # Every listed format is known: an empty input is refused as input,
        # never as an unknown format.
        with pytest.raises(ctxgate.InvalidInput):
            ctxgate.import_tree(name, "")
