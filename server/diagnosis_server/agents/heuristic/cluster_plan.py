"""The calls the cluster analyzers need (``analyzers/``), bounded: one ``kubernetes.list`` per kind for each
namespace read, the cluster-scoped kinds once, and the control plane's own pods.

The pods and Warning events of a namespace are read by ``live_plan``; here the objects that explain them: the
Services and their Endpoints (routing), the claims, volumes and storage classes (scheduling), quotas and service
accounts (admission), secrets (names, types and keys only) and configmaps (start-up), Deployments and ReplicaSets
(what a controller has now), nodes (their conditions, taints and allocatable) and kube-system's pods; and the CFS
counters of the question's workload, or of the first namespace's containers when it names none (throttling).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from diagnosis_server.agents.heuristic.live_plan import namespaces_of
from diagnosis_server.agents.heuristic.observations import walk
from diagnosis_server.conversions import JsonObject, JsonValue

LIST = "kubernetes.list"
CONTROL_PLANE = "kube-system"
# One list call per kind and namespace; at most this many namespaces, the first one's kinds first (the plan's own
# bound, ``protocols.planner.DEFAULT_MAX_STEPS``, may keep the second one's out).
MAX_NAMESPACES = 2
NAMESPACED = (
    "services",
    "endpoints",
    "ingresses",
    "networkpolicies",
    "deployments",
    "replicasets",
    "statefulsets",
    "persistentvolumeclaims",
    "resourcequotas",
    "serviceaccounts",
    "secrets",
    "configmaps",
)
CLUSTER_SCOPED = ("nodes", "storageclasses", "persistentvolumes")
RANGE = "prometheus.query_range"
CFS_COUNTERS = ("container_cpu_cfs_throttled_periods_total", "container_cpu_cfs_periods_total")
MAX_TARGETS = 1


def _namespace_enum(tool: JsonObject) -> list[str] | None:
    schema = tool.get("input_schema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    param = properties.get("namespace") if isinstance(properties, dict) else None
    allowed = param.get("enum") if isinstance(param, dict) else None
    return [a for a in allowed if isinstance(a, str)] if isinstance(allowed, list) else None


def cluster_steps(
    tools: Mapping[str, JsonObject], context: JsonValue, targets: Sequence[str] = ()
) -> list[tuple[str, JsonObject, str]]:
    """(tool, arguments, purpose) of the cluster reads: the CFS counters of the targets' containers (when the run
    has ``prometheus.query_range``), then the objects (when it has ``kubernetes.list``)."""
    steps: list[tuple[str, JsonObject, str]] = []
    known = walk(context, ("prometheus", "metric_names"))
    # Metric names known up front (a recorded pack's): the counters are read only when they are among them.
    counters = [m for m in CFS_COUNTERS if not isinstance(known, list) or m in known]
    namespaces = [n for n in namespaces_of(context) if n != CONTROL_PLANE][:MAX_NAMESPACES]
    if not namespaces:
        # An environment that may read any namespace: its default one.
        default = walk(context, ("kubernetes", "default_namespace"))
        namespaces = [default] if isinstance(default, str) and default else []
    if RANGE in tools and len(counters) == len(CFS_COUNTERS):
        # The targets' containers; a question that names none: those of the first namespace.
        selectors = [(f'pod=~"{t}-.*"', f"{t}'s containers") for t in list(targets)[:MAX_TARGETS]]
        if not selectors and namespaces:
            selectors = [(f'namespace="{namespaces[0]}"', f"the containers of {namespaces[0]}")]
        for selector, whose in selectors:
            for metric in CFS_COUNTERS:
                steps.append((RANGE, {"query": f"{metric}{{{selector}}}"}, f"how often {whose} were throttled"))
    tool = tools.get(LIST)
    if tool is None:
        return steps
    allowed = _namespace_enum(tool)
    if allowed is None or CONTROL_PLANE in allowed:
        steps.append((LIST, {"kind": "pods", "namespace": CONTROL_PLANE}, "the control plane's own pods"))
    for kind in CLUSTER_SCOPED:
        steps.append((LIST, {"kind": kind}, f"the cluster's {kind}"))
    for namespace in namespaces:
        for kind in NAMESPACED:
            steps.append((LIST, {"kind": kind, "namespace": namespace}, f"the {kind} of {namespace}"))
    return steps
