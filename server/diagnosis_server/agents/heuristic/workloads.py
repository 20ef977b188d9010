"""Which workload a Kubernetes object or a log stream belongs to, and how to bind that name.

A pod of a Deployment is named ``<deployment>-<replicaset hash>-<pod hash>``, of a StatefulSet
``<name>-<ordinal>``, of a Job, CronJob or DaemonSet ``<name>-<hash>``. Labels name the workload more directly
(``app.kubernetes.io/name``, ``app``, ``k8s-app``); when a label names it, the label is bound, else the name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from diagnosis_server.agents.heuristic.shapes import is_label_value
from diagnosis_server.conversions import JsonValue

# A ReplicaSet's pod-template-hash (and a CronJob's Job's minute stamp) is written in Kubernetes' safe alphabet,
# "bcdfghjklmnpqrstvwxz2456789", which has no vowel; a name's last word ("exporter" of the DaemonSet pod
# node-exporter-x7k2p, "migrate" of the Job pod db-migrate-q8w2z) has one.
_HASH = r"(?![a-z0-9]*[aeiou])[a-z0-9]{6,10}"
# A generated pod name's suffix (``generateName``): five characters of that alphabet, so without a vowel; never a
# word such as the "agent" of a pod named logging-agent.
_SUFFIX = r"(?![a-z0-9]*[aeiou])[a-z0-9]{5}"
_DEPLOYMENT_POD = re.compile(rf"^(?P<name>[a-z0-9][a-z0-9.-]*?)-{_HASH}-{_SUFFIX}$")
_HASHED_POD = re.compile(rf"^(?P<name>[a-z0-9][a-z0-9.-]*?)-{_SUFFIX}$")
_ORDINAL_POD = re.compile(r"^(?P<name>[a-z0-9][a-z0-9.-]*?)-\d{1,4}$")
_REPLICASET = re.compile(rf"^(?P<name>[a-z0-9][a-z0-9.-]*?)-{_HASH}$")
# A Job a CronJob made: <cronjob>-<its scheduled time in minutes>.
_CRON_JOB = re.compile(r"^(?P<name>[a-z0-9][a-z0-9.-]*?)-\d{8,10}$")
WORKLOAD_LABELS = ("app.kubernetes.io/name", "app", "k8s-app", "app.kubernetes.io/component", "component", "service")
# The Loki stream labels that name a line's workload, in order. A pod's name says its workload (its controller's,
# or through the pods listing its release's) where a container's name need not ("api", "redis", "app").
STREAM_LABELS = ("app", "service", "service_name", "app_kubernetes_io_name", "job", "pod", "container")


def workload_of_pod(name: str) -> str:
    """The workload a pod name belongs to (the name itself when it follows no controller's pattern)."""
    for pattern in (_DEPLOYMENT_POD, _ORDINAL_POD, _HASHED_POD):
        match = pattern.match(name)
        if match:
            return match.group("name")
    return name


def workload_of_job(name: str) -> str:
    """A Job's workload: the CronJob that made it (nightly-etl of nightly-etl-29012345), else the Job itself."""
    match = _CRON_JOB.match(name)
    return match.group("name") if match else name


def workload_of_replicaset(name: str) -> str:
    match = _REPLICASET.match(name)
    return match.group("name") if match else name


def workload_label(labels: Mapping[str, JsonValue] | None) -> tuple[str, str] | None:
    """(label key, value) of the label that names the workload, if any."""
    if not labels:
        return None
    for key in WORKLOAD_LABELS:
        value = labels.get(key)
        if isinstance(value, str) and is_label_value(value):
            return key, value
    return None


CHART_LABEL = "app.kubernetes.io/name"
INSTANCE_LABEL = "app.kubernetes.io/instance"


def pod_workload_label(pod: str, labels: Mapping[str, JsonValue] | None) -> tuple[str, str] | None:
    """(label key, value) of the label that names a pod's workload. A Helm chart's pod has the chart's name in
    ``app.kubernetes.io/name`` (postgresql) and the release's in ``app.kubernetes.io/instance`` (orders-db); its
    controller, and so the pod, is named ``<release>-<chart>`` (StatefulSet orders-db-postgresql, pod
    orders-db-postgresql-0): when the pod's name starts with the release's and not with the chart's, the release
    names the workload (the service a topology knows), not the chart (every release of it has that name)."""
    named = workload_label(labels)
    if named is None or named[0] != CHART_LABEL or labels is None:
        return named
    release = labels.get(INSTANCE_LABEL)
    chart = named[1]
    released = isinstance(release, str) and is_label_value(release) and release != chart
    if released and pod.startswith(f"{release}-") and not pod.startswith(chart + "-"):
        return INSTANCE_LABEL, str(release)
    return named


def names(target: str, workload: str) -> bool:
    """Whether a question's target names this workload (equal, or one a dashed prefix of the other)."""
    a, b = target.lower(), workload.lower()
    return a == b or a.startswith(b + "-") or b.startswith(a + "-")
