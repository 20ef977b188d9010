"""A Helm chart's pods: ``app.kubernetes.io/name`` is the chart (postgresql, redis), ``app.kubernetes.io/instance``
the release (orders-db); the controller is ``<release>-<chart>`` (StatefulSet orders-db-postgresql). The pod's
workload is the release (the service the topology knows), not the chart every release shares."""

from __future__ import annotations

from typing import Any

from diagnosis_server.agents.heuristic.analyzers.pods import pod_findings, pod_views
from diagnosis_server.agents.heuristic.diagnosis import detect
from diagnosis_server.agents.heuristic.workloads import pod_workload_label

from ._checks import assert_sound, one
from ._shapes import container, loki, pod, pod_list, pod_logs, waiting

BACK_OFF = "back-off 5m0s restarting failed container=postgresql pod=orders-db-postgresql-0_greenfield(5b0f)"


def _chart_pod(name: str, chart: str, release: str | None, owner: tuple[str, str]) -> dict[str, Any]:
    state = waiting("CrashLoopBackOff", BACK_OFF)
    item = pod(name, app=chart, containers=[container(chart, ready=False, restarts=7, state=state)])
    if release is not None:
        item["metadata"]["labels"]["app.kubernetes.io/instance"] = release
    item["metadata"]["labels"]["helm.sh/chart"] = f"{chart}-15.5.20"
    item["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True, "blockOwnerDeletion": True}
    ]
    return item


def test_a_release_named_pod_belongs_to_the_release_and_binds_its_label() -> None:
    obs = pod_list(
        _chart_pod("orders-db-postgresql-0", "postgresql", "orders-db", ("StatefulSet", "orders-db-postgresql"))
    )
    [view] = pod_views([obs])
    assert (view.service, view.label) == ("orders-db", "app.kubernetes.io/instance")
    findings = pod_findings([obs])
    assert_sound(findings, [obs])
    crash = one(findings, "crashloop")
    assert crash.service == "orders-db" and crash.statement.startswith("orders-db is in a crash loop")
    assert crash.bindings[0].raw_path == "/items/0/metadata/labels/app.kubernetes.io~1instance"


def test_a_redis_release_and_a_chart_named_pod_and_a_plain_label() -> None:
    redis = _chart_pod(
        "orders-cache-redis-master-0", "redis", "orders-cache", ("StatefulSet", "orders-cache-redis-master")
    )
    assert pod_workload_label(redis["metadata"]["name"], redis["metadata"]["labels"]) == (
        "app.kubernetes.io/instance",
        "orders-cache",
    )
    # The pod is named after the chart (fullnameOverride, or a release named like it): the chart's name stays.
    plain = _chart_pod("postgresql-0", "postgresql", "analytics", ("StatefulSet", "postgresql"))
    assert pod_workload_label("postgresql-0", plain["metadata"]["labels"]) == ("app.kubernetes.io/name", "postgresql")
    # No release label (a DaemonSet written by hand): the name label.
    shipper = _chart_pod("log-shipper-mhfdv", "log-shipper", None, ("DaemonSet", "log-shipper"))
    assert pod_workload_label("log-shipper-mhfdv", shipper["metadata"]["labels"]) == (
        "app.kubernetes.io/name",
        "log-shipper",
    )


def test_a_release_pods_log_lines_belong_to_the_release_and_bind_the_pods_name() -> None:
    """A crash-looping Redis release's previous log names the release (the service the topology knows), not the
    StatefulSet ``session-redis-master`` its pod name gives; the line's binding quotes the pod's name."""
    name = "session-redis-master-0"
    listing = pod_list(_chart_pod(name, "redis", "session-redis", ("StatefulSet", "session-redis-master")))
    logs = pod_logs(
        name,
        "1:M 14 Mar 2025 20:01:07.512 # Bad file format reading the append only file appendonly.aof.3.incr.aof: "
        "make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>",
        container_name="redis",
    )
    observations = [listing, logs]
    findings = [f for f in detect(observations) if f.bindings and f.bindings[0].invocation_id == logs.invocation_id]
    assert_sound(findings, observations)
    assert findings and {f.service for f in findings} == {"session-redis"}, [f.statement for f in findings]
    assert (findings[0].bindings[0].raw_path, findings[0].bindings[0].matched_text) == ("/pod", "session-redis")
    # Without the listing, the pod's name is all there is: its controller's name.
    alone = [f for f in detect([logs]) if f.bindings and f.bindings[0].invocation_id == logs.invocation_id]
    assert alone and {f.service for f in alone} == {"session-redis-master"}


def test_a_release_pods_loki_stream_by_pod_label_belongs_to_the_release() -> None:
    """The same for a Loki stream labelled only by its pod: the listing's workload, bound in the pod label."""
    name = "session-redis-master-0"
    listing = pod_list(_chart_pod(name, "redis", "session-redis", ("StatefulSet", "session-redis-master")))
    line = "1:M 14 Mar 2025 20:01:07.512 # Bad file format reading the append only file appendonly.aof.3.incr.aof"
    stream = loki(({"namespace": "greenfield", "pod": name, "container": "redis"}, [(3.0, line)]))
    observations = [listing, stream]
    findings = [f for f in detect(observations) if f.bindings and f.bindings[0].invocation_id == stream.invocation_id]
    assert_sound(findings, observations)
    assert findings and {f.service for f in findings} == {"session-redis"}, [f.statement for f in findings]
    assert (findings[0].bindings[0].raw_path, findings[0].bindings[0].matched_text) == (
        "/data/result/0/stream/pod",
        "session-redis",
    )
