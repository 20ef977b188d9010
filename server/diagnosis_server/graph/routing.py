"""The routing table: ``(node, outcome) -> next node | END`` (R-R-1..R-R-7). The spec in code.

``Retry(fallback)`` means: run the same node once more with the same input if it has not been retried
in this cycle, else go to ``fallback``. An unknown key is a programming error: it raises, never guesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from diagnosis.v1 import run_pb2
from diagnosis_server.conversions import enum_short_name

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741


@dataclass(frozen=True, slots=True)
class Retry:
    fallback: int


@dataclass(frozen=True, slots=True)
class _End:
    def __repr__(self) -> str:
        return "END"


END: Final = _End()
Route = int | Retry | _End

PLANNER, EXECUTOR, GATEKEEPER = N.NODE_NAME_PLANNER, N.NODE_NAME_EXECUTOR, N.NODE_NAME_GATEKEEPER
BUILDER, VERIFIER, COMPOSER = N.NODE_NAME_VERIFIED_INPUT_BUILDER, N.NODE_NAME_VERIFIER, N.NODE_NAME_COMPOSER
PRE_FALLBACK, POST_FALLBACK = N.NODE_NAME_PRE_VERIFICATION_FALLBACK, N.NODE_NAME_POST_VERIFICATION_FALLBACK

START: Final = PLANNER
MAX_TECHNICAL_RETRIES: Final = 1  # per node and cycle (R-R-1)
MAX_EVIDENCE_RETRIES: Final = 1  # per run (R-R-4)
DEFAULT_RECURSION_LIMIT: Final = 25

ROUTES: Final[dict[tuple[int, int], Route]] = {
    # Planner (R-R-1)
    (PLANNER, O.NODE_OUTCOME_OK): EXECUTOR,
    (PLANNER, O.NODE_OUTCOME_INVALID_OUTPUT): Retry(PRE_FALLBACK),
    (PLANNER, O.NODE_OUTCOME_RETRYABLE_FAILED): Retry(PRE_FALLBACK),
    (PLANNER, O.NODE_OUTCOME_NON_RETRYABLE_FAILED): PRE_FALLBACK,
    # Executor: never retried (R-R-2)
    (EXECUTOR, O.NODE_OUTCOME_OK): GATEKEEPER,
    (EXECUTOR, O.NODE_OUTCOME_INVALID_OUTPUT): PRE_FALLBACK,
    (EXECUTOR, O.NODE_OUTCOME_TOOL_BLOCKED): PRE_FALLBACK,
    (EXECUTOR, O.NODE_OUTCOME_FAILED): PRE_FALLBACK,
    # Gatekeeper: the normalized ceiling (R-GK-6, R-GK-7)
    (GATEKEEPER, O.NODE_OUTCOME_CEILING_PASS): BUILDER,
    (GATEKEEPER, O.NODE_OUTCOME_CEILING_LOW_CONFID): BUILDER,
    (GATEKEEPER, O.NODE_OUTCOME_CEILING_REJECT): PRE_FALLBACK,
    # Verified-input builder (R-GK-6)
    (BUILDER, O.NODE_OUTCOME_OK): VERIFIER,
    (BUILDER, O.NODE_OUTCOME_NO_VERIFIED_EVIDENCE): PRE_FALLBACK,
    # Verifier: effective verdict (R-R-3..R-R-6)
    (VERIFIER, O.NODE_OUTCOME_VERDICT_PASS): COMPOSER,
    (VERIFIER, O.NODE_OUTCOME_VERDICT_LOW_CONFID): COMPOSER,
    (VERIFIER, O.NODE_OUTCOME_VERDICT_LOW_CONFID_EVIDENCE_GAP): PLANNER,
    (VERIFIER, O.NODE_OUTCOME_VERDICT_REJECT): COMPOSER,
    (VERIFIER, O.NODE_OUTCOME_INVALID_OUTPUT): Retry(PRE_FALLBACK),
    (VERIFIER, O.NODE_OUTCOME_RETRYABLE_FAILED): Retry(PRE_FALLBACK),
    (VERIFIER, O.NODE_OUTCOME_NON_RETRYABLE_FAILED): PRE_FALLBACK,
    # Composer (R-R-1, R-A-5)
    (COMPOSER, O.NODE_OUTCOME_OK): END,
    (COMPOSER, O.NODE_OUTCOME_INVALID_OUTPUT): Retry(POST_FALLBACK),
    (COMPOSER, O.NODE_OUTCOME_RETRYABLE_FAILED): Retry(POST_FALLBACK),
    (COMPOSER, O.NODE_OUTCOME_NON_RETRYABLE_FAILED): POST_FALLBACK,
    # Fallbacks end the run with a safe answer (R-A-6)
    (PRE_FALLBACK, O.NODE_OUTCOME_OK): END,
    (POST_FALLBACK, O.NODE_OUTCOME_OK): END,
}


class RoutingError(RuntimeError):
    """An outcome with no route: a programming error, raised at once (fail closed)."""


def node_label(node: int) -> str:
    return enum_short_name(N, node)


def outcome_label(outcome: int) -> str:
    return enum_short_name(O, outcome)


OUTCOMES: Final[dict[int, frozenset[int]]] = {
    node: frozenset(outcome for (n, outcome) in ROUTES if n == node) for node in {n for n, _ in ROUTES}
}


def outcomes_of(node: int) -> frozenset[int]:
    """The outcomes a node may return: exactly those the table routes."""
    return OUTCOMES.get(node, frozenset())


def route(node: int, outcome: int) -> Route:
    try:
        return ROUTES[(node, outcome)]
    except KeyError:
        raise RoutingError(f"no route for ({node_label(node)}, {outcome_label(outcome)})") from None


def next_node(node: int, outcome: int, *, retries_used: int) -> int | _End:
    """Resolve a route, given how many technical retries this node has used in this cycle."""
    target = route(node, outcome)
    if isinstance(target, Retry):
        return node if retries_used < MAX_TECHNICAL_RETRIES else target.fallback
    return target
