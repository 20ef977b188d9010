"""Running one reliability case through the real graph, and the safety checks every run must pass.

A ``Case`` is what an evaluation case holds (tool invocations with their outputs, raw agent outputs per
role), plus what the checks need to know about it: the distinctive tokens planted in claim statements,
forbidden fields, reasoning and tool outputs. ``run_case`` drives the real ``Orchestrator`` with the
``scripted`` provider over a real store; ``RecordingStore`` keeps a copy of every record the run writes,
so the checks can search everything that was persisted.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import AgentProvider, AgentRole
from diagnosis_server.agents.prompts import CATALOG_DIR
from diagnosis_server.agents.scripted import ScriptedProvider
from diagnosis_server.conversions import JsonObject, JsonValue, from_value, message_to_dict, to_struct, to_value
from diagnosis_server.graph.context import Limits, ToolEnvironment
from diagnosis_server.graph.orchestrator import Orchestrator, new_run_id
from diagnosis_server.store import NodeCommit, Repository, RunStore, open_repository
from diagnosis_server.tools.base import ToolError, Toolset
from tests.golden.leaks import Haystack, bidi_controls, strings

T = TypeVar("T")

MEMORY_URL = "sqlite+aiosqlite://"
RUN_TIMEOUT_S = 30.0
TOOL_NAMES = ("logs.search", "metrics.query", "deploys.list", "k8s.events", "topology.dependencies")

C = contracts_pb2.ClaimClassification
V = contracts_pb2.Verdict
CITABLE = frozenset(
    {
        C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
        C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        C.CLAIM_CLASSIFICATION_OVERSTATED,
    }
)
CONFIRMABLE = {
    V.VERDICT_PASS: frozenset({C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE}),
    V.VERDICT_LOW_CONFID: frozenset({C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION}),
    V.VERDICT_REJECT: frozenset({C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION}),
}
RANK = {V.VERDICT_REJECT: 0, V.VERDICT_LOW_CONFID: 1, V.VERDICT_PASS: 2}
# Issue 11: any other claim id makes the Executor output unusable (INVALID_OUTPUT).
CLAIM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")


# ---------------------------------------------------------------- cases


@dataclass(frozen=True, slots=True)
class Invocation:
    invocation_id: str
    tool_name: str
    output: JsonValue
    arguments: JsonObject = field(default_factory=dict)
    cycle: int = 1


@dataclass(frozen=True, slots=True)
class PlantedClaim:
    """A claim the Executor wrote, with the token only its statement holds."""

    claim_id: str
    statement: str
    token: str
    # Every binding of the claim was built to fail the Gatekeeper (or it has none): never verified.
    fails_gatekeeper: bool
    # Never a confirmed fact: a hypothesis, a causal clause, a restated injection, text behind a bidi override.
    guarded: bool = False
    # Never shown at all (its output is unusable, e.g. a claim id outside the pattern), though it may be persisted.
    never_shown: bool = False


@dataclass(slots=True)
class Case:
    question: str
    invocations: list[Invocation]
    outputs: dict[AgentRole, list[str]]
    claims: list[PlantedClaim] = field(default_factory=list)
    # Tokens that must never be persisted in any evaluation record nor reach the answer.
    secret_tokens: list[str] = field(default_factory=list)
    # Tokens of injected text in tool outputs: in the answer only inside an allowed claim's statement or quote.
    injection_tokens: list[str] = field(default_factory=list)
    # Tokens that must never reach the answer text nor the persisted composer output (they may be persisted
    # elsewhere): invented causes, Verifier rationale and gap text, Executor gap text, sentences in claim ids.
    answer_tokens: list[str] = field(default_factory=list)
    # Indexes of Executor outputs holding a claim id outside ``CLAIM_ID``: such an output is never used.
    bad_id_outputs: set[int] = field(default_factory=set)

    def by_cycle(self, run_id: str) -> dict[int, list[contracts_pb2.ToolInvocation]]:
        out: dict[int, list[contracts_pb2.ToolInvocation]] = {}
        for inv in self.invocations:
            out.setdefault(inv.cycle, []).append(
                contracts_pb2.ToolInvocation(
                    invocation_id=inv.invocation_id,
                    run_id=run_id,
                    tool_name=inv.tool_name,
                    arguments=to_struct(inv.arguments),
                    output=to_value(inv.output),
                    status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
                    cycle=inv.cycle,
                )
            )
        return out


class ReplayOnlyTool:
    """A tool the Planner may plan; its outputs come from the case's recordings."""

    description = "replayed from recorded outputs"
    input_schema: JsonObject = {"type": "object"}  # noqa: RUF012

    def __init__(self, name: str) -> None:
        self.name = name

    async def call(self, arguments: JsonObject) -> JsonValue:
        raise ToolError(f"{self.name} is replay-only")


def replay_tools(extra: Sequence[str] = ()) -> ToolEnvironment:
    names = dict.fromkeys([*TOOL_NAMES, *extra])
    return ToolEnvironment(toolset=Toolset(ReplayOnlyTool(name) for name in names))


# ---------------------------------------------------------------- the store, recorded


class RecordingStore:
    """A store (the run's writes go through to ``repository``), with a copy of every record a run writes
    (after the write succeeded)."""

    def __init__(self, repository: RunStore) -> None:
        self.repository = repository
        self.events: list[run_pb2.OrchestrationEvent] = []
        self.steps: list[run_pb2.NodeStep] = []
        self.runs: list[run_pb2.DiagnosisRun] = []
        # The node commits (no run record), each as (events, steps) counts.
        self.node_commits: list[tuple[str, int, int]] = []
        self.invocations: list[contracts_pb2.ToolInvocation] = []

    async def create_run(self, run: run_pb2.DiagnosisRun) -> None:
        await self.repository.create_run(run)
        self.runs.append(_copy(run))

    async def commit_node(self, commit: NodeCommit) -> run_pb2.DiagnosisRun | None:
        stored = await self.repository.commit_node(commit)
        self.events.extend(_copy(e) for e in commit.events)
        self.steps.extend(_copy(s) for s in commit.steps)
        if commit.run is not None:
            self.runs.append(_copy(commit.run))
        else:
            self.node_commits.append((commit.run_id, len(commit.events), len(commit.steps)))
        return stored

    async def finish_run(self, run: run_pb2.DiagnosisRun) -> run_pb2.DiagnosisRun:
        stored = await self.repository.finish_run(run)
        self.runs.append(_copy(run))
        return stored

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        await self.repository.add_tool_invocation(invocation)
        self.invocations.append(_copy(invocation))

    async def list_tool_invocations(self, run_id: str) -> list[contracts_pb2.ToolInvocation]:
        return await self.repository.list_tool_invocations(run_id)

    def evaluation_blob(self, stored: run_pb2.DiagnosisRun | None) -> bytes:
        """Every persisted record but the tool invocations (which hold tool output by design), as bytes."""
        parts = [m.SerializeToString() for m in (*self.events, *self.steps, *self.runs)]
        if stored is not None:
            parts.append(stored.SerializeToString())
        return b"\x00".join(parts)


def _copy(message: Any) -> Any:
    out = type(message)()
    out.CopyFrom(message)
    return out


# ---------------------------------------------------------------- running


@dataclass(slots=True)
class Outcome:
    run_id: str
    returned: run_pb2.DiagnosisRun
    stored: run_pb2.DiagnosisRun | None
    store: RecordingStore
    invocations: list[contracts_pb2.ToolInvocation]


async def run_case(
    case: Case,
    store: RecordingStore,
    *,
    wrap: Callable[[AgentProvider], AgentProvider] | None = None,
    provider: AgentProvider | None = None,
    limits: Limits | None = None,
    tools: ToolEnvironment | None = None,
    run_id: str | None = None,
    finish_retry_s: float = 5.0,
) -> Outcome:
    """Runs ``case`` (its scripted outputs, or ``provider``, optionally wrapped) and reads back what was stored."""
    run_id = run_id or new_run_id()
    base = provider or ScriptedProvider(case.outputs, invocations_by_cycle=case.by_cycle(run_id))
    provider = wrap(base) if wrap is not None else base
    environment = tools or replay_tools([inv.tool_name for inv in case.invocations])
    orchestrator = Orchestrator(
        store=cast(RunStore, store),
        provider=provider,
        tools_for=lambda _scenario: environment,
        limits=limits or Limits(),
        finish_retry_s=finish_retry_s,
    )
    returned = await orchestrator.run(question=case.question, scenario="", run_id=run_id)
    stored = await store.repository.get_run(run_id)
    invocations = await store.repository.list_tool_invocations(run_id)
    return Outcome(run_id, returned, stored, store, invocations)


class LoopHarness:
    """One event loop and one in-memory store for a whole module of synchronous (hypothesis) tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.repository: Repository = self.loop.run_until_complete(open_repository(MEMORY_URL))

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = RUN_TIMEOUT_S) -> T:
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def close(self) -> None:
        self.loop.run_until_complete(self.repository.close())
        self.loop.close()


# ---------------------------------------------------------------- the checks


def prompt_lines() -> list[str]:
    """Distinctive lines of every prompt of the catalog: none may ever be persisted."""
    lines: list[str] = []
    for path in sorted(Path(CATALOG_DIR).glob("*.md")):
        text = path.read_text(encoding="utf-8")
        candidates = sorted({line.strip() for line in text.splitlines() if len(line.strip()) > 50}, key=len)
        lines.extend(candidates[-4:])
    return lines


PROMPT_LINES = [line.encode() for line in prompt_lines()]


def allowed_claims(run: run_pb2.DiagnosisRun) -> dict[str, str]:
    """claim id -> statement of the claims an answer may state: classified citable and verified."""
    evaluation = run.self_evaluation.verifier_evaluation
    verified = {c.claim_id: c.statement for c in evaluation.verified_executor_output.claims}
    return {
        c.claim_id: verified[c.claim_id]
        for c in evaluation.claim_checks
        if c.classification in CITABLE and c.claim_id in verified
    }


def assert_safe_run(case: Case, outcome: Outcome, *, expect_success: bool = True) -> None:
    """The safety properties every run holds, whatever its agents did (R-A-1..6, R-P-5, R-P-6, R-S-4, R-V-7)."""
    stored = outcome.stored
    assert stored is not None, "the run was stored"
    assert stored.status != run_pb2.RUN_STATUS_RUNNING, "the run is never left RUNNING"
    if stored.status == run_pb2.RUN_STATUS_FAILED:
        assert stored.failure_reason, "a FAILED run says why"
        assert not expect_success, f"FAILED although a safe answer was possible: {stored.failure_reason}"
        assert not stored.answer_text
    else:
        assert stored.status == run_pb2.RUN_STATUS_SUCCESS
        assert stored.answer_text.strip(), "a SUCCESS run has an answer (R-A-6)"
    assert outcome.returned.status == stored.status
    assert_answer_safe(case, stored)
    assert_verdict_bounded(stored)
    assert_evidence_traceable(stored, outcome.invocations)
    assert_persisted_clean(case, outcome)
    assert_nodes_whole(outcome)


def shown_texts(run: run_pb2.DiagnosisRun) -> str:
    """The answer text and every string of the persisted composer output (the answer and its audit copy)."""
    parts = [run.answer_text]
    if run.HasField("answer"):
        parts.extend(strings(message_to_dict(run.answer), keys=False))
    evaluation = run.self_evaluation.verifier_evaluation
    if evaluation.HasField("composer_output"):
        parts.extend(strings(message_to_dict(evaluation.composer_output), keys=False))
    return "\n".join(parts)


def _has(haystack: Haystack, token: str) -> bool:
    """``token`` in the normalized text, also reversed (text hidden behind a right-to-left override)."""
    return token in haystack or token[::-1] in haystack


def assert_answer_safe(case: Case, run: run_pb2.DiagnosisRun) -> None:
    """What the user reads holds nothing unverified, compared after the suite's own normalization (golden.leaks)."""
    answer = Haystack(run.answer_text)
    shown = Haystack(shown_texts(run))
    evaluation = run.self_evaluation.verifier_evaluation
    allowed = allowed_claims(run)
    allowed_pairs = set(allowed.items())
    quotes = [e.matched_text for e in evaluation.verified_evidence if e.claim_id in allowed]
    allowed_text = Haystack("\n".join([*allowed.values(), *quotes]))
    for claim in case.claims:
        if (claim.claim_id, claim.statement) not in allowed_pairs:
            assert not _has(shown, claim.token), f"claim {claim.claim_id!r} outside the allowed material leaked (R-A-1)"
        if claim.fails_gatekeeper:
            assert not _has(shown, claim.token), f"failed-binding claim {claim.claim_id!r} reached the answer"
        if claim.never_shown:
            assert not _has(shown, claim.token), f"claim {claim.claim_id!r} of an unusable output reached the answer"
    for token in case.secret_tokens:
        assert not _has(shown, token), "forbidden-field or reasoning text reached the answer (R-A-1)"
    for token in case.answer_tokens:
        assert not _has(shown, token), "model-written text (a cause, a rationale, a gap, an id) reached the answer"
    for token in case.injection_tokens:
        if _has(answer, token):
            assert _has(allowed_text, token), "injected tool text reached the answer outside an allowed claim"
    assert not bidi_controls(run.answer_text), "bidi controls are shown to the user"
    executed = sum(1 for node in run.orchestration_trace.path if node == run_pb2.NODE_NAME_EXECUTOR)
    if 0 in case.bad_id_outputs and executed:
        assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK, (
            "an Executor output with a claim id outside the pattern was used (issue 11: INVALID_OUTPUT)"
        )
    elif any(0 < index < executed for index in case.bad_id_outputs):
        # An evidence retry's invalid output is not used, and the first cycle's verified answer stands: the
        # Composer (or its fallback) answers from what that cycle's Verifier allowed.
        assert run.answer.source != contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK, (
            "a failed evidence retry discarded the first cycle's verified answer"
        )
    shown_items = (*run.answer.confirmed_facts, *run.answer.possible_directions, run.answer.likely_cause)
    cited = {cid for item in shown_items for cid in item.claim_ids}
    assert cited <= set(allowed), "the answer cites a claim outside the allowed material"
    if run.answer.source == contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK:
        # R-A-4, R-P-6: no Executor claim at all, no verdicts, the failure reason persisted.
        for claim in case.claims:
            assert not _has(answer, claim.token), "a pre-verification fallback answer holds an Executor claim"
        assert not any(item.claim_ids for section in _sections(run.answer) for item in section)
        assert not evaluation.HasField("model_verdict")
        assert not evaluation.HasField("effective_verdict")
        assert evaluation.failure_reason
        assert run.verdict == V.VERDICT_UNSPECIFIED
    if run.answer.verdict == V.VERDICT_REJECT:
        assert not run.answer.possible_directions, "a REJECT answer gives no possible direction (R-A-3)"
    # R-A-2: a claim is presented as a confirmed fact only when the verdict lets it be confirmed, and never
    # when it is a hypothesis, a causal clause, a restated injection or hides text behind a bidi override.
    confirmable = CONFIRMABLE.get(run.answer.verdict, frozenset())
    classes = {c.claim_id: c.classification for c in evaluation.claim_checks}
    for item in run.answer.confirmed_facts:
        text = Haystack(item.text)
        for claim in case.claims:
            if _has(text, claim.token):
                assert classes.get(claim.claim_id) in confirmable, "a claim that is not confirmed is shown as confirmed"
                assert not claim.guarded, "a hypothesis, causal or injected claim is shown as a confirmed fact"


def _sections(answer: contracts_pb2.ComposerOutput) -> list[Any]:
    return [answer.confirmed_facts, answer.possible_directions, answer.evidence_gaps, answer.next_steps]


def assert_verdict_bounded(run: run_pb2.DiagnosisRun) -> None:
    """R-V-1, R-V-7: the effective verdict never exceeds the ceiling nor the model verdict."""
    evaluation = run.self_evaluation.verifier_evaluation
    if not evaluation.HasField("effective_verdict"):
        return
    effective = evaluation.effective_verdict
    assert effective in RANK
    assert evaluation.verdict == effective == run.verdict
    assert RANK[effective] <= RANK.get(evaluation.verdict_ceiling, -1), "the effective verdict exceeds the ceiling"
    assert RANK[effective] <= RANK.get(evaluation.model_verdict, -1), "the effective verdict exceeds the model's"
    if run.status == run_pb2.RUN_STATUS_SUCCESS:
        assert run.answer.verdict == effective
    if effective == V.VERDICT_PASS:
        critical = [c.classification for c in evaluation.claim_checks if c.critical]
        assert critical, "PASS needs a critical claim"
        assert all(
            c in (C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE)
            for c in critical
        )
        assert C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION in critical
        assert evaluation.groundedness_score >= 0.5
        assert evaluation.verdict_ceiling == V.VERDICT_PASS


def assert_evidence_traceable(run: run_pb2.DiagnosisRun, invocations: Sequence[contracts_pb2.ToolInvocation]) -> None:
    """R-C-5, R-VI-1, R-V-5: verified evidence points at this run's recorded output; refs at verified evidence."""
    evaluation = run.self_evaluation.verifier_evaluation
    by_id: dict[str, list[contracts_pb2.ToolInvocation]] = {}
    for inv in invocations:
        assert inv.run_id == run.run_id, "an invocation of another run is listed under this run (R-S-4)"
        by_id.setdefault(inv.invocation_id, []).append(inv)
    checked = evaluation.gatekeeper_result.checked_bindings
    for item in evaluation.verified_evidence:
        found = by_id.get(item.source_invocation_id, [])
        assert len(found) == 1, f"verified evidence cites {item.source_invocation_id!r}, not one of this run's"
        inv = found[0]
        assert inv.tool_name == item.tool_name
        assert inv.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK
        assert _holds(_resolve(_plain(inv.output), item.raw_path), item.matched_text)
        source = checked[item.checked_binding_index]
        assert source.passed and not source.failed_rules
        assert (source.claim_id, source.source_invocation_id, source.raw_path) == (
            item.claim_id,
            item.source_invocation_id,
            item.raw_path,
        )
    passed_claims = {c.claim_id for c in checked if c.passed and not c.failed_rules}
    verified_ids = [c.claim_id for c in evaluation.verified_executor_output.claims]
    assert set(verified_ids) <= passed_claims, "a claim without a passed binding reached the Verifier (R-VI-1)"
    assert len(verified_ids) == len(set(verified_ids)), "a duplicated claim id reached the Verifier"
    evidence_keys = {
        (e.claim_id, e.source_invocation_id, e.tool_name, e.raw_path) for e in evaluation.verified_evidence
    }
    for check in evaluation.claim_checks:
        assert check.claim_id in verified_ids, "a claim check for a claim the Verifier never saw"
        for ref in check.evidence_refs:
            assert any(
                all(not given or given == have for given, have in zip(_ref(ref), key, strict=True))
                for key in evidence_keys
                if key[0] == check.claim_id
            ), "an evidence ref matches no verified evidence of its claim (R-V-5)"
        if check.classification == C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION:
            assert check.evidence_refs, "a direct observation without matching verified evidence (R-V-5)"


def _ref(ref: contracts_pb2.EvidenceRef) -> tuple[str, str, str, str]:
    return (ref.claim_id, ref.source_invocation_id, ref.tool_name, ref.raw_path)


def _plain(value: Any) -> JsonValue:
    return from_value(value)


def _resolve(document: JsonValue, pointer: str) -> JsonValue:
    """RFC 6901, written here again so the check does not trust the Gatekeeper's own resolver."""
    assert pointer == "" or pointer.startswith("/")
    value = document
    for token in pointer.split("/")[1:] if pointer else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            assert token in value
            value = value[token]
        else:
            assert isinstance(value, list) and token.isdigit() and (token == "0" or not token.startswith("0"))
            value = value[int(token)]
    return value


def _holds(value: JsonValue, matched_text: str) -> bool:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    )
    return matched_text in text or " ".join(matched_text.casefold().split()) in " ".join(text.casefold().split())


def assert_persisted_clean(case: Case, outcome: Outcome) -> None:
    """R-P-5, R-S-4, R-VI-2: no raw Executor text, prompt text, reasoning or forbidden field is persisted."""
    blob = outcome.store.evaluation_blob(outcome.stored)
    for raw in case.outputs.get("executor", []):
        if len(raw) > 40:
            assert raw.encode("utf-8", "surrogatepass") not in blob, "raw Executor text was persisted (R-P-5)"
    for line in PROMPT_LINES:
        assert line not in blob, "prompt text was persisted (R-P-3)"
    for token in case.secret_tokens:
        assert token.encode() not in blob, "reasoning or a forbidden field was persisted"
    for claim in case.claims:
        if claim.fails_gatekeeper:
            assert claim.token.encode() not in blob, "the statement of a failed-binding claim was persisted"


def assert_nodes_whole(outcome: Outcome) -> None:
    """R-S-3: one commit a node attempt, holding its event (at most one) and its step, sequences contiguous."""
    store = outcome.store
    events = [e for e in store.events if e.run_id == outcome.run_id]
    commits = [(n_events, n_steps) for run_id, n_events, n_steps in store.node_commits if run_id == outcome.run_id]
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert all(n_events <= 1 and n_steps <= 1 for n_events, n_steps in commits)
    assert sum(n_events for n_events, _ in commits) == len(events)
    assert all(s.run_id == outcome.run_id for s in store.steps)
    if outcome.stored is not None and outcome.stored.status == run_pb2.RUN_STATUS_SUCCESS:
        assert list(outcome.stored.orchestration_trace.path) == [e.node for e in events]


# ---------------------------------------------------------------- golden cases as reliability cases

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def golden_case(case_id: str) -> Case:
    """A case of the golden set; each Executor claim's statement is its own token."""
    from diagnosis_server.evaluation import read_cases

    found = [c for path in sorted(GOLDEN.glob("*.jsonl")) for c in read_cases(path) if c.case_id == case_id]
    assert len(found) == 1, case_id
    source = found[0]
    assert not any(inv.foreign for inv in source.tool_invocations)
    case = Case(
        question=source.question,
        invocations=[
            Invocation(inv.invocation_id, inv.tool_name, inv.output, dict(inv.arguments), inv.cycle)
            for inv in source.tool_invocations
        ],
        outputs={
            "planner": list(source.agent_outputs.planner),
            "executor": list(source.agent_outputs.executor),
            "verifier": list(source.agent_outputs.verifier),
            "composer": list(source.agent_outputs.composer),
        },
    )
    for raw in source.agent_outputs.executor:
        for claim in json.loads(raw).get("claims", []):
            case.claims.append(PlantedClaim(claim["claim_id"], claim["statement"], claim["statement"], False))
    return case
