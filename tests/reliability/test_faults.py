"""Faults injected at every node, tool and store write; each run ends stored and safe, or fails closed.

Behaviour per failure point (decided here, and asserted):

- an agent fails (timeout, typed retryable error, refusal, invalid output, unexpected exception): the
  routing table decides (R-R-1, R-R-2, R-R-6, R-A-5); an unexpected exception counts as non-retryable;
  the run ends SUCCESS with a safe, degraded answer (R-A-6);
- a tool raises, hangs or floods: the call is recorded ERROR / TIMEOUT / TRUNCATED before the Executor
  sees it (R-C-2), the output is not stored whole, no claim can bind to it, and the run goes on;
- ``create_run`` fails: the caller gets the StoreError and nothing is stored;
- ``add_tool_invocation`` fails: the Executor never sees that tool's output, and the run is stored FAILED
  with the store's reason (``STORE_ERROR: ...``), as when a node commit fails;
- ``commit_node`` fails: the graph never runs past a node it cannot record; the run is stored FAILED
  (``STORE_ERROR``) with the nodes before it whole;
- ``finish_run`` fails: the run is stored FAILED (``STORE_ERROR``) instead, never left RUNNING; when no
  write at all succeeds the caller gets the StoreError and ``interrupt_owned`` marks the run INTERRUPTED;
- the run's task is cancelled (a crash) between or inside writes: only whole nodes are stored, and a
  restarted instance marks the run FAILED (INTERRUPTED); new runs work.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import Agent, AgentProvider, AgentReply, AgentRequest, AgentRole
from diagnosis_server.agents.scripted import ScriptedProvider
from diagnosis_server.graph.context import Limits, ToolEnvironment
from diagnosis_server.graph.orchestrator import Orchestrator, new_run_id
from diagnosis_server.store import INTERRUPTED, Repository, StoreError, open_repository
from diagnosis_server.tools.base import Toolset

from .faults import (
    CancellingStore,
    FaultyProvider,
    FaultyStore,
    FixedTool,
    StoreFaults,
    ToolUsingProvider,
    assert_whole_nodes,
    events_output,
    flooding,
    hanging,
    nesting,
    raising,
)
from .harness import (
    MEMORY_URL,
    Case,
    Outcome,
    PlantedClaim,
    RecordingStore,
    assert_safe_run,
    golden_case,
    replay_tools,
    run_case,
)

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741
P, E, G, B, V, C = (
    N.NODE_NAME_PLANNER,
    N.NODE_NAME_EXECUTOR,
    N.NODE_NAME_GATEKEEPER,
    N.NODE_NAME_VERIFIED_INPUT_BUILDER,
    N.NODE_NAME_VERIFIER,
    N.NODE_NAME_COMPOSER,
)
PRE, POST = N.NODE_NAME_PRE_VERIFICATION_FALLBACK, N.NODE_NAME_POST_VERIFICATION_FALLBACK
# Short agent timeouts for the agent under test only: a timeout that fires while the scripted Executor records
# its tool calls would cancel a store write in flight (see the cancellation tests below).
FAST = Limits(agent_timeout_s=0.05, tool_timeout_s=0.2)
FAST_EXECUTOR = Limits(executor_timeout_s=0.05)
ROLE_NODE = {"planner": P, "executor": E, "verifier": V, "composer": C}
# The outcome a failed attempt records, by failure kind (the Executor maps every agent failure to FAILED).
OUTCOME = {
    "timeout": O.NODE_OUTCOME_RETRYABLE_FAILED,
    "retryable": O.NODE_OUTCOME_RETRYABLE_FAILED,
    "refusal": O.NODE_OUTCOME_NON_RETRYABLE_FAILED,
    "invalid": O.NODE_OUTCOME_INVALID_OUTPUT,
    "crash": O.NODE_OUTCOME_NON_RETRYABLE_FAILED,
}
RETRIED = {"timeout", "retryable", "invalid"}
FALLBACK = {"planner": PRE, "verifier": PRE, "composer": POST}


@pytest.fixture
async def repository() -> AsyncIterator[Repository]:
    repo = await open_repository(MEMORY_URL)
    try:
        yield repo
    finally:
        await repo.close()


def _path(run: run_pb2.DiagnosisRun) -> list[int]:
    return list(run.orchestration_trace.path)


# ---------------------------------------------------------------- agents


@pytest.mark.requirement("R-R-1")
@pytest.mark.parametrize("kind", ["timeout", "retryable", "refusal", "invalid", "crash"])
@pytest.mark.parametrize("role", ["planner", "verifier", "composer"])
async def test_one_failed_attempt_is_retried_once_or_falls_back(
    role: AgentRole, kind: str, repository: Repository
) -> None:
    """R-R-1, R-R-6, R-A-5: a retryable failure or invalid output gets one technical retry with the same input;
    a refusal or an unexpected exception goes to the node's fallback at once."""
    case = golden_case("pass-composed")
    faulty: list[FaultyProvider] = []

    def wrap(inner: AgentProvider) -> FaultyProvider:
        faulty.append(FaultyProvider(inner, {role: [kind]}))
        return faulty[0]

    outcome = await run_case(case, RecordingStore(repository), wrap=wrap, limits=FAST)
    run = outcome.stored
    assert run is not None
    assert_safe_run(case, outcome)
    node = ROLE_NODE[role]
    events = outcome.store.events
    attempts = [e for e in events if e.node == node]
    assert attempts[0].outcome == OUTCOME[kind]
    requests = faulty[0].requests(role)
    if kind in RETRIED:
        # The retry succeeds: the PASS route with the node twice, the same input bytes both times (R-VI-4).
        assert [e.attempt for e in attempts] == [1, 2]
        assert len(requests) == 2 and requests[0].input_bytes == requests[1].input_bytes
        assert run.orchestration_trace.end_reason == "COMPOSED"
        assert run.verdict == contracts_pb2.VERDICT_PASS
        retries = {r.node: r.technical_retries for r in run.orchestration_trace.technical_retries}
        assert retries == {node: 1}
    else:
        assert len(attempts) == 1 and len(requests) == 1
        assert _path(run)[-1] == FALLBACK[role]
    if run.answer.source == contracts_pb2.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK:
        reason = {"planner": "PLANNER_FAILED", "verifier": "VERIFIER_FAILED"}[role]
        assert run.orchestration_trace.end_reason == reason
        assert not run.self_evaluation.verifier_evaluation.HasField("effective_verdict")  # R-P-6
    if _path(run)[-1] == POST:
        # R-A-5: the deterministic rendering of the allowed material, which the Verifier passed.
        assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
        assert run.verdict == contracts_pb2.VERDICT_PASS
        assert run.orchestration_trace.degraded
    # Nothing before the failing node ran again (and nothing after a planner that gave up ran at all).
    assert sum(1 for e in events if e.node == E) == (0 if _path(run) == [P, PRE] else 1)


@pytest.mark.requirement("R-R-1")
@pytest.mark.parametrize("kind", ["timeout", "retryable", "invalid"])
@pytest.mark.parametrize("role", ["planner", "verifier", "composer"])
async def test_a_second_failure_goes_to_the_fallback(role: AgentRole, kind: str, repository: Repository) -> None:
    """R-R-1, R-R-6, R-A-5, R-A-6: two failed attempts end in the node's fallback, SUCCESS and degraded."""
    case = golden_case("pass-composed")
    outcome = await run_case(
        case,
        RecordingStore(repository),
        wrap=lambda inner: FaultyProvider(inner, {role: [kind, kind]}),
        limits=FAST,
    )
    run = outcome.stored
    assert run is not None
    assert_safe_run(case, outcome)
    node = ROLE_NODE[role]
    assert [(e.node, e.attempt, e.outcome) for e in outcome.store.events if e.node == node] == [
        (node, 1, OUTCOME[kind]),
        (node, 2, OUTCOME[kind]),
    ]
    assert _path(run)[-1] == FALLBACK[role]
    assert run.status == run_pb2.RUN_STATUS_SUCCESS and run.orchestration_trace.degraded


@pytest.mark.requirement("R-R-2")
@pytest.mark.parametrize("kind", ["timeout", "retryable", "refusal", "invalid", "crash"])
async def test_an_executor_failure_is_never_retried(kind: str, repository: Repository) -> None:
    """R-R-2, R-A-4, R-P-6: any Executor failure goes to the pre-verification fallback; no Gatekeeper,
    Verifier or Composer runs, and the answer holds no Executor claim."""
    case = golden_case("pass-composed")
    providers: list[FaultyProvider] = []

    def wrap(inner: AgentProvider) -> FaultyProvider:
        providers.append(FaultyProvider(inner, {"executor": [kind]}))
        return providers[0]

    outcome = await run_case(case, RecordingStore(repository), wrap=wrap, limits=FAST_EXECUTOR)
    run = outcome.stored
    assert run is not None
    assert_safe_run(case, outcome)
    assert _path(run) == [P, E, PRE]
    executor_event = outcome.store.events[1]
    invalid = kind == "invalid"
    assert executor_event.outcome == (O.NODE_OUTCOME_INVALID_OUTPUT if invalid else O.NODE_OUTCOME_FAILED)
    assert len(providers[0].requests("executor")) == 1
    assert not providers[0].requests("verifier") and not providers[0].requests("composer")
    evaluation = run.self_evaluation.verifier_evaluation
    assert not evaluation.HasField("gatekeeper_result")
    assert not evaluation.HasField("effective_verdict") and not evaluation.HasField("model_verdict")
    assert {p.agent for p in evaluation.prompt_audit.prompts} == {"planner", "executor", "verifier", "composer"}
    if invalid:
        # A parse failure is visible as such (R-P-6).
        assert evaluation.executor_output_parse_status == contracts_pb2.PARSE_STATUS_INVALID_OUTPUT
        assert evaluation.failure_reason.startswith("EXECUTOR_INVALID_OUTPUT: ")
    else:
        assert evaluation.failure_reason in {"EXECUTOR_FAILED", "EXECUTOR_ERROR"}


@pytest.mark.requirement("R-P-6")
async def test_an_unpaired_surrogate_is_an_invalid_output_not_a_crash(repository: Repository) -> None:
    """R-P-6, R-R-2: JSON that escapes a lone surrogate is a parse failure, visible as such (not a node crash)."""
    case = golden_case("pass-composed")
    case.outputs["executor"] = [case.outputs["executor"][0].replace('"statement": "', '"statement": "\\ud800', 1)]
    outcome = await run_case(case, RecordingStore(repository))
    run = outcome.stored
    assert run is not None
    assert_safe_run(case, outcome)
    evaluation = run.self_evaluation.verifier_evaluation
    assert evaluation.executor_output_parse_status == contracts_pb2.PARSE_STATUS_INVALID_OUTPUT
    assert "surrogate" in evaluation.failure_reason


@pytest.mark.requirement("R-R-1")
@pytest.mark.parametrize("role", ["verifier", "composer"])
async def test_an_unpaired_surrogate_from_a_retried_agent_is_retried(role: AgentRole, repository: Repository) -> None:
    """R-R-1: a reply escaping a lone surrogate is INVALID_OUTPUT (retried once), not an unexpected crash."""
    case = golden_case("pass-composed")
    good = case.outputs[role][0]
    case.outputs[role] = [
        good.replace('"rationale": "', '"rationale": "\\udc00', 1).replace('"summary": "', '"summary": "\\udc00', 1),
        good,
    ]
    outcome = await run_case(case, RecordingStore(repository))
    run = outcome.stored
    assert run is not None
    assert_safe_run(case, outcome)
    node = ROLE_NODE[role]
    assert next(e.outcome for e in outcome.store.events if e.node == node) == O.NODE_OUTCOME_INVALID_OUTPUT
    assert run.orchestration_trace.end_reason == "COMPOSED"


@pytest.mark.requirement("R-P-6")
async def test_a_failed_evidence_retry_cycle_keeps_the_first_cycles_verified_answer(repository: Repository) -> None:
    """R-C-5, R-P-1: when the evidence-retry cycle's Executor fails, no fallback discards what the first cycle
    verified: the Composer answers from it, and the run persists that cycle's claim checks and verdicts, which
    rest on the persisted Gatekeeper result (the retry's Gatekeeper never ran)."""
    case = golden_case("evidence-retry-then-pass")
    case.outputs["executor"] = [case.outputs["executor"][0], "!refuse"]
    outcome = await run_case(case, RecordingStore(repository))
    run = outcome.stored
    assert run is not None
    assert_safe_run(case, outcome)
    assert run.orchestration_trace.evidence_retry_count == 1
    path = _path(run)
    # The scripted Composer's one reply was written for the retry's material: it is refused, and the
    # post-verification fallback renders the first cycle's allowed material.
    assert path[path.index(PRE) - 2 :] == [P, E, PRE, C, C, POST]
    assert run.answer.source == contracts_pb2.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
    assert run.answer.confirmed_facts
    evaluation = run.self_evaluation.verifier_evaluation
    assert evaluation.HasField("effective_verdict") and evaluation.claim_checks
    assert run.verdict == evaluation.effective_verdict and not evaluation.failure_reason
    checked = {(b.claim_id, b.source_invocation_id) for b in evaluation.gatekeeper_result.checked_bindings}
    assert all((e.claim_id, e.source_invocation_id) in checked for e in evaluation.verified_evidence)


# ---------------------------------------------------------------- tools


def _tool_case(provider: ToolUsingProvider) -> Case:
    return Case(
        question="Why is checkout-api returning 503s?",
        invocations=[],
        outputs={"executor": provider.executor_texts},
        claims=[
            PlantedClaim("c1", "pods are OOMKilled", "pods are OOMKilled", False),
            PlantedClaim("c2", "the faulty tool shows the root cause", "the faulty tool shows", True),
        ],
    )


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize(
    ("behaviour", "status", "error"),
    [
        (raising, contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, "OSError: disk on fire"),
        (hanging, contracts_pb2.TOOL_INVOCATION_STATUS_TIMEOUT, "no output within 0.2s"),
        # One 50 MB string: no array to trim, so it cannot be brought under the bound.
        (flooding, contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, "over the 262144 byte bound and cannot be trimmed"),
        (nesting, contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, "output is nested deeper than 32"),
    ],
    ids=["raises", "hangs", "50MB", "deep"],
)
async def test_a_failing_tool_is_recorded_and_the_run_goes_on(
    behaviour: object, status: int, error: str, repository: Repository
) -> None:
    """R-C-2, R-GK-3, R-A-6: the call is recorded with its failure before the Executor sees it; its output is
    not stored whole; no claim can bind to it; the run ends safely, without blocking."""
    tool = FixedTool("logs.search", behaviour)  # type: ignore[arg-type]
    good = FixedTool("k8s.events", events_output)
    provider = ToolUsingProvider(faulty="logs.search")
    tools = ToolEnvironment(toolset=Toolset([tool, good]))
    started = time.monotonic()
    outcome = await run_case(
        _tool_case(provider), RecordingStore(repository), provider=provider, limits=FAST, tools=tools
    )
    assert time.monotonic() - started < 5.0, "a hanging tool must not block the run"
    run = outcome.stored
    assert run is not None
    assert_safe_run(_tool_case(provider), outcome)
    recorded = {inv.tool_name: inv for inv in outcome.invocations}
    assert recorded["logs.search"].status == status
    assert error in recorded["logs.search"].error
    assert len(recorded["logs.search"].SerializeToString()) < 4096, "the failed output is not stored whole"
    # The Executor saw the failure, not the output.
    assert provider.seen[0][:2] == ("logs.search", status)
    # The claim bound to the failed call fails the Gatekeeper; the other is verified: LOW_CONFID, composed.
    gk = run.self_evaluation.verifier_evaluation.gatekeeper_result
    assert [(c.claim_id, c.passed) for c in gk.checked_bindings] == [("c1", True), ("c2", False)]
    assert run.status == run_pb2.RUN_STATUS_SUCCESS and run.verdict == contracts_pb2.VERDICT_LOW_CONFID
    assert "the faulty tool shows" not in run.answer_text


@pytest.mark.requirement("R-C-2")
async def test_arguments_that_cannot_be_recorded_are_recorded_as_an_error(repository: Repository) -> None:
    """R-C-2: a call whose arguments cannot be stored (an unpaired surrogate) is recorded ERROR, never run."""
    tool = FixedTool("logs.search", events_output)
    provider = ToolUsingProvider(faulty="logs.search", arguments={"query": "\ud800"})
    tools = ToolEnvironment(toolset=Toolset([tool, FixedTool("k8s.events", events_output)]))
    outcome = await run_case(_tool_case(provider), RecordingStore(repository), provider=provider, tools=tools)
    assert_safe_run(_tool_case(provider), outcome)
    recorded = {inv.tool_name: inv for inv in outcome.invocations}
    assert recorded["logs.search"].status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert "arguments cannot be recorded" in recorded["logs.search"].error
    assert tool.calls == 0


# ---------------------------------------------------------------- the store


async def _second_run_works(repository: Repository) -> None:
    case = golden_case("pass-composed")
    outcome = await run_case(case, RecordingStore(repository))
    assert outcome.stored is not None and outcome.stored.status == run_pb2.RUN_STATUS_SUCCESS
    assert_safe_run(case, outcome)


async def _stored_with_faults(
    repository: Repository, faults: StoreFaults, **kwargs: Any
) -> tuple[Case, FaultyStore, Outcome, run_pb2.DiagnosisRun]:
    """The golden case ``pass-composed`` run on ``repository`` behind ``faults``: the case, the store, the outcome
    and the run as stored (there must be one)."""
    case = golden_case("pass-composed")
    store = FaultyStore(repository, faults)
    outcome = await run_case(case, store, **kwargs)
    assert outcome.stored is not None
    return case, store, outcome, outcome.stored


async def test_a_failed_create_run_stores_nothing(repository: Repository) -> None:
    """A run that cannot be created leaves nothing behind; the caller gets the StoreError."""
    run_id = new_run_id()
    with pytest.raises(StoreError):
        await run_case(golden_case("pass-composed"), FaultyStore(repository, StoreFaults(create=True)), run_id=run_id)
    assert await repository.get_run(run_id) is None
    assert await repository.list_tool_invocations(run_id) == []
    await _second_run_works(repository)


@pytest.mark.requirement("R-S-3")
@pytest.mark.parametrize("node", [P, E, G, V, C], ids=["planner", "executor", "gatekeeper", "verifier", "composer"])
async def test_a_node_that_cannot_be_recorded_ends_the_run_failed_and_whole(
    node: run_pb2.NodeName.ValueType, repository: Repository
) -> None:
    """R-S-3, R-S-4: a failing commit_node ends the run FAILED (STORE_ERROR), never RUNNING, with only whole
    nodes stored and nothing of the unrecorded node; the store keeps working."""
    run_id = new_run_id()
    case, _, outcome, run = await _stored_with_faults(repository, StoreFaults(commit_node_at=node), run_id=run_id)
    assert outcome.returned.status == run.status
    assert run.status == run_pb2.RUN_STATUS_FAILED
    assert run.failure_reason == "STORE_ERROR: commit_node failed: database is locked"  # what failed, and why
    assert not run.answer_text and not run.HasField("answer")
    events = await assert_whole_nodes(repository, run_id)
    assert node not in [e.node for e in events]
    assert [e.node for e in events] == [P, E, G, B, V, C][: [P, E, G, B, V, C].index(node)]
    assert_safe_run(case, outcome, expect_success=False)
    await _second_run_works(repository)


@pytest.mark.requirement("R-C-2")
async def test_a_tool_invocation_that_cannot_be_recorded_fails_the_run_with_the_stores_reason(
    repository: Repository,
) -> None:
    """R-C-2, R-S-3: when a tool call cannot be recorded the Executor never gets its output and the run is
    stored FAILED with the store's reason, as at a node commit. (It used to be the Executor's own failure: the
    pre-verification fallback answered SUCCESS with end reason EXECUTOR_ERROR and the call missing.)"""
    run_id = new_run_id()
    case, _, outcome, run = await _stored_with_faults(repository, StoreFaults(invocation_at=1), run_id=run_id)
    assert outcome.returned.status == run.status == run_pb2.RUN_STATUS_FAILED
    assert run.failure_reason == "STORE_ERROR: add_tool_invocation failed: disk I/O error"
    assert not run.answer_text and not run.HasField("answer")
    assert outcome.invocations == []
    events = await assert_whole_nodes(repository, run_id)
    assert [e.node for e in events] == [P]  # nothing of the Executor attempt whose call went unrecorded
    assert_safe_run(case, outcome, expect_success=False)
    await _second_run_works(repository)


async def test_a_failed_finish_stores_the_run_failed_not_running(repository: Repository) -> None:
    """R-A-6: when the final record cannot be written, the run is stored FAILED (STORE_ERROR), not RUNNING."""
    case, _, outcome, run = await _stored_with_faults(repository, StoreFaults(finish=1))
    assert run.status == run_pb2.RUN_STATUS_FAILED
    assert run.failure_reason == "STORE_ERROR: finish_run failed: database is locked"
    assert outcome.returned.status == run_pb2.RUN_STATUS_FAILED
    assert_safe_run(case, outcome, expect_success=False)
    await assert_whole_nodes(repository, run.run_id)
    await _second_run_works(repository)


async def test_a_final_write_failing_for_a_while_is_retried_until_the_store_takes_it(repository: Repository) -> None:
    """The store recovers within the retry window: the run's own final record is stored (not a FAILED stand-in)."""
    case, store, outcome, run = await _stored_with_faults(repository, StoreFaults(finish=4))
    assert store.finish_calls == 5  # two rounds of (final record, FAILED stand-in) failed, then the final record
    assert run.status == run_pb2.RUN_STATUS_SUCCESS == outcome.returned.status
    assert_safe_run(case, outcome)


async def test_when_no_write_succeeds_the_caller_sees_the_error_and_the_run_is_interrupted_later(
    repository: Repository,
) -> None:
    """A store that takes no final write within the retry window: the caller gets the StoreError;
    ``interrupt_owned`` (shutdown) or the orphan sweep then marks the run FAILED (INTERRUPTED)."""
    run_id = new_run_id()
    store = FaultyStore(repository, StoreFaults(finish=10_000))
    with pytest.raises(StoreError):
        await run_case(golden_case("pass-composed"), store, run_id=run_id, finish_retry_s=0.3)
    assert store.finish_calls > 2  # retried, not given up after one failure
    stuck = await repository.get_run(run_id)
    assert stuck is not None and stuck.status == run_pb2.RUN_STATUS_RUNNING
    assert await repository.interrupt_owned() == [run_id]
    stored = await repository.get_run(run_id)
    assert stored is not None
    assert stored.status == run_pb2.RUN_STATUS_FAILED and stored.failure_reason == INTERRUPTED
    await assert_whole_nodes(repository, run_id)
    await _second_run_works(repository)


# ---------------------------------------------------------------- crashes


async def _blocking_verifier_run(path: Path) -> tuple[str, Repository]:
    """Starts a run on a SQLite file, cancels it while the Verifier awaits, and returns its id and store."""
    repository = await open_repository(f"sqlite+aiosqlite:///{path}", owner="instance-a")
    case = golden_case("pass-composed")
    entered = asyncio.Event()
    run_id = new_run_id()

    class Blocking:
        async def run(self, request: AgentRequest) -> AgentReply:
            entered.set()
            await asyncio.sleep(3600)
            raise AssertionError("unreachable")

    scripted = ScriptedProvider(case.outputs, invocations_by_cycle=case.by_cycle(run_id))

    class Provider:
        name = "scripted"

        def agent(self, role: AgentRole) -> Agent:
            return Blocking() if role == "verifier" else scripted.agent(role)

    orchestrator = Orchestrator(
        store=repository,
        provider=Provider(),
        tools_for=lambda _s: replay_tools(),
    )
    task = asyncio.create_task(orchestrator.run(question=case.question, scenario="", run_id=run_id))
    await asyncio.wait_for(entered.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return run_id, repository


@pytest.mark.requirement("R-S-3")
async def test_a_crash_mid_graph_leaves_whole_nodes_and_a_restart_interrupts_the_run(tmp_path: Path) -> None:
    """R-S-3, R-S-4, R-C-2: a run killed while the Verifier awaits keeps its whole nodes (one event, one
    step each) and its invocations; the instance's next life marks it FAILED (INTERRUPTED)."""
    path = tmp_path / "crash.db"
    run_id, first = await _blocking_verifier_run(path)
    events = await assert_whole_nodes(first, run_id)
    assert [e.node for e in events] == [P, E, G, B]
    assert len(await first.list_tool_invocations(run_id)) == 2
    running = await first.get_run(run_id)
    assert running is not None and running.status == run_pb2.RUN_STATUS_RUNNING
    await first.close()  # the process dies

    restarted = await open_repository(f"sqlite+aiosqlite:///{path}", owner="instance-a")
    try:
        assert await restarted.interrupt_orphans() == [run_id]
        stored = await restarted.get_run(run_id)
        assert stored is not None
        assert stored.status == run_pb2.RUN_STATUS_FAILED and stored.failure_reason == INTERRUPTED
        assert await assert_whole_nodes(restarted, run_id) == events
        await _second_run_works(restarted)
    finally:
        await restarted.close()


@pytest.mark.requirement("R-S-3")
async def test_another_instance_interrupts_the_run_of_a_dead_one(tmp_path: Path) -> None:
    """R-S-3: another instance (another owner) marks a dead instance's stale run INTERRUPTED."""
    path = tmp_path / "crash.db"
    run_id, first = await _blocking_verifier_run(path)
    await first.close()
    other = await open_repository(f"sqlite+aiosqlite:///{path}", owner="instance-b")
    try:
        assert await other.interrupt_orphans(stale_after_s=0.0) == [run_id]
        stored = await other.get_run(run_id)
        assert stored is not None and stored.status == run_pb2.RUN_STATUS_FAILED
        await _second_run_works(other)
    finally:
        await other.close()


@pytest.mark.requirement("R-S-3")
@pytest.mark.parametrize("hops", [0, 3, 9])
@pytest.mark.parametrize("at_write", range(1, 9))
async def test_a_crash_inside_a_store_write_leaves_no_partial_node(tmp_path: Path, at_write: int, hops: int) -> None:
    """R-S-3, R-C-2: the run's task is cancelled inside its n-th store write (tool invocation or node commit),
    a few event-loop turns in; the write is whole or absent, every stored agent event has its step, and the
    restarted instance interrupts the run and runs the next one."""
    path = tmp_path / "cancel.db"
    repository = await open_repository(f"sqlite+aiosqlite:///{path}", owner="instance-a")
    case = golden_case("pass-composed")
    store = CancellingStore(repository, at_write=at_write, hops=hops)
    run_id = new_run_id()
    cancelled = False
    try:
        await run_case(case, store, run_id=run_id)
    except asyncio.CancelledError:
        cancelled = True
    # A write that needs fewer event-loop turns than ``hops`` completes before the cancellation lands; the
    # cancellation then hits a later await. A write on the event loop (SQLite, uncontended) cannot be cut at
    # all: the cancellation lands at the next turn the run gives, unless the run has ended before it.
    assert cancelled or store.finished
    await repository.close()

    restarted = await open_repository(f"sqlite+aiosqlite:///{path}", owner="instance-a")
    try:
        events = await assert_whole_nodes(restarted, run_id)
        invocations = await restarted.list_tool_invocations(run_id)
        assert len(invocations) <= 2 and len({i.invocation_id for i in invocations}) == len(invocations)
        if E in [e.node for e in events]:
            assert len(invocations) == 2, "the Executor's node is committed only after its calls are recorded"
        stored = await restarted.get_run(run_id)
        assert stored is not None
        if stored.status == run_pb2.RUN_STATUS_RUNNING:
            assert await restarted.interrupt_orphans() == [run_id]
            stored = await restarted.get_run(run_id)
            assert stored is not None and stored.status == run_pb2.RUN_STATUS_FAILED
        else:
            # The final record was written whole before the cancellation landed.
            assert stored.status in (run_pb2.RUN_STATUS_SUCCESS, run_pb2.RUN_STATUS_FAILED)
            assert stored.HasField("completed_at")
        await _second_run_works(restarted)
    finally:
        await restarted.close()


async def test_an_executor_timeout_during_a_slow_tool_recording_fails_closed(tmp_path: Path) -> None:
    """R-R-2, R-C-2: the Executor's time runs out while a tool call is being recorded (the store's write lock
    held elsewhere for a while, so the write waits on the worker thread): the Executor fails, the run ends in
    the pre-verification fallback, and the store stays consistent."""
    path = tmp_path / "slow.db"
    repository = await open_repository(f"sqlite+aiosqlite:///{path}")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    class SlowStore(RecordingStore):
        armed = True

        async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
            if self.armed:
                self.armed = False
                holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock for half a second
                threading.Timer(0.5, holder.execute, ("COMMIT",)).start()
            await super().add_tool_invocation(invocation)

    try:
        case = golden_case("pass-composed")
        outcome = await run_case(case, SlowStore(repository), limits=Limits(executor_timeout_s=0.2))
        run = outcome.stored
        assert run is not None
        assert_safe_run(case, outcome)
        assert _path(run) == [P, E, PRE]
        assert run.orchestration_trace.end_reason == "EXECUTOR_FAILED"
        await assert_whole_nodes(repository, run.run_id)
        await _second_run_works(repository)
    finally:
        holder.close()
        await repository.close()
