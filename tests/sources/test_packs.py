"""Recorded packs answer the live tools in the live shapes; a user's directory of packs adds to the bundled ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diagnosis_server.sources.packs import pack_metric_names, pack_series, pack_toolset
from diagnosis_server.tools.scenario import ScenarioError, all_scenarios, load_scenarios, load_user_scenarios

from . import k8s_recorded as rec

USER_PACK: dict[str, Any] = {
    "name": "my-outage",
    "title": "Checkout OOM, recorded from our cluster",
    "description": "Raw objects from kubectl and a Prometheus export.",
    "question": "Why is checkout-api failing?",
    "time_window": {"start": "2024-11-29T13:00:00Z", "end": "2024-11-29T14:00:00Z"},
    "topology": {"services": [{"name": "checkout-api", "kind": "http", "labels": {"namespace": "shop"}}]},
    "kubernetes": {
        "pods": [
            rec.pod("checkout-api-7f9c6d8b5-tr6zn", restarts=6, oom=True),
            rec.pod("checkout-api-7f9c6d8b5-x2k9p"),
        ],
        "events": rec.EVENTS["items"],
        "deployments": [rec.DEPLOYMENT],
        "replicasets": rec.REPLICASETS["items"],
        "pod_logs": [
            {
                "namespace": "shop",
                "pod": "checkout-api-7f9c6d8b5-tr6zn",
                "previous": True,
                "lines": rec.POD_LOG.splitlines(),
            }
        ],
    },
    "prometheus": {
        "series": [
            {
                "metric": {
                    "__name__": "kube_pod_container_status_restarts_total",
                    "pod": "checkout-api-7f9c6d8b5-tr6zn",
                },
                "values": [[1732885200, "0"], [1732887000, "3"], [1732888800, "6"]],
            }
        ]
    },
    "truth": {
        "root_cause": {"service": "checkout-api", "kind": "heap too small for 2.14", "summary": "OOM"},
        "healthy": False,
    },
}


def _user_dir(tmp_path: Path, pack: dict[str, Any]) -> Path:
    folder = tmp_path / "packs"
    folder.mkdir(exist_ok=True)
    (folder / f"{pack['name']}.json").write_text(json.dumps(pack))
    return folder


async def test_a_user_pack_answers_the_kubernetes_and_prometheus_tools(tmp_path: Path) -> None:
    packs = all_scenarios(_user_dir(tmp_path, USER_PACK))
    assert set(load_scenarios()) < set(packs)
    toolset = pack_toolset(packs["my-outage"])
    assert {
        "kubernetes.pods",
        "kubernetes.events",
        "kubernetes.pod_logs",
        "kubernetes.rollouts",
        "prometheus.query",
        "prometheus.query_range",
    } <= set(toolset.names)
    assert "loki.query_range" not in toolset.names  # the pack has no logs
    tool = toolset.get("kubernetes.pods")
    assert tool is not None
    pods: Any = await tool.call({"field_selector": "metadata.name=checkout-api-7f9c6d8b5-tr6zn"})
    assert pods["kind"] == "PodList" and len(pods["items"]) == 1
    assert pods["items"][0]["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"] == "OOMKilled"
    assert "managedFields" not in pods["items"][0]["metadata"]
    assert rec.DB_PASSWORD not in json.dumps(pods)
    rollouts: Any = await toolset.get("kubernetes.rollouts").call({"deployment": "checkout-api"})  # type: ignore[union-attr]
    assert [r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for r in rollouts["items"]] == [
        "13",
        "14",
    ]
    logs: Any = await toolset.get("kubernetes.pod_logs").call(  # type: ignore[union-attr]
        {"pod": "checkout-api-7f9c6d8b5-tr6zn", "previous": True, "tail_lines": 1}
    )
    assert logs["lines"] == ["2024-11-29T13:51:36.001Z ERROR java.lang.OutOfMemoryError: Java heap space"]
    restarts: Any = await toolset.get("prometheus.query").call({"query": "kube_pod_container_status_restarts_total"})  # type: ignore[union-attr]
    assert restarts["data"]["result"][0]["value"] == [1732888800, "6"]
    ranged: Any = await toolset.get("prometheus.query_range").call(  # type: ignore[union-attr]
        {"query": 'kube_pod_container_status_restarts_total{pod=~"checkout-.*"}', "step": "30m"}
    )
    assert ranged["data"]["result"][0]["values"] == [[1732885200, "0"], [1732887000, "3"], [1732888800, "6"]]


async def test_bundled_packs_answer_live_names_from_their_own_data() -> None:
    toolset = pack_toolset(load_scenarios()["checkout-oom"])
    logs: Any = await toolset.get("loki.query_range").call(  # type: ignore[union-attr]
        {"query": '{service="checkout-api", level="error"}', "limit": 2}
    )
    assert logs["data"]["resultType"] == "streams" and logs["data"]["result"]
    events: Any = await toolset.get("kubernetes.events").call({"field_selector": "reason=OOMKilling"})  # type: ignore[union-attr]
    assert events["kind"] == "EventList"


def test_user_packs_need_no_truth_and_clashes_fail(tmp_path: Path) -> None:
    pack = {k: v for k, v in USER_PACK.items() if k != "truth"}
    assert all_scenarios(_user_dir(tmp_path, pack))["my-outage"].truth is None
    (tmp_path / "other").mkdir()
    clash = _user_dir(tmp_path / "other", {**pack, "name": "checkout-oom"})
    with pytest.raises(ScenarioError, match="checkout-oom have the name of a bundled pack"):
        all_scenarios(clash)


def test_a_packs_metric_names_are_the_names_of_its_series() -> None:
    """What a planner is told it may ask for by name (``pack_context``) is read without making every series."""
    incidents = load_user_scenarios(Path(__file__).parents[1] / "incidents" / "packs")
    scenarios = {**load_scenarios(), **incidents}
    assert any(pack_metric_names(s) for s in scenarios.values())
    for name, scenario in scenarios.items():
        series_names = {labels["__name__"] for labels, _ in pack_series(scenario) if labels.get("__name__")}
        assert pack_metric_names(scenario) == series_names, name
