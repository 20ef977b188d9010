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

from diagnosis_server.agents.heuristic.findings import Finding, Role, one_line, quote
from diagnosis_server.agents.heuristic.findings import excerpt as text_excerpt
from diagnosis_server.agents.heuristic.observations import Binding, BindingError, LogLine, Observation, records

_KILLED = re.compile(r"(?:(?:Memory cgroup out of memory|Out of memory): )?Killed process (\d+) \(([^)]{1,64})\)")
# A log line saying a process of the workload died of SIGKILL, with its pid.
_PID = re.compile(r"\bpid[:= ]\s*(\d+)\b", re.IGNORECASE)
_SIGKILL = re.compile(r"signal 9\b|SIGKILL|killed by signal 9", re.IGNORECASE)
_LINE_EXCERPT = re.compile(
    r"(?:[\w'-]+ ){0,2}\S*?\bpid[:= ]\s*\d+[^\n]{0,80}?(?:signal 9 \(SIGKILL\)|SIGKILL|signal 9)", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class NodeKill:
    node: str
    pid: str
    process: str
    bindings: tuple[Binding, ...]


def _node_kills(observations: Iterable[Observation]) -> list[NodeKill]:
    """Every ``OOMKilling`` event about a Node, from a pack's records or core/v1 Events."""
    out: list[NodeKill] = []
    for obs in observations:
        if obs.tool_name == "k8s.events":
            for record in records(obs, "events"):
                if record.text("kind") != "Node" or record.text("reason") != "OOMKilling":
                    continue
                match = _KILLED.search(record.text("message"))
                if match:
                    try:
                        bindings = (
                            record.bind("object"),
                            record.bind("reason"),
                            record.bind("message", text=match.group(0)),
                        )
                    except BindingError:
                        continue
                    out.append(NodeKill(record.text("object"), match.group(1), match.group(2), bindings))
        elif obs.tool_name == "kubernetes.events":
            items = obs.get("items")
            for index, item in enumerate(items if isinstance(items, list) else []):
                involved = item.get("involvedObject") if isinstance(item, dict) else None
                if not isinstance(item, dict) or not isinstance(involved, dict):
                    continue
                if involved.get("kind") != "Node" or item.get("reason") != "OOMKilling":
                    continue
                message = item.get("message")
                match = _KILLED.search(message) if isinstance(message, str) else None
                if match:
                    try:
                        bindings = (
                            obs.bind("items", index, "involvedObject", "name"),
                            obs.bind("items", index, "reason"),
                            obs.bind("items", index, "message", text=match.group(0)),
                        )
                    except BindingError:
                        continue
                    out.append(NodeKill(str(involved.get("name") or ""), match.group(1), match.group(2), bindings))
    return out


def kernel_oom_findings(observations: Sequence[Observation], lines: Sequence[LogLine]) -> list[Finding]:
    """One cause per workload whose SIGKILLed pid a node's OOMKilling event names."""
    kills = {kill.pid: kill for kill in _node_kills(observations)}
    if not kills:
        return []
    out: list[Finding] = []
    seen: set[str] = set()
    for line in lines:
        if not line.service or line.service in seen or not _SIGKILL.search(line.message):
            continue
        pid = _PID.search(line.message)
        kill = kills.get(pid.group(1)) if pid else None
        excerpt = _LINE_EXCERPT.search(line.message)
        if kill is None or excerpt is None:
            continue
        said = text_excerpt(excerpt.group(0).strip(), 120)
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
