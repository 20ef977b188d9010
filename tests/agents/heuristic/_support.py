"""Helpers for heuristic-agent tests: run a bundled scenario through the real graph; call one agent."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import AgentProvider, AgentRequest, AgentRole, ToolCaller
from diagnosis_server.agents.heuristic import create_provider
from diagnosis_server.composition.render import answer_text
from diagnosis_server.conversions import JsonObject, JsonValue, canonical_json_bytes
from diagnosis_server.graph.context import ToolEnvironment
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.sources.packs import pack_context, pack_toolset
from diagnosis_server.store import Repository
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.builtin import builtin_toolset, scenario_context
from diagnosis_server.tools.runner import ToolRunner
from diagnosis_server.tools.scenario import Scenario, load_scenarios

SCENARIOS: dict[str, Scenario] = load_scenarios()


def builtin_environment(name: str) -> ToolEnvironment:
    """A scenario's five built-in tools only (no live tool), with their planner context."""
    scenario = SCENARIOS[name]
    return ToolEnvironment(toolset=builtin_toolset(scenario), context=scenario_context(scenario))


def environment(name: str) -> ToolEnvironment:
    """A scenario's tools as the server gives them: the built-in tools and the live tools its data answers."""
    scenario = SCENARIOS[name]
    return ToolEnvironment(toolset=pack_toolset(scenario), context=pack_context(scenario))


async def run_scenario(
    repository: Repository,
    name: str,
    *,
    provider: AgentProvider | None = None,
    question: str | None = None,
    tools_for: Callable[[str], ToolEnvironment] | None = None,
) -> run_pb2.DiagnosisRun:
    """Run the scenario's own question through the graph; return the run as read back from the store."""
    orchestrator = Orchestrator(
        store=repository, provider=provider or create_provider(), tools_for=tools_for or environment
    )
    run = await orchestrator.run(question=question or SCENARIOS[name].question, scenario=name)
    stored = await repository.get_run(run.run_id)
    assert stored is not None
    return stored


def request(role: AgentRole, payload: JsonObject, *, tools: ToolCaller | None = None, cycle: int = 1) -> AgentRequest:
    return AgentRequest(
        role=role,
        input_bytes=canonical_json_bytes(payload),
        run_id="run-test",
        attempt=1,
        cycle=cycle,
        prompt_name=f"{role}.test",
        prompt_version="1",
        tools=tools,
    )


@dataclass
class Recorded:
    """A tool runner over a toolset whose recorded invocations stay in memory."""

    toolset: Toolset
    invocations: list[contracts_pb2.ToolInvocation] = field(default_factory=list)

    def runner(self, *, allowed: list[str] | None = None, cycle: int = 1) -> ToolRunner:
        async def record(invocation: contracts_pb2.ToolInvocation) -> None:
            self.invocations.append(invocation)

        return ToolRunner(run_id="run-test", toolset=self.toolset, recorder=record, allowed=allowed, cycle=cycle)


def planner_payload(name: str, *, mode: str = "FULL", retry: JsonObject | None = None) -> JsonObject:
    scenario = SCENARIOS[name]
    env = environment(name)
    payload: JsonObject = {
        "question": scenario.question,
        "scenario": name,
        "cycle": 1 if retry is None else 2,
        "mode": mode,
        "tools": list[JsonValue](env.toolset.specs()),
        "context": env.context,
    }
    if retry is not None:
        payload["retry_context"] = retry
    return payload


def executor_payload(steps: list[JsonValue], *, cycle: int = 1) -> JsonObject:
    return {
        "question": "why?",
        "scenario": "any",
        "cycle": cycle,
        "mode": "FULL" if cycle == 1 else "EVIDENCE_GAP_ONLY",
        "plan": {"steps": steps},
        "tools": [],
    }


def cited(run: run_pb2.DiagnosisRun) -> set[str]:
    shown = (*run.answer.confirmed_facts, *run.answer.possible_directions, run.answer.likely_cause)
    return {cid for item in shown for cid in item.claim_ids}


def statements(run: run_pb2.DiagnosisRun) -> Mapping[str, str]:
    verified = run.self_evaluation.verifier_evaluation.verified_executor_output
    return {claim.claim_id: claim.statement for claim in verified.claims}


def comparable_answer(run: run_pb2.DiagnosisRun) -> str:
    """The run's answer text without what differs between two runs of the same input (invocation ids, times)."""
    answer = run_pb2.DiagnosisRun().answer
    answer.CopyFrom(run.answer)
    for item in answer.confirmed_facts:
        for quote in item.evidence:
            quote.source_invocation_id = "inv"
            quote.ClearField("observed_at")
    return answer_text(answer)
