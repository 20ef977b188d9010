"""Read one incident's TOML file and write its pack through the kit.

The file holds what is particular to the incident; the kit fills in the rest (uids, defaults, timestamps from
minutes, the API objects' own shape). Every section is a list of entries whose keys are the parameters of the kit
call that writes it; an entry with ``each`` is a group: every item of ``each`` is one entry, with the group's other
keys as its defaults. The shorthands beyond the kit's parameters are described in the package's docstring.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.incidents.corpus.kit import (
    Json,
    Pack,
    backoff_event_message,
    condition,
    container,
    crashloop_message,
    healthy_pod,
    http_probe,
    pod_start_events,
    running,
    status,
    terminated,
    unschedulable,
    waiting,
)

HEADER = ("title", "description", "question", "start", "minutes")


def read(path: Path) -> Pack:
    """The pack ``path`` describes; its name is the file's."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    unknown = set(data) - {*HEADER, *SECTIONS, "truth"}
    if unknown:
        raise ValueError(f"{path.name}: unknown keys {sorted(unknown)}")
    pack = Pack(path.stem, **{key: data[key] for key in HEADER if key in data})
    for section, write in SECTIONS.items():
        for entry in entries(data.get(section, [])):
            write(pack, entry)
    pack.truth(**data["truth"])
    return pack


def entries(groups: list[Json]) -> Iterator[Json]:
    """Every entry of a section, each group's items with the group's keys as their defaults."""
    for group in groups:
        shared = {key: value for key, value in group.items() if key != "each"}
        for item in group.get("each", [{}]):
            yield {**shared, **item}


# ------------------------------------------------------------------------------------------------ Pods
def _pod(pack: Pack, entry: Json) -> None:
    namespace, name = entry["namespace"], entry["name"]
    if entry.pop("healthy", False):
        if "last" in entry:
            entry["last"] = _state(pack, entry["last"], entry["container_name"], name, namespace)
        healthy_pod(pack, **entry)
        return
    for key in ("containers", "init_containers"):
        if key in entry:
            entry[key] = [_container(c) for c in entry[key]]
    for key in ("statuses", "init_statuses"):
        if key in entry:
            entry[key] = [_status(pack, s, name, namespace) for s in entry[key]]
    if "unschedulable" in entry:
        reason = entry.pop("unschedulable")
        entry["conditions"] = unschedulable(pack, reason["at"], reason["message"])
    elif "conditions" in entry:
        entry["conditions"] = [condition(pack, **c) for c in entry["conditions"]]
    if "owner" in entry:
        entry["owner"] = tuple(entry["owner"])
    pack.pod(**entry)


def _container(spec: Json) -> Json:
    spec = dict(spec)
    if spec.get("port") is False:  # no container port
        spec["port"] = None
    probes = {kind: http_probe(**p) if "path" in p else p for kind, p in spec.pop("probes", {}).items()}
    return container(**spec, probes=probes or None)


def _status(pack: Pack, spec: Json, pod: str, namespace: str) -> Json:
    spec = dict(spec)
    name = spec["name"]
    spec["state"] = _state(pack, spec["state"], name, pod, namespace)
    if "last" in spec:
        spec["last"] = _state(pack, spec["last"], name, pod, namespace)
    return status(pack, **spec)


def _state(pack: Pack, spec: Json, container_name: str, pod: str, namespace: str) -> Json:
    """``{running = since}``, ``{waiting = reason, message | back_off}``, ``{terminated = reason, code, ...}``."""
    spec = dict(spec)
    if "running" in spec:
        return running(pack, spec["running"])
    if "waiting" in spec:
        message = spec.get("message")
        if "back_off" in spec:
            message = crashloop_message(container_name, pod, namespace, pack, spec["back_off"])
        return waiting(spec["waiting"], message)
    return terminated(pack, spec.pop("terminated"), **spec)


# ---------------------------------------------------------------------------------------------- Events
def _event(pack: Pack, entry: Json) -> None:
    """A core/v1 Event; ``scheduled = node``: the scheduler's; ``pod_start``: the events of a pod's start."""
    if "scheduled" in entry:
        pack.scheduled(entry["first"], entry["namespace"], entry["obj"], entry["scheduled"])
    elif "pod_start" in entry:
        pod_start_events(pack, entry["namespace"], entry["obj"], minute=entry["first"], **entry["pod_start"])
    else:
        pack.event(**_back_off(pack, entry))


def _back_off(pack: Pack, entry: Json) -> Json:
    """``back_off = container``: the kubelet's message for the back-off restarting that container of the Pod."""
    if "back_off" in entry:
        entry["message"] = backoff_event_message(entry.pop("back_off"), entry["obj"], entry["namespace"], pack)
    return entry


def _deployment(pack: Pack, entry: Json) -> None:
    if "conditions" in entry:
        entry["conditions"] = [condition(pack, **c, updated=True) for c in entry["conditions"]]
    pack.deployment(**entry)


def _stream(pack: Pack, entry: Json) -> None:
    pack.stream(entry["labels"], [(minute, line) for minute, line in entry["entries"]])


def _values(entry: Json) -> Json:
    """``values = {from, step, count}``: a constant (no ``step``) or evenly stepping series."""
    values = entry["values"]
    if isinstance(values, dict):
        entry["values"] = [values["from"] + i * values.get("step", 0) for i in range(values["count"])]
    return entry


def _call(method: Callable[..., Any]) -> Callable[[Pack, Json], None]:
    return lambda pack, entry: method(pack, **entry)


SECTIONS: dict[str, Callable[[Pack, Json], None]] = {
    "services": _call(Pack.service),
    "deployments": _deployment,
    "replicasets": _call(Pack.replicaset),
    "pods": _pod,
    "events": _event,
    "pod_logs": _call(Pack.pod_log),
    "series": lambda pack, entry: pack.series(**_values(entry)),
    "streams": _stream,
    "logs": _call(Pack.log),
    "metrics": lambda pack, entry: pack.metric(**_values(entry)),
    "deploys": _call(Pack.deploy),
    "k8s_events": lambda pack, entry: pack.k8s_event(**_back_off(pack, entry)),
}
