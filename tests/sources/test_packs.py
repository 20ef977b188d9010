"""Recorded packs answer the live tools in the live shapes; a user's directory of packs adds to the bundled ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diagnosis_server.sources.packs import _at, _range, pack_metric_names, pack_series, pack_toolset
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


def _events_of(scenario: Any) -> list[dict[str, Any]]:
    return [dict(e) for e in scenario.kubernetes.events] + [
        {
            "metadata": {"namespace": e.namespace},
            "reason": e.reason,
            "type": e.type,
            "involvedObject": {"kind": e.kind, "name": e.object},
        }
        for e in scenario.k8s_events
    ]


def _selected(events: list[dict[str, Any]], terms: list[tuple[str, str, bool]]) -> list[tuple[str, str]]:
    def field(event: dict[str, Any], key: str) -> str:
        value: Any = event
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return "" if value is None else str(value)

    return [
        (field(e, "involvedObject.name"), field(e, "reason"))
        for e in events
        if all((field(e, key) == value) == equal for key, value, equal in terms)
    ]


async def test_field_selectors_on_a_pack_answer_what_a_scan_of_every_event_answers() -> None:
    """The index a pack answers ``type=Warning`` from gives the events (in their order) a scan would: equality and
    inequality terms together, values no event has, and the same selector asked twice."""
    scenarios = load_user_scenarios(Path(__file__).parents[1] / "incidents" / "packs")
    checked = 0
    for scenario in scenarios.values():
        if not scenario.kubernetes.events:
            continue
        tool = pack_toolset(scenario).get("kubernetes.events")
        assert tool is not None
        namespace = str(scenario.kubernetes.events[0]["metadata"]["namespace"])
        events = [e for e in _events_of(scenario) if e.get("metadata", {}).get("namespace", namespace) == namespace]
        first = scenario.kubernetes.events[0]
        name, reason = str(first["involvedObject"]["name"]), str(first["reason"])
        selectors = {
            "type=Warning": [("type", "Warning", True)],
            "type=Normal,reason!=Scheduled": [("type", "Normal", True), ("reason", "Scheduled", False)],
            f"involvedObject.kind=Pod,involvedObject.name={name}": [
                ("involvedObject.kind", "Pod", True),
                ("involvedObject.name", name, True),
            ],
            f"reason=={reason},type!=Warning": [("reason", reason, True), ("type", "Warning", False)],
            "reason=NoSuchReason": [("reason", "NoSuchReason", True)],
            "type!=Normal": [("type", "Normal", False)],
        }
        for selector, terms in selectors.items():
            for _ in range(2):
                listing: Any = await tool.call({"namespace": namespace, "field_selector": selector})
                got = [(i["involvedObject"]["name"], i["reason"]) for i in listing["items"]]
                assert got == _selected(events, terms), (scenario.name, selector)
        checked += 1
    assert checked >= 10


async def test_instant_samples_are_the_latest_within_the_lookback_whatever_order_a_pack_lists_them_in(
    tmp_path: Path,
) -> None:
    """Prometheus's instant semantics: the latest sample at or before the moment, none older than five minutes."""
    pack = {
        **USER_PACK,
        "prometheus": {
            "series": [
                {
                    "metric": {"__name__": "queue_depth", "queue": "orders"},
                    # Out of time order, as an export may list them.
                    "values": [[1732888800, "9"], [1732885200, "1"], [1732887000, "4"], [1732886100, "2"]],
                }
            ]
        },
    }
    scenario = all_scenarios(_user_dir(tmp_path, pack))["my-outage"]
    query = pack_toolset(scenario).get("prometheus.query")
    assert query is not None

    async def at(moment: int) -> list[Any]:
        answer: Any = await query.call({"query": "queue_depth", "time": str(moment)})
        return [r["value"][1] for r in answer["data"]["result"]]

    assert await at(1732885200) == ["1"]
    assert await at(1732885200 + 299) == ["1"]
    assert await at(1732885200 + 301) == []  # past the lookback, and before the next sample
    assert await at(1732886100 + 10) == ["2"]
    assert await at(1732887000) == ["4"]
    assert await at(1732885199) == []  # before the first sample
    assert await at(1732888800 + 60) == ["9"]


async def test_pack_prometheus_and_loki_answers_are_redacted_and_filter_on_the_recorded_text(tmp_path: Path) -> None:
    """A pack's series and streams are redacted once, for every answer; a line filter still reads the line as
    recorded, as Loki does (the answer holds it redacted)."""
    pack = {
        **USER_PACK,
        "name": "secret-bearing",
        "logs": [
            {
                "ts": "2024-11-29T13:40:00Z",
                "service": "checkout-api",
                "level": "ERROR",
                "message": "login failed for postgres://app:s3cretpass@orders-db:5432/orders",
            },
            {"ts": "2024-11-29T13:41:00Z", "service": "checkout-api", "level": "INFO", "message": "ok"},
        ],
        "prometheus": {
            "series": [
                {
                    "metric": {"__name__": "up", "instance": "password=hunter2hunter2", "job": "checkout-api"},
                    "values": [[1732885200, "1"], [1732888800, "1"]],
                }
            ]
        },
    }
    toolset = pack_toolset(all_scenarios(_user_dir(tmp_path, pack))["secret-bearing"])
    names = ("loki.query_range", "prometheus.query", "prometheus.query_range")
    loki_tool, query_tool, range_tool = (toolset.get(name) for name in names)
    assert loki_tool is not None and query_tool is not None and range_tool is not None
    lines: Any = await loki_tool.call({"query": '{service="checkout-api"} |= "s3cretpass"'})
    (stream,) = lines["data"]["result"]
    assert [line for _, line in stream["values"]] == ["login failed for postgres://[REDACTED]@orders-db:5432/orders"]
    for answer in (await query_tool.call({"query": "up"}), await range_tool.call({"query": "up", "step": "30m"})):
        text = json.dumps(answer)
        assert "hunter2hunter2" not in text and "password=[REDACTED]" in text


@pytest.mark.parametrize("step", [7.0, 15.0, 60.0, 301.0])
def test_a_range_answer_is_the_instant_sample_at_every_step(step: float) -> None:
    """The range walk (one pass over the samples) gives at each step what the instant lookup gives there."""
    incidents = load_user_scenarios(Path(__file__).parents[1] / "incidents" / "packs")
    checked = 0
    for scenario in [*load_scenarios().values(), *incidents.values()]:
        start, end = scenario.time_window.start.timestamp(), scenario.time_window.end.timestamp()
        for _, values in pack_series(scenario):
            expected: list[Any] = []
            moment = start - 600
            while moment <= end + 1e-9:
                value = _at(values, moment)
                if value is not None:
                    expected.append([int(moment) if float(moment).is_integer() else round(moment, 3), value])
                moment += step
            assert _range(values, start - 600, end, step) == expected
            checked += 1
    assert checked > 20
