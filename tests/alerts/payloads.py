"""Alertmanager webhook payloads (version 4) as Alertmanager's documentation describes them."""

from __future__ import annotations

from typing import Any

ALERT_LABELS = {
    "alertname": "KubePodCrashLooping",
    "namespace": "shop",
    "pod": "checkout-api-7f9c6d8b5-tr6zn",
    "container": "checkout-api",
    "severity": "critical",
    "cluster": "prod-eu",
}


def alert(
    *,
    status: str = "firing",
    fingerprint: str = "5a1f0c2e9b7d4e31",
    starts_at: str = "2026-12-02T11:58:30.123456789Z",
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "status": status,
        "labels": dict(ALERT_LABELS if labels is None else labels),
        "annotations": {
            "summary": "Pod shop/checkout-api-7f9c6d8b5-tr6zn is crash looping.",
            "description": "Pod shop/checkout-api-7f9c6d8b5-tr6zn (checkout-api) is in waiting state (reason: "
            '"CrashLoopBackOff").',
        },
        "startsAt": starts_at,
        "endsAt": "0001-01-01T00:00:00Z" if status == "firing" else "2026-12-02T12:10:00Z",
        "generatorURL": "http://prometheus.example:9090/graph?g0.expr=kube_pod_container_status_waiting_reason",
        "fingerprint": fingerprint,
    }


def notification(*alerts: dict[str, Any], group_key: str = '{}:{alertname="KubePodCrashLooping"}') -> dict[str, Any]:
    listed = list(alerts) or [alert()]
    firing = any(item["status"] == "firing" for item in listed)
    return {
        "version": "4",
        "groupKey": group_key,
        "truncatedAlerts": 0,
        "status": "firing" if firing else "resolved",
        "receiver": "diagnosis",
        "groupLabels": {"alertname": "KubePodCrashLooping"},
        "commonLabels": dict(ALERT_LABELS),
        "commonAnnotations": {},
        "externalURL": "http://alertmanager.example:9093",
        "alerts": listed,
    }
