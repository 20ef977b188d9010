"""Port protocol: a Service that sends its port to another container port than the one serving it (the metrics
port of a gRPC server), so callers get an answer in another protocol.

Stated when a caller's log line reports a protocol error (``http2: frame too large``, ``error reading server
preface``, an HTTP answer to a TLS client) in a call to the Service (its cluster IP, its name, or the caller's
word for it: ``addresses``), and the Service's port is itself a container port of its pods while its
``targetPort`` is another one: the objects show where the traffic goes, the line that it is the wrong place.
"""

from __future__ import annotations

import re

from diagnosis_server.agents.heuristic.addresses import dependencies
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.service_routing import container_ports, matches, service_selector
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import LogLine

# What a client says when the server answers in another protocol than the one it speaks.
_PROTOCOL_ERROR = re.compile(
    r"http2: frame too large|error reading server preface[^\n\"\\]{0,40}"
    r"|malformed HTTP (?:response|status code)[^\n]{0,40}"
    r"|server gave HTTP response to HTTPS client|first record does not look like a TLS handshake"
    r"|(?:SSL routines|ssl)[^\n]{0,40}wrong version number|reset reason: protocol error"
)


def _selected(service: Obj, evidence: Evidence) -> list[Obj]:
    wanted = service_selector(service)
    return [p for p in evidence.objects("Pod", service.namespace) if matches(p, wanted)] if wanted else []


def _calling(line: LogLine, service: Obj, named: str) -> bool:
    ip = service.text("spec", "clusterIP")
    return named == service.name or (bool(ip) and ip in line.message) or service.name in line.message


def _misrouted(service: Obj, pod: Obj) -> tuple[int, int, tuple[int, int, int, str], tuple[int, int, int, str]] | None:
    """(port index, port, the target's container port, the port's own container port) of a Service port whose
    number is a container port while its targetPort is another."""
    declared = container_ports(pod)
    ports = service.get("spec", "ports")
    for s, port in enumerate(ports if isinstance(ports, list) else []):
        if not isinstance(port, dict):
            continue
        number, target = port.get("port"), port.get("targetPort")
        if not isinstance(number, int) or target in (None, number):
            continue
        aimed = next((d for d in declared if d[2] == target or (d[3] and d[3] == target)), None)
        own = next((d for d in declared if d[2] == number), None)
        if aimed is not None and own is not None and aimed != own:
            return s, number, aimed, own
    return None


def analyze(evidence: Evidence) -> list[Finding]:
    lines = [
        (line, match.group(0))
        for line in evidence.log_lines()
        if (match := _PROTOCOL_ERROR.search(line.message)) is not None
    ]
    if not lines:
        return []
    known = dependencies(evidence)
    out: list[Finding] = []
    for service in evidence.objects("Service"):
        pods = _selected(service, evidence)
        misrouted = _misrouted(service, pods[0]) if pods else None
        if misrouted is None:
            continue
        s, number, aimed, own = misrouted
        for line, said in lines:
            named = known.named(line.message, line.service)
            if line.service == service.name or not _calling(line, service, named[1] if named else ""):
                continue
            pod = pods[0]
            named_as = f", which the container of pod {pod.name} names {aimed[3]}," if aimed[3] else ""
            own_as = f" as {own[3]}" if own[3] else ""
            facts = (
                f"Service {service.name} sends port {number} to targetPort {aimed[2]}{named_as} while the container "
                f"of pod {pod.name} serves port {number}{own_as}"
            )
            said_text, said_bound = said_binding(line.bind_message(), said)
            bindings = [
                service.bind_name(),
                service.bind("spec", "ports", s, "port"),
                service.bind("spec", "ports", s, "targetPort"),
                pod.bind_name(),
                pod.bind("spec", "containers", aimed[0], "ports", aimed[1], "containerPort"),
                pod.bind("spec", "containers", own[0], "ports", own[1], "containerPort"),
                *(named[2] if named else ()),
                line.bind_service(),
                *([said_bound] if said_bound else []),
            ]
            if aimed[3]:
                bindings.append(pod.bind("spec", "containers", aimed[0], "ports", aimed[1], "name"))
            if own[3]:
                bindings.append(pod.bind("spec", "containers", own[0], "ports", own[1], "name"))
            phrase = "answers its callers in another protocol: its Service sends them to another port"
            out.append(joined("port_protocol", service.name, phrase, facts, bindings, said=said_text))
            break
    return out
