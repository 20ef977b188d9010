"""A missing Service: a workload whose pods run, whose callers cannot resolve its name, and whose namespace's
Services, listed whole, hold none of that name (deleted, or never re-created: a quota of services at its limit
says why it could not be).

Stated from the objects that show it: the workload's pods, the namespace's Services read as a whole List (an absent
name is then absent), the caller's line that fails to resolve the name, and the caller's setting that holds it
(``CART_SERVICE_ADDR=cartservice:7070``) when it has one; a ResourceQuota whose ``services`` are all used is added.
"""

from __future__ import annotations

import re

from diagnosis_server.agents.heuristic.addresses import dependencies
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj, workload_of
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import Binding

# A resolver's answer that a name does not exist (Go's, glibc's, Node's, Java's).
_UNRESOLVED = re.compile(
    r"lookup (?P<go>[\w.-]+)(?: on [\d.:]+)?: no such host|getaddrinfo ENOTFOUND (?P<node>[\w.-]+)"
    r"|UnknownHostException: (?P<java>[\w.-]+)|Could not resolve host: (?P<curl>[\w.-]+)"
)


def _full_quota(evidence: Evidence, namespace: str) -> tuple[Obj, str] | None:
    """A quota of the namespace whose ``services`` are all used, and that count."""
    for quota in evidence.objects("ResourceQuota", namespace):
        hard, used = quota.text("status", "hard", "services"), quota.text("status", "used", "services")
        if hard and hard == used:
            return quota, hard
    return None


def analyze(evidence: Evidence) -> list[Finding]:
    lines = [(line, match) for line in evidence.log_lines() if (match := _UNRESOLVED.search(line.message)) is not None]
    if not lines:
        return []
    known = dependencies(evidence)
    out: list[Finding] = []
    seen: set[str] = set()
    for line, match in lines:
        host = next(h for h in match.groups() if h).lower()
        name = host.split(".")[0]
        pods = [p for p in evidence.objects("Pod") if workload_of(p)[0] == name]
        if name in seen or not pods or line.service == name:
            continue
        namespace = pods[0].namespace
        if not namespace:
            continue
        labels = host.split(".")
        if len(labels) > 1 and labels[1] != "svc" and labels[1] != namespace:
            continue  # a Service name of another namespace than its workload's: the caller's setting is wrong
        if not evidence.listed("Service", namespace) or evidence.named("Service", name, namespace) is not None:
            continue
        seen.add(name)
        said, said_bound = said_binding(line.bind_message(), match.group(0))
        caller = line.service
        bindings: list[Binding] = [
            workload_of(pods[0])[1],
            pods[0].bind_name(),
            pods[0].bind("metadata", "namespace"),
            line.bind_service(),
        ]
        address = next((a for a in known.configured.get(caller, ()) if a.host == name), None)
        configured = f", configured with {address.variable}={address.value}," if address is not None else ""
        facts = (
            f"Service {name} does not exist in namespace {namespace}, though pod {pods[0].name} runs; "
            f"{caller}{configured} cannot resolve it"
        )
        if address is not None:
            bindings += address.bindings()
        quota = _full_quota(evidence, namespace)
        if quota is not None:
            facts += f"; quota {quota[0].name} has {quota[1]} of {quota[1]} services used"
            bindings += [
                quota[0].bind_name(),
                quota[0].bind("status", "used", "services"),
                quota[0].bind("status", "hard", "services"),
            ]
        if said_bound is not None:
            bindings.append(said_bound)
        phrase = "cannot be reached: its Service does not exist"
        out.append(joined("service_missing", name, phrase, facts, bindings, said=said))
    return out
