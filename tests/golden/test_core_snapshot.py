"""The pure safety core's behaviour on every golden and adversarial case, pinned (R-T-2).

Each case's record (``core_pipeline.record``: Gatekeeper result, verified input bytes, guarded claim checks,
effective verdict, allowed material, Composer guard violations, rendered answers, fallback notes) must equal
its line in ``snapshots/core.jsonl``. A change of behaviour in the core fails here with the first step that
differs; when the change is meant, review it and rewrite the snapshot
(``.venv/bin/python -m tests.golden.core_pipeline --write``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis_server.evaluation import EvalCase

from .core_pipeline import SNAPSHOT, cases, record

CASES = cases()
PINNED: dict[str, dict[str, Any]] = {
    (entry := json.loads(text))["case_id"]: entry for text in SNAPSHOT.read_text(encoding="utf-8").splitlines()
}


def _first_difference(want: Any, got: Any, path: str = "") -> str:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            if want.get(key) != got.get(key):
                return _first_difference(want.get(key), got.get(key), f"{path}.{key}")
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for index, (a, b) in enumerate(zip(want, got, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{index}]")
    return f"{path or 'record'}: pinned {json.dumps(want)[:400]}, got {json.dumps(got)[:400]}"


def test_every_case_is_pinned() -> None:
    assert [c.case_id for c in CASES] == list(PINNED)


@pytest.mark.parametrize("case", CASES, ids=[c.case_id for c in CASES])
def test_the_core_does_what_the_snapshot_pins(case: EvalCase) -> None:
    got = json.loads(json.dumps(record(case), sort_keys=True, ensure_ascii=False))
    want = PINNED[case.case_id]
    assert got == want, _first_difference(want, got)
