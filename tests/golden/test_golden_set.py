"""The golden set covers every requirement id of the routing, Gatekeeper, verifier, answer and
persistence groups at least once, with adversarial executors among its cases (the cases themselves run
in tests/graph/test_end_to_end.py)."""

from __future__ import annotations

from pathlib import Path

from diagnosis_server.evaluation import read_cases

GOLDEN = Path(__file__).resolve().parent
CASES = [case for path in sorted(GOLDEN.glob("*.jsonl")) for case in read_cases(path)]

REQUIRED = (
    [f"R-R-{i}" for i in range(1, 8)]
    + [f"R-GK-{i}" for i in range(1, 8)]
    + [f"R-V-{i}" for i in range(1, 8)]
    + [f"R-A-{i}" for i in range(1, 7)]
    + [f"R-P-{i}" for i in range(1, 8)]
)


def test_the_golden_set_has_at_least_sixty_cases_with_unique_ids() -> None:
    ids = [case.case_id for case in CASES]
    assert len(ids) >= 60
    assert len(ids) == len(set(ids))


def test_every_requirement_id_of_the_covered_groups_has_a_case() -> None:
    covered = {req for case in CASES for req in case.requirements}
    missing = [req for req in REQUIRED if req not in covered]
    assert not missing, f"requirement ids with no golden case: {missing}"


def test_every_case_pins_an_expectation() -> None:
    assert all(case.expect for case in CASES)


def test_adversarial_executors_are_represented() -> None:
    names = " ".join(case.case_id for case in CASES)
    for kind in (
        "fabricated",
        "tool-name",
        "path-into-another-invocation",
        "one-character",
        "user-facing-answer",
        "hypothesis-presented-as-confirmed",
        "prompt-injection",
    ):
        assert kind in names, kind
