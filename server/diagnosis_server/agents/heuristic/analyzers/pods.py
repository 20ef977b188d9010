"""Pod analyzers: what ``kubernetes.pods`` (a PodList) says of each container and pod, by the rules file's
``container`` rules.

- a container waiting (``CrashLoopBackOff``, ``ErrImagePull``, ``CreateContainerConfigError``), terminated or
  last terminated (``OOMKilled`` with exit code 137, ``Error`` with its exit code): the matching rule's finding;
- a pod evicted (``status.reason``), or unschedulable (condition ``PodScheduled`` False, ``Unschedulable``);
- a pod that is not Ready, or whose containers restarted: a symptom by itself (no metric is required);
- a last termination that finished before the window, of a container that did not restart in it (``window``):
  context, never the cause, stated with the time it finished;
- a workload whose every pod is settled (running and ready, restarts under the bar): healthy evidence; what an
  earlier event said of a settled pod is over (``settled_pods``).

Each finding is about the pod's workload (its ``app.kubernetes.io/name``/``app`` label, a Helm chart's pod its
release's ``app.kubernetes.io/instance``, else its name without the controller's hashes) and binds the pod's name,
the container's name and the values it quotes. An init container's state is read like an app container's (a pod
stuck in init: "Init:CrashLoopBackOff"), its binding's path under ``initContainerStatuses``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from diagnosis_server.agents.heuristic.analyzers.rules import ContainerRule, Rules, current_rules
from diagnosis_server.agents.heuristic.findings import Finding, Role, ending, excerpt, one_line, quote
from diagnosis_server.agents.heuristic.observations import Binding, BindingError, ItemView, Observation, parse_ts, walk
from diagnosis_server.agents.heuristic.shapes import is_container_name, is_object_name, is_pod_phase, is_timestamp
from diagnosis_server.agents.heuristic.window import stale_termination
from diagnosis_server.agents.heuristic.workloads import pod_workload_label, workload_of_pod
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.text.language import reads_as_instruction

MAX_MESSAGE = 160


@dataclass(frozen=True, slots=True)
class PodView(ItemView):
    data: JsonObject
    name: str
    service: str
    # The label that names the workload, when one does.
    label: str

    def get(self, *path: str | int) -> JsonValue:
        # From the item itself (``data`` is ``items[index]``), not from the listing's root.
        return walk(self.data, path)

    def bind_name(self) -> Binding:
        return self.bind("metadata", "name")

    def bind_service(self) -> Binding:
        if self.label:
            return self.bind("metadata", "labels", self.label)
        return self.bind("metadata", "name", text=self.service)


def pod_views(observations: Iterable[Observation]) -> list[PodView]:
    """The pods of every ``kubernetes.pods`` listing, each listing's views made once (``Observation.derived``)."""
    out: list[PodView] = []
    for obs in observations:
        if obs.tool_name == "kubernetes.pods":
            out += obs.once("pod_views", _listing_views)
    return out


def _listing_views(obs: Observation) -> list[PodView]:
    out: list[PodView] = []
    items = obs.get("items")
    for index, item in enumerate(items if isinstance(items, list) else []):
        metadata = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(metadata, dict) or not is_object_name(metadata.get("name")):
            continue  # no name, or not a pod's name by Kubernetes' rules: never a name in a sentence
        name = str(metadata["name"])
        labels = metadata.get("labels")
        named = pod_workload_label(name, labels if isinstance(labels, dict) else None)
        service = named[1] if named else workload_of_pod(name)
        out.append(PodView(obs, index, item, name, service, named[0] if named else ""))
    return out


def _container_finding(
    pod: PodView,
    key: str,
    c: int,
    container: str,
    state: str,
    path: tuple[str, ...],
    rule: ContainerRule,
    observations: Sequence[Observation] = (),
) -> Finding:
    base = ("status", key, c)
    bindings = [pod.bind_service(), pod.bind_name(), pod.bind(*base, "name"), pod.bind(*base, *path, "reason")]
    reason = pod.text(*base, *path, "reason")
    # An init container (its binding's path says so: "init" is a word no matched text holds, so the statement does
    # not use it) is read like an app container: a pod stuck on one is stuck in init ("Init:CrashLoopBackOff").
    detail = f"pod {pod.name} container {container} {state} {reason}"
    code = pod.get(*base, *path, "exitCode")
    if isinstance(code, int) and not isinstance(code, bool):
        bindings.append(pod.bind(*base, *path, "exitCode"))
        detail += f", exit code {code}"
    when = pod.text(*base, *path, "finishedAt") or pod.text(*base, *path, "startedAt")
    # A terminated container's message is the runtime's wrapped error, its root cause last.
    wrapped = path[-1] == "terminated"
    finding = _stated(pod, rule, (*base, *path), reason, detail, bindings, onset=parse_ts(when), wrapped=wrapped)
    finding = replace(finding, container=container)
    return _aged(pod, finding, base, path, container, observations) if observations else finding


def _aged(
    pod: PodView,
    finding: Finding,
    base: tuple[str | int, ...],
    path: tuple[str, ...],
    container: str,
    observations: Sequence[Observation],
) -> Finding:
    """A last termination that finished before the window, of a container that did not restart in it
    (``window.stale_termination``): context at most, stated with the time it finished (R-V-4)."""
    finished = pod.text(*base, *path, "finishedAt")
    if path[0] != "lastState" or finding.role not in (Role.CAUSE, Role.SYMPTOM) or not finished:
        return finding
    since = parse_ts(pod.text(*base, "state", "running", "startedAt"))
    if not stale_termination(observations, pod.name, container, parse_ts(finished), since):
        return finding
    head, _, rest = finding.statement.partition(" (")
    # (a time that is not one is bound, never written)
    statement = f"{head} ({rest[:-1]}, finished at {finished})" if is_timestamp(finished) else finding.statement
    bindings = (*finding.bindings, pod.bind(*base, *path, "finishedAt"))
    return replace(finding, role=Role.SUPPORT, strength=1, statement=statement, bindings=bindings)


def _stated(
    pod: PodView,
    rule: ContainerRule,
    at: tuple[str | int, ...],
    reason: str,
    detail: str,
    bindings: list[Binding],
    onset: datetime | None = None,
    *,
    wrapped: bool = False,
) -> Finding:
    """The rule's finding about the pod, with the message at ``at`` (when there is one) quoted and bound."""
    whole = pod.text(*at, "message")
    if reads_as_instruction(whole):
        whole = ""  # a message that addresses the diagnosis observes nothing: neither quoted nor bound (R-GK-5)
    message = excerpt(whole, MAX_MESSAGE)
    said = _detail(reason, message)
    if message:
        bindings = [*bindings, pod.bind(*at, "message", text=message)]
        detail += f", {quote(one_line(message))}"
        if wrapped and len(whole.strip()) > len(message) and said == excerpt(message):
            # Past the quoted start, the end of a wrapped error is its root cause: the cause claim quotes that.
            said = ending(whole)
            bindings.append(pod.bind(*at, "message", text=said))
    phrase = rule.phrase
    if rule.kind == "evicted" and (low := _LOW_ON.search(whole)) is not None:
        node = pod.text("spec", "nodeName")
        if is_object_name(node):
            # The node the kubelet evicted it from, and what it ran low on (the kubelet's own words).
            phrase += f": node {node} ran low on {low.group(1)}"
            bindings = [*bindings, pod.bind("spec", "nodeName"), pod.bind(*at, "message", text=low.group(0))]
    return Finding(
        rule.kind,
        rule.role_value,
        pod.service,
        f"{pod.service} {phrase} ({detail})",
        tuple(bindings),
        strength=rule.strength,
        onset=onset,
        pod=pod.name,
        detail=said,
    )


# The kubelet's eviction message names the resource its node ran low on.
_LOW_ON = re.compile(r"The node was low on resource: (memory|ephemeral-storage|pids|nodefs|imagefs|cpu)\b")


def _detail(reason: str, message: str) -> str:
    """What the cause claim quotes: the message, unless it is the kubelet's back-off boilerplate (the reason
    says more), else the reason."""
    if message and not message.lower().startswith("back-off"):
        return excerpt(message)
    return reason


_STATES = {
    "waiting": (("state", "waiting"), "is waiting with"),
    "terminated": (("state", "terminated"), "terminated with"),
    "last_terminated": (("lastState", "terminated"), "last terminated with"),
}


def _rule(rules: Rules, state: str, reason: str) -> ContainerRule | None:
    return next((r for r in rules.container if r.state == state and reason in r.reasons), None)


def settled(pod: PodView, rules: Rules) -> bool:
    """The pod runs (or completed), every container is ready, none waits, and restarts stay under the bar: what
    happened to it before (an old restart, a FailedScheduling it got past) is over."""
    phase = pod.text("status", "phase")
    if phase == "Succeeded":
        return True
    if phase != "Running":
        return False
    statuses = pod.get("status", "containerStatuses")
    for status in statuses if isinstance(statuses, list) else []:
        if not isinstance(status, dict):
            continue
        state = status.get("state")
        restarts = status.get("restartCount")
        if status.get("ready") is False or (isinstance(state, dict) and "waiting" in state):
            return False
        if isinstance(restarts, int) and restarts >= rules.thresholds.restarts_min:
            return False
    return True


def settled_pods(observations: Iterable[Observation], rules: Rules | None = None) -> frozenset[str]:
    rules = rules or current_rules()
    return frozenset(pod.name for pod in pod_views(observations) if settled(pod, rules))


def _containers(pod: PodView, rules: Rules, observations: Sequence[Observation] = ()) -> Iterable[Finding]:
    if settled(pod, rules):
        return
    # A pod being deleted (a rollout, a scale-down) has its containers stopped: their exit is the deletion's.
    deleting = bool(pod.text("metadata", "deletionTimestamp"))
    for key in ("initContainerStatuses", "containerStatuses"):
        statuses = pod.get("status", key)
        for c, status in enumerate(statuses if isinstance(statuses, list) else []):
            if not isinstance(status, dict):
                continue
            container = str(status.get("name") or "")
            for state, (path, words) in _STATES.items():
                if deleting and state == "terminated":
                    continue
                reason = pod.text("status", key, c, *path, "reason")
                rule = _rule(rules, state, reason) if reason else None
                if rule is not None and is_container_name(container):
                    yield _container_finding(pod, key, c, container, words, path, rule, observations)


def _reported(pod: PodView, rule: ContainerRule, base: tuple[str | int, ...]) -> Finding:
    """A pod-level reason (``status`` or one of its ``conditions``, at ``base``) the rule matches, with its
    message."""
    reason = pod.text(*base, "reason")
    bindings = [pod.bind_service(), pod.bind_name(), pod.bind(*base, "reason")]
    return _stated(pod, rule, base, reason, f"pod {pod.name} reports {reason}", bindings)


def _pod_level(pod: PodView, rules: Rules) -> Iterable[Finding]:
    reason = pod.text("status", "reason")
    rule = _rule(rules, "pod", reason) if reason else None
    if rule is not None:
        yield _reported(pod, rule, ("status",))
    conditions = pod.get("status", "conditions")
    for i, condition in enumerate(conditions if isinstance(conditions, list) else []):
        if not isinstance(condition, dict) or condition.get("status") != "False":
            continue
        kind = str(condition.get("type") or "")
        why = str(condition.get("reason") or "")
        state = "unschedulable" if kind == "PodScheduled" else "not_ready" if kind == "Ready" else ""
        rule = _rule(rules, state, why) if state and why else None
        if rule is not None:
            yield _reported(pod, rule, ("status", "conditions", i))


def _restarts(pod: PodView) -> tuple[int, int] | None:
    """(container index, restart count) of the pod's most restarted container."""
    statuses = pod.get("status", "containerStatuses")
    best: tuple[int, int] | None = None
    for c, status in enumerate(statuses if isinstance(statuses, list) else []):
        count = status.get("restartCount") if isinstance(status, dict) else None
        if isinstance(count, int) and not isinstance(count, bool) and count > 0 and (best is None or count > best[1]):
            best = (c, count)
    return best


def _unready(pod: PodView) -> Finding | None:
    """A pod that is not running and ready, or that restarts: a symptom of its workload."""
    phase = pod.text("status", "phase")
    restarts = _restarts(pod)
    conditions = pod.get("status", "conditions")
    listed = conditions if isinstance(conditions, list) else []
    at = next((i for i, c in enumerate(listed) if isinstance(c, dict) and c.get("type") == "Ready"), None)
    condition = listed[at] if at is not None else None
    ready = condition.get("status") if isinstance(condition, dict) else None
    if phase in ("Running", "Succeeded") and ready != "False" and restarts is None:
        return None
    bindings = [pod.bind_service(), pod.bind_name()]
    if ready == "False" and at is not None:
        # "not ready" is what its Ready condition says: bound, so that the stance is the evidence's.
        bindings += [pod.bind("status", "conditions", at, "type"), pod.bind("status", "conditions", at, "status")]
    parts: list[str] = []
    if is_pod_phase(phase):
        bindings.append(pod.bind("status", "phase"))
        parts.append(f"phase {phase}")
    if restarts is not None:
        c, count = restarts
        bindings.append(pod.bind("status", "containerStatuses", c, "restartCount"))
        parts.append(f"{count} restarts")
    if not parts:
        return None
    state = "is not ready" if ready == "False" or phase not in ("Running", "Succeeded") else "restarts"
    statement = f"{pod.service} pod {pod.name} {state} ({', '.join(parts)})"
    return Finding("not_ready", Role.SYMPTOM, pod.service, statement, tuple(bindings))


def pod_findings(observations: Iterable[Observation], rules: Rules | None = None) -> list[Finding]:
    """Findings of every pod: one per (kind, workload), from the first pod that shows it."""
    rules = rules or current_rules()
    observations = list(observations)
    out: list[Finding] = []
    counts: dict[tuple[str, str, str], int] = {}
    for pod in pod_views(observations):
        found: list[Finding] = []
        try:
            found += list(_containers(pod, rules, observations))
            found += list(_pod_level(pod, rules))
            unready = None if settled(pod, rules) else _unready(pod)
            if unready is not None:
                found.append(unready)
        except BindingError:
            continue
        for finding in found:
            # One finding of a kind per workload is a claim; more pods of it only repeat it.
            if counts.get(finding.key, 0) < 1:
                out.append(finding)
            counts[finding.key] = counts.get(finding.key, 0) + 1
    return out


MAX_READY_BINDINGS = 3


def ready_findings(observations: Iterable[Observation], rules: Rules | None = None) -> list[Finding]:
    """A workload every listed pod of which is settled (running, every container ready, restarts under the
    bar): healthy evidence of it (R-A-2), one finding per workload, binding its pods' names and phases."""
    rules = rules or current_rules()
    by_service: dict[str, list[PodView]] = {}
    for pod in pod_views(observations):
        by_service.setdefault(pod.service, []).append(pod)
    out: list[Finding] = []
    for service, pods in by_service.items():
        if not all(settled(pod, rules) for pod in pods):
            continue
        # The pods named are bound: one of each phase first, so every phase stated is in a binding; the others
        # are said to exist, never counted (a count would be a number no binding holds, R-V-4).
        phases = sorted({pod.text("status", "phase") for pod in pods})
        firsts = {next(i for i, pod in enumerate(pods) if pod.text("status", "phase") == phase) for phase in phases}
        room = max(MAX_READY_BINDINGS - len(firsts), 0)
        others = [i for i in range(len(pods)) if i not in firsts][:room]
        named = [pods[i] for i in sorted(firsts | set(others))]
        try:
            bindings = [pods[0].bind_service()]
            ready = True
            for pod in named:
                shown = _ready_bindings(pod)
                ready = ready and (bool(shown) or pod.text("status", "phase") != "Running")
                bindings += [pod.bind_name(), pod.bind("status", "phase"), *shown]
        except BindingError:
            continue
        listed = ", ".join(pod.name for pod in named)
        more = " and more" if len(pods) > len(named) else ""
        # A running pod's containers are ready (said where each one named shows it); a completed one's have ended.
        running = "running with their containers ready" if ready else "running"
        states = [running if p == "Running" else p.lower() for p in phases]
        statement = f"{service} pods are {' or '.join(states)} (pods {listed}{more})"
        out.append(Finding("pods_ready", Role.HEALTHY, service, statement, tuple(bindings)))
    return out


def _ready_bindings(pod: PodView) -> list[Binding]:
    """Each container's ``ready`` of a settled running pod: "with their containers ready" is what they say."""
    if pod.text("status", "phase") != "Running":
        return []
    statuses = pod.get("status", "containerStatuses")
    return [
        pod.bind("status", "containerStatuses", c, "ready")
        for c, status in enumerate(statuses if isinstance(statuses, list) else [])
        if isinstance(status, dict) and status.get("ready") is True
    ]


def workloads_seen(observations: Iterable[Observation]) -> list[str]:
    """The workloads of every pod listed."""
    return list(dict.fromkeys(pod.service for pod in pod_views(observations)))
