"""The firing alert groups Alertmanager holds, read from its API v2 (``GET /api/v2/alerts/groups``)."""

from __future__ import annotations

from typing import Any

import httpx2

from diagnosis_server.alerts.payload import AlertGroup, PayloadError, parse_alert

GROUPS_PATH = "/api/v2/alerts/groups"
TIMEOUT_S = 10.0


class AlertmanagerError(RuntimeError):
    """Alertmanager could not be read; the message says why (never a credential of the URL)."""


def group_key(labels: dict[str, str]) -> str:
    """A group key in Alertmanager's own form for the root route: ``{}:{alertname="X",namespace="shop"}``."""
    inner = ",".join(f'{name}="{value}"' for name, value in sorted(labels.items()))
    return "{}:{" + inner + "}"


def groups_from(document: Any, *, alertname: str = "") -> list[AlertGroup]:
    """The groups with active alerts (of ``alertname`` when given); a group seen under two receivers once."""
    if not isinstance(document, list):
        raise PayloadError("(body)", "must be a list of alert groups")
    found: list[AlertGroup] = []
    seen: set[frozenset[str]] = set()
    for index, raw in enumerate(document):
        if not isinstance(raw, dict):
            raise PayloadError(f"[{index}]", "must be an object")
        raw_alerts = raw.get("alerts") or []
        if not isinstance(raw_alerts, list):
            raise PayloadError(f"[{index}].alerts", "must be a list")
        alerts = [parse_alert(item, f"[{index}].alerts[{number}]") for number, item in enumerate(raw_alerts)]
        firing = [a for a in alerts if a.status == "firing" and (not alertname or a.labels["alertname"] == alertname)]
        fingerprints = frozenset(a.fingerprint for a in firing)
        if not firing or fingerprints in seen:
            continue
        seen.add(fingerprints)
        raw_labels = raw.get("labels")
        labels = {str(k): str(v) for k, v in raw_labels.items()} if isinstance(raw_labels, dict) else {}
        found.append(AlertGroup(group_key=group_key(labels), alerts=firing))
    return found


def firing_groups(base_url: str, *, alertname: str = "", timeout_s: float = TIMEOUT_S) -> list[AlertGroup]:
    """Alertmanager's active, unsilenced, uninhibited alert groups; AlertmanagerError when it cannot be read."""
    url = base_url.rstrip("/") + GROUPS_PATH
    params = {"active": "true", "silenced": "false", "inhibited": "false"}
    try:
        response = httpx2.get(url, params=params, timeout=timeout_s)
    except httpx2.HTTPError as exc:
        raise AlertmanagerError(f"cannot reach Alertmanager ({type(exc).__name__})") from None
    if response.status_code != 200:
        raise AlertmanagerError(f"Alertmanager answered HTTP {response.status_code} to {GROUPS_PATH}")
    try:
        return groups_from(response.json(), alertname=alertname)
    except ValueError as exc:
        raise AlertmanagerError(f"Alertmanager's answer cannot be read: {exc}") from None
