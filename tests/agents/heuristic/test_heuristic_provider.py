"""The `heuristic` provider: registered by name, stateless across concurrent runs, and honest (it never
reads a scenario's `truth`, its files or its name)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from diagnosis_server.agents import heuristic
from diagnosis_server.agents.heuristic import HeuristicProvider, create_provider
from diagnosis_server.agents.registry import create_provider as registry_create
from diagnosis_server.api.components import load_provider
from diagnosis_server.conversions import JsonObject
from diagnosis_server.settings import SettingsError
from diagnosis_server.sources.packs import pack_toolset
from diagnosis_server.store import Repository

from ._support import (
    SCENARIOS,
    Recorded,
    comparable_answer,
    executor_payload,
    planner_payload,
    request,
    run_scenario,
    statements,
)


def test_the_registry_builds_the_heuristic_provider() -> None:
    provider = registry_create("heuristic")
    assert isinstance(provider, HeuristicProvider) and provider.name == "heuristic"
    assert {type(provider.agent(role)).__name__ for role in ("planner", "executor", "verifier", "composer")} == {
        "HeuristicPlanner",
        "HeuristicExecutor",
        "HeuristicVerifier",
        "HeuristicComposer",
    }


def test_the_package_reads_no_scenario_file_and_no_truth() -> None:
    package = Path(heuristic.__file__).parent
    for source in package.glob("*.py"):
        text = source.read_text(encoding="utf-8")
        for forbidden in (".truth", '"truth"', "'truth'", "tools.scenario", "load_scenario", "open(", "Path("):
            assert forbidden not in text, f"{source.name} mentions {forbidden!r}"


async def test_the_scenario_name_and_title_do_not_steer_the_planner() -> None:
    planner = create_provider().agent("planner")
    original = planner_payload("checkout-oom")
    disguised: JsonObject = json.loads(json.dumps(original))
    disguised["scenario"] = "payments-bad-deploy"
    context = disguised["context"]
    assert isinstance(context, dict)
    context["scenario"], context["title"] = "disk-full", "Disk full on the search cluster"
    first = await planner.run(request("planner", original))
    second = await planner.run(request("planner", disguised))
    assert json.loads(first.text)["steps"] == json.loads(second.text)["steps"]


async def test_the_executor_output_depends_only_on_the_plan_and_tool_outputs() -> None:
    steps = json.loads(
        (await create_provider().agent("planner").run(request("planner", planner_payload("orders-db-pool")))).text
    )["steps"]
    outputs = []
    for scenario_name in ("orders-db-pool", "healthy-noisy"):
        payload = executor_payload(steps)
        payload["scenario"] = scenario_name
        payload["question"] = SCENARIOS[scenario_name].question
        recorded = Recorded(pack_toolset(SCENARIOS["orders-db-pool"]))
        reply = await create_provider().agent("executor").run(request("executor", payload, tools=recorded.runner()))
        outputs.append([claim["statement"] for claim in json.loads(reply.text)["claims"]])
    assert outputs[0] == outputs[1] and outputs[0]


async def test_one_provider_serves_concurrent_runs_without_shared_state(repository: Repository) -> None:
    provider = create_provider()
    names = ["inventory-ambiguous", "checkout-oom", "healthy-noisy"]
    together = await asyncio.gather(*(run_scenario(repository, n, provider=provider) for n in names))
    for name, run in zip(names, together, strict=True):
        alone = await run_scenario(repository, name, provider=provider)
        assert comparable_answer(run) == comparable_answer(alone)
        assert statements(run) == statements(alone)
        assert list(run.orchestration_trace.path) == list(alone.orchestration_trace.path)


def test_a_bad_rules_file_stops_start_up_naming_the_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-AN-1: an operator's rules file that cannot be used is refused when the provider is built, with one line
    naming the file and the field (not as a failure of every run's Executor)."""
    bad = tmp_path / "rules.toml"
    bad.write_text('[[event]]\nkind = "x"\nreasons = ["Failed"]\nrole = "cause"\nphrase = "fails"\nmessage = "(["\n')
    monkeypatch.setenv("DIAGNOSIS_HEURISTIC_RULES_FILE", str(bad))
    with pytest.raises(SettingsError) as raised:
        load_provider("heuristic")
    assert str(bad) in str(raised.value) and "event.0.message" in str(raised.value)
