"""The graph state: every cross-node field has one purpose, one owner and one update strategy (R-S-1).

The engine owns the state object of a run and writes it only through ``write`` after checking that the
writing node owns every field it writes; nodes never see the state itself, only their projections.

Every field is Replace, except ``orchestration_events``: a bounded Append owned by the engine (keep the
first ``max_events``, count what was dropped). Prompt text, model reasoning, complete tool output and
whole-state snapshots are never fields here (R-S-2): tool output stays in the store, keyed by run id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.composition.material import AllowedMaterial
from diagnosis_server.composition.suggestions import RecordedCall
from diagnosis_server.graph.spec import GRAPH
from diagnosis_server.graph.verified_cycle import VerifiedCycle
from diagnosis_server.protocols.executor import ExecutorParse
from diagnosis_server.protocols.planner import PlannerMode, PlanStep


@dataclass(slots=True)
class DiagnosisState:
    # Inputs: written once when the run starts.
    run_id: str
    question: str
    scenario: str
    # Planner: the plan of the current cycle and the cycle it belongs to.
    cycle: int = 0
    planner_mode: PlannerMode = PlannerMode.FULL
    plan: tuple[PlanStep, ...] = ()
    # Executor: the parsed contract (never its raw text).
    executor_parse: ExecutorParse | None = None
    executor_parse_status: int = contracts_pb2.PARSE_STATUS_NOT_RUN
    # Gatekeeper.
    gatekeeper_result: contracts_pb2.GatekeeperResult | None = None
    verdict_ceiling: int = contracts_pb2.VERDICT_UNSPECIFIED
    # What the answer may say of the run's recorded calls (ids, tools, arguments, times; never outputs).
    recorded_calls: tuple[RecordedCall, ...] = ()
    # The whole values passed bindings point at, by (invocation id, raw path): the guard grounds words in them.
    bound_values: Mapping[tuple[str, str], str] = field(default_factory=dict)
    # Verified-input builder: the Verifier's input and its canonical bytes (reused as-is on a retry, R-VI-4).
    verifier_input: contracts_pb2.VerifierInput | None = None
    verifier_input_bytes: bytes = b""
    # Verifier.
    verifier_status: int = run_pb2.NODE_OUTCOME_UNSPECIFIED
    verifier_output: contracts_pb2.VerifierOutput | None = None
    model_verdict: int = contracts_pb2.VERDICT_UNSPECIFIED
    effective_verdict: int = contracts_pb2.VERDICT_UNSPECIFIED
    allowed_material: AllowedMaterial | None = None
    evidence_retry_count: int = 0
    retry_context: contracts_pb2.RetryContext | None = None
    # The cycle verified before an evidence retry: the run's answer if the retry does not complete its own.
    verified_before_retry: VerifiedCycle | None = None
    # Composer and the fallbacks: each writes its own answer field.
    composer_output: contracts_pb2.ComposerOutput | None = None
    # The rules the Composer's last refused reply broke (its post-verification fallback says which).
    composer_refusal: tuple[str, ...] = ()
    post_fallback_output: contracts_pb2.ComposerOutput | None = None
    pre_fallback_output: contracts_pb2.ComposerOutput | None = None
    fallback_reason: str = ""
    # Why an evidence retry failed, when the pre-verification fallback handed the earlier verified answer on.
    retry_failure: str = ""
    # Engine: bounded Append of events, counters, and the event that routed into the current node.
    orchestration_events: tuple[run_pb2.OrchestrationEvent, ...] = ()
    dropped_events: int = 0
    steps: int = 0
    routed_by: run_pb2.OrchestrationEvent | None = None
    technical_retries: tuple[tuple[int, int], ...] = field(default=())

    def write(self, updates: Mapping[str, Any]) -> None:
        """Replace the given fields in place; only the engine calls this, after checking ownership."""
        for name, value in updates.items():
            setattr(self, name, value)


# One owner per field (R-S-1), as the graph specification says: the engine refuses a write by any other node.
GRAPH.check_state(DiagnosisState)
FIELD_OWNERS: Final[Mapping[str, int | str]] = GRAPH.field_owners

APPEND_FIELDS: Final = frozenset({"orchestration_events"})


def owned_fields(node: int) -> frozenset[str]:
    spec = GRAPH.get(node)
    return spec.owns if spec is not None else frozenset()
