"""Start-up: a pod whose containers cannot start, joined to the image, secret or configmap that stops them.

The kubelet's texts: a waiting container's message (CreateContainerConfigError 'secret "cart-db" not found',
ErrImagePull, ImagePullBackOff 'Back-off pulling image "..."') and the pod's events (Failed 'Failed to pull image
"...": ... not found', FailedMount 'MountVolume.SetUp failed for volume "config" : configmap "cart-config" not
found', FailedToRetrieveImagePullSecret). The rules file's ``startup`` rules read them; the namespace's secrets
or configmaps listed whole without that name (or the secret's keys without the key), and the container's image,
are the objects that show it. Only a pod with a container not running ready now is read: a start-up failure a
pod got past is over.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj, event_time, workload_of
from diagnosis_server.agents.heuristic.analyzers.joined import JOINED, joined, said_binding
from diagnosis_server.agents.heuristic.analyzers.rules import ClusterRule, current_rules
from diagnosis_server.agents.heuristic.findings import Finding, around
from diagnosis_server.agents.heuristic.observations import Binding, walk
from diagnosis_server.agents.heuristic.shapes import is_container_name, is_data_key, is_image, is_object_name

_MIN = datetime.min.replace(tzinfo=UTC)
EVENT_REASONS = frozenset({"Failed", "FailedMount", "FailedToRetrieveImagePullSecret", "BackOff"})
KINDS = {"secret_missing": "Secret", "configmap_missing": "ConfigMap", "pull_secret_missing": "Secret"}
# Rules whose phrase says the whole fault: no object to join.
_FAULT_ONLY = frozenset({"command_missing", "port_in_use"})


def _texts(pod: Obj, evidence: Evidence) -> list[tuple[str, Binding, int]]:
    """(message, its binding, container index or -1) of the pod's waiting containers, then of its events."""
    out: list[tuple[str, Binding, int]] = []
    statuses = pod.get("status", "containerStatuses")
    for s, status in enumerate(statuses if isinstance(statuses, list) else []):
        # (a waiting container's message, then why it last ended: "exec: ...: executable file not found")
        for path in (("state", "waiting", "message"), ("state", "terminated", "message"),
                     ("lastState", "terminated", "message")):  # fmt: skip
            message = walk(status, path)
            if isinstance(message, str) and message:
                out.append((message, pod.bind("status", "containerStatuses", s, *path), s))
    events = [e for e in evidence.events_about("Pod", pod.name, pod.namespace) if e.text("reason") in EVENT_REASONS]
    events.sort(key=lambda e: event_time(e) or _MIN, reverse=True)
    out += [(e.text("message"), e.bind("message"), -1) for e in events if e.text("message")]
    return out


def _stuck(pod: Obj) -> bool:
    statuses = pod.get("status", "containerStatuses")
    if not isinstance(statuses, list) or not statuses:
        return pod.text("status", "phase") == "Pending"
    return any(not walk(s, ("ready",)) and walk(s, ("state", "running")) is None for s in statuses)


def _missing(rule: ClusterRule, match: re.Match[str], pod: Obj, evidence: Evidence) -> tuple[str, list[Binding]]:
    name = match.group("name").split(",")[0].strip()
    kind = KINDS[rule.kind]
    if not is_object_name(name):
        return "", []  # the kubelet's text names no object: its message is quoted, never its "name" written
    if not evidence.listed(kind, pod.namespace) or evidence.named(kind, name, pod.namespace) is not None:
        return "", []
    return f"{kind.lower()} {name} does not exist in namespace {pod.namespace}", [pod.bind("metadata", "namespace")]


def _key(match: re.Match[str], pod: Obj, evidence: Evidence) -> tuple[str, list[Binding]]:
    kind, name, key = match.group("what"), match.group("name"), match.group("key")
    obj = evidence.named(kind, name, pod.namespace)
    data = obj.get("data") if obj is not None else None
    if obj is None or not isinstance(data, dict) or key in data or not is_data_key(key):
        return "", []
    if not all(is_data_key(k) for k in data):
        # Keys that are not keys are never written: the data is bound, the keys it has are not listed.
        return f"{kind.lower()} {name} has no key {key}", [obj.bind_name(), obj.bind("data")]
    keys = ", ".join(sorted(data)) or "none"
    return f"{kind.lower()} {name} has keys {keys}, not {key}", [obj.bind_name(), obj.bind("data")]


def _image(pod: Obj, container: int, image: str) -> tuple[str, list[Binding]]:
    containers = pod.get("spec", "containers")
    for c, spec in enumerate(containers if isinstance(containers, list) else []):
        if isinstance(spec, dict) and (spec.get("image") == image or (container >= 0 and c == container)):
            name = pod.text("spec", "containers", c, "name")
            if not is_container_name(name) or not is_image(spec.get("image")):
                continue  # never a name or an image in a sentence
            bindings = [pod.bind("spec", "containers", c, "name"), pod.bind("spec", "containers", c, "image")]
            return (
                f"container {name} of pod {pod.name} uses image {pod.text('spec', 'containers', c, 'image')}",
                bindings,
            )
    return "", []


def _facts(
    rule: ClusterRule, match: re.Match[str], pod: Obj, container: int, evidence: Evidence
) -> tuple[str, list[Binding]]:
    if rule.kind in KINDS:
        return _missing(rule, match, pod, evidence)
    if rule.kind == "key_missing":
        return _key(match, pod, evidence)
    if rule.kind in ("image_missing", "registry_unresolved", "image_unauthorized"):
        return _image(pod, container, match.group("name"))
    return "", []


def _finding(pod: Obj, evidence: Evidence, rules: tuple[ClusterRule, ...]) -> Finding | None:
    service, service_binding = workload_of(pod)
    fallback: Finding | None = None
    for message, bound, container in _texts(pod, evidence):
        said, said_bound = said_binding(bound, message)
        base = [service_binding, pod.bind_name(), *([said_bound] if said_bound else [])]
        for rule in rules:
            match = rule.compiled.search(message)
            if match is None:
                continue
            if "fault" in rule.compiled.groupindex:
                # (the words of the fault, wherever the message says them: "... 401 Unauthorized")
                said, said_bound = said_binding(bound, around(message, match.start("fault"), match.end("fault")))
                base = [service_binding, pod.bind_name(), *([said_bound] if said_bound else [])]
            facts, bindings = _facts(rule, match, pod, container, evidence)
            if facts:
                return joined(rule.kind, service, rule.phrase, facts, [*base, *bindings], said=said, pod=pod.name)
            fallback = fallback or joined(
                rule.kind,
                service,
                rule.phrase,
                f"pod {pod.name} is not running",
                base,
                said=said,
                # (the rule's phrase is the whole fault when it reads no object; else a joined one is stronger)
                strength=JOINED if rule.kind in _FAULT_ONLY else 4,
                pod=pod.name,
            )
    return fallback


def analyze(evidence: Evidence) -> list[Finding]:
    rules = current_rules().of_family("startup")
    out: list[Finding] = []
    for pod in evidence.objects("Pod"):
        if not pod.text("spec", "nodeName") or not _stuck(pod):
            continue
        finding = _finding(pod, evidence, rules)
        if finding is not None:
            out.append(finding)
    return out
