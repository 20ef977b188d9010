"""A deterministic provider and a tiny toolset for API tests: every run ends SUCCESS with verdict PASS.

The planner plans one ``k8s.events`` call; the executor makes it and binds its claim to the output;
the verifier passes the claim; the composer cites it. An optional gate (an ``asyncio.Event``) holds
every run inside one agent (the Planner unless ``gate_role`` says otherwise) until the test releases
it, so a test can act while runs are live.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from diagnosis_server.agents.base import Agent, AgentReply, AgentRequest, AgentRole
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.graph.context import ToolEnvironment
from diagnosis_server.tools.base import Toolset

TOOL = "k8s.events"
PLAN = json.dumps({"steps": [{"tool_name": TOOL, "arguments": {}, "purpose": "restarts"}]})


class EventsTool:
    name = TOOL
    description = "Kubernetes events of the scenario"
    input_schema: JsonObject = {"type": "object"}  # noqa: RUF012

    async def call(self, arguments: JsonObject) -> JsonValue:
        return {"events": [{"reason": "OOMKilled", "message": "container exceeded its 512Mi limit"}]}


def tools_for(_scenario: str) -> ToolEnvironment:
    return ToolEnvironment(toolset=Toolset([EventsTool()]), context={"services": ["checkout-api"]})


async def _execute(request: AgentRequest) -> str:
    assert request.tools is not None
    result = await request.tools.call(TOOL, {})
    return oom_evidence(result.invocation_id, TOOL, "/events/0/reason")


def oom_evidence(invocation_id: str, tool_name: str, raw_path: str) -> str:
    """An executor_evidence_v2 of one critical confirmed claim, "pods are OOMKilled", bound to ``raw_path``."""
    binding = {
        "source_invocation_ids": [invocation_id],
        "tool_name": tool_name,
        "raw_path": raw_path,
        "matched_text": "OOMKilled",
    }
    claim = {
        "claim_id": "c1",
        "statement": "pods are OOMKilled",
        "critical": True,
        "status": "confirmed",
        "evidence_bindings": [binding],
    }
    return json.dumps({"contract": "executor_evidence_v2", "claims": [claim]})


def verify_pass(input_bytes: bytes, rationale: str = "seen in the events") -> str:
    """A Verifier reply to this verifier input: every claim a critical direct observation, verdict PASS."""
    material = json.loads(input_bytes)
    checks = [
        {
            "claim_id": claim["claim_id"],
            "classification": "direct_observation",
            "critical": True,
            "evidence_refs": [{"claim_id": claim["claim_id"]}],
            "rationale": rationale,
        }
        for claim in material["verified_executor_output"]["claims"]
    ]
    return json.dumps({"claim_checks": checks, "verdict": "PASS", "groundedness_score": 1.0, "rationale": "ok"})


def _compose(request: AgentRequest) -> str:
    material = json.loads(request.input_bytes)
    facts = [{"text": f["statement"], "claim_ids": [f["claim_id"]]} for f in material["confirmed_facts"]]
    return json.dumps({"summary": "checkout-api is out of memory", "confirmed_facts": facts})


class _Agent:
    def __init__(self, provider: PassProvider, role: AgentRole) -> None:
        self._provider = provider
        self._role = role

    async def run(self, request: AgentRequest) -> AgentReply:
        provider = self._provider
        if self._role == provider.gate_role:
            provider.entered.release()
            if provider.gate is not None:
                await provider.gate.wait()
        if self._role == "planner":
            return AgentReply(text=PLAN, model="fake")
        if self._role == "executor":
            return AgentReply(text=await _execute(request), model="fake")
        if self._role == "verifier":
            return AgentReply(text=verify_pass(request.input_bytes), model="fake")
        return AgentReply(text=_compose(request), model="fake")


@dataclass
class PassProvider:
    """Every run: PASS. With ``gate``, every run waits in its ``gate_role`` agent until ``gate`` is set."""

    gate: asyncio.Event | None = None
    gate_role: AgentRole = "planner"
    name: str = "fake"
    # Released once per call of the gate_role agent: ``await provider.entered.acquire()`` waits for a live run.
    entered: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(0))

    def agent(self, role: AgentRole) -> Agent:
        return _Agent(self, role)
