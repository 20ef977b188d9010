"""The calls a result plainly asks for: the logs of the failing pods the pod listings show and the rollouts of
their Deployment; after a read of a namespace's Warning events, the events of the objects warned about and the
Normal events the rules name.

A pod fails when a container waits (CrashLoopBackOff, ErrImagePull, ...), terminated, or restarted, or the pod
is not Ready. For each failing pod of the question's workloads (of any workload when it names none), at most
``MAX_PODS``: its previous container's log when a container last terminated (what it wrote before it
crashed), else its current log; and the Deployment's rollouts when the pod's ReplicaSet names one. A running pod
of a workload the question names has its current log read too: a caller's log shows what its dependencies do. When
the question names none, the current logs of the pods a NodePort or LoadBalancer Service selects (the application's
entry: what the users' requests meet).

A namespace's Warning events (``live_plan.WARNINGS``) say what went wrong, not whether it is over: for the first
object of each warning an event rule reads (one per rule kind and workload, the question's workloads first), at most
``MAX_EVENT_OBJECTS``, all its events (``kubectl describe``: the Scheduled after a FailedScheduling, the Killing after
an Unhealthy); and, when a rule reads any warning, per namespace, the Normal events of each reason a rule names in
``normal_reasons`` (the kubelet's "Back-off pulling image", the volume binder's FailedBinding). A workload the
question names that no pod and no warning shows has the events of the objects named after it read (a finished Job,
a CronJob).

The nodes the failing pods run on (``spec.nodeName``, at most ``MAX_NODES``, the question's workloads' first) have
their own events read: the kubelet reports DiskPressure, MemoryPressure and its evictions' thresholds on the Node,
in the ``default`` namespace (client-go's recorder puts an event about an object without a namespace there), which
a namespace's reads never hold, and some of them as Normal events (NodeHasDiskPressure, NodeNotReady). Only when
the events tool may read that namespace (its schema's enum, when it has one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from diagnosis_server.agents.heuristic.analyzers.events import event_views, rule_for
from diagnosis_server.agents.heuristic.analyzers.pods import PodView, pod_views
from diagnosis_server.agents.heuristic.analyzers.rules import Rules, current_rules
from diagnosis_server.agents.heuristic.analyzers.signatures import reads_as_error
from diagnosis_server.agents.heuristic.live_plan import NAMESPACE_ERRORS, WARNINGS
from diagnosis_server.agents.heuristic.observations import Observation, log_lines
from diagnosis_server.agents.heuristic.workloads import names, workload_of_replicaset
from diagnosis_server.conversions import JsonObject, JsonValue

MAX_PODS = 3
# Running pods whose logs are read when nothing read shows a fault and the question names no workload.
MAX_QUIET_PODS = 24
TAIL_LINES = 100
MAX_EVENT_OBJECTS = 4
MAX_NODES = 2
EVENTS = "kubernetes.events"
# Where Kubernetes records the events of cluster-scoped objects (a Node).
NODE_EVENTS_NAMESPACE = "default"


def _completed(status: JsonObject) -> bool:
    state = status.get("state")
    terminated = state.get("terminated") if isinstance(state, dict) else None
    return isinstance(terminated, dict) and terminated.get("exitCode") == 0


def _failing_container(pod: PodView) -> tuple[str, bool] | None:
    """(container, previous) of the pod's failing container, if it has one: an init container first (the app
    containers of a pod stuck in init have not started)."""
    statuses: list[JsonValue] = []
    for key in ("initContainerStatuses", "containerStatuses"):
        listed = pod.get("status", key)
        for status in listed if isinstance(listed, list) else []:
            # An init container that completed (exit code 0) is done, whatever it went through.
            done = key == "initContainerStatuses" and isinstance(status, dict) and _completed(status)
            if not done:
                statuses.append(status)
    for status in statuses:
        if not isinstance(status, dict) or not isinstance(status.get("name"), str):
            continue
        state = status.get("state")
        last = status.get("lastState")
        terminated_before = isinstance(last, dict) and isinstance(last.get("terminated"), dict)
        waiting = isinstance(state, dict) and isinstance(state.get("waiting"), dict)
        restarts = status.get("restartCount")
        restarted = isinstance(restarts, int) and restarts > 0
        if terminated_before or waiting or restarted or status.get("ready") is False:
            return str(status["name"]), terminated_before
    return None


def _failing_now(pod: PodView) -> bool:
    """A container of the pod waits (CrashLoopBackOff, ErrImagePull, ...) or is not ready, or the pod is Pending."""
    if pod.get("status", "phase") == "Pending":
        return True
    for key in ("initContainerStatuses", "containerStatuses"):
        listed = pod.get("status", key)
        for status in listed if isinstance(listed, list) else []:
            if not isinstance(status, dict) or (key == "initContainerStatuses" and _completed(status)):
                continue
            state = status.get("state")
            if (isinstance(state, dict) and isinstance(state.get("waiting"), dict)) or status.get("ready") is False:
                return True
    return False


def _current_log(pod: PodView) -> tuple[str, JsonObject] | None:
    """The call that reads a running pod's current log (its first container's), or None."""
    first = _first_container(pod)
    if first is None:
        return None
    arguments: JsonObject = {
        "namespace": pod.text("metadata", "namespace"),
        "pod": pod.name,
        "container": first[0],
        "tail_lines": TAIL_LINES,
    }
    return ("kubernetes.pod_logs", arguments)


def _first_container(pod: PodView) -> tuple[str, bool] | None:
    """(container, False) of a running pod's first container: its current log."""
    statuses = pod.get("status", "containerStatuses")
    first = statuses[0] if isinstance(statuses, list) and statuses else None
    name = first.get("name") if isinstance(first, dict) else None
    state = first.get("state") if isinstance(first, dict) else None
    running = isinstance(state, dict) and "running" in state
    return (name, False) if isinstance(name, str) and running else None


# Service types that take traffic from outside the cluster: the workloads they select are the application's entry.
ENTRY_TYPES = frozenset({"NodePort", "LoadBalancer"})


def _entry_selectors(observations: Sequence[Observation]) -> list[dict[str, str]]:
    """The selectors of the Services listed that take traffic from outside the cluster."""
    out: list[dict[str, str]] = []
    for obs in observations:
        if obs.tool_name != "kubernetes.list" or obs.arguments.get("kind") != "services":
            continue
        items = obs.get("items")
        for item in items if isinstance(items, list) else []:
            spec = item.get("spec") if isinstance(item, dict) else None
            selector = spec.get("selector") if isinstance(spec, dict) else None
            if isinstance(spec, dict) and spec.get("type") in ENTRY_TYPES and isinstance(selector, dict) and selector:
                out.append({str(k): str(v) for k, v in selector.items()})
    return out


def _entry_pods(observations: Sequence[Observation]) -> list[PodView]:
    """The running pods an entry Service selects (``_entry_selectors``)."""
    selectors = _entry_selectors(observations)
    out: list[PodView] = []
    for pod in pod_views(observations):
        labels = pod.get("metadata", "labels")
        if isinstance(labels, dict) and any(all(labels.get(k) == v for k, v in sel.items()) for sel in selectors):
            out.append(pod)
    return out


def _about(targets: Sequence[str], *texts: str) -> bool:
    return any(names(t, text) for t in targets for text in texts if text)


def event_calls(
    observations: Sequence[Observation], targets: Sequence[str], rules: Rules | None = None
) -> list[tuple[str, JsonObject]]:
    """The events reads that complete the namespaces' Warning reads: the warned-about objects' events, then the
    Normal events of the rules' ``normal_reasons``."""
    rules = rules or current_rules()
    reads = [o for o in observations if o.tool_name == EVENTS and o.arguments.get("field_selector") == WARNINGS]
    views = event_views(reads)
    firsts: dict[tuple[str, str], tuple[bool, str, str, str]] = {}
    for view in views:
        rule = rule_for(view, rules)
        key = (rule.kind if rule else "", view.service)
        if rule is None or key in firsts or not view.object_kind:
            continue
        namespace = view.text("involvedObject", "namespace") or str(view.obs.arguments.get("namespace", ""))
        about = _about(targets, view.service, view.object_name)
        firsts[key] = (not about, namespace, view.object_kind, view.object_name)
    calls: list[tuple[str, JsonObject]] = []
    objects: set[tuple[str, str, str]] = set()
    for _, namespace, kind, name in sorted(firsts.values(), key=lambda first: first[0]):
        if len(objects) >= MAX_EVENT_OBJECTS or (namespace, kind, name) in objects or not namespace:
            continue
        objects.add((namespace, kind, name))
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        calls.append((EVENTS, {"namespace": namespace, "field_selector": selector}))
    namespaces = [n for n in dict.fromkeys(str(o.arguments.get("namespace", "")) for o in reads) if n]
    # A workload of the question no pod and no warning shows (a Job whose pods are gone, a CronJob, an HPA): the
    # events of the objects named after it, before saying there is no data about it.
    seen = [view.service for view in views] + [pod.service for pod in pod_views(observations)]
    for target in targets if namespaces else ():
        if not any(names(target, service) for service in seen if service):
            calls.append((EVENTS, {"namespace": namespaces[0], "field_selector": f"involvedObject.name={target}"}))
    # A namespace with no warning a rule reads has nothing for a Normal event to explain or end.
    for namespace in namespaces if firsts else ():
        for reason in rules.normal_event_reasons:
            calls.append((EVENTS, {"namespace": namespace, "field_selector": f"type=Normal,reason={reason}"}))
    return calls


def node_event_calls(observations: Sequence[Observation], targets: Sequence[str]) -> list[tuple[str, JsonObject]]:
    """All the events of the nodes the failing pods run on (the question's workloads' pods first), at most
    ``MAX_NODES``."""
    ranked: list[tuple[bool, str]] = []
    for pod in pod_views(observations):
        node = pod.text("spec", "nodeName")
        if node and _failing_container(pod) is not None:
            ranked.append((not _about(targets, pod.service, pod.name), node))
    nodes = list(dict.fromkeys(node for _, node in sorted(ranked, key=lambda r: r[0])))[:MAX_NODES]
    return [
        (
            EVENTS,
            {"namespace": NODE_EVENTS_NAMESPACE, "field_selector": f"involvedObject.kind=Node,involvedObject.name={n}"},
        )
        for n in nodes
    ]


def follow_up_calls(
    observations: Sequence[Observation],
    targets: Sequence[str],
    tools: Sequence[str],
    *,
    node_events: bool = True,
) -> list[tuple[str, JsonObject]]:
    """The follow-up calls of the tools the run has; ``node_events``: whether the events tool may read the
    namespace of Node events."""
    made = {(o.tool_name, str(sorted(o.arguments.items()))) for o in observations}
    calls: list[tuple[str, JsonObject]] = []
    pods = 0
    # Pods failing now (a container waiting or not ready) before those that only restarted once: the three read
    # are the ones that explain today.
    for pod in sorted(pod_views(observations), key=lambda p: not _failing_now(p)):
        if targets and not any(names(t, pod.service) or names(t, pod.name) for t in targets):
            continue
        failing = _failing_container(pod)
        if failing is None and targets:
            # A pod of a workload the question names that runs ready: its log says what its calls meet (a
            # dependency that refuses or times out), which no status of its own shows.
            failing = _first_container(pod)
        if failing is None or pods >= MAX_PODS:
            continue
        pods += 1
        container, previous = failing
        namespace = pod.text("metadata", "namespace")
        arguments: JsonObject = {
            "namespace": namespace,
            "pod": pod.name,
            "container": container,
            "tail_lines": TAIL_LINES,
        }
        if previous:
            arguments["previous"] = True
        calls.append(("kubernetes.pod_logs", arguments))
        owners = pod.get("metadata", "ownerReferences")
        for owner in owners if isinstance(owners, list) else []:
            if isinstance(owner, dict) and owner.get("kind") == "ReplicaSet" and isinstance(owner.get("name"), str):
                deployment = workload_of_replicaset(str(owner["name"]))
                calls.append(("kubernetes.rollouts", {"namespace": namespace, "deployment": deployment}))
    if not targets:
        # Nothing named: the entry workloads' logs say what the users' requests meet (what a failing pod does to
        # them, or what no pod shows).
        for pod in _entry_pods(observations)[: max(1, MAX_PODS - pods)]:
            if (call := _current_log(pod)) is not None:
                calls.append(call)
    if node_events:
        calls += node_event_calls(observations, targets)
    calls += event_calls(observations, targets)
    out: list[tuple[str, JsonObject]] = []
    for tool, arguments in calls:
        key = (tool, str(sorted(arguments.items())))
        if tool in tools and key not in made:
            made.add(key)
            out.append((tool, arguments))
    return out


def caller_log_calls(
    observations: Sequence[Observation],
    targets: Sequence[str],
    callers: Mapping[str, Sequence[str]],
    tools: Sequence[str],
) -> list[tuple[str, JsonObject]]:
    """The current logs of the callers of a workload the question names (``callers``: the workloads configured with
    its address) when its own log, read, says nothing wrong and none of its pods fails: what its callers meet
    when they call it (a call that times out, a connection dropped on the way) is in theirs. At most
    ``MAX_PODS``, one pod per caller."""
    if "kubernetes.pod_logs" not in tools:
        return []
    pods = pod_views(observations)
    lines = [line for obs in observations for line in log_lines(obs)]
    read = {line.service for line in lines}
    calls: list[tuple[str, JsonObject]] = []
    for target in targets:
        own = [p for p in pods if p.service == target]
        if not own or target not in read or any(_failing_now(p) for p in own):
            continue
        if any(reads_as_error(line) for line in lines if line.service == target):
            continue
        for caller in callers.get(target, ()):
            call = next((c for p in pods if p.service == caller and (c := _current_log(p)) is not None), None)
            if call is None or caller in read or len(calls) >= MAX_PODS:
                continue
            read.add(caller)
            calls.append(call)
    return calls


def quiet_log_calls(
    observations: Sequence[Observation], targets: Sequence[str], tools: Sequence[str]
) -> list[tuple[str, JsonObject]]:
    """When the question names no workload and what was read shows nothing wrong (no pod failing now, no error line
    in the logs read), the current logs of the other running pods listed, at most ``MAX_QUIET_PODS``: a fault
    that no status shows (a database refusing connections past its limit) is in some workload's own log, and
    reading them is what a person would do next (``kubectl logs`` of each)."""
    if targets or "kubernetes.pod_logs" not in tools:
        return []
    pods = pod_views(observations)
    if any(_failing_now(pod) for pod in pods):
        return []
    if any(reads_as_error(line) for obs in observations for line in log_lines(obs)):
        return []
    read = {line.service for obs in observations for line in log_lines(obs)}
    calls: list[tuple[str, JsonObject]] = []
    for pod in pods:
        call = _current_log(pod)
        if call is None or pod.service in read or len(calls) >= MAX_QUIET_PODS:
            continue
        read.add(pod.service)
        calls.append(call)
    return calls


def dependency_log_calls(
    observations: Sequence[Observation], blamed: Sequence[str], tools: Sequence[str]
) -> list[tuple[str, JsonObject]]:
    """The current logs of the workloads callers' error lines blame (``blamed``, in order), whose logs were not
    read: a dependency that runs ready says in its own log why its callers fail (a database refusing its
    password, a replica refusing writes). At most ``MAX_PODS``, one pod per workload."""
    if "kubernetes.pod_logs" not in tools:
        return []
    read = {line.service for obs in observations for line in log_lines(obs)}
    made = {(o.tool_name, str(sorted(o.arguments.items()))) for o in observations}
    pods = pod_views(observations)
    calls: list[tuple[str, JsonObject]] = []
    for workload in blamed:
        if len(calls) >= MAX_PODS or workload in read:
            continue
        call = next((c for p in pods if p.service == workload and (c := _current_log(p)) is not None), None)
        if call is not None and (call[0], str(sorted(call[1].items()))) not in made:
            calls.append(call)
    return calls


# The cluster's DNS server: the namespace it runs in, and the names its pods and log streams carry.
DNS_NAMESPACE = "kube-system"
DNS_SERVERS = ("coredns", "kube-dns", "node-local-dns")


def _resolution_fails(observations: Sequence[Observation], rules: Rules) -> bool:
    """Whether a log line read shows a name that could not be resolved (a ``dns`` log rule matches it)."""
    return any(rules.lookup_failure(line.message) is not None for obs in observations for line in log_lines(obs))


def _is_dns_server(name: str) -> bool:
    return any(name == n or name.startswith(n + "-") for n in DNS_SERVERS)


def cluster_dns_calls(
    observations: Sequence[Observation], tools: Sequence[str], *, rules: Rules | None = None
) -> list[tuple[str, JsonObject]]:
    """When a caller's log shows a name it could not resolve, the cluster DNS server's own logs (its listed pods'
    logs, and its error lines in Loki), unless they were read: a resolver that times out upstream is one cause
    of every caller's failures, which no caller's log shows."""
    if not _resolution_fails(observations, rules or current_rules()):
        return []
    if any(_is_dns_server(line.service) for obs in observations for line in log_lines(obs)):
        return []
    made = {(o.tool_name, str(sorted(o.arguments.items()))) for o in observations}
    calls: list[tuple[str, JsonObject]] = []
    for pod in pod_views(observations):
        if len(calls) >= MAX_NODES or not (_is_dns_server(pod.service) or _is_dns_server(pod.name)):
            continue
        if (call := _current_log(pod)) is not None:
            calls.append(call)
    calls.append(
        ("loki.query_range", {"query": f'{{namespace="{DNS_NAMESPACE}"}} |~ `{NAMESPACE_ERRORS}`', "limit": 200})
    )
    return [(t, a) for t, a in calls if t in tools and (t, str(sorted(a.items()))) not in made]
