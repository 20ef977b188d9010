"""Wrong address: a workload configured with another service's address, so its calls reach a server that does not
serve what it asks for.

Stated when a log line reports a gRPC ``Unimplemented`` for an unknown service (``unknown service
hipstershop.PaymentService``: what a gRPC server answers for a service it does not register), one workload's
address setting is named like that service (``PAYMENT_SERVICE_ADDR``), and the setting's host is a workload whose
name is not (``shippingservice:50051``): the setting shows where the calls go, the line that the server there is
another one. A workload named like the service (``paymentservice``) is stated too when one is listed.
"""

from __future__ import annotations

import re

from diagnosis_server.agents.heuristic.addresses import Configured, dependencies
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import BindingError

# What a gRPC server answers for a service it does not register: grpc-go's "unknown service <name>", grpc-java's
# "Method not found: <name>/<method>".
_UNKNOWN_SERVICE = re.compile(
    r"Unimplemented desc = unknown service (?P<service>[A-Za-z_][\w.]{0,120}[A-Za-z0-9_])"
    r"|UNIMPLEMENTED: Method not found: (?P<java>[A-Za-z_][\w.]{0,120}[A-Za-z0-9_])/"
)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# The words of a service's name that say it is one, not which.
_GENERIC = frozenset({"service", "svc", "server", "api", "grpc", "rpc"})


def _words(name: str) -> tuple[str, ...]:
    """The words of a gRPC service's own name, without its package or kind: ``hipstershop.PaymentService`` ->
    ("payment",)."""
    last = name.rsplit(".", 1)[-1]
    return tuple(w.lower() for w in _CAMEL.findall(last) if w.lower() not in _GENERIC)


def _names(workload: str, words: tuple[str, ...]) -> bool:
    """Whether a workload's name holds every word (``paymentservice``, ``payment-service`` for ("payment",))."""
    flat = re.sub(r"[-_.]", "", workload.lower())
    return bool(words) and all(w in flat for w in words)


def _aimed_elsewhere(address: Configured, words: tuple[str, ...]) -> bool:
    return address.stem == words and not _names(address.host, words)


def analyze(evidence: Evidence) -> list[Finding]:
    found = [
        (line, match)
        for line in evidence.log_lines()
        if "nimplemented" in line.message or "NIMPLEMENTED" in line.message
        if (match := _UNKNOWN_SERVICE.search(line.message)) is not None
    ]
    if not found:
        return []
    known = dependencies(evidence)
    out: list[Finding] = []
    done: set[str] = set()
    for line, match in found:
        service = match.group("service") or match.group("java")
        words = _words(service)
        aimed = [a for addresses in known.configured.values() for a in addresses if _aimed_elsewhere(a, words)]
        if len({a.workload for a in aimed}) != 1 or aimed[0].workload in done:
            continue
        address = aimed[0]
        right = next((w for w in known.workloads if _names(w, words) and w != address.host), "")
        facts = (
            f"its {address.variable} is {address.value}, an address of {address.host}, whose server answers "
            f"that it does not serve {service}"
        )
        if right:
            facts += f" (the {' '.join(words)} workload is {right})"
        said, said_bound = said_binding(line.bind_message(), match.group(0))
        try:
            bindings = [
                *address.bindings(),
                line.bind_service(),
                *([said_bound] if said_bound else []),
                *([known.workloads[right]] if right else []),
            ]
        except BindingError:
            continue
        done.add(address.workload)
        phrase = "is configured with another service's address"
        out.append(joined("wrong_address", address.workload, phrase, facts, bindings, said=said))
    return out
