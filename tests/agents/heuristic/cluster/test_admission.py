"""Admission findings from objects alone: a DaemonSet's FailedCreate is over once its desired pods are ready (its
status counts them as numberReady of desiredNumberScheduled), and current while they are not."""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis_server.agents.heuristic.analyzers import admission
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.findings import Role
from diagnosis_server.agents.heuristic.observations import Observation

MESSAGE = (
    'Error creating: pods "log-shipper-" is forbidden: error looking up service account shop/log-shipper: '
    'serviceaccount "log-shipper" not found'
)


def _evidence(ready: int) -> Evidence:
    daemonset: dict[str, Any] = {
        "metadata": {"name": "log-shipper", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "log-shipper"}}},
        "status": {"desiredNumberScheduled": 3, "numberReady": ready, "currentNumberScheduled": ready},
    }
    event: dict[str, Any] = {
        "metadata": {"name": "log-shipper.17f1", "namespace": "shop"},
        "involvedObject": {"kind": "DaemonSet", "name": "log-shipper", "namespace": "shop"},
        "reason": "FailedCreate",
        "message": MESSAGE,
        "type": "Warning",
        "lastTimestamp": "2025-06-10T09:40:00Z",
    }
    accounts: dict[str, Any] = {
        "kind": "ServiceAccountList",
        "items": [{"metadata": {"name": "default", "namespace": "shop"}}],
    }
    return Evidence.of(
        [
            Observation(
                0,
                "kubernetes.list",
                {"kind": "daemonsets", "namespace": "shop"},
                "a",
                {"kind": "DaemonSetList", "items": [daemonset]},
            ),
            Observation(1, "kubernetes.events", {"namespace": "shop"}, "b", {"kind": "EventList", "items": [event]}),
            Observation(2, "kubernetes.list", {"kind": "serviceaccounts", "namespace": "shop"}, "c", accounts),
        ]
    )


@pytest.mark.parametrize(
    ("ready", "kind", "role"), [(3, "ended_failed_create", Role.SUPPORT), (0, "service_account_missing", Role.CAUSE)]
)
def test_a_daemonsets_failed_create_is_current_only_while_its_pods_are_missing(
    ready: int, kind: str, role: Role
) -> None:
    [finding] = admission.analyze(_evidence(ready))
    assert (finding.kind, finding.role, finding.service) == (kind, role, "log-shipper")
    assert f"has {ready} of 3 pods ready" in finding.statement
    texts = {b.matched_text for b in finding.bindings}
    assert {"3", str(ready)} <= texts
    if role is Role.CAUSE:
        assert "service account log-shipper does not exist in namespace shop" in finding.statement
    else:
        assert "2025-06-10T09:40:00Z" in finding.statement and "explains" not in finding.statement
