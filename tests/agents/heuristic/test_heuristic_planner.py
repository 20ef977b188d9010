"""The heuristic Planner: target selection, the FULL plan, the step cap, and gap-only plans (R-R-4)."""

from __future__ import annotations

import json

import pytest

from diagnosis_server.agents.heuristic import create_provider
from diagnosis_server.agents.heuristic.gaps import NextCall, format_next
from diagnosis_server.agents.heuristic.cluster_plan import MAX_CLUSTER_STEPS
from diagnosis_server.agents.heuristic.planner import MAX_LIVE_STEPS, MAX_STEPS, full_plan, gap_plan
from diagnosis_server.agents.heuristic.targets import ServiceInfo, select_targets, services_from_context
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.protocols.planner import parse_planner_output
from diagnosis_server.tools.builtin import TOOL_NAMES

from ._support import SCENARIOS, environment, planner_payload, request


def _argument(step: JsonObject, name: str) -> JsonValue:
    arguments = step["arguments"]
    assert isinstance(arguments, dict), step
    return arguments[name]


def _services(name: str) -> list[ServiceInfo]:
    return services_from_context(environment(name).context)


def _tools(name: str) -> dict[str, JsonObject]:
    return {str(spec["name"]): spec for spec in environment(name).toolset.specs()}


@pytest.mark.parametrize(
    ("name", "question", "primary", "secondary"),
    [
        ("inventory-ambiguous", "Why is inventory-api returning 500s?", ["inventory-api"], []),
        ("checkout-oom", "Why are checkouts failing on shop.example.com?", ["checkout-api"], []),
        ("orders-db-pool", "Why are order pages timing out?", ["orders-api"], ["orders-db", "order-events"]),
        ("search-disk-full", "Why is search stale?", ["search-api"], ["search-es"]),
        ("gateway-tls-expired", "Why are logins failing?", ["api-gateway"], []),
        ("healthy-noisy", "Is there an incident affecting the shop right now?", ["web-frontend"], []),
    ],
)
def test_targets_are_named_services_else_entry_points(
    name: str, question: str, primary: list[str], secondary: list[str]
) -> None:
    targets = select_targets(question, _services(name))
    assert [t.name for t in targets.primary] == primary
    assert [t.name for t in targets.secondary] == secondary


def test_a_service_named_in_full_wins_over_name_parts() -> None:
    services = [ServiceInfo("inventory-api", "http"), ServiceInfo("inventory-db", "database")]
    assert [t.name for t in select_targets("is inventory-db full?", services).primary] == ["inventory-db"]
    # A generic part ("api") names nothing.
    assert select_targets("why is the api slow?", services).how == "entry services (no caller)"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_full_plan_looks_at_the_target_first_and_stays_within_the_cap(name: str) -> None:
    plan, targets = full_plan(SCENARIOS[name].question, _tools(name), _services(name))
    steps = plan.steps
    assert 0 < len(steps) <= MAX_STEPS
    target = targets.primary[0].name
    first = [(s["tool_name"], s["arguments"].get("service")) for s in steps[:6]]  # type: ignore[union-attr]
    assert ("topology.dependencies", target) in first
    assert ("logs.search", target) in first
    assert ("k8s.events", target) in first
    assert any(s["tool_name"] == "deploys.list" for s in steps)
    # Only metrics the catalog lists are read; no call is planned twice.
    catalog = {s.name: set(s.metrics or ()) for s in _services(name)}
    for step in steps:
        args = step["arguments"]
        assert isinstance(args, dict)
        if step["tool_name"] == "metrics.query":
            assert args["metric"] in catalog[str(args["service"])]
    keys = [json.dumps(s, sort_keys=True) for s in steps]
    assert len(keys) == len(set(keys))


def test_full_plan_is_capped_at_sixteen_steps() -> None:
    metrics = ("http_requests_error_rate", "http_request_duration_p99_ms", "db_connections_in_use")
    deps: list[JsonObject] = [
        {"name": f"dep-{i}", "kind": "http", "depends_on": [], "metrics": list(metrics)} for i in range(12)
    ]
    context: JsonObject = {
        "services": [
            {"name": "front", "kind": "http", "depends_on": [d["name"] for d in deps], "metrics": list(metrics)},
            *deps,
        ]
    }
    tools: dict[str, JsonObject] = {name: {"name": name} for name in TOOL_NAMES}
    plan, _ = full_plan("why is front failing?", tools, services_from_context(context))
    assert len(plan.steps) == MAX_STEPS == 16


def test_without_a_metrics_catalog_the_plan_uses_conventional_names() -> None:
    tools: dict[str, JsonObject] = {name: {"name": name} for name in TOOL_NAMES}
    plan, _ = full_plan("why?", tools, services_from_context({"services": ["checkout-api"]}))
    metrics = [_argument(s, "metric") for s in plan.steps if s["tool_name"] == "metrics.query"]
    assert metrics == ["http_requests_error_rate", "http_request_duration_p99_ms"]


def _retry(*descriptions: str) -> JsonObject:
    return {
        "evidence_retry_count": 1,
        "evidence_gaps": [{"description": d, "critical": True} for d in descriptions],
    }


@pytest.mark.requirement("R-R-4")
def test_gap_plan_is_exactly_the_named_calls() -> None:
    calls = [
        NextCall.of("k8s.events", service="warehouse-gateway"),
        NextCall.of("logs.search", service="inventory-api", level="ERROR", query="warehouse-gateway"),
        NextCall.of("metrics.query", service="inventory-api", metric="http_requests_error_rate"),
        NextCall.of("logs.search", service="warehouse-gateway", limit=20),
    ]
    plan = gap_plan(
        _retry(f"warehouse-gateway is failing {format_next(calls)}"),
        _tools("inventory-ambiguous"),
        _services("inventory-ambiguous"),
    )
    assert [(s["tool_name"], s["arguments"]) for s in plan.steps] == [
        ("k8s.events", {"service": "warehouse-gateway"}),
        ("logs.search", {"service": "inventory-api", "level": "ERROR", "query": "warehouse-gateway"}),
        ("metrics.query", {"service": "inventory-api", "metric": "http_requests_error_rate"}),
        ("logs.search", {"service": "warehouse-gateway", "limit": 20}),  # integer by the tool's input schema
    ]


def test_gap_plan_expands_a_metrics_query_without_metric_from_the_catalog_and_skips_unknowns() -> None:
    description = (
        "x (next: metrics.query service=warehouse-gateway; metrics.query service=inventory-api metric=nope; "
        "k8s.events service=no-such-service; shell.exec service=inventory-api)"
    )
    plan = gap_plan(_retry(description), _tools("inventory-ambiguous"), _services("inventory-ambiguous"))
    metrics = {str(_argument(s, "metric")) for s in plan.steps}
    assert {s["tool_name"] for s in plan.steps} == {"metrics.query"}
    assert metrics == {
        "kube_deployment_status_replicas_available",
        "http_requests_error_rate",
        "container_cpu_usage_cores",
        "upstream_latency_p99_ms",
    }


def test_gap_plan_without_named_calls_falls_back_to_the_services_the_gaps_name() -> None:
    plan = gap_plan(
        _retry("Critical claim c2 about warehouse-gateway is unsupported"),
        _tools("inventory-ambiguous"),
        _services("inventory-ambiguous"),
    )
    assert [(s["tool_name"], s["arguments"]) for s in plan.steps] == [
        ("logs.search", {"service": "warehouse-gateway", "level": "WARN"}),
        ("k8s.events", {"service": "warehouse-gateway"}),
    ]
    assert gap_plan(_retry("nothing useful"), _tools("inventory-ambiguous"), []).steps  # never an empty plan


async def test_planner_reply_parses_under_the_pinned_protocol_in_both_modes() -> None:
    planner = create_provider().agent("planner")
    full = await planner.run(request("planner", planner_payload("checkout-oom")))
    tools = environment("checkout-oom").toolset.names
    parsed = parse_planner_output(full.text, allowed_tools=tools)
    assert parsed.ok and len(parsed.steps) <= MAX_STEPS + MAX_LIVE_STEPS + MAX_CLUSTER_STEPS
    # The pack answers the live tools too: its pods, events and kube-state-metrics are looked at.
    assert {"kubernetes.events", "prometheus.query"} <= {s.tool_name for s in parsed.steps}
    retry = _retry(f"gap {format_next([NextCall.of('k8s.events', service='payments-api')])}")
    gap = await planner.run(request("planner", planner_payload("checkout-oom", mode="EVIDENCE_GAP_ONLY", retry=retry)))
    parsed = parse_planner_output(gap.text, allowed_tools=tools)
    assert parsed.ok and [(s.tool_name, s.arguments) for s in parsed.steps] == [
        ("k8s.events", {"service": "payments-api"})
    ]
