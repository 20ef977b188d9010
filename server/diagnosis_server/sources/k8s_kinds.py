"""The Kubernetes kinds a diagnosis reads, by API plural name: where each lives and how a Secret is kept to its keys.

One row per kind: its API group and version, its ``kind``, whether it is namespaced, and the official client's typed
API class and method stem (``CoreV1Api`` + ``service`` gives ``list_namespaced_service`` and
``read_namespaced_service``; a cluster-scoped ``node`` gives ``list_node`` and ``read_node``). The same table gives
the recorded packs' section names (``kubernetes.services``, ``kubernetes.nodes``, ...) and their List kinds.

A Secret is read for its name, type and keys: ``data`` and ``stringData`` values are replaced by ``[REDACTED]``
the moment the answer is parsed (``secret_keys_only``), before anything records, logs or redacts it.
"""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.sources.arguments import Param
from diagnosis_server.sources.declared import Declaration
from diagnosis_server.tools.base import ToolError

REDACTED = "[REDACTED]"


@dataclass(frozen=True, slots=True)
class Kind:
    plural: str
    group_version: str
    kind: str
    namespaced: bool
    api: str
    stem: str

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def list_method(self) -> str:
        return f"list_namespaced_{self.stem}" if self.namespaced else f"list_{self.stem}"

    @property
    def read_method(self) -> str:
        return f"read_namespaced_{self.stem}" if self.namespaced else f"read_{self.stem}"


_ROWS = (
    ("pods", "v1", "Pod", True, "CoreV1Api", "pod"),
    ("events", "v1", "Event", True, "CoreV1Api", "event"),
    ("services", "v1", "Service", True, "CoreV1Api", "service"),
    ("endpoints", "v1", "Endpoints", True, "CoreV1Api", "endpoints"),
    ("persistentvolumeclaims", "v1", "PersistentVolumeClaim", True, "CoreV1Api", "persistent_volume_claim"),
    ("resourcequotas", "v1", "ResourceQuota", True, "CoreV1Api", "resource_quota"),
    ("limitranges", "v1", "LimitRange", True, "CoreV1Api", "limit_range"),
    ("serviceaccounts", "v1", "ServiceAccount", True, "CoreV1Api", "service_account"),
    ("configmaps", "v1", "ConfigMap", True, "CoreV1Api", "config_map"),
    ("secrets", "v1", "Secret", True, "CoreV1Api", "secret"),
    ("nodes", "v1", "Node", False, "CoreV1Api", "node"),
    ("persistentvolumes", "v1", "PersistentVolume", False, "CoreV1Api", "persistent_volume"),
    ("deployments", "apps/v1", "Deployment", True, "AppsV1Api", "deployment"),
    ("replicasets", "apps/v1", "ReplicaSet", True, "AppsV1Api", "replica_set"),
    ("statefulsets", "apps/v1", "StatefulSet", True, "AppsV1Api", "stateful_set"),
    ("daemonsets", "apps/v1", "DaemonSet", True, "AppsV1Api", "daemon_set"),
    ("jobs", "batch/v1", "Job", True, "BatchV1Api", "job"),
    ("cronjobs", "batch/v1", "CronJob", True, "BatchV1Api", "cron_job"),
    ("endpointslices", "discovery.k8s.io/v1", "EndpointSlice", True, "DiscoveryV1Api", "endpoint_slice"),
    ("ingresses", "networking.k8s.io/v1", "Ingress", True, "NetworkingV1Api", "ingress"),
    ("networkpolicies", "networking.k8s.io/v1", "NetworkPolicy", True, "NetworkingV1Api", "network_policy"),
    ("storageclasses", "storage.k8s.io/v1", "StorageClass", False, "StorageV1Api", "storage_class"),
    (
        "horizontalpodautoscalers",
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        True,
        "AutoscalingV2Api",
        "horizontal_pod_autoscaler",
    ),
    ("poddisruptionbudgets", "policy/v1", "PodDisruptionBudget", True, "PolicyV1Api", "pod_disruption_budget"),
)
KINDS: dict[str, Kind] = {row[0]: Kind(*row) for row in _ROWS}
PLURALS = tuple(KINDS)
BY_KIND: dict[str, Kind] = {kind.kind: kind for kind in KINDS.values()}
# The control plane's own pods (kube-proxy, kube-scheduler, the API server, CoreDNS) and their events: readable
# beside the environment's namespaces by the generic tools.
CONTROL_PLANE_NAMESPACE = "kube-system"
CONTROL_PLANE_KINDS = frozenset({"pods", "events"})


def secret_keys_only(value: JsonValue) -> JsonValue:
    """A Secret or SecretList with every ``data``/``stringData`` value replaced by ``[REDACTED]`` (keys kept)."""
    if isinstance(value, dict):
        items = value.get("items")
        if isinstance(items, list):
            return {**value, "items": [secret_keys_only(item) for item in items]}
        out: JsonObject = dict(value)
        for key in ("data", "stringData"):
            data = out.get(key)
            if isinstance(data, dict):
                out[key] = {name: REDACTED for name in data}
            elif key in out:
                out[key] = REDACTED
        return out
    return value


def without_managed_fields(obj: JsonObject) -> JsonObject:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and "managedFields" in metadata:
        obj = {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}
    return obj


LIST = "kubernetes.list"
GET = "kubernetes.get"
LIST_DESCRIPTION = (
    "List one kind of Kubernetes object by its API plural name (kind: "
    + ", ".join(PLURALS)
    + "). Returns the API's List object as is ({apiVersion, kind: ServiceList, metadata, items}), managedFields "
    "dropped, env values and secret references redacted; a Secret's data values are never read (its name, type and "
    "keys are). Cluster-scoped kinds (nodes, persistentvolumes, storageclasses) ignore namespace; pods and events "
    f"of {CONTROL_PLANE_NAMESPACE} (the control plane's own) may be listed too. Filter with label_selector "
    "(app=cartservice) or field_selector (metadata.name=cartservice, spec.nodeName=node-1)."
)
GET_DESCRIPTION = (
    "Get one Kubernetes object by kind (API plural name, as kubernetes.list takes) and name. Returns the object as "
    "the API returns it (metadata, spec, status), with the same redactions as kubernetes.list."
)


def object_params(namespaces: tuple[str, ...] | None, default: str) -> tuple[Param, Param]:
    """The ``kind`` and ``namespace`` parameters of the generic tools."""
    kind = Param("kind", "string", "The kind's API plural name (services, nodes, ...).", required=True, enum=PLURALS)
    if namespaces:
        allowed = tuple(dict.fromkeys((*namespaces, CONTROL_PLANE_NAMESPACE)))
        listing = ", ".join(allowed)
        namespace = Param("namespace", "string", f"The namespace (one of {listing}). Default: {default}.", enum=allowed)
    else:
        namespace = Param("namespace", "string", f"The namespace. Default: {default}.")
    return kind, namespace


def object_declarations(namespaces: tuple[str, ...] | None, default: str) -> dict[str, Declaration]:
    kind, namespace = object_params(namespaces, default)
    label = Param("label_selector", "string", "Label selector, e.g. app=cartservice.")
    field = Param("field_selector", "string", "Field selector, e.g. metadata.name=cartservice.")
    name = Param("name", "string", "The object's name.", required=True)
    return {
        LIST: Declaration(LIST, LIST_DESCRIPTION, (kind, namespace, label, field)),
        GET: Declaration(GET, GET_DESCRIPTION, (kind, namespace, name)),
    }


def checked_namespace(tool: str, kind: Kind, namespace: str, allowed: tuple[str, ...] | None) -> str:
    """The namespace a call on ``kind`` reads ('' for a cluster-scoped kind); ToolError outside the allowed ones
    (the control plane's namespace allowed for its pods and events)."""
    if not kind.namespaced:
        return ""
    if allowed is None or namespace in allowed:
        return namespace
    if namespace == CONTROL_PLANE_NAMESPACE and kind.plural in CONTROL_PLANE_KINDS:
        return namespace
    raise ToolError(f"{tool}: namespace {namespace!r} is not one this environment may read ({', '.join(allowed)})")


def kind_of(tool: str, plural: str) -> Kind:
    kind = KINDS.get(plural)
    if kind is None:
        raise ToolError(f"{tool}: kind {plural!r} is not one of {', '.join(PLURALS)}")
    return kind
