"""Credentials: a database that refuses a client (its authentication, or commands its user has no role for), read
from the client's own log.

A line a ``credentials`` rule of the rules file reads ("(AuthenticationFailed) Authentication failed", "(Unauthorized)
not authorized on geo-db to execute command", 'password authentication failed for user "app"') says the client was
refused; the server is the Service of the client's namespace with one of the rule's ``ports`` whose name the same log
writes as a host (``mongodb-geo:27017``, ``mongodb-geo``), else that an env value of the client addresses
(``REDIS_ADDR=redis-cart:6379``). The cause is the database's, stated with the path that
links it: the client's line naming it and the line refused; a link from the client to it besides. A log that names
no such Service, or several, says nothing here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from diagnosis_server.agents.heuristic.addresses import Configured, dependencies
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.rules import ClusterRule, current_rules
from diagnosis_server.agents.heuristic.findings import Finding, Role, one_line, quote
from diagnosis_server.agents.heuristic.observations import LogLine, log_lines
from diagnosis_server.agents.heuristic.shapes import is_object_name

LOG_TOOLS = frozenset({"kubernetes.pod_logs", "loki.query_range"})


def _ports(service: Obj) -> list[tuple[int, int]]:
    """(index, port) of a Service's ports."""
    ports = service.get("spec", "ports")
    out: list[tuple[int, int]] = []
    for p, port in enumerate(ports if isinstance(ports, list) else []):
        number = port.get("port") if isinstance(port, dict) else None
        if isinstance(number, int) and not isinstance(number, bool):
            out.append((p, number))
    return out


def _names(line: LogLine, name: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line.message) is not None


def _server(
    lines: Sequence[LogLine], rule: ClusterRule, services: list[Obj]
) -> tuple[Obj, tuple[int, int], LogLine] | None:
    """The one Service with a port of the rule's that the client's lines name, that port (index, number) and the
    line naming it."""
    found: list[tuple[Obj, tuple[int, int], LogLine]] = []
    for service in services:
        ports = [(p, number) for p, number in _ports(service) if number in rule.ports]
        if not ports or not is_object_name(service.name):
            continue
        line = next((x for x in lines if _names(x, service.name)), None)
        if line is not None:
            found.append((service, ports[0], line))
    return found[0] if len(found) == 1 else None


def _configured_server(
    client: str, rule: ClusterRule, services: list[Obj], configured: Sequence[Configured]
) -> tuple[Obj, tuple[int, int], Configured] | None:
    """The one Service with a port of the rule's that an env value of the client addresses, that port and the
    address."""
    found: list[tuple[Obj, tuple[int, int], Configured]] = []
    for address in configured:
        service = next((s for s in services if s.name == address.host and is_object_name(s.name)), None)
        ports = [(p, n) for p, n in _ports(service) if n in rule.ports] if service is not None else []
        if service is not None and ports and (address.port is None or address.port == ports[0][1]):
            found.append((service, ports[0], address))
    return found[0] if len({f[0].name for f in found}) == 1 else None


def _refused(
    client: str,
    lines: Sequence[LogLine],
    evidence: Evidence,
    rules: tuple[ClusterRule, ...],
    configured: Sequence[Configured],
) -> list[Finding]:
    namespace = lines[0].obs.text("namespace")
    services = [s for s in evidence.objects("Service", namespace or None) if s.name != client]
    for line in lines:
        for rule in rules:
            match = rule.compiled.search(line.message)
            if match is None:
                continue
            said, said_bound = said_binding(line.bind_message(), match.group(0))
            server = _server(lines, rule, services)
            if server is not None:
                service, (p, port), naming = server
                shown = [naming.bind_service(), naming.bind_message(service.name)]
                whose = f"whose log names {service.name}"
            else:
                by_env = _configured_server(client, rule, services, configured)
                if by_env is None:
                    continue
                service, (p, port), address = by_env
                shown = [line.bind_service(), *address.bindings()]
                whose = f"configured with {address.variable}={address.value}"
            bindings = [
                service.bind_name(),
                service.bind("spec", "ports", p, "port"),
                *shown,
                *([said_bound] if said_bound else []),
            ]
            facts = f"{client}, {whose}, is refused by Service {service.name} (port {port})"
            cause = joined(rule.kind, service.name, rule.phrase, facts, bindings, said=said)
            link = Finding(
                kind="db_refused",
                role=Role.LINK,
                service=client,
                statement=f"{client} calls to {service.name} fail with {quote(one_line(said))}",
                bindings=(*shown, *bindings[-1:]),
                blamed=service.name,
            )
            return [cause, link]
    return []


def analyze(evidence: Evidence) -> list[Finding]:
    rules = current_rules().of_family("credentials")
    if not rules:
        return []
    out: list[Finding] = []
    known = dependencies(evidence)
    for obs in evidence.observations:
        if obs.tool_name not in LOG_TOOLS:
            continue
        by_service: dict[str, list[LogLine]] = {}
        for line in log_lines(obs):
            if line.service and is_object_name(line.service):
                by_service.setdefault(line.service, []).append(line)
        for client, lines in by_service.items():
            out += _refused(client, lines, evidence, rules, known.configured.get(client, ()))
    return out
