"""The kernel's OOM killer, joined to the workload whose process it killed.

A node reports ``OOMKilling`` ("Memory cgroup out of memory: Killed process 28841 (python3) ...") without naming
a pod: the container is not restarted, only one of its processes dies (a worker of a prefork pool), so the pod's
status shows nothing. The workload's own log then says which process went: "pid:28841 exited with 'signal 9
(SIGKILL)'". The same pid in both is the join: that workload's processes are killed when memory runs out, a cause
(R-AN-1), bound to the node's event and to the workload's line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from diagnosis_server.agents.heuristic.analyzers.events import event_views
from diagnosis_server.agents.heuristic.findings import Finding, Role, one_line, quote
from diagnosis_server.agents.heuristic.findings import excerpt as text_excerpt
from diagnosis_server.agents.heuristic.observations import Binding, BindingError, LogLine, Observation

_KILLED = re.compile(r"(?:(?:Memory cgroup out of memory|Out of memory): )?Killed process (\d+) \(([^)]{1,64})\)")
# A log line saying a process of the workload died of SIGKILL, with its pid.
_PID = re.compile(r"\bpid[:= ]\s*(\d+)\b", re.IGNORECASE)
_SIGKILL = re.compile(r"signal 9\b|SIGKILL|killed by signal 9", re.IGNORECASE)
_LINE_EXCERPT = re.compile(
    r"(?:[\w'-]+ ){0,2}\S*?\bpid[:= ]\s*\d+[^\n]{0,80}?(?:signal 9 \(SIGKILL\)|SIGKILL|signal 9)", re.IGNORECASE
)
# The excerpt is searched for in a bounded window around each pid (the lazy ``\S*?`` is quadratic in a long word).
_BEFORE_PID, _AFTER_PID = 120, 120


def _line_excerpt(message: str) -> str | None:
    """The words around the first pid a SIGKILL follows within 80 characters, in linear time."""
    for pid in _PID.finditer(message):
        window = message[max(0, pid.start() - _BEFORE_PID) : pid.end() + _AFTER_PID]
        found = _LINE_EXCERPT.search(window)
        if found is not None:
            return found.group(0)
    return None


@dataclass(frozen=True, slots=True)
class NodeKill:
    node: str
    bindings: tuple[Binding, ...]


def _node_kills(observations: Iterable[Observation]) -> dict[str, NodeKill]:
    """The pids every ``OOMKilling`` event about a Node names, from a pack's records or core/v1 Events."""
    out: dict[str, NodeKill] = {}
    for event in event_views(observations, nodes=True):
        match = _KILLED.search(event.message) if event.object_kind == "Node" else None
        if match is None or event.reason != "OOMKilling" or match.group(1) in out:
            continue
        try:
            bindings = (event.bind_object(), event.bind("reason"), event.bind("message", text=match.group(0)))
        except BindingError:
            continue
        out[match.group(1)] = NodeKill(event.object_name, bindings)
    return out


def kernel_oom_findings(observations: Sequence[Observation], lines: Sequence[LogLine]) -> list[Finding]:
    """One cause per workload whose SIGKILLed pid a node's OOMKilling event names."""
    kills = _node_kills(observations)
    if not kills:
        return []
    out: list[Finding] = []
    seen: set[str] = set()
    for line in lines:
        if not line.service or line.service in seen or not _SIGKILL.search(line.message):
            continue
        pid = _PID.search(line.message)
        kill = kills.get(pid.group(1)) if pid else None
        excerpt = _line_excerpt(line.message) if kill is not None else None
        if kill is None or excerpt is None:
            continue
        said = text_excerpt(excerpt.strip(), 120)
        try:
            bindings = (line.bind_service(), *kill.bindings, line.bind_message(said))
        except BindingError:
            continue
        statement = (
            f"{line.service} processes were killed when memory ran out (node {kill.node} reports OOMKilling, "
            f"{quote(kill.bindings[2].matched_text)}; {line.service} logs {quote(one_line(said))})"
        )
        out.append(
            Finding(
                "oom",
                Role.CAUSE,
                line.service,
                statement,
                bindings,
                strength=4,
                onset=line.ts,
                detail=kill.bindings[2].matched_text,
            )
        )
        seen.add(line.service)
    return out
