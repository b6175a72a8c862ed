"""One gate shared across threads gives what it gives on one thread, and
the GIL is released while the library works."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import ctxgate
from conftest import ANSWERS

REQUESTS = [
    {"action": "selection", "format": "outline", "max_tokens": 1200},
    {"action": "app", "format": "json", "max_bytes": 9000},
    {"action": "window", "format": "outline"},
]


def test_threads_sharing_a_gate_get_the_serial_results():
    gate = ctxgate.Gate()
    jobs = [(path.read_bytes(), request) for path in ANSWERS for request in REQUESTS]
    expected = [gate.trim(answer, **request).output for answer, request in jobs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(3):
            got = list(pool.map(lambda job: gate.trim(job[0], **job[1]).output, jobs))
            assert got == expected
            checks = list(pool.map(lambda job: gate.check(job[0]), jobs))
            assert checks == [gate.check(answer) for answer, _ in jobs]


def big_answer(copies: int) -> bytes:
    """A real tree's children repeated (ids made unique): a request that
    takes long enough to watch."""
    import json

    answer = json.loads(max(ANSWERS, key=lambda p: p.stat().st_size).read_bytes())
    children = answer["root"]["children"]
    text = json.dumps(children)
    copies_ = []
    for n in range(copies):
        copy = json.loads(text)
        stack = list(copy)
        while stack:
            element = stack.pop()
            element["id"] = f"{element['id']}~{n}"
            for key in ("focused", "selected"):
                element.pop(key, None)
            stack.extend(element.get("children", []))
            if isinstance(element.get("attributes"), dict):
                element["attributes"].pop("related", None)
        copies_.extend(copy)
    answer["root"]["children"] = children + copies_
    return json.dumps(answer).encode()


def test_the_gil_is_released_during_trim():
    gate = ctxgate.Gate()
    answer = big_answer(8)
    span = {}
    entered = threading.Event()

    def work():
        entered.set()
        span["start"] = time.perf_counter()
        try:
            span["output"] = gate.trim(answer, action="app", max_bytes=30000, timeout=120).output
        finally:
            span["end"] = time.perf_counter()

    worker = threading.Thread(target=work)
    seen = []
    worker.start()
    entered.wait()
    while worker.is_alive():
        seen.append(time.perf_counter())
        for _ in range(200):
            pass
    worker.join()
    assert span.get("output"), "the request failed"
    start, end = span["start"], span["end"]
    length = end - start
    assert length > 0.01, f"the request took {length:.4f} s: too short to watch"
    # Python ran on this thread in the middle half of the request: the GIL
    # was not held there.
    middle = [t for t in seen if start + length / 4 < t < end - length / 4]
    assert middle, f"no Python ran during the {length:.3f} s request"
