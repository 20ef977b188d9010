"""The routing table: ``(node, outcome) -> next node | END`` (R-R-1..R-R-7), read from the graph specification.

``Retry(fallback)`` means: run the same node once more with the same input if it has not been retried
in this cycle, else go to ``fallback``. An unknown key is a programming error: it raises, never guesses.
"""

from __future__ import annotations

from typing import Final

from diagnosis_server.graph.spec import (
    BUILDER,
    COMPOSER,
    END,
    EXECUTOR,
    GATEKEEPER,
    GRAPH,
    MAX_EVIDENCE_RETRIES,
    MAX_TECHNICAL_RETRIES,
    PLANNER,
    POST_FALLBACK,
    PRE_FALLBACK,
    VERIFIER,
    Retry,
    Route,
    RoutingError,
    _End,
    node_label,
    outcome_label,
)

__all__ = [
    "BUILDER",
    "COMPOSER",
    "DEFAULT_RECURSION_LIMIT",
    "END",
    "EXECUTOR",
    "GATEKEEPER",
    "MAX_EVIDENCE_RETRIES",
    "MAX_TECHNICAL_RETRIES",
    "OUTCOMES",
    "PLANNER",
    "POST_FALLBACK",
    "PRE_FALLBACK",
    "ROUTES",
    "START",
    "VERIFIER",
    "Retry",
    "Route",
    "RoutingError",
    "_End",
    "next_node",
    "node_label",
    "outcome_label",
    "outcomes_of",
    "route",
]

START: Final = GRAPH.start
DEFAULT_RECURSION_LIMIT: Final = GRAPH.limits.recursion_limit
ROUTES: Final[dict[tuple[int, int], Route]] = GRAPH.routes
OUTCOMES: Final[dict[int, frozenset[int]]] = {node.name: frozenset(node.routes) for node in GRAPH.nodes}


def outcomes_of(node: int) -> frozenset[int]:
    """The outcomes a node may return: exactly those the table routes."""
    return OUTCOMES.get(node, frozenset())


def route(node: int, outcome: int) -> Route:
    return GRAPH.route(node, outcome)


def next_node(node: int, outcome: int, *, retries_used: int) -> int | _End:
    """Resolve a route, given how many technical retries this node has used in this cycle."""
    return GRAPH.next_node(node, outcome, retries_used=retries_used)
