"""Incidents written from Kubernetes' documentation, one per fault family: the objects as the API returns them and
the texts the controllers emit (the kube-scheduler's FailedScheduling, the ReplicaSet controller's FailedCreate,
the kubelet's waiting reasons, probe and pull texts, a node's Ready condition)."""

from __future__ import annotations

from typing import Any

from tests.incidents.corpus.kit import (
    Pack,
    container,
    healthy_pod,
    http_probe,
    running,
    status,
    terminated,
    uid,
    unschedulable,
    waiting,
)

Json = dict[str, Any]
NS = "shop"
NODES = ("worker-1", "worker-2", "worker-3")
START = "2025-06-10T09:00:00Z"


def _pack(name: str, question: str, *services: str) -> Pack:
    pack = Pack(name, title=name, description="Written by a test: one fault family.", question=question, start=START)
    for service in services:
        pack.service(service, "http", namespace=NS)
    pack.truth(kind="written_by_a_test", summary="not judged: each test asserts its own outcome")
    return pack


def _meta(pack: Pack, kind: str, name: str, namespace: str | None = NS, **extra: Any) -> Json:
    meta: Json = {"name": name, "uid": uid(pack.name, kind, name), "resourceVersion": "48213"}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["creationTimestamp"] = pack.ts(-3000)
    meta.update(extra)
    return meta


def node(
    pack: Pack,
    name: str,
    *,
    ready: str = "True",
    reason: str = "KubeletReady",
    message: str = "kubelet is posting ready status",
    taints: list[Json] | None = None,
    unschedulable: bool = False,
    labels: dict[str, str] | None = None,
    cpu: str = "4",
    memory: str = "16Gi",
) -> Json:
    spec: Json = {"podCIDR": "10.244.1.0/24", "providerID": f"kind://docker/kind/{name}"}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta(
            pack,
            "node",
            name,
            None,
            labels={"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **(labels or {})},
        ),
        "spec": spec,
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "95Gi"},
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"},
            "conditions": [
                {
                    "type": "MemoryPressure",
                    "status": "False",
                    "reason": "KubeletHasSufficientMemory",
                    "message": "kubelet has sufficient memory available",
                    "lastHeartbeatTime": pack.ts(55),
                    "lastTransitionTime": pack.ts(-3000),
                },
                {
                    "type": "Ready",
                    "status": ready,
                    "reason": reason,
                    "message": message,
                    "lastHeartbeatTime": pack.ts(55 if ready == "True" else 20),
                    "lastTransitionTime": pack.ts(-3000 if ready == "True" else 21),
                },
            ],
        },
    }


def nodes(pack: Pack, **first: Any) -> None:
    pack.objects("nodes", node(pack, NODES[0], **first), *(node(pack, n) for n in NODES[1:]))


def service(pack: Pack, name: str, selector: dict[str, str], *, port: int = 7070, target: int | str = 7070) -> Json:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(pack, "service", name),
        "spec": {
            "type": "ClusterIP",
            "clusterIP": "10.96.41.7",
            "clusterIPs": ["10.96.41.7"],
            "selector": selector,
            "ports": [{"name": "grpc", "port": port, "targetPort": target, "protocol": "TCP"}],
            "sessionAffinity": "None",
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(pack: Pack, name: str, addresses: list[Json] | None = None) -> Json:
    obj: Json = {"apiVersion": "v1", "kind": "Endpoints", "metadata": _meta(pack, "endpoints", name)}
    if addresses:
        obj["subsets"] = [{"addresses": addresses, "ports": [{"name": "grpc", "port": 7070, "protocol": "TCP"}]}]
    return obj


def replicaset(pack: Pack, name: str, *, replicas: int, ready: int, app: str, template_hash: str) -> Json:
    deployment = name.rsplit("-", 1)[0]
    status: Json = {"replicas": ready, "observedGeneration": 1}
    if ready:
        status.update(readyReplicas=ready, availableReplicas=ready, fullyLabeledReplicas=ready)
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": _meta(
            pack,
            "replicaset",
            name,
            labels={"app": app, "pod-template-hash": template_hash},
            annotations={
                "deployment.kubernetes.io/revision": "1",
                "deployment.kubernetes.io/desired-replicas": str(replicas),
            },
            ownerReferences=[
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": deployment,
                    "uid": uid(pack.name, "deployment", NS, deployment),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        ),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": app, "pod-template-hash": template_hash}},
            "template": {
                "metadata": {"labels": {"app": app, "pod-template-hash": template_hash}},
                "spec": {"containers": [container(app, f"registry.acme.io/shop/{app}:1.4.2")]},
            },
        },
        "status": status,
    }


def _cart_pod(pack: Pack, *, port: int = 7070, labels: dict[str, str] | None = None) -> Json:
    return healthy_pod(
        pack,
        name="cartservice-6d8f7b9c4d-q2x7z",
        namespace=NS,
        app="cartservice",
        rs="cartservice-6d8f7b9c4d",
        template_hash="6d8f7b9c4d",
        node=NODES[1],
        container_name="server",
        image="registry.acme.io/shop/cartservice:1.4.2",
        created=-2000,
        ip="10.244.2.17",
        labels=labels if labels is not None else {"app": "cartservice"},
        port=port,
    )


# ------------------------------------------------------------------------------------------ service routing
def selector_mismatch() -> Pack:
    pack = _pack("selector-mismatch", "Why can checkout not reach cartservice?", "cartservice", "checkout")
    _cart_pod(pack)
    pack.objects("services", service(pack, "cartservice", {"app": "cart-service"}))
    pack.objects("endpoints", endpoints(pack, "cartservice"))
    for minute in range(10, 50, 5):
        pack.log(
            minute,
            "checkout",
            "ERROR",
            "failed to get cart: rpc error: code = Unavailable desc = connection error: "
            'desc = "transport: Error while dialing: dial tcp 10.96.41.7:7070: connect: connection refused"',
        )
    return pack


def target_port_mismatch() -> Pack:
    pack = _pack("target-port-mismatch", "Why can checkout not reach cartservice?", "cartservice", "checkout")
    pod = _cart_pod(pack)
    pack.objects("services", service(pack, "cartservice", {"app": "cartservice"}, target=8080))
    pack.objects("endpoints", endpoints(pack, "cartservice", [{"ip": pod["status"]["podIP"], "nodeName": NODES[1]}]))
    return pack


# ------------------------------------------------------------------------------------------ scheduling
def _pending_pod(
    pack: Pack,
    message: str,
    *,
    node_selector: dict[str, str] | None = None,
    volumes: list[Json] | None = None,
    cpu: str = "250m",
) -> Json:
    name = "recommender-7c9d5f8b6a-k4m2p"
    pod = pack.pod(
        name,
        NS,
        labels={"app": "recommender", "pod-template-hash": "7c9d5f8b6a"},
        containers=[container("recommender", "registry.acme.io/shop/recommender:3.1.0", cpu=cpu)],
        created=-30,
        owner=("ReplicaSet", "recommender-7c9d5f8b6a"),
        phase="Pending",
        conditions=unschedulable(pack, -30, message),
        node_selector=node_selector,
        volumes=volumes or (),
    )
    pack.event(
        -29.9,
        NS,
        "Pod",
        name,
        "FailedScheduling",
        message,
        type="Warning",
        component="default-scheduler",
        new_api=True,
        count=14,
        last=55,
        action="Scheduling",
    )
    return pod


def untolerated_taint() -> Pack:
    pack = _pack("untolerated-taint", "Why is recommender not running?", "recommender")
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    pack.objects("nodes", *(node(pack, n, taints=taint) for n in NODES))
    _pending_pod(
        pack,
        "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/3 "
        "nodes are available: 3 Preemption is not helpful for scheduling.",
    )
    return pack


def node_selector() -> Pack:
    pack = _pack("node-selector", "Why is recommender not running?", "recommender")
    nodes(pack)
    _pending_pod(
        pack,
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: "
        "0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        node_selector={"disktype": "nvme"},
    )
    return pack


def insufficient_cpu() -> Pack:
    pack = _pack("insufficient-cpu", "Why is recommender not running?", "recommender")
    nodes(pack)
    _pending_pod(
        pack,
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No "
        "preemption victims found for incoming pod.",
        cpu="12",
    )
    return pack


def cordoned() -> Pack:
    pack = _pack("cordoned", "Why is recommender not running?", "recommender")
    pack.objects(
        "nodes",
        *(
            node(
                pack,
                n,
                unschedulable=True,
                taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": pack.ts(-40)}],
            )
            for n in NODES
        ),
    )
    _pending_pod(
        pack,
        "0/3 nodes are available: 3 node(s) were unschedulable. preemption: 0/3 nodes are available: "
        "3 Preemption is not helpful for scheduling.",
    )
    return pack


def missing_storage_class() -> Pack:
    pack = _pack("missing-storageclass", "Why is recommender not running?", "recommender")
    nodes(pack)
    volumes = [{"name": "model", "persistentVolumeClaim": {"claimName": "recommender-model"}}]
    _pending_pod(
        pack,
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 "
        "nodes are available: 3 Preemption is not helpful for scheduling.",
        volumes=volumes,
    )
    pack.objects(
        "persistentvolumeclaims",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": _meta(pack, "pvc", "recommender-model"),
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "20Gi"}},
                "storageClassName": "fast-ssd",
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        },
    )
    pack.objects(
        "storageclasses",
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": _meta(pack, "sc", "standard", None),
            "provisioner": "rancher.io/local-path",
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    )
    pack.event(
        -29.8,
        NS,
        "PersistentVolumeClaim",
        "recommender-model",
        "ProvisioningFailed",
        'storageclass.storage.k8s.io "fast-ssd" not found',
        type="Warning",
        component="persistentvolume-controller",
        count=9,
        last=55,
    )
    return pack


# ------------------------------------------------------------------------------------------ admission
def _failed_create(pack: Pack, message: str, *, minute: float = 1, last: float = 55) -> None:
    pack.event(
        minute,
        NS,
        "ReplicaSet",
        "payments-5b7f9d6c8d",
        "FailedCreate",
        message,
        type="Warning",
        component="replicaset-controller",
        count=17,
        last=last,
    )


def quota_exceeded() -> Pack:
    pack = _pack("quota-exceeded", "Why does payments have no pods?", "payments")
    pack.objects(
        "replicasets",
        replicaset(pack, "payments-5b7f9d6c8d", replicas=2, ready=0, app="payments", template_hash="5b7f9d6c8d"),
    )
    pack.objects(
        "resourcequotas",
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": _meta(pack, "quota", "compute-quota"),
            "spec": {"hard": {"requests.cpu": "2", "requests.memory": "4Gi", "pods": "10"}},
            "status": {
                "hard": {"requests.cpu": "2", "requests.memory": "4Gi", "pods": "10"},
                "used": {"requests.cpu": "2", "requests.memory": "3Gi", "pods": "8"},
            },
        },
    )
    _failed_create(
        pack,
        'Error creating: pods "payments-5b7f9d6c8d-w8x2v" is forbidden: exceeded quota: compute-quota, '
        "requested: requests.cpu=500m, used: requests.cpu=2, limited: requests.cpu=2",
    )
    return pack


def service_account_missing() -> Pack:
    pack = _pack("serviceaccount-missing", "Why does payments have no pods?", "payments")
    pack.objects(
        "replicasets",
        replicaset(pack, "payments-5b7f9d6c8d", replicas=2, ready=0, app="payments", template_hash="5b7f9d6c8d"),
    )
    pack.objects(
        "serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(pack, "sa", "default")}
    )
    _failed_create(
        pack,
        'Error creating: pods "payments-5b7f9d6c8d-" is forbidden: error looking up service account '
        'shop/payments-sa: serviceaccount "payments-sa" not found',
    )
    return pack


def old_failed_create_beside_a_crash() -> Pack:
    """A FailedCreate of payments long past (its ReplicaSet has both pods ready) beside cartservice's own failure."""
    pack = _pack("old-failed-create", "Why is cartservice failing?", "cartservice", "payments")
    pack.objects(
        "replicasets",
        replicaset(pack, "payments-5b7f9d6c8d", replicas=2, ready=2, app="payments", template_hash="5b7f9d6c8d"),
    )
    _failed_create(
        pack,
        'Error creating: pods "payments-5b7f9d6c8d-w8x2v" is forbidden: exceeded quota: compute-quota, '
        "requested: requests.cpu=500m, used: requests.cpu=2, limited: requests.cpu=2",
        minute=-600,
        last=-590,
    )
    _oom_pod(pack)
    return pack


# ------------------------------------------------------------------------------------------ start-up
def _waiting_pod(
    pack: Pack, reason: str, message: str, *, image: str = "registry.acme.io/shop/cartservice:1.4.2"
) -> Json:
    name = "cartservice-6d8f7b9c4d-q2x7z"
    return pack.pod(
        name,
        NS,
        labels={"app": "cartservice", "pod-template-hash": "6d8f7b9c4d"},
        node=NODES[1],
        containers=[container("server", image)],
        statuses=[status(pack, "server", image, state=waiting(reason, message), ready=False)],
        created=-20,
        owner=("ReplicaSet", "cartservice-6d8f7b9c4d"),
        phase="Pending",
        ip="10.244.2.17",
    )


def missing_secret() -> Pack:
    pack = _pack("missing-secret", "Why is cartservice not starting?", "cartservice")
    _waiting_pod(pack, "CreateContainerConfigError", 'secret "cart-db-credentials" not found')
    pack.objects(
        "secrets",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": _meta(pack, "secret", "cart-tls"),
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": "LS0tLS1CRUdJTg==", "tls.key": "LS0tLS1CRUdJTiBQUklW"},
        },
    )
    pack.event(
        2,
        NS,
        "Pod",
        "cartservice-6d8f7b9c4d-q2x7z",
        "Failed",
        'Error: secret "cart-db-credentials" not found',
        type="Warning",
        host=NODES[1],
        field_path="spec.containers{server}",
        count=30,
        last=55,
    )
    return pack


def missing_configmap_mount() -> Pack:
    pack = _pack("missing-configmap", "Why is cartservice not starting?", "cartservice")
    _waiting_pod(pack, "ContainerCreating", "")
    pack.objects(
        "configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta(pack, "cm", "kube-root-ca.crt"),
            "data": {"ca.crt": "-----BEGIN CERTIFICATE-----"},
        },
    )
    pack.event(
        2,
        NS,
        "Pod",
        "cartservice-6d8f7b9c4d-q2x7z",
        "FailedMount",
        'MountVolume.SetUp failed for volume "config" : configmap "cartservice-config" not found',
        type="Warning",
        host=NODES[1],
        count=12,
        last=55,
    )
    return pack


def image_not_found() -> Pack:
    pack = _pack("image-not-found", "Why is cartservice not starting?", "cartservice")
    image = "registry.acme.io/shop/cartservice:1.4.3-rc"
    _waiting_pod(pack, "ImagePullBackOff", f'Back-off pulling image "{image}"', image=image)
    pack.event(
        2,
        NS,
        "Pod",
        "cartservice-6d8f7b9c4d-q2x7z",
        "Failed",
        f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image '
        f'"{image}": failed to resolve reference "{image}": {image}: not found',
        type="Warning",
        host=NODES[1],
        field_path="spec.containers{server}",
        count=5,
        last=50,
    )
    return pack


# ------------------------------------------------------------------------------------------ runtime
def probe_wrong_port() -> Pack:
    pack = _pack("probe-wrong-port", "Why does cartservice keep restarting?", "cartservice")
    name = "cartservice-6d8f7b9c4d-q2x7z"
    image = "registry.acme.io/shop/cartservice:1.4.2"
    probes = {"livenessProbe": http_probe("/healthz", 8081), "readinessProbe": http_probe("/healthz", 8081)}
    pack.pod(
        name,
        NS,
        labels={"app": "cartservice", "pod-template-hash": "6d8f7b9c4d"},
        node=NODES[1],
        containers=[container("server", image, port=8080, probes=probes)],
        statuses=[
            status(
                pack,
                "server",
                image,
                state=running(pack, 50),
                ready=False,
                restarts=6,
                last=terminated(pack, "Error", 2, 40, 49.9),
            )
        ],
        created=-20,
        owner=("ReplicaSet", "cartservice-6d8f7b9c4d"),
        ip="10.244.2.17",
    )
    pack.event(
        1,
        NS,
        "Pod",
        name,
        "Unhealthy",
        'Liveness probe failed: Get "http://10.244.2.17:8081/healthz": dial tcp '
        "10.244.2.17:8081: connect: connection refused",
        type="Warning",
        host=NODES[1],
        field_path="spec.containers{server}",
        count=18,
        last=55,
    )
    return pack


def _oom_pod(pack: Pack) -> Json:
    name = "cartservice-6d8f7b9c4d-q2x7z"
    image = "registry.acme.io/shop/cartservice:1.4.2"
    return pack.pod(
        name,
        NS,
        labels={"app": "cartservice", "pod-template-hash": "6d8f7b9c4d"},
        node=NODES[1],
        containers=[container("server", image, memory="64Mi", limit_memory="64Mi")],
        statuses=[
            status(
                pack,
                "server",
                image,
                state=waiting("CrashLoopBackOff", "back-off 5m0s restarting failed container"),
                ready=False,
                restarts=9,
                last=terminated(pack, "OOMKilled", 137, 50, 52),
            )
        ],
        created=-20,
        owner=("ReplicaSet", "cartservice-6d8f7b9c4d"),
        ip="10.244.2.17",
    )


def memory_limit() -> Pack:
    pack = _pack("memory-limit", "Why does cartservice keep restarting?", "cartservice")
    _oom_pod(pack)
    return pack


# ------------------------------------------------------------------------------------------ infrastructure
def node_not_ready() -> Pack:
    pack = _pack("node-not-ready", "Why is cartservice unavailable?", "cartservice")
    pack.objects(
        "nodes",
        node(
            pack, NODES[1], ready="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status."
        ),
        node(pack, NODES[0]),
        node(pack, NODES[2]),
    )
    _cart_pod(pack)
    return pack


def kube_proxy_down() -> Pack:
    pack = _pack("kube-proxy-down", "Why can checkout not reach cartservice?", "cartservice", "checkout")
    _cart_pod(pack)
    pack.objects("services", service(pack, "cartservice", {"app": "cartservice"}))
    image = "registry.k8s.io/kube-proxy:v1.31.2"
    pack.pod(
        "kube-proxy-7xk2p",
        "kube-system",
        labels={"k8s-app": "kube-proxy", "controller-revision-hash": "5f9c7d8b6"},
        node=NODES[1],
        containers=[container("kube-proxy", image, port=None)],
        statuses=[
            status(
                pack,
                "kube-proxy",
                image,
                state=waiting("CrashLoopBackOff", "back-off 5m0s restarting failed container"),
                ready=False,
                restarts=12,
                last=terminated(pack, "Error", 1, 50, 50.1),
            )
        ],
        created=-3000,
        owner=("DaemonSet", "kube-proxy"),
        ip="172.18.0.3",
    )
    for minute in range(10, 50, 5):
        pack.log(minute, "checkout", "ERROR", "dial tcp 10.96.41.7:7070: i/o timeout")
    return pack


FAMILIES: dict[str, tuple[Any, tuple[str, ...]]] = {
    # incident: (builder, words the likely cause must hold: the component and the fault's object)
    "selector_mismatch": (selector_mismatch, ("cartservice", "app=cart-service", "selector")),
    "target_port_mismatch": (target_port_mismatch, ("cartservice", "targetPort 8080")),
    "untolerated_taint": (untolerated_taint, ("recommender", "taint dedicated")),
    "node_selector": (node_selector, ("recommender", "disktype=nvme")),
    "insufficient_cpu": (insufficient_cpu, ("recommender", "cpu 12")),
    "cordoned": (cordoned, ("recommender", "unschedulable", "worker-1")),
    "missing_storage_class": (missing_storage_class, ("recommender", "recommender-model", "fast-ssd")),
    "quota_exceeded": (quota_exceeded, ("payments", "compute-quota", "quota")),
    "service_account_missing": (service_account_missing, ("payments", "payments-sa", "service account")),
    "missing_secret": (missing_secret, ("cartservice", "cart-db-credentials", "does not exist")),
    "missing_configmap": (missing_configmap_mount, ("cartservice", "cartservice-config", "does not exist")),
    "image_not_found": (image_not_found, ("cartservice", "cartservice:1.4.3-rc")),
    "probe_wrong_port": (probe_wrong_port, ("cartservice", "port 8081", "8080")),
    "memory_limit": (memory_limit, ("cartservice", "OOMKilled", "64Mi")),
    "node_not_ready": (node_not_ready, ("worker-2", "Ready")),
    "kube_proxy_down": (kube_proxy_down, ("kube-proxy", "not running")),
}
