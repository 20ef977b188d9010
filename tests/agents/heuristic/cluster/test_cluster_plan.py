"""The cluster reads are bounded: one kubernetes.list per kind and namespace, cluster-scoped kinds once, the control
plane's pods only where the tool may read kube-system, the whole FULL plan within the planner protocol's bound."""

from __future__ import annotations

from collections import Counter

from diagnosis_server.agents.heuristic.cluster_plan import CLUSTER_SCOPED, NAMESPACED, cluster_steps
from diagnosis_server.agents.heuristic.planner import HeuristicPlanner
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.protocols.planner import DEFAULT_MAX_STEPS, PlannerMode, parse_planner_output
from diagnosis_server.sources.k8s_kinds import object_declarations
from diagnosis_server.sources.kubernetes import declarations
from diagnosis_server.sources.loki import DECLARATION as LOKI
from diagnosis_server.sources.prometheus import QUERY_DECLARATION, QUERY_RANGE_DECLARATION
from diagnosis_server.tools.arguments import input_schema
from tests.agents.heuristic._support import request


def _tools(namespaces: tuple[str, ...]) -> dict[str, JsonObject]:
    declared = {**declarations(namespaces, namespaces[0]), **object_declarations(namespaces, namespaces[0])}
    declared.update({d.name: d for d in (QUERY_DECLARATION, QUERY_RANGE_DECLARATION, LOKI)})
    return {name: {"name": name, "input_schema": input_schema(d.params)} for name, d in declared.items()}


CONTEXT: JsonObject = {"kubernetes": {"namespaces": ["shop", "payments", "search"], "default_namespace": "shop"}}


def test_one_list_per_kind_and_namespace_and_cluster_kinds_once() -> None:
    steps = cluster_steps(_tools(("shop", "payments", "search")), CONTEXT, ["cartservice"])
    lists = Counter((args["kind"], args.get("namespace", "")) for tool, args, _ in steps if tool == "kubernetes.list")
    assert set(lists.values()) == {1}
    assert {(kind, "") for kind in CLUSTER_SCOPED} <= set(lists)
    assert {(kind, "shop") for kind in NAMESPACED} | {(kind, "payments") for kind in NAMESPACED} <= set(lists)
    assert not any(ns == "search" for _, ns in lists), "at most two namespaces"
    assert ("pods", "kube-system") in lists
    queries = [args["query"] for tool, args, _ in steps if tool == "prometheus.query_range"]
    assert queries == [
        'container_cpu_cfs_throttled_periods_total{pod=~"cartservice-.*"}',
        'container_cpu_cfs_periods_total{pod=~"cartservice-.*"}',
    ]


def test_no_cluster_reads_without_the_list_tool() -> None:
    tools = {k: v for k, v in _tools(("shop",)).items() if k != "kubernetes.list"}
    assert all(tool != "kubernetes.list" for tool, _, _ in cluster_steps(tools, CONTEXT, []))


async def test_a_full_plan_with_every_live_tool_stays_within_the_protocol_bound() -> None:
    tools = _tools(("shop", "payments", "search"))
    names = [f"http_requests_error_rate_{i}" for i in range(10)]
    payload: JsonObject = {
        "mode": PlannerMode.FULL,
        "question": "Why is cartservice failing for checkout-api?",
        "tools": [dict(t) for t in tools.values()],
        "context": {**CONTEXT, "prometheus": {"metric_names": list[JsonValue](names)}},
    }
    reply = await HeuristicPlanner().run(request("planner", payload))
    parsed = parse_planner_output(reply.text, allowed_tools=tuple(tools))
    assert parsed.ok, parsed
    assert len(parsed.steps) <= DEFAULT_MAX_STEPS
    lists = [s for s in parsed.steps if s.tool_name == "kubernetes.list"]
    assert {s.arguments["kind"] for s in lists} >= {"nodes", "services", "resourcequotas", "secrets"}


def test_an_environment_that_may_read_any_namespace_lists_its_default_one() -> None:
    context: JsonObject = {"kubernetes": {"namespaces": [], "default_namespace": "shop"}}
    steps = cluster_steps(_tools(("shop",)), context, [])
    assert {args.get("namespace") for tool, args, _ in steps if args.get("kind") == "services"} == {"shop"}


def test_the_cfs_counters_are_not_asked_of_a_pack_whose_metric_names_lack_them() -> None:
    context: JsonObject = {**CONTEXT, "prometheus": {"metric_names": ["http_requests_error_rate"]}}
    steps = cluster_steps(_tools(("shop",)), context, ["cartservice"])
    assert not [s for s in steps if s[0] == "prometheus.query_range"]
