"""What the Prometheus series listing of a workload calls for: the label naming it, its RED queries by that label."""

from __future__ import annotations

from diagnosis_server.agents.heuristic.live_plan import live_steps
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.agents.heuristic.prometheus_discovery import discovered_calls, naming, red_queries
from diagnosis_server.conversions import JsonObject, JsonValue

COUNTER = "http_server_requests_seconds_count"
BUCKET = "http_server_requests_seconds_bucket"


def _listing(*series: dict[str, str]) -> Observation:
    data: list[JsonValue] = [dict(s) for s in series]
    arguments: JsonObject = {"name": "ledger-api", "start": "2026-01-01T10:00:00Z", "end": "2026-01-01T11:00:00Z"}
    return Observation(0, "prometheus.series", arguments, "inv-1", {"status": "success", "data": data})


def test_a_label_holding_the_name_exactly_names_the_workload_before_a_pod() -> None:
    series = [
        {"__name__": "up", "job": "kubernetes-pods", "pod": "ledger-api-7d9f6c5b8-x2k9p"},
        {"__name__": COUNTER, "service": "ledger-api", "status": "200"},
    ]
    found = naming(series, "ledger-api")
    assert found is not None and (found.label, found.matcher) == ("service", 'service="ledger-api"')


def test_a_pod_of_the_workload_names_it_by_its_prefix_never_by_a_longer_name() -> None:
    series = [{"__name__": COUNTER, "pod": "ledger-api-7d9f6c5b8-x2k9p", "code": "500"}]
    found = naming(series, "ledger-api")
    assert found is not None and found.matcher == 'pod=~"ledger-api(-.*)?"'
    assert naming([{"__name__": COUNTER, "job": "ledger-apis"}], "ledger-api") is None


def test_red_queries_use_the_counters_status_label_and_the_histogram() -> None:
    series = [
        {"__name__": COUNTER, "service": "ledger-api", "status": "500"},
        {"__name__": BUCKET, "service": "ledger-api", "le": "0.5"},
        {"__name__": "jvm_threads_live_threads", "service": "ledger-api"},
        {"__name__": "process_start_time_seconds", "service": "ledger-api"},
    ]
    queries = [q for q, _ in red_queries(series, "ledger-api")]
    assert queries == [
        f'sum by (service) (rate({COUNTER}{{service="ledger-api",status=~"5.."}}[5m]))'
        f' / sum by (service) (rate({COUNTER}{{service="ledger-api"}}[5m]))',
        f'histogram_quantile(0.99, sum by (service, le) (rate({BUCKET}{{service="ledger-api"}}[5m])))',
        'process_start_time_seconds{service="ledger-api"}',
    ]


def test_a_counter_without_a_status_label_gives_no_error_rate() -> None:
    assert red_queries([{"__name__": "http_requests_total", "job": "ledger-api", "method": "GET"}], "ledger-api") == []


def test_the_follow_ups_cover_the_listings_span_and_skip_queries_made() -> None:
    listing = _listing({"__name__": COUNTER, "service": "ledger-api", "code": "503"})
    calls = discovered_calls([listing], ["prometheus.series", "prometheus.query_range"])
    assert len(calls) == 1
    tool, arguments = calls[0]
    assert tool == "prometheus.query_range"
    assert (arguments["start"], arguments["end"]) == ("2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z")
    made = Observation(1, "prometheus.query_range", dict(arguments), "inv-2", {"status": "success"})
    assert discovered_calls([listing, made], ["prometheus.series", "prometheus.query_range"]) == []
    assert discovered_calls([listing], ["prometheus.series"]) == []


def test_the_metric_names_listing_calls_for_its_headline_series_once() -> None:
    """A ``__name__`` listing is read as a pack's known metric names: its error rates, latencies and connection
    pairs over the listing's span, never a raw counter."""
    names: list[JsonValue] = ["pg_stat_activity_count", "pg_settings_max_connections", "http_requests_total", "up"]
    arguments: JsonObject = {"label": "__name__", "start": "2026-01-01T10:00:00Z", "end": "2026-01-01T11:00:00Z"}
    listing = Observation(0, "prometheus.label_values", arguments, "inv-1", {"status": "success", "data": names})
    calls = discovered_calls([listing], ["prometheus.label_values", "prometheus.query_range"])
    queries = sorted(str(a["query"]) for _, a in calls)
    assert queries == ["pg_settings_max_connections", "pg_stat_activity_count"]
    assert all(a["start"] == "2026-01-01T10:00:00Z" for _, a in calls)


def test_the_live_plan_lists_each_named_workloads_series_over_the_window() -> None:
    tools: dict[str, JsonObject] = {n: {"name": n} for n in ("prometheus.query", "prometheus.series")}
    context: JsonObject = {"window": {"start": "2026-01-01T10:00:00Z", "end": "2026-01-01T11:00:00Z"}}
    steps = [(t, a) for t, a, _ in live_steps(tools, context, ["ledger-api"])]
    assert ("prometheus.series", {"name": "ledger-api", **context["window"]}) in steps  # type: ignore[dict-item]
    recorded: JsonObject = {"recorded": True}
    assert not [t for t, _, _ in live_steps(tools, recorded, ["ledger-api"]) if t == "prometheus.series"]
