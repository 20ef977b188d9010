"""Agents for graph tests: each role is an async function of the request (the edge we replace)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import Agent, AgentReply, AgentRequest, AgentRole
from diagnosis_server.conversions import JsonObject, JsonValue, to_struct, to_value
from diagnosis_server.graph.context import ToolEnvironment
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import Repository
from diagnosis_server.tools.base import Toolset
from tests.support import fakes as support_fakes

Behaviour = Callable[[AgentRequest], Awaitable[str]]


class _FnAgent:
    def __init__(self, fn: Behaviour, seen: list[AgentRequest]) -> None:
        self._fn = fn
        self._seen = seen

    async def run(self, request: AgentRequest) -> AgentReply:
        self._seen.append(request)
        return AgentReply(text=await self._fn(request))


@dataclass
class FnProvider:
    behaviours: dict[AgentRole, Behaviour]
    name: str = "fn"
    seen: dict[AgentRole, list[AgentRequest]] = field(default_factory=dict)

    def agent(self, role: AgentRole) -> Agent:
        return _FnAgent(self.behaviours[role], self.seen.setdefault(role, []))


class EchoTool:
    """A real tool: returns its arguments and a fixed event list."""

    name = "k8s.events"
    description = "events"
    input_schema: JsonObject = {"type": "object"}  # noqa: RUF012

    async def call(self, arguments: JsonObject) -> JsonValue:
        return {"events": [{"reason": "OOMKilled", "message": "limit 512Mi"}], "arguments": arguments}


def tools() -> ToolEnvironment:
    return ToolEnvironment(toolset=Toolset([EchoTool()]), context={"services": ["checkout-api"]})


PLAN = json.dumps({"steps": [{"tool_name": "k8s.events", "arguments": {}, "purpose": "restarts"}]})

# The blocks of a Verifier input (R-C-4): nothing else ever reaches the Verifier.
VERIFIER_BLOCKS = frozenset(
    {
        "diagnosis_context",
        "verified_executor_output",
        "verified_evidence",
        "gatekeeper_audit",
        "verdict_ceiling",
        "retry_context",
    }
)


async def plan(_: AgentRequest) -> str:
    return PLAN


def executor_calling(tool: str) -> Behaviour:
    async def run(request: AgentRequest) -> str:
        assert request.tools is not None
        result = await request.tools.call(tool, {})
        return json.dumps(
            {
                "contract": "executor_evidence_v2",
                "claims": [
                    {
                        "claim_id": "c1",
                        "statement": "pods are OOMKilled",
                        "critical": True,
                        "status": "confirmed",
                        "evidence_bindings": [
                            {
                                "source_invocation_ids": [result.invocation_id],
                                "tool_name": tool,
                                "raw_path": "/events/0/reason",
                                "matched_text": "OOMKilled",
                            }
                        ],
                    }
                ],
            }
        )

    return run


async def verify_pass(request: AgentRequest) -> str:
    return support_fakes.verify_pass(request.input_bytes, rationale="seen")


async def compose(request: AgentRequest) -> str:
    material = json.loads(request.input_bytes)
    facts = [{"text": f["statement"], "claim_ids": [f["claim_id"]]} for f in material["confirmed_facts"]]
    return json.dumps(
        {
            "summary": "diagnosis",
            "confirmed_facts": facts,
            "possible_directions": [],
            "evidence_gaps": [],
            "next_steps": [],
        }
    )


def pipeline(
    *,
    planner: Behaviour = plan,
    executor: Behaviour | None = None,
    verifier: Behaviour = verify_pass,
    composer: Behaviour = compose,
) -> FnProvider:
    """The agents of a passing run (the executor calls k8s.events), with the roles given in their place."""
    return FnProvider(
        {
            "planner": planner,
            "executor": executor or executor_calling("k8s.events"),
            "verifier": verifier,
            "composer": composer,
        }
    )


async def diagnose(repository: Repository, provider: FnProvider) -> run_pb2.DiagnosisRun:
    """One run of the real graph over ``tools()``, asking "why?" with no scenario."""
    return await Orchestrator(store=repository, provider=provider, tools_for=lambda _: tools()).run(
        question="why?", scenario=""
    )


def invocation(run_id: str, invocation_id: str = "inv-1") -> contracts_pb2.ToolInvocation:
    return contracts_pb2.ToolInvocation(
        invocation_id=invocation_id,
        run_id=run_id,
        tool_name="k8s.events",
        arguments=to_struct({}),
        output=to_value({"events": [{"reason": "OOMKilled"}]}),
        status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
    )
