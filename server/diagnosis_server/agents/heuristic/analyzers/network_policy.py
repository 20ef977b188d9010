"""Network policies: a NetworkPolicy that selects a workload's pods admits no ingress from a workload configured to
call it, while calls to it time out (the dropped packets' only symptom).

A policy selects the pods its ``podSelector`` matches (``matchLabels`` and ``matchExpressions``; an empty selector:
every pod of its namespace) and, with ``Ingress`` among its ``policyTypes`` (or ingress rules and no types), admits
only what a rule's ``from`` peers match. A caller is admitted by a rule with no ``from`` (every source); by a peer
whose ``podSelector`` matches its pods' labels in the policy's namespace, or whose ``namespaceSelector`` matches its
namespace (read by the ``kubernetes.io/metadata.name`` label the API server sets on every namespace; a selector on
other namespace labels is not read, and says nothing here) and whose ``podSelector``, if any, matches its pods; by an
``ipBlock`` holding its pods' IPs. The caller is a workload whose env addresses the target
(``PAYMENT_SERVICE_ADDR=paymentservice:50051``, ``addresses``); the time-outs are log lines that dial the target's
Service IP or name and time out.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence

from diagnosis_server.agents.heuristic.addresses import Configured, dependencies
from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj, workload_of
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import Binding, LogLine

# A call that waited and got nothing back: what a dropped packet looks like to its sender.
_TIMED_OUT = re.compile(
    r"(?:dial tcp |connect(?:ion)? to )(?P<host>[\w.-]+)(?::\d+)?: (?:i/o timeout|connect(?:ion)? timed out)"
    r"|(?P<named>[\w.-]+)(?::\d+)?[^\n]{0,80}?(?:context deadline exceeded|DeadlineExceeded)",
)
MAX_SHOWN = 3


# The label the API server sets on every namespace (Kubernetes 1.22 on): its name.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def _labels(selector: object) -> dict[str, str] | None:
    """A label selector's ``matchLabels``; None when it is not a selector."""
    if not isinstance(selector, dict):
        return None
    labels = selector.get("matchLabels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def selects(selector: object, labels: Mapping[str, str]) -> bool | None:
    """Whether a label selector (``matchLabels`` and ``matchExpressions``: In, NotIn, Exists, DoesNotExist) selects
    ``labels``, as the API server reads it; None when it cannot be read (not a selector, another operator)."""
    wanted = _labels(selector)
    if wanted is None:
        return None
    held = all(labels.get(k) == v for k, v in wanted.items())
    expressions = selector.get("matchExpressions") if isinstance(selector, dict) else None
    for expression in expressions if isinstance(expressions, list) else []:
        if not isinstance(expression, dict) or not isinstance(expression.get("key"), str):
            return None
        key, operator = expression["key"], expression.get("operator")
        values = expression.get("values")
        values = [str(v) for v in values] if isinstance(values, list) else []
        if operator == "In":
            held = held and labels.get(key) in values
        elif operator == "NotIn":
            held = held and labels.get(key) not in values
        elif operator == "Exists":
            held = held and key in labels
        elif operator == "DoesNotExist":
            held = held and key not in labels
        else:
            return None
    return held


def _selects_namespace(selector: object, namespace: str) -> bool | None:
    """Whether a ``namespaceSelector`` selects ``namespace``, by its name label alone; None when it names other
    labels (which this read does not hold)."""
    keys = set(_labels(selector) or {})
    expressions = selector.get("matchExpressions") if isinstance(selector, dict) else None
    if isinstance(expressions, list):
        keys |= {str(e.get("key")) for e in expressions if isinstance(e, dict)}
    if keys - {NAMESPACE_NAME_LABEL}:
        return None
    return selects(selector, {NAMESPACE_NAME_LABEL: namespace})


def _in_block(block: object, pods: Sequence[Obj]) -> bool | None:
    """Whether an ``ipBlock`` holds an IP of the pods (its ``cidr``, outside its ``except``); None when the pods'
    IPs or the block cannot be read."""
    if not isinstance(block, dict):
        return None
    try:
        network = ipaddress.ip_network(str(block.get("cidr")), strict=False)
        excepted = [ipaddress.ip_network(str(e), strict=False) for e in block.get("except") or []]
        ips = [ipaddress.ip_address(ip) for p in pods if (ip := p.text("status", "podIP"))]
    except (TypeError, ValueError):
        return None
    if not ips:
        return None
    return any(ip in network and not any(ip in e for e in excepted) for ip in ips)


def _peer_admits(peer: object, namespace: str, caller: Sequence[Obj]) -> bool | None:
    """Whether one ``from`` peer admits the caller's pods; None when it cannot be read here."""
    if not isinstance(peer, dict):
        return None
    if "ipBlock" in peer:
        return _in_block(peer["ipBlock"], caller)
    pods = peer.get("podSelector")
    if "namespaceSelector" in peer:
        found = [_selects_namespace(peer["namespaceSelector"], p.namespace) for p in caller]
        pods_found = [True] * len(caller) if pods is None else [selects(pods, p.labels) for p in caller]
    else:
        found = [p.namespace == namespace for p in caller]
        pods_found = [selects(pods, p.labels) for p in caller]
    if any(f is None for f in (*found, *pods_found)):
        return None
    return any(bool(f) and bool(q) for f, q in zip(found, pods_found, strict=True))


def _restricts_ingress(policy: Obj) -> bool:
    types = policy.get("spec", "policyTypes")
    if isinstance(types, list) and types:
        return "Ingress" in types
    return True  # no types: Ingress always, Egress only with egress rules


def _admitted(policy: Obj, caller: Sequence[Obj]) -> bool | None:
    """Whether a rule of the policy admits the caller's pods; None when a rule cannot be read here."""
    rules = policy.get("spec", "ingress")
    unread = False
    for rule in rules if isinstance(rules, list) else []:
        if not isinstance(rule, dict):
            return None
        peers = rule.get("from")
        if not peers:
            return True
        for peer in peers if isinstance(peers, list) else []:
            admits = _peer_admits(peer, policy.namespace, caller)
            if admits:
                return True
            unread = unread or admits is None
    return None if unread else False


_OPERATORS = {"In": "in", "NotIn": "not in", "Exists": "exists", "DoesNotExist": "does not exist"}


def _selector_texts(policy: Obj, *path: str | int) -> list[tuple[str, list[Binding]]]:
    """The requirements of the selector at ``path`` as the policy writes them ("app=web", "tier in api/web"), each
    with its bindings."""
    out: list[tuple[str, list[Binding]]] = []
    selector = policy.get(*path)
    for key, value in (_labels(selector) or {}).items():
        out.append((f"{key}={value}", [policy.bind(*path, "matchLabels", key)]))
    expressions = selector.get("matchExpressions") if isinstance(selector, dict) else None
    for i, expression in enumerate(expressions if isinstance(expressions, list) else []):
        if not isinstance(expression, dict) or expression.get("operator") not in _OPERATORS:
            continue
        where = (*path, "matchExpressions", i)
        raw = expression.get("values")
        values = raw if isinstance(raw, list) else []
        # (values joined by "/", never in parentheses: a cause claim ends its observation at " (")
        listed = f" {'/'.join(str(v) for v in values)}" if values else ""
        text = f"{expression.get('key')} {_OPERATORS[str(expression['operator'])]}{listed}"
        bindings = [policy.bind(*where, "key"), policy.bind(*where, "operator")]
        out.append((text, bindings + [policy.bind(*where, "values", j) for j in range(len(values))]))
    return out


def _admitted_peers(policy: Obj) -> list[tuple[str, list[Binding]]]:
    """What each rule's peers admit, as the policy writes it (pods by labels, namespaces, IP blocks)."""
    out: list[tuple[str, list[Binding]]] = []
    rules = policy.get("spec", "ingress")
    for r, rule in enumerate(rules if isinstance(rules, list) else []):
        peers = rule.get("from") if isinstance(rule, dict) else None
        for p, peer in enumerate(peers if isinstance(peers, list) else []):
            if not isinstance(peer, dict):
                continue
            at = ("spec", "ingress", r, "from", p)
            block = peer.get("ipBlock")
            if isinstance(block, dict):
                out.append((f"ipBlock {block.get('cidr')}", [policy.bind(*at, "ipBlock", "cidr")]))
            pods = _selector_texts(policy, *at, "podSelector") if "podSelector" in peer else []
            spaces = _selector_texts(policy, *at, "namespaceSelector") if "namespaceSelector" in peer else []
            said = " and ".join(text for text, _ in pods) or ("every pod" if "namespaceSelector" in peer else "")
            if "namespaceSelector" in peer:
                said += " in namespaces " + (" and ".join(text for text, _ in spaces) or "of every name")
            if said:
                out.append((said, [b for _, bound in (*pods, *spaces) for b in bound]))
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


def _finding(policy: Obj, target: str, address: Configured, line: LogLine, said: str) -> Finding:
    admitted = _admitted_peers(policy)
    chosen = _selector_texts(policy, "spec", "podSelector")
    only = ", ".join(text for text, _ in admitted) or "no pod"
    selector = ", ".join(text for text, _ in chosen) or "every pod"
    said_text, said_bound = said_binding(line.bind_message(), said)
    facts = (
        f"network policy {policy.name} selects its pods by {selector} and admits ingress only from {only}; "
        f"{address.workload}, configured with {address.variable}={address.value}, is not admitted"
    )
    bindings = [
        policy.bind_name(),
        *(b for _, bound in chosen for b in bound),
        *(b for _, bound in admitted for b in bound),
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
        chooser = policy.get("spec", "podSelector")
        pods = [p for p in evidence.objects("Pod", policy.namespace) if selects(chooser, p.labels)]
        for target in dict.fromkeys(workload_of(p)[0] for p in pods):
            service = evidence.named("Service", target, policy.namespace)
            names = {target, *([service.text("spec", "clusterIP")] if service is not None else [])}
            timed_out = _timed_out(lines, {n for n in names if n})
            if timed_out is None:
                continue
            for caller in known.callers(target):
                caller_pods = [p for p in evidence.objects("Pod") if workload_of(p)[0] == caller]
                if not caller_pods or _admitted(policy, caller_pods) is not False:
                    continue
                address = next(a for a in known.configured[caller] if a.host == target)
                out.append(_finding(policy, target, address, *timed_out))
                break
    return out
