"""DNS policy: a workload whose pods do not ask the cluster's DNS, so the Services' names do not resolve for it.

Stated when a workload's log line fails to resolve a name (the ``dns`` log rules' texts) and its pod's spec sends
its lookups elsewhere: ``dnsPolicy: Default`` (the node's resolver), ``dnsPolicy: None`` with nameservers that are
not the cluster DNS Service's IP, or ``hostNetwork`` with ``ClusterFirst`` (which Kubernetes then treats as
``Default``). The pod's spec shows where its lookups go, the line that they fail there. The control plane's pods
(CoreDNS itself asks the node's resolver) are not read.
"""

from __future__ import annotations

from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj, workload_of
from diagnosis_server.agents.heuristic.analyzers.joined import joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.rules import current_rules
from diagnosis_server.agents.heuristic.findings import Finding
from diagnosis_server.agents.heuristic.observations import Binding, BindingError

# The cluster DNS Service's names (CoreDNS runs under kube-dns).
_DNS_SERVICES = ("kube-dns", "coredns")


def _cluster_dns(evidence: Evidence) -> Obj | None:
    for name in _DNS_SERVICES:
        service = evidence.named("Service", name, "kube-system")
        if service is not None and service.text("spec", "clusterIP"):
            return service
    return None


def _elsewhere(pod: Obj, dns_ip: str) -> tuple[str, list[Binding]] | None:
    """What in the pod's spec sends its lookups past the cluster DNS, and the bindings that show it."""
    policy = pod.text("spec", "dnsPolicy") or "ClusterFirst"
    if policy == "Default":
        return "dnsPolicy Default (the node's resolver)", [pod.bind("spec", "dnsPolicy")]
    if policy == "None":
        servers = pod.get("spec", "dnsConfig", "nameservers")
        named = [s for s in servers if isinstance(s, str)] if isinstance(servers, list) else []
        if not named or dns_ip in named:
            return None
        said = f"dnsPolicy None with nameserver {named[0]}"
        return said, [pod.bind("spec", "dnsPolicy"), pod.bind("spec", "dnsConfig", "nameservers", 0)]
    if policy == "ClusterFirst" and pod.get("spec", "hostNetwork") is True and pod.text("spec", "dnsPolicy"):
        said = "hostNetwork true with dnsPolicy ClusterFirst (the node's resolver)"
        return said, [pod.bind("spec", "hostNetwork"), pod.bind("spec", "dnsPolicy")]
    return None


def analyze(evidence: Evidence) -> list[Finding]:
    dns = _cluster_dns(evidence)
    dns_ip = dns.text("spec", "clusterIP") if dns is not None else ""
    # The workloads whose pods ask elsewhere, first: the log lines are read only for them.
    elsewhere: dict[str, tuple[Obj, str, list[Binding]]] = {}
    for pod in evidence.objects("Pod"):
        workload = workload_of(pod)[0]
        # (the control plane's own pods, CoreDNS first, resolve through the node on purpose)
        if pod.namespace == "kube-system" or workload in elsewhere:
            continue
        found = _elsewhere(pod, dns_ip)
        if found is not None:
            elsewhere[workload] = (pod, *found)
    if not elsewhere:
        return []
    rules = current_rules()
    out: list[Finding] = []
    for line in evidence.log_lines():
        if line.service not in elsewhere:
            continue
        match = rules.lookup_failure(line.message)
        if match is None:
            continue
        pod, setting, shown = elsewhere.pop(line.service)
        facts = f"pod {pod.name} has {setting}"
        if dns is not None:
            facts += f"; the cluster DNS Service {dns.name} is {dns_ip}"
        said, said_bound = said_binding(line.bind_message(), match.group(0))
        try:
            bindings = [
                workload_of(pod)[1],
                pod.bind_name(),
                *shown,
                *([dns.bind_name(), dns.bind("spec", "clusterIP")] if dns is not None else []),
                line.bind_service(),
                *([said_bound] if said_bound else []),
            ]
        except BindingError:
            continue
        phrase = "cannot resolve the cluster's names: its pods do not use the cluster DNS"
        out.append(joined("dns_policy", line.service, phrase, facts, bindings, said=said))
    return out
