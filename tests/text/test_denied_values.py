"""A statement that denies what a bound field states (a negated value, a zero count of what it counts) is
contradicted by it; a denial of what the field does not state is not (R-V-4)."""

from __future__ import annotations

import pytest

from diagnosis_server.text.polarity import denied_values, polarity


@pytest.mark.requirement("R-V-4")
@pytest.mark.parametrize(
    ("statement", "field"),
    [
        ("ledger-svc was never OOMKilled", "reason: OOMKilled"),
        ("ledger-svc was not OOMKilled", "reason: OOMKilled"),
        ("pod ledger-svc-7d9 has no restarts", "restartCount: 4"),
        ("ledger-svc served its requests without errors", "errors: 250"),
    ],
)
def test_a_denial_of_a_bound_field_is_a_conflict(statement: str, field: str) -> None:
    assert denied_values(statement, [field])
    assert polarity(statement, [field]).conflicts


@pytest.mark.requirement("R-V-4")
@pytest.mark.parametrize(
    ("statement", "field"),
    [
        ("pod ledger-svc-7d9 has no restarts", "restartCount: 0"),
        ("ledger-svc was not OOMKilled", "reason: Error"),
        ("ingest-worker's container can't start: ErrImagePull", "reason: ErrImagePull"),
        ("ledger-svc served its requests without errors", "requests: 1000"),
        # A number that measures or names (a port, an exit code) counts nothing: "no container" denies no port.
        ("no container of pod cartservice-6d8 has port 8080", "containerPort: 7070"),
        ("the job left no exit code behind", "exitCode: 137"),
    ],
)
def test_a_denial_the_field_does_not_contradict_is_no_conflict(statement: str, field: str) -> None:
    assert denied_values(statement, [field]) == ()
