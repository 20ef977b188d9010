"""Prometheus analyzers over the HTTP API's ``data.result`` (``prometheus.query`` vectors and
``prometheus.query_range`` matrices): kube-state-metrics reasons, restarts, unavailable replicas, error rates and
latencies against the series' quiet level, and connections against their limits.

Sample values are strings in the API ("0.002", "NaN"); a binding to a sample is ``/data/result/<i>/values/<j>/1``
(or ``/value/1``) with that string verbatim (R-C-1, R-GK-5). A healthy headline signal is evidence too (R-V-1).
"""

from __future__ import annotations

import re

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.heuristic.analyzers.prometheus_results import prometheus_findings
from diagnosis_server.agents.heuristic.findings import HEALTHY_MARK, Role
from diagnosis_server.verification.derivability import derive

from ._checks import assert_sound, one, sound
from ._shapes import instant, query, query_range, ranged

POD = "seed-sorter-6d9f7c8b4d-x2k9q"
# kube-state-metrics as a plain scrape job: pod, namespace and container are the object's labels.
KSM = {"job": "kube-state-metrics", "instance": "10.244.1.12:8080", "namespace": "greenfield"}
QUIET = [0.002, 0.003, 0.002, 0.002]


def rose(statement: str) -> tuple[float, float]:
    match = re.search(r"rose from (\S+)(?: m?s)? to (\S+)(?: m?s)?$", statement)
    assert match, statement
    return float(match.group(1)), float(match.group(2))


def test_a_last_terminated_reason_series_at_one_is_the_containers_rule() -> None:
    """``kube_pod_container_status_last_terminated_reason{reason="OOMKilled"} 1``: the container rule of that
    reason, about the pod's workload, binding the name, the reason label, the sample and the pod."""
    labels = {"__name__": "kube_pod_container_status_last_terminated_reason", **KSM, "pod": POD}
    obs = query(
        "kube_pod_container_status_last_terminated_reason",
        instant({**labels, "container": "seed-sorter", "reason": "OOMKilled"}, 1),
        instant({**labels, "container": "sidecar", "reason": "Error"}, 0),
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    oom = one(findings, "oom")
    assert (oom.role, oom.service, oom.strength, oom.detail) == (Role.CAUSE, "seed-sorter", 4, "OOMKilled")
    assert f"for pod {POD}" in oom.statement
    assert {b.raw_path for b in oom.bindings} >= {"/data/result/0/metric/reason", "/data/result/0/value/1"}
    # The "Error" series is at 0: that container did not last terminate with an error.
    assert "crash_exit" not in {f.kind for f in findings}


def test_a_waiting_reason_series_is_a_crash_loop() -> None:
    obs = query(
        "kube_pod_container_status_waiting_reason",
        instant(
            {"__name__": "kube_pod_container_status_waiting_reason", **KSM, "pod": POD, "reason": "CrashLoopBackOff"}, 1
        ),
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    assert (one(findings, "crashloop").role, one(findings, "crashloop").service) == (Role.SUPPORT, "seed-sorter")


@pytest.mark.parametrize(("values", "found"), [([1, 1, 2, 3, 4, 5], True), ([4, 4, 5, 5, 6, 6], False)])
def test_restarts_are_support_when_they_grew_by_the_bar(values: list[float], found: bool) -> None:
    """``kube_pod_container_status_restarts_total`` is a counter: its growth over the window (``restarts_min``, 3)
    is what counts, never its level."""
    obs = query_range(
        "kube_pod_container_status_restarts_total",
        ranged({"__name__": "kube_pod_container_status_restarts_total", **KSM, "pod": POD}, values),
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    if found:
        restarts = one(findings, "restarts")
        assert restarts.role is Role.SUPPORT and restarts.statement.endswith("rose from 1 to 5")
    else:
        assert findings == []


def test_unavailable_replicas_and_unready_pods_are_symptoms() -> None:
    """``kube_deployment_status_replicas_unavailable`` above 0 and ``kube_pod_status_ready{condition="false"}`` at 1
    are symptoms; the same series at 0, or the ``condition="true"`` series, are not."""
    obs = query(
        "kube_deployment_status_replicas_unavailable or kube_pod_status_ready",
        instant({"__name__": "kube_deployment_status_replicas_unavailable", **KSM, "deployment": "hay-baler"}, 2),
        instant({"__name__": "kube_deployment_status_replicas_unavailable", **KSM, "deployment": "grain-api"}, 0),
        instant({"__name__": "kube_pod_status_ready", **KSM, "pod": POD, "condition": "false"}, 1),
        instant({"__name__": "kube_pod_status_ready", **KSM, "pod": "mill-node-agent-8xk2p", "condition": "true"}, 1),
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    assert {(f.kind, f.role, f.service) for f in findings} == {
        ("not_ready", Role.SYMPTOM, "hay-baler"),
        ("not_ready", Role.SYMPTOM, "seed-sorter"),
    }
    assert "kube_deployment_status_replicas_unavailable reached 2" in findings[0].statement


def test_an_error_rate_that_rose_is_a_symptom_with_the_samples_it_rests_on() -> None:
    values = [*QUIET, 0.002, 0.003, 0.002, 0.002, 0.002, 0.003, 0.08, 0.11, 0.12, 0.1, 0.11, 0.09, 0.12, 0.1, 0.1, 0.11]
    obs = query_range(
        "grain_api_error_rate",
        ranged({"__name__": "grain_api_error_rate", "service": "grain-api", "namespace": "greenfield"}, values),
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    symptom = one(findings, "error")
    assert (symptom.role, symptom.service) == (Role.SYMPTOM, "grain-api")
    assert rose(symptom.statement) == (0.002, 0.12)
    paths = {b.raw_path for b in symptom.bindings}
    # First sample, peak, the onset (the first sample above the threshold) and the name.
    assert {"/data/result/0/values/0/1", "/data/result/0/values/12/1", "/data/result/0/values/10/1"} <= paths


def test_an_error_rate_that_stays_near_its_level_is_healthy_evidence() -> None:
    """Noise around the quiet level (and one lone spike: two points above are needed) stays HEALTHY."""
    values = [0.002, 0.003] * 6 + [0.004, 0.03, 0.003, 0.002, 0.002, 0.003, 0.002, 0.003]
    obs = query_range(
        "grain_api_error_rate", ranged({"__name__": "grain_api_error_rate", "service": "grain-api"}, values)
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    healthy = one(findings, "within_baseline")
    assert healthy.role is Role.HEALTHY and HEALTHY_MARK in healthy.statement
    assert "peak 0.03" in healthy.statement


def test_the_quiet_level_is_the_lowest_of_the_first_fifth() -> None:
    """A window that opens on a blip: the quiet level is the minimum of the first fifth, not the first sample, so
    a rise to 0.025 from a 0.002 level is seen although the window's first sample was 0.02."""
    values = (
        [0.02, 0.002, 0.002, 0.002]
        + [0.002] * 6
        + [0.018, 0.019, 0.018, 0.019, 0.018, 0.019, 0.018, 0.019, 0.018, 0.019]
    )
    obs = query_range(
        "grain_api_error_rate", ranged({"__name__": "grain_api_error_rate", "service": "grain-api"}, values)
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    assert one(findings, "error").role is Role.SYMPTOM

    # The same blip and no rise: one point above the threshold is not an incident.
    flat = [0.02, *[0.002] * 19]
    obs = query_range(
        "grain_api_error_rate", ranged({"__name__": "grain_api_error_rate", "service": "grain-api"}, flat)
    )
    assert one(sound(prometheus_findings([obs]), [obs]), "within_baseline").role is Role.HEALTHY


def test_a_rise_is_stated_from_a_value_below_its_peak() -> None:
    """The statement "rose from A to B" must say A < B: A the quiet level the rise is measured from."""
    values = [0.03, *[0.002] * 9, *[0.025] * 10]
    obs = query_range(
        "grain_api_error_rate", ranged({"__name__": "grain_api_error_rate", "service": "grain-api"}, values)
    )
    symptom = one(prometheus_findings([obs]), "error")
    low, high = rose(symptom.statement)
    assert low < high, symptom.statement
    # From the quiet level to the peak after it (the opening blip came before the level, not after).
    assert (low, high) == (0.002, 0.025)
    assert_sound([symptom], [obs])


def test_a_window_opening_without_traffic_still_sees_the_rise() -> None:
    """``sum(rate(errors)) / sum(rate(requests))`` is NaN while there are no requests; those samples are no level."""
    values = ["NaN"] * 4 + [0.002] * 6 + [0.3] * 10
    obs = query_range(
        "grain_api_error_rate", ranged({"__name__": "grain_api_error_rate", "service": "grain-api"}, values)
    )
    findings = prometheus_findings([obs])
    assert one(findings, "error").role is Role.SYMPTOM
    assert_sound(findings, [obs])


@pytest.mark.parametrize(
    "name",
    [
        "http_server_requests_errors_total",
        "http_request_duration_seconds_count",
        "http_request_duration_seconds_sum",
        "http_request_duration_seconds_bucket",
    ],
)
def test_a_raw_counter_that_grows_is_no_symptom(name: str) -> None:
    """A counter or histogram part only grows: "rose" would say nothing about a rate; no symptom, no health."""
    values = [1000 + 250 * i for i in range(20)]
    obs = query_range(name, ranged({"__name__": name, "service": "grain-api", "le": "0.5"}, values))
    assert prometheus_findings([obs]) == []


def test_latency_in_seconds_is_judged_in_seconds() -> None:
    """A p99 in seconds rising 0.1 s to 0.5 s is a symptom (the 200 ms delta is 0.2 s in Prometheus' base unit);
    the same name rising to 0.25 s is not; a histogram_quantile query with no ``__name__`` reads as latency."""
    name = "grain_api_request_duration_seconds_p99"
    slow = query_range(name, ranged({"__name__": name, "service": "grain-api"}, [0.1] * 10 + [0.5] * 10))
    findings = prometheus_findings([slow])
    assert_sound(findings, [slow])
    assert rose(one(findings, "latency").statement) == (0.1, 0.5)

    mild = query_range(name, ranged({"__name__": name, "service": "grain-api"}, [0.1] * 10 + [0.25] * 10))
    assert one(sound(prometheus_findings([mild]), [mild]), "within_baseline").role is Role.HEALTHY

    quantile = query_range(
        "histogram_quantile(0.99, sum by (le, service) "
        '(rate(http_server_request_duration_seconds_bucket{service="grain-api"}[5m])))',
        ranged({"service": "grain-api"}, [0.12] * 10 + [0.9] * 10),
    )
    findings = prometheus_findings([quantile])
    assert_sound(findings, [quantile])
    assert one(findings, "latency").statement == "grain-api latency rose from 0.12 to 0.9"


@pytest.mark.parametrize(
    ("name", "values", "statement"),
    [
        (
            "grpc_server_handling_seconds:p99",
            [0.14] * 10 + [1.52] * 10,
            "grain-api latency (grpc_server_handling_seconds:p99) rose from 0.14 s to 1.52 s",
        ),
        (
            "http_server_request_duration_seconds:p95",
            [0.2] * 10 + [0.21] * 10,
            f"grain-api latency (http_server_request_duration_seconds:p95) {HEALTHY_MARK} "
            "(peak 0.21 s, first sample 0.2 s)",
        ),
        (
            "grain_api_request_duration_p99_ms",
            [100] * 10 + [900] * 10,
            "grain-api latency (grain_api_request_duration_p99_ms) rose from 100 ms to 900 ms",
        ),
        (
            "grain_api_latency_p99_ms",
            [100] * 10 + [900] * 10,
            "grain-api grain_api_latency_p99_ms rose from 100 ms to 900 ms",
        ),
        (
            "grpc_server_errors_ratio:rate5m",
            [0.001] * 10 + [0.2] * 10,
            "grain-api error rate (grpc_server_errors_ratio:rate5m) rose from 0.001 to 0.2",
        ),
        ("grain_api_error_rate", [0.001] * 10 + [0.2] * 10, "grain-api grain_api_error_rate rose from 0.001 to 0.2"),
    ],
)
def test_a_named_series_is_stated_with_its_family_word_and_the_unit_its_name_says(
    name: str, values: list[float], statement: str
) -> None:
    """The family word an operator uses, then the exact name read (bound); a value's unit only as the name's base-unit
    suffix states it (``_seconds``: s, ``_ms``: ms), never for an error ratio. The statement is a direct observation
    of its bindings (the derivability check finds ``1.52 s`` from the sample and the name's ``_seconds``)."""
    obs = query_range(name, ranged({"__name__": name, "job": "grain-api"}, values))
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    (finding,) = [f for f in findings if f.kind in ("latency", "error", "within_baseline")]
    assert finding.statement == statement
    derivation = derive(finding.statement, [b.matched_text for b in finding.bindings])
    assert derivation.classification == contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, derivation.reason()


def test_latency_in_milliseconds_keeps_the_millisecond_delta() -> None:
    """A p99 in ms rising 100 to 250 is within the 200 ms delta; to 900 it is a symptom."""
    name = "grain_api_request_duration_p99_ms"
    calm = query_range(name, ranged({"__name__": name, "service": "grain-api"}, [100] * 10 + [250] * 10))
    assert one(sound(prometheus_findings([calm]), [calm]), "within_baseline").role is Role.HEALTHY
    slow = query_range(name, ranged({"__name__": name, "service": "grain-api"}, [100] * 10 + [900] * 10))
    assert one(sound(prometheus_findings([slow]), [slow]), "latency").role is Role.SYMPTOM


def test_an_error_ratio_query_without_a_name_reads_as_an_error_rate() -> None:
    """A 5xx ratio query (``code=~"5.."``) answers series with no ``__name__``: the query says what they are."""
    text = (
        'sum by (service) (rate(http_requests_total{service="grain-api",code=~"5.."}[5m])) / '
        'sum by (service) (rate(http_requests_total{service="grain-api"}[5m]))'
    )
    obs = query_range(text, ranged({"service": "grain-api"}, [0.001] * 10 + [0.2] * 10))
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    assert one(findings, "error").statement == "grain-api error rate rose from 0.001 to 0.2"


def test_instant_vectors_and_short_ranges_are_no_rise() -> None:
    """A rise needs a range of five samples or more; an instant value is no trend."""
    short = query_range(
        "grain_api_error_rate",
        ranged({"__name__": "grain_api_error_rate", "service": "grain-api"}, [0.001, 0.3, 0.3, 0.3]),
    )
    one_value = query(
        "grain_api_error_rate", instant({"__name__": "grain_api_error_rate", "service": "grain-api"}, 0.3)
    )
    assert prometheus_findings([short, one_value]) == []


def test_a_series_without_a_workload_label_names_no_service() -> None:
    """An ``instance`` that is an address and a ``job`` that is an exporter name no workload: no finding."""
    obs = query_range(
        "grain_api_error_rate",
        ranged(
            {"__name__": "grain_api_error_rate", "job": "node-exporter", "instance": "10.20.3.14:9100"},
            [0.001] * 10 + [0.3] * 10,
        ),
    )
    assert prometheus_findings([obs]) == []


@pytest.mark.parametrize(
    ("used", "limit", "used_value", "limit_value", "kind", "role"),
    [
        ("pg_stat_activity_count", "pg_settings_max_connections", 97, 100, "db_exhausted", Role.CAUSE),
        ("pg_stat_activity_count", "pg_settings_max_connections", 40, 100, "within_baseline", Role.HEALTHY),
        (
            "pgbouncer_pools_client_active_connections",
            "pgbouncer_config_max_client_connections",
            498,
            500,
            "db_exhausted",
            Role.CAUSE,
        ),
        (
            "mysql_global_status_threads_connected",
            "mysql_global_variables_max_connections",
            151,
            151,
            "db_exhausted",
            Role.CAUSE,
        ),
        ("hikaricp_connections_active", "hikaricp_connections_max", 10, 10, "app_pool_full", Role.SUPPORT),
    ],
)
def test_connections_against_their_limit(
    used: str, limit: str, used_value: float, limit_value: float, kind: str, role: Role
) -> None:
    """In-use connections at 95 % of their limit or more: a database at its limit is a cause, a client pool at its
    size support; under it, the database's connections are healthy evidence."""
    obs = query_range(
        f"{used} or {limit}",
        ranged({"__name__": used, "service": "orchard-db"}, [used_value * 0.6] * 5 + [used_value] * 5),
        ranged({"__name__": limit, "service": "orchard-db"}, [limit_value] * 10),
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    finding = one(findings, kind)
    assert (finding.role, finding.service) == (role, "orchard-db")
    assert f"against {limit} {limit_value:g}" in finding.statement


def test_a_connection_count_without_its_limit_is_no_finding_and_waiting_clients_are_support() -> None:
    """Only both series of a pair judge a limit; callers waiting on a pool (a count above 0) back it."""
    obs = query(
        "pg_stat_activity_count or pgbouncer_pools_client_waiting_connections",
        instant({"__name__": "pg_stat_activity_count", "service": "orchard-db"}, 99),
        instant({"__name__": "pgbouncer_pools_client_waiting_connections", "service": "orchard-pgbouncer"}, 7),
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    waiting = one(findings, "app_pool_waiting")
    assert (waiting.role, waiting.service) == (Role.SUPPORT, "orchard-pgbouncer")
    assert "db_exhausted" not in {f.kind for f in findings}


def test_kube_state_metrics_series_scraped_through_its_service_are_about_the_pod() -> None:
    """Scraped through a ServiceMonitor / service endpoints, every kube-state-metrics series carries the target's
    ``service`` label (``service="prometheus-kube-state-metrics"``); the object's workload is in ``pod``."""
    obs = query(
        "kube_pod_container_status_last_terminated_reason",
        instant(
            {
                "__name__": "kube_pod_container_status_last_terminated_reason",
                **KSM,
                "endpoint": "http",
                "service": "prometheus-kube-state-metrics",
                "pod": POD,
                "container": "seed-sorter",
                "reason": "OOMKilled",
            },
            1,
        ),
    )
    findings = prometheus_findings([obs])
    assert one(findings, "oom").service == "seed-sorter"
    assert_sound(findings, [obs])


def test_connections_of_every_state_count_against_max_connections() -> None:
    """Idle connections hold slots too: 12 active, 85 idle and 1 idle in transaction is 98 of 100."""
    series = [
        instant(
            {"__name__": "pg_stat_activity_count", "service": "orchard-db", "datname": "orchard", "state": state},
            count,
        )
        for state, count in (("active", 12), ("idle", 85), ("idle in transaction", 1))
    ]
    obs = query(
        "pg_stat_activity_count or pg_settings_max_connections",
        *series,
        instant({"__name__": "pg_settings_max_connections", "service": "orchard-db"}, 100),
    )
    findings = prometheus_findings([obs])
    assert one(findings, "db_exhausted").role is Role.CAUSE
    assert_sound(findings, [obs])


def test_clients_of_every_pgbouncer_pool_count_against_max_client_conn() -> None:
    """pgbouncer's max_client_conn is the pooler's: clients of two pools, 300 + 290 of 600, fill it; each pool's
    count is stated and bound, their sum (no binding holds it) is not."""
    exporter = {"job": "pgbouncer-exporter", "instance": "pgbouncer:9127"}
    pools = [
        instant({"__name__": "pgbouncer_pools_client_active_connections", **exporter, "database": db}, count)
        for db, count in (("orchard", 300), ("silo", 290))
    ]
    obs = query(
        "pgbouncer_pools_client_active_connections or pgbouncer_config_max_client_connections",
        *pools,
        instant({"__name__": "pgbouncer_config_max_client_connections", **exporter}, 600),
    )
    findings = prometheus_findings([obs])
    assert_sound(findings, [obs])
    exhausted = one(findings, "db_exhausted")
    assert exhausted.role is Role.CAUSE
    assert "300 orchard + 290 silo" in exhausted.statement
    assert "590" not in exhausted.statement
