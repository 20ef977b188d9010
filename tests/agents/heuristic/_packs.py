"""Small hand-made incident packs: the real built-in tools run over them, so outputs are realistic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.conversions import JsonObject
from diagnosis_server.tools.builtin import builtin_toolset
from diagnosis_server.tools.scenario import Scenario

START = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def at(minutes: float) -> str:
    ts = START + timedelta(minutes=minutes)
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def series(
    metric: str, service: str, values: list[float], *, unit: str = "ratio", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "metric": metric,
        "service": service,
        "unit": unit,
        "labels": labels or {},
        "points": [[at(i), v] for i, v in enumerate(values)],
    }


def step(before: float, after: float, *, n: int = 20, change_at: int = 10) -> list[float]:
    return [before] * change_at + [after] * (n - change_at)


def log(minutes: float, service: str, level: str, message: str) -> dict[str, Any]:
    return {"ts": at(minutes), "service": service, "level": level, "message": message}


def event_record(
    ts: str, namespace: str, service: str | None, kind: str, obj: str, reason: str, message: str
) -> dict[str, Any]:
    """A warning as the ``k8s.events`` tool records it (one occurrence)."""
    return {
        "ts": ts,
        "namespace": namespace,
        "kind": kind,
        "object": obj,
        "reason": reason,
        "type": "Warning",
        "message": message,
        "count": 1,
        "service": service,
    }


def event(
    minutes: float, service: str | None, reason: str, message: str, *, obj: str = "pod-1", kind: str = "Pod"
) -> dict[str, Any]:
    return event_record(at(minutes), "shop", service, kind, obj, reason, message)


def deploy(minutes: float, service: str, version: str, summary: str) -> dict[str, Any]:
    return {
        "ts": at(minutes),
        "service": service,
        "version": version,
        "previous_version": None,
        "author": "dev",
        "summary": summary,
    }


def pack(
    services: list[dict[str, Any]],
    *,
    logs: list[dict[str, Any]] = (),  # type: ignore[assignment]
    metrics: list[dict[str, Any]] = (),  # type: ignore[assignment]
    deploys: list[dict[str, Any]] = (),  # type: ignore[assignment]
    events: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> Scenario:
    return Scenario.model_validate(
        {
            "name": "hand-made",
            "title": "hand-made",
            "description": "hand-made",
            "question": "what is wrong?",
            "time_window": {"start": at(0), "end": at(60)},
            "topology": {"services": services},
            "logs": list(logs),
            "metrics": list(metrics),
            "deploys": list(deploys),
            "k8s_events": list(events),
            "truth": {"root_cause": {"service": None, "kind": "none", "summary": "n/a"}, "healthy": True},
        }
    )


def svc(name: str, kind: str = "http", depends_on: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"name": name, "kind": kind, "depends_on": list(depends_on)}


async def observe(scenario: Scenario, calls: list[tuple[str, JsonObject]]) -> list[Observation]:
    tools = builtin_toolset(scenario)
    out: list[Observation] = []
    for index, (tool_name, arguments) in enumerate(calls):
        tool = tools.get(tool_name)
        assert tool is not None
        output = await tool.call(arguments)
        assert isinstance(output, dict)
        out.append(Observation(index, tool_name, arguments, f"inv-{index}", output))
    return out
