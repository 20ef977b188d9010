"""The question's subjects resolved against what the sources hold: a pod by its name, a workload by the labels
Kubernetes and Helm give its pods and by its pods' owners, a Prometheus label value as the name of what it labels.

A question may name a pod (``logging-agent-x7k2p``), a ReplicaSet, Job, StatefulSet or DaemonSet, a Helm release,
or a Prometheus job; the analyzers know workloads by the name the pods' labels give (``pods.PodView.service``).
Each subject is read as that workload when the data ties the two, so that what is found about the workload is about
the subject (and no "no data about" is said of a name the data holds under another).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from diagnosis_server.agents.heuristic.analyzers.pods import pod_views
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.agents.heuristic.prometheus_series import result_series
from diagnosis_server.agents.heuristic.workloads import workload_of_job, workload_of_replicaset

# Pod labels that name a workload (Kubernetes' recommended labels and the older ``app``).
SUBJECT_LABELS = ("app", "app.kubernetes.io/name", "app.kubernetes.io/instance")
# Prometheus labels whose values name what they label: services, jobs, apps, namespaces, pods, containers, targets.
PROMETHEUS_NAME_LABELS = ("service", "job", "app", "namespace", "pod", "container", "instance")
_CONTROLLERS = frozenset({"ReplicaSet", "Deployment", "Job", "CronJob", "StatefulSet", "DaemonSet"})


def _owner_names(kind: str, name: str) -> list[str]:
    """The names an owner reference gives its pod: the owner's, and the controller above it (a ReplicaSet's
    Deployment, a Job's CronJob)."""
    if kind == "ReplicaSet":
        return [name, workload_of_replicaset(name)]
    if kind == "Job":
        return [name, workload_of_job(name)]
    return [name]


def pod_aliases(observations: Iterable[Observation]) -> dict[str, str]:
    """Every name a listed pod is known by (its own, its workload labels', its owners') -> its workload."""
    aliases: dict[str, str] = {}
    for pod in pod_views(observations):
        names = [pod.name]
        labels = pod.get("metadata", "labels")
        if isinstance(labels, dict):
            names += [str(labels[key]) for key in SUBJECT_LABELS if isinstance(labels.get(key), str)]
        owners = pod.get("metadata", "ownerReferences")
        for owner in owners if isinstance(owners, list) else []:
            if isinstance(owner, dict) and owner.get("kind") in _CONTROLLERS and isinstance(owner.get("name"), str):
                names += _owner_names(str(owner["kind"]), str(owner["name"]))
        for name in names:
            aliases.setdefault(name.lower(), pod.service)
    return aliases


def prometheus_names(observations: Iterable[Observation]) -> list[str]:
    """The values of the Prometheus labels that name things (``PROMETHEUS_NAME_LABELS``) in every answer read."""
    found: dict[str, None] = {}
    for series in result_series(observations):
        for key in PROMETHEUS_NAME_LABELS:
            value = series.labels.get(key)
            if value:
                found.setdefault(value, None)
    return list(found)


def resolve_subjects(subjects: Sequence[str], observations: Sequence[Observation]) -> list[str]:
    """Each subject as the workload the data knows it by (itself when the data ties it to none)."""
    aliases = pod_aliases(observations)
    return list(dict.fromkeys(aliases.get(subject.lower(), subject) for subject in subjects))


def named_workloads(question: str, observations: Sequence[Observation]) -> list[str]:
    """The listed workloads the question names as a whole word ("Why does profile report errors?" names profile),
    by any name their pods are known by (one word names no workload the question-words reading finds)."""
    text = question.lower()
    found: dict[str, None] = {}
    for alias, workload in pod_aliases(observations).items():
        if len(alias) > 2 and re.search(rf"(?<![\w.-]){re.escape(alias)}(?![\w-])", text):
            found.setdefault(workload, None)
    return list(found)
