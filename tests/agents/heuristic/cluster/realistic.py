"""Snapshots shaped like those of real fault-injected clusters: two microservice apps (an online shop of a dozen
gRPC services and a Redis cart; a hotel-reservation app whose services sit on MongoDB and memcached), every
workload with its Deployment, ReplicaSet, pod, Service, Endpoints and EndpointSlice, a four-node cluster with a
tainted control plane, kube-system's own pods, the Normal events every start leaves and old warnings that have
ended; then one fault of the scheduling, admission, start-up or infrastructure families, written with the texts
the kube-scheduler, the ReplicaSet and PersistentVolume controllers and the kubelet emit for it (issue: the whole
cluster). The faults are held out from ``incidents``: they share no builder with them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tests.incidents.corpus.kit import (
    Pack,
    container,
    digest,
    pod_start_events,
    running,
    status,
    terminated,
    uid,
    unschedulable,
    waiting,
)

Json = dict[str, Any]
START = "2025-09-14T13:00:00Z"
CONTROL = "kind-control-plane"
WORKERS = ("kind-worker", "kind-worker2", "kind-worker3")
NODES = (CONTROL, *WORKERS)
CONTROL_TAINT = "{node-role.kubernetes.io/control-plane: }"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"
# Every workload of both apps started five hours before the window.
BORN = -300.0


def safe(*parts: object, length: int) -> str:
    """A name part in Kubernetes' safe alphabet (a pod-template-hash, a generated suffix), derived from ``parts``."""
    value = int(digest(*parts, length=24), 16)
    out = ""
    for _ in range(length):
        value, index = divmod(value, len(_SAFE))
        out += _SAFE[index]
    return out


@dataclass(frozen=True, slots=True)
class Part:
    """One workload of an app: its name, container, image and port, what it calls, the claim it mounts."""

    name: str
    container: str
    image: str
    port: int
    calls: tuple[str, ...] = ()
    claim: str = ""
    command: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class App:
    namespace: str
    label: str
    parts: tuple[Part, ...]

    def part(self, name: str) -> Part:
        return next(p for p in self.parts if p.name == name)


_OB = "us-central1-docker.pkg.dev/google-samples/microservices-demo"
SHOP = App(
    "boutique",
    "app",
    (
        Part(
            "frontend",
            "server",
            f"{_OB}/frontend:v0.10.1",
            8080,
            (
                "adservice",
                "cartservice",
                "checkoutservice",
                "currencyservice",
                "productcatalogservice",
                "recommendationservice",
                "shippingservice",
            ),
        ),
        Part("cartservice", "server", f"{_OB}/cartservice:v0.10.1", 7070, ("redis-cart",)),
        Part("productcatalogservice", "server", f"{_OB}/productcatalogservice:v0.10.1", 3550),
        Part("currencyservice", "server", f"{_OB}/currencyservice:v0.10.1", 7000),
        Part("paymentservice", "server", f"{_OB}/paymentservice:v0.10.1", 50051),
        Part("shippingservice", "server", f"{_OB}/shippingservice:v0.10.1", 50051),
        Part("emailservice", "server", f"{_OB}/emailservice:v0.10.1", 8080),
        Part(
            "checkoutservice",
            "server",
            f"{_OB}/checkoutservice:v0.10.1",
            5050,
            (
                "cartservice",
                "currencyservice",
                "emailservice",
                "paymentservice",
                "productcatalogservice",
                "shippingservice",
            ),
        ),
        Part(
            "recommendationservice", "server", f"{_OB}/recommendationservice:v0.10.1", 8080, ("productcatalogservice",)
        ),
        Part("adservice", "server", f"{_OB}/adservice:v0.10.1", 9555),
        Part("redis-cart", "redis", "redis:alpine", 6379),
        Part("loadgenerator", "main", f"{_OB}/loadgenerator:v0.10.1", 8089, ("frontend",)),
    ),
)
_DSB = "deathstarbench/hotel-reservation:latest"
HOTEL = App(
    "hotel-res",
    "io.kompose.service",
    (
        Part(
            "frontend",
            "hotel-reserv-frontend",
            _DSB,
            5000,
            ("search", "profile", "recommendation", "user", "reservation"),
            command=("frontend",),
        ),
        Part("search", "hotel-reserv-search", _DSB, 8082, ("geo", "rate"), command=("search",)),
        Part("geo", "hotel-reserv-geo", _DSB, 8083, ("mongodb-geo",), command=("geo",)),
        Part("rate", "hotel-reserv-rate", _DSB, 8084, ("mongodb-rate", "memcached-rate"), command=("rate",)),
        Part(
            "profile",
            "hotel-reserv-profile",
            _DSB,
            8081,
            ("mongodb-profile", "memcached-profile"),
            command=("profile",),
        ),
        Part(
            "recommendation",
            "hotel-reserv-recommendation",
            _DSB,
            8085,
            ("mongodb-recommendation",),
            command=("recommendation",),
        ),
        Part(
            "reservation",
            "hotel-reserv-reservation",
            _DSB,
            8087,
            ("mongodb-reservation", "memcached-reserve"),
            command=("reservation",),
        ),
        Part("user", "hotel-reserv-user", _DSB, 8086, ("mongodb-user",), command=("user",)),
        Part("consul", "consul", "hashicorp/consul:latest", 8500),
        Part("jaeger", "hotel-reserv-jaeger", "jaegertracing/all-in-one:latest", 16686),
        Part("memcached-profile", "hotel-reserv-profile-mmc", "memcached:1.6.7", 11211),
        Part("memcached-rate", "hotel-reserv-rate-mmc", "memcached:1.6.7", 11211),
        Part("memcached-reserve", "hotel-reserv-reservation-mmc", "memcached:1.6.7", 11211),
        Part("mongodb-geo", "hotel-reserv-geo-mongo", "mongo:4.4.6", 27017, claim="geo-pvc"),
        Part("mongodb-profile", "hotel-reserv-profile-mongo", "mongo:4.4.6", 27017, claim="profile-pvc"),
        Part("mongodb-rate", "hotel-reserv-rate-mongo", "mongo:4.4.6", 27017, claim="rate-pvc"),
        Part(
            "mongodb-recommendation",
            "hotel-reserv-recommendation-mongo",
            "mongo:4.4.6",
            27017,
            claim="recommendation-pvc",
        ),
        Part("mongodb-reservation", "hotel-reserv-reservation-mongo", "mongo:4.4.6", 27017, claim="reservation-pvc"),
        Part("mongodb-user", "hotel-reserv-user-mongo", "mongo:4.4.6", 27017, claim="user-pvc"),
    ),
)
# Hotel services that call MongoDB crash once or twice at start-up while it is not yet up (an ended condition).
_EARLY_RESTARTS = {"geo": 2, "rate": 1, "profile": 1, "recommendation": 1, "user": 1, "reservation": 2}


@dataclass(slots=True)
class PodPlan:
    """One pod to write: ``pack.pod``'s arguments, and the minute its start events (Scheduled ... Started) happened
    (None: it never started)."""

    args: Json
    started: float | None
    part: str
    healthy: bool = True
    # Fields of the pod's spec ``pack.pod`` does not write (imagePullSecrets).
    spec: Json = field(default_factory=dict)


@dataclass(slots=True)
class Snapshot:
    """A whole cluster being written: the app's objects, nodes, kube-system, events; a fault changes them before
    ``build``."""

    app: App
    pack: Pack
    nodes: dict[str, Json] = field(default_factory=dict)
    pods: dict[str, list[PodPlan]] = field(default_factory=dict)
    deployments: dict[str, Json] = field(default_factory=dict)
    replicasets: dict[str, Json] = field(default_factory=dict)
    services: dict[str, Json] = field(default_factory=dict)
    objects: dict[str, list[Json]] = field(default_factory=dict)
    system: list[PodPlan] = field(default_factory=list)

    # -------------------------------------------------------------------------------------------- naming
    @property
    def ns(self) -> str:
        return self.app.namespace

    def template_hash(self, part: str, revision: int = 1) -> str:
        return safe(self.ns, part, revision, length=10 if revision == 1 else 9)

    def rs_name(self, part: str, revision: int = 1) -> str:
        return f"{part}-{self.template_hash(part, revision)}"

    def pod_name(self, part: str, revision: int = 1, n: int = 0) -> str:
        return f"{self.rs_name(part, revision)}-{safe(self.ns, part, revision, n, 'pod', length=5)}"

    def index(self, part: str) -> int:
        return [p.name for p in self.app.parts].index(part)

    def node_of(self, part: str) -> str:
        return WORKERS[self.index(part) % len(WORKERS)]

    def pod_ip(self, part: str, revision: int = 1) -> str:
        return f"10.244.{WORKERS.index(self.node_of(part)) + 1}.{10 + self.index(part) * 3 + revision}"

    def cluster_ip(self, part: str) -> str:
        return f"10.96.{40 + self.index(part)}.{17 + self.index(part) * 7}"

    def meta(self, kind: str, name: str, *, namespace: str | None = "", created: float = BORN, **extra: Any) -> Json:
        ns = self.ns if namespace == "" else namespace
        out: Json = {"name": name}
        if ns is not None:
            out["namespace"] = ns
        out["uid"] = uid(self.pack.name, kind, ns or "", name)
        out["resourceVersion"] = str(1000 + int(digest(kind, name, length=4), 16) % 90000)
        out["creationTimestamp"] = self.pack.ts(created)
        out.update(extra)
        return out

    def add(self, plural: str, *objs: Json) -> None:
        self.objects.setdefault(plural, []).extend(objs)

    # ------------------------------------------------------------------------------------------ workloads
    def container_of(self, part: Part, **changes: Any) -> Json:
        spec = container(
            part.container,
            part.image,
            cpu="100m",
            memory="64Mi",
            limit_cpu="1",
            limit_memory="512Mi",
            port=part.port,
            command=part.command,
        )
        spec["ports"][0]["name"] = "grpc" if part.port not in (8080, 5000, 16686, 8089, 8500) else "http"
        spec.update(changes)
        return spec

    def healthy_pod(self, part: Part, *, revision: int = 1, created: float = BORN) -> PodPlan:
        name = self.pod_name(part.name, revision)
        restarts = _EARLY_RESTARTS.get(part.name, 0) if self.app is HOTEL and created == BORN else 0
        last = terminated(self.pack, "Error", 2, created + 0.2, created + 0.3) if restarts else None
        volumes = ([{"name": "data", "persistentVolumeClaim": {"claimName": part.claim}}] if part.claim else []) + [
            _token_volume(name)
        ]
        args: Json = {
            "name": name,
            "namespace": self.ns,
            "labels": {self.app.label: part.name, "pod-template-hash": self.template_hash(part.name, revision)},
            "node": self.node_of(part.name),
            "containers": [self.container_of(part)],
            "statuses": [
                status(
                    self.pack,
                    part.container,
                    part.image,
                    state=running(self.pack, created + 0.1 + restarts * 0.3),
                    restarts=restarts,
                    last=last,
                )
            ],
            "created": created,
            "owner": ("ReplicaSet", self.rs_name(part.name, revision)),
            "ip": self.pod_ip(part.name, revision),
            "volumes": volumes,
        }
        return PodPlan(args, created, part.name)

    def workload(self, part: Part) -> None:
        labels = {self.app.label: part.name}
        template_hash = self.template_hash(part.name)
        rs = self.rs_name(part.name)
        spec = {"containers": [self.container_of(part)]}
        if part.claim:
            spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": part.claim}}]
        self.deployments[part.name] = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": self.meta(
                "deployment",
                part.name,
                generation=1,
                labels=dict(labels),
                annotations={"deployment.kubernetes.io/revision": "1"},
            ),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": dict(labels)},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": {"metadata": {"labels": dict(labels)}, "spec": spec},
            },
            "status": _deployment_status(self, available=True),
        }
        self.replicasets[part.name] = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": self.meta(
                "replicaset",
                rs,
                labels={**labels, "pod-template-hash": template_hash},
                annotations={
                    "deployment.kubernetes.io/desired-replicas": "1",
                    "deployment.kubernetes.io/max-replicas": "2",
                    "deployment.kubernetes.io/revision": "1",
                },
                ownerReferences=[_owner(self, "Deployment", part.name)],
            ),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {**labels, "pod-template-hash": template_hash}},
                "template": {"metadata": {"labels": {**labels, "pod-template-hash": template_hash}}, "spec": spec},
            },
            "status": {
                "replicas": 1,
                "fullyLabeledReplicas": 1,
                "readyReplicas": 1,
                "availableReplicas": 1,
                "observedGeneration": 1,
            },
        }
        self.pods[part.name] = [self.healthy_pod(part)]
        self.services[part.name] = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self.meta("service", part.name, labels=dict(labels)),
            "spec": {
                "type": "ClusterIP",
                "clusterIP": self.cluster_ip(part.name),
                "clusterIPs": [self.cluster_ip(part.name)],
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "selector": dict(labels),
                "ports": [{"name": str(part.port), "port": part.port, "targetPort": part.port, "protocol": "TCP"}],
                "sessionAffinity": "None",
                "internalTrafficPolicy": "Cluster",
            },
            "status": {"loadBalancer": {}},
        }
        self.pack.event(
            BORN,
            self.ns,
            "Deployment",
            part.name,
            "ScalingReplicaSet",
            f"Scaled up replica set {rs} to 1",
            component="deployment-controller",
        )

    def set_unavailable(self, part: str) -> None:
        """The workload's Deployment and ReplicaSet with no pod ready (its pods were changed by a fault)."""
        self.deployments[part]["status"] = _deployment_status(self, available=False)
        rs = self.replicasets[part]["status"]
        rs.pop("readyReplicas", None)
        rs.pop("availableReplicas", None)

    def rollout(self, part: str, **changes: Any) -> tuple[str, str]:
        """A second revision of ``part`` (its template changed by ``changes`` of the container or pod spec):
        the Deployment at revision 2, a new ReplicaSet of one pod wanted, the old one scaled to zero (as a fault
        injector's patch with the Recreate strategy leaves it). Returns the new ReplicaSet's name and pod name."""
        deployment = self.deployments[part]
        deployment["metadata"]["generation"] = 2
        deployment["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "2"
        old = self.replicasets[part]
        old["spec"]["replicas"] = 0
        old["status"] = {"replicas": 0, "observedGeneration": 2}
        old["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "1"
        new = json_copy(old)
        template_hash = self.template_hash(part, 2)
        name = f"{part}-{template_hash}"
        new["metadata"] = self.meta(
            "replicaset",
            name,
            created=2,
            labels={self.app.label: part, "pod-template-hash": template_hash},
            annotations={
                "deployment.kubernetes.io/desired-replicas": "1",
                "deployment.kubernetes.io/max-replicas": "2",
                "deployment.kubernetes.io/revision": "2",
            },
            ownerReferences=[_owner(self, "Deployment", part)],
        )
        new["spec"]["replicas"] = 1
        new["spec"]["selector"]["matchLabels"]["pod-template-hash"] = template_hash
        new["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] = template_hash
        for key, value in changes.items():
            new["spec"]["template"]["spec"][key] = value
            deployment["spec"]["template"]["spec"][key] = value
        new["status"] = {"replicas": 1, "fullyLabeledReplicas": 1, "observedGeneration": 1}
        self.replicasets[f"{part}@2"] = new
        self.deployments[part]["status"] = _deployment_status(self, available=False, generation=2)
        self.pack.event(
            2,
            self.ns,
            "Deployment",
            part,
            "ScalingReplicaSet",
            f"Scaled down replica set {self.rs_name(part)} to 0 from 1",
            component="deployment-controller",
        )
        self.pack.event(
            2.01,
            self.ns,
            "Deployment",
            part,
            "ScalingReplicaSet",
            f"Scaled up replica set {name} to 1",
            component="deployment-controller",
        )
        return name, self.pod_name(part, 2)

    def pending_pod(
        self,
        part: str,
        message: str,
        *,
        revision: int = 2,
        created: float = 2.05,
        count: int = 12,
        scheduler: bool = True,
        n: int = 1,
        **spec: Any,
    ) -> str:
        """The workload's pod the scheduler cannot place: PodScheduled=False with the scheduler's text, and its
        FailedScheduling event (recorded through events.k8s.io) repeated to the window's end."""
        p = self.app.part(part)
        name = self.pod_name(part, revision, n)
        args: Json = {
            "name": name,
            "namespace": self.ns,
            "labels": {self.app.label: part, "pod-template-hash": self.template_hash(part, revision)},
            "containers": [self.container_of(p, **spec.pop("container", {}))],
            "created": created,
            "owner": ("ReplicaSet", self.rs_name(part, revision)),
            "phase": "Pending",
            "conditions": unschedulable(self.pack, created, message) if scheduler else [],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": p.claim}}] if p.claim else [],
            "qos": "Burstable",
            **spec,
        }
        args["volumes"] = [*args["volumes"], _token_volume(name)]
        self.pods[part] = [PodPlan(args, None, part, healthy=False)]
        self.set_unavailable(part)
        if not scheduler:
            return name
        self.pack.event(
            created + 0.01,
            self.ns,
            "Pod",
            name,
            "FailedScheduling",
            message,
            type="Warning",
            component="default-scheduler",
            new_api=True,
            count=count,
            last=58,
            action="Scheduling",
        )
        return name

    def waiting_pod(
        self, part: str, reason: str, message: str, *, revision: int = 2, image: str = "", **spec: Any
    ) -> str:
        """The workload's pod on its node whose container waits (``reason``: the kubelet's), never ready."""
        p = self.app.part(part)
        name = self.pod_name(part, revision)
        created = 2.05 if revision == 2 else BORN
        changes = spec.pop("container", {})
        if image:
            changes["image"] = image
        c = self.container_of(p, **changes)
        args: Json = {
            "name": name,
            "namespace": self.ns,
            "labels": {self.app.label: part, "pod-template-hash": self.template_hash(part, revision)},
            "node": self.node_of(part),
            "containers": [c],
            "statuses": [status(self.pack, p.container, c["image"], state=waiting(reason, message), ready=False)],
            "created": created,
            "owner": ("ReplicaSet", self.rs_name(part, revision)),
            "phase": "Pending",
            "ip": self.pod_ip(part, revision),
            "volumes": [_token_volume(name)],
            **spec,
        }
        self.pods[part] = [PodPlan(args, None, part, healthy=False)]
        self.pack.scheduled(created + 0.01, self.ns, name, self.node_of(part))
        self.set_unavailable(part)
        return name

    def kubelet_event(
        self,
        pod: str,
        part: str,
        reason: str,
        message: str,
        *,
        count: int = 20,
        first: float = 2.1,
        normal: bool = False,
        container: bool = True,
    ) -> None:
        self.pack.event(
            first,
            self.ns,
            "Pod",
            pod,
            reason,
            message,
            type="Normal" if normal else "Warning",
            host=self.node_of(part),
            field_path=f"spec.containers{{{self.app.part(part).container}}}" if container else None,
            count=count,
            last=58,
        )

    # ------------------------------------------------------------------------------------------ build
    def build(self) -> Pack:
        pack = self.pack
        for plans in self.pods.values():
            for plan in plans:
                pack.pod(**plan.args)["spec"].update(plan.spec)
                if plan.started is not None:
                    a = plan.args
                    pod_start_events(
                        pack,
                        self.ns,
                        a["name"],
                        a["node"],
                        self.app.part(plan.part).container,
                        self.app.part(plan.part).image,
                        plan.started,
                        pulled=plan.started == BORN,
                    )
                    rs = a["owner"][1]
                    pack.event(
                        plan.started - 0.01,
                        self.ns,
                        "ReplicaSet",
                        rs,
                        "SuccessfulCreate",
                        f"Created pod: {a['name']}",
                        component="replicaset-controller",
                    )
        for plan in self.system:
            pack.pod(**plan.args)
        pack.objects("nodes", *self.nodes.values())
        pack.objects("deployments", *self.deployments.values())
        pack.objects("replicasets", *self.replicasets.values())
        pack.objects("services", *self.services.values())
        endpoints, slices = [], []
        for part in self.services:
            ready = [plan for plan in self.pods.get(part, []) if plan.healthy]
            endpoints.append(_endpoints(self, part, ready))
            slices.append(_slice(self, part, ready))
        pack.objects("endpoints", *endpoints)
        pack.objects("endpointslices", *slices)
        for plural, objs in self.objects.items():
            pack.objects(plural, *objs)
        return pack


def json_copy(value: Json) -> Json:
    import copy

    return copy.deepcopy(value)


def _token_volume(pod: str) -> Json:
    return {
        "name": f"kube-api-access-{safe(pod, 'token', length=5)}",
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            ],
        },
    }


def _owner(snap: Snapshot, kind: str, name: str) -> Json:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": name,
        "uid": uid(snap.pack.name, kind.lower(), snap.ns, name),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _deployment_status(snap: Snapshot, *, available: bool, generation: int = 1) -> Json:
    at = snap.pack.ts(BORN + 0.5)
    if available:
        return {
            "observedGeneration": generation,
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "reason": "MinimumReplicasAvailable",
                    "message": "Deployment has minimum availability.",
                    "lastUpdateTime": at,
                    "lastTransitionTime": at,
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "NewReplicaSetAvailable",
                    "message": "ReplicaSet has successfully progressed.",
                    "lastUpdateTime": at,
                    "lastTransitionTime": at,
                },
            ],
        }
    now = snap.pack.ts(2.05)
    return {
        "observedGeneration": generation,
        "replicas": 1,
        "updatedReplicas": 1,
        "unavailableReplicas": 1,
        "conditions": [
            {
                "type": "Available",
                "status": "False",
                "reason": "MinimumReplicasUnavailable",
                "message": "Deployment does not have minimum availability.",
                "lastUpdateTime": now,
                "lastTransitionTime": now,
            },
            {
                "type": "Progressing",
                "status": "True",
                "reason": "ReplicaSetUpdated",
                "message": "ReplicaSet is progressing.",
                "lastUpdateTime": now,
                "lastTransitionTime": at,
            },
        ],
    }


def _endpoints(snap: Snapshot, part: str, ready: list[PodPlan]) -> Json:
    p = snap.app.part(part)
    obj: Json = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": snap.meta("endpoints", part, labels={snap.app.label: part}),
    }
    if ready:
        obj["subsets"] = [
            {
                "addresses": [
                    {
                        "ip": plan.args["ip"],
                        "nodeName": plan.args["node"],
                        "targetRef": {
                            "kind": "Pod",
                            "namespace": snap.ns,
                            "name": plan.args["name"],
                            "uid": uid(snap.pack.name, "pod", snap.ns, plan.args["name"]),
                        },
                    }
                    for plan in ready
                ],
                "ports": [{"name": str(p.port), "port": p.port, "protocol": "TCP"}],
            }
        ]
    return obj


def _slice(snap: Snapshot, part: str, ready: list[PodPlan]) -> Json:
    p = snap.app.part(part)
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": snap.meta(
            "endpointslice",
            f"{part}-{safe(part, 'slice', length=5)}",
            labels={
                "kubernetes.io/service-name": part,
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
            },
        ),
        "addressType": "IPv4",
        "endpoints": [
            {
                "addresses": [plan.args["ip"]],
                "conditions": {"ready": True, "serving": True, "terminating": False},
                "nodeName": plan.args["node"],
                "targetRef": {"kind": "Pod", "namespace": snap.ns, "name": plan.args["name"]},
            }
            for plan in ready
        ],
        "ports": [{"name": str(p.port), "port": p.port, "protocol": "TCP"}],
    }


def node(snap: Snapshot, name: str) -> Json:
    control = name == CONTROL
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }
    spec: Json = {"podCIDR": f"10.244.{NODES.index(name)}.0/24", "providerID": f"kind://docker/kind/{name}"}
    if control:
        labels["node-role.kubernetes.io/control-plane"] = ""
        spec["taints"] = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    beat, since = snap.pack.ts(58.5), snap.pack.ts(-20000)
    conditions = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": snap.meta(
            "node",
            name,
            namespace=None,
            created=-20000,
            labels=labels,
            annotations={"node.alpha.kubernetes.io/ttl": "0"},
        ),
        "spec": spec,
        "status": {
            "addresses": [
                {"type": "InternalIP", "address": f"172.18.0.{NODES.index(name) + 2}"},
                {"type": "Hostname", "address": name},
            ],
            "allocatable": {
                "cpu": "8",
                "memory": "16318444Ki",
                "pods": "110",
                "ephemeral-storage": "102626232Ki",
                "hugepages-2Mi": "0",
            },
            "capacity": {
                "cpu": "8",
                "memory": "16318444Ki",
                "pods": "110",
                "ephemeral-storage": "102626232Ki",
                "hugepages-2Mi": "0",
            },
            "conditions": [
                {
                    "type": t,
                    "status": s,
                    "reason": r,
                    "message": m,
                    "lastHeartbeatTime": beat,
                    "lastTransitionTime": since,
                }
                for t, s, r, m in conditions
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.29.2",
                "containerRuntimeVersion": "containerd://1.7.13",
                "kernelVersion": "6.5.0-1018-azure",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def _system_pod(
    snap: Snapshot,
    name: str,
    image: str,
    container_name: str,
    on: str,
    labels: dict[str, str],
    owner: tuple[str, str],
    **changes: Any,
) -> PodPlan:
    args: Json = {
        "name": name,
        "namespace": "kube-system",
        "labels": labels,
        "node": on,
        "containers": [container(container_name, image, port=None, memory="70Mi", cpu="100m")],
        "statuses": [status(snap.pack, container_name, image, state=running(snap.pack, -19990))],
        "created": -19990,
        "owner": owner,
        "ip": f"172.18.0.{NODES.index(on) + 2}" if "coredns" not in name else f"10.244.0.{NODES.index(on) + 3}",
        "qos": "Burstable",
    }
    args.update(changes)
    return PodPlan(args, None, "", healthy=True)


def control_plane(snap: Snapshot) -> list[PodPlan]:
    v = "v1.29.2"
    out = [
        _system_pod(
            snap,
            f"{component}-{CONTROL}",
            f"registry.k8s.io/{component}:{v}",
            component,
            CONTROL,
            {"component": component, "tier": "control-plane"},
            ("Node", CONTROL),
        )
        for component in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
    ]
    out[0].args["containers"][0]["image"] = out[0].args["statuses"][0]["image"] = "registry.k8s.io/etcd:3.5.10-0"
    coredns = safe("coredns", length=10)
    for n in range(2):
        out.append(
            _system_pod(
                snap,
                f"coredns-{coredns}-{safe('coredns', n, length=5)}",
                "registry.k8s.io/coredns/coredns:v1.11.1",
                "coredns",
                CONTROL,
                {"k8s-app": "kube-dns", "pod-template-hash": coredns},
                ("ReplicaSet", f"coredns-{coredns}"),
            )
        )
    for on in NODES:
        out.append(
            _system_pod(
                snap,
                f"kube-proxy-{safe('kube-proxy', on, length=5)}",
                f"registry.k8s.io/kube-proxy:{v}",
                "kube-proxy",
                on,
                {"k8s-app": "kube-proxy", "controller-revision-hash": "7b8f4c6d9"},
                ("DaemonSet", "kube-proxy"),
            )
        )
        out.append(
            _system_pod(
                snap,
                f"kindnet-{safe('kindnet', on, length=5)}",
                "docker.io/kindest/kindnetd:v20240202-8f1494ea",
                "kindnet-cni",
                on,
                {"app": "kindnet", "k8s-app": "kindnet", "tier": "node"},
                ("DaemonSet", "kindnet"),
            )
        )
    return out


def snapshot(name: str, app: App, question: str) -> Snapshot:
    """A healthy cluster running ``app``, its question asked: every object, the start events and old warnings."""
    pack = Pack(
        name,
        title=name,
        description="A held-out-like snapshot: one fault in a whole cluster.",
        question=question,
        start=START,
    )
    for part in app.parts:
        kind = "database" if part.name.startswith(("mongodb", "redis")) else "http"
        pack.service(
            part.name,
            "cache" if part.name.startswith("memcached") else kind,
            namespace=app.namespace,
            depends_on=part.calls,
        )
    pack.truth(kind="written_by_a_test", summary="not judged: the test asserts its own outcome")
    snap = Snapshot(app, pack)
    snap.nodes = {n: node(snap, n) for n in NODES}
    for part in app.parts:
        snap.workload(part)
    snap.system = control_plane(snap)
    snap.add(
        "serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": snap.meta("sa", "default", created=-20000)},
    )
    snap.add(
        "configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": snap.meta("cm", "kube-root-ca.crt", created=-20000),
            "data": {"ca.crt": "-----BEGIN CERTIFICATE-----\nMIIDBTCCAe2gAwIBAgIIU...\n-----END CERTIFICATE-----\n"},
        },
    )
    snap.add(
        "storageclasses",
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": snap.meta(
                "sc",
                "standard",
                namespace=None,
                created=-20000,
                annotations={"storageclass.kubernetes.io/is-default-class": "true"},
            ),
            "provisioner": "rancher.io/local-path",
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    )
    for part in app.parts:
        if part.claim:
            volume(snap, part.claim, f"pvc-{uid(part.claim)[:8]}-{uid(part.claim)[9:13]}")
    _old_warnings(snap)
    return snap


def volume(snap: Snapshot, claim: str, pv: str, *, bound: bool = True) -> tuple[Json, Json]:
    """A claim and the volume the local-path provisioner made for it, Bound to each other."""
    pvc: Json = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": snap.meta(
            "pvc",
            claim,
            annotations={"pv.kubernetes.io/bind-completed": "yes", "volume.kubernetes.io/selected-node": WORKERS[0]},
        ),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "standard",
            "volumeMode": "Filesystem",
            "volumeName": pv,
        },
        "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}},
    }
    volume_obj: Json = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": snap.meta(
            "pv", pv, namespace=None, annotations={"pv.kubernetes.io/provisioned-by": "rancher.io/local-path"}
        ),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": snap.ns,
                "name": claim,
                "uid": uid(snap.pack.name, "pvc", snap.ns, claim),
            },
            "hostPath": {"path": f"/var/local-path-provisioner/{pv}_{snap.ns}_{claim}", "type": "DirectoryOrCreate"},
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": "standard",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Bound"},
    }
    if bound:
        snap.add("persistentvolumeclaims", pvc)
        snap.add("persistentvolumes", volume_obj)
    return pvc, volume_obj


def _old_warnings(snap: Snapshot) -> None:
    """Warnings every such cluster holds from its start, long ended: a readiness probe refused while the frontend
    came up; a pod of an earlier rollout, deleted since, that waited for memory before it was replaced; in the
    hotel app, services restarted while MongoDB was not yet up."""
    frontend = snap.pods["frontend"][0].args
    gone = f"{snap.app.parts[1].name}-{safe(snap.ns, 'gone', length=9)}-{safe(snap.ns, 'gone-pod', length=5)}"
    snap.pack.event(
        BORN - 1,
        snap.ns,
        "Pod",
        gone,
        "FailedScheduling",
        f"0/4 nodes are available: 1 node(s) had untolerated taint {CONTROL_TAINT}, 3 Insufficient memory. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims "
        "found for incoming pod.",
        type="Warning",
        component="default-scheduler",
        new_api=True,
        count=4,
        last=BORN - 0.5,
    )
    snap.pack.event(
        BORN + 0.15,
        snap.ns,
        "Pod",
        frontend["name"],
        "Unhealthy",
        f'Readiness probe failed: Get "http://{frontend["ip"]}:{snap.app.part("frontend").port}/_healthz": dial tcp '
        f"{frontend['ip']}:{snap.app.part('frontend').port}: connect: connection refused",
        type="Warning",
        host=frontend["node"],
        field_path=f"spec.containers{{{snap.app.part('frontend').container}}}",
        count=3,
        last=BORN + 0.2,
    )
    if snap.app is not HOTEL:
        return
    for part, restarts in _EARLY_RESTARTS.items():
        args = snap.pods[part][0].args
        container_name = snap.app.part(part).container
        snap.pack.event(
            BORN + 0.25,
            snap.ns,
            "Pod",
            args["name"],
            "BackOff",
            f"Back-off restarting failed container {container_name} in pod {args['name']}_{snap.ns}"
            f"({uid(snap.pack.name, 'pod', snap.ns, args['name'])})",
            type="Warning",
            host=args["node"],
            field_path=f"spec.containers{{{container_name}}}",
            count=restarts,
            last=BORN + 0.3,
        )


def frontend_errors(snap: Snapshot, target: str, *, every: int = 3) -> None:
    """The callers' view: the frontend's gRPC calls to ``target`` fail as its Service has no endpoint."""
    port = snap.app.part(target).port
    ip = snap.cluster_ip(target)
    for minute in range(4, 58, every):
        snap.pack.log(
            minute,
            "frontend",
            "ERROR",
            f'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp '
            f'{ip}:{port}: connect: connection refused"',
        )


# ================================================================================================ scheduling
def _preemption(total: int, pods: int | None = None) -> str:
    return f"preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."


def non_existent_node() -> Snapshot:
    """geo's Deployment patched with nodeSelector kubernetes.io/hostname=extra-node: no node has that name."""
    snap = snapshot("hotel-geo-missing-node", HOTEL, "Why is the search of hotels failing?")
    snap.rollout("geo", nodeSelector={"kubernetes.io/hostname": "extra-node"})
    snap.pending_pod(
        "geo",
        f"0/4 nodes are available: 1 node(s) had untolerated taint {CONTROL_TAINT}, 3 node(s) didn't match Pod's "
        f"node affinity/selector. {_preemption(4)}",
        node_selector={"kubernetes.io/hostname": "extra-node"},
    )
    frontend_errors(snap, "search")
    return snap


def node_name_missing() -> Snapshot:
    """checkoutservice's pod template pinned to spec.nodeName missing-node: no scheduler reports on it, no kubelet
    of that name exists, the pod stays Pending."""
    snap = snapshot("shop-checkout-node-name", SHOP, "What is wrong in namespace boutique?")
    snap.rollout("checkoutservice", nodeName="missing-node")
    name = snap.pending_pod("checkoutservice", "", scheduler=False, node="missing-node")
    snap.pack.event(
        2.04,
        snap.ns,
        "ReplicaSet",
        snap.rs_name("checkoutservice", 2),
        "SuccessfulCreate",
        f"Created pod: {name}",
        component="replicaset-controller",
    )
    return snap


def untolerated_taint() -> Snapshot:
    """Every worker tainted sre-fault=blocked:NoSchedule; cartservice's pod was deleted and cannot come back."""
    snap = snapshot("shop-cart-taint", SHOP, "Why can users not add items to their cart?")
    for name in WORKERS:
        snap.nodes[name]["spec"]["taints"] = [{"key": "sre-fault", "value": "blocked", "effect": "NoSchedule"}]
    snap.pending_pod(
        "cartservice",
        f"0/4 nodes are available: 1 node(s) had untolerated taint {CONTROL_TAINT}, 3 node(s) had untolerated taint "
        f"{{sre-fault: blocked}}. {_preemption(4)}",
        revision=1,
    )
    frontend_errors(snap, "cartservice")
    return snap


def cordoned() -> Snapshot:
    """Every worker cordoned (spec.unschedulable and the node.kubernetes.io/unschedulable taint); rate's pod was
    deleted and cannot come back."""
    snap = snapshot("hotel-rate-cordoned", HOTEL, "Why is rate not running?")
    for name in WORKERS:
        snap.nodes[name]["spec"]["unschedulable"] = True
        snap.nodes[name]["spec"]["taints"] = [
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": snap.pack.ts(1)}
        ]
        snap.pack.event(
            1,
            "default",
            "Node",
            name,
            "NodeNotSchedulable",
            f"Node {name} status is now: NodeNotSchedulable",
            component="kubelet",
            host=name,
        )
    snap.pending_pod(
        "rate",
        f"0/4 nodes are available: 1 node(s) had untolerated taint {CONTROL_TAINT}, 3 node(s) were unschedulable. "
        f"{_preemption(4)}",
        revision=1,
    )
    return snap


def insufficient_memory() -> Snapshot:
    """recommendationservice redeployed requesting 40Gi of memory; each node has 16Gi."""
    snap = snapshot("shop-recommendation-memory", SHOP, "Why does the shop show no recommendations?")
    spec = snap.container_of(snap.app.part("recommendationservice"))
    spec["resources"] = {"requests": {"cpu": "100m", "memory": "40Gi"}, "limits": {"memory": "40Gi"}}
    snap.rollout("recommendationservice", containers=[spec])
    snap.pending_pod(
        "recommendationservice",
        f"0/4 nodes are available: 1 node(s) had untolerated taint {CONTROL_TAINT}, 3 Insufficient memory. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims "
        "found for incoming pod.",
        container={"resources": spec["resources"]},
    )
    return snap


def insufficient_cpu() -> Snapshot:
    """search redeployed requesting 24 CPUs; each node has 8."""
    snap = snapshot("hotel-search-cpu", HOTEL, "What is wrong in namespace hotel-res?")
    spec = snap.container_of(snap.app.part("search"))
    spec["resources"] = {"requests": {"cpu": "24", "memory": "64Mi"}, "limits": {"cpu": "24"}}
    snap.rollout("search", containers=[spec])
    snap.pending_pod(
        "search",
        f"0/4 nodes are available: 1 node(s) had untolerated taint {CONTROL_TAINT}, 3 Insufficient cpu. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims "
        "found for incoming pod.",
        container={"resources": spec["resources"]},
    )
    frontend_errors(snap, "search")
    return snap


def _claim_pending(snap: Snapshot, part: str, claim: Json, reason: str, message: str, *, warning: bool) -> None:
    """``part``'s claim replaced by ``claim`` (Pending), its controller's event, and the pod that waits for it."""
    snap.objects["persistentvolumeclaims"] = [
        c for c in snap.objects["persistentvolumeclaims"] if c["metadata"]["name"] != claim["metadata"]["name"]
    ]
    snap.add("persistentvolumeclaims", claim)
    snap.pack.event(
        1.5,
        snap.ns,
        "PersistentVolumeClaim",
        claim["metadata"]["name"],
        reason,
        message,
        type="Warning" if warning else "Normal",
        component="persistentvolume-controller",
        count=40,
        last=58,
    )
    snap.pending_pod(
        part,
        f"0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. {_preemption(4)}",
        revision=1,
        created=1.5,
    )


def _pending_claim(snap: Snapshot, name: str, **spec: Any) -> Json:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": snap.meta("pvc", name, created=1.4),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeMode": "Filesystem",
            **spec,
        },
        "status": {"phase": "Pending"},
    }


def missing_storage_class() -> Snapshot:
    """mongodb-rate's claim recreated with storageClassName premium-rwo; no such StorageClass exists."""
    snap = snapshot("hotel-mongodb-rate-storageclass", HOTEL, "Why is rate failing?")
    claim = _pending_claim(snap, "rate-pvc", storageClassName="premium-rwo")
    snap.objects["persistentvolumes"] = [
        v for v in snap.objects["persistentvolumes"] if v["spec"]["claimRef"]["name"] != "rate-pvc"
    ]
    _claim_pending(
        snap,
        "mongodb-rate",
        claim,
        "ProvisioningFailed",
        'storageclass.storage.k8s.io "premium-rwo" not found',
        warning=True,
    )
    return snap


def volume_taken() -> Snapshot:
    """mongodb-profile's claim recreated asking for volume profile-pv by name; profile-pv is bound to another
    claim (profile-pvc-old)."""
    snap = snapshot("hotel-mongodb-profile-pv-taken", HOTEL, "Why does the profile of a hotel not load?")
    snap.objects["persistentvolumes"] = [
        v for v in snap.objects["persistentvolumes"] if v["spec"]["claimRef"]["name"] != "profile-pvc"
    ]
    old, _ = volume(snap, "profile-pvc-old", "profile-pv")
    old["metadata"]["creationTimestamp"] = snap.pack.ts(-3000)
    claim = _pending_claim(snap, "profile-pvc", storageClassName="standard", volumeName="profile-pv")
    _claim_pending(
        snap,
        "mongodb-profile",
        claim,
        "FailedBinding",
        'volume "profile-pv" already bound to a different claim.',
        warning=True,
    )
    return snap


def redeployed_without_volume() -> Snapshot:
    """mongodb-geo redeployed with its static volume deleted: its claim (no storage class) finds no volume."""
    snap = snapshot("hotel-mongodb-geo-no-pv", HOTEL, "What is wrong in namespace hotel-res?")
    snap.objects["persistentvolumes"] = [
        v for v in snap.objects["persistentvolumes"] if v["spec"]["claimRef"]["name"] != "geo-pvc"
    ]
    claim = _pending_claim(snap, "geo-pvc", storageClassName="")
    _claim_pending(
        snap,
        "mongodb-geo",
        claim,
        "FailedBinding",
        "no persistent volumes available for this claim and no storage class is set",
        warning=False,
    )
    return snap


# ================================================================================================ admission
def _quota(snap: Snapshot, name: str, hard: dict[str, str], used: dict[str, str]) -> None:
    snap.add(
        "resourcequotas",
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": snap.meta("quota", name, created=0.5),
            "spec": {"hard": dict(hard)},
            "status": {"hard": dict(hard), "used": dict(used)},
        },
    )


def _no_pods(snap: Snapshot, part: str, message: str) -> str:
    """``part``'s pod deleted, its ReplicaSet refused by admission each time it creates one (FailedCreate)."""
    rs = snap.rs_name(part)
    snap.pods[part] = []
    snap.set_unavailable(part)
    snap.replicasets[part]["status"]["replicas"] = 0
    snap.pack.event(
        2,
        snap.ns,
        "ReplicaSet",
        rs,
        "FailedCreate",
        message,
        type="Warning",
        component="replicaset-controller",
        count=18,
        last=58,
    )
    return rs


def quota_pods() -> Snapshot:
    """A pods quota of 11 in a namespace of 12 workloads: frontend's new pod is refused."""
    snap = snapshot("shop-frontend-quota-pods", SHOP, "Why is the shop's website down?")
    _quota(snap, "pod-quota", {"pods": "11"}, {"pods": "11"})
    _no_pods(
        snap,
        "frontend",
        f'Error creating: pods "{snap.pod_name("frontend", 1, 7)}" is forbidden: exceeded quota: pod-quota, '
        "requested: pods=1, used: pods=11, limited: pods=11",
    )
    return snap


def quota_cpu() -> Snapshot:
    snap = snapshot("hotel-reservation-quota-cpu", HOTEL, "Why can guests not book a room?")
    _quota(snap, "cpu-quota", {"requests.cpu": "1800m"}, {"requests.cpu": "1800m"})
    _no_pods(
        snap,
        "reservation",
        f'Error creating: pods "{snap.pod_name("reservation", 1, 3)}" is forbidden: exceeded quota: cpu-quota, '
        "requested: requests.cpu=100m, used: requests.cpu=1800m, limited: requests.cpu=1800m",
    )
    frontend_errors(snap, "reservation")
    return snap


def quota_memory() -> Snapshot:
    snap = snapshot("shop-currency-quota-memory", SHOP, "What is wrong in namespace boutique?")
    _quota(snap, "mem-quota", {"limits.memory": "6Gi"}, {"limits.memory": "5632Mi"})
    _no_pods(
        snap,
        "currencyservice",
        f'Error creating: pods "{snap.pod_name("currencyservice", 1, 2)}" is forbidden: exceeded quota: mem-quota, '
        "requested: limits.memory=512Mi, used: limits.memory=5632Mi, limited: limits.memory=6Gi",
    )
    return snap


def service_account_missing() -> Snapshot:
    """user's Deployment set to serviceAccountName user-sa, which does not exist."""
    snap = snapshot("hotel-user-serviceaccount", HOTEL, "Why can users not log in?")
    rs, _ = snap.rollout("user", serviceAccountName="user-sa")
    snap.pods["user"] = []
    snap.pack.event(
        2.02,
        snap.ns,
        "ReplicaSet",
        rs,
        "FailedCreate",
        f'Error creating: pods "{rs}-" is forbidden: error looking up service account {snap.ns}/user-sa: '
        'serviceaccount "user-sa" not found',
        type="Warning",
        component="replicaset-controller",
        count=16,
        last=58,
    )
    snap.replicasets["user@2"]["status"] = {"replicas": 0, "observedGeneration": 1}
    return snap


# ================================================================================================ start-up
def _pull_events(snap: Snapshot, pod: str, part: str, image: str, failure: str) -> None:
    snap.kubelet_event(pod, part, "Pulling", f'Pulling image "{image}"', normal=True, count=6)
    snap.kubelet_event(pod, part, "Failed", f'Failed to pull image "{image}": {failure}', count=6)
    snap.kubelet_event(pod, part, "Failed", "Error: ErrImagePull", count=6)
    snap.kubelet_event(pod, part, "BackOff", f'Back-off pulling image "{image}"', normal=True, count=90)
    snap.kubelet_event(pod, part, "Failed", "Error: ImagePullBackOff", count=90)


def image_missing() -> Snapshot:
    """productcatalogservice redeployed with tag v0.10.9, which the registry does not have."""
    snap = snapshot("shop-catalog-image", SHOP, "Why does the shop show no products?")
    image = f"{_OB}/productcatalogservice:v0.10.9"
    spec = snap.container_of(snap.app.part("productcatalogservice"), image=image)
    snap.rollout("productcatalogservice", containers=[spec])
    pod = snap.waiting_pod(
        "productcatalogservice", "ImagePullBackOff", f'Back-off pulling image "{image}"', image=image
    )
    _pull_events(
        snap,
        pod,
        "productcatalogservice",
        image,
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{image}": failed to resolve reference '
        f'"{image}": {image}: not found',
    )
    frontend_errors(snap, "productcatalogservice")
    return snap


def image_access_denied() -> Snapshot:
    """profile redeployed with an image of a repository that does not exist on Docker Hub."""
    snap = snapshot("hotel-profile-image", HOTEL, "What is wrong in namespace hotel-res?")
    image = "deathstarbench/hotel-reservation-profile:v2"
    spec = snap.container_of(snap.app.part("profile"), image=image)
    snap.rollout("profile", containers=[spec])
    pod = snap.waiting_pod(
        "profile",
        "ErrImagePull",
        f'failed to pull and unpack image "docker.io/{image}": failed to resolve reference "docker.io/{image}": pull '
        "access denied, repository does not exist or may require authorization: server message: insufficient_scope: "
        "authorization failed",
        image=image,
    )
    _pull_events(
        snap,
        pod,
        "profile",
        image,
        f'rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/{image}": failed to resolve '
        f'reference "docker.io/{image}": pull access denied, repository does not exist or may require authorization: '
        "server message: insufficient_scope: authorization failed",
    )
    return snap


def pull_secret_missing() -> Snapshot:
    """adservice moved to a private registry with imagePullSecrets regcred, which does not exist."""
    snap = snapshot("shop-ad-pull-secret", SHOP, "Why are there no ads on the shop's pages?")
    image = "registry.internal.acme.io/boutique/adservice:v0.10.1"
    spec = snap.container_of(snap.app.part("adservice"), image=image)
    snap.rollout("adservice", containers=[spec], imagePullSecrets=[{"name": "regcred"}])
    pod = snap.waiting_pod("adservice", "ImagePullBackOff", f'Back-off pulling image "{image}"', image=image)
    snap.pods["adservice"][0].spec["imagePullSecrets"] = [{"name": "regcred"}]
    snap.kubelet_event(
        pod,
        "adservice",
        "FailedToRetrieveImagePullSecret",
        "Unable to retrieve some image pull secrets (regcred); attempting to pull the image may not succeed.",
        count=40,
        container=False,
    )
    _pull_events(
        snap,
        pod,
        "adservice",
        image,
        f'failed to pull and unpack image "{image}": failed to resolve reference "{image}": unexpected status from '
        f"HEAD request to https://registry.internal.acme.io/v2/boutique/adservice/manifests/v0.10.1: 401 Unauthorized",
    )
    snap.add(
        "secrets",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": snap.meta("secret", "shop-tls", created=-20000),
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": "LS0tLS1CRUdJTg==", "tls.key": "LS0tLS1CRUdJTg=="},
        },
    )
    return snap


def secret_missing() -> Snapshot:
    """mongodb-reservation redeployed reading its root password from secret mongodb-reservation-auth, which
    does not exist."""
    snap = snapshot("hotel-mongodb-reservation-secret", HOTEL, "Why can guests not book a room?")
    env = [
        {
            "name": "MONGO_INITDB_ROOT_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": "mongodb-reservation-auth", "key": "password"}},
        }
    ]
    spec = snap.container_of(snap.app.part("mongodb-reservation"), env=env)
    snap.rollout("mongodb-reservation", containers=[spec])
    message = 'secret "mongodb-reservation-auth" not found'
    pod = snap.waiting_pod("mongodb-reservation", "CreateContainerConfigError", message, container={"env": env})
    snap.kubelet_event(pod, "mongodb-reservation", "Failed", f"Error: {message}", count=70)
    snap.add(
        "secrets",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": snap.meta("secret", "mongodb-user-auth", created=-20000),
            "type": "Opaque",
            "data": {"username": "YWRtaW4=", "password": "czNjcjN0"},
        },
    )
    return snap


def configmap_missing() -> Snapshot:
    """emailservice redeployed reading its settings from configmap emailservice-config, which does not exist."""
    snap = snapshot("shop-email-configmap", SHOP, "Why do customers get no order confirmation email?")
    env_from = [{"configMapRef": {"name": "emailservice-config"}}]
    spec = snap.container_of(snap.app.part("emailservice"), envFrom=env_from)
    snap.rollout("emailservice", containers=[spec])
    message = 'configmap "emailservice-config" not found'
    pod = snap.waiting_pod("emailservice", "CreateContainerConfigError", message, container={"envFrom": env_from})
    snap.kubelet_event(pod, "emailservice", "Failed", f"Error: {message}", count=70)
    return snap


def configmap_volume_missing() -> Snapshot:
    """memcached-profile redeployed mounting configmap memcached-profile-conf, which does not exist: the pod stays
    ContainerCreating."""
    snap = snapshot("hotel-memcached-profile-configmap", HOTEL, "Why is profile slow and failing?")
    volumes = [{"name": "conf", "configMap": {"name": "memcached-profile-conf", "defaultMode": 420}}]
    snap.rollout("memcached-profile", volumes=volumes)
    pod = snap.waiting_pod("memcached-profile", "ContainerCreating", "")
    snap.pods["memcached-profile"][0].args["volumes"] = [*volumes, _token_volume(pod)]
    statuses = snap.pods["memcached-profile"][0].args["statuses"]
    statuses[0]["state"] = {"waiting": {"reason": "ContainerCreating"}}
    snap.kubelet_event(
        pod,
        "memcached-profile",
        "FailedMount",
        'MountVolume.SetUp failed for volume "conf" : configmap "memcached-profile-conf" not found',
        count=30,
        container=False,
    )
    return snap


# ================================================================================================ infrastructure
def node_not_ready() -> Snapshot:
    """kubelet stopped on kind-worker2: its node's conditions go Unknown, the node controller taints it and marks
    its pods not ready."""
    snap = snapshot("shop-worker2-not-ready", SHOP, "Why is checkout failing?")
    down = WORKERS[1]
    n = snap.nodes[down]
    since = snap.pack.ts(3)
    for cond in n["status"]["conditions"]:
        cond.update(
            status="Unknown",
            reason="NodeStatusUnknown",
            message="Kubelet stopped posting node status.",
            lastHeartbeatTime=snap.pack.ts(2.5),
            lastTransitionTime=since,
        )
    n["spec"]["taints"] = [
        {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": since},
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": since},
    ]
    snap.pack.event(
        3,
        "default",
        "Node",
        down,
        "NodeNotReady",
        f"Node {down} status is now: NodeNotReady",
        component="node-controller",
    )
    for part, plans in snap.pods.items():
        for plan in plans:
            if plan.args.get("node") != down:
                continue
            plan.healthy = False
            for s in plan.args["statuses"]:
                s["ready"] = False
            snap.set_unavailable(part)
            plan.args["conditions"] = [
                {"type": "Ready", "status": "False", "lastTransitionTime": since},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": snap.pack.ts(BORN)},
            ]
            snap.pack.event(
                3.1,
                snap.ns,
                "Pod",
                plan.args["name"],
                "NodeNotReady",
                "Node is not ready",
                type="Warning",
                component="node-controller",
            )
    for plan in snap.system:
        if plan.args.get("node") == down:
            for s in plan.args["statuses"]:
                s["ready"] = False
    return snap


def kube_scheduler_down() -> Snapshot:
    """kube-scheduler's static pod manifest moved away: no kube-scheduler pod; recommendation's pod, deleted, comes
    back Pending and nothing reports on it."""
    snap = snapshot("hotel-scheduler-down", HOTEL, "Why is recommendation not running?")
    snap.system = [p for p in snap.system if not p.args["name"].startswith("kube-scheduler")]
    snap.pending_pod("recommendation", "", scheduler=False, revision=1, created=3)
    snap.pack.event(
        2.99,
        snap.ns,
        "ReplicaSet",
        snap.rs_name("recommendation"),
        "SuccessfulCreate",
        f"Created pod: {snap.pod_name('recommendation', 1, 1)}",
        component="replicaset-controller",
    )
    return snap


def kube_proxy_down() -> Snapshot:
    """kube-proxy crash-loops on kind-worker2 (its config broken): Service traffic from that node goes nowhere."""
    snap = snapshot("shop-kube-proxy-down", SHOP, "Why do calls from checkout to payment time out?")
    on = WORKERS[1]
    plan = next(p for p in snap.system if p.args["name"].startswith("kube-proxy") and p.args["node"] == on)
    image = plan.args["containers"][0]["image"]
    plan.args["statuses"] = [
        status(
            snap.pack,
            "kube-proxy",
            image,
            state=waiting(
                "CrashLoopBackOff",
                f"back-off 5m0s restarting failed container=kube-proxy "
                f"pod={plan.args['name']}_kube-system({uid(snap.pack.name, 'pod', 'kube-system', plan.args['name'])})",
            ),
            ready=False,
            restarts=14,
            last=terminated(snap.pack, "Error", 1, 55, 55.1),
        )
    ]
    plan.args["phase"] = "Running"
    plan.healthy = False
    for minute in range(5, 58, 4):
        snap.pack.log(
            minute,
            "checkoutservice",
            "ERROR",
            f"failed to charge card: could not charge the card: rpc error: code = Unavailable desc = connection "
            f'error: desc = "transport: Error while dialing: dial tcp {snap.cluster_ip("paymentservice")}:50051: i/o '
            'timeout"',
        )
    return snap


# ================================================================================================ ended, healthy
def old_failed_create_beside_secret() -> Snapshot:
    """An old quota FailedCreate of recommendationservice (its pod has run ready since) beside a current fault:
    paymentservice cannot start without secret payment-keys."""
    snap = snapshot("shop-old-quota-payment-secret", SHOP, "Why does checkout fail?")
    rs = snap.rs_name("recommendationservice")
    snap.pack.event(
        BORN - 2,
        snap.ns,
        "ReplicaSet",
        rs,
        "FailedCreate",
        f'Error creating: pods "{snap.pod_name("recommendationservice", 1, 9)}" is forbidden: exceeded quota: '
        "compute-quota, requested: requests.cpu=100m, used: requests.cpu=1900m, limited: requests.cpu=2",
        type="Warning",
        component="replicaset-controller",
        count=7,
        last=BORN - 1,
    )
    _quota(snap, "compute-quota", {"requests.cpu": "4"}, {"requests.cpu": "1200m"})
    env = [{"name": "STRIPE_KEY", "valueFrom": {"secretKeyRef": {"name": "payment-keys", "key": "stripe"}}}]
    spec = snap.container_of(snap.app.part("paymentservice"), env=env)
    snap.rollout("paymentservice", containers=[spec])
    message = 'secret "payment-keys" not found'
    pod = snap.waiting_pod("paymentservice", "CreateContainerConfigError", message, container={"env": env})
    snap.kubelet_event(pod, "paymentservice", "Failed", f"Error: {message}", count=60)
    return snap


def old_failed_create_unlisted_controller() -> Snapshot:
    """The same old FailedCreate, in a snapshot that holds no ReplicaSet (its collector kept pods and events):
    the pods of the ReplicaSet it names have run ready since, and show that it has ended."""
    snap = old_failed_create_beside_secret()
    snap.pack.name = "shop-old-quota-no-replicasets"
    snap.replicasets.clear()
    return snap


def old_scheduling_beside_quota() -> Snapshot:
    """rate could not be scheduled for a while long ago and then was (it runs ready); today the namespace's pods
    quota refuses geo's new pod."""
    snap = snapshot("hotel-old-scheduling-geo-quota", HOTEL, "Why do hotel searches return nothing?")
    rate = snap.pods["rate"][0].args["name"]
    snap.pack.event(
        BORN - 1,
        snap.ns,
        "Pod",
        rate,
        "FailedScheduling",
        f"0/4 nodes are available: 1 node(s) had untolerated taint {CONTROL_TAINT}, 3 Insufficient memory. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims "
        "found for incoming pod.",
        type="Warning",
        component="default-scheduler",
        new_api=True,
        count=5,
        last=BORN - 0.2,
    )
    _quota(snap, "object-counts", {"pods": "18"}, {"pods": "18"})
    _no_pods(
        snap,
        "geo",
        f'Error creating: pods "{snap.pod_name("geo", 1, 4)}" is forbidden: exceeded quota: object-counts, '
        "requested: pods=1, used: pods=18, limited: pods=18",
    )
    frontend_errors(snap, "search")
    return snap


def healthy_hotel() -> Snapshot:
    """Nothing wrong: the hotel app's start-up restarts and warnings are hours old."""
    return snapshot("hotel-healthy", HOTEL, "Is anything wrong in namespace hotel-res?")


def healthy_shop() -> Snapshot:
    return snapshot("shop-healthy", SHOP, "Is the checkoutservice healthy?")


@dataclass(frozen=True, slots=True)
class Case:
    """A snapshot, the family of its fault, the component the likely cause must name and words of which one must
    name the fault (none: the answer must say there is no incident)."""

    build: Callable[[], Snapshot]
    family: str
    component: str
    fault: tuple[str, ...]
    # Words the cause must hold besides: the object that shows the fault, where another object could be blamed.
    shows: tuple[str, ...] = ()
    # Another question of the same snapshot (one naming a caller on the path, or none at all).
    question: str = ""

    def pack(self) -> Pack:
        pack = self.build().build()
        if self.question:
            pack.doc["question"] = self.question
        return pack


CASES: dict[str, Case] = {
    "non_existent_node": Case(non_existent_node, "scheduling", "geo", ("node selector", "extra-node")),
    "node_name_missing": Case(node_name_missing, "scheduling", "checkoutservice", ("missing-node",)),
    "untolerated_taint": Case(untolerated_taint, "scheduling", "cartservice", ("taint",), ("sre-fault",)),
    "cordoned": Case(cordoned, "scheduling", "rate", ("unschedulable", "cordon")),
    "insufficient_memory": Case(insufficient_memory, "scheduling", "recommendationservice", ("memory",)),
    "insufficient_cpu": Case(insufficient_cpu, "scheduling", "search", ("cpu",)),
    "missing_storage_class": Case(
        missing_storage_class, "scheduling", "mongodb-rate", ("storageclass", "storage class")
    ),
    "volume_taken": Case(volume_taken, "scheduling", "mongodb-profile", ("different claim", "another claim")),
    "redeployed_without_volume": Case(
        redeployed_without_volume, "scheduling", "mongodb-geo", ("persistent volume", "no volume")
    ),
    "quota_pods": Case(quota_pods, "admission", "frontend", ("quota",)),
    "quota_cpu": Case(quota_cpu, "admission", "reservation", ("quota",)),
    "quota_memory": Case(quota_memory, "admission", "currencyservice", ("quota",)),
    "service_account_missing": Case(service_account_missing, "admission", "user", ("service account",)),
    "image_missing": Case(image_missing, "startup", "productcatalogservice", ("image",)),
    "image_access_denied": Case(image_access_denied, "startup", "profile", ("image",)),
    "pull_secret_missing": Case(pull_secret_missing, "startup", "adservice", ("pull secret",)),
    "secret_missing": Case(secret_missing, "startup", "mongodb-reservation", ("secret",)),
    "configmap_missing": Case(configmap_missing, "startup", "emailservice", ("configmap",)),
    "configmap_volume_missing": Case(configmap_volume_missing, "startup", "memcached-profile", ("configmap",)),
    "node_not_ready": Case(node_not_ready, "infrastructure", "kind-worker2", ("not ready",)),
    "kube_scheduler_down": Case(kube_scheduler_down, "infrastructure", "scheduler", ("not running",)),
    "kube_proxy_down": Case(kube_proxy_down, "infrastructure", "kube-proxy", ("not running",)),
    "old_failed_create_beside_secret": Case(old_failed_create_beside_secret, "ended", "paymentservice", ("secret",)),
    "old_failed_create_unlisted_controller": Case(
        old_failed_create_unlisted_controller, "ended", "paymentservice", ("secret",)
    ),
    "old_scheduling_beside_quota": Case(old_scheduling_beside_quota, "ended", "geo", ("quota",)),
    "healthy_hotel": Case(healthy_hotel, "noop", "", ()),
    "healthy_shop": Case(healthy_shop, "noop", "", ()),
}
# The same faults asked about from a caller on their path, or about the whole namespace.
VARIANTS = {
    "non_existent_node": "Why is frontend returning errors?",
    "untolerated_taint": "What is wrong in namespace boutique?",
    "cordoned": "Why is search failing?",
    "missing_storage_class": "What is wrong in namespace hotel-res?",
    "volume_taken": "Why is profile failing?",
    "quota_pods": "What is wrong in namespace boutique?",
    "service_account_missing": "Why does frontend return errors?",
    "image_missing": "Why does frontend return errors?",
    "secret_missing": "Why is reservation failing?",
    "configmap_missing": "Why is checkoutservice failing?",
    "node_not_ready": "What is wrong in namespace boutique?",
    "kube_proxy_down": "Why is paymentservice unreachable?",
    "kube_scheduler_down": "What is wrong in namespace hotel-res?",
    "old_failed_create_beside_secret": "Why is checkoutservice failing?",
}
CASES.update({f"{name}@asked": replace(CASES[name], question=question) for name, question in VARIANTS.items()})


def stated(summary: str) -> str:
    """The likely cause in the answer's own words: after its "Likely cause (...): " head, before the first text
    it quotes (a controller's message may name any fault; the cause must say it)."""
    head = "Likely cause"
    if not summary.startswith(head):
        return ""
    cause = summary.split("): ", 1)[1] if "): " in summary else summary
    for mark in (' ("', " ('", ", which explains"):
        cause = cause.split(mark, 1)[0]
    return cause


def hit(case: Case, summary: str) -> tuple[bool, bool]:
    """(component named, fault named) by the likely cause's own words; for a healthy case both are whether the
    answer says there is no incident."""
    if not case.component:
        healthy = "No incident found" in summary
        return healthy, healthy
    cause = stated(summary).lower()
    fault = any(word in cause for word in case.fault) and all(word in cause for word in case.shows)
    return case.component.lower() in cause, fault
