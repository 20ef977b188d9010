"""Route tests: the routing table is complete, unambiguous and terminating (R-R-1..R-R-7)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.graph import routing
from diagnosis_server.graph.routing import END, ROUTES, Retry, RoutingError, next_node, outcomes_of, route

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741

ALL_NODES = [v for v in N.values() if v != N.NODE_NAME_UNSPECIFIED]
ALL_OUTCOMES = [v for v in O.values() if v != O.NODE_OUTCOME_UNSPECIFIED]


@pytest.mark.requirement("R-R-7")
@pytest.mark.parametrize("node", ALL_NODES, ids=N.Name)
@pytest.mark.parametrize("outcome", ALL_OUTCOMES, ids=O.Name)
def test_every_node_outcome_pair_has_exactly_one_route_or_fails_closed(node: int, outcome: int) -> None:
    """Every (node, outcome) pair from the enums: exactly one route, or a RoutingError (never a guess)."""
    matches = [target for (n, o), target in ROUTES.items() if (n, o) == (node, outcome)]
    if (node, outcome) in ROUTES:
        assert len(matches) == 1
        assert route(node, outcome) == matches[0]
    else:
        with pytest.raises(RoutingError):
            route(node, outcome)


@pytest.mark.requirement("R-R-7")
def test_every_node_has_routes_and_only_known_targets() -> None:
    for node in ALL_NODES:
        assert outcomes_of(node), f"{N.Name(node)} has no outcomes"
    for target in ROUTES.values():
        resolved = target.fallback if isinstance(target, Retry) else target
        assert resolved is END or resolved in ALL_NODES


@pytest.mark.requirement("R-R-1")
def test_planner_verifier_composer_retry_once_then_fallback() -> None:
    for node, fallback in (
        (routing.PLANNER, routing.PRE_FALLBACK),
        (routing.VERIFIER, routing.PRE_FALLBACK),
        (routing.COMPOSER, routing.POST_FALLBACK),
    ):
        for outcome in (O.NODE_OUTCOME_INVALID_OUTPUT, O.NODE_OUTCOME_RETRYABLE_FAILED):
            assert next_node(node, outcome, retries_used=0) == node
            assert next_node(node, outcome, retries_used=1) == fallback
        assert next_node(node, O.NODE_OUTCOME_NON_RETRYABLE_FAILED, retries_used=0) == fallback


@pytest.mark.requirement("R-R-2")
def test_executor_failures_go_straight_to_the_pre_verification_fallback() -> None:
    for outcome in (O.NODE_OUTCOME_INVALID_OUTPUT, O.NODE_OUTCOME_TOOL_BLOCKED, O.NODE_OUTCOME_FAILED):
        assert next_node(routing.EXECUTOR, outcome, retries_used=0) == routing.PRE_FALLBACK
    assert not any(isinstance(t, Retry) for (n, _), t in ROUTES.items() if n == routing.EXECUTOR)


@pytest.mark.requirement("R-GK-6", "R-R-3", "R-R-4", "R-R-5", "R-R-6")
def test_verdict_routes() -> None:
    assert route(routing.GATEKEEPER, O.NODE_OUTCOME_CEILING_REJECT) == routing.PRE_FALLBACK
    assert route(routing.BUILDER, O.NODE_OUTCOME_NO_VERIFIED_EVIDENCE) == routing.PRE_FALLBACK
    assert route(routing.VERIFIER, O.NODE_OUTCOME_VERDICT_PASS) == routing.COMPOSER
    assert route(routing.VERIFIER, O.NODE_OUTCOME_VERDICT_LOW_CONFID) == routing.COMPOSER
    assert route(routing.VERIFIER, O.NODE_OUTCOME_VERDICT_LOW_CONFID_EVIDENCE_GAP) == routing.PLANNER
    assert route(routing.VERIFIER, O.NODE_OUTCOME_VERDICT_REJECT) == routing.COMPOSER


def test_a_retry_with_nothing_to_call_and_a_failed_retry_end_at_the_composer() -> None:
    """An evidence retry ends the retry, not the run: the earlier cycle's verified answer is composed."""
    assert route(routing.PLANNER, O.NODE_OUTCOME_NOTHING_TO_CALL) == routing.COMPOSER
    assert route(routing.PRE_FALLBACK, O.NODE_OUTCOME_EARLIER_VERIFIED) == routing.COMPOSER
    assert route(routing.PRE_FALLBACK, O.NODE_OUTCOME_OK) is routing.END


def _walk() -> tuple[int, int]:
    """Explore every path under the business limits; return (paths, longest path in steps)."""
    paths = 0
    longest = 0
    # (node, steps, evidence retries, retries used per (node, cycle))
    stack: list[tuple[int, int, int, frozenset[tuple[int, int, int]]]] = [(routing.START, 0, 0, frozenset())]
    while stack:
        node, steps, evidence, used = stack.pop()
        assert steps < routing.DEFAULT_RECURSION_LIMIT, "a path exceeds the recursion limit"
        cycle = evidence + 1
        retries_used = max((c for n, cy, c in used if n == node and cy == cycle), default=0)
        for outcome in outcomes_of(node):
            if outcome == O.NODE_OUTCOME_VERDICT_LOW_CONFID_EVIDENCE_GAP and evidence >= routing.MAX_EVIDENCE_RETRIES:
                continue  # the business limit (R-R-4): the Verifier never reports this outcome twice
            nxt = next_node(node, outcome, retries_used=retries_used)
            if nxt is END:
                paths += 1
                longest = max(longest, steps + 1)
                continue
            assert isinstance(nxt, int)
            new_used = used | {(node, cycle, retries_used + 1)} if nxt == node else used
            new_evidence = evidence + (1 if outcome == O.NODE_OUTCOME_VERDICT_LOW_CONFID_EVIDENCE_GAP else 0)
            stack.append((nxt, steps + 1, new_evidence, new_used))
    return paths, longest


@pytest.mark.requirement("R-R-7")
def test_every_path_ends_within_the_recursion_limit() -> None:
    paths, longest = _walk()
    assert paths > 100
    # 18: a failed evidence retry's pre-verification fallback hands the earlier cycle's answer to the Composer,
    # whose two failures end in the post-verification fallback.
    assert longest <= 18 < routing.DEFAULT_RECURSION_LIMIT
