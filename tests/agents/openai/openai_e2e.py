"""Running the real graph with the openai provider against the fake endpoint (SQLite store, built-in tools)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from diagnosis.v1 import run_pb2
from diagnosis_server.agents.openai import OpenAIProvider, OpenAISettings
from diagnosis_server.conversions import enum_short_name
from diagnosis_server.graph.context import Limits, ToolEnvironment
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import Repository
from diagnosis_server.tools.builtin import builtin_toolset, scenario_context
from diagnosis_server.tools.scenario import get_scenario

from .openai_fake_endpoint import FakeOpenAI

SCENARIO = "checkout-oom"


def settings_for(fake: FakeOpenAI, **overrides: Any) -> OpenAISettings:
    values: dict[str, Any] = {"base_url": fake.base_url, "model": "fake-model", "api_key": "test-key", "timeout_s": 5.0}
    values.update(overrides)
    return OpenAISettings(**values)


def provider_for(fake: FakeOpenAI, **overrides: Any) -> OpenAIProvider:
    return OpenAIProvider(settings_for(fake, **overrides))


def scenario_tools(_scenario: str = SCENARIO) -> ToolEnvironment:
    scenario = get_scenario(SCENARIO)
    return ToolEnvironment(toolset=builtin_toolset(scenario), context=scenario_context(scenario))


async def diagnose(
    repository: Repository,
    provider: OpenAIProvider,
    *,
    allowed_tools: Sequence[str] | None = None,
    limits: Limits | None = None,
) -> run_pb2.DiagnosisRun:
    orchestrator = Orchestrator(
        store=repository,
        provider=provider,
        tools_for=scenario_tools,
        allowed_tools=allowed_tools,
        limits=limits or Limits(),
    )
    try:
        run = await orchestrator.run(question=get_scenario(SCENARIO).question, scenario=SCENARIO)
    finally:
        await provider.aclose()
    stored = await repository.get_run(run.run_id)
    assert stored is not None
    return stored


def route(run: run_pb2.DiagnosisRun) -> list[str]:
    return [enum_short_name(run_pb2.NodeName, node, lower=True) or "?" for node in run.orchestration_trace.path]


async def attempts(repository: Repository, run_id: str, node: int) -> list[tuple[int, str]]:
    """(attempt, outcome) of each event of ``node``, in order."""
    events = await repository.list_events(run_id)
    return [(e.attempt, enum_short_name(run_pb2.NodeOutcome, e.outcome) or "?") for e in events if e.node == node]
