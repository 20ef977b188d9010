"""The calls a result plainly asks for: the logs of the failing pods the pod listings show, and the rollouts of
their Deployment.

A pod fails when a container waits (CrashLoopBackOff, ErrImagePull, ...), terminated, or restarted, or the pod
is not Ready. For each failing pod of the question's workloads (of any workload when it names none), at most
``MAX_PODS``: its previous container's log when a container last terminated (what it wrote before it
crashed), else its current log; and the Deployment's rollouts when the pod's ReplicaSet names one.
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.agents.heuristic.pods import PodView, pod_views
from diagnosis_server.agents.heuristic.workloads import names, workload_of_replicaset
from diagnosis_server.conversions import JsonObject

MAX_PODS = 3
TAIL_LINES = 100


def _failing_container(pod: PodView) -> tuple[str, bool] | None:
    """(container, previous) of the pod's failing container, if it has one."""
    statuses = pod.get("status", "containerStatuses")
    for status in statuses if isinstance(statuses, list) else []:
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


def follow_up_calls(
    observations: Sequence[Observation], targets: Sequence[str], tools: Sequence[str]
) -> list[tuple[str, JsonObject]]:
    made = {(o.tool_name, str(sorted(o.arguments.items()))) for o in observations}
    calls: list[tuple[str, JsonObject]] = []
    pods = 0
    for pod in pod_views(observations):
        if targets and not any(names(t, pod.service) or names(t, pod.name) for t in targets):
            continue
        failing = _failing_container(pod)
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
    out: list[tuple[str, JsonObject]] = []
    for tool, arguments in calls:
        key = (tool, str(sorted(arguments.items())))
        if tool in tools and key not in made:
            made.add(key)
            out.append((tool, arguments))
    return out
