"""The fail-closed property: whatever the agents write, every run ends stored and safe.

Hostile Executor, Verifier, Composer and Planner outputs (see ``strategies``) run through the real graph
and a real store; every example must end SUCCESS with a safe answer, no statement outside the allowed
material (R-A-1..R-A-4), verdicts under the ceiling (R-V-7), traceable evidence (R-C-5, R-V-5), and
nothing raw persisted (R-P-5, R-S-4).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from .conftest import PROPERTY_EXAMPLES
from .harness import Case, LoopHarness, RecordingStore, assert_safe_run, run_case
from .strategies import QuotingProvider, hostile_case

pytestmark = pytest.mark.property


@pytest.fixture(scope="module")
def harness() -> Iterator[LoopHarness]:
    loop = LoopHarness()
    try:
        yield loop
    finally:
        loop.close()


@settings(
    max_examples=PROPERTY_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(case=hostile_case())
def test_r_a_1_hostile_agents_never_break_a_run_or_leak_into_the_answer(harness: LoopHarness, case: Case) -> None:
    """R-A-1, R-A-4, R-A-6, R-P-5, R-P-6, R-S-4, R-V-7: fail closed on any agent output."""
    store = RecordingStore(harness.repository)
    outcome = harness.run(run_case(case, store, wrap=QuotingProvider))
    assert_safe_run(case, outcome)
