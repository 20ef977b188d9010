"""One real run, captured: what its agents answered, what its tools returned, and every store call it made.

The heuristic run of the bench's scenario is run once in-process with a provider that keeps each agent's
reply and a store that keeps each call (``CapturedRun``). From it the bench builds what it compares:
the scripted provider replaying the same replies (``scripted_provider``), the same rows for the store and
for a raw sqlite3 loop (``bench.store``), and the canned outputs of the LangGraph peer (``bench.peer``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import Agent, AgentProvider, AgentReply, AgentRequest, AgentRole
from diagnosis_server.agents.heuristic import HeuristicProvider
from diagnosis_server.agents.scripted import ScriptedProvider
from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import MemoryStore, NodeCommit, RunStore
from diagnosis_server.tools.scenario import load_scenarios

QUESTION = "Why is checkout-api returning 503s?"
SCENARIO = "checkout-oom"


@dataclass(frozen=True, slots=True)
class StoreCall:
    """One call of the orchestrator's store: its name and its arguments (protos as the run made them)."""

    name: str  # create_run, commit_node, add_tool_invocation, finish_run, list_tool_invocations
    run: run_pb2.DiagnosisRun | None = None
    commit: NodeCommit | None = None
    invocation: contracts_pb2.ToolInvocation | None = None


@dataclass
class CapturedRun:
    replies: dict[AgentRole, list[str]] = field(default_factory=dict)
    inputs: dict[AgentRole, list[bytes]] = field(default_factory=dict)
    invocations: list[contracts_pb2.ToolInvocation] = field(default_factory=list)
    calls: list[StoreCall] = field(default_factory=list)
    final: run_pb2.DiagnosisRun | None = None

    def invocations_by_cycle(self) -> dict[int, list[contracts_pb2.ToolInvocation]]:
        out: dict[int, list[contracts_pb2.ToolInvocation]] = {}
        for invocation in self.invocations:
            out.setdefault(invocation.cycle or 1, []).append(invocation)
        return out


class _Keeping:
    def __init__(self, inner: Agent, replies: list[str], inputs: list[bytes]) -> None:
        self._inner = inner
        self._replies = replies
        self._inputs = inputs

    async def run(self, request: AgentRequest) -> AgentReply:
        self._inputs.append(request.input_bytes)
        reply = await self._inner.run(request)
        self._replies.append(reply.text)
        return reply


class _KeepingProvider:
    def __init__(self, inner: AgentProvider, captured: CapturedRun) -> None:
        self.name = inner.name
        self._inner = inner
        self._captured = captured

    def agent(self, role: AgentRole) -> Agent:
        captured = self._captured
        return _Keeping(
            self._inner.agent(role), captured.replies.setdefault(role, []), captured.inputs.setdefault(role, [])
        )


def copy_message(message: Any, run_id: str | None = None) -> Any:
    out = type(message)()
    out.CopyFrom(message)
    if run_id is not None:
        out.run_id = run_id
    return out


def copy_commit(commit: NodeCommit, run_id: str | None = None) -> NodeCommit:
    """A copy of ``commit`` (of run ``run_id`` when given: every proto's run_id replaced)."""
    return NodeCommit(
        run_id or commit.run_id,
        events=tuple(copy_message(e, run_id) for e in commit.events),
        steps=tuple(copy_message(s, run_id) for s in commit.steps),
        run=None if commit.run is None else copy_message(commit.run, run_id),
    )


class _CapturingStore(MemoryStore):
    """The in-memory store keeping a copy of every call (``CapturedRun.calls``)."""

    def __init__(self, captured: CapturedRun) -> None:
        super().__init__(owner="bench")
        self._captured = captured

    async def create_run(self, run: run_pb2.DiagnosisRun) -> None:
        self._captured.calls.append(StoreCall("create_run", run=copy_message(run)))
        await super().create_run(run)

    async def commit_node(self, commit: NodeCommit) -> run_pb2.DiagnosisRun | None:
        self._captured.calls.append(StoreCall("commit_node", commit=copy_commit(commit)))
        return await super().commit_node(commit)

    async def finish_run(self, run: run_pb2.DiagnosisRun) -> run_pb2.DiagnosisRun:
        self._captured.calls.append(StoreCall("finish_run", run=copy_message(run)))
        self._captured.final = copy_message(run)
        return await super().finish_run(run)

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        self._captured.calls.append(StoreCall("add_tool_invocation", invocation=copy_message(invocation)))
        self._captured.invocations.append(copy_message(invocation))
        await super().add_tool_invocation(invocation)

    async def list_tool_invocations(self, run_id: str) -> list[contracts_pb2.ToolInvocation]:
        self._captured.calls.append(StoreCall("list_tool_invocations"))
        return await super().list_tool_invocations(run_id)


def orchestrator(store: RunStore, provider: AgentProvider | None = None) -> Orchestrator:
    """The run the server's ``Diagnose`` makes on a bundled scenario: its tools are a pack's (``pack_tools_for``:
    the built-in ones and the live tools the pack answers), as ``api.server`` gives them, so that every figure
    compared with the server's (the floor's run, its rows) is of the same run."""
    packs = load_scenarios()
    return Orchestrator(store=store, provider=provider or HeuristicProvider(), tools_for=pack_tools_for(packs))


_CAPTURED: list[CapturedRun] = []


async def capture() -> CapturedRun:
    """One heuristic run of the bench's scenario, captured (once a process: every section compares the same run)."""
    if _CAPTURED:
        return _CAPTURED[0]
    captured = CapturedRun()
    runner = orchestrator(_CapturingStore(captured), _KeepingProvider(HeuristicProvider(), captured))
    run = await runner.run(question=QUESTION, scenario=SCENARIO)
    if run.status != run_pb2.RUN_STATUS_SUCCESS:
        raise RuntimeError(f"the captured run ended {run_pb2.RunStatus.Name(run.status)}: {run.failure_reason}")
    _CAPTURED.append(captured)
    return captured


def scripted_provider(captured: CapturedRun) -> ScriptedProvider:
    """A fresh scripted provider replaying the captured replies and tool outputs (one per run: it counts)."""
    return ScriptedProvider(captured.replies, invocations_by_cycle=captured.invocations_by_cycle())
