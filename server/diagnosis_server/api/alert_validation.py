"""Checks of InvestigateAlert's alerts and group key, and ListRuns' trigger filter."""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from diagnosis_server.alerts.payload import MAX_ALERTS, MAX_TEXT, STATUSES
from diagnosis_server.api.errors import invalid_argument
from diagnosis_server.api.validation import check_text


def check_group_key(group_key: str) -> str:
    if len(group_key) > MAX_TEXT:
        raise invalid_argument("group_key", f"must be at most {MAX_TEXT} characters")
    check_text(group_key, field="group_key")
    return group_key


def check_alerts(alerts: Sequence[pb.Alert]) -> list[pb.Alert]:
    """The firing alerts of a well-formed group; INVALID_ARGUMENT naming the first field at fault."""
    if not alerts:
        raise invalid_argument("alerts", "must hold at least one alert")
    if len(alerts) > MAX_ALERTS:
        raise invalid_argument("alerts", f"must hold at most {MAX_ALERTS} alerts")
    for index, alert in enumerate(alerts):
        where = f"alerts[{index}]"
        if alert.status not in STATUSES:
            raise invalid_argument(f"{where}.status", "must be 'firing' or 'resolved'")
        if not alert.labels.get("alertname"):
            raise invalid_argument(f"{where}.labels.alertname", "is required")
        if not alert.fingerprint:
            raise invalid_argument(f"{where}.fingerprint", "must not be empty")
        if not alert.HasField("starts_at"):
            raise invalid_argument(f"{where}.starts_at", "is required")
    firing = [alert for alert in alerts if alert.status == "firing"]
    if not firing:
        raise invalid_argument("alerts", "no alert is firing: a resolved group starts no run")
    return firing


def check_trigger_filter(trigger: int) -> int:
    if trigger not in run_pb2.TriggerKind.DESCRIPTOR.values_by_number:
        raise invalid_argument("trigger", f"unknown trigger {trigger}")
    return trigger
