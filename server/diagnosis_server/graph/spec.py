"""The graph specification: its nodes, their routes, owned fields, crash outcomes and labels, and its limits.

``GRAPH`` is built and validated once, at import, in the spirit of LangGraph's ``StateGraph(...).compile()``:
every route target is a node, every node is reachable from START and reaches END, every field has one
owner, every crash outcome is routed. The routing table (R-R-1..R-R-7), field ownership (R-S-1), the
engine's crash mapping, the fallbacks' reason codes, the trace's end reasons and the eval report's
abbreviations are all read from it; adding a node is one ``NodeSpec`` here and one module in ``nodes/``.

``Retry(fallback)`` means: run the same node once more with the same input if it has not been retried
in this cycle, else go to ``fallback``. An unknown key is a programming error: it raises, never guesses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from diagnosis.v1 import run_pb2
from diagnosis_server.agents.base import AgentRole
from diagnosis_server.conversions import enum_short_name
from diagnosis_server.limits import DEFAULT_LIMITS, Limits

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

# The owners of the fields no node writes: the run's inputs, and the engine's own bookkeeping.
ENGINE: Final = "engine"
INPUT: Final = "input"

MAX_TECHNICAL_RETRIES: Final = 1  # per node and cycle (R-R-1)
MAX_EVIDENCE_RETRIES: Final = 1  # per run (R-R-4)


class GraphSpecError(ValueError):
    """The specification is not a graph the engine can run (raised once, when it is built)."""


class RoutingError(RuntimeError):
    """An outcome with no route: a programming error, raised at once (fail closed)."""


def node_label(node: int) -> str:
    return enum_short_name(N, node)


def outcome_label(outcome: int) -> str:
    return enum_short_name(O, outcome)


@dataclass(frozen=True, slots=True)
class NodeSpec:
    name: int
    # outcome -> route: exactly the outcomes the node may return.
    routes: Mapping[int, Route]
    # The state fields only this node writes (R-S-1).
    owns: frozenset[str]
    # The eval report's route letter, and the node's name in its legend.
    abbreviation: str
    title: str
    # What an unexpected exception inside the node means for the route (fail closed); None: it ends the run.
    crash_outcome: int | None = None
    # The agent the node asks, if any: a crashed attempt of one gets its step record like any other.
    role: AgentRole | None = None
    # The pre-verification fallback's reason code once this node's failures reach it.
    exhausted_reason: str = ""
    # The trace's end reason of a run that ends at this node (a fallback's own reason comes first).
    end_reason: str = ""

    @property
    def label(self) -> str:
        """The node's short name in lower case (``verified_input_builder``), as reports spell it."""
        return enum_short_name(N, self.name, lower=True)

    @property
    def fallback(self) -> bool:
        return self.label.endswith("fallback")


@dataclass(frozen=True)
class GraphSpec:
    nodes: tuple[NodeSpec, ...]
    start: int
    # Where the engine sends a run that reached the recursion limit (R-R-7).
    recursion_fallback: int
    engine_fields: frozenset[str]
    input_fields: frozenset[str]
    limits: Limits = DEFAULT_LIMITS
    _by_name: Mapping[int, NodeSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {node.name: node for node in self.nodes})
        problems = [*self._node_problems(), *self._route_problems(), *self._owner_problems()]
        if not problems:
            problems = self._reach_problems()
        if problems:
            raise GraphSpecError("; ".join(problems))

    def _node_problems(self) -> Iterable[str]:
        if len(self._by_name) != len(self.nodes):
            yield "a node is specified twice"
        for name in (self.start, self.recursion_fallback):
            if name not in self._by_name:
                yield f"{node_label(name) if name in N.values() else name} is not a node"
        if self.limits.recursion_limit < 1 or self.limits.max_events < 0:
            yield "the recursion limit must be positive and the event bound not negative"

    def _route_problems(self) -> Iterable[str]:
        for node in self.nodes:
            label = node_label(node.name)
            if not node.routes:
                yield f"{label} routes no outcome"
            if node.crash_outcome is not None and node.crash_outcome not in node.routes:
                yield f"{label}'s crash outcome {outcome_label(node.crash_outcome)} has no route"
            for outcome, target in node.routes.items():
                if outcome not in O.values() or outcome == O.NODE_OUTCOME_UNSPECIFIED:
                    yield f"{label} routes an outcome that does not exist: {outcome}"
                for name in _targets(target):
                    if name not in self._by_name:
                        yield f"({label}, {outcome_label(outcome)}) routes to {name}, which is not a node"

    def _owner_problems(self) -> Iterable[str]:
        owners: dict[str, list[str]] = {}
        for owner, names in self._owner_sets():
            for name in names:
                owners.setdefault(name, []).append(owner)
        for name, of in owners.items():
            if len(of) > 1:
                yield f"field {name!r} is owned by {' and '.join(of)}"

    def _owner_sets(self) -> Iterable[tuple[str, frozenset[str]]]:
        yield INPUT, self.input_fields
        for node in self.nodes:
            yield node_label(node.name), node.owns
        yield ENGINE, self.engine_fields

    def _reach_problems(self) -> list[str]:
        problems = []
        reached = _closure([self.start], lambda name: self._next(name))
        for node in self.nodes:
            if node.name not in reached:
                problems.append(f"{node_label(node.name)} is not reachable from {node_label(self.start)}")
        ending = {node.name for node in self.nodes if END in node.routes.values()}
        ends = _closure(ending, lambda name: [n.name for n in self.nodes if name in self._next(n.name)])
        for node in self.nodes:
            if node.name not in ends:
                problems.append(f"no path from {node_label(node.name)} reaches END")
        return problems

    def _next(self, name: int) -> set[int]:
        return {target for route in self._by_name[name].routes.values() for target in _targets(route)}

    def check_state(self, state: type) -> None:
        """Every field of the ``state`` dataclass has an owner here, and every owned field is one of them."""
        fields = {f.name for f in dataclasses.fields(state)}
        owned = set(self.field_owners)
        problems = [f"field {name!r} has no owner" for name in sorted(fields - owned)]
        problems += [f"{name!r} is owned but is no field of {state.__name__}" for name in sorted(owned - fields)]
        if problems:
            raise GraphSpecError("; ".join(problems))

    def node(self, name: int) -> NodeSpec:
        return self._by_name[name]

    def get(self, name: int) -> NodeSpec | None:
        return self._by_name.get(name)

    @property
    def names(self) -> frozenset[int]:
        return frozenset(self._by_name)

    @property
    def routes(self) -> dict[tuple[int, int], Route]:
        return {(node.name, outcome): target for node in self.nodes for outcome, target in node.routes.items()}

    @property
    def field_owners(self) -> dict[str, int | str]:
        owners: dict[str, int | str] = dict.fromkeys(sorted(self.input_fields), INPUT)
        for node in self.nodes:
            owners.update(dict.fromkeys(sorted(node.owns), node.name))
        owners.update(dict.fromkeys(sorted(self.engine_fields), ENGINE))
        return owners

    def route(self, node: int, outcome: int) -> Route:
        spec = self._by_name.get(node)
        target = spec.routes.get(outcome) if spec is not None else None
        if target is None:
            raise RoutingError(f"no route for ({node_label(node)}, {outcome_label(outcome)})")
        return target

    def next_node(self, node: int, outcome: int, *, retries_used: int) -> int | _End:
        """Resolve a route, given how many technical retries this node has used in this cycle."""
        target = self.route(node, outcome)
        if isinstance(target, Retry):
            return node if retries_used < MAX_TECHNICAL_RETRIES else target.fallback
        return target

    def end_reason(self, terminal: int) -> str:
        spec = self._by_name.get(terminal)
        return spec.end_reason if spec is not None and spec.end_reason else "UNKNOWN"


def _targets(route: Route) -> tuple[int, ...]:
    if isinstance(route, Retry):
        return (route.fallback,)
    return () if isinstance(route, _End) else (route,)


def _closure(start: Iterable[int], step: Callable[[int], Iterable[int]]) -> set[int]:
    seen = set(start)
    todo = list(seen)
    while todo:
        for name in step(todo.pop()):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


PLANNER, EXECUTOR, GATEKEEPER = N.NODE_NAME_PLANNER, N.NODE_NAME_EXECUTOR, N.NODE_NAME_GATEKEEPER
BUILDER, VERIFIER, COMPOSER = N.NODE_NAME_VERIFIED_INPUT_BUILDER, N.NODE_NAME_VERIFIER, N.NODE_NAME_COMPOSER
PRE_FALLBACK, POST_FALLBACK = N.NODE_NAME_PRE_VERIFICATION_FALLBACK, N.NODE_NAME_POST_VERIFICATION_FALLBACK


# The model failures of a node whose agent may be asked again (R-R-1): one retry, then ``fallback``.
def _agent_failures(fallback: int) -> dict[int, Route]:
    return {
        O.NODE_OUTCOME_INVALID_OUTPUT: Retry(fallback),
        O.NODE_OUTCOME_RETRYABLE_FAILED: Retry(fallback),
        O.NODE_OUTCOME_NON_RETRYABLE_FAILED: fallback,
    }


GRAPH: Final = GraphSpec(
    nodes=(
        NodeSpec(  # R-R-1
            PLANNER,
            # An evidence retry with nothing to call ends the retry, not the run: the Composer answers from what the
            # earlier cycle's Verifier allowed.
            routes={
                O.NODE_OUTCOME_OK: EXECUTOR,
                O.NODE_OUTCOME_NOTHING_TO_CALL: COMPOSER,
                **_agent_failures(PRE_FALLBACK),
            },
            owns=frozenset({"cycle", "planner_mode", "plan"}),
            abbreviation="P",
            title="planner",
            crash_outcome=O.NODE_OUTCOME_NON_RETRYABLE_FAILED,
            role="planner",
            exhausted_reason="PLANNER_FAILED",
        ),
        NodeSpec(  # never retried (R-R-2)
            EXECUTOR,
            routes={
                O.NODE_OUTCOME_OK: GATEKEEPER,
                O.NODE_OUTCOME_INVALID_OUTPUT: PRE_FALLBACK,
                O.NODE_OUTCOME_TOOL_BLOCKED: PRE_FALLBACK,
                O.NODE_OUTCOME_FAILED: PRE_FALLBACK,
            },
            owns=frozenset({"executor_parse", "executor_parse_status"}),
            abbreviation="E",
            title="executor",
            crash_outcome=O.NODE_OUTCOME_FAILED,
            role="executor",
        ),
        NodeSpec(  # the normalized ceiling (R-GK-6, R-GK-7)
            GATEKEEPER,
            routes={
                O.NODE_OUTCOME_CEILING_PASS: BUILDER,
                O.NODE_OUTCOME_CEILING_LOW_CONFID: BUILDER,
                O.NODE_OUTCOME_CEILING_REJECT: PRE_FALLBACK,
            },
            owns=frozenset({"gatekeeper_result", "verdict_ceiling", "recorded_calls", "bound_values"}),
            abbreviation="G",
            title="gatekeeper",
            crash_outcome=O.NODE_OUTCOME_CEILING_REJECT,
        ),
        NodeSpec(  # R-GK-6
            BUILDER,
            routes={O.NODE_OUTCOME_OK: VERIFIER, O.NODE_OUTCOME_NO_VERIFIED_EVIDENCE: PRE_FALLBACK},
            owns=frozenset({"verifier_input", "verifier_input_bytes"}),
            abbreviation="B",
            title="verified-input builder",
            crash_outcome=O.NODE_OUTCOME_NO_VERIFIED_EVIDENCE,
        ),
        NodeSpec(  # the effective verdict (R-R-3..R-R-6)
            VERIFIER,
            routes={
                O.NODE_OUTCOME_VERDICT_PASS: COMPOSER,
                O.NODE_OUTCOME_VERDICT_LOW_CONFID: COMPOSER,
                O.NODE_OUTCOME_VERDICT_LOW_CONFID_EVIDENCE_GAP: PLANNER,
                O.NODE_OUTCOME_VERDICT_REJECT: COMPOSER,
                **_agent_failures(PRE_FALLBACK),
            },
            owns=frozenset(
                {
                    "verifier_status",
                    "verifier_output",
                    "model_verdict",
                    "effective_verdict",
                    "allowed_material",
                    "evidence_retry_count",
                    "retry_context",
                    "verified_before_retry",
                }
            ),
            abbreviation="V",
            title="verifier",
            crash_outcome=O.NODE_OUTCOME_NON_RETRYABLE_FAILED,
            role="verifier",
            exhausted_reason="VERIFIER_FAILED",
        ),
        NodeSpec(  # R-R-1, R-A-5
            COMPOSER,
            routes={O.NODE_OUTCOME_OK: END, **_agent_failures(POST_FALLBACK)},
            owns=frozenset({"composer_output", "composer_refusal"}),
            abbreviation="C",
            title="composer",
            crash_outcome=O.NODE_OUTCOME_NON_RETRYABLE_FAILED,
            role="composer",
            end_reason="COMPOSED",
        ),
        # The fallbacks end the run with a safe answer (R-A-6).
        NodeSpec(
            PRE_FALLBACK,
            # A failed evidence retry never discards what an earlier cycle verified: the Composer answers from it.
            routes={O.NODE_OUTCOME_OK: END, O.NODE_OUTCOME_EARLIER_VERIFIED: COMPOSER},
            owns=frozenset({"pre_fallback_output", "fallback_reason", "retry_failure"}),
            abbreviation="PRE",
            title="pre-verification fallback",
        ),
        NodeSpec(
            POST_FALLBACK,
            routes={O.NODE_OUTCOME_OK: END},
            owns=frozenset({"post_fallback_output"}),
            abbreviation="POST",
            title="post-verification fallback",
            end_reason="COMPOSER_FALLBACK",
        ),
    ),
    start=PLANNER,
    recursion_fallback=PRE_FALLBACK,
    input_fields=frozenset({"run_id", "question", "scenario"}),
    engine_fields=frozenset({"orchestration_events", "dropped_events", "steps", "routed_by", "technical_retries"}),
)
