"""Rollout analyzer: ``kubernetes.rollouts`` (a Deployment's ReplicaSets) read for a rollout that went bad.

The newest revision's ReplicaSet that does not have its replicas ready while an older revision's did is a
cause candidate: the new pods of that revision fail. It is stated with the revision, the image it runs, when
it was created and how many of its replicas are ready, each bound to the ReplicaSet's own values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.observations import BindingError, ItemView, Observation, parse_ts
from diagnosis_server.agents.heuristic.shapes import is_image, is_object_name, is_timestamp
from diagnosis_server.agents.heuristic.workloads import workload_of_replicaset

REVISION = "deployment.kubernetes.io/revision"


@dataclass(frozen=True, slots=True)
class ReplicaSetView(ItemView):
    name: str
    revision: int

    def count(self, *path: str) -> int:
        value = self.get(*path)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _replicasets(obs: Observation) -> list[ReplicaSetView]:
    items = obs.get("items")
    out: list[ReplicaSetView] = []
    for index, item in enumerate(items if isinstance(items, list) else []):
        metadata = item.get("metadata") if isinstance(item, dict) else None
        annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
        revision = annotations.get(REVISION) if isinstance(annotations, dict) else None
        name = metadata.get("name") if isinstance(metadata, dict) else None
        # (a ReplicaSet "name" that is not one is never a workload's name in a sentence)
        if is_object_name(name) and isinstance(revision, str) and revision.isdigit():
            out.append(ReplicaSetView(obs, index, name, int(revision)))
    return sorted(out, key=lambda r: r.revision)


def _finding(new: ReplicaSetView) -> Finding:
    service = workload_of_replicaset(new.name)
    wanted, ready = new.count("spec", "replicas"), new.count("status", "readyReplicas")
    bindings = [
        new.bind("metadata", "name", text=service),
        new.bind("metadata", "annotations", REVISION),
        new.bind("spec", "replicas"),
    ]
    detail = f"replicaset {new.name} of revision {new.revision}"
    bindings.insert(1, new.bind("metadata", "name"))
    image = new.get("spec", "template", "spec", "containers", 0, "image")
    if is_image(image):
        bindings.append(new.bind("spec", "template", "spec", "containers", 0, "image"))
        detail += f" runs {image}"
    created = new.get("metadata", "creationTimestamp")
    if is_timestamp(created):
        bindings.append(new.bind("metadata", "creationTimestamp"))
        detail += f" since {created}"
    if ready:
        bindings.append(new.bind("status", "readyReplicas"))
        counted = f"{ready} of {wanted} replicas ready"
    else:
        # No readyReplicas field (Kubernetes omits a zero): no count of it is recorded, so none is written.
        counted = f"{wanted} replicas wanted, none ready"
    statement = f"{service} rollout is not ready ({detail}; {counted})"
    return Finding(
        "bad_rollout",
        Role.CAUSE,
        service,
        statement,
        tuple(bindings),
        strength=2,
        onset=parse_ts(created) if isinstance(created, str) else None,
    )


def rollout_findings(observations: Iterable[Observation]) -> list[Finding]:
    out: list[Finding] = []
    for obs in observations:
        if obs.tool_name != "kubernetes.rollouts":
            continue
        sets = _replicasets(obs)
        if len(sets) < 2:
            continue
        new, older = sets[-1], sets[:-1]
        wanted, ready = new.count("spec", "replicas"), new.count("status", "readyReplicas")
        was_ready = any(r.count("status", "readyReplicas") > 0 for r in older)
        if wanted > 0 and ready < wanted and was_ready:
            try:
                out.append(_finding(new))
            except BindingError:
                continue
    return out
