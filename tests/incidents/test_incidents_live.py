"""The incident corpus asked live as well as recorded: the same pack, question and window, once over the recorded
pack's tools and once over live sources serving its data (``tests.incidents.live``: a loopback Kubernetes API server
and Loki, a real Prometheus backfilled with promtool). Both answers are judged as ``test_incidents`` judges them.

What must hold live as recorded (R-V-1, R-V-4, R-A-2, R-A-6): every run SUCCESS, no false confirmed statement (a
healthy pack or an unknown service never given a cause, no "no incident" where there is one), and the truth's cause
named in at least ``MIN_LIVE_HITS`` packs, the same likely cause as recorded in at least ``MIN_SAME_CAUSE`` of the
packs whose recorded answer names it. Live sources hold no deploy records (the built-in ``deploys`` section), so a
cause resting on one alone is named only recorded. ``pytest tests/incidents/test_incidents_live.py -s`` prints both
scores and each pack's two likely causes.
"""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.tools.scenario import Scenario, load_user_scenarios

from .live import has_prometheus, run_live
from .test_incidents import NAMES, PACKS_DIR, Expectation, Outcome, _run_all, judge, load_expected

# Raise as the live paths learn (recorded: test_incidents.MIN_HITS).
MIN_LIVE_HITS = 63
MIN_SAME_CAUSE = 58
REQUIRE_PROMETHEUS_ENV = "DIAGNOSIS_TEST_REQUIRE_PROMETHEUS"

_CLAIM_ID = re.compile(r"\s*\[c\d+\]")


def _cause(outcome: Outcome) -> str:
    return _CLAIM_ID.sub("", outcome.cause)


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    return load_user_scenarios(PACKS_DIR)


@pytest.fixture(scope="module")
def expected() -> dict[str, Expectation]:
    return load_expected()


@pytest.fixture(scope="module")
def recorded(scenarios: dict[str, Scenario], expected: dict[str, Expectation]) -> dict[str, Outcome]:
    return asyncio.run(_run_all(scenarios, expected))


@pytest.fixture(scope="module")
def live(scenarios: dict[str, Scenario], expected: dict[str, Expectation]) -> dict[str, Outcome]:
    if not has_prometheus():
        if os.environ.get(REQUIRE_PROMETHEUS_ENV) == "1":
            pytest.fail("prometheus and promtool are not installed")
        pytest.skip("prometheus and promtool are not installed (Debian package prometheus)")
    out: dict[str, Outcome] = {}
    for name in NAMES:
        (run, _calls), _served = run_live(scenarios[name], prometheus=True)
        out[name] = judge(scenarios[name], expected[name], run, verified_earlier=False)
    return out


def _table(recorded: dict[str, Outcome], live: dict[str, Outcome]) -> str:
    rows = [f"{'pack':40} {'rec':>4} {'live':>4}   likely cause: recorded | live"]
    for name in NAMES:
        r, lv = recorded[name], live[name]
        same = "=" if _cause(r) == _cause(lv) else "!"
        rows.append(
            f"{name:40} {'hit' if r.hit else '-':>4} {'hit' if lv.hit else '-':>4} {same} "
            f"{_cause(r)[:56]!r} | {_cause(lv)[:56]!r}"
        )
    hits_r, hits_l = sum(o.hit for o in recorded.values()), sum(o.hit for o in live.values())
    agree = sum(_cause(recorded[n]) == _cause(live[n]) for n in NAMES if recorded[n].hit)
    rows.append(f"cause named: recorded {hits_r}/{len(NAMES)}, live {hits_l}/{len(NAMES)}; same likely cause: {agree}")
    return "\n".join(rows)


def test_every_live_run_succeeds_and_states_nothing_false(live: dict[str, Outcome]) -> None:
    """R-A-6, R-V-4: a safe answer for every pack, and no false confirmed statement live."""
    failed = {n: o.run.status for n, o in live.items() if o.run.status != run_pb2.RUN_STATUS_SUCCESS}
    assert not failed
    false = {n: o.false_statements for n, o in live.items() if o.false_statements}
    assert not false


@pytest.mark.requirement("R-V-1")
def test_the_corpus_scores_live_about_as_well_as_recorded(
    recorded: dict[str, Outcome], live: dict[str, Outcome], capsys: pytest.CaptureFixture[str]
) -> None:
    table = _table(recorded, live)
    with capsys.disabled():
        print("\n" + table)
    assert sum(o.hit for o in live.values()) >= MIN_LIVE_HITS, table
    same = [n for n in NAMES if recorded[n].hit and _cause(recorded[n]) == _cause(live[n])]
    assert len(same) >= MIN_SAME_CAUSE, table
