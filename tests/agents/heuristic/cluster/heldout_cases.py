"""A held-out-like benchmark of whole-cluster fault snapshots, written apart from the analyzers and from the team's own
sets (``realistic``, ``realistic_app``, ``incidents``): the healthy background (two apps, their Deployments,
ReplicaSets, pods, Services, Endpoints and EndpointSlices, four nodes, kube-system, the start events and the old
warnings every cluster holds) is borrowed from ``realistic`` (``Snapshot``) and ``realistic_app`` (``Cluster``); each
fault's objects, status, conditions, events and log lines are written here, in the texts the kube-scheduler, the
ReplicaSet, StatefulSet and DaemonSet controllers, the admission plugins, the kubelet, containerd and the apps'
own libraries (Go gRPC, logrus, zerolog, StackExchange.Redis, Python gRPC, mongod, Redis, CoreDNS, ingress-nginx)
emit for it.

``CASES`` maps a case's name to its builder, its family, the component its likely cause must name (any one of the
given names), words of which one must name the fault, words all of which must be said besides (the object that
shows it), and words the cause must never say (an ended condition or an unrelated workload). A case with no
component is a healthy cluster: its answer must say there is no incident (issue: the whole cluster; R-V-4).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tests.agents.heuristic.cluster.realistic import (
    BORN,
    CONTROL,
    CONTROL_TAINT,
    WORKERS,
    PodPlan,
    Snapshot,
    _no_pods,
    _pull_events,
    _quota,
    _token_volume,
    safe,
    snapshot,
    stated,
)
from tests.agents.heuristic.cluster.realistic import HOTEL as HOTEL_APP
from tests.agents.heuristic.cluster.realistic import SHOP as SHOP_APP
from tests.agents.heuristic.cluster.realistic_app import HOTEL as HOTEL_SHAPE
from tests.agents.heuristic.cluster.realistic_app import SHOP as SHOP_SHAPE
from tests.agents.heuristic.cluster.realistic_app import Cluster, Workload, _frontend_error, _grpc_refused, _zlog
from tests.incidents.corpus.kit import (
    Pack,
    container,
    http_probe,
    running,
    status,
    terminated,
    uid,
    waiting,
)

Json = dict[str, Any]
_PREEMPT_NONE = "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
_PREEMPT_VICTIMS = (
    "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found "
    "for incoming pod."
)
_TAINTED = f"1 node(s) had untolerated taint {CONTROL_TAINT}"


# ================================================================================================ shared writers
def _recreate(snap: Snapshot, part: str) -> None:
    """The Deployment's strategy as the fault's patch left it: Recreate (the old pod is gone before the new one)."""
    snap.deployments[part]["spec"]["strategy"] = {"type": "Recreate"}


def _pod_of(snap: Snapshot, part: str) -> Json:
    return snap.pods[part][0].args


def _zone_labels(snap: Snapshot, zones: dict[str, str], region: str) -> None:
    for name, zone in zones.items():
        labels = snap.nodes[name]["metadata"]["labels"]
        labels["topology.kubernetes.io/zone"] = zone
        labels["topology.kubernetes.io/region"] = region
        labels["failure-domain.beta.kubernetes.io/zone"] = zone


def _shop_frontend_lines(snap: Snapshot, errors: Sequence[tuple[float, str, str]]) -> None:
    """The shop frontend's logrus JSON lines: ordinary requests, and ``errors`` (minute, error, path)."""
    pack = snap.pack
    lines: list[tuple[float, str]] = []
    for m in range(1, 59, 7):
        lines.append(
            (
                m + 0.3,
                json.dumps(
                    {
                        "http.req.id": f"{safe('req', m, length=8)}-4c1e-4b7a-9d2f-{safe('r', m, length=12)}",
                        "http.req.method": "GET",
                        "http.req.path": "/_healthz",
                        "http.resp.bytes": 2,
                        "http.resp.status": 200,
                        "http.resp.took_ms": 0,
                        "message": "request complete",
                        "severity": "debug",
                        "timestamp": pack.ts(m + 0.3).replace("Z", ".204Z"),
                    }
                ),
            )
        )
    for minute, error, path in errors:
        lines.append((minute, _frontend_error(pack, minute, error, path)))
    lines.sort(key=lambda x: x[0])
    frontend = _pod_of(snap, "frontend")
    pack.pod_log(snap.ns, frontend["name"], [line for _, line in lines], container="server")


def _hotel_lines(
    snap: Snapshot, part: str, lines: Sequence[tuple[float, str, str, str]], *, previous: bool = False
) -> None:
    """A hotel service's zerolog console lines (minute, level, file:line, message)."""
    pod = _pod_of(snap, part)
    text = [_zlog(snap.pack, m, level, where, message) for m, level, where, message in lines]
    snap.pack.pod_log(snap.ns, pod["name"], text, container=snap.app.part(part).container, previous=previous)


def _refused(snap: Snapshot, part: str, port: int) -> str:
    return _grpc_refused(snap.cluster_ip(part), port)


def _selection_error(host: str, ip: str, port: int = 27017) -> str:
    """The Go MongoDB driver's server selection failure while its server refuses connections."""
    return (
        "server selection error: server selection timeout, current topology: { Type: Unknown, Servers: [{ Addr: "
        f"{host}:{port}, Type: Unknown, Last error: connection() error occurred during connection handshake: dial "
        f"tcp {ip}:{port}: connect: connection refused }}, ] }}"
    )


def _refused_rollout(snap: Snapshot, part: str, message: str, *, count: int = 17, **changes: Any) -> str:
    """``part`` rolled out (Recreate) with ``changes``; the new ReplicaSet's pods are refused at admission."""
    rs, _ = snap.rollout(part, **changes)
    _recreate(snap, part)
    snap.pods[part] = []
    snap.replicasets[f"{part}@2"]["status"] = {"replicas": 0, "observedGeneration": 1}
    snap.pack.event(
        2.03,
        snap.ns,
        "ReplicaSet",
        rs,
        "FailedCreate",
        message,
        type="Warning",
        component="replicaset-controller",
        count=count,
        last=58,
    )
    return rs


# ================================================================================================ scheduling
def checkout_anti_affinity() -> Pack:
    """checkoutservice redeployed with a required pod anti-affinity whose selector is ``app Exists`` (meant: its own
    app): every worker runs a pod of the namespace with an ``app`` label, so no node satisfies it."""
    snap = snapshot("heldout-shop-checkout-anti-affinity", SHOP_APP, "Why do orders fail at checkout?")
    affinity = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    snap.rollout("checkoutservice", affinity=affinity)
    _recreate(snap, "checkoutservice")
    snap.pending_pod(
        "checkoutservice",
        f"0/4 nodes are available: {_TAINTED}, 3 node(s) didn't match pod anti-affinity rules. {_PREEMPT_VICTIMS}",
        affinity=affinity,
    )
    _shop_frontend_lines(
        snap,
        [
            (m, "failed to complete the order: " + _refused(snap, "checkoutservice", 5050), "/cart/checkout")
            for m in range(5, 58, 6)
        ],
    )
    return snap.build()


def reservation_zone_affinity() -> Pack:
    """reservation pinned by node affinity to zone us-east-1d; the workers are in us-east-1a, -b and -c."""
    snap = snapshot(
        "heldout-hotel-reservation-zone", HOTEL_APP, "Why can guests not book rooms in namespace hotel-res?"
    )
    _zone_labels(snap, dict(zip(WORKERS, ("us-east-1a", "us-east-1b", "us-east-1c"), strict=True)), "us-east-1")
    _zone_labels(snap, {CONTROL: "us-east-1a"}, "us-east-1")
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1d"]}
                        ]
                    }
                ]
            }
        }
    }
    snap.rollout("reservation", affinity=affinity)
    _recreate(snap, "reservation")
    snap.pending_pod(
        "reservation",
        f"0/4 nodes are available: {_TAINTED}, 3 node(s) didn't match Pod's node affinity/selector. {_PREEMPT_NONE}",
        affinity=affinity,
    )
    _hotel_lines(
        snap,
        "frontend",
        [
            (
                m,
                "ERR",
                "services/frontend/server.go:412",
                "ReservationHandler: rpc error: code = Unavailable desc = name resolver error: produced zero addresses",
            )
            for m in range(4, 58, 5)
        ],
    )
    return snap.build()


def user_volume_node_affinity() -> Pack:
    """mongodb-user's local volume was provisioned on kind-worker4, removed from the cluster since: its pod, deleted
    with the node, cannot be placed anywhere its volume can be reached."""
    snap = snapshot("heldout-hotel-mongodb-user-volume-node", HOTEL_APP, "Why can users not log in?")
    gone = "kind-worker4"
    for pv in snap.objects["persistentvolumes"]:
        if pv["spec"]["claimRef"]["name"] != "user-pvc":
            continue
        pv["spec"]["hostPath"]["path"] = pv["spec"]["hostPath"]["path"].replace("/var/local-path-provisioner", "/opt")
        pv["spec"]["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [gone]}]}
                ]
            }
        }
    for pvc in snap.objects["persistentvolumeclaims"]:
        if pvc["metadata"]["name"] == "user-pvc":
            pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] = gone
    snap.pack.event(
        0.8,
        "default",
        "Node",
        gone,
        "RemovingNode",
        f"Node {gone} event: Removing Node {gone} from Controller",
        component="node-controller",
    )
    snap.pending_pod(
        "mongodb-user",
        f"0/4 nodes are available: {_TAINTED}, 3 node(s) had volume node affinity conflict. {_PREEMPT_NONE}",
        revision=1,
        created=1.0,
    )
    ip = snap.cluster_ip("mongodb-user")
    _hotel_lines(
        snap,
        "user",
        [
            (m, "ERR", "services/user/server.go:97", f"CheckUser: {_selection_error('mongodb-user', ip)}")
            for m in range(3, 58, 6)
        ],
    )
    return snap.build()


def recommendation_gpu() -> Pack:
    """recommendationservice redeployed with a GPU limit (nvidia.com/gpu: 1); no node has a GPU."""
    snap = snapshot("heldout-shop-recommendation-gpu", SHOP_APP, "What is wrong in namespace boutique?")
    spec = snap.container_of(snap.app.part("recommendationservice"))
    spec["resources"] = {
        "requests": {"cpu": "100m", "memory": "220Mi", "nvidia.com/gpu": "1"},
        "limits": {"memory": "450Mi", "nvidia.com/gpu": "1"},
    }
    snap.rollout("recommendationservice", containers=[spec])
    _recreate(snap, "recommendationservice")
    snap.pending_pod(
        "recommendationservice",
        f"0/4 nodes are available: {_TAINTED}, 3 Insufficient nvidia.com/gpu. {_PREEMPT_VICTIMS}",
        container={"resources": spec["resources"]},
    )
    return snap.build()


def search_too_many_pods() -> Pack:
    """The workers' kubelets run with a small max-pods; search's new pod (Recreate) lost its slot to a CronJob's
    backup pod started in between: every worker holds as many pods as it may."""
    snap = snapshot("heldout-hotel-search-max-pods", HOTEL_APP, "Why do hotel searches fail?")
    snap.rollout(
        "search",
        containers=[
            snap.container_of(snap.app.part("search"), image=f"{HOTEL_APP.part('search').image.split(':')[0]}:v2")
        ],
    )
    _recreate(snap, "search")
    snap.pending_pod(
        "search",
        f"0/4 nodes are available: {_TAINTED}, 3 Too many pods. {_PREEMPT_VICTIMS}",
    )
    job = "mongodb-backup-29301241"
    backup = f"{job}-{safe(job, length=5)}"
    on = snap.node_of("search")
    snap.pods["mongodb-backup"] = [
        PodPlan(
            {
                "name": backup,
                "namespace": snap.ns,
                "labels": {"batch.kubernetes.io/job-name": job, "job-name": job, "app": "mongodb-backup"},
                "node": on,
                "containers": [container("backup", "mongo:4.4.6", port=None, command=("mongodump",))],
                "statuses": [status(snap.pack, "backup", "mongo:4.4.6", state=running(snap.pack, 1.1))],
                "created": 1.0,
                "owner": ("Job", job),
                "ip": "10.244.2.61",
                "restart_policy": "OnFailure",
            },
            None,
            "mongodb-backup",
        )
    ]
    snap.pack.scheduled(1.0, snap.ns, backup, on)
    per_node: dict[str, int] = dict.fromkeys(WORKERS, 0)
    for plans in snap.pods.values():
        for plan in plans:
            if plan.args.get("node") in per_node:
                per_node[plan.args["node"]] += 1
    for plan in snap.system:
        if plan.args.get("node") in per_node:
            per_node[plan.args["node"]] += 1
    for name, count in per_node.items():
        for key in ("allocatable", "capacity"):
            snap.nodes[name]["status"][key]["pods"] = str(count)
    _hotel_lines(
        snap,
        "frontend",
        [
            (
                m,
                "ERR",
                "services/frontend/server.go:187",
                "SearchHandler: rpc error: code = Unavailable desc = name resolver error: produced zero addresses",
            )
            for m in range(3, 58, 4)
        ],
    )
    return snap.build()


def jaeger_agent_host_port() -> Pack:
    """A jaeger-agent DaemonSet listens on hostPort 6831/UDP; the jaeger all-in-one pod on kind-worker took that
    host port first: the DaemonSet's pod for kind-worker cannot be placed."""
    snap = snapshot(
        "heldout-hotel-jaeger-agent-port",
        HOTEL_APP,
        "Why is the jaeger-agent DaemonSet not running on every node in hotel-res?",
    )
    snap.pack.service("jaeger-agent", "http", namespace=snap.ns)
    jaeger = _pod_of(snap, "jaeger")
    jaeger["containers"][0]["ports"].append(
        {"name": "agent-compact", "containerPort": 6831, "hostPort": 6831, "protocol": "UDP"}
    )
    taken = jaeger["node"]
    image = "jaegertracing/jaeger-agent:1.57.0"
    ports = [
        {"name": "agent-compact", "containerPort": 6831, "hostPort": 6831, "protocol": "UDP"},
        {"name": "agent-binary", "containerPort": 6832, "hostPort": 6832, "protocol": "UDP"},
    ]
    template = {
        "metadata": {"labels": {"app": "jaeger-agent"}},
        "spec": {
            "containers": [
                {
                    "name": "jaeger-agent",
                    "image": image,
                    "args": ["--reporter.grpc.host-port=jaeger:14250"],
                    "ports": ports,
                    "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
                }
            ]
        },
    }
    snap.add(
        "daemonsets",
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": snap.meta(
                "daemonset", "jaeger-agent", created=1.5, generation=1, labels={"app": "jaeger-agent"}
            ),
            "spec": {
                "selector": {"matchLabels": {"app": "jaeger-agent"}},
                "template": template,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                "revisionHistoryLimit": 10,
            },
            "status": {
                "currentNumberScheduled": 3,
                "desiredNumberScheduled": 3,
                "numberAvailable": 2,
                "numberMisscheduled": 0,
                "numberReady": 2,
                "numberUnavailable": 1,
                "observedGeneration": 1,
                "updatedNumberScheduled": 3,
            },
        },
    )
    plans = []
    for n, on in enumerate(WORKERS):
        name = f"jaeger-agent-{safe('jaeger-agent', on, length=5)}"
        affinity = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [on]}]}]
                }
            }
        }
        spec = container("jaeger-agent", image, cpu="50m", memory="64Mi", limit_memory="128Mi", port=None)
        spec["args"] = ["--reporter.grpc.host-port=jaeger:14250"]
        spec["ports"] = ports
        args: Json = {
            "name": name,
            "namespace": snap.ns,
            "labels": {"app": "jaeger-agent", "controller-revision-hash": "6b9d8f7c5", "pod-template-generation": "1"},
            "containers": [spec],
            "created": 1.5,
            "owner": ("DaemonSet", "jaeger-agent"),
            "affinity": affinity,
            "tolerations": [
                {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
            ],
        }
        snap.pack.event(
            1.5,
            snap.ns,
            "DaemonSet",
            "jaeger-agent",
            "SuccessfulCreate",
            f"Created pod: {name}",
            component="daemonset-controller",
        )
        if on == taken:
            message = (
                "0/4 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 3 node(s) "
                "didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 1 No preemption "
                "victims found for incoming pod, 3 Preemption is not helpful for scheduling."
            )
            args.update(
                phase="Pending",
                conditions=[
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": message,
                        "lastTransitionTime": snap.pack.ts(1.5),
                    }
                ],
            )
            snap.pack.event(
                1.51,
                snap.ns,
                "Pod",
                name,
                "FailedScheduling",
                message,
                type="Warning",
                component="default-scheduler",
                new_api=True,
                count=14,
                last=57,
            )
            plans.append(PodPlan(args, None, "jaeger-agent", healthy=False))
            continue
        args.update(
            node=on,
            ip=f"10.244.{WORKERS.index(on) + 1}.{80 + n}",
            statuses=[status(snap.pack, "jaeger-agent", image, state=running(snap.pack, 1.6))],
        )
        snap.pack.scheduled(1.51, snap.ns, name, on)
        plans.append(PodPlan(args, None, "jaeger-agent"))
    snap.pods["jaeger-agent"] = plans
    return snap.build()


def shipping_topology_spread() -> Pack:
    """shippingservice redeployed with a zone topology spread constraint (DoNotSchedule); the kind nodes carry no
    zone label."""
    snap = snapshot("heldout-shop-shipping-spread", SHOP_APP, "Why does checkout fail to get shipping quotes?")
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "shippingservice"}},
        }
    ]
    snap.rollout("shippingservice", topologySpreadConstraints=spread)
    _recreate(snap, "shippingservice")
    snap.pending_pod(
        "shippingservice",
        f"0/4 nodes are available: {_TAINTED}, 3 node(s) didn't match pod topology spread constraints (missing "
        f"required label). {_PREEMPT_NONE}",
    )
    snap.pods["shippingservice"][0].spec["topologySpreadConstraints"] = spread
    error = "failed to get shipping quote: " + _refused(snap, "shippingservice", 50051)
    _shop_frontend_lines(
        snap,
        [(m, error, "/cart") for m in range(4, 58, 6)]
        + [
            (
                m + 1,
                "failed to complete the order: rpc error: code = Internal desc = shipping quote failure: " + error,
                "/cart/checkout",
            )
            for m in range(4, 58, 12)
        ],
    )
    return snap.build()


# ================================================================================================ admission
def email_quota_requires_limits() -> Pack:
    """A compute quota with limits.cpu and limits.memory; emailservice redeployed with requests only: each pod its
    ReplicaSet creates is refused for want of limits."""
    snap = snapshot("heldout-shop-email-quota-limits", SHOP_APP, "Why do customers get no order confirmation emails?")
    _quota(
        snap,
        "compute-resources",
        {"requests.cpu": "4", "requests.memory": "8Gi", "limits.cpu": "16", "limits.memory": "16Gi"},
        {"requests.cpu": "1100m", "requests.memory": "704Mi", "limits.cpu": "11", "limits.memory": "5632Mi"},
    )
    spec = snap.container_of(snap.app.part("emailservice"))
    spec["resources"] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
    name = snap.pod_name("emailservice", 2, 4)
    _refused_rollout(
        snap,
        "emailservice",
        f'Error creating: pods "{name}" is forbidden: failed quota: compute-resources: must specify limits.cpu for: '
        "server; limits.memory for: server",
        containers=[spec],
    )
    return snap.build()


def geo_limit_range() -> Pack:
    """A LimitRange caps a container's memory at 1Gi; geo redeployed with a 2Gi limit is refused."""
    snap = snapshot("heldout-hotel-geo-limitrange", HOTEL_APP, "What is wrong in namespace hotel-res?")
    snap.add(
        "limitranges",
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": snap.meta("limitrange", "container-limits", created=-1000),
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "max": {"cpu": "2", "memory": "1Gi"},
                        "default": {"cpu": "1", "memory": "512Mi"},
                        "defaultRequest": {"cpu": "100m", "memory": "64Mi"},
                    }
                ]
            },
        },
    )
    spec = snap.container_of(snap.app.part("geo"))
    spec["resources"] = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "2Gi"}}
    _refused_rollout(
        snap,
        "geo",
        f'Error creating: pods "{snap.pod_name("geo", 2, 2)}" is forbidden: maximum memory usage per Container is '
        "1Gi, but limit is 2Gi",
        containers=[spec],
    )
    _hotel_lines(
        snap,
        "search",
        [
            (
                m,
                "ERR",
                "services/search/server.go:91",
                "Nearby error: rpc error: code = Unavailable desc = name resolver error: produced zero addresses",
            )
            for m in range(4, 58, 5)
        ],
    )
    return snap.build()


def cart_service_quota() -> Pack:
    """The cartservice Service was deleted to be re-applied; a cartservice-canary Service took the last slot of the
    namespace's services quota in between, so the re-creation was refused: no Service cartservice exists and the
    frontend cannot resolve it."""
    snap = snapshot("heldout-shop-cart-service-quota", SHOP_APP, "Why does the cart page fail in namespace boutique?")
    del snap.services["cartservice"]
    canary_ip = "10.96.188.41"
    snap.add(
        "services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": snap.meta("service", "cartservice-canary", created=0.5, labels={"app": "cartservice"}),
            "spec": {
                "type": "ClusterIP",
                "clusterIP": canary_ip,
                "clusterIPs": [canary_ip],
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "selector": {"app": "cartservice", "track": "canary"},
                "ports": [{"name": "grpc", "port": 7070, "targetPort": 7070, "protocol": "TCP"}],
                "sessionAffinity": "None",
            },
            "status": {"loadBalancer": {}},
        },
    )
    _quota(
        snap,
        "object-counts",
        {"services": "12", "services.loadbalancers": "0", "services.nodeports": "0", "pods": "30"},
        {"services": "12", "services.loadbalancers": "0", "services.nodeports": "0", "pods": "12"},
    )
    error = (
        'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp: '
        'lookup cartservice on 10.96.0.10:53: no such host"'
    )
    _shop_frontend_lines(
        snap,
        [(m, "could not retrieve cart: " + error, "/cart") for m in range(2, 58, 4)]
        + [(m + 1, "failed to add to cart: " + error, "/cart") for m in range(3, 58, 9)],
    )
    return snap.build()


def geo_statefulset_storage_quota() -> Pack:
    """mongodb-geo moved from a Deployment to a StatefulSet whose claim template asks 5Gi; the namespace's storage
    quota (8Gi, 6Gi used by the existing claims) refuses the claim, so its pod is never created."""
    snap = snapshot("heldout-hotel-mongodb-geo-storage-quota", HOTEL_APP, "Why is the map of nearby hotels empty?")
    for key in ("mongodb-geo",):
        del snap.deployments[key]
        del snap.replicasets[key]
        snap.pods[key] = []
    part = snap.app.part("mongodb-geo")
    labels = {snap.app.label: "mongodb-geo"}
    spec = snap.container_of(part)
    spec["volumeMounts"] = [{"name": "data", "mountPath": "/data/db"}]
    snap.add(
        "statefulsets",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": snap.meta("statefulset", "mongodb-geo", created=1.2, generation=1, labels=dict(labels)),
            "spec": {
                "replicas": 1,
                "serviceName": "mongodb-geo",
                "podManagementPolicy": "OrderedReady",
                "selector": {"matchLabels": dict(labels)},
                "template": {"metadata": {"labels": dict(labels)}, "spec": {"containers": [spec]}},
                "volumeClaimTemplates": [
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "5Gi"}},
                            "storageClassName": "standard",
                            "volumeMode": "Filesystem",
                        },
                    }
                ],
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            },
            "status": {
                "replicas": 0,
                "availableReplicas": 0,
                "currentReplicas": 0,
                "observedGeneration": 1,
                "currentRevision": "mongodb-geo-7c9f6d5b8d",
                "updateRevision": "mongodb-geo-7c9f6d5b8d",
                "collisionCount": 0,
            },
        },
    )
    _quota(
        snap,
        "storage-quota",
        {"requests.storage": "8Gi", "persistentvolumeclaims": "10"},
        {"requests.storage": "6Gi", "persistentvolumeclaims": "6"},
    )
    refusal = (
        'persistentvolumeclaims "data-mongodb-geo-0" is forbidden: exceeded quota: storage-quota, requested: '
        "requests.storage=5Gi, used: requests.storage=6Gi, limited: requests.storage=8Gi"
    )
    for reason_text in (
        f"create Claim data-mongodb-geo-0 for Pod mongodb-geo-0 in StatefulSet mongodb-geo failed error: {refusal}",
        f"create Pod mongodb-geo-0 in StatefulSet mongodb-geo failed error: failed to create PVC data-mongodb-geo-0: "
        f"{refusal}",
    ):
        snap.pack.event(
            1.25,
            snap.ns,
            "StatefulSet",
            "mongodb-geo",
            "FailedCreate",
            reason_text,
            type="Warning",
            component="statefulset-controller",
            count=22,
            last=58,
        )
    ip = snap.cluster_ip("mongodb-geo")
    _hotel_lines(
        snap,
        "geo",
        [
            (m, "ERR", "services/geo/server.go:84", f"Nearby: {_selection_error('mongodb-geo', ip)}")
            for m in range(3, 58, 5)
        ],
    )
    return snap.build()


def currency_pod_security() -> Pack:
    """The namespace was labelled to enforce the restricted Pod Security Standard; currencyservice's pod, evicted by
    a node drain, cannot come back: its template sets no securityContext."""
    snap = snapshot("heldout-shop-currency-pod-security", SHOP_APP, "Why does the frontend return 500 on every page?")
    name = snap.pod_name("currencyservice", 1, 3)
    snap.pack.event(
        1.9,
        snap.ns,
        "Pod",
        _pod_of(snap, "currencyservice")["name"],
        "Killing",
        "Stopping container server",
        host=snap.node_of("currencyservice"),
        field_path="spec.containers{server}",
    )
    _no_pods(
        snap,
        "currencyservice",
        f'Error creating: pods "{name}" is forbidden: violates PodSecurity "restricted:latest": '
        'allowPrivilegeEscalation != false (container "server" must set '
        "securityContext.allowPrivilegeEscalation=false), "
        'unrestricted capabilities (container "server" must set securityContext.capabilities.drop=["ALL"]), '
        'runAsNonRoot != true (pod or container "server" must set securityContext.runAsNonRoot=true), seccompProfile '
        '(pod or container "server" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    )
    error = "could not retrieve currencies: " + _refused(snap, "currencyservice", 7000)
    _shop_frontend_lines(snap, [(m, error, "/") for m in range(3, 58, 3)])
    return snap.build()


def shipping_webhook_denied() -> Pack:
    """A Gatekeeper constraint requires an ``owner`` label on every pod; shippingservice's template has none, and its
    pod, deleted by a node drain, is refused each time its ReplicaSet creates it."""
    snap = snapshot("heldout-shop-shipping-webhook", SHOP_APP, "What is wrong in namespace boutique?")
    _no_pods(
        snap,
        "shippingservice",
        'Error creating: admission webhook "validation.gatekeeper.sh" denied the request: [pods-must-have-owner] you '
        'must provide labels: {"owner"}',
    )
    error = "failed to get shipping quote: " + _refused(snap, "shippingservice", 50051)
    _shop_frontend_lines(snap, [(m, error, "/cart") for m in range(4, 58, 5)])
    return snap.build()


# ================================================================================================ start-up
def reservation_init_container() -> Pack:
    """reservation redeployed with an init container that migrates its database; the migration tool no longer has
    the flag its command passes, exits 1 at once, and the pod never gets past Init."""
    snap = snapshot(
        "heldout-hotel-reservation-init", HOTEL_APP, "Why can guests not book a room in namespace hotel-res?"
    )
    image = HOTEL_APP.part("reservation").image
    init = container("migrate", image, cpu="50m", memory="32Mi", port=None, command=("migrate",))
    init["args"] = ["--mongo-url", "mongodb://mongodb-reservation:27017/reservation-db", "--steps", "up"]
    snap.rollout("reservation", initContainers=[init])
    _recreate(snap, "reservation")
    pod = snap.waiting_pod("reservation", "PodInitializing", "")
    args = _pod_of(snap, "reservation")
    args["statuses"][0]["state"] = {"waiting": {"reason": "PodInitializing"}}
    args["init_containers"] = [init]
    pod_uid = uid(snap.pack.name, "pod", snap.ns, pod)
    args["init_statuses"] = [
        status(
            snap.pack,
            "migrate",
            image,
            state=waiting(
                "CrashLoopBackOff",
                f"back-off 5m0s restarting failed container=migrate pod={pod}_{snap.ns}({pod_uid})",
            ),
            ready=False,
            restarts=11,
            last=terminated(snap.pack, "Error", 1, 55.3, 55.31),
        )
    ]
    t = snap.pack.ts
    args["conditions"] = [
        {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": t(2.1)},
        {
            "type": "Initialized",
            "status": "False",
            "reason": "ContainersNotInitialized",
            "message": "containers with incomplete status: [migrate]",
            "lastTransitionTime": t(2.06),
        },
        {
            "type": "Ready",
            "status": "False",
            "reason": "ContainersNotReady",
            "message": "containers with unready status: [hotel-reserv-reservation]",
            "lastTransitionTime": t(2.06),
        },
        {
            "type": "ContainersReady",
            "status": "False",
            "reason": "ContainersNotReady",
            "message": "containers with unready status: [hotel-reserv-reservation]",
            "lastTransitionTime": t(2.06),
        },
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": t(2.05)},
    ]
    host = snap.node_of("reservation")
    for reason, message, kind, count in (
        ("Pulled", f'Container image "{image}" already present on machine', "Normal", 12),
        ("Created", "Created container migrate", "Normal", 12),
        ("Started", "Started container migrate", "Normal", 12),
        ("BackOff", f"Back-off restarting failed container migrate in pod {pod}_{snap.ns}({pod_uid})", "Warning", 240),
    ):
        snap.pack.event(
            2.1,
            snap.ns,
            "Pod",
            pod,
            reason,
            message,
            type=kind,
            host=host,
            field_path="spec.initContainers{migrate}",
            count=count,
            last=57.9,
        )
    snap.pack.pod_log(
        snap.ns,
        pod,
        [
            "Error: unknown flag: --mongo-url",
            "Usage:",
            "  migrate [flags]",
            "",
            "Flags:",
            "  -h, --help             help for migrate",
            '      --mongo string     MongoDB address (default "mongodb-reservation:27017")',
            '      --steps string     up or down (default "up")',
            "",
            "unknown flag: --mongo-url",
        ],
        container="migrate",
        previous=True,
    )
    _hotel_lines(
        snap,
        "frontend",
        [
            (
                m,
                "ERR",
                "services/frontend/server.go:412",
                "ReservationHandler: rpc error: code = Unavailable desc = name resolver error: produced zero addresses",
            )
            for m in range(5, 58, 6)
        ],
    )
    return snap.build()


def catalog_configmap_key() -> Pack:
    """productcatalogservice redeployed reading LOG_LEVEL from key LOG_LEVEL of configmap shop-config, whose keys
    are spelled log-level and currency-default."""
    snap = snapshot("heldout-shop-catalog-configmap-key", SHOP_APP, "Why does frontend show no products?")
    snap.add(
        "configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": snap.meta("cm", "shop-config", created=-2000),
            "data": {"log-level": "info", "currency-default": "USD", "catalog-refresh": "60s"},
        },
    )
    env = [{"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {"name": "shop-config", "key": "LOG_LEVEL"}}}]
    spec = snap.container_of(snap.app.part("productcatalogservice"), env=env)
    snap.rollout("productcatalogservice", containers=[spec])
    _recreate(snap, "productcatalogservice")
    message = f"couldn't find key LOG_LEVEL in ConfigMap {snap.ns}/shop-config"
    pod = snap.waiting_pod("productcatalogservice", "CreateContainerConfigError", message, container={"env": env})
    snap.kubelet_event(pod, "productcatalogservice", "Failed", f"Error: {message}", count=85)
    snap.kubelet_event(
        pod,
        "productcatalogservice",
        "Pulled",
        f'Container image "{SHOP_APP.part("productcatalogservice").image}" already present on machine',
        count=85,
        normal=True,
    )
    error = "could not retrieve products: " + _refused(snap, "productcatalogservice", 3550)
    _shop_frontend_lines(snap, [(m, error, "/") for m in range(3, 58, 3)])
    return snap.build()


def cart_image_typo() -> Pack:
    """redis-cart's image retagged redis:alpnie (a typo of alpine): the registry has no such tag."""
    snap = snapshot("heldout-shop-redis-image-typo", SHOP_APP, "Why is cartservice failing?")
    image = "redis:alpnie"
    spec = snap.container_of(snap.app.part("redis-cart"), image=image)
    snap.rollout("redis-cart", containers=[spec])
    _recreate(snap, "redis-cart")
    pod = snap.waiting_pod("redis-cart", "ImagePullBackOff", f'Back-off pulling image "{image}"', image=image)
    _pull_events(
        snap,
        pod,
        "redis-cart",
        image,
        'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/redis:alpnie": failed to '
        'resolve reference "docker.io/library/redis:alpnie": docker.io/library/redis:alpnie: not found',
    )
    cart = _pod_of(snap, "cartservice")
    lines = []
    for _ in range(3, 58, 5):
        lines += [
            "fail: cartservice.cartstore.RedisCartStore[0]",
            "      StackExchange.Redis.RedisConnectionException: It was not possible to connect to the redis "
            "server(s). "
            "UnableToConnect on redis-cart:6379/Interactive, Initializing/NotStarted, last: NONE, origin: "
            "BeginConnectAsync, outstanding: 0, last-read: 0s ago, last-write: 0s ago, keep-alive: 60s, state: "
            "Connecting, mgr: 10 of 10 available, last-heartbeat: never, global: 0s ago, v: 2.6.122.38350",
        ]
    snap.pack.pod_log(snap.ns, cart["name"], lines, container="server")
    return snap.build()


def payment_registry_unauthorized() -> Pack:
    """paymentservice moved to a private GHCR repository; its pull secret ghcr-pull exists but holds an expired token:
    the registry answers 401."""
    snap = snapshot("heldout-shop-payment-registry-401", SHOP_APP, "Why does checkout fail to charge cards?")
    image = "ghcr.io/acme-shop/paymentservice:v0.10.1"
    spec = snap.container_of(snap.app.part("paymentservice"), image=image)
    snap.rollout("paymentservice", containers=[spec], imagePullSecrets=[{"name": "ghcr-pull"}])
    _recreate(snap, "paymentservice")
    pod = snap.waiting_pod("paymentservice", "ImagePullBackOff", f'Back-off pulling image "{image}"', image=image)
    snap.pods["paymentservice"][0].spec["imagePullSecrets"] = [{"name": "ghcr-pull"}]
    _pull_events(
        snap,
        pod,
        "paymentservice",
        image,
        f'rpc error: code = Unknown desc = failed to pull and unpack image "{image}": failed to resolve reference '
        f'"{image}": failed to authorize: failed to fetch oauth token: unexpected status from GET request to '
        "https://ghcr.io/token?scope=repository%3Aacme-shop%2Fpaymentservice%3Apull&service=ghcr.io: 401 Unauthorized",
    )
    snap.add(
        "secrets",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": snap.meta("secret", "ghcr-pull", created=-9000),
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": "eyJhdXRocyI6eyJnaGNyLmlvIjp7fX19"},
        },
    )
    error = (
        "failed to complete the order: rpc error: code = Internal desc = failed to charge card: could not charge "
        "the card: " + _refused(snap, "paymentservice", 50051)
    )
    _shop_frontend_lines(snap, [(m, error, "/cart/checkout") for m in range(4, 58, 6)])
    return snap.build()


def recommendation_claim_missing() -> Pack:
    """mongodb-recommendation redeployed mounting claim recommendation-pvc-v2, which was never created."""
    snap = snapshot("heldout-hotel-mongodb-recommendation-claim", HOTEL_APP, "Why are hotel recommendations empty?")
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "recommendation-pvc-v2"}}]
    snap.rollout("mongodb-recommendation", volumes=volumes)
    _recreate(snap, "mongodb-recommendation")
    snap.pending_pod(
        "mongodb-recommendation",
        f'0/4 nodes are available: persistentvolumeclaim "recommendation-pvc-v2" not found. {_PREEMPT_NONE}',
        volumes=volumes,
    )
    ip = snap.cluster_ip("mongodb-recommendation")
    _hotel_lines(
        snap,
        "recommendation",
        [
            (
                m,
                "ERR",
                "services/recommendation/server.go:104",
                f"GetRecommendations: {_selection_error('mongodb-recommendation', ip)}",
            )
            for m in range(4, 58, 6)
        ],
    )
    return snap.build()


# ================================================================================================ apps (Cluster)
def _containers(work: Workload) -> list[Json]:
    """The workload's container spec in its pod, its Deployment's template and its ReplicaSet's template."""
    return [
        work.pod["spec"]["containers"][0],
        work.deployment["spec"]["template"]["spec"]["containers"][0],
        work.replicaset["spec"]["template"]["spec"]["containers"][0],
    ]


def _redis_ts(pack: Pack, minute: float) -> str:
    at = pack.at(minute)
    return at.strftime("%d %b %Y %H:%M:%S.") + f"{(int(minute * 60000) % 1000):03d}"


def _cart_fail(exception: str) -> list[str]:
    """cartservice's .NET console logger: a category line, then the message indented."""
    return ["fail: cartservice.cartstore.RedisCartStore[0]", f"      {exception}"]


def _no_endpoints(work: Workload) -> None:
    work.endpoints.pop("subsets", None)
    work.slice["endpoints"] = None


def _scale_to_zero(c: Cluster, name: str, minute: float) -> None:
    work = c.apps[name]
    work.deployment["spec"]["replicas"] = 0
    work.deployment["metadata"]["generation"] = 2
    work.deployment["status"] = {"observedGeneration": 2, "conditions": work.deployment["status"]["conditions"]}
    work.replicaset["spec"]["replicas"] = 0
    work.replicaset["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "0"
    work.replicaset["status"] = {"replicas": 0, "observedGeneration": 2}
    c.pack._k8s["pods"].remove(work.pod)
    work.logs.clear()
    _no_endpoints(work)
    c.pack.event(
        minute,
        c.ns,
        "Deployment",
        name,
        "ScalingReplicaSet",
        f"Scaled down replica set {work.replicaset['metadata']['name']} to 0 from 1",
        component="deployment-controller",
    )
    c.pack.event(
        minute + 0.01,
        c.ns,
        "Pod",
        work.pod_name,
        "Killing",
        f"Stopping container {work.svc.container}",
        host=work.pod["spec"]["nodeName"],
        field_path=f"spec.containers{{{work.svc.container}}}",
    )


def cart_wrong_command() -> Pack:
    """cartservice's command set to ``dotnet cartservice.dll``; its image is a self-contained build on
    runtime-deps, which has no dotnet host: the runtime cannot start it."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-cart-dotnet-command", "Why can users not see their cart?")
    work = c.apps["cartservice"]
    for spec in _containers(work):
        spec["command"] = ["dotnet", "cartservice.dll"]
    message = (
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
        'unable to start container process: exec: "dotnet": executable file not found in $PATH: unknown'
    )
    c.crash_loop(work, "StartError", 128, restarts=7, message=message)
    work.pod["status"]["containerStatuses"][0]["lastState"]["terminated"]["startedAt"] = "1970-01-01T00:00:00Z"
    c.event(work, "Failed", f"Error: {message}", count=8, first=20)
    work.logs.clear()
    error = "could not retrieve cart: " + _grpc_refused(work.cluster_ip, 7070)
    for m in range(21, 58, 3):
        c.apps["frontend"].log(_frontend_error(c.pack, m, error, "/cart"))
    return c.build()


def cart_redis_read_only_volume() -> Pack:
    """redis-cart's /data is mounted read-only: its background saves fail, and with stop-writes-on-bgsave-error
    Redis refuses every write; cartservice cannot store carts."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-redis-read-only", "Why can't users add items to their cart?")
    redis, cart = c.apps["redis-cart"], c.apps["cartservice"]
    for spec in _containers(redis):
        spec["volumeMounts"] = [{"name": "redis-data", "mountPath": "/data", "readOnly": True}]
    for pod_spec in (
        redis.pod["spec"],
        redis.deployment["spec"]["template"]["spec"],
        redis.replicaset["spec"]["template"]["spec"],
    ):
        pod_spec["volumes"] = [{"name": "redis-data", "emptyDir": {}}, *pod_spec.get("volumes", [])]
    p = c.pack
    lines = []
    for i, m in enumerate(range(2, 58, 4)):
        pid = 211 + i
        lines += [
            f"1:M {_redis_ts(p, m)} * 100 changes in 300 seconds. Saving...",
            f"1:M {_redis_ts(p, m + 0.001)} * Background saving started by pid {pid}",
            f"{pid}:C {_redis_ts(p, m + 0.002)} # Failed opening the temp RDB file temp-{pid}.rdb (in server root "
            "dir /data) for saving: Read-only file system",
            f"1:M {_redis_ts(p, m + 0.1)} # Background saving error",
        ]
    redis.logs.clear()
    redis.log(*lines)
    misconf = (
        "StackExchange.Redis.RedisServerException: MISCONF Redis is configured to save RDB snapshots, but it's "
        "currently unable to persist to disk. Commands that may modify the data set are disabled, because this "
        "instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error "
        "option). Please check the Redis logs for details about the RDB error."
    )
    for m in range(3, 58, 5):
        cart.log(*_cart_fail(misconf))
        c.apps["frontend"].log(
            _frontend_error(
                p,
                m,
                "failed to add to cart: rpc error: code = FailedPrecondition desc = Can't access cart storage. "
                + misconf,
                "/cart",
            )
        )
    return c.build()


# ================================================================================================ runtime
def redis_liveness_wrong_port() -> Pack:
    """redis-cart's TCP liveness probe checks 6380; Redis listens on 6379: the kubelet restarts it every 30 s."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-redis-liveness", "Why does the cart lose its items?")
    redis = c.apps["redis-cart"]
    probe = {
        "tcpSocket": {"port": 6380},
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "failureThreshold": 3,
        "successThreshold": 1,
        "initialDelaySeconds": 5,
    }
    for spec in _containers(redis):
        spec["livenessProbe"] = probe
    redis.pod["status"]["containerStatuses"][0].update(
        restartCount=31, state=running(c.pack, 57.6), lastState=terminated(c.pack, "Completed", 0, 57, 57.5)
    )
    ip = redis.pod_ip
    c.event(redis, "Unhealthy", f"Liveness probe failed: dial tcp {ip}:6380: connect: connection refused", count=93)
    c.event(redis, "Killing", "Container redis failed liveness probe, will be restarted", count=31, warning=False)
    c.event(redis, "Pulled", 'Container image "redis:alpine" already present on machine', count=31, warning=False)
    p = c.pack
    redis.logs.clear()
    redis.log(
        f"1:C {_redis_ts(p, 57.51)} # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
        f"1:C {_redis_ts(p, 57.51)} # Redis version=7.2.4, bits=64, commit=00000000, modified=0, pid=1, just started",
        f"1:M {_redis_ts(p, 57.52)} * Running mode=standalone, port=6379.",
        f"1:M {_redis_ts(p, 57.52)} * Server initialized",
        f"1:M {_redis_ts(p, 57.53)} * Ready to accept connections tcp",
    )
    redis.log(
        f"1:M {_redis_ts(p, 57.0)} # User requested shutdown...",
        f"1:M {_redis_ts(p, 57.0)} * Saving the final RDB snapshot before exiting.",
        f"1:M {_redis_ts(p, 57.01)} * DB saved on disk",
        f"1:M {_redis_ts(p, 57.01)} # Redis is now ready to exit, bye bye...",
        previous=True,
    )
    for _ in range(4, 58, 6):
        c.apps["cartservice"].log(
            *_cart_fail(
                "StackExchange.Redis.RedisConnectionException: No connection is active/available to service this "
                "operation: HGET 8c1f4a9e; SocketClosed on redis-cart:6379/Interactive, Idle/MarkProcessed, "
                "last: HGET, "
                "origin: ReadFromPipe, outstanding: 1"
            )
        )
    return c.build()


def frontend_readiness_timeout() -> Pack:
    """frontend's readiness probe allows 1 s; its /_healthz answers in 1.3-1.6 s on its starved CPU: the pod is never
    ready, so frontend-external has no endpoint."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-frontend-readiness", "Why is the shop's website unreachable?")
    work = c.apps["frontend"]
    probe = http_probe("/_healthz", 8080, period=5, timeout=1, failures=3)
    for spec in _containers(work):
        spec["readinessProbe"] = probe
    c.not_ready(work, state=running(c.pack, -6))
    for eps in c.pack._k8s["endpoints"]:
        if eps["metadata"]["name"] == "frontend-external" and eps.get("subsets"):
            eps["subsets"][0]["notReadyAddresses"] = eps["subsets"][0].pop("addresses")
    ip = work.pod_ip
    c.event(
        work,
        "Unhealthy",
        f'Readiness probe failed: Get "http://{ip}:8080/_healthz": context deadline exceeded (Client.Timeout exceeded '
        "while awaiting headers)",
        count=712,
        first=-5.8,
    )
    for m in range(2, 58, 4):
        work.log(
            json.dumps(
                {
                    "http.req.id": f"{safe('hz', m, length=8)}-91d2-4f0e-8a7b-{safe('hzr', m, length=12)}",
                    "http.req.method": "GET",
                    "http.req.path": "/_healthz",
                    "http.resp.bytes": 2,
                    "http.resp.status": 200,
                    "http.resp.took_ms": 1300 + (m * 37) % 300,
                    "message": "request complete",
                    "severity": "debug",
                    "timestamp": c.pack.ts(m).replace("Z", ".611Z"),
                }
            )
        )
        c.apps["loadgenerator"].log("GET /  0  ConnectionRefusedError(111, 'Connection refused')")
    return c.build()


def mongodb_rate_oom() -> Pack:
    """mongodb-rate's memory limit was lowered to 128Mi: WiredTiger's cache outgrows it, the kernel kills mongod."""
    c = Cluster(HOTEL_SHAPE, "heldout-hotel-mongodb-rate-oom", "Why does rate keep failing?")
    db, rate = c.apps["mongodb-rate"], c.apps["rate"]
    for spec in _containers(db):
        spec["resources"] = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}}
    c.crash_loop(db, "OOMKilled", 137, restarts=9)
    p = c.pack
    db.logs.clear()
    db.log(
        json.dumps(
            {
                "t": {"$date": p.ts(54).replace("Z", ".102+00:00")},
                "s": "I",
                "c": "STORAGE",
                "id": 22315,
                "ctx": "initandlisten",
                "msg": "Opening WiredTiger",
                "attr": {"config": "create,cache_size=256M,session_max=33000,eviction=(threads_min=4,threads_max=4)"},
            },
            separators=(",", ":"),
        ),
        previous=True,
    )
    for m in range(3, 58, 5):
        rate.log(
            _zlog(
                p,
                m,
                "ERR",
                "services/rate/server.go:93",
                f"GetRates: {_selection_error('mongodb-rate', db.cluster_ip)}",
            )
        )
    return c.build()


def frontend_port_in_use() -> Pack:
    """An oauth2-proxy sidecar added to frontend's pod listens on 0.0.0.0:8080 (meant: 4180); the frontend server
    cannot bind its own port and exits."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-frontend-port-in-use", "Why is frontend crashing?")
    work = c.apps["frontend"]
    sidecar = container("oauth2-proxy", "quay.io/oauth2-proxy/oauth2-proxy:v7.6.0", cpu="10m", memory="32Mi", port=4180)
    sidecar["args"] = ["--http-address=0.0.0.0:8080", "--upstream=http://127.0.0.1:8080", "--provider=oidc"]
    for pod_spec in (
        work.pod["spec"],
        work.deployment["spec"]["template"]["spec"],
        work.replicaset["spec"]["template"]["spec"],
    ):
        pod_spec["containers"].append(json.loads(json.dumps(sidecar)))
    c.crash_loop(work, "Error", 1, restarts=12)
    work.pod["status"]["containerStatuses"].append(
        status(c.pack, "oauth2-proxy", sidecar["image"], state=running(c.pack, -20))
    )
    work.logs.clear()
    work.log(
        json.dumps(
            {"message": "starting frontend service on port 8080", "severity": "info", "timestamp": c.pack.ts(54.1)}
        ),
        json.dumps(
            {
                "message": "listen tcp :8080: bind: address already in use",
                "severity": "fatal",
                "timestamp": c.pack.ts(54.1),
            }
        ),
        previous=True,
    )
    c.pack.pod_log(
        c.ns,
        work.pod_name,
        [
            '[2025/06/10 08:40:02] [proxy.go:89] mapping path "/" => upstream "http://127.0.0.1:8080"',
            "[2025/06/10 08:40:02] [oauthproxy.go:167] OAuthProxy configured for OpenID Connect Client ID: shop",
            "[2025/06/10 08:40:02] [http.go:60] HTTP: listening on 0.0.0.0:8080",
        ],
        container="oauth2-proxy",
    )
    return c.build()


def adservice_scaled_to_zero() -> Pack:
    """adservice's Deployment was scaled to 0 replicas; the frontend's ad calls are refused."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-adservice-zero", "Why does frontend log warnings about ads?")
    _scale_to_zero(c, "adservice", 2)
    ip = c.apps["adservice"].cluster_ip
    for m in range(4, 58, 4):
        c.apps["frontend"].log(
            json.dumps(
                {
                    "error": _grpc_refused(ip, 9555),
                    "http.req.path": "/product/OLJCESPC7Z",
                    "message": "failed to retrieve ads",
                    "severity": "warning",
                    "timestamp": c.pack.ts(m),
                }
            )
        )
    return c.build()


def redis_wrong_password() -> Pack:
    """redis-cart restarted with a rotated requirepass; cartservice still sends the old password."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-redis-auth", "Why does the cart page fail in namespace online-boutique?")
    redis, cart = c.apps["redis-cart"], c.apps["cartservice"]
    env = [{"name": "REDIS_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "redis-auth", "key": "password"}}}]
    for spec in _containers(redis):
        spec["args"] = ["--requirepass", "$(REDIS_PASSWORD)"]
        spec["env"] = env
    redis.pod["status"]["containerStatuses"][0]["state"] = running(c.pack, 1.5)
    c.pack.event(
        1.4,
        c.ns,
        "Deployment",
        "redis-cart",
        "ScalingReplicaSet",
        f"Scaled up replica set {redis.replicaset['metadata']['name']} to 1",
        component="deployment-controller",
    )
    error = (
        "StackExchange.Redis.RedisConnectionException: It was not possible to connect to the redis server(s). There "
        "was an authentication failure; check that passwords (or client certificates) are configured correctly: "
        "(RedisServerException) WRONGPASS invalid username-password pair or user is disabled."
    )
    for m in range(2, 58, 4):
        cart.log(*_cart_fail(error))
        c.apps["frontend"].log(
            _frontend_error(
                c.pack,
                m,
                "failed to get cart: rpc error: code = FailedPrecondition desc = Can't access cart storage. " + error,
                "/cart",
            )
        )
    return c.build()


def redis_replica_read_only() -> Pack:
    """redis-cart restarted as a replica of an address from an old setup (replicaof 10.96.200.4 6379): replicas
    refuse writes, and the master it names does not answer."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-redis-readonly", "Why can users not check out their carts?")
    redis, cart = c.apps["redis-cart"], c.apps["cartservice"]
    for spec in _containers(redis):
        spec["args"] = ["--replicaof", "10.96.200.4", "6379"]
    p = c.pack
    lines = [f"1:S {_redis_ts(p, 1.2)} * Ready to accept connections tcp"]
    for m in range(1, 58, 3):
        lines += [
            f"1:S {_redis_ts(p, m + 0.3)} * Connecting to MASTER 10.96.200.4:6379",
            f"1:S {_redis_ts(p, m + 0.3)} * MASTER <-> REPLICA sync started",
            f"1:S {_redis_ts(p, m + 0.31)} # Error condition on socket for SYNC: Connection refused",
        ]
    redis.logs.clear()
    redis.log(*lines)
    error = "StackExchange.Redis.RedisServerException: READONLY You can't write against a read only replica."
    for m in range(3, 58, 4):
        cart.log(*_cart_fail(error))
        c.apps["frontend"].log(
            _frontend_error(
                p,
                m,
                "failed to add to cart: rpc error: code = FailedPrecondition desc = Can't access cart storage. "
                + error,
                "/cart",
            )
        )
    return c.build()


def mongodb_reservation_max_connections() -> Pack:
    """mongodb-reservation runs with --maxConns 20; reservation's connection pool wants more: mongod closes each
    connection past the limit at once."""
    c = Cluster(
        HOTEL_SHAPE, "heldout-hotel-mongodb-reservation-conns", "Why do bookings fail in namespace hotel-reservation?"
    )
    db, res = c.apps["mongodb-reservation"], c.apps["reservation"]
    for spec in _containers(db):
        spec["args"] = ["--maxConns", "20"]
    p = c.pack
    for m in range(2, 58, 2):
        db.log(
            json.dumps(
                {
                    "t": {"$date": p.ts(m).replace("Z", ".517+00:00")},
                    "s": "I",
                    "c": "NETWORK",
                    "id": 22942,
                    "ctx": "listener",
                    "msg": "Connection refused because there are too many open connections",
                    "attr": {"remote": f"{res.pod_ip}:{44000 + m * 7}", "connectionCount": 20},
                },
                separators=(",", ":"),
            )
        )
        if m % 4 == 0:
            res.log(
                _zlog(
                    p,
                    m + 0.01,
                    "ERR",
                    "services/reservation/server.go:213",
                    "MakeReservation: connection() error occurred during connection handshake: connection(mongodb-"
                    f"reservation:27017[-{300 + m}]) socket was unexpectedly closed: EOF",
                )
            )
    return c.build()


def rate_bad_config_value() -> Pack:
    """rate's memcached timeout set to "2s" in its config (it expects whole seconds): rate panics parsing it."""
    c = Cluster(HOTEL_SHAPE, "heldout-hotel-rate-bad-config", "Why is rate crashing?")
    work = c.apps["rate"]
    c.crash_loop(work, "Error", 2, restarts=8)
    p = c.pack
    work.logs.clear()
    work.log(
        _zlog(p, 54, "INF", "cmd/rate/main.go:38", "Reading config..."),
        _zlog(p, 54, "INF", "cmd/rate/main.go:51", "Read database URL: mongodb-rate:27017"),
        _zlog(p, 54, "INF", "cmd/rate/main.go:52", "Read memcached address: memcached-rate:11211"),
        _zlog(
            p,
            54,
            "PNC",
            "cmd/rate/main.go:58",
            'Got error while parsing memcached timeout: strconv.Atoi: parsing "2s": invalid syntax',
        ),
        'panic: Got error while parsing memcached timeout: strconv.Atoi: parsing "2s": invalid syntax',
        "",
        "goroutine 1 [running]:",
        "github.com/rs/zerolog.(*Logger).Panic.func1({0xc000184000, 0x56})",
        "\t/go/pkg/mod/github.com/rs/zerolog@v1.31.0/log.go:375 +0x2d",
        "main.main()",
        "\t/workspace/cmd/rate/main.go:58 +0x4f1",
        previous=True,
    )
    for m in range(4, 58, 5):
        c.apps["search"].log(
            _zlog(
                p,
                m,
                "ERR",
                "services/search/server.go:104",
                "GetRates error: rpc error: code = Unavailable desc = name resolver error: produced zero addresses",
            )
        )
    return c.build()


# ================================================================================================ service routing
def shipping_selector_extra_label() -> Pack:
    """shippingservice's Service selects app=shippingservice,version=v2; its pods carry no version label."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-shipping-selector", "What is wrong in namespace online-boutique?")
    work = c.apps["shippingservice"]
    work.service["spec"]["selector"] = {"app": "shippingservice", "version": "v2"}
    _no_endpoints(work)
    error = "failed to get shipping quote: " + _grpc_refused(work.cluster_ip, 50051)
    for m in range(3, 58, 4):
        c.apps["frontend"].log(_frontend_error(c.pack, m, error, "/cart"))
    for m in range(5, 58, 10):
        c.apps["frontend"].log(
            _frontend_error(
                c.pack,
                m,
                "failed to complete the order: rpc error: code = Internal desc = shipping quote failure: " + error,
                "/cart/checkout",
            )
        )
    return c.build()


def cart_named_target_port() -> Pack:
    """cartservice's Service targets the named port grpc-server (from a chart's defaults); its container names its
    port grpc: the endpoints controller finds no port, so the Service has no address."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-cart-named-port", "Why can frontend not load carts?")
    work = c.apps["cartservice"]
    work.service["spec"]["ports"] = [{"name": "grpc", "port": 7070, "targetPort": "grpc-server", "protocol": "TCP"}]
    work.endpoints.pop("subsets", None)
    work.slice["ports"] = []
    error = "could not retrieve cart: " + _grpc_refused(work.cluster_ip, 7070)
    for m in range(2, 58, 3):
        c.apps["frontend"].log(_frontend_error(c.pack, m, error, "/cart"))
    return c.build()


def payment_network_policy() -> Pack:
    """A NetworkPolicy admits ingress to paymentservice only from app=frontend (meant: checkoutservice): checkout's
    calls to payment are dropped and time out."""
    return _payment_policy(
        "heldout-shop-payment-netpol",
        {"matchLabels": {"app": "paymentservice"}},
        [{"podSelector": {"matchLabels": {"app": "frontend"}}}],
    )


def payment_network_policy_expressions() -> Pack:
    """The same fault written with expressions: the policy selects ``app in (paymentservice)`` and admits the
    monitoring namespace's scrapers and pods ``tier in (web)``; checkoutservice is neither."""
    return _payment_policy(
        "heldout-shop-payment-netpol-expr",
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["paymentservice"]}]},
        [
            {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
            },
            {"podSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}},
        ],
    )


def _payment_policy(name: str, chooser: dict[str, Any], peers: list[dict[str, Any]]) -> Pack:
    c = Cluster(SHOP_SHAPE, name, "Why does checkoutservice fail to charge cards?")
    work = c.apps["paymentservice"]
    c.pack.objects(
        "networkpolicies",
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": c.meta("networkpolicy", "paymentservice-ingress", created=1),
            "spec": {
                "podSelector": chooser,
                "policyTypes": ["Ingress"],
                "ingress": [{"from": peers, "ports": [{"protocol": "TCP", "port": 50051}]}],
            },
        },
    )
    timeout = (
        'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp '
        f'{work.cluster_ip}:50051: i/o timeout"'
    )
    for m in range(3, 58, 4):
        c.apps["checkoutservice"].log(
            json.dumps(
                {
                    "message": '[PlaceOrder] user_id="8c1f4a9e" user_currency="USD"',
                    "severity": "info",
                    "timestamp": c.pack.ts(m),
                }
            )
        )
        c.apps["frontend"].log(
            _frontend_error(
                c.pack,
                m + 0.4,
                "failed to complete the order: rpc error: code = Internal desc = failed to charge card: could not "
                "charge the card: " + timeout,
                "/cart/checkout",
            )
        )
    return c.build()


def currency_protocol_mismatch() -> Pack:
    """currencyservice's Service targets 9464, the container's Prometheus (HTTP/1.1) port, instead of its gRPC 7000:
    the frontend's gRPC client reads an HTTP/1.1 answer as a frame."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-currency-protocol", "Why can frontend not show prices?")
    work = c.apps["currencyservice"]
    for spec in _containers(work):
        spec["ports"] = [
            {"name": "grpc", "containerPort": 7000, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9464, "protocol": "TCP"},
        ]
    work.service["spec"]["ports"][0]["targetPort"] = 9464
    work.endpoints["subsets"][0]["ports"][0]["port"] = 9464
    work.slice["ports"][0]["port"] = 9464
    error = (
        'could not retrieve currencies: rpc error: code = Unavailable desc = connection error: desc = "error reading '
        'server preface: http2: frame too large"'
    )
    for m in range(2, 58, 3):
        c.apps["frontend"].log(_frontend_error(c.pack, m, error, "/"))
    return c.build()


def ingress_missing_service() -> Pack:
    """The shop's Ingress routes shop.example.com to Service frontend-svc; the Service is named frontend (and
    frontend-external): ingress-nginx answers 503."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-ingress-backend", "Why does shop.example.com return 503?")
    c.pack.objects(
        "ingresses",
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": c.meta(
                "ingress",
                "online-boutique",
                created=0.6,
                generation=2,
                annotations={"nginx.ingress.kubernetes.io/proxy-body-size": "8m"},
            ),
            "spec": {
                "ingressClassName": "nginx",
                "rules": [
                    {
                        "host": "shop.example.com",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": "frontend-svc", "port": {"number": 80}}},
                                }
                            ]
                        },
                    }
                ],
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "172.18.255.201"}]}},
        },
    )
    c.pack.event(
        0.61,
        c.ns,
        "Ingress",
        "online-boutique",
        "Sync",
        "Scheduled for sync",
        component="nginx-ingress-controller",
        count=2,
        last=0.9,
    )
    controller = "ingress-nginx-controller-5f8c6d7b9-qx2lm"
    image = "registry.k8s.io/ingress-nginx/controller:v1.10.1"
    c.pack.pod(
        controller,
        "ingress-nginx",
        labels={"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"},
        node="kind-control-plane",
        containers=[container("controller", image, port=80)],
        statuses=[status(c.pack, "controller", image, state=running(c.pack, -3000))],
        created=-3000,
        owner=("ReplicaSet", "ingress-nginx-controller-5f8c6d7b9"),
        ip="10.244.0.7",
    )
    lines = []
    for m in range(1, 58, 2):
        at = c.pack.at(m)
        stamp = at.strftime("%m%d %H:%M:%S.") + f"{(m * 7919) % 1000000:06d}"
        lines.append(
            f'W{stamp}       7 controller.go:1214] Error obtaining Endpoints for Service "{c.ns}/frontend-svc": '
            f'no object matching key "{c.ns}/frontend-svc" in local store'
        )
        lines.append(
            f'172.18.0.1 - - [{at.strftime("%d/%b/%Y:%H:%M:%S")} +0000] "GET / HTTP/1.1" 503 190 "-" '
            '"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36" 482 0.000 '
            f"[{c.ns}-frontend-svc-80] [] - - - - {safe('ingress', m, length=32)}"
        )
    c.pack.pod_log("ingress-nginx", controller, lines, container="controller")
    return c.build()


def checkout_unknown_shipping_host() -> Pack:
    """checkoutservice's SHIPPING_SERVICE_ADDR set to shipping-service:50051; the Service is shippingservice, so the
    name does not resolve."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-checkout-dns", "Why does placing an order fail in namespace online-boutique?")
    work = c.apps["checkoutservice"]
    for spec in _containers(work):
        for env in spec.get("env", []):
            if env["name"] == "SHIPPING_SERVICE_ADDR":
                env["value"] = "shipping-service:50051"
    for m in range(4, 58, 4):
        work.log(
            json.dumps(
                {
                    "message": '[PlaceOrder] user_id="3f0a9c1d" user_currency="EUR"',
                    "severity": "info",
                    "timestamp": c.pack.ts(m),
                }
            )
        )
        c.apps["frontend"].log(
            _frontend_error(
                c.pack,
                m + 0.2,
                "failed to complete the order: rpc error: code = Internal desc = shipping quote failure: failed to "
                'get shipping quote: rpc error: code = Unavailable desc = connection error: desc = "transport: Error '
                'while dialing: dial tcp: lookup shipping-service on 10.96.0.10:53: no such host"',
                "/cart/checkout",
            )
        )
    return c.build()


def frontend_dns_policy_none() -> Pack:
    """frontend's pods were given dnsPolicy None with a public nameserver: no Service name resolves for it."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-frontend-dns-policy", "Why is the shop's front page failing?")
    work = c.apps["frontend"]
    for spec in (
        work.pod["spec"],
        work.deployment["spec"]["template"]["spec"],
        work.replicaset["spec"]["template"]["spec"],
    ):
        spec["dnsPolicy"] = "None"
        spec["dnsConfig"] = {"nameservers": ["8.8.8.8"], "searches": ["online-boutique.svc.cluster.local"]}
    for m in range(3, 58, 3):
        work.log(
            _frontend_error(
                c.pack,
                m,
                "could not retrieve currencies: rpc error: code = Unavailable desc = connection error: desc = "
                '"transport: Error while dialing: dial tcp: lookup currencyservice on 8.8.8.8:53: no such host"',
                "/",
            )
        )
    return c.build()


# ================================================================================================ infrastructure
def _node_condition(snap: Snapshot, node: str, kind: str, status_: str, reason: str, message: str, at: float) -> None:
    for cond in snap.nodes[node]["status"]["conditions"]:
        if cond["type"] == kind:
            cond.update(status=status_, reason=reason, message=message, lastTransitionTime=snap.pack.ts(at))


def _not_ready_pods(snap: Snapshot, node: str, at: float) -> None:
    """The node lifecycle controller marks the node's pods not ready (their Endpoints lose them)."""
    for part, plans in snap.pods.items():
        for plan in plans:
            if plan.args.get("node") != node or not plan.healthy:
                continue
            plan.healthy = False
            for s in plan.args["statuses"]:
                s["ready"] = False
            snap.set_unavailable(part)
            plan.args["conditions"] = [
                {"type": "Ready", "status": "False", "lastTransitionTime": snap.pack.ts(at)},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": snap.pack.ts(BORN)},
            ]
            snap.pack.event(
                at,
                snap.ns,
                "Pod",
                plan.args["name"],
                "NodeNotReady",
                "Node is not ready",
                type="Warning",
                component="node-controller",
            )


def _system(snap: Snapshot, prefix: str, on: str | None = None) -> PodPlan:
    return next(p for p in snap.system if p.args["name"].startswith(prefix) and (on is None or p.args["node"] == on))


def worker_cni_not_ready() -> Pack:
    """kindnet crash-loops on kind-worker3 (its CNI config cannot be written): the kubelet reports the network not
    ready, the node goes NotReady and its pods leave their Services."""
    snap = snapshot("heldout-shop-worker3-cni", SHOP_APP, "Why is frontend returning errors?")
    down = WORKERS[2]
    kindnet = _system(snap, "kindnet", down)
    name = kindnet.args["name"]
    image = kindnet.args["containers"][0]["image"]
    kindnet.args["statuses"] = [
        status(
            snap.pack,
            "kindnet-cni",
            image,
            state=waiting(
                "CrashLoopBackOff",
                f"back-off 2m40s restarting failed container=kindnet-cni pod={name}_kube-system"
                f"({uid(snap.pack.name, 'pod', 'kube-system', name)})",
            ),
            ready=False,
            restarts=6,
            last=terminated(snap.pack, "Error", 2, 54, 54.02),
        )
    ]
    kindnet.healthy = False
    snap.pack.pod_log(
        "kube-system",
        name,
        [
            "I0914 13:54:00.117310       1 main.go:109] connected to apiserver: https://10.96.0.1:443",
            "I0914 13:54:00.117402       1 main.go:139] hostIP = 172.18.0.5",
            "podIP = 172.18.0.5",
            "panic: open /etc/cni/net.d/10-kindnet.conflist.temp: read-only file system",
            "",
            "goroutine 1 [running]:",
            "main.main()",
            "\t/go/src/cmd/kindnetd/main.go:184 +0x9d1",
        ],
        container="kindnet-cni",
        previous=True,
    )
    snap.pack.event(
        50,
        "kube-system",
        "Pod",
        name,
        "BackOff",
        f"Back-off restarting failed container kindnet-cni in pod {name}_kube-system"
        f"({uid(snap.pack.name, 'pod', 'kube-system', name)})",
        type="Warning",
        host=down,
        field_path="spec.containers{kindnet-cni}",
        count=21,
        last=57.5,
    )
    _node_condition(
        snap,
        down,
        "Ready",
        "False",
        "KubeletNotReady",
        "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network "
        "plugin returns error: cni plugin not initialized",
        53.6,
    )
    snap.nodes[down]["spec"]["taints"] = [
        {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule", "timeAdded": snap.pack.ts(53.6)},
        {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute", "timeAdded": snap.pack.ts(53.7)},
    ]
    snap.pack.event(
        53.6,
        "default",
        "Node",
        down,
        "NodeNotReady",
        f"Node {down} status is now: NodeNotReady",
        component="kubelet",
        host=down,
    )
    _not_ready_pods(snap, down, 53.8)
    _shop_frontend_lines(
        snap,
        [
            (m, "could not retrieve products: " + _refused(snap, "productcatalogservice", 3550), "/")
            for m in (54.1, 54.9, 55.6, 56.2, 56.9, 57.5)
        ],
    )
    return snap.build()


def _evicted(snap: Snapshot, part: str, message: str, at: float, *, to: str) -> None:
    """``part``'s pod evicted by its node's kubelet at ``at`` (Failed, Evicted), its replacement running on ``to``."""
    old = snap.pods[part][0]
    args = old.args
    p = snap.app.part(part)
    args["phase"] = "Failed"
    args["reason"] = "Evicted"
    args["message"] = message
    args["statuses"] = [
        status(
            snap.pack,
            p.container,
            p.image,
            state=terminated(snap.pack, "Error", 137, BORN + 0.1, at + 0.5),
            ready=False,
            started=False,
        )
    ]
    args["conditions"] = [
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "TerminationByKubelet",
            "message": message,
            "lastTransitionTime": snap.pack.ts(at),
        },
        {"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": snap.pack.ts(at + 0.5)},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": snap.pack.ts(BORN)},
    ]
    args.pop("ip", None)
    old.healthy = False
    snap.pack.event(at, snap.ns, "Pod", args["name"], "Evicted", message, type="Warning", host=args["node"])
    snap.pack.event(
        at + 0.01,
        snap.ns,
        "Pod",
        args["name"],
        "Killing",
        f"Stopping container {p.container}",
        host=args["node"],
        field_path=f"spec.containers{{{p.container}}}",
    )
    fresh = snap.healthy_pod(p, created=at + 0.02)
    fresh.args["name"] = snap.pod_name(part, 1, 1)
    fresh.args["node"] = to
    fresh.args["ip"] = f"10.244.{WORKERS.index(to) + 1}.{120 + snap.index(part)}"
    fresh.args["volumes"] = [v for v in fresh.args["volumes"] if "projected" not in v] + [
        _token_volume(fresh.args["name"])
    ]
    fresh.started = at + 0.02
    snap.pods[part] = [old, fresh]


def worker_disk_pressure() -> Pack:
    """redis-cart's AOF on its emptyDir filled kind-worker2's disk: the kubelet reports DiskPressure, taints the node
    and evicts the pods using the most ephemeral storage."""
    snap = snapshot("heldout-shop-worker2-disk", SHOP_APP, "Why were pods evicted in namespace boutique?")
    node = WORKERS[1]
    _node_condition(snap, node, "DiskPressure", "True", "KubeletHasDiskPressure", "kubelet has disk pressure", 21.5)
    snap.nodes[node]["spec"]["taints"] = [
        {"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule", "timeAdded": snap.pack.ts(21.5)}
    ]
    for at, reason, message, kind in (
        (21.5, "NodeHasDiskPressure", f"Node {node} status is now: NodeHasDiskPressure", "Normal"),
        (21.4, "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage", "Warning"),
        (
            21.3,
            "FreeDiskSpaceFailed",
            "Failed to garbage collect required amount of images. Attempted to free 9663676416 bytes, but only found 0 "
            "bytes eligible to free.",
            "Warning",
        ),
    ):
        snap.pack.event(at, "default", "Node", node, reason, message, type=kind, host=node, count=4, last=56)
    _evicted(
        snap,
        "redis-cart",
        "The node was low on resource: ephemeral-storage. Threshold quantity: 10266312Ki, available: 8812044Ki. "
        "Container redis was using 61347204Ki, request is 0, has larger consumption of ephemeral-storage. ",
        21.6,
        to=WORKERS[2],
    )
    _evicted(
        snap,
        "checkoutservice",
        "The node was low on resource: ephemeral-storage. Threshold quantity: 10266312Ki, available: 9716100Ki. "
        "Container server was using 2310440Ki, request is 0, has larger consumption of ephemeral-storage. ",
        23.2,
        to=WORKERS[0],
    )
    return snap.build()


def worker_memory_pressure() -> Pack:
    """mongodb-rate's cache grew past what kind-worker can hold: the kubelet reports MemoryPressure and evicts it and
    memcached-reserve."""
    snap = snapshot("heldout-hotel-worker-memory", HOTEL_APP, "Why did mongodb-rate restart in namespace hotel-res?")
    node = WORKERS[0]
    _node_condition(
        snap,
        node,
        "MemoryPressure",
        "True",
        "KubeletHasInsufficientMemory",
        "kubelet has insufficient memory available",
        30.2,
    )
    snap.nodes[node]["spec"]["taints"] = [
        {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule", "timeAdded": snap.pack.ts(30.2)}
    ]
    for at, reason, message, kind in (
        (30.2, "NodeHasInsufficientMemory", f"Node {node} status is now: NodeHasInsufficientMemory", "Normal"),
        (30.1, "EvictionThresholdMet", "Attempting to reclaim memory", "Warning"),
    ):
        snap.pack.event(at, "default", "Node", node, reason, message, type=kind, host=node, count=3, last=55)
    _evicted(
        snap,
        "mongodb-rate",
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 87212Ki. Container "
        "hotel-reserv-rate-mongo was using 11873340Ki, request is 64Mi, has larger consumption of memory. ",
        30.3,
        to=WORKERS[1],
    )
    _evicted(
        snap,
        "memcached-reserve",
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 94020Ki. Container "
        "hotel-reserv-reservation-mmc was using 1048576Ki, request is 64Mi, has larger consumption of memory. ",
        31.0,
        to=WORKERS[2],
    )
    return snap.build()


def kube_proxy_missing() -> Pack:
    """kind-worker2's labels were overwritten by a script that dropped kubernetes.io/os; kube-proxy's DaemonSet
    selects kubernetes.io/os=linux, so its controller deleted kube-proxy there: Service traffic from that node goes
    nowhere."""
    snap = snapshot("heldout-shop-kube-proxy-missing", SHOP_APP, "Why do calls from checkoutservice time out?")
    node = WORKERS[1]
    labels = snap.nodes[node]["metadata"]["labels"]
    for key in ("kubernetes.io/os", "beta.kubernetes.io/os"):
        labels.pop(key)
    labels["node.acme.io/pool"] = "general"
    gone = _system(snap, "kube-proxy", node)
    snap.system.remove(gone)
    image = gone.args["containers"][0]["image"]
    snap.add(
        "daemonsets",
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": snap.meta(
                "daemonset",
                "kube-proxy",
                namespace="kube-system",
                created=-20000,
                generation=1,
                labels={"k8s-app": "kube-proxy"},
            ),
            "spec": {
                "selector": {"matchLabels": {"k8s-app": "kube-proxy"}},
                "template": {
                    "metadata": {"labels": {"k8s-app": "kube-proxy"}},
                    "spec": {
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "hostNetwork": True,
                        "priorityClassName": "system-node-critical",
                        "containers": [
                            {
                                "name": "kube-proxy",
                                "image": image,
                                "command": [
                                    "/usr/local/bin/kube-proxy",
                                    "--config=/var/lib/kube-proxy/config.conf",
                                    "--hostname-override=$(NODE_NAME)",
                                ],
                            }
                        ],
                        "tolerations": [{"operator": "Exists"}],
                    },
                },
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            },
            "status": {
                "currentNumberScheduled": 3,
                "desiredNumberScheduled": 3,
                "numberAvailable": 3,
                "numberMisscheduled": 0,
                "numberReady": 3,
                "observedGeneration": 1,
                "updatedNumberScheduled": 3,
            },
        },
    )
    snap.pack.event(
        1.2,
        "kube-system",
        "DaemonSet",
        "kube-proxy",
        "SuccessfulDelete",
        f"Deleted pod: {gone.args['name']}",
        component="daemonset-controller",
    )
    snap.pack.event(
        1.21,
        "kube-system",
        "Pod",
        gone.args["name"],
        "Killing",
        "Stopping container kube-proxy",
        host=node,
        field_path="spec.containers{kube-proxy}",
    )
    timeout = (
        'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp '
        f'{snap.cluster_ip("paymentservice")}:50051: i/o timeout"'
    )
    _shop_frontend_lines(
        snap,
        [
            (
                m,
                "failed to complete the order: rpc error: code = Internal desc = failed to charge card: could not "
                "charge the card: " + timeout,
                "/cart/checkout",
            )
            for m in range(4, 58, 5)
        ],
    )
    return snap.build()


def coredns_loop() -> Pack:
    """CoreDNS's Corefile was changed to forward to 127.0.0.1: both pods detect the loop and exit; every lookup of the
    apps is refused."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-coredns-loop", "Why is frontend returning errors?")
    p = c.pack
    for pod in p._k8s["pods"]:
        name = pod["metadata"]["name"]
        if not name.startswith("coredns-"):
            continue
        pod_uid = pod["metadata"]["uid"]
        image = pod["spec"]["containers"][0]["image"]
        pod["status"]["containerStatuses"] = [
            status(
                p,
                "coredns",
                image,
                state=waiting(
                    "CrashLoopBackOff",
                    f"back-off 5m0s restarting failed container=coredns pod={name}_kube-system({pod_uid})",
                ),
                ready=False,
                restarts=15,
                last=terminated(p, "Error", 1, 55, 55.05),
            )
        ]
        for cond in pod["status"]["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond.update(
                    status="False",
                    reason="ContainersNotReady",
                    message="containers with unready status: [coredns]",
                    lastTransitionTime=p.ts(1.2),
                )
        p.event(
            1.3,
            "kube-system",
            "Pod",
            name,
            "BackOff",
            f"Back-off restarting failed container coredns in pod {name}_kube-system({pod_uid})",
            type="Warning",
            host=pod["spec"]["nodeName"],
            field_path="spec.containers{coredns}",
            count=70,
            last=57,
        )
        p.pod_log(
            "kube-system",
            name,
            [
                ".:53",
                "[INFO] plugin/reload: Running configuration SHA512 = 591cf328cccc12bc490481273e738df59329c62c0b729d94e"
                "8b61db9961c2fa5f046dd37f1cf888b953814040d180f52594972691cd6ff41be96639138a43908",
                "CoreDNS-1.11.3",
                "linux/amd64, go1.21.11, a6338e9",
                f'[FATAL] plugin/loop: Loop (127.0.0.1:{40000 + len(name) * 97} -> :53) detected for zone ".", see '
                "https://coredns.io/plugins/loop#troubleshooting. "
                'Query: "HINFO 4547991504243258144.3688648895315093531."',
            ],
            container="coredns",
            previous=True,
        )
    p.objects(
        "configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": c.meta("configmap", "coredns", namespace="kube-system", created=1.0),
            "data": {
                "Corefile": ".:53 {\n    errors\n    health {\n       lameduck 5s\n    }\n    ready\n    kubernetes "
                "cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n"
                "       fallthrough in-addr.arpa ip6.arpa\n       ttl 30\n    }\n    prometheus :9153\n"
                "    forward . 127.0.0.1\n    cache 30\n    loop\n    reload\n"
                "    loadbalance\n}\n"
            },
        },
    )
    frontend_ip = c.apps["frontend"].pod_ip
    for m in range(2, 58, 3):
        c.apps["frontend"].log(
            _frontend_error(
                p,
                m,
                "could not retrieve products: rpc error: code = Unavailable desc = connection error: desc = "
                '"transport: '
                "Error while dialing: dial tcp: lookup productcatalogservice on 10.96.0.10:53: read udp "
                f'{frontend_ip}:{38000 + m * 13}->10.96.0.10:53: read: connection refused"',
                "/",
            )
        )
    return c.build()


def kube_scheduler_crash() -> Pack:
    """kube-scheduler's static pod points at a kubeconfig that was removed: it exits at start; user's pod, deleted by
    a drain, comes back Pending and nothing reports on it."""
    snap = snapshot("heldout-hotel-scheduler-crash", HOTEL_APP, "Why can users not log in to the hotel site?")
    plan = _system(snap, "kube-scheduler")
    name = plan.args["name"]
    image = plan.args["containers"][0]["image"]
    plan.args["statuses"] = [
        status(
            snap.pack,
            "kube-scheduler",
            image,
            state=waiting(
                "CrashLoopBackOff",
                f"back-off 5m0s restarting failed container=kube-scheduler pod={name}_kube-system"
                f"({uid(snap.pack.name, 'pod', 'kube-system', name)})",
            ),
            ready=False,
            restarts=12,
            last=terminated(snap.pack, "Error", 1, 55.1, 55.12),
        )
    ]
    plan.healthy = False
    snap.pack.pod_log(
        "kube-system",
        name,
        [
            "I0914 13:55:06.112904       1 serving.go:380] Generated self-signed cert in-memory",
            'E0914 13:55:06.113517       1 run.go:74] "command failed" err="stat /etc/kubernetes/scheduler.conf: '
            "no such "
            'file or directory"',
        ],
        container="kube-scheduler",
        previous=True,
    )
    snap.pack.event(
        2,
        "kube-system",
        "Pod",
        name,
        "BackOff",
        f"Back-off restarting failed container kube-scheduler in pod {name}_kube-system"
        f"({uid(snap.pack.name, 'pod', 'kube-system', name)})",
        type="Warning",
        host=CONTROL,
        field_path="spec.containers{kube-scheduler}",
        count=60,
        last=57,
    )
    snap.pending_pod("user", "", scheduler=False, revision=1, created=6)
    snap.pack.event(
        5.99,
        snap.ns,
        "ReplicaSet",
        snap.rs_name("user"),
        "SuccessfulCreate",
        f"Created pod: {snap.pod_name('user', 1, 1)}",
        component="replicaset-controller",
    )
    _hotel_lines(
        snap,
        "frontend",
        [
            (
                m,
                "ERR",
                "services/frontend/server.go:309",
                "UserHandler: rpc error: code = Unavailable desc = name resolver error: produced zero addresses",
            )
            for m in range(7, 58, 4)
        ],
    )
    return snap.build()


# ================================================================================================ performance
def search_cpu_throttled() -> Pack:
    """search runs at its 100m CPU limit: the kernel throttles it in most scheduling periods; the frontend's search
    calls slow down."""
    c = Cluster(HOTEL_SHAPE, "heldout-hotel-search-throttled", "Why is search slow?")
    work = c.apps["search"]
    for spec in _containers(work):
        spec["resources"] = {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "100m", "memory": "256Mi"}}
    for name, w in c.apps.items():
        base = {
            "namespace": c.ns,
            "pod": w.pod_name,
            "container": w.svc.container,
            "job": "kubelet",
            "metrics_path": "/metrics/cadvisor",
            "image": w.svc.image,
        }
        share = 0.64 if name == "search" else 0.02
        c.series({"__name__": "container_cpu_cfs_periods_total", **base}, [float(600 * i) for i in range(61)])
        c.series(
            {"__name__": "container_cpu_cfs_throttled_periods_total", **base},
            [float(int(600 * share * i)) for i in range(61)],
        )
    for m in range(5, 58, 9):
        c.apps["frontend"].log(
            _zlog(
                c.pack,
                m,
                "ERR",
                "services/frontend/server.go:187",
                "SearchHandler: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
            )
        )
    return c.build()


def shipping_deadline() -> Pack:
    """shippingservice answers slower than checkout's deadline: orders fail with DeadlineExceeded on the quote."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-shipping-deadline", "Why do orders take so long and then fail?")
    for m in range(3, 58, 3):
        c.apps["frontend"].log(
            _frontend_error(
                c.pack,
                m,
                "failed to complete the order: rpc error: code = Internal desc = shipping quote failure: failed to get "
                "shipping quote: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
                "/cart/checkout",
            )
        )
        c.apps["shippingservice"].log(
            json.dumps({"message": "[GetQuote] received request", "severity": "info", "timestamp": c.pack.ts(m - 0.1)})
        )
    return c.build()


# ================================================================================================ healthy
def healthy_shop_snapshot() -> Pack:
    return snapshot("heldout-shop-healthy", SHOP_APP, "Why is frontend returning errors?").build()


def healthy_hotel_after_rollout() -> Pack:
    """Nothing wrong: search was rolled out ten minutes into the window (its new pod ready, the old one stopped) and
    a nightly backup Job completed."""
    c = Cluster(HOTEL_SHAPE, "heldout-hotel-healthy-rollout", "Is anything wrong in namespace hotel-reservation?")
    p = c.pack
    work = c.apps["search"]
    old_rs = json.loads(json.dumps(work.replicaset))
    old_rs["spec"]["replicas"] = 0
    old_rs["status"] = {"replicas": 0, "observedGeneration": 2}
    old_rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "1"
    old_pod = work.pod_name
    p._k8s["replicasets"].append(old_rs)
    new_hash = safe("search", "rs2", length=10)
    new_rs = f"search-{new_hash}"
    work.replicaset["metadata"]["name"] = new_rs
    work.replicaset["metadata"]["uid"] = uid(p.name, "replicaset", c.ns, new_rs)
    work.replicaset["metadata"]["creationTimestamp"] = p.ts(10)
    work.replicaset["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "2"
    work.replicaset["metadata"]["labels"]["pod-template-hash"] = new_hash
    work.deployment["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "2"
    work.deployment["metadata"]["generation"] = 2
    work.deployment["status"]["observedGeneration"] = 2
    new_pod = f"{new_rs}-{safe('search', 'pod2', length=5)}"
    work.pod["metadata"].update(
        name=new_pod,
        uid=uid(p.name, "pod", c.ns, new_pod),
        creationTimestamp=p.ts(10),
        generateName=f"{new_rs}-",
        labels={**work.pod["metadata"]["labels"], "pod-template-hash": new_hash},
    )
    work.pod["metadata"]["ownerReferences"][0].update(name=new_rs, uid=work.replicaset["metadata"]["uid"])
    work.pod["status"]["startTime"] = p.ts(10.02)
    work.pod["status"]["containerStatuses"][0].update(state=running(p, 10.1), restartCount=0, lastState={})
    for cond in work.pod["status"]["conditions"]:
        cond["lastTransitionTime"] = p.ts(10.2)
    work.endpoints["subsets"][0]["addresses"][0]["targetRef"]["name"] = new_pod
    work.slice["endpoints"][0]["targetRef"]["name"] = new_pod
    for entry in work.logs:
        entry["pod"] = new_pod
    node = work.pod["spec"]["nodeName"]
    p.event(
        10,
        c.ns,
        "Deployment",
        "search",
        "ScalingReplicaSet",
        f"Scaled up replica set {new_rs} to 1",
        component="deployment-controller",
    )
    p.event(
        10, c.ns, "ReplicaSet", new_rs, "SuccessfulCreate", f"Created pod: {new_pod}", component="replicaset-controller"
    )
    p.scheduled(10.01, c.ns, new_pod, node)
    for offset, reason, message in (
        (0.03, "Pulling", f'Pulling image "{work.svc.image}"'),
        (
            0.07,
            "Pulled",
            f'Successfully pulled image "{work.svc.image}" in 2.113s (2.113s including waiting). '
            "Image size: 16384512 bytes.",
        ),
        (0.08, "Created", f"Created container {work.svc.container}"),
        (0.09, "Started", f"Started container {work.svc.container}"),
    ):
        p.event(
            10 + offset,
            c.ns,
            "Pod",
            new_pod,
            reason,
            message,
            host=node,
            field_path=f"spec.containers{{{work.svc.container}}}",
        )
    p.event(
        10.25,
        c.ns,
        "Deployment",
        "search",
        "ScalingReplicaSet",
        f"Scaled down replica set {old_rs['metadata']['name']} to 0 from 1",
        component="deployment-controller",
    )
    p.event(
        10.26,
        c.ns,
        "Pod",
        old_pod,
        "Killing",
        f"Stopping container {work.svc.container}",
        host=node,
        field_path=f"spec.containers{{{work.svc.container}}}",
    )
    job = "mongodb-backup-29301180"
    backup = f"{job}-{safe(job, length=5)}"
    p.objects(
        "jobs",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": c.meta(
                "job",
                job,
                created=0,
                labels={"app": "mongodb-backup"},
                ownerReferences=[
                    {
                        "apiVersion": "batch/v1",
                        "kind": "CronJob",
                        "name": "mongodb-backup",
                        "uid": uid(p.name, "cronjob", c.ns, "mongodb-backup"),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            ),
            "spec": {
                "backoffLimit": 2,
                "completions": 1,
                "parallelism": 1,
                "template": {
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [
                            {
                                "name": "backup",
                                "image": "mongo:4.4.6",
                                "command": ["mongodump", "--host", "mongodb-rate"],
                            }
                        ],
                    }
                },
            },
            "status": {
                "startTime": p.ts(0),
                "completionTime": p.ts(2.4),
                "succeeded": 1,
                "ready": 0,
                "terminating": 0,
                "uncountedTerminatedPods": {},
                "conditions": [
                    {
                        "type": "SuccessCriteriaMet",
                        "status": "True",
                        "lastProbeTime": p.ts(2.4),
                        "lastTransitionTime": p.ts(2.4),
                    },
                    {"type": "Complete", "status": "True", "lastProbeTime": p.ts(2.4), "lastTransitionTime": p.ts(2.4)},
                ],
            },
        },
    )
    p.pod(
        backup,
        c.ns,
        labels={"batch.kubernetes.io/job-name": job, "job-name": job, "app": "mongodb-backup"},
        node="worker-3",
        containers=[container("backup", "mongo:4.4.6", port=None, command=("mongodump", "--host", "mongodb-rate"))],
        statuses=[status(p, "backup", "mongo:4.4.6", state=terminated(p, "Completed", 0, 0.1, 2.3), ready=False)],
        created=0,
        owner=("Job", job),
        phase="Succeeded",
        ip="10.244.3.77",
        restart_policy="OnFailure",
        conditions=[
            {"type": "PodReadyToStartContainers", "status": "False", "lastTransitionTime": p.ts(2.35)},
            {"type": "Initialized", "status": "True", "reason": "PodCompleted", "lastTransitionTime": p.ts(0.02)},
            {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": p.ts(2.3)},
            {"type": "ContainersReady", "status": "False", "reason": "PodCompleted", "lastTransitionTime": p.ts(2.3)},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": p.ts(0)},
        ],
    )
    p.event(
        0, c.ns, "CronJob", "mongodb-backup", "SuccessfulCreate", f"Created job {job}", component="cronjob-controller"
    )
    p.event(0, c.ns, "Job", job, "SuccessfulCreate", f"Created pod: {backup}", component="job-controller")
    p.event(2.4, c.ns, "Job", job, "Completed", "Job completed", component="job-controller")
    p.event(
        2.5,
        c.ns,
        "CronJob",
        "mongodb-backup",
        "SawCompletedJob",
        f"Saw completed job: {job}, condition: Complete",
        component="cronjob-controller",
    )
    p.pod_log(
        c.ns,
        backup,
        [
            f"{p.ts(0.2).replace('Z', '.118+0000')}\twriting rate-db.inventory to dump/rate-db/inventory.bson",
            f"{p.ts(2.2).replace('Z', '.904+0000')}\tdone dumping rate-db.inventory (80 documents)",
        ],
        container="backup",
    )
    return c.build()


def _old_oom(c: Cluster, name: str, hours_ago: float) -> None:
    """``name``'s container OOMKilled ``hours_ago`` hours before the window, running ready ever since."""
    s = c.apps[name].pod["status"]["containerStatuses"][0]
    end = -hours_ago * 60
    s.update(
        restartCount=1, lastState=terminated(c.pack, "OOMKilled", 137, end - 40, end), state=running(c.pack, end + 0.1)
    )


def healthy_shop_old_oom() -> Pack:
    """Nothing wrong: adservice was OOMKilled once four hours ago and has run ready since; frontend has an HPA and a
    PodDisruptionBudget, both satisfied."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-healthy-old-oom", "Are there any problems with checkoutservice?")
    _old_oom(c, "adservice", 4)
    p = c.pack
    p.objects(
        "horizontalpodautoscalers",
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": c.meta("hpa", "frontend"),
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "frontend"},
                "minReplicas": 1,
                "maxReplicas": 5,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
                    }
                ],
            },
            "status": {
                "currentReplicas": 1,
                "desiredReplicas": 1,
                "lastScaleTime": p.ts(-600),
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "current": {"averageUtilization": 23, "averageValue": "23m"}},
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": p.ts(-600),
                    },
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count from cpu resource "
                        "utilization (percentage of request)",
                        "lastTransitionTime": p.ts(-2000),
                    },
                    {
                        "type": "ScalingLimited",
                        "status": "False",
                        "reason": "DesiredWithinRange",
                        "message": "the desired count is within the acceptable range",
                        "lastTransitionTime": p.ts(-600),
                    },
                ],
            },
        },
    )
    p.objects(
        "poddisruptionbudgets",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": c.meta("pdb", "frontend"),
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "frontend"}}},
            "status": {
                "currentHealthy": 1,
                "desiredHealthy": 1,
                "disruptionsAllowed": 0,
                "expectedPods": 1,
                "observedGeneration": 1,
                "conditions": [
                    {
                        "type": "DisruptionAllowed",
                        "status": "False",
                        "reason": "InsufficientPods",
                        "message": "",
                        "lastTransitionTime": p.ts(-2000),
                    }
                ],
            },
        },
    )
    return c.build()


# ================================================================================================ ended beside current
def old_quota_beside_webhook_down() -> Pack:
    """The frontend's ReplicaSet was refused by a quota hours ago and has had its pod since; today adservice's pod,
    deleted by a drain, cannot be created: the AWS load balancer controller's pod webhook has no endpoint."""
    snap = snapshot("heldout-shop-old-quota-webhook", SHOP_APP, "Why is the shop missing its ads?")
    snap.pack.event(
        BORN - 3,
        snap.ns,
        "ReplicaSet",
        snap.rs_name("frontend"),
        "FailedCreate",
        f'Error creating: pods "{snap.pod_name("frontend", 1, 5)}" is forbidden: exceeded quota: compute-quota, '
        "requested: requests.memory=64Mi, used: requests.memory=8128Mi, limited: requests.memory=8Gi",
        type="Warning",
        component="replicaset-controller",
        count=9,
        last=BORN - 1,
    )
    _quota(snap, "compute-quota", {"requests.memory": "16Gi"}, {"requests.memory": "704Mi"})
    _no_pods(
        snap,
        "adservice",
        'Error creating: Internal error occurred: failed calling webhook "mpod.elbv2.k8s.aws": failed to call webhook: '
        'Post "https://aws-load-balancer-webhook-service.kube-system.svc:443/mutate-v1-pod?timeout=10s": no endpoints '
        'available for service "aws-load-balancer-webhook-service"',
    )
    _shop_frontend_lines(snap, [])
    return snap.build()


def old_scheduling_beside_image_typo() -> Pack:
    """geo's pod waited for CPU for a while five hours ago, then was scheduled and has run since; today user was
    redeployed with the image tag ``lastest``."""
    snap = snapshot("heldout-hotel-old-scheduling-user-image", HOTEL_APP, "Why can users not log in?")
    geo = _pod_of(snap, "geo")["name"]
    snap.pack.event(
        BORN - 0.5,
        snap.ns,
        "Pod",
        geo,
        "FailedScheduling",
        f"0/4 nodes are available: {_TAINTED}, 3 Insufficient cpu. {_PREEMPT_VICTIMS}",
        type="Warning",
        component="default-scheduler",
        new_api=True,
        count=6,
        last=BORN - 0.05,
    )
    image = "deathstarbench/hotel-reservation:lastest"
    spec = snap.container_of(snap.app.part("user"), image=image)
    snap.rollout("user", containers=[spec])
    _recreate(snap, "user")
    pod = snap.waiting_pod("user", "ImagePullBackOff", f'Back-off pulling image "{image}"', image=image)
    _pull_events(
        snap,
        pod,
        "user",
        image,
        f'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/{image}": failed to resolve '
        f'reference "docker.io/{image}": docker.io/{image}: not found',
    )
    return snap.build()


def old_oom_beside_bad_port() -> Pack:
    """adservice was OOMKilled once three hours ago and has run ready since; today emailservice was given PORT=8O8O
    (a letter O for a zero): its gRPC server cannot bind and it exits."""
    c = Cluster(SHOP_SHAPE, "heldout-shop-old-oom-email-port", "Why are order confirmation emails not sent?")
    _old_oom(c, "adservice", 3)
    work = c.apps["emailservice"]
    for spec in _containers(work):
        spec["env"] = [{"name": "PORT", "value": "8O8O"}, {"name": "DISABLE_PROFILER", "value": "1"}]
    c.crash_loop(work, "Error", 1, restarts=9)
    p = c.pack
    work.logs.clear()
    work.log(
        json.dumps(
            {
                "timestamp": p.ts(54),
                "severity": "INFO",
                "name": "emailservice-server",
                "message": "starting the email service in dummy mode.",
            }
        ),
        json.dumps(
            {"timestamp": p.ts(54), "severity": "INFO", "name": "emailservice-server", "message": "Profiler disabled."}
        ),
        "Traceback (most recent call last):",
        '  File "/email_server/email_server.py", line 195, in <module>',
        "    start(dummy_mode = True)",
        '  File "/email_server/email_server.py", line 151, in start',
        "    server.add_insecure_port('[::]:'+port)",
        '  File "/usr/local/lib/python3.12/site-packages/grpc/_server.py", line 1268, in add_insecure_port',
        "    return _common.validate_port_binding_result(",
        '  File "/usr/local/lib/python3.12/site-packages/grpc/_common.py", line 181, in validate_port_binding_result',
        "    raise RuntimeError(_ERROR_MESSAGE_PORT_BINDING_FAILED % address)",
        "RuntimeError: Failed to bind to address [::]:8O8O; set GRPC_VERBOSITY=debug environment variable to see "
        "detailed error message.",
        previous=True,
    )
    for m in range(5, 58, 5):
        c.apps["checkoutservice"].log(
            json.dumps(
                {
                    "message": 'failed to send order confirmation to "someone@example.com": '
                    + _grpc_refused(work.cluster_ip, 5000),
                    "severity": "warning",
                    "timestamp": p.ts(m),
                }
            )
        )
    return c.build()


def old_node_not_ready_beside_consul() -> Pack:
    """worker-2 was NotReady for five minutes three hours ago (it rebooted) and has been Ready since; today consul
    crash-loops on a corrupt Raft snapshot, and the services cannot find each other."""
    c = Cluster(HOTEL_SHAPE, "heldout-hotel-old-node-consul", "What is wrong in namespace hotel-reservation?")
    p = c.pack
    p.event(
        -200,
        "default",
        "Node",
        "worker-2",
        "NodeNotReady",
        "Node worker-2 status is now: NodeNotReady",
        component="node-controller",
    )
    p.event(
        -195.5, "default", "Node", "worker-2", "Starting", "Starting kubelet.", component="kubelet", host="worker-2"
    )
    p.event(
        -195,
        "default",
        "Node",
        "worker-2",
        "NodeReady",
        "Node worker-2 status is now: NodeReady",
        component="kubelet",
        host="worker-2",
    )
    for n in p._k8s["nodes"]:
        if n["metadata"]["name"] == "worker-2":
            for cond in n["status"]["conditions"]:
                cond["lastTransitionTime"] = p.ts(-195)
    consul = c.apps["consul"]
    c.crash_loop(consul, "Error", 1, restarts=10)
    consul.logs.clear()
    consul.log(
        "==> Starting Consul agent...",
        f'{p.ts(55).replace("Z", ".201Z")} [INFO]  agent.server.raft: initial configuration: index=1 servers="[]"',
        f"{p.ts(55).replace('Z', '.203Z')} [ERROR] agent.server.raft: failed to open snapshot: "
        "id=2-16398-1749533012311 "
        'error="checksum mismatch"',
        "==> Error starting agent: Failed to start Consul server: Failed to start Raft: failed to load any existing "
        "snapshots",
        previous=True,
    )
    for m in range(3, 58, 4):
        c.apps["search"].log(
            _zlog(
                p,
                m,
                "ERR",
                "registry/registry.go:71",
                'consul: Get "http://consul:8500/v1/health/service/srv-geo?passing=1": dial tcp '
                f"{consul.cluster_ip}:8500: connect: connection refused",
            )
        )
        c.apps["frontend"].log(
            _zlog(
                p,
                m + 0.1,
                "ERR",
                "services/frontend/server.go:187",
                "SearchHandler: rpc error: code = Unavailable desc = name resolver error: produced zero addresses",
            )
        )
    return c.build()


# ================================================================================================ the cases
@dataclass(frozen=True, slots=True)
class Case:
    """A snapshot's builder and what its likely cause must hold: one of ``component`` (the faulty component's
    names), one of ``fault``, all of ``shows``; none of ``never`` (an ended condition, an unrelated workload).
    No component: the answer must say there is no incident."""

    build: Callable[[], Pack]
    family: str
    component: tuple[str, ...]
    fault: tuple[str, ...]
    shows: tuple[str, ...] = ()
    never: tuple[str, ...] = ()


CASES: dict[str, Case] = {
    # scheduling
    "checkout_anti_affinity": Case(checkout_anti_affinity, "scheduling", ("checkoutservice",), ("anti-affinity",)),
    "reservation_zone_affinity": Case(
        reservation_zone_affinity, "scheduling", ("reservation",), ("affinity", "us-east-1d", "zone")
    ),
    "user_volume_node_affinity": Case(
        user_volume_node_affinity, "scheduling", ("mongodb-user",), ("volume node affinity", "kind-worker4")
    ),
    "recommendation_gpu": Case(recommendation_gpu, "scheduling", ("recommendationservice",), ("gpu",)),
    "search_too_many_pods": Case(
        search_too_many_pods, "scheduling", ("search",), ("too many pods", "pod capacity", "maximum number of pods")
    ),
    "jaeger_agent_host_port": Case(
        jaeger_agent_host_port, "scheduling", ("jaeger-agent",), ("host port", "hostport", "free ports", "6831")
    ),
    "shipping_topology_spread": Case(
        shipping_topology_spread, "scheduling", ("shippingservice",), ("topology spread", "spread constraint")
    ),
    # admission
    "email_quota_requires_limits": Case(
        email_quota_requires_limits,
        "admission",
        ("emailservice",),
        ("must specify", "limits.cpu", "limits.memory", "no limit", "without limit"),
    ),
    "geo_limit_range": Case(
        geo_limit_range,
        "admission",
        ("geo",),
        ("limitrange", "limit range", "maximum memory", "limits of the namespace"),
    ),
    "cart_service_quota": Case(
        cart_service_quota, "admission", ("cartservice",), ("no service", "does not exist", "not exist", "quota")
    ),
    "geo_statefulset_storage_quota": Case(geo_statefulset_storage_quota, "admission", ("mongodb-geo",), ("quota",)),
    "currency_pod_security": Case(
        currency_pod_security, "admission", ("currencyservice",), ("podsecurity", "pod security", "restricted")
    ),
    "shipping_webhook_denied": Case(
        shipping_webhook_denied, "admission", ("shippingservice",), ("webhook", "gatekeeper", "admission")
    ),
    # start-up
    "reservation_init_container": Case(
        reservation_init_container, "startup", ("reservation",), ("init container", "migrate")
    ),
    "catalog_configmap_key": Case(
        catalog_configmap_key, "startup", ("productcatalogservice",), ("key",), ("log_level",)
    ),
    "cart_wrong_command": Case(cart_wrong_command, "startup", ("cartservice",), ("dotnet", "executable", "command")),
    "cart_redis_read_only_volume": Case(
        cart_redis_read_only_volume, "startup", ("redis-cart",), ("read-only", "read only", "misconf", "persist")
    ),
    "recommendation_claim_missing": Case(
        recommendation_claim_missing,
        "startup",
        ("mongodb-recommendation",),
        ("not found", "does not exist", "not exist", "missing"),
        ("recommendation-pvc-v2",),
    ),
    "cart_image_typo": Case(cart_image_typo, "startup", ("redis-cart",), ("image",), ("redis:alpnie",)),
    "payment_registry_unauthorized": Case(
        payment_registry_unauthorized,
        "startup",
        ("paymentservice",),
        ("unauthorized", "401", "credential", "authoriz", "pull secret", "access denied"),
    ),
    # runtime
    "redis_liveness_wrong_port": Case(redis_liveness_wrong_port, "runtime", ("redis-cart",), ("probe",), ("6380",)),
    "frontend_readiness_timeout": Case(frontend_readiness_timeout, "runtime", ("frontend",), ("probe",), ()),
    "mongodb_rate_oom": Case(mongodb_rate_oom, "runtime", ("mongodb-rate",), ("oomkilled", "memory")),
    "frontend_port_in_use": Case(
        frontend_port_in_use, "runtime", ("frontend",), ("address already in use", "already in use", "oauth2-proxy")
    ),
    "adservice_scaled_to_zero": Case(adservice_scaled_to_zero, "runtime", ("adservice",), ("0 replicas", "zero")),
    "redis_wrong_password": Case(
        redis_wrong_password, "runtime", ("redis-cart",), ("authenticat", "password", "wrongpass", "credential")
    ),
    "redis_replica_read_only": Case(
        redis_replica_read_only, "runtime", ("redis-cart",), ("read only", "read-only", "readonly", "replica")
    ),
    "mongodb_reservation_max_connections": Case(
        mongodb_reservation_max_connections,
        "runtime",
        ("mongodb-reservation",),
        ("too many", "connection limit", "connections"),
    ),
    "rate_bad_config_value": Case(
        rate_bad_config_value, "runtime", ("rate",), ("invalid syntax", "memcached timeout", "parsing", "panic")
    ),
    # service routing
    "shipping_selector_extra_label": Case(
        shipping_selector_extra_label, "routing", ("shippingservice",), ("selector",)
    ),
    "cart_named_target_port": Case(
        cart_named_target_port, "routing", ("cartservice",), ("targetport", "grpc-server", "named port")
    ),
    "payment_network_policy": Case(
        payment_network_policy, "routing", ("paymentservice",), ("network policy", "networkpolicy")
    ),
    "payment_network_policy_expressions": Case(
        payment_network_policy_expressions, "routing", ("paymentservice",), ("network policy", "networkpolicy")
    ),
    "currency_protocol_mismatch": Case(
        currency_protocol_mismatch, "routing", ("currencyservice",), ("9464", "protocol", "http2", "http/1")
    ),
    "ingress_missing_service": Case(
        ingress_missing_service,
        "routing",
        ("frontend-svc",),
        ("does not exist", "not exist", "no service", "missing", "not found"),
    ),
    "checkout_unknown_shipping_host": Case(
        checkout_unknown_shipping_host,
        "routing",
        ("checkoutservice",),
        ("does not exist", "not exist", "no such host", "does not resolve", "unknown host", "no workload"),
        ("shipping-service",),
    ),
    "frontend_dns_policy_none": Case(
        frontend_dns_policy_none,
        "routing",
        ("frontend",),
        ("dnsPolicy", "cluster DNS"),
        ("8.8.8.8",),
        ("currencyservice",),
    ),
    # infrastructure
    "worker_cni_not_ready": Case(
        worker_cni_not_ready, "infrastructure", ("kind-worker3", "kindnet"), ("not ready", "notready", "cni", "network")
    ),
    "worker_disk_pressure": Case(
        worker_disk_pressure, "infrastructure", ("kind-worker2", "redis-cart"), ("disk", "ephemeral")
    ),
    "worker_memory_pressure": Case(
        worker_memory_pressure, "infrastructure", ("kind-worker", "mongodb-rate"), ("memory",)
    ),
    "kube_proxy_missing": Case(
        kube_proxy_missing,
        "infrastructure",
        ("kube-proxy",),
        ("not running", "missing", "no kube-proxy", "absent"),
        ("kind-worker2",),
    ),
    "coredns_loop": Case(
        coredns_loop,
        "infrastructure",
        ("coredns", "kube-dns", "dns server", "cluster dns"),
        ("not running", "crash", "loop", "not ready"),
    ),
    "kube_scheduler_crash": Case(
        kube_scheduler_crash,
        "infrastructure",
        ("kube-scheduler", "scheduler"),
        ("not running", "crash", "scheduler.conf"),
    ),
    # performance
    "search_cpu_throttled": Case(search_cpu_throttled, "performance", ("search",), ("throttl", "cpu limit")),
    "shipping_deadline": Case(
        shipping_deadline, "performance", ("shippingservice",), ("deadline", "time out", "timeout", "slow", "latency")
    ),
    # healthy
    "healthy_shop_snapshot": Case(healthy_shop_snapshot, "healthy", (), ()),
    "healthy_hotel_after_rollout": Case(healthy_hotel_after_rollout, "healthy", (), ()),
    "healthy_shop_old_oom": Case(healthy_shop_old_oom, "healthy", (), ()),
    # an ended condition beside a current fault
    "old_quota_beside_webhook_down": Case(
        old_quota_beside_webhook_down, "ended", ("adservice",), ("webhook",), never=("quota", "frontend")
    ),
    "old_scheduling_beside_image_typo": Case(
        old_scheduling_beside_image_typo,
        "ended",
        ("user",),
        ("image",),
        ("lastest",),
        never=("scheduled", "scheduling", "geo"),
    ),
    "old_oom_beside_bad_port": Case(
        old_oom_beside_bad_port, "ended", ("emailservice",), ("8o8o", "bind", "port"), never=("adservice", "oomkilled")
    ),
    "old_node_not_ready_beside_consul": Case(
        old_node_not_ready_beside_consul,
        "ended",
        ("consul",),
        ("raft", "snapshot"),
        never=("worker-2", "not ready"),
    ),
}


# The alphabet of the suffixes Kubernetes generates (a pod-template-hash, a pod's name): no vowels.
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def _named(name: str, text: str) -> bool:
    """``name`` in ``text`` as a whole name (a pod's or ReplicaSet's generated suffixes allowed after it)."""
    pattern = rf"(?<![a-z0-9-]){re.escape(name.lower())}(?:-[{_SAFE}]{{5,10}}){{0,2}}(?![a-z0-9-])"
    if " " in name:
        pattern = re.escape(name.lower())
    return re.search(pattern, text) is not None


def verdict(case: Case, summary: str) -> tuple[bool, bool, list[str]]:
    """(component named, fault named, what the cause says that it must not) by the likely cause's own words; for a
    healthy case the first two are whether the answer says there is no incident."""
    if not case.component:
        healthy = "No incident found" in summary
        return healthy, healthy, []
    cause = stated(summary).lower()
    component = any(_named(name, cause) for name in case.component)
    fault = any(word.lower() in cause for word in case.fault) and all(word.lower() in cause for word in case.shows)
    wrong = [word for word in case.never if _named(word, cause)]
    return component, fault, wrong
