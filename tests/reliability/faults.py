"""Fault injectors: agents that hang, refuse, answer garbage or crash; tools that raise, hang or flood; a store
whose writes fail at a chosen point; a store write cancelled in flight."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import (
    Agent,
    AgentNonRetryableError,
    AgentProvider,
    AgentReply,
    AgentRequest,
    AgentRetryableError,
    AgentRole,
)
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.store import NodeCommit, RunStore, StoreError

from .harness import RecordingStore

# ---------------------------------------------------------------- agents

HANG_S = 30.0
# The nodes that call an agent: each attempt of theirs records a node step beside its event.
AGENT_NODES = frozenset(
    {run_pb2.NODE_NAME_PLANNER, run_pb2.NODE_NAME_EXECUTOR, run_pb2.NODE_NAME_VERIFIER, run_pb2.NODE_NAME_COMPOSER}
)


class AgentBug(RuntimeError):
    """An exception no agent contract names: a bug inside a provider."""


@dataclass
class FaultyAgent:
    """Runs ``faults[n]`` on the agent's n-th call (None: the wrapped agent answers); records every request."""

    inner: Agent
    faults: Sequence[str | None]
    requests: list[AgentRequest] = field(default_factory=list)

    async def run(self, request: AgentRequest) -> AgentReply:
        fault = self.faults[len(self.requests)] if len(self.requests) < len(self.faults) else None
        self.requests.append(request)
        if fault == "timeout":
            await asyncio.sleep(HANG_S)  # longer than the agent timeout: the node's wait_for fires
        elif fault == "retryable":
            raise AgentRetryableError("connection reset")
        elif fault == "refusal":
            raise AgentNonRetryableError("the model refused")
        elif fault == "invalid":
            return AgentReply(text='{"this is": not json')
        elif fault == "crash":
            raise AgentBug("a bug in the provider")
        elif fault is not None:
            raise AssertionError(f"unknown fault {fault!r}")
        return await self.inner.run(request)


class FaultyProvider:
    def __init__(self, inner: AgentProvider, faults: dict[AgentRole, Sequence[str | None]]) -> None:
        self.name = inner.name
        self.agents: dict[AgentRole, FaultyAgent] = {}
        self._inner = inner
        self._faults = faults

    def agent(self, role: AgentRole) -> Agent:
        if role not in self.agents:
            self.agents[role] = FaultyAgent(self._inner.agent(role), self._faults.get(role, ()))
        return self.agents[role]

    def requests(self, role: AgentRole) -> list[AgentRequest]:
        agent = self.agents.get(role)
        return agent.requests if agent is not None else []


# ---------------------------------------------------------------- tools


class FixedTool:
    """A tool whose behaviour is a coroutine function of its arguments."""

    description = "a tool under test"
    input_schema: JsonObject = {"type": "object"}  # noqa: RUF012

    def __init__(self, name: str, behaviour: Callable[[JsonObject], object]) -> None:
        self.name = name
        self._behaviour = behaviour
        self.calls = 0

    async def call(self, arguments: JsonObject) -> JsonValue:
        self.calls += 1
        result = self._behaviour(arguments)
        if asyncio.iscoroutine(result):
            result = await result
        return result  # type: ignore[return-value]


def events_output(_: JsonObject) -> JsonValue:
    return {"events": [{"reason": "OOMKilled", "message": "Container checkout-api exceeded its memory limit of 512Mi"}]}


def raising(_: JsonObject) -> JsonValue:
    raise OSError("disk on fire")


async def hanging(_: JsonObject) -> JsonValue:
    await asyncio.sleep(HANG_S)
    return {"late": True}


def flooding(_: JsonObject) -> JsonValue:
    return {"blob": "x" * 50_000_000}


def nesting(_: JsonObject) -> JsonValue:
    value: JsonValue = "bottom"
    for _level in range(60):
        value = {"down": value}
    return value


@dataclass
class ToolUsingProvider:
    """Planner plans two tools; the Executor calls ``faulty`` (with ``arguments``) then ``good``, and claims one
    fact from each; the Verifier calls every verified claim a direct observation; the Composer restates the
    allowed material. What the Executor saw of each call is kept in ``seen``."""

    faulty: str
    good: str = "k8s.events"
    arguments: JsonObject = field(default_factory=dict)
    name: str = "tool-faults"
    seen: list[tuple[str, int, JsonValue]] = field(default_factory=list)
    executor_texts: list[str] = field(default_factory=list)

    def agent(self, role: AgentRole) -> Agent:
        return _FnAgent(
            {"planner": self._plan, "executor": self._execute, "verifier": _verify, "composer": _compose}[role]
        )

    async def _plan(self, request: AgentRequest) -> str:
        steps = [{"tool_name": name, "arguments": {}, "purpose": "look"} for name in (self.faulty, self.good)]
        return json.dumps({"steps": steps})

    async def _execute(self, request: AgentRequest) -> str:
        assert request.tools is not None
        bad = await request.tools.call(self.faulty, self.arguments)
        good = await request.tools.call(self.good, {})
        self.seen.extend([(bad.tool_name, bad.status, bad.output), (good.tool_name, good.status, good.output)])
        text = json.dumps(
            {
                "contract": "executor_evidence_v2",
                "claims": [
                    _claim("c1", "pods are OOMKilled", good.invocation_id, self.good, "/events/0/reason", "OOMKilled"),
                    _claim("c2", "the faulty tool shows the root cause", bad.invocation_id, self.faulty, "/blob", "x"),
                ],
            }
        )
        self.executor_texts.append(text)
        return text


def _claim(claim_id: str, statement: str, invocation_id: str, tool: str, path: str, matched: str) -> JsonObject:
    binding: JsonObject = {
        "source_invocation_ids": [invocation_id],
        "tool_name": tool,
        "raw_path": path,
        "matched_text": matched,
    }
    return {
        "claim_id": claim_id,
        "statement": statement,
        "critical": True,
        "status": "confirmed",
        "evidence_bindings": [binding],
    }


class _FnAgent:
    def __init__(self, fn: Callable[[AgentRequest], object]) -> None:
        self._fn = fn

    async def run(self, request: AgentRequest) -> AgentReply:
        text = self._fn(request)
        if asyncio.iscoroutine(text):
            text = await text
        assert isinstance(text, str)
        return AgentReply(text=text)


async def _verify(request: AgentRequest) -> str:
    data = json.loads(request.input_bytes)
    checks = []
    for claim in data["verified_executor_output"]["claims"]:
        refs = [
            {k: e[k] for k in ("claim_id", "source_invocation_id", "tool_name", "raw_path")}
            for e in data["verified_evidence"]
            if e["claim_id"] == claim["claim_id"]
        ]
        checks.append({"claim_id": claim["claim_id"], "classification": "direct_observation", "evidence_refs": refs})
    return json.dumps({"claim_checks": checks, "verdict": "PASS", "groundedness_score": 1.0, "rationale": "seen"})


async def _compose(request: AgentRequest) -> str:
    material = json.loads(request.input_bytes)
    facts = [{"text": f["statement"], "claim_ids": [f["claim_id"]]} for f in material["confirmed_facts"]]
    return json.dumps({"summary": "What the evidence shows.", "confirmed_facts": facts})


# ---------------------------------------------------------------- the store


@dataclass
class StoreFaults:
    """Which write fails: commit_node of a node, add_tool_invocation (n-th), finish_run (first ``finish`` calls)."""

    commit_node_at: int | None = None
    invocation_at: int | None = None
    finish: int = 0
    create: bool = False


class FaultyStore(RecordingStore):
    def __init__(self, repository: RunStore, faults: StoreFaults) -> None:
        super().__init__(repository)
        self.faults = faults
        self.invocation_calls = 0
        self.finish_calls = 0

    async def create_run(self, run: run_pb2.DiagnosisRun) -> None:
        if self.faults.create:
            raise StoreError("create_run failed: disk I/O error")
        await super().create_run(run)

    async def commit_node(self, commit: NodeCommit) -> run_pb2.DiagnosisRun | None:
        if commit.run is None and any(event.node == self.faults.commit_node_at for event in commit.events):
            raise StoreError("commit_node failed: database is locked")
        return await super().commit_node(commit)

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        self.invocation_calls += 1
        if self.invocation_calls == self.faults.invocation_at:
            raise StoreError("add_tool_invocation failed: disk I/O error")
        await super().add_tool_invocation(invocation)

    async def finish_run(self, run: run_pb2.DiagnosisRun) -> run_pb2.DiagnosisRun:
        self.finish_calls += 1
        if self.finish_calls <= self.faults.finish:
            raise StoreError("finish_run failed: database is locked")
        return await super().finish_run(run)


class CancellingStore(RecordingStore):
    """Cancels the running task ``hops`` event-loop turns into the n-th write of a run: inside the write."""

    def __init__(self, repository: RunStore, at_write: int, hops: int = 0) -> None:
        super().__init__(repository)
        self.at_write = at_write
        self.hops = hops
        self.writes = 0
        # A run whose writes take fewer loop turns than ``hops`` may be over before the cancellation would land
        # (SQLite writes run on the loop): a cancellation due after the run's final write is not made.
        self.finished = False

    def _maybe_cancel(self) -> None:
        self.writes += 1
        if self.writes != self.at_write:
            return
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()

        def later(left: int) -> None:
            if self.finished:
                return
            if left:
                loop.call_soon(later, left - 1)
            else:
                task.cancel()

        loop.call_soon(later, self.hops)

    async def commit_node(self, commit: NodeCommit) -> run_pb2.DiagnosisRun | None:
        self._maybe_cancel()
        return await super().commit_node(commit)

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        self._maybe_cancel()
        await super().add_tool_invocation(invocation)

    async def finish_run(self, run: run_pb2.DiagnosisRun) -> run_pb2.DiagnosisRun:
        stored = await super().finish_run(run)
        self.finished = True
        return stored


async def assert_whole_nodes(repository: RunStore, run_id: str) -> list[run_pb2.OrchestrationEvent]:
    """R-S-3: the store holds whole nodes only: events 1..n, and a step for each agent node's event (an
    event and its step are committed together, or neither)."""
    events = await repository.list_events(run_id)
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    steps = await repository.list_node_steps(run_id)
    agents = [(e.node, e.attempt) for e in events if e.node in AGENT_NODES]
    assert [(s.node, s.attempt) for s in steps] == agents
    return events
