"""Every protocol parser on malformed variants of valid agent outputs, pinned (R-C-1, R-C-6, R-R-1, R-R-2).

A variant is parsed or refused exactly as ``snapshots/perturbations.jsonl`` says: the same status, the same
error message (what a persisted failure reason shows), the same parsed output. See ``perturbations.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .perturbations import SNAPSHOT, records

PINNED = [json.loads(text) for text in SNAPSHOT.read_text(encoding="utf-8").splitlines()]
AGENTS = ("executor", "verifier", "composer", "planner")


@pytest.mark.parametrize("agent", AGENTS)
def test_each_variant_parses_as_pinned(agent: str) -> None:
    got: list[dict[str, Any]] = [json.loads(json.dumps(r, sort_keys=True)) for r in records() if r["agent"] == agent]
    want = [r for r in PINNED if r["agent"] == agent]
    assert [r["variant"] for r in got] == [r["variant"] for r in want]
    for mine, pinned in zip(got, want, strict=True):
        assert mine == pinned, pinned["variant"]


def test_decoded_documents_are_checked_too() -> None:
    """An already-decoded document: a non-object is named by its type, a long unknown key is shortened."""
    from diagnosis_server.protocols.executor import parse_executor_output

    assert parse_executor_output(("a",)).error == "expected a JSON object, got tuple"  # type: ignore[arg-type]
    long_key = "k" * 100
    parsed = parse_executor_output({"contract": "executor_evidence_v2", "claims": [], long_key: 1})
    assert parsed.error == "k" * 77 + "...: unknown field"
    exact = "k" * 80
    parsed = parse_executor_output({"contract": "executor_evidence_v2", "claims": [], exact: 1})
    assert parsed.error == exact + ": unknown field"
