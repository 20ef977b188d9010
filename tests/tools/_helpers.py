"""Helpers for the tool tests: a minimal valid pack, JSON Pointer lookup, and an exhaustive tool walk."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.tools.builtin import builtin_toolset
from diagnosis_server.tools.scenario import Scenario
from tests.support.pointers import pointed
from tests.support.scenarios import truth_of

MINIMAL_PACK: dict[str, Any] = {
    "name": "mini",
    "title": "A tiny pack",
    "description": "One service calling a database.",
    "question": "Is it broken?",
    "default": True,
    "time_window": {"start": "2024-01-01T10:00:00Z", "end": "2024-01-01T11:00:00Z"},
    "topology": {
        "services": [
            {"name": "api", "kind": "http", "depends_on": ["db"], "labels": {"namespace": "shop"}},
            {"name": "db", "kind": "database", "depends_on": [], "labels": {"namespace": "shop"}},
        ]
    },
    "logs": [
        {"ts": "2024-01-01T10:01:00Z", "service": "api", "level": "INFO", "message": "started"},
        {"ts": "2024-01-01T10:02:00.250Z", "service": "api", "level": "WARN", "message": "slow query 900ms"},
        {"ts": "2024-01-01T10:03:00Z", "service": "api", "level": "ERROR", "message": "DB Timeout after 30s"},
        {"ts": "2024-01-01T10:04:00Z", "service": "db", "level": "FATAL", "message": "too many connections"},
    ],
    "metrics": [
        {
            "metric": "http_requests_error_rate",
            "service": "api",
            "unit": "ratio",
            "labels": {"status": "5xx"},
            "points": [
                ["2024-01-01T10:00:00Z", 0.01],
                ["2024-01-01T10:10:00Z", 0.01],
                ["2024-01-01T10:20:00Z", 0.3],
                ["2024-01-01T10:30:00Z", 0.5],
                ["2024-01-01T10:40:00Z", 0.4],
            ],
        }
    ],
    "deploys": [
        {
            "ts": "2024-01-01T10:05:00Z",
            "service": "api",
            "version": "v2",
            "previous_version": "v1",
            "author": "a.b",
            "summary": "change",
        }
    ],
    "k8s_events": [
        {
            "ts": "2024-01-01T10:06:00Z",
            "namespace": "shop",
            "kind": "Pod",
            "object": "api-5d8f7-abcde",
            "reason": "BackOff",
            "type": "Warning",
            "message": "Back-off restarting failed container api",
            "count": 3,
            "service": "api",
        }
    ],
    "truth": {
        "root_cause": {"service": "db", "kind": "db_pool_exhaustion", "summary": "the database ran out of slots"},
        "key_evidence": ["too many connections"],
        "healthy": False,
        "ambiguous": False,
    },
}


def minimal_pack(**changes: Any) -> dict[str, Any]:
    pack = copy.deepcopy(MINIMAL_PACK)
    pack.update(changes)
    return pack


def write_pack(directory: Path, pack: dict[str, Any], stem: str | None = None) -> Path:
    path = directory / f"{stem or pack['name']}.json"
    path.write_text(json.dumps(pack), encoding="utf-8")
    return path


def resolve_pointer(document: JsonValue, pointer: str) -> JsonValue:
    """RFC 6901 JSON Pointer lookup (the same paths claims bind to)."""
    if pointer == "":
        return document
    assert pointer.startswith("/"), pointer
    node = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(token)]
        else:
            assert isinstance(node, dict), (pointer, token)
            node = node[token]
    return node


def string_leaves(document: JsonValue) -> Iterator[tuple[str, str]]:
    """Every string in a JSON document with its JSON Pointer."""
    return ((pointer, value) for pointer, value in pointed(document) if isinstance(value, str))


def all_keys(document: JsonValue) -> Iterator[str]:
    if isinstance(document, list):
        for item in document:
            yield from all_keys(item)
    elif isinstance(document, dict):
        for key, value in document.items():
            yield key
            yield from all_keys(value)


async def explore(scenario: Scenario) -> list[tuple[str, JsonObject, JsonValue]]:
    """Every output an agent can reach with the five tools over a pack: (tool, arguments, output)."""
    toolset = builtin_toolset(scenario)
    calls: list[tuple[str, JsonObject]] = [("deploys.list", {}), ("k8s.events", {})]
    for service in scenario.service_names:
        calls.append(("topology.dependencies", {"service": service}))
        calls.append(("logs.search", {"service": service, "limit": 200}))
        calls.append(("deploys.list", {"service": service}))
        calls.append(("k8s.events", {"service": service}))
        for evidence in truth_of(scenario).key_evidence:
            calls.append(("logs.search", {"service": service, "query": evidence, "limit": 200}))
    for series in scenario.metrics:
        calls.append(("metrics.query", {"metric": series.metric, "service": series.service}))
    out: list[tuple[str, JsonObject, JsonValue]] = []
    for name, arguments in calls:
        tool = toolset.get(name)
        assert tool is not None
        out.append((name, arguments, await tool.call(arguments)))
    return out
