"""The built-in toolset: each tool's happy paths, filters, windows, limits and argument errors (R-C-2)."""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonObject, JsonValue, canonical_json_bytes
from diagnosis_server.tools.base import Tool, ToolError, Toolset
from diagnosis_server.tools.builtin import TOOL_NAMES, builtin_toolset, scenario_context
from diagnosis_server.tools.runner import ToolRunner
from diagnosis_server.tools.scenario import Scenario
from tests.support.scenarios import truth_of

from ._helpers import minimal_pack, resolve_pointer


async def call(toolset: Toolset, name: str, arguments: JsonObject) -> Any:
    tool = toolset.get(name)
    assert tool is not None, name
    output = await tool.call(arguments)
    json.dumps(output, allow_nan=False)  # always plain JSON
    return output


# ------------------------------------------------------------------------------------ the set
def test_toolset_has_the_five_tools_in_a_stable_order(mini_tools: Toolset) -> None:
    assert mini_tools.names == TOOL_NAMES
    assert TOOL_NAMES == ("logs.search", "metrics.query", "deploys.list", "k8s.events", "topology.dependencies")
    for name in TOOL_NAMES:
        assert isinstance(mini_tools.get(name), Tool)


def test_every_tool_has_a_description_and_a_closed_object_schema(mini_tools: Toolset) -> None:
    for spec in mini_tools.as_mapping().values():
        assert len(spec.description) > 80, spec.name
        schema = spec.input_schema
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        properties = schema["properties"]
        assert isinstance(properties, dict) and properties
        required = schema["required"]
        assert isinstance(required, list) and set(map(str, required)) <= set(properties)
        for prop in properties.values():
            assert isinstance(prop, dict) and prop["type"] in ("string", "integer") and prop["description"]
        json.dumps(spec.input_schema)
    assert json.loads(json.dumps(mini_tools.specs()))[0].keys() == {"name", "description", "input_schema"}


def test_schemas_name_the_required_arguments(mini_tools: Toolset) -> None:
    required = {tool.name: tool.input_schema["required"] for tool in mini_tools.as_mapping().values()}
    assert required == {
        "logs.search": ["service"],
        "metrics.query": ["metric", "service"],
        "deploys.list": [],
        "k8s.events": [],
        "topology.dependencies": ["service"],
    }


def test_schema_is_a_fresh_copy(mini_tools: Toolset) -> None:
    tool = mini_tools.get("logs.search")
    assert tool is not None
    schema = tool.input_schema
    schema["properties"] = {}
    assert tool.input_schema["properties"]


# ------------------------------------------------------------------------------------ logs.search
async def test_logs_search_returns_lines_newest_first(mini_tools: Toolset) -> None:
    out = await call(mini_tools, "logs.search", {"service": "api"})
    assert out["service"] == "api"
    assert out["order"] == "newest_first"
    assert out["window"] == {"start": "2024-01-01T10:00:00Z", "end": "2024-01-01T11:00:00Z"}
    assert out["total_matches"] == out["returned"] == 3
    assert [line["message"] for line in out["lines"]] == ["DB Timeout after 30s", "slow query 900ms", "started"]
    assert out["lines"][1] == {"ts": "2024-01-01T10:02:00.250Z", "level": "WARN", "message": "slow query 900ms"}


async def test_logs_search_pointer_resolves_to_the_shown_string(mini_tools: Toolset) -> None:
    out = await call(mini_tools, "logs.search", {"service": "db"})
    assert resolve_pointer(out, "/lines/0/message") == "too many connections"
    assert resolve_pointer(out, "/lines/0/level") == "FATAL"


async def test_logs_search_query_is_a_case_insensitive_substring(mini_tools: Toolset) -> None:
    out = await call(mini_tools, "logs.search", {"service": "api", "query": "db timeout"})
    assert [line["message"] for line in out["lines"]] == ["DB Timeout after 30s"]
    out = await call(mini_tools, "logs.search", {"service": "api", "query": "no such text"})
    assert out["total_matches"] == 0 and out["lines"] == []


@pytest.mark.parametrize(
    ("level", "expected"),
    [("debug", 3), ("INFO", 3), ("warn", 2), ("Error", 1), ("FATAL", 0)],
)
async def test_logs_search_level_is_a_minimum_severity(mini_tools: Toolset, level: str, expected: int) -> None:
    out = await call(mini_tools, "logs.search", {"service": "api", "level": level})
    assert out["total_matches"] == expected


async def test_logs_search_window_is_inclusive(mini_tools: Toolset) -> None:
    out = await call(
        mini_tools,
        "logs.search",
        {"service": "api", "start": "2024-01-01T10:02:00.250Z", "end": "2024-01-01T10:03:00Z"},
    )
    assert [line["ts"] for line in out["lines"]] == ["2024-01-01T10:03:00Z", "2024-01-01T10:02:00.250Z"]
    assert out["window"] == {"start": "2024-01-01T10:02:00.250Z", "end": "2024-01-01T10:03:00Z"}


async def test_logs_search_accepts_offsets_and_zone_less_times_as_utc(mini_tools: Toolset) -> None:
    out = await call(
        mini_tools,
        "logs.search",
        {"service": "api", "start": "2024-01-01T12:01:30+02:00", "end": "2024-01-01T10:02:30"},
    )
    assert out["window"] == {"start": "2024-01-01T10:01:30Z", "end": "2024-01-01T10:02:30Z"}
    assert [line["message"] for line in out["lines"]] == ["slow query 900ms"]


async def test_logs_search_null_optional_arguments_count_as_absent(mini_tools: Toolset) -> None:
    out = await call(mini_tools, "logs.search", {"service": "api", "query": None, "level": None, "limit": None})
    assert out["total_matches"] == 3


async def test_logs_search_limit_default_and_max(bundled: dict[str, Scenario]) -> None:
    counts = Counter((name, line.service) for name, s in bundled.items() for line in s.logs)
    (pack, service), total = counts.most_common(1)[0]
    assert 50 < total <= 200, "the busiest service has more lines than the default limit, fewer than the max"
    tools = builtin_toolset(bundled[pack])
    default = await call(tools, "logs.search", {"service": service})
    assert default["total_matches"] == total
    assert default["returned"] == len(default["lines"]) == 50
    everything = await call(tools, "logs.search", {"service": service, "limit": 200})
    assert everything["returned"] == everything["total_matches"] == total
    assert everything["lines"][:50] == default["lines"]
    one = await call(tools, "logs.search", {"service": service, "limit": 1})
    assert one["lines"] == default["lines"][:1] and one["total_matches"] == total
    stamps = [line["ts"] for line in everything["lines"]]
    assert stamps == sorted(stamps, reverse=True)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "missing required argument 'service'"),
        ({"service": "nope"}, "unknown service 'nope'; services in this scenario: api, db"),
        ({"service": "api", "limit": 0}, "'limit' must be at least 1"),
        ({"service": "api", "limit": 201}, "'limit' must be at most 200"),
        ({"service": "api", "limit": "10"}, "'limit' must be an integer"),
        ({"service": "api", "limit": True}, "'limit' must be an integer"),
        ({"service": "api", "limit": 2.5}, "'limit' must be an integer"),
        ({"service": "api", "level": "verbose"}, "'level' must be one of DEBUG, INFO, WARN, ERROR, FATAL"),
        ({"service": "api", "query": ""}, "'query' must not be empty"),
        ({"service": 3}, "'service' must be a string"),
        ({"service": "api", "start": "noon"}, "start 'noon' is not an ISO 8601 time"),
        ({"service": "api", "end": "0001-01-01T00:00:00+01:00"}, "is not an ISO 8601 time"),
        ({"service": "api", "start": "2024-01-01T11:00:00Z", "end": "2024-01-01T10:00:00Z"}, "is after end"),
        (
            {"service": "api", "grep": "x"},
            "unknown argument(s) grep; allowed: service, query, level, start, end, limit",
        ),
    ],
)
async def test_logs_search_bad_arguments_are_tool_errors(
    mini_tools: Toolset, arguments: JsonObject, message: str
) -> None:
    with pytest.raises(ToolError) as info:
        await call(mini_tools, "logs.search", arguments)
    assert message in str(info.value)
    assert str(info.value).startswith("logs.search: ")


async def test_arguments_must_be_an_object(mini_tools: Toolset) -> None:
    tool = mini_tools.get("deploys.list")
    assert tool is not None
    with pytest.raises(ToolError, match="arguments must be a JSON object"):
        await tool.call(["service"])  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ metrics.query
async def test_metrics_query_returns_points_and_summary(mini_tools: Toolset) -> None:
    out = await call(mini_tools, "metrics.query", {"metric": "http_requests_error_rate", "service": "api"})
    assert out["metric"] == "http_requests_error_rate" and out["service"] == "api" and out["unit"] == "ratio"
    assert out["labels"] == {"status": "5xx"}
    assert out["points"][0] == ["2024-01-01T10:00:00Z", 0.01]
    assert len(out["points"]) == 5
    assert out["summary"] == {
        "count": 5,
        "min": 0.01,
        "min_at": "2024-01-01T10:00:00Z",
        "max": 0.5,
        "max_at": "2024-01-01T10:30:00Z",
        "mean": 0.244,
        "p95": 0.5,
        "first": 0.01,
        "last": 0.4,
        "baseline_mean": 0.01,
    }


async def test_metrics_query_summary_matches_its_points(bundled: dict[str, Scenario]) -> None:
    tools = builtin_toolset(bundled["checkout-oom"])
    out = await call(
        tools, "metrics.query", {"metric": "container_memory_working_set_bytes", "service": "checkout-api"}
    )
    values = [value for _, value in out["points"]]
    summary = out["summary"]
    assert summary["count"] == len(values) == 91
    assert summary["max"] == max(values) and summary["min"] == min(values)
    assert summary["mean"] == pytest.approx(sum(values) / len(values))
    first_fifth = values[: math.ceil(len(values) * 0.2)]
    assert summary["baseline_mean"] == pytest.approx(sum(first_fifth) / len(first_fifth))
    assert summary["p95"] == sorted(values)[math.ceil(0.95 * len(values)) - 1]
    assert all(isinstance(v, int) for v in values), "byte counts stay integers"
    assert out["labels"]["limit"] == "536870912"


async def test_metrics_query_window_narrows_points_and_summary(mini_tools: Toolset) -> None:
    out = await call(
        mini_tools,
        "metrics.query",
        {"metric": "http_requests_error_rate", "service": "api", "start": "2024-01-01T10:20:00Z"},
    )
    assert [ts for ts, _ in out["points"]] == ["2024-01-01T10:20:00Z", "2024-01-01T10:30:00Z", "2024-01-01T10:40:00Z"]
    assert out["summary"]["baseline_mean"] == 0.3
    empty = await call(
        mini_tools,
        "metrics.query",
        {"metric": "http_requests_error_rate", "service": "api", "start": "2024-01-01T10:41:00Z"},
    )
    assert empty["points"] == []
    assert empty["summary"]["count"] == 0 and empty["summary"]["max"] is None


async def test_metrics_query_unknown_metric_lists_the_service_metrics(bundled: dict[str, Scenario]) -> None:
    tools = builtin_toolset(bundled["orders-db-pool"])
    with pytest.raises(ToolError) as info:
        await call(tools, "metrics.query", {"metric": "memory", "service": "orders-db"})
    assert "no metric 'memory' for service 'orders-db'" in str(info.value)
    assert "container_cpu_usage_cores, db_connections_in_use, db_connections_max" in str(info.value)
    with pytest.raises(ToolError, match="its metrics: none"):
        await call(tools, "metrics.query", {"metric": "memory", "service": "reporting-worker"})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"service": "api"}, "missing required argument 'metric'"),
        ({"metric": "http_requests_error_rate"}, "missing required argument 'service'"),
        ({"metric": "http_requests_error_rate", "service": "web"}, "unknown service 'web'"),
        ({"metric": "http_requests_error_rate", "service": "api", "end": "soon"}, "end 'soon' is not an ISO 8601"),
        ({"metric": "http_requests_error_rate", "service": "api", "step": "1m"}, "unknown argument(s) step"),
    ],
)
async def test_metrics_query_bad_arguments(mini_tools: Toolset, arguments: JsonObject, message: str) -> None:
    with pytest.raises(ToolError) as info:
        await call(mini_tools, "metrics.query", arguments)
    assert message in str(info.value)


# ------------------------------------------------------------------------------------ deploys.list
async def test_deploys_list_filters_by_service_and_window(bundled: dict[str, Scenario]) -> None:
    tools = builtin_toolset(bundled["payments-bad-deploy"])
    everything = await call(tools, "deploys.list", {})
    assert everything["total"] == 3
    stamps = [d["ts"] for d in everything["deploys"]]
    assert stamps == sorted(stamps, reverse=True)
    payments = await call(tools, "deploys.list", {"service": "payments-api"})
    assert [d["version"] for d in payments["deploys"]] == ["v2.30.4", "v2.31.0"]
    assert payments["deploys"][1]["previous_version"] == "v2.30.4"
    assert set(payments["deploys"][0]) == {"ts", "service", "version", "previous_version", "author", "summary"}
    early = await call(tools, "deploys.list", {"end": "2024-10-08T09:30:00Z"})
    assert [d["service"] for d in early["deploys"]] == ["fraud-svc"]
    with pytest.raises(ToolError, match="unknown service 'payments'"):
        await call(tools, "deploys.list", {"service": "payments"})


# ------------------------------------------------------------------------------------ k8s.events
async def test_k8s_events_filters(bundled: dict[str, Scenario]) -> None:
    tools = builtin_toolset(bundled["checkout-oom"])
    oom = await call(tools, "k8s.events", {"service": "checkout-api", "reason": "oomkilled"})
    assert oom["total"] == 15
    assert {e["reason"] for e in oom["events"]} == {"OOMKilled"}
    assert oom["events"][0]["ts"] >= oom["events"][-1]["ts"]
    first = oom["events"][-1]
    assert set(first) == {"ts", "namespace", "kind", "object", "reason", "type", "message", "count", "service"}
    assert first["type"] == "Warning" and first["count"] == 1 and first["object"].startswith("checkout-api-")
    assert resolve_pointer(oom, "/events/0/reason") == "OOMKilled"
    windowed = await call(
        tools, "k8s.events", {"service": "checkout-api", "reason": "OOMKilled", "end": "2024-11-29T13:55:00Z"}
    )
    assert windowed["total"] == 3
    in_namespace = await call(tools, "k8s.events", {"namespace": "shop"})
    everything = await call(tools, "k8s.events", {})
    assert in_namespace["total"] == everything["total"] > oom["total"]
    none = await call(tools, "k8s.events", {"service": "stripe"})
    assert none == {"window": none["window"], "total": 0, "events": []}


async def test_k8s_events_cluster_objects_have_no_service(bundled: dict[str, Scenario]) -> None:
    tools = builtin_toolset(bundled["inventory-ambiguous"])
    nodes = await call(tools, "k8s.events", {"namespace": "default"})
    assert nodes["total"] >= 1
    assert all(e["kind"] == "Node" and e["service"] is None for e in nodes["events"])


async def test_k8s_events_unknown_namespace_or_service_is_an_error(mini_tools: Toolset) -> None:
    with pytest.raises(ToolError, match="unknown namespace 'prod'; namespaces in this scenario: shop"):
        await call(mini_tools, "k8s.events", {"namespace": "prod"})
    with pytest.raises(ToolError, match="unknown service 'web'"):
        await call(mini_tools, "k8s.events", {"service": "web"})


# ------------------------------------------------------------------------------------ topology
async def test_topology_dependencies_both_directions(bundled: dict[str, Scenario]) -> None:
    tools = builtin_toolset(bundled["checkout-oom"])
    out = await call(tools, "topology.dependencies", {"service": "checkout-api"})
    assert out["service"] == "checkout-api" and out["kind"] == "http"
    assert out["depends_on"] == ["payments-api", "cart-redis", "orders-db", "order-events"]
    assert out["dependents"] == ["web-frontend"]
    assert "container_memory_working_set_bytes" in out["metrics"]
    assert out["labels"]["memory_limit"] == "512Mi"
    leaf = await call(tools, "topology.dependencies", {"service": "stripe"})
    assert leaf["kind"] == "external" and leaf["depends_on"] == [] and leaf["dependents"] == ["payments-api"]
    with pytest.raises(ToolError, match="missing required argument 'service'"):
        await call(tools, "topology.dependencies", {})


# ------------------------------------------------------------------------------------ determinism, runner
async def test_same_arguments_give_the_same_bytes(bundled: dict[str, Scenario]) -> None:
    scenario = bundled["search-disk-full"]
    arguments: list[tuple[str, JsonObject]] = [
        ("logs.search", {"service": "search-es", "level": "warn"}),
        ("metrics.query", {"metric": "disk_used_ratio", "service": "search-es"}),
        ("k8s.events", {}),
        ("deploys.list", {}),
        ("topology.dependencies", {"service": "search-es"}),
    ]
    for name, args in arguments:
        first = await call(builtin_toolset(scenario), name, args)
        second = await call(builtin_toolset(scenario), name, dict(args))
        assert canonical_json_bytes(first) == canonical_json_bytes(second)


async def test_tools_run_through_the_runner_and_are_recorded(mini_tools: Toolset) -> None:
    """R-C-2: every call, good or bad, becomes a recorded invocation with its output."""
    recorded: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    runner = ToolRunner(run_id="run-1", toolset=mini_tools, recorder=recorder)
    ok = await runner.call("logs.search", {"service": "db"})
    bad = await runner.call("metrics.query", {"metric": "nope", "service": "api"})
    assert ok.ok and isinstance(ok.output, dict)
    assert not bad.ok and "no metric 'nope'" in bad.error
    assert [r.tool_name for r in recorded] == ["logs.search", "metrics.query"]
    assert recorded[0].output.struct_value.fields["lines"].list_value.values[0].struct_value.fields[
        "message"
    ].string_value == ("too many connections")


# ------------------------------------------------------------------------------------ scenario_context
def test_scenario_context_holds_no_data_and_no_truth(bundled: dict[str, Scenario]) -> None:
    scenario = bundled["checkout-oom"]
    context = scenario_context(scenario)
    assert set(context) == {"scenario", "title", "services", "time_window"}
    assert context["scenario"] == "checkout-oom"
    assert context["time_window"] == {"start": "2024-11-29T13:00:00Z", "end": "2024-11-29T14:30:00Z"}
    services = context["services"]
    assert isinstance(services, list) and len(services) == len(scenario.topology.services)
    assert services[1] == {
        "name": "checkout-api",
        "kind": "http",
        "depends_on": ["payments-api", "cart-redis", "orders-db", "order-events"],
        # The metric names a planner may know up front (a metrics catalog), never their data.
        "metrics": [
            "container_cpu_usage_cores",
            "container_memory_working_set_bytes",
            "http_request_duration_p99_ms",
            "http_requests_error_rate",
            "http_requests_per_second",
            "kube_pod_container_status_restarts_total",
        ],
    }
    text = json.dumps(context)
    for evidence in truth_of(scenario).key_evidence:
        assert evidence not in text
    assert "truth" not in text and "root_cause" not in text


# ------------------------------------------------------------------------------------ robustness
_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(["api", "db", "http_requests_error_rate", "2024-01-01T10:30:00Z", "warn", "BackOff", "shop"]),
)
_ARGUMENTS = st.dictionaries(
    st.sampled_from(["service", "metric", "query", "level", "start", "end", "limit", "namespace", "reason", "x"]),
    st.one_of(_JSON_SCALARS, st.lists(_JSON_SCALARS, max_size=2)),
    max_size=5,
)
_MINI_TOOLS = builtin_toolset(Scenario.model_validate(minimal_pack()))


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(TOOL_NAMES), arguments=_ARGUMENTS)
async def test_any_arguments_give_json_or_a_tool_error_never_a_crash(name: str, arguments: JsonObject) -> None:
    """Bad input gets a clear error, never a crash."""
    tool = _MINI_TOOLS.get(name)
    assert tool is not None
    output: JsonValue = None
    error = ""
    try:
        output = await tool.call(arguments)
    except ToolError as exc:
        error = str(exc)
    if error:
        assert error.startswith(f"{name}: ")
    else:
        assert isinstance(output, dict)
        json.dumps(output, allow_nan=False)
