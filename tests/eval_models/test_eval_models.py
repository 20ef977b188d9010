"""A few model-answer cases through the real graph: what must hold whatever the guard's precision (issue 28).

An untrue claim never reaches the answer (as a confirmed fact, the likely cause or a possible direction), and a
run whose untrue claim is critical never ends PASS (R-V-4, R-A-3). The other counts are printed, not pinned: they
rise as the guard learns to read claims as people write them.
"""

from __future__ import annotations

import pytest

from tests.eval_models.runner import RunResult, load_cases, run_all, table, totals

QUICK = ("cart-pods-restarting", "pricing-api-wont-start", "search-slow-during-sale", "accounts-pg-too-many-clients")


@pytest.fixture(scope="module")
def results() -> list[RunResult]:
    import asyncio

    cases = load_cases(QUICK)
    assert [c["incident"] for c in cases] == sorted(QUICK)
    return asyncio.run(run_all(cases))


def test_each_untrue_case_has_exactly_one_untrue_claim_and_names_its_cause() -> None:
    for case in load_cases():
        for variant, played in case["variants"].items():
            untrue = [cid for cid, mark in played["marks"].items() if not mark["true"]]
            assert len(untrue) == (1 if variant == "untrue" else 0), (case["incident"], variant)
            assert played["cause_claim"] in played["marks"]


@pytest.mark.requirement("R-V-4")
def test_no_untrue_claim_is_shown_and_no_untrue_critical_run_passes(results: list[RunResult]) -> None:
    print("\n" + table(totals(results)))
    for r in results:
        assert r.untrue_shown == 0 and r.untrue_direction == 0, (r.incident, r.variant, r.shown, r.directions)
        if r.untrue_critical:
            assert r.verdict != "PASS", (r.incident, r.verdict)
