"""Held-out-like snapshots: a whole microservice application in one namespace (a hotel-reservation app of Go
services with a MongoDB and a memcached per service and consul; an online shop of gRPC services with a Redis), with
the noise a real cluster has (Services, Endpoints and EndpointSlices of every workload, kube-system's pods, several
nodes, Normal events, an ended probe failure at start-up, the ordinary log lines of healthy services), and one
injected fault (runtime, service routing or performance) whose traces are written the way Kubernetes, the kubelet,
MongoDB, the Go MongoDB driver, gRPC and the apps' own loggers write them.

``CASES`` maps a case's name to its builder and what a correct likely cause holds: the faulty workload and one of
the words of its fault. Nothing here is keyed to the analyzers: each snapshot says only what a cluster shows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.incidents.corpus.kit import (
    Pack,
    condition,
    container,
    digest,
    http_probe,
    running,
    status,
    terminated,
    uid,
    waiting,
)

Json = dict[str, Any]
START = "2025-06-10T09:00:00Z"
NODES = ("worker-1", "worker-2", "worker-3", "worker-4")
CONTROL_PLANE = "kind-control-plane"
# The pods of the application were created long before the window (two days): their start-up events expired.
CREATED = -2880.0


@dataclass
class Svc:
    """One workload of an application: its Deployment, its pod, its Service."""

    name: str
    port: int
    image: str
    container: str
    command: tuple[str, ...] = ()
    env: tuple[Json, ...] = ()
    calls: tuple[str, ...] = ()
    kind: str = "app"


@dataclass
class Shape:
    """An application: its namespace, how its manifests label pods, its workloads, the lines each kind logs."""

    namespace: str
    label: str
    services: tuple[Svc, ...]
    log: Callable[[Svc, Pack, int], list[str]]
    entry: str = "frontend"


# ------------------------------------------------------------------------------------------ log lines
def _hotel_log(svc: Svc, pack: Pack, n: int) -> list[str]:
    """zerolog's console writer (``<time> INF <file:line> > <message>``), mongod's JSON log, consul's."""
    t = pack.ts
    if svc.kind == "mongodb":
        return [
            json.dumps(
                {
                    "t": {"$date": t(5 + 9 * i).replace("Z", ".412+00:00")},
                    "s": "I",
                    "c": "NETWORK",
                    "id": 22943,
                    "ctx": "listener",
                    "msg": "Connection accepted",
                    "attr": {"remote": f"10.244.{i % 4 + 1}.{20 + i}:{40000 + 17 * i}", "connectionCount": 3 + i},
                },
                separators=(",", ":"),
            )
            for i in range(n)
        ]
    if svc.kind == "memcached":
        return []
    if svc.kind == "consul":
        return [f"{t(3 + 10 * i)} [INFO]  agent: Synced check: check=service:srv-{svc.name}" for i in range(n)]
    if svc.kind == "jaeger":
        return [
            f'{{"level":"info","ts":{pack.unix(2 + 11 * i):.3f},"caller":"app/server.go:281",'
            f'"msg":"Health Check state change","status":"ready"}}'
            for i in range(n)
        ]
    lines = [
        f"{t(CREATED)} INF cmd/{svc.name}/main.go:38 > Reading config...",
        f"{t(CREATED)} INF cmd/{svc.name}/main.go:51 > Read target port: {svc.port}",
        f"{t(CREATED)} INF cmd/{svc.name}/main.go:52 > Read consul address: consul:8500",
        f"{t(CREATED)} INF cmd/{svc.name}/main.go:53 > Read jaeger address: jaeger:6831",
        f"Initializing jaeger agent [service name: {svc.name} | host: jaeger:6831]...",
        "Jaeger client: adjusted sample ratio 1.000000",
        f"{t(CREATED)} INF cmd/{svc.name}/main.go:66 > Jaeger agent initialized",
        f"{t(CREATED)} INF cmd/{svc.name}/main.go:75 > Consul agent initialized",
        f"{t(CREATED)} INF cmd/{svc.name}/main.go:86 > Starting server...",
    ]
    return lines[: max(n, 4)]


def _shop_log(svc: Svc, pack: Pack, n: int) -> list[str]:
    """The shop's loggers: logrus JSON (Go), pino (Node.js), python-json-logger, .NET's console, log4j2 JSON."""
    out: list[str] = []
    for i in range(n):
        ts = pack.ts(4 + 11 * i).replace("Z", ".318Z")
        if svc.name in ("frontend", "checkoutservice", "productcatalogservice", "shippingservice"):
            message = {
                "frontend": "request complete",
                "checkoutservice": "payment went through (transaction_id: 5a9d3c1e-8f0b-4c11-9a31-0e6b2f5d7c44)",
                "productcatalogservice": "successfully parsed product catalog json",
                "shippingservice": "[GetQuote] received request",
            }[svc.name]
            fields: Json = {"message": message, "severity": "info", "timestamp": ts}
            if svc.name == "frontend":
                fields = {"http.req.method": "GET", "http.req.path": "/", "http.resp.status": 200, **fields}
                fields["severity"] = "debug"
            out.append(json.dumps(fields))
        elif svc.name in ("currencyservice", "paymentservice"):
            msg = "conversion request successful" if svc.name == "currencyservice" else "Transaction processed"
            out.append(
                f'{{"level":30,"time":{int(pack.unix(4 + 11 * i) * 1000)},"pid":1,"hostname":"{svc.name}",'
                f'"name":"{svc.name}-server","msg":"{msg}"}}'
            )
        elif svc.name in ("emailservice", "recommendationservice"):
            msg = (
                "A request to send order confirmation email to someone@example.com has been received."
                if svc.name == "emailservice"
                else "[Recv ListRecommendations] product_ids=['OLJCESPC7Z', '66VCHSJNUP']"
            )
            out.append(json.dumps({"timestamp": ts, "severity": "INFO", "name": f"{svc.name}-server", "message": msg}))
        elif svc.name == "cartservice":
            out += ["info: cartservice.cartstore.RedisCartStore[0]", "      GetCartAsync called with userId=8c1f"]
        elif svc.name == "adservice":
            out.append(
                f'{{"instant":{{"epochSecond":{int(pack.unix(4 + 11 * i))},"nanoOfSecond":0}},"thread":'
                '"grpc-default-executor-3","level":"INFO","loggerName":"hipstershop.AdService",'
                '"message":"received ad request (context_words=[kitchen])","endOfBatch":false}'
            )
        elif svc.name == "loadgenerator":
            out.append("GET /product/0PUK6V6EV0  200  34ms")
        elif svc.kind == "redis":
            out.append(f"1:M 10 Jun 2025 09:{4 + 11 * i % 50:02d}:00.201 * 100 changes in 300 seconds. Saving...")
    return out


# ------------------------------------------------------------------------------------------ applications
def _hotel_services() -> tuple[Svc, ...]:
    image = "yinfangchen/hotelreservation:latest"
    apps = [
        ("frontend", 5000, ("search", "profile", "recommendation", "user", "reservation")),
        ("search", 8082, ("geo", "rate")),
        ("geo", 8083, ("mongodb-geo",)),
        ("profile", 8081, ("mongodb-profile", "memcached-profile")),
        ("rate", 8084, ("mongodb-rate", "memcached-rate")),
        ("recommendation", 8085, ("mongodb-recommendation",)),
        ("reservation", 8087, ("mongodb-reservation", "memcached-reserve")),
        ("user", 8086, ("mongodb-user",)),
    ]
    out = [Svc(n, p, image, f"hotel-reserv-{n}", (n,), calls=c) for n, p, c in apps]
    for db in ("geo", "profile", "rate", "recommendation", "reservation", "user"):
        out.append(Svc(f"mongodb-{db}", 27017, "mongo:4.4.6", f"hotel-reserv-{db}-mongo", kind="mongodb"))
    for cache in ("profile", "rate", "reserve"):
        out.append(Svc(f"memcached-{cache}", 11211, "memcached:1.6.7", f"hotel-reserv-{cache}-mmc", kind="memcached"))
    out.append(Svc("consul", 8500, "hashicorp/consul:latest", "consul", kind="consul"))
    out.append(Svc("jaeger", 16686, "jaegertracing/all-in-one:latest", "hotel-reserv-jaeger", kind="jaeger"))
    return tuple(out)


def _shop_services() -> tuple[Svc, ...]:
    base = "us-central1-docker.pkg.dev/google-samples/microservices-demo"
    apps = [
        ("frontend", 8080, ("productcatalogservice", "currencyservice", "cartservice", "checkoutservice", "adservice")),
        ("cartservice", 7070, ("redis-cart",)),
        ("productcatalogservice", 3550, ()),
        ("currencyservice", 7000, ()),
        ("paymentservice", 50051, ()),
        ("shippingservice", 50051, ()),
        ("emailservice", 8080, ()),
        ("checkoutservice", 5050, ("paymentservice", "shippingservice", "emailservice", "cartservice")),
        ("recommendationservice", 8080, ("productcatalogservice",)),
        ("adservice", 9555, ()),
        ("loadgenerator", 8089, ("frontend",)),
    ]
    out = []
    for name, port, calls in apps:
        env = tuple({"name": _address_var(c), "value": f"{c}:{_port(c)}"} for c in calls)
        out.append(
            Svc(
                name,
                port,
                f"{base}/{name}:v0.10.1",
                "server" if name != "loadgenerator" else "main",
                env=env,
                calls=calls,
            )
        )
    out.append(Svc("redis-cart", 6379, "redis:alpine", "redis", kind="redis"))
    return tuple(out)


_SHOP_PORTS = {
    "productcatalogservice": 3550,
    "currencyservice": 7000,
    "cartservice": 7070,
    "checkoutservice": 5050,
    "adservice": 9555,
    "paymentservice": 50051,
    "shippingservice": 50051,
    "emailservice": 5000,
    "frontend": 80,
    "redis-cart": 6379,
}


def _address_var(name: str) -> str:
    """The shop's own names for its dependencies' addresses (PRODUCT_CATALOG_SERVICE_ADDR, REDIS_ADDR)."""
    if name == "redis-cart":
        return "REDIS_ADDR"
    stem = name.removesuffix("service")
    return ("PRODUCT_CATALOG" if stem == "productcatalog" else stem.upper()) + "_SERVICE_ADDR"


def _port(name: str) -> int:
    return _SHOP_PORTS.get(name, 8080)


HOTEL = Shape("hotel-reservation", "io.kompose.service", _hotel_services(), _hotel_log)
SHOP = Shape("online-boutique", "app", _shop_services(), _shop_log)


# ------------------------------------------------------------------------------------------ the cluster
# The alphabet of the names Kubernetes generates (pod-template-hash, a pod's suffix: ``rand.SafeEncodeString``).
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def _safe(*parts: str | int) -> str:
    *words, length = parts
    number = int(digest(*words, length=24), 16)
    out = ""
    for _ in range(int(length)):
        number, index = divmod(number, len(_SAFE))
        out += _SAFE[index]
    return out


@dataclass
class Workload:
    svc: Svc
    deployment: Json
    replicaset: Json
    pods: list[Json]
    service: Json
    endpoints: Json
    slice: Json
    logs: list[Json] = field(default_factory=list)
    index: int = 0

    @property
    def pod(self) -> Json:
        return self.pods[0]

    @property
    def pod_name(self) -> str:
        return str(self.pod["metadata"]["name"])

    @property
    def pod_ip(self) -> str:
        return str(self.pod["status"].get("podIP", ""))

    @property
    def cluster_ip(self) -> str:
        return str(self.service["spec"]["clusterIP"])

    def log(self, *lines: str, previous: bool = False) -> None:
        """Lines the pod's container wrote (after its ordinary ones), or its previous container's."""
        for entry in self.logs:
            if entry["previous"] == previous:
                entry["lines"].extend(lines)
                return
        entry = {
            "namespace": self.pod["metadata"]["namespace"],
            "pod": self.pod_name,
            "container": self.svc.container,
            "previous": previous,
            "lines": list(lines),
        }
        self.logs.append(entry)


class Cluster:
    """A healthy application in a cluster; a fault edits its objects, then ``pack`` is the snapshot."""

    def __init__(self, shape: Shape, name: str, question: str) -> None:
        self.shape = shape
        self.ns = shape.namespace
        self.pack = Pack(
            name,
            title=name,
            description="Held-out-like snapshot: a whole app, one fault.",
            question=question,
            start=START,
        )
        self.pack.truth(kind="written_by_a_test", summary="not judged: the test says what the cause must hold")
        self.apps: dict[str, Workload] = {}
        self.prometheus: list[tuple[dict[str, str], list[float]]] = []
        for i, svc in enumerate(shape.services):
            self.apps[svc.name] = self._workload(svc, i)
        self._entry()
        self._kube_system()

    def _entry(self) -> None:
        """How users reach the app: the shop's frontend-external LoadBalancer, the hotel frontend's NodePort."""
        entry = self.apps[self.shape.entry]
        if self.shape is HOTEL:
            entry.service["spec"]["type"] = "NodePort"
            entry.service["spec"]["ports"][0]["nodePort"] = 30918
            entry.service["spec"]["externalTrafficPolicy"] = "Cluster"
            return
        external = json.loads(json.dumps(entry.service))
        external["metadata"] = self.meta("service", "frontend-external", labels={"app": "frontend"})
        external["spec"].update(type="LoadBalancer", clusterIP="10.96.201.77", clusterIPs=["10.96.201.77"])
        external["spec"]["externalTrafficPolicy"] = "Cluster"
        external["spec"]["ports"] = [
            {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP", "nodePort": 31604}
        ]
        external["status"] = {"loadBalancer": {"ingress": [{"ip": "172.18.255.200", "ipMode": "VIP"}]}}
        self.pack.objects("services", external)
        endpoints = json.loads(json.dumps(entry.endpoints))
        endpoints["metadata"] = self.meta("endpoints", "frontend-external", labels={"app": "frontend"})
        endpoints["subsets"][0]["ports"] = [{"name": "http", "port": 8080, "protocol": "TCP"}]
        self.pack.objects("endpoints", endpoints)

    # ---------------------------------------------------------------------------------- objects
    def meta(
        self, kind: str, name: str, *, namespace: str | None = None, created: float = CREATED, **extra: Any
    ) -> Json:
        meta: Json = {
            "name": name,
            "namespace": namespace or self.ns,
            "uid": uid(self.pack.name, kind, namespace or self.ns, name),
            "resourceVersion": str(int(digest(kind, name, length=5), 16)),
            "creationTimestamp": self.pack.ts(created),
        }
        meta.update(extra)
        return meta

    def _workload(self, svc: Svc, i: int) -> Workload:
        pack, label = self.pack, self.shape.label
        labels = {label: svc.name}
        template_hash = _safe(svc.name, "rs", 10)
        rs_name = f"{svc.name}-{template_hash}"
        node = NODES[i % len(NODES)]
        ip = f"10.244.{i % len(NODES) + 1}.{10 + i}"
        cluster_ip = f"10.96.{(37 * i) % 200 + 10}.{(53 * i) % 240 + 4}"
        spec_container = container(
            svc.container,
            svc.image,
            cpu="100m",
            memory="64Mi" if svc.kind != "mongodb" else "256Mi",
            limit_cpu="1000m",
            limit_memory="512Mi" if svc.kind != "mongodb" else "1Gi",
            port=svc.port,
            command=svc.command,
            env=svc.env,
        )
        spec_container["ports"][0]["name"] = "grpc" if svc.kind == "app" else svc.kind
        deployment: Json = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": self.meta(
                "deployment",
                svc.name,
                labels=dict(labels),
                generation=1,
                annotations={"deployment.kubernetes.io/revision": "1", "kompose.cmd": "kompose convert"},
            ),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": dict(labels)},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": {
                    "metadata": {"labels": dict(labels)},
                    "spec": {"containers": [json.loads(json.dumps(spec_container))]},
                },
            },
            "status": {
                "observedGeneration": 1,
                "replicas": 1,
                "updatedReplicas": 1,
                "readyReplicas": 1,
                "availableReplicas": 1,
                "conditions": [
                    condition(
                        pack,
                        "Available",
                        "True",
                        "MinimumReplicasAvailable",
                        "Deployment has minimum availability.",
                        CREATED,
                        updated=True,
                    ),
                    condition(
                        pack,
                        "Progressing",
                        "True",
                        "NewReplicaSetAvailable",
                        f'ReplicaSet "{rs_name}" has successfully progressed.',
                        CREATED,
                        updated=True,
                    ),
                ],
            },
        }
        pack._k8s["deployments"].append(deployment)
        rs: Json = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": self.meta(
                "replicaset",
                rs_name,
                labels={**labels, "pod-template-hash": template_hash},
                annotations={
                    "deployment.kubernetes.io/desired-replicas": "1",
                    "deployment.kubernetes.io/max-replicas": "2",
                    "deployment.kubernetes.io/revision": "1",
                },
                ownerReferences=[
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": svc.name,
                        "uid": deployment["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            ),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {**labels, "pod-template-hash": template_hash}},
                "template": {
                    "metadata": {"labels": {**labels, "pod-template-hash": template_hash}},
                    "spec": {"containers": [json.loads(json.dumps(spec_container))]},
                },
            },
            "status": {
                "replicas": 1,
                "fullyLabeledReplicas": 1,
                "readyReplicas": 1,
                "availableReplicas": 1,
                "observedGeneration": 1,
            },
        }
        pack._k8s["replicasets"].append(rs)
        suffix = _safe(svc.name, "pod", 5)
        pod = pack.pod(
            f"{rs_name}-{suffix}",
            self.ns,
            labels={**labels, "pod-template-hash": template_hash},
            node=node,
            containers=[spec_container],
            statuses=[status(pack, svc.container, svc.image, state=running(pack, CREATED + 0.3))],
            created=CREATED,
            owner=("ReplicaSet", rs_name),
            ip=ip,
        )
        pod["metadata"]["ownerReferences"][0]["uid"] = rs["metadata"]["uid"]
        service: Json = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self.meta("service", svc.name, labels=dict(labels)),
            "spec": {
                "type": "ClusterIP",
                "clusterIP": cluster_ip,
                "clusterIPs": [cluster_ip],
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "internalTrafficPolicy": "Cluster",
                "sessionAffinity": "None",
                "selector": dict(labels),
                "ports": [{"name": str(svc.port), "port": svc.port, "targetPort": svc.port, "protocol": "TCP"}],
            },
            "status": {"loadBalancer": {}},
        }
        pack.objects("services", service)
        target = {"kind": "Pod", "name": pod["metadata"]["name"], "namespace": self.ns, "uid": pod["metadata"]["uid"]}
        endpoints: Json = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": self.meta("endpoints", svc.name, labels=dict(labels)),
            "subsets": [
                {
                    "addresses": [{"ip": ip, "nodeName": node, "targetRef": target}],
                    "ports": [{"name": str(svc.port), "port": svc.port, "protocol": "TCP"}],
                }
            ],
        }
        pack.objects("endpoints", endpoints)
        slice_: Json = {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": self.meta(
                "endpointslice",
                f"{svc.name}-{_safe(svc.name, 'eps', 5)}",
                labels={
                    "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                    "kubernetes.io/service-name": svc.name,
                    **labels,
                },
                generateName=f"{svc.name}-",
                ownerReferences=[
                    {
                        "apiVersion": "v1",
                        "kind": "Service",
                        "name": svc.name,
                        "uid": service["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            ),
            "addressType": "IPv4",
            "endpoints": [
                {
                    "addresses": [ip],
                    "conditions": {"ready": True, "serving": True, "terminating": False},
                    "nodeName": node,
                    "targetRef": target,
                }
            ],
            "ports": [{"name": str(svc.port), "port": svc.port, "protocol": "TCP"}],
        }
        pack.objects("endpointslices", slice_)
        work = Workload(svc, deployment, rs, [pod], service, endpoints, slice_, index=i)
        lines = self.shape.log(svc, pack, 5)
        if lines:
            work.log(*lines)
        return work

    def _kube_system(self) -> None:
        pack = self.pack
        nodes = []
        for n, name in enumerate((CONTROL_PLANE, *NODES)):
            labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
            spec: Json = {"podCIDR": f"10.244.{n}.0/24", "providerID": f"kind://docker/kind/{name}"}
            if name == CONTROL_PLANE:
                labels["node-role.kubernetes.io/control-plane"] = ""
                spec["taints"] = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
            conditions = [
                condition(pack, kind, "False", reason, message, -4000)
                for kind, reason, message in (
                    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                )
            ]
            conditions.append(
                condition(pack, "Ready", "True", "KubeletReady", "kubelet is posting ready status", -4000)
            )
            for c in conditions:
                c["lastHeartbeatTime"] = pack.ts(58)
            nodes.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": name,
                        "uid": uid(pack.name, "node", name),
                        "labels": labels,
                        "creationTimestamp": pack.ts(-4000),
                    },
                    "spec": spec,
                    "status": {
                        "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "95Gi"},
                        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
                        "conditions": conditions,
                        "addresses": [
                            {"type": "InternalIP", "address": f"172.18.0.{n + 2}"},
                            {"type": "Hostname", "address": name},
                        ],
                        "nodeInfo": {
                            "kubeletVersion": "v1.31.2",
                            "containerRuntimeVersion": "containerd://1.7.18",
                            "osImage": "Debian GNU/Linux 12 (bookworm)",
                        },
                    },
                }
            )
        pack.objects("nodes", *nodes)
        system = [
            (
                f"etcd-{CONTROL_PLANE}",
                "etcd",
                "registry.k8s.io/etcd:3.5.15-0",
                {"component": "etcd", "tier": "control-plane"},
                ("Node", CONTROL_PLANE),
                CONTROL_PLANE,
            ),
            (
                f"kube-apiserver-{CONTROL_PLANE}",
                "kube-apiserver",
                "registry.k8s.io/kube-apiserver:v1.31.2",
                {"component": "kube-apiserver", "tier": "control-plane"},
                ("Node", CONTROL_PLANE),
                CONTROL_PLANE,
            ),
            (
                f"kube-controller-manager-{CONTROL_PLANE}",
                "kube-controller-manager",
                "registry.k8s.io/kube-controller-manager:v1.31.2",
                {"component": "kube-controller-manager", "tier": "control-plane"},
                ("Node", CONTROL_PLANE),
                CONTROL_PLANE,
            ),
            (
                f"kube-scheduler-{CONTROL_PLANE}",
                "kube-scheduler",
                "registry.k8s.io/kube-scheduler:v1.31.2",
                {"component": "kube-scheduler", "tier": "control-plane"},
                ("Node", CONTROL_PLANE),
                CONTROL_PLANE,
            ),
            (
                "coredns-7c65d6cfc9-4xk8q",
                "coredns",
                "registry.k8s.io/coredns/coredns:v1.11.3",
                {"k8s-app": "kube-dns", "pod-template-hash": "7c65d6cfc9"},
                ("ReplicaSet", "coredns-7c65d6cfc9"),
                CONTROL_PLANE,
            ),
            (
                "coredns-7c65d6cfc9-w2zrt",
                "coredns",
                "registry.k8s.io/coredns/coredns:v1.11.3",
                {"k8s-app": "kube-dns", "pod-template-hash": "7c65d6cfc9"},
                ("ReplicaSet", "coredns-7c65d6cfc9"),
                CONTROL_PLANE,
            ),
        ]
        for node in (CONTROL_PLANE, *NODES):
            system.append(
                (
                    f"kube-proxy-{_safe('proxy', node, 5)}",
                    "kube-proxy",
                    "registry.k8s.io/kube-proxy:v1.31.2",
                    {"k8s-app": "kube-proxy", "controller-revision-hash": "77d9b7c6b8"},
                    ("DaemonSet", "kube-proxy"),
                    node,
                )
            )
            system.append(
                (
                    f"kindnet-{_safe('kindnet', node, 5)}",
                    "kindnet-cni",
                    "docker.io/kindest/kindnetd:v20241007-36f62932",
                    {"app": "kindnet", "k8s-app": "kindnet"},
                    ("DaemonSet", "kindnet"),
                    node,
                )
            )
        for name, cname, image, labels, owner, node in system:
            pack.pod(
                name,
                "kube-system",
                labels=labels,
                node=node,
                containers=[container(cname, image, port=None)],
                statuses=[status(pack, cname, image, state=running(pack, -4000))],
                created=-4000,
                owner=owner,
                ip=f"172.18.0.{(CONTROL_PLANE, *NODES).index(node) + 2}"
                if "coredns" not in name
                else f"10.244.0.{2 + len(name) % 5}",
                qos="Burstable",
            )
        kinds = {"mongodb": "database", "memcached": "cache", "redis": "cache"}
        for svc in self.shape.services:
            pack.service(svc.name, kinds.get(svc.kind, "http"), namespace=self.ns, depends_on=svc.calls)
        # Normal noise in the window: the load generator's rollout an hour before, an ended start-up probe failure.
        self._noise()
        self._old_restarts()

    def _old_restarts(self) -> None:
        """Services that started before their database or cache was up exited then (two days ago) and have run
        ready since: a restart count and a last termination long over, never today's cause."""
        pack = self.pack
        for name in ("search", "reservation", "recommendation", "checkoutservice", "recommendationservice"):
            work = self.apps.get(name)
            if work is None:
                continue
            s = work.pod["status"]["containerStatuses"][0]
            s["restartCount"] = 2
            s["lastState"] = terminated(pack, "Error", 2, CREATED + 0.2, CREATED + 0.9)
            s["state"] = running(pack, CREATED + 1.0)

    def _noise(self) -> None:
        """A workload rolled out before the window (its new pod started: Scheduled, Pulled, Created, Started; its
        old pod stopped), whose readiness probe failed twice while it started, then passed: an ended condition."""
        pack = self.pack
        name = "loadgenerator" if "loadgenerator" in self.apps else "jaeger"
        work = self.apps[name]
        pod = work.pod
        pod["metadata"]["creationTimestamp"] = pack.ts(-50)
        pod["status"]["startTime"] = pack.ts(-50)
        pod["status"]["containerStatuses"][0]["state"] = running(pack, -49.8)
        node = pod["spec"]["nodeName"]
        pod_name = work.pod_name
        pack.scheduled(-50, self.ns, pod_name, node)
        field_path = f"spec.containers{{{work.svc.container}}}"
        for offset, reason, message in (
            (0.02, "Pulled", f'Container image "{work.svc.image}" already present on machine'),
            (0.05, "Created", f"Created container {work.svc.container}"),
            (0.08, "Started", f"Started container {work.svc.container}"),
        ):
            pack.event(-50 + offset, self.ns, "Pod", pod_name, reason, message, host=node, field_path=field_path)
        pack.event(
            -49.7,
            self.ns,
            "Pod",
            pod_name,
            "Unhealthy",
            f'Readiness probe failed: Get "http://{work.pod_ip}:{work.svc.port}/": dial tcp '
            f"{work.pod_ip}:{work.svc.port}: connect: connection refused",
            type="Warning",
            host=node,
            field_path=field_path,
            count=2,
            last=-49.5,
        )
        pack.event(
            -50,
            self.ns,
            "Deployment",
            name,
            "ScalingReplicaSet",
            f"Scaled up replica set {work.replicaset['metadata']['name']} to 1",
            component="deployment-controller",
        )

    # ---------------------------------------------------------------------------------- fault helpers
    def event(
        self,
        work: Workload,
        reason: str,
        message: str,
        *,
        count: int = 1,
        first: float = 1,
        last: float = 58,
        warning: bool = True,
    ) -> None:
        self.pack.event(
            first,
            self.ns,
            "Pod",
            work.pod_name,
            reason,
            message,
            type="Warning" if warning else "Normal",
            host=work.pod["spec"]["nodeName"],
            field_path=f"spec.containers{{{work.svc.container}}}",
            count=count,
            last=last,
        )

    def not_ready(
        self, work: Workload, *, restarts: int = 0, state: Json | None = None, last: Json | None = None
    ) -> None:
        """The pod's container is not ready now (and so out of its Endpoints and EndpointSlice)."""
        s = work.pod["status"]["containerStatuses"][0]
        s["ready"] = False
        s["started"] = state is not None and "running" in state
        s["restartCount"] = restarts
        if state is not None:
            s["state"] = state
        if last is not None:
            s["lastState"] = last
        for cond in work.pod["status"]["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond.update(
                    status="False",
                    reason="ContainersNotReady",
                    message=f"containers with unready status: [{work.svc.container}]",
                    lastTransitionTime=self.pack.ts(2),
                )
        for kind in (work.deployment, work.replicaset):
            kind["status"]["readyReplicas"] = 0
            kind["status"]["availableReplicas"] = 0
        work.deployment["status"]["unavailableReplicas"] = 1
        work.deployment["status"]["conditions"][0].update(
            status="False",
            reason="MinimumReplicasUnavailable",
            message="Deployment does not have minimum availability.",
        )
        subset = work.endpoints["subsets"][0]
        subset["notReadyAddresses"] = subset.pop("addresses")
        work.slice["endpoints"][0]["conditions"] = {"ready": False, "serving": False, "terminating": False}

    def crash_loop(
        self, work: Workload, reason: str, code: int, *, restarts: int = 7, message: str | None = None
    ) -> None:
        last = terminated(self.pack, reason, code, 54, 54.2, message=message)
        self.not_ready(
            work,
            restarts=restarts,
            state=waiting(
                "CrashLoopBackOff",
                f"back-off 5m0s restarting failed container={work.svc.container} "
                f"pod={work.pod_name}_{self.ns}({work.pod['metadata']['uid']})",
            ),
            last=last,
        )
        self.event(
            work,
            "BackOff",
            f"Back-off restarting failed container {work.svc.container} in pod "
            f"{work.pod_name}_{self.ns}({work.pod['metadata']['uid']})",
            count=restarts * 4,
            first=6,
        )

    def series(self, labels: dict[str, str], values: list[float]) -> None:
        self.pack.series(labels, values)

    def build(self) -> Pack:
        for work in self.apps.values():
            for entry in work.logs:
                if entry["lines"]:
                    self.pack._k8s["pod_logs"].append(entry)
        return self.pack


Fault = Callable[[Cluster], None]


@dataclass(frozen=True)
class Case:
    shape: Shape
    question: str
    fault: Fault | None
    component: str
    fault_words: tuple[str, ...]
    family: str
    # The caller the question names, when the fault is in a workload it calls: the answer links the two.
    caller: str = ""

    def build(self, name: str) -> Pack:
        cluster = Cluster(self.shape, name, self.question)
        if self.fault is not None:
            self.fault(cluster)
        return cluster.build()


def _zlog(pack: Pack, minute: float, level: str, where: str, message: str) -> str:
    return f"{pack.ts(minute)} {level} {where} > {message}"


def _grpc_refused(ip: str, port: int) -> str:
    return (
        'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: '
        f'dial tcp {ip}:{port}: connect: connection refused"'
    )


def _frontend_error(pack: Pack, minute: float, error: str, path: str = "/") -> str:
    return json.dumps(
        {
            "error": error,
            "http.req.id": digest("req", minute, length=8) + "-2f4c-4e1a-9b7d-" + digest("r", minute, length=12),
            "http.req.method": "GET",
            "http.req.path": path,
            "message": "request error",
            "session": "8c1f4a9e-3b2d-4f6a-9c0e-7d5b1a2e3f40",
            "severity": "error",
            "timestamp": pack.ts(minute).replace("Z", ".522Z"),
        }
    )


# ------------------------------------------------------------------------------------------ runtime faults
def liveness_wrong_port(c: Cluster) -> None:
    """geo's liveness probe checks 8081; geo listens on 8083: the kubelet kills it every 30 s."""
    work = c.apps["geo"]
    spec = work.pod["spec"]["containers"][0]
    spec["livenessProbe"] = http_probe("/healthz", 8081, period=10, failures=3)
    work.deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbe"] = spec["livenessProbe"]
    work.pod["status"]["containerStatuses"][0].update(
        restartCount=9, state=running(c.pack, 57.5), lastState=terminated(c.pack, "Error", 2, 57, 57.4)
    )
    work.pod["status"]["containerStatuses"][0]["ready"] = True
    ip = work.pod_ip
    c.event(
        work,
        "Unhealthy",
        f'Liveness probe failed: Get "http://{ip}:8081/healthz": dial tcp {ip}:8081: connect: connection refused',
        count=27,
    )
    c.event(
        work,
        "Killing",
        f"Container {work.svc.container} failed liveness probe, will be restarted",
        count=9,
        warning=False,
    )
    c.event(work, "Pulled", f'Container image "{work.svc.image}" already present on machine', count=9, warning=False)


def readiness_wrong_path(c: Cluster) -> None:
    """rate's readiness probe asks /ready, which rate does not serve (404): rate is never ready, search fails."""
    work = c.apps["rate"]
    probe = http_probe("/ready", 8084, period=5)
    work.pod["spec"]["containers"][0]["readinessProbe"] = probe
    work.deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = probe
    work.pod["metadata"]["creationTimestamp"] = c.pack.ts(-5)
    c.not_ready(work, state=running(c.pack, -4.9))
    c.event(work, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404", count=780, first=-4.8)


def memory_limit_too_low(c: Cluster) -> None:
    """recommendation's memory limit was set to 16Mi: it is OOMKilled as it loads its data."""
    work = c.apps["recommendation"]
    for spec in (work.pod["spec"]["containers"][0], work.deployment["spec"]["template"]["spec"]["containers"][0]):
        spec["resources"] = {
            "requests": {"cpu": "100m", "memory": "16Mi"},
            "limits": {"cpu": "1000m", "memory": "16Mi"},
        }
    c.crash_loop(work, "OOMKilled", 137, restarts=8)
    work.log(_zlog(c.pack, 54, "INF", "cmd/recommendation/main.go:38", "Reading config..."), previous=True)


def wrong_binary(c: Cluster) -> None:
    """geo's command was changed to a binary its image does not have: the runtime cannot start it."""
    work = c.apps["geo"]
    for spec in (work.pod["spec"]["containers"][0], work.deployment["spec"]["template"]["spec"]["containers"][0]):
        spec["command"] = ["geo-wrong"]
    message = (
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
        'unable to start container process: exec: "geo-wrong": executable file not found in $PATH: unknown'
    )
    c.crash_loop(work, "StartError", 128, restarts=6, message=message)
    work.pod["status"]["containerStatuses"][0]["lastState"]["terminated"]["startedAt"] = "1970-01-01T00:00:00Z"
    c.event(work, "Failed", f"Error: {message}", count=7)
    work.logs.clear()


def shop_wrong_command(c: Cluster) -> None:
    """shippingservice's command runs a shell line naming a program the image lacks: it exits 127 at once."""
    work = c.apps["shippingservice"]
    for spec in (work.pod["spec"]["containers"][0], work.deployment["spec"]["template"]["spec"]["containers"][0]):
        spec["command"] = ["/bin/sh", "-c", "shippingsvc --port 50051"]
    c.crash_loop(work, "Error", 127, restarts=6)
    work.logs.clear()
    work.log("/bin/sh: 1: shippingsvc: not found", previous=True)
    for m in range(8, 58, 9):
        c.apps["checkoutservice"].log(
            json.dumps(
                {
                    "message": (
                        f"failed to get shipping quote: {_grpc_refused(c.apps['shippingservice'].cluster_ip, 50051)}"
                    ),
                    "severity": "warning",
                    "timestamp": c.pack.ts(m),
                }
            )
        )


def scaled_to_zero(c: Cluster) -> None:
    """checkoutservice was scaled to 0 replicas: the frontend cannot place orders."""
    work = c.apps["checkoutservice"]
    work.deployment["spec"]["replicas"] = 0
    work.deployment["metadata"]["generation"] = 2
    work.deployment["status"] = {"observedGeneration": 2, "conditions": work.deployment["status"]["conditions"]}
    work.replicaset["spec"]["replicas"] = 0
    work.replicaset["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "0"
    work.replicaset["status"] = {"replicas": 0, "observedGeneration": 2}
    c.pack._k8s["pods"].remove(work.pod)
    work.logs.clear()
    del work.endpoints["subsets"]
    work.slice["endpoints"] = None
    c.pack.event(
        3,
        c.ns,
        "Deployment",
        "checkoutservice",
        "ScalingReplicaSet",
        f"Scaled down replica set {work.replicaset['metadata']['name']} to 0 from 1",
        component="deployment-controller",
    )
    c.pack.event(
        3.01,
        c.ns,
        "Pod",
        work.pod_name,
        "Killing",
        f"Stopping container {work.svc.container}",
        host=work.pod["spec"]["nodeName"],
        field_path="spec.containers{server}",
    )
    for m in range(6, 58, 5):
        c.apps["frontend"].log(
            _frontend_error(
                c.pack, m, "failed to complete the order: " + _grpc_refused(work.cluster_ip, 5050), "/cart/checkout"
            )
        )


def hotel_scaled_to_zero(c: Cluster) -> None:
    """search was scaled to 0: consul holds no address of it and the frontend's gRPC resolver finds none."""
    work = c.apps["search"]
    work.deployment["spec"]["replicas"] = 0
    work.deployment["status"] = {"observedGeneration": 2, "conditions": work.deployment["status"]["conditions"]}
    work.replicaset["spec"]["replicas"] = 0
    work.replicaset["status"] = {"replicas": 0, "observedGeneration": 2}
    c.pack._k8s["pods"].remove(work.pod)
    work.logs.clear()
    del work.endpoints["subsets"]
    work.slice["endpoints"] = None
    c.pack.event(
        2,
        c.ns,
        "Deployment",
        "search",
        "ScalingReplicaSet",
        f"Scaled down replica set {work.replicaset['metadata']['name']} to 0 from 1",
        component="deployment-controller",
    )
    for m in range(5, 58, 6):
        c.apps["frontend"].log(
            _zlog(
                c.pack,
                m,
                "ERR",
                "services/frontend/server.go:187",
                "SearchHandler: rpc error: code = Unavailable desc = name resolver error: produced zero addresses",
            )
        )


def wrong_db_address(c: Cluster) -> None:
    """geo is configured with a MongoDB host that does not exist (mongodb-geox): it panics on its first query."""
    work = c.apps["geo"]
    p = c.pack
    error = (
        "server selection error: server selection timeout, current topology: { Type: Unknown, Servers: [{ Addr: "
        "mongodb-geox:27017, Type: Unknown, Last error: dial tcp: lookup mongodb-geox on 10.96.0.10:53: no "
        "such host }, ] }"
    )
    c.crash_loop(work, "Error", 2, restarts=5)
    work.logs.clear()
    work.log(
        _zlog(p, 53, "INF", "cmd/geo/main.go:38", "Reading config..."),
        _zlog(p, 53, "INF", "cmd/geo/main.go:51", "Read database URL: mongodb-geox:27017"),
        _zlog(p, 53, "INF", "cmd/geo/main.go:52", "Initializing DB connection..."),
        _zlog(p, 53.5, "PNC", "cmd/geo/db.go:44", error),
        f"panic: {error}",
        "",
        "goroutine 1 [running]:",
        "github.com/rs/zerolog.(*Logger).Panic.func1({0xc0001a6000, 0x10d})",
        previous=True,
    )


def mongodb_role_revoked(c: Cluster) -> None:
    """mongodb-geo's user lost its readWrite role on geo-db: mongod refuses geo's queries, geo panics."""
    geo, db = c.apps["geo"], c.apps["mongodb-geo"]
    p = c.pack
    error = (
        "(Unauthorized) not authorized on geo-db to execute command "
        '{ find: "geo", filter: {}, lsid: { id: {4 [150 33 19 42 11 76 77 20 173 8 17 93 54 102 245 12]} }, '
        '$db: "geo-db" }'
    )
    c.crash_loop(geo, "Error", 2, restarts=6)
    geo.logs.clear()
    geo.log(
        _zlog(p, 54, "INF", "cmd/geo/main.go:51", "Read database URL: mongodb-geo:27017"),
        _zlog(p, 54, "INF", "cmd/geo/db.go:29", "New session successfull..."),
        _zlog(p, 54.1, "PNC", "cmd/geo/db.go:52", error),
        f"panic: {error}",
        previous=True,
    )
    for m in range(4, 58, 7):
        db.log(
            json.dumps(
                {
                    "t": {"$date": p.ts(m).replace("Z", ".101+00:00")},
                    "s": "I",
                    "c": "ACCESS",
                    "id": 20436,
                    "ctx": f"conn{200 + m}",
                    "msg": "Checking authorization failed",
                    "attr": {
                        "error": {
                            "code": 13,
                            "codeName": "Unauthorized",
                            "errmsg": (
                                'not authorized on geo-db to execute command { find: "geo", filter: {}, $db: "geo-db" }'
                            ),
                        }
                    },
                },
                separators=(",", ":"),
            )
        )


def mongodb_user_missing(c: Cluster) -> None:
    """mongodb-rate's admin user was removed: rate's connections fail authentication, rate crash-loops."""
    rate, db = c.apps["rate"], c.apps["mongodb-rate"]
    p = c.pack
    error = (
        "connection() error occurred during connection handshake: auth error: sasl conversation error: unable to "
        'authenticate using mechanism "SCRAM-SHA-1": (AuthenticationFailed) Authentication failed.'
    )
    c.crash_loop(rate, "Error", 2, restarts=6)
    rate.logs.clear()
    rate.log(
        _zlog(p, 54, "INF", "cmd/rate/main.go:51", "Read database URL: mongodb-rate:27017"),
        _zlog(p, 54, "INF", "cmd/rate/db.go:29", "New session successfull..."),
        _zlog(p, 54.2, "PNC", "cmd/rate/db.go:40", error),
        f"panic: {error}",
        previous=True,
    )
    for m in range(4, 58, 7):
        db.log(
            json.dumps(
                {
                    "t": {"$date": p.ts(m).replace("Z", ".733+00:00")},
                    "s": "I",
                    "c": "ACCESS",
                    "id": 20249,
                    "ctx": f"conn{300 + m}",
                    "msg": "Authentication failed",
                    "attr": {
                        "mechanism": "SCRAM-SHA-1",
                        "speculative": False,
                        "principalName": "admin",
                        "authenticationDatabase": "admin",
                        "remote": f"{rate.pod_ip}:{41000 + m}",
                        "extraInfo": {},
                        "error": 'UserNotFound: Could not find user "admin" for db "admin"',
                    },
                },
                separators=(",", ":"),
            )
        )


def backend_killed(c: Cluster) -> None:
    """memcached-profile's container is killed again and again (SIGKILL, exit 137, not OOM): profile's calls to it
    are refused between restarts."""
    work, profile = c.apps["memcached-profile"], c.apps["profile"]
    s = work.pod["status"]["containerStatuses"][0]
    s.update(restartCount=6, state=running(c.pack, 57.2), lastState=terminated(c.pack, "Error", 137, 50, 57.1))
    c.event(work, "Pulled", f'Container image "{work.svc.image}" already present on machine', count=6, warning=False)
    c.event(work, "Created", f"Created container {work.svc.container}", count=6, warning=False)
    c.event(work, "Started", f"Started container {work.svc.container}", count=6, warning=False)
    for m in range(5, 58, 6):
        profile.log(
            _zlog(
                c.pack,
                m,
                "ERR",
                "services/profile/server.go:138",
                f"memcached error: dial tcp {work.cluster_ip}:11211: connect: connection refused",
            )
        )


def redis_down(c: Cluster) -> None:
    """redis-cart's pod crash-loops: cartservice cannot reach it, the frontend's cart pages fail."""
    redis, cart = c.apps["redis-cart"], c.apps["cartservice"]
    c.crash_loop(redis, "Error", 1, restarts=5)
    redis.logs.clear()
    redis.log(
        "1:C 10 Jun 2025 09:54:00.101 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
        "1:M 10 Jun 2025 09:54:00.104 # Can't open the append-only file appendonly.aof: Permission denied",
        previous=True,
    )
    for m in range(6, 58, 6):
        cart.log(
            "fail: cartservice.cartstore.RedisCartStore[0]",
            "      StackExchange.Redis.RedisConnectionException: It was not possible to connect to the redis "
            "server(s). "
            "UnableToConnect on redis-cart:6379/Interactive, Initializing/NotStarted, last: NONE, origin: "
            "BeginConnectAsync",
        )
        c.apps["frontend"].log(
            _frontend_error(
                c.pack,
                m,
                "failed to get cart: rpc error: code = FailedPrecondition desc = Can't access cart storage. "
                "StackExchange.Redis.RedisConnectionException: It was not possible to connect to the "
                "redis server(s). UnableToConnect on redis-cart:6379/Interactive",
                "/cart",
            )
        )


def shop_liveness_timeout(c: Cluster) -> None:
    """paymentservice's liveness probe was pointed at 50052 (it serves on 50051): grpc_health_probe times out."""
    work = c.apps["paymentservice"]
    probe = {
        "exec": {"command": ["/bin/grpc_health_probe", "-addr=:50052"]},
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "failureThreshold": 3,
        "successThreshold": 1,
    }
    work.pod["spec"]["containers"][0]["livenessProbe"] = probe
    work.deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbe"] = probe
    work.pod["status"]["containerStatuses"][0].update(
        restartCount=8, state=running(c.pack, 57.6), lastState=terminated(c.pack, "Error", 137, 57, 57.5)
    )
    c.event(work, "Unhealthy", 'Liveness probe failed: timeout: failed to connect service ":50052" within 1s', count=24)
    c.event(
        work,
        "Killing",
        f"Container {work.svc.container} failed liveness probe, will be restarted",
        count=8,
        warning=False,
    )


def shop_oom(c: Cluster) -> None:
    """adservice (Java) got a 180Mi memory limit: the JVM's heap does not fit, the kernel kills it."""
    work = c.apps["adservice"]
    for spec in (work.pod["spec"]["containers"][0], work.deployment["spec"]["template"]["spec"]["containers"][0]):
        spec["resources"] = {
            "requests": {"cpu": "200m", "memory": "180Mi"},
            "limits": {"cpu": "300m", "memory": "180Mi"},
        }
    c.crash_loop(work, "OOMKilled", 137, restarts=5)
    for m in range(8, 58, 10):
        c.apps["frontend"].log(
            json.dumps(
                {
                    "error": (
                        'rpc error: code = Unavailable desc = connection error: desc = "transport: '
                        f'Error while dialing: dial tcp {work.cluster_ip}:9555: connect: connection refused"'
                    ),
                    "message": "failed to retrieve ads",
                    "severity": "warning",
                    "timestamp": c.pack.ts(m),
                }
            )
        )


# ------------------------------------------------------------------------------------------ service routing faults
def selector_matches_nothing(c: Cluster) -> None:
    """productcatalogservice's Service selects app=productcatalog; its pods are app=productcatalogservice."""
    work = c.apps["productcatalogservice"]
    work.service["spec"]["selector"] = {"app": "productcatalog"}
    del work.endpoints["subsets"]
    work.slice["endpoints"] = None
    for m in range(4, 58, 4):
        c.apps["frontend"].log(
            _frontend_error(c.pack, m, "could not retrieve products: " + _grpc_refused(work.cluster_ip, 3550))
        )
        c.apps["recommendationservice"].log(
            json.dumps(
                {
                    "timestamp": c.pack.ts(m),
                    "severity": "ERROR",
                    "name": "recommendationservice-server",
                    "message": (
                        "failed to list products: <_InactiveRpcError of RPC that terminated with: "
                        'status = StatusCode.UNAVAILABLE details = "failed to connect to all addresses; '
                        f"last error: UNKNOWN: ipv4:{work.cluster_ip}:3550: Failed to connect to remote "
                        'host: Connection refused">'
                    ),
                }
            )
        )


def target_port_wrong(c: Cluster) -> None:
    """reservation's Service sends to targetPort 8088; the container listens on 8087."""
    work = c.apps["reservation"]
    work.service["spec"]["ports"][0]["targetPort"] = 8088
    work.endpoints["subsets"][0]["ports"][0]["port"] = 8088
    work.slice["ports"][0]["port"] = 8088
    for m in range(5, 58, 5):
        c.apps["frontend"].log(
            _zlog(
                c.pack,
                m,
                "ERR",
                "services/frontend/server.go:412",
                "ReservationHandler: rpc error: code = Unavailable desc = connection error: desc = "
                f'"transport: Error while dialing: dial tcp {work.pod_ip}:8088: connect: connection '
                'refused"',
            )
        )


def shop_target_port_wrong(c: Cluster) -> None:
    """currencyservice's Service targets 7001; the container listens on 7000."""
    work = c.apps["currencyservice"]
    work.service["spec"]["ports"][0]["targetPort"] = 7001
    work.endpoints["subsets"][0]["ports"][0]["port"] = 7001
    work.slice["ports"][0]["port"] = 7001
    for m in range(4, 58, 4):
        c.apps["frontend"].log(
            _frontend_error(c.pack, m, "could not retrieve currencies: " + _grpc_refused(work.cluster_ip, 7000))
        )


def wrong_service_address(c: Cluster) -> None:
    """checkoutservice's PAYMENT_SERVICE_ADDR names shippingservice: the server there has no PaymentService."""
    work = c.apps["checkoutservice"]
    for spec in (work.pod["spec"]["containers"][0], work.deployment["spec"]["template"]["spec"]["containers"][0]):
        for env in spec["env"]:
            if env["name"] == "PAYMENT_SERVICE_ADDR":
                env["value"] = "shippingservice:50051"
    for m in range(5, 58, 5):
        work.log(
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
                m + 0.1,
                "failed to complete the order: rpc error: code = Internal desc = failed to charge card: "
                "could not charge the card: rpc error: code = Unimplemented desc = unknown service "
                "hipstershop.PaymentService",
                "/cart/checkout",
            )
        )


# ------------------------------------------------------------------------------------------ performance faults
def network_delay(c: Cluster) -> None:
    """A 3 s delay on user's network: the frontend's login calls to user exceed their deadline."""
    for m in range(3, 58, 3):
        c.apps["frontend"].log(
            _zlog(
                c.pack,
                m,
                "ERR",
                "services/frontend/server.go:309",
                "UserHandler: user.CheckUser: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
            )
        )


def network_loss(c: Cluster) -> None:
    """Packets to cartservice are dropped: the frontend's dials to it time out."""
    work = c.apps["cartservice"]
    for m in range(3, 58, 3):
        c.apps["frontend"].log(
            _frontend_error(
                c.pack,
                m,
                "could not retrieve cart: rpc error: code = Unavailable desc = connection error: desc = "
                f'"transport: Error while dialing: dial tcp {work.cluster_ip}:7070: i/o timeout"',
                "/cart",
            )
        )


def cpu_throttled(c: Cluster) -> None:
    """currencyservice runs at its 100m CPU limit: the kernel throttles it in most scheduling periods."""
    work = c.apps["currencyservice"]
    for spec in (work.pod["spec"]["containers"][0], work.deployment["spec"]["template"]["spec"]["containers"][0]):
        spec["resources"] = {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "100m", "memory": "128Mi"}}
    for name, w in c.apps.items():
        base = {
            "namespace": c.ns,
            "pod": w.pod_name,
            "container": w.svc.container,
            "job": "kubelet",
            "metrics_path": "/metrics/cadvisor",
            "image": w.svc.image,
        }
        share = 0.82 if name == "currencyservice" else 0.01
        c.series({"__name__": "container_cpu_cfs_periods_total", **base}, [float(600 * i) for i in range(61)])
        c.series(
            {"__name__": "container_cpu_cfs_throttled_periods_total", **base},
            [float(int(600 * share * i)) for i in range(61)],
        )
    for m in range(4, 58, 4):
        c.apps["frontend"].log(
            json.dumps(
                {
                    "http.req.method": "GET",
                    "http.req.path": "/",
                    "http.resp.status": 200,
                    "http.resp.took_ms": 2870,
                    "message": "request complete",
                    "severity": "debug",
                    "timestamp": c.pack.ts(m),
                }
            )
        )


CASES: dict[str, Case] = {
    # name: the shape, the question, the fault, the faulty workload, words of its fault (one must be said), family
    "hotel_liveness_wrong_port": Case(
        HOTEL, "Why does geo keep restarting?", liveness_wrong_port, "geo", ("checks port 8081",), "runtime"
    ),
    "hotel_readiness_404": Case(
        HOTEL,
        "Hotel searches fail in namespace hotel-reservation. What is the root cause?",
        readiness_wrong_path,
        "rate",
        ("path /ready",),
        "runtime",
    ),
    "hotel_memory_limit": Case(
        HOTEL,
        "Why is recommendation crashing?",
        memory_limit_too_low,
        "recommendation",
        ("OOMKilled", "memory"),
        "runtime",
    ),
    "hotel_wrong_binary": Case(
        HOTEL,
        "What is wrong in namespace hotel-reservation?",
        wrong_binary,
        "geo",
        ("geo-wrong", "command", "executable"),
        "runtime",
    ),
    "shop_wrong_command": Case(
        SHOP,
        "Why is shippingservice failing?",
        shop_wrong_command,
        "shippingservice",
        ("not found", "command"),
        "runtime",
    ),
    "shop_zero_replicas_frontend": Case(
        SHOP,
        "Why does frontend fail to place orders?",
        scaled_to_zero,
        "checkoutservice",
        ("0 replicas", "zero"),
        "runtime",
        "frontend",
    ),
    "hotel_zero_replicas": Case(
        HOTEL,
        "What is wrong in namespace hotel-reservation?",
        hotel_scaled_to_zero,
        "search",
        ("0 replicas", "zero"),
        "runtime",
    ),
    "hotel_wrong_db_url": Case(HOTEL, "Why is geo crashing?", wrong_db_address, "geo", ("mongodb-geox",), "runtime"),
    "hotel_mongodb_role_revoked": Case(
        HOTEL,
        "What is wrong in namespace hotel-reservation?",
        mongodb_role_revoked,
        "mongodb-geo",
        ("authoriz",),
        "runtime",
    ),
    "hotel_mongodb_user_missing": Case(
        HOTEL, "Why is rate crashing?", mongodb_user_missing, "mongodb-rate", ("authenticat",), "runtime"
    ),
    "hotel_backend_killed": Case(
        HOTEL,
        "Why does profile report errors?",
        backend_killed,
        "memcached-profile",
        ("137", "killed", "restart"),
        "runtime",
    ),
    "shop_redis_down_frontend": Case(
        SHOP,
        "Why does frontend show cart errors?",
        redis_down,
        "redis-cart",
        ("crash", "append-only", "Permission denied"),
        "runtime",
        "frontend",
    ),
    "shop_liveness_timeout": Case(
        SHOP,
        "What is wrong in namespace online-boutique?",
        shop_liveness_timeout,
        "paymentservice",
        ("probe",),
        "runtime",
    ),
    "shop_memory_limit": Case(
        SHOP, "Why is adservice restarting?", shop_oom, "adservice", ("OOMKilled", "memory"), "runtime"
    ),
    "shop_selector_mismatch": Case(
        SHOP,
        "What is wrong in namespace online-boutique?",
        selector_matches_nothing,
        "productcatalogservice",
        ("selector",),
        "routing",
    ),
    "hotel_target_port": Case(
        HOTEL,
        "Reservations fail in namespace hotel-reservation. Why?",
        target_port_wrong,
        "reservation",
        ("targetPort",),
        "routing",
    ),
    "shop_target_port": Case(
        SHOP,
        "Why can frontend not show prices?",
        shop_target_port_wrong,
        "currencyservice",
        ("targetPort",),
        "routing",
        "frontend",
    ),
    "shop_wrong_service_address": Case(
        SHOP,
        "Why do checkouts fail in namespace online-boutique?",
        wrong_service_address,
        "checkoutservice",
        ("PAYMENT_SERVICE_ADDR", "shippingservice"),
        "routing",
    ),
    "hotel_network_delay": Case(
        HOTEL,
        "Why are logins slow in namespace hotel-reservation?",
        network_delay,
        "user",
        ("time out", "deadline", "latency"),
        "performance",
    ),
    "shop_network_loss": Case(
        SHOP,
        "Why does the cart page fail in namespace online-boutique?",
        network_loss,
        "cartservice",
        ("time out", "timeout"),
        "performance",
    ),
    "shop_cpu_throttled": Case(
        SHOP,
        "Why is the shop slow in namespace online-boutique?",
        cpu_throttled,
        "currencyservice",
        ("CPU", "cpu", "throttl"),
        "performance",
    ),
    "shop_healthy": Case(
        SHOP, "Is anything wrong in namespace online-boutique?", None, "", ("No incident",), "healthy"
    ),
    "hotel_healthy": Case(
        HOTEL, "Is anything wrong in namespace hotel-reservation?", None, "", ("No incident",), "healthy"
    ),
}
