"""Alertmanager's webhook payload (version 4) read into alert groups, every problem naming its field."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from diagnosis.v1 import diagnosis_service_pb2 as pb

WEBHOOK_VERSION = "4"
STATUSES = ("firing", "resolved")
MAX_ALERTS = 1000
MAX_TEXT = 16_384
# Go's zero time: how Alertmanager writes "no end yet" (endsAt of a firing alert).
_GO_ZERO_YEAR = "0001-01-01"


class PayloadError(ValueError):
    """A payload Alertmanager would not send: ``field`` is where (``alerts[0].startsAt``), the message why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.reason = message


@dataclass(slots=True)
class AlertGroup:
    """One notification's alerts: its group key and every alert (firing and resolved)."""

    group_key: str
    alerts: list[pb.Alert]
    common_labels: dict[str, str] = field(default_factory=dict)
    external_url: str = ""

    @property
    def firing(self) -> list[pb.Alert]:
        return [alert for alert in self.alerts if alert.status == "firing"]


def _string(value: Any, where: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise PayloadError(where, "must be a string")
    if required and not value:
        raise PayloadError(where, "must not be empty")
    if len(value) > MAX_TEXT:
        raise PayloadError(where, f"must be at most {MAX_TEXT} characters")
    return value


def _labels(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PayloadError(where, "must be an object of strings")
    labels: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key:
            raise PayloadError(where, "keys must be non-empty strings")
        labels[key] = _string(item, f"{where}.{key}", required=False)
    return labels


def parse_time(value: Any, where: str, *, required: bool) -> Timestamp | None:
    """An RFC 3339 time (nanoseconds kept); None for Go's zero time or, when not required, absence."""
    if value is None or value == "":
        if required:
            raise PayloadError(where, "is required (an RFC 3339 time)")
        return None
    if not isinstance(value, str):
        raise PayloadError(where, "must be an RFC 3339 time string")
    if value.startswith(_GO_ZERO_YEAR):
        if required:
            raise PayloadError(where, "must be a real time, not the zero time")
        return None
    stamp = Timestamp()
    try:
        stamp.FromJsonString(value)
    except ValueError:
        raise PayloadError(where, "must be an RFC 3339 time such as 2026-12-02T12:00:00Z") from None
    return stamp


def parse_alert(value: Any, where: str) -> pb.Alert:
    """One alert of the payload (or of the v2 API, whose alerts carry the same fields)."""
    if not isinstance(value, Mapping):
        raise PayloadError(where, "must be an object")
    status = value.get("status")
    if isinstance(status, Mapping):  # the v2 API: {"state": "active", ...}
        status = "firing" if status.get("state") == "active" else "resolved"
    if status not in STATUSES:
        raise PayloadError(f"{where}.status", "must be 'firing' or 'resolved'")
    labels = _labels(value.get("labels"), f"{where}.labels")
    if not labels.get("alertname"):
        raise PayloadError(f"{where}.labels.alertname", "is required")
    alert = pb.Alert(
        labels=labels,
        annotations=_labels(value.get("annotations"), f"{where}.annotations"),
        fingerprint=_string(value.get("fingerprint"), f"{where}.fingerprint"),
        generator_url=_string(value.get("generatorURL"), f"{where}.generatorURL", required=False),
        status=str(status),
    )
    starts_at = parse_time(value.get("startsAt"), f"{where}.startsAt", required=True)
    assert starts_at is not None
    alert.starts_at.CopyFrom(starts_at)
    ends_at = parse_time(value.get("endsAt"), f"{where}.endsAt", required=False)
    if ends_at is not None:
        alert.ends_at.CopyFrom(ends_at)
    return alert


def parse_webhook(document: Any) -> AlertGroup:
    """The alert group of one webhook notification; PayloadError naming the field at fault."""
    if not isinstance(document, Mapping):
        raise PayloadError("(body)", "must be a JSON object")
    version = document.get("version")
    if version != WEBHOOK_VERSION:
        raise PayloadError("version", f"must be {WEBHOOK_VERSION!r} (Alertmanager's webhook payload version 4)")
    group_key = _string(document.get("groupKey"), "groupKey")
    if document.get("status") not in STATUSES:
        raise PayloadError("status", "must be 'firing' or 'resolved'")
    raw_alerts = document.get("alerts")
    if not isinstance(raw_alerts, list) or not raw_alerts:
        raise PayloadError("alerts", "must be a non-empty list")
    if len(raw_alerts) > MAX_ALERTS:
        raise PayloadError("alerts", f"must hold at most {MAX_ALERTS} alerts")
    alerts = [parse_alert(item, f"alerts[{index}]") for index, item in enumerate(raw_alerts)]
    return AlertGroup(
        group_key=group_key,
        alerts=alerts,
        common_labels=_labels(document.get("commonLabels"), "commonLabels"),
        external_url=_string(document.get("externalURL"), "externalURL", required=False),
    )
