"""Network policies: a NetworkPolicy that selects a workload's pods admits no ingress from a workload configured to
call it, while calls to it time out (the dropped packets' only symptom).

A policy selects the pods its ``podSelector`` matches (``matchLabels``; an empty selector: every pod of its
namespace) and, with ``Ingress`` among its ``policyTypes`` (or ingress rules and no types), admits only what a rule's
``from`` peers match. A caller is admitted by a rule with no ``from`` (every source), by a ``podSelector`` peer that
matches its pods' labels, and, since neither a namespace's labels nor pod IPs are read here, by any
``namespaceSelector`` or ``ipBlock`` peer (never a cause stated on a guess). ``matchExpressions`` are not read: a
policy that has them says nothing here. The caller is a workload whose env addresses the target
(``PAYMENT_SERVICE_ADDR=paymentservice:50051``, ``addresses``); the time-outs are log lines that dial the target's
Service IP or name and time out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from diagnosis_server.agents.heuristic.addresses import Configured, dependencies
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj, workload_of
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.service_routing import matches
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import Binding, LogLine

# A call that waited and got nothing back: what a dropped packet looks like to its sender.
_TIMED_OUT = re.compile(
    r"(?:dial tcp |connect(?:ion)? to )(?P<host>[\w.-]+)(?::\d+)?: (?:i/o timeout|connect(?:ion)? timed out)"
    r"|(?P<named>[\w.-]+)(?::\d+)?[^\n]{0,80}?(?:context deadline exceeded|DeadlineExceeded)",
)
MAX_SHOWN = 3


def _labels(selector: object) -> dict[str, str] | None:
    """A label selector's ``matchLabels``; None when it has ``matchExpressions`` (not read here)."""
    if not isinstance(selector, dict):
        return None
    if selector.get("matchExpressions"):
        return None
    labels = selector.get("matchLabels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def _restricts_ingress(policy: Obj) -> bool:
    types = policy.get("spec", "policyTypes")
    if isinstance(types, list) and types:
        return "Ingress" in types
    return True  # no types: Ingress always, Egress only with egress rules


def _admitted(policy: Obj, caller: Sequence[Obj]) -> bool | None:
    """Whether a rule of the policy admits the caller's pods; None when a rule cannot be read here."""
    rules = policy.get("spec", "ingress")
    for rule in rules if isinstance(rules, list) else []:
        if not isinstance(rule, dict):
            return None
        peers = rule.get("from")
        if not peers:
            return True
        for peer in peers if isinstance(peers, list) else []:
            if not isinstance(peer, dict) or "namespaceSelector" in peer or "ipBlock" in peer:
                return True
            labels = _labels(peer.get("podSelector"))
            if labels is None:
                return None
            if any(matches(pod, labels) for pod in caller):
                return True
    return False


def _admitted_labels(policy: Obj) -> list[tuple[str, Binding]]:
    """Each ``key=value`` a rule's pod selector admits, with its binding."""
    out: list[tuple[str, Binding]] = []
    rules = policy.get("spec", "ingress")
    for r, rule in enumerate(rules if isinstance(rules, list) else []):
        peers = rule.get("from") if isinstance(rule, dict) else None
        for p, peer in enumerate(peers if isinstance(peers, list) else []):
            labels = _labels(peer.get("podSelector")) if isinstance(peer, dict) else None
            for key, value in (labels or {}).items():
                path = ("spec", "ingress", r, "from", p, "podSelector", "matchLabels", key)
                out.append((f"{key}={value}", policy.bind(*path)))
    return out[:MAX_SHOWN]


def _timed_out(lines: Sequence[LogLine], names: set[str]) -> tuple[LogLine, str] | None:
    """The first line whose call to one of ``names`` (the target's Service name and IPs) timed out, and the part
    that says so."""
    for line in lines:
        for match in _TIMED_OUT.finditer(line.message):
            host = (match.group("host") or match.group("named") or "").lower()
            if host in names or host.split(".")[0] in names:
                return line, match.group(0)
    return None


def _finding(
    policy: Obj, target: str, selected: dict[str, str], address: Configured, line: LogLine, said: str
) -> Finding:
    admitted = _admitted_labels(policy)
    only = ", ".join(text for text, _ in admitted) or "no pod"
    selector = ",".join(f"{k}={v}" for k, v in selected.items()) or "every pod"
    said_text, said_bound = said_binding(line.bind_message(), said)
    facts = (
        f"network policy {policy.name} selects its pods by {selector} and admits ingress only from {only}; "
        f"{address.workload}, configured with {address.variable}={address.value}, is not admitted"
    )
    bindings = [
        policy.bind_name(),
        *(policy.bind("spec", "podSelector", "matchLabels", k) for k in selected),
        *(b for _, b in admitted),
        *address.bindings(),
        line.bind_service(),
        *([said_bound] if said_bound else []),
    ]
    phrase = "drops the calls of its callers: a network policy admits none of them"
    return joined("network_policy", target, phrase, facts, bindings, said=said_text)


def analyze(evidence: Evidence) -> list[Finding]:
    policies = [p for p in evidence.objects("NetworkPolicy") if _restricts_ingress(p)]
    if not policies:
        return []
    known = dependencies(evidence)
    lines = evidence.log_lines()
    out: list[Finding] = []
    for policy in policies:
        selected = _labels(policy.get("spec", "podSelector"))
        if selected is None:
            continue
        pods = [p for p in evidence.objects("Pod", policy.namespace) if matches(p, selected)]
        for target in dict.fromkeys(workload_of(p)[0] for p in pods):
            service = evidence.named("Service", target, policy.namespace)
            names = {target, *([service.text("spec", "clusterIP")] if service is not None else [])}
            timed_out = _timed_out(lines, {n for n in names if n})
            if timed_out is None:
                continue
            for caller in known.callers(target):
                caller_pods = [p for p in evidence.objects("Pod", policy.namespace) if workload_of(p)[0] == caller]
                if not caller_pods or _admitted(policy, caller_pods) is not False:
                    continue
                address = next(a for a in known.configured[caller] if a.host == target)
                out.append(_finding(policy, target, selected, address, *timed_out))
                break
    return out
