"""The ground truth of a recorded scenario pack, for tests that check an answer against it."""

from __future__ import annotations

from diagnosis_server.tools.scenario import Scenario, Truth


def truth_of(scenario: Scenario) -> Truth:
    """The pack's ``truth`` (every bundled pack has one; a test of a pack without it fails here)."""
    assert scenario.truth is not None, f"scenario {scenario.name!r} has no truth"
    return scenario.truth
