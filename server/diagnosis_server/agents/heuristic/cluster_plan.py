"""The calls the cluster analyzers need (``analyzers/``), bounded: one ``kubernetes.list`` per kind for each
namespace read, the cluster-scoped kinds once, and the control plane's own pods.

The pods and Warning events of a namespace are read by ``live_plan``; here the objects that explain them: the
Services and their Endpoints (routing), the claims and storage classes (scheduling), quotas and service accounts
(admission), secrets (names, types and keys only) and configmaps (start-up), Deployments and ReplicaSets (what a
controller has now), nodes (their conditions, taints and allocatable) and kube-system's pods.
"""

from __future__ import annotations

from collections.abc import Mapping

from diagnosis_server.agents.heuristic.live_plan import namespaces_of
from diagnosis_server.conversions import JsonObject, JsonValue

LIST = "kubernetes.list"
CONTROL_PLANE = "kube-system"
# One list call per kind and namespace; at most this many namespaces.
MAX_NAMESPACES = 1
NAMESPACED = (
    "services",
    "endpoints",
    "deployments",
    "replicasets",
    "persistentvolumeclaims",
    "resourcequotas",
    "serviceaccounts",
    "secrets",
    "configmaps",
)
CLUSTER_SCOPED = ("nodes", "storageclasses")
MAX_CLUSTER_STEPS = 1 + len(CLUSTER_SCOPED) + MAX_NAMESPACES * len(NAMESPACED)


def _namespace_enum(tool: JsonObject) -> list[str] | None:
    schema = tool.get("input_schema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    param = properties.get("namespace") if isinstance(properties, dict) else None
    allowed = param.get("enum") if isinstance(param, dict) else None
    return [a for a in allowed if isinstance(a, str)] if isinstance(allowed, list) else None


def cluster_steps(tools: Mapping[str, JsonObject], context: JsonValue) -> list[tuple[str, JsonObject, str]]:
    """(tool, arguments, purpose) of the cluster reads, when the run has ``kubernetes.list``."""
    tool = tools.get(LIST)
    if tool is None:
        return []
    namespaces = [n for n in namespaces_of(context) if n != CONTROL_PLANE][:MAX_NAMESPACES]
    allowed = _namespace_enum(tool)
    steps: list[tuple[str, JsonObject, str]] = []
    if allowed is None or CONTROL_PLANE in allowed:
        steps.append((LIST, {"kind": "pods", "namespace": CONTROL_PLANE}, "the control plane's own pods"))
    for kind in CLUSTER_SCOPED:
        steps.append((LIST, {"kind": kind}, f"the cluster's {kind}"))
    for namespace in namespaces:
        for kind in NAMESPACED:
            steps.append((LIST, {"kind": kind, "namespace": namespace}, f"the {kind} of {namespace}"))
    return steps
