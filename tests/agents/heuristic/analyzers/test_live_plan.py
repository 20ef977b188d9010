"""Planning over live tools: the workload names a question gives, the headline series the known metric names hold,
and the calls an operator makes first. Every planned call is a tool invocation whose output later findings bind
(R-C-2, R-C-1); the planner plans only tools the run has.
"""

from __future__ import annotations

import pytest

from diagnosis_server.agents.heuristic.live_plan import (
    FIRING,
    MAX_NAMED_SERIES,
    NAMESPACE_ERRORS,
    RED_ERRORS,
    RED_LATENCY,
    headline_names,
    live_steps,
    ordinary_compound,
    question_subjects,
)
from diagnosis_server.conversions import JsonObject

LIVE_TOOLS: dict[str, JsonObject] = {
    name: {}
    for name in (
        "kubernetes.pods",
        "kubernetes.events",
        "kubernetes.rollouts",
        "prometheus.query",
        "prometheus.query_range",
        "loki.query_range",
    )
}
CONTEXT: JsonObject = {
    "kubernetes": {"namespaces": ["greenfield", "mill"]},
    "prometheus": {
        "metric_names": ["grain_api_error_rate"],
        "error_rate_query": 'sum(rate(http_requests_total{{service="{service}",code=~"5.."}}[5m]))',
        "latency_query": "histogram_quantile(0.99, {nope})",
    },
}


@pytest.mark.parametrize(
    ("question", "subjects"),
    [
        ("why are thresher-worker and its pods restarting?", ["thresher-worker"]),
        ("what is wrong with its pods?", []),
        ("which service fails, and are the new pods ready?", []),
        ("Why is the grainstore service slow?", ["grainstore"]),
        ("why do seedbank pods crash?", ["seedbank"]),
        ("is the out-of-memory in hay-baler v2.3.1 fixed after the roll-out?", ["hay-baler"]),
        ("why is orchard-db.greenfield slow, and orchard-db's replica?", ["orchard-db"]),
        ("silo_gateway and hay-baler: crash-looping since 06:40", ["silo_gateway", "hay-baler"]),
        ("Why are account sign-ups failing with 500s?", []),
        ("Customers can't log-in or check-out since the e-mail change. Why?", []),
        ("The follow-up e-mails of the on-call page time out; is the third-party API read-only?", []),
        ("Real-time quotes from the multi-tenant pricing-engine are slow (end-to-end)", ["pricing-engine"]),
        ("Long-running opt-in pop-ups after the set-up of the built-in add-ons crash-loop", []),
        ("is it an out-of-memory or high-latency issue on ledger-writer, re-deployed at 9?", ["ledger-writer"]),
        ("Why is the check-out service down?", []),
    ],
)
def test_question_subjects(question: str, subjects: list[str]) -> None:
    """Kebab names and a name before "service"/"pods"; never a determiner ("its pods" gives no "its"), a
    hyphenated ordinary word (out-of-memory, roll-out, crash-looping, sign-ups, e-mail, third-party, in any
    plural or inflected form) or a version."""
    assert question_subjects(question) == subjects


@pytest.mark.parametrize("word", ["sign-ups", "log-ins", "follow-ups", "crash-looping", "re-deployed", "add-ons"])
def test_an_inflected_ordinary_compound_is_not_a_name(word: str) -> None:
    assert ordinary_compound(word)


@pytest.mark.parametrize("word", ["sign-api", "checkout-svc", "signup-web", "log-shipper", "on-call-bot", "e-mailer"])
def test_a_name_that_starts_like_a_compound_is_still_a_name(word: str) -> None:
    assert not ordinary_compound(word)


def test_headline_names_keep_rates_latencies_and_connection_pairs_not_raw_counters() -> None:
    """Error rates first, then latencies, then the connection series the pair analyzers read; raw counters and
    histogram parts (``_total``, ``_count``, ``_sum``, ``_bucket``) and other families are left out."""
    context: JsonObject = {
        "prometheus": {
            "metric_names": [
                "http_requests_total",
                "http_request_duration_seconds_bucket",
                "http_request_duration_seconds_count",
                "process_cpu_seconds_total",
                "pg_stat_activity_count",
                "grain_api_request_duration_p99_ms",
                "grain_api_error_rate",
                "pg_settings_max_connections",
                "node_memory_MemAvailable_bytes",
                42,
            ]
        }
    }
    assert headline_names(context) == [
        "grain_api_error_rate",
        "grain_api_request_duration_p99_ms",
        "pg_settings_max_connections",
        "pg_stat_activity_count",
    ]
    many: JsonObject = {"prometheus": {"metric_names": [f"svc{i}_error_rate" for i in range(12)]}}
    assert len(headline_names(many)) == MAX_NAMED_SERIES
    assert headline_names({"prometheus": {"metric_names": "grain_api_error_rate"}}) == []
    assert headline_names(None) == []


def test_live_steps_for_a_named_workload() -> None:
    """Pods and Warning events of each namespace, the workload's rollouts, its kube-state-metrics, the named headline
    series, its configured queries (a template that does not fill is skipped), its logs, and the error lines of
    its namespace's other workloads in Loki."""
    steps = live_steps(LIVE_TOOLS, CONTEXT, ["grain-api"])
    calls = [(tool, arguments) for tool, arguments, _ in steps]
    assert calls[:4] == [
        ("kubernetes.pods", {"namespace": "greenfield"}),
        ("kubernetes.events", {"namespace": "greenfield", "field_selector": "type=Warning"}),
        ("kubernetes.pods", {"namespace": "mill"}),
        ("kubernetes.events", {"namespace": "mill", "field_selector": "type=Warning"}),
    ]
    assert ("kubernetes.rollouts", {"namespace": "greenfield", "deployment": "grain-api"}) in calls
    queries = [str(arguments["query"]) for tool, arguments in calls if tool.startswith("prometheus.")]
    assert 'kube_pod_container_status_last_terminated_reason{pod=~"grain-api(-.*)?"}' in queries
    assert 'kube_pod_container_status_restarts_total{pod=~"grain-api(-.*)?"}' in queries
    assert "grain_api_error_rate" in queries
    assert 'sum(rate(http_requests_total{service="grain-api",code=~"5.."}[5m]))' in queries
    # The configured latency template does not fill: only the service-labelled RED latency is read.
    assert not any("{nope}" in q for q in queries)
    assert [q for q in queries if "histogram_quantile" in q] == [RED_LATENCY]
    # Any Prometheus: the alerts firing, the targets up or down, the workload's process restarts, RED by service.
    assert {FIRING, "up", 'process_start_time_seconds{job=~"grain-api(-.*)?"}', RED_ERRORS} <= set(queries)
    loki_queries = [arguments["query"] for tool, arguments in calls if tool == "loki.query_range"]
    assert '{app="grain-api"}' in loki_queries
    assert f'{{namespace="greenfield"}} |~ `{NAMESPACE_ERRORS}`' in loki_queries
    assert all(arguments.get("limit") == 200 for tool, arguments in calls if tool == "loki.query_range")
    assert all(purpose for _, _, purpose in steps)


def test_recorded_data_gets_no_configured_queries() -> None:
    """Recorded packs answer plain selectors only: no templated query is planned on them."""
    steps = live_steps(LIVE_TOOLS, {**CONTEXT, "recorded": True}, ["grain-api"])
    queries = [arguments.get("query") for _, arguments, _ in steps]
    assert 'sum(rate(http_requests_total{service="grain-api",code=~"5.."}[5m]))' not in queries
    assert '{service="grain-api"}' not in queries


def test_only_the_tools_the_run_has_are_planned() -> None:
    steps = live_steps({"kubernetes.pods": {}}, CONTEXT, ["grain-api"])
    assert [tool for tool, _, _ in steps] == ["kubernetes.pods", "kubernetes.pods"]
    assert live_steps({}, CONTEXT, ["grain-api"]) == []


def test_without_a_named_workload_on_recorded_data_the_namespaces_are_looked_at() -> None:
    steps = live_steps(LIVE_TOOLS, {**CONTEXT, "recorded": True}, [])
    calls = [(tool, arguments) for tool, arguments, _ in steps]
    assert ("kubernetes.pods", {"namespace": "greenfield"}) in calls
    assert ("prometheus.query", {"query": "kube_pod_container_status_last_terminated_reason"}) in calls
    assert not any(tool == "kubernetes.rollouts" for tool, _ in calls)


def test_without_a_named_workload_on_live_data_the_namespaces_are_looked_at() -> None:
    """A question that names no workload, against a live environment with Loki: pods, events and the namespace's
    error lines, no crash."""
    steps = live_steps(LIVE_TOOLS, CONTEXT, [])
    assert ("kubernetes.pods", {"namespace": "greenfield"}) in [(tool, arguments) for tool, arguments, _ in steps]


def test_every_named_workload_gets_the_same_log_queries() -> None:
    """Two named workloads: what is asked for one's logs is asked for the other's."""
    steps = live_steps(LIVE_TOOLS, CONTEXT, ["grain-api", "hay-baler"])
    loki_queries = [str(arguments["query"]) for tool, arguments, _ in steps if tool == "loki.query_range"]
    for_grain = sorted(q.replace("grain-api", "X") for q in loki_queries if "grain-api" in q)
    for_hay = sorted(q.replace("hay-baler", "X") for q in loki_queries if "hay-baler" in q)
    assert for_grain == for_hay
