"""Next steps are rendered by template, one fixed phrase per tool, then the call itself (R-A-2, R-A-3).

Every phrase is pinned here, with and without its optional arguments, so a next step's text is exactly what
the template says and nothing an agent wrote.
"""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.suggestions import call_text, render_call
from diagnosis_server.conversions import to_struct

PHRASES: list[tuple[str, dict[str, Any], str]] = [
    ("logs.search", {}, "Search the affected service's logs (logs.search)."),
    (
        "logs.search",
        {"service": "checkout-api", "query": "OOM error", "level": "warn"},
        'Search checkout-api\'s logs for "OOM error" at warn and above '
        '(logs.search level=warn query="OOM error" service=checkout-api).',
    ),
    ("logs.search", {"service": "checkout-api"}, "Search checkout-api's logs (logs.search service=checkout-api)."),
    (
        "logs.search",
        {"level": "error"},
        "Search the affected service's logs at error and above (logs.search level=error).",
    ),
    (
        "metrics.query",
        {"service": "checkout-api", "metric": "latency_p99"},
        "Read checkout-api's latency_p99 metric (metrics.query metric=latency_p99 service=checkout-api).",
    ),
    ("metrics.query", {}, "Read the affected service's saturation and health metrics (metrics.query)."),
    (
        "metrics.query",
        {"service": "checkout-api"},
        "Read checkout-api's saturation and health metrics (metrics.query service=checkout-api).",
    ),
    (
        "deploys.list",
        {"service": "checkout-api"},
        "List the recent deploys of checkout-api (deploys.list service=checkout-api).",
    ),
    ("deploys.list", {}, "List the recent deploys (deploys.list)."),
    (
        "k8s.events",
        {"service": "checkout-api"},
        "List the Kubernetes events of checkout-api (k8s.events service=checkout-api).",
    ),
    ("k8s.events", {}, "List the Kubernetes events of the affected service (k8s.events)."),
    (
        "topology.dependencies",
        {"service": "checkout-api"},
        "Describe checkout-api's dependencies (topology.dependencies service=checkout-api).",
    ),
    ("topology.dependencies", {}, "Describe the affected service's dependencies (topology.dependencies)."),
    (
        "kubernetes.pods",
        {"namespace": "shop", "label_selector": "app=checkout"},
        'List the pods in namespace shop matching app=checkout (kubernetes.pods label_selector="app=checkout" '
        "namespace=shop).",
    ),
    ("kubernetes.pods", {}, "List the pods (kubernetes.pods)."),
    (
        "kubernetes.events",
        {"namespace": "shop"},
        "List the Kubernetes events in namespace shop (kubernetes.events namespace=shop).",
    ),
    ("kubernetes.events", {}, "List the Kubernetes events (kubernetes.events)."),
    (
        "kubernetes.pod_logs",
        {"namespace": "shop", "pod": "checkout-1", "container": "app", "previous": True},
        "Read the previous container's logs of pod checkout-1 (container app) in namespace shop "
        "(kubernetes.pod_logs container=app namespace=shop pod=checkout-1 previous=true).",
    ),
    (
        "kubernetes.pod_logs",
        {"pod": "checkout-1"},
        "Read the logs of pod checkout-1 (kubernetes.pod_logs pod=checkout-1).",
    ),
    (
        "kubernetes.pod_logs",
        {"previous": False},
        "Read the logs of the failing pod (kubernetes.pod_logs previous=false).",
    ),
    (
        "kubernetes.pod_logs",
        {"previous": "true"},
        "Read the logs of the failing pod (kubernetes.pod_logs previous=true).",
    ),
    (
        "kubernetes.rollouts",
        {"namespace": "shop", "deployment": "checkout"},
        "List the rollouts of deployment checkout in namespace shop "
        "(kubernetes.rollouts deployment=checkout namespace=shop).",
    ),
    (
        "kubernetes.rollouts",
        {"name": "checkout"},
        "List the rollouts of deployment checkout (kubernetes.rollouts name=checkout).",
    ),
    (
        "kubernetes.rollouts",
        {"namespace": "shop"},
        "List the recent rollouts in namespace shop (kubernetes.rollouts namespace=shop).",
    ),
    ("kubernetes.rollouts", {}, "List the recent rollouts (kubernetes.rollouts)."),
    ("prometheus.query", {"query": "up"}, "Query Prometheus (prometheus.query query=up)."),
    ("prometheus.query_range", {}, "Query Prometheus (prometheus.query_range)."),
    (
        "loki.query_range",
        {"query": '{app="x"}', "limit": 10},
        'Query Loki (loki.query_range limit=10 query="{app=\\"x\\"}").',
    ),
    (
        "mcp.grafana.list_alerts",
        {"flag": True, "n": 2.5, "empty": " ", "list": [1, "a b", "café"], "obj": {"b": 1, "a": "x"}},
        'Call mcp.grafana.list_alerts (mcp.grafana.list_alerts empty=" " flag=true list=[1,"a b","café"] n=2.5 '
        'obj={"a":"x","b":1}).',
    ),
    ("logs.search", {"service": 7}, "Search 7's logs (logs.search service=7)."),
    (
        "logs.search",
        {"service": True, "query": " "},
        'Search the affected service\'s logs (logs.search query=" " service=true).',
    ),
    ("logs.search", {"service": "café-api"}, 'Search café-api\'s logs (logs.search service="café-api").'),
]


@pytest.mark.parametrize(
    ("tool", "arguments", "text"), PHRASES, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(PHRASES)]
)
def test_each_tool_has_its_fixed_phrase(tool: str, arguments: dict[str, Any], text: str) -> None:
    call = contracts_pb2.SuggestedCall(tool_name=tool, arguments=to_struct(arguments))
    assert render_call(call) == text
    assert text.endswith(f" ({call_text(call)}).")
