"""The privacy property on the real trees: a canary placed where the
policy withholds it (a secure field, an element a rule denies, a secret the
redaction patterns match) never reaches the output or the report, whatever
the action, budget, format and form of the answer. Hypothesis draws the
places and the requests, derandomized so a run is reproducible (seeded)."""

from __future__ import annotations

import json
import random
import string

from hypothesis import HealthCheck, given, settings, strategies as st

import ctxgate
from conftest import ANSWERS, DEFAULT_POLICY, POLICIES

TREES = [json.loads(path.read_bytes()) for path in ANSWERS]
GATE = ctxgate.Gate(policy=[DEFAULT_POLICY, POLICIES / "deny-marked.rego"])


def elements(root):
    """Every element, in document order, with its parent."""
    out, stack = [], [(root, None)]
    while stack:
        element, parent = stack.pop()
        out.append((element, parent))
        stack.extend((child, element) for child in reversed(element.get("children", [])))
    return out


def canary(rng: random.Random) -> str:
    return "CANARY" + "".join(rng.choice(string.ascii_uppercase) for _ in range(10))


def secret(rng: random.Random, kind: str) -> str:
    """A secret the default policy's redaction matches, holding a canary."""
    if kind == "github":
        tail = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(30))
        return "ghp_CANARY" + tail
    tail = "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(10))
    return "AKIACANARY" + tail


def plant(element, words):
    """Puts canaries in an element's title, its text and its descendants'."""
    placed = []
    for at, (node, _) in enumerate(elements(element)):
        word = words(at)
        node["title"] = f"{node.get('title', '')} {word}".strip()
        placed.append(word)
        if at == 0:
            node.setdefault("content", []).append({"type": "text", "text": f"value {word}"})
    return placed


@settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    tree=st.sampled_from(range(len(TREES))),
    seed=st.integers(0, 2**32 - 1),
    place=st.sampled_from(["secure", "password-subrole", "denied", "redacted"]),
    action=st.sampled_from(["selection", "focus", "window", "app", "compose"]),
    budget=st.sampled_from([None, ("max_tokens", 400), ("max_tokens", 4000), ("max_bytes", 3000)]),
    format=st.sampled_from(["json", "outline"]),
    form=st.sampled_from(["bytes", "str", "dict"]),
)
def test_canaries_never_reach_output_or_report(tree, seed, place, action, budget, format, form):
    rng = random.Random(seed)
    answer = json.loads(json.dumps(TREES[tree]))
    all_elements = elements(answer["root"])
    target, _ = rng.choice(all_elements)
    if place == "redacted":
        # Secrets in several elements' text and titles, anywhere in the tree.
        placed = []
        for element, _ in rng.sample(all_elements, min(5, len(all_elements))):
            word = secret(rng, rng.choice(["github", "aws"]))
            element.setdefault("content", []).append({"type": "text", "text": f"key: {word} ok"})
            placed.append(word)
            if rng.random() < 0.5:
                element["title"] = f"{element.get('title', '')} {word}".strip()
    else:
        subrole = {"secure": "secure", "password-subrole": "AXPasswordField", "denied": "deny-canary"}[place]
        target["subrole"] = subrole
        placed = plant(target, lambda _at: canary(rng))
    kwargs = {"action": action, "format": format}
    if budget:
        kwargs[budget[0]] = budget[1]
    raw = json.dumps(answer)
    payload = {"bytes": raw.encode(), "str": raw, "dict": answer}[form]
    try:
        t = GATE.trim(payload, **kwargs)
    except ctxgate.BudgetUnreachable as err:
        # Nothing is sent; the error says nothing of the text either.
        assert not any(word in str(err) for word in placed)
        return
    report = json.dumps(t.report)
    for word in placed:
        assert word not in t.output, (place, word)
        assert word not in report, (place, word)
    assert "CANARY" not in report


def test_the_canary_check_can_fail():
    """The same canary in an element nothing withholds is sent: the check
    above would see a leak."""
    answer = json.loads(json.dumps(TREES[0]))
    answer["root"]["title"] = "CANARYVISIBLE"
    t = GATE.trim(answer, action="app")
    assert "CANARYVISIBLE" in t.output
