"""The packs can support a diagnosis through the tools alone, and the truth never leaks into a tool output.

A claim binds to a string of a recorded tool output by JSON Pointer (R-C-1, R-GK-5); these tests prove
that every pack's key evidence is such a string, reachable with the five tools, and that the inventory
pack's evidence is out of reach of a first look at the failing service alone.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.tools.builtin import builtin_toolset
from diagnosis_server.tools.scenario import BUNDLED_DIR, Scenario
from tests.support.scenarios import truth_of

from ._helpers import all_keys, explore, resolve_pointer, string_leaves

PACKS = sorted(path.stem for path in BUNDLED_DIR.glob("*.json"))
TRUTH_KEYS = {"truth", "root_cause", "key_evidence", "healthy", "ambiguous"}


@pytest.mark.requirement("R-C-1")
@pytest.mark.parametrize("name", PACKS)
async def test_every_key_evidence_string_is_bindable_in_a_tool_output(bundled: dict[str, Scenario], name: str) -> None:
    scenario = bundled[name]
    outputs = await explore(scenario)
    for evidence in truth_of(scenario).key_evidence:
        hits = [
            (output, pointer) for _, _, output in outputs for pointer, text in string_leaves(output) if evidence in text
        ]
        assert hits, f"{name}: {evidence!r} is in no tool output"
        for output, pointer in hits:
            text = resolve_pointer(output, pointer)
            assert isinstance(text, str) and evidence in text


@pytest.mark.parametrize("name", PACKS)
async def test_truth_never_appears_in_any_tool_output(bundled: dict[str, Scenario], name: str) -> None:
    scenario = bundled[name]
    outputs = await explore(scenario)
    for tool, arguments, output in outputs:
        assert not TRUTH_KEYS & set(all_keys(output)), (tool, arguments)
        blob = json.dumps(output, allow_nan=False)
        assert truth_of(scenario).root_cause.summary not in blob
        assert json.dumps(truth_of(scenario).root_cause.summary)[1:-1] not in blob
    specs = json.dumps(builtin_toolset(scenario).specs())
    assert truth_of(scenario).root_cause.summary not in specs


def _max_ratio(output: Any) -> float:
    summary = output["summary"]
    baseline = summary["baseline_mean"]
    return float(summary["max"]) / max(float(baseline), 1e-9)


@pytest.mark.parametrize("name", [p for p in PACKS if p != "healthy-noisy"])
async def test_each_incident_shows_a_symptom_against_its_baseline(bundled: dict[str, Scenario], name: str) -> None:
    """Some error-rate series rises well above its own pre-incident baseline (first 20% of the window)."""
    scenario = bundled[name]
    tools = builtin_toolset(scenario)
    metrics = tools.get("metrics.query")
    assert metrics is not None
    ratios = []
    for series in scenario.metrics:
        if series.metric == "http_requests_error_rate":
            out = await metrics.call({"metric": series.metric, "service": series.service})
            ratios.append(_max_ratio(out))
    assert max(ratios) > 5


async def test_healthy_pack_has_no_symptom(bundled: dict[str, Scenario]) -> None:
    scenario = bundled["healthy-noisy"]
    tools = builtin_toolset(scenario)
    metrics = tools.get("metrics.query")
    assert metrics is not None
    for series in scenario.metrics:
        if series.metric == "http_requests_error_rate":
            out: Any = await metrics.call({"metric": series.metric, "service": series.service})
            assert out["summary"]["max"] < 0.01, series.service
    events = tools.get("k8s.events")
    assert events is not None
    out = await events.call({"reason": "OOMKilled"})
    assert isinstance(out, dict) and out["total"] == 0
    # noise is there all the same: warnings, an error line, a restart and a deploy
    logs = tools.get("logs.search")
    assert logs is not None
    warnings: Any = await logs.call({"service": "checkout-api", "level": "WARN"})
    assert warnings["total_matches"] >= 3
    restarts: Any = await events.call({"service": "notifications-worker", "reason": "Killing"})
    assert restarts["total"] >= 1


async def _first_round(scenario: Scenario, service: str) -> list[JsonValue]:
    """The obvious first look at a failing service: its own logs (all, and errors), error rate, events, deploys."""
    tools = builtin_toolset(scenario)
    calls: list[tuple[str, JsonObject]] = [
        ("logs.search", {"service": service, "limit": 200}),
        ("logs.search", {"service": service, "level": "ERROR", "limit": 200}),
        ("metrics.query", {"metric": "http_requests_error_rate", "service": service}),
        ("k8s.events", {"service": service}),
        ("deploys.list", {"service": service}),
        ("topology.dependencies", {"service": service}),
    ]
    if not any(m.metric == "http_requests_error_rate" and m.service == service for m in scenario.metrics):
        calls.pop(2)
    outputs: list[JsonValue] = []
    for name, arguments in calls:
        tool = tools.get(name)
        assert tool is not None
        outputs.append(await tool.call(arguments))
    return outputs


async def test_inventory_ambiguous_first_round_cannot_tell_the_cause(bundled: dict[str, Scenario]) -> None:
    scenario = bundled["inventory-ambiguous"]
    assert truth_of(scenario).ambiguous
    first = await _first_round(scenario, "inventory-api")
    blob = json.dumps(first)
    for evidence in truth_of(scenario).key_evidence:
        assert evidence not in blob, evidence
    # ...but the symptom is plain, and two candidate causes are named: the dependency and the database pool
    logs: Any = first[0]
    errors: Any = first[2]
    assert errors["summary"]["max"] > 10 * errors["summary"]["baseline_mean"]
    messages = [line["message"] for line in logs["lines"]]
    assert any("warehouse-gateway" in m and "503 Service Unavailable" in m for m in messages)
    assert any("QueuePool limit" in m for m in messages)


async def test_inventory_ambiguous_second_look_at_the_named_dependency_reveals_it(
    bundled: dict[str, Scenario],
) -> None:
    scenario = bundled["inventory-ambiguous"]
    tools = builtin_toolset(scenario)
    events = tools.get("k8s.events")
    metrics = tools.get("metrics.query")
    assert events is not None and metrics is not None
    out: Any = await events.call({"service": "warehouse-gateway"})
    messages = [e["message"] for e in out["events"]]
    reasons = {e["reason"] for e in out["events"]}
    assert "FailedMount" in reasons
    assert any('configmap "warehouse-gateway-config" not found' in m for m in messages)
    replicas: Any = await metrics.call(
        {"metric": "kube_deployment_status_replicas_available", "service": "warehouse-gateway"}
    )
    assert replicas["summary"]["baseline_mean"] == 3 and replicas["summary"]["last"] == 1
    # and the database the logs also pointed at is healthy: far from its connection limit
    in_use: Any = await metrics.call({"metric": "db_connections_in_use", "service": "inventory-db"})
    limit: Any = await metrics.call({"metric": "db_connections_max", "service": "inventory-db"})
    assert in_use["summary"]["max"] < 0.5 * limit["summary"]["min"]


@pytest.mark.parametrize("name", [p for p in PACKS if p not in ("healthy-noisy", "inventory-ambiguous")])
async def test_clear_packs_show_evidence_in_the_first_round_of_some_service(
    bundled: dict[str, Scenario], name: str
) -> None:
    """Outside the ambiguous pack, a first look at the root-cause service or a caller already shows evidence."""
    scenario = bundled[name]
    root = truth_of(scenario).root_cause.service
    assert root is not None
    candidates = [root] + [s.name for s in scenario.topology.services if root in s.depends_on]
    seen = ""
    for service in candidates:
        seen += json.dumps(await _first_round(scenario, service))
    assert any(evidence in seen for evidence in truth_of(scenario).key_evidence)
