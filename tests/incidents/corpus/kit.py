"""A small kit for writing incident packs: times, Kubernetes objects in the API's own shape, series, streams.

Everything here is deterministic (uids and hashes derive from their inputs), so rebuilding the packs gives
byte-identical files. The kit adds no knowledge of any incident: each incident's TOML file says what happened
(``reader`` turns it into calls of the kit).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

Json = dict[str, Any]


def digest(*parts: object, length: int = 16) -> str:
    return hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()[:length]


def uid(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(str(p) for p in parts)))


def iso(ts: datetime, *, micro: bool = False) -> str:
    if micro:
        return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


class Pack:
    """One incident pack being written: the window, and the sections as the pack format has them."""

    def __init__(
        self,
        name: str,
        *,
        title: str,
        description: str,
        question: str,
        start: str,
        minutes: int = 60,
    ) -> None:
        self.name = name
        self.t0 = datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.minutes = minutes
        self.doc: Json = {
            "name": name,
            "title": title,
            "description": description,
            "question": question,
            "time_window": {"start": iso(self.t0), "end": iso(self.t0 + timedelta(minutes=minutes))},
            "topology": {"services": []},
        }
        self._k8s: Json = {"pods": [], "events": [], "deployments": [], "replicasets": [], "pod_logs": []}
        self._series: list[Json] = []
        self._streams: dict[str, Json] = {}
        self._logs: list[Json] = []
        self._metrics: list[Json] = []
        self._deploys: list[Json] = []
        self._k8s_events: list[Json] = []

    # ---------------------------------------------------------------------------------------- time
    def at(self, minute: float) -> datetime:
        """The moment ``minute`` minutes into the window (negative: before it, for objects' creation times)."""
        return self.t0 + timedelta(seconds=round(minute * 60, 3))

    def ts(self, minute: float) -> str:
        return iso(self.at(minute))

    def unix(self, minute: float) -> float:
        return self.at(minute).timestamp()

    def ns(self, minute: float) -> str:
        return str(round(self.at(minute).timestamp() * 1000) * 1_000_000)

    # ------------------------------------------------------------------------------------ topology
    def service(
        self,
        name: str,
        kind: str,
        *,
        namespace: str | None = None,
        depends_on: Sequence[str] = (),
        **labels: str,
    ) -> None:
        all_labels = dict(labels)
        if namespace is not None:
            all_labels = {"namespace": namespace, **all_labels}
        self.doc["topology"]["services"].append(
            {"name": name, "kind": kind, "depends_on": list(depends_on), "labels": all_labels}
        )

    # ------------------------------------------------------------------------- built-in sections
    def log(self, minute: float, service: str, level: str, message: str) -> None:
        self._logs.append({"ts": iso_ms(self.at(minute)), "service": service, "level": level, "message": message})

    def metric(
        self,
        metric: str,
        service: str,
        unit: str,
        values: Sequence[float],
        *,
        every: float = 1.0,
        start: float = 0.0,
        labels: dict[str, str] | None = None,
    ) -> None:
        points = [[self.ts(start + i * every), v] for i, v in enumerate(values)]
        self._metrics.append(
            {"metric": metric, "service": service, "unit": unit, "labels": labels or {}, "points": points}
        )

    def deploy(
        self, minute: float, service: str, version: str, *, previous: str | None = None, author: str, summary: str
    ) -> None:
        self._deploys.append(
            {
                "ts": self.ts(minute),
                "service": service,
                "version": version,
                "previous_version": previous,
                "author": author,
                "summary": summary,
            }
        )

    def k8s_event(
        self,
        *,
        minute: float,
        namespace: str,
        kind: str,
        obj: str,
        reason: str,
        type: str = "Normal",
        message: str,
        count: int = 1,
        service: str | None = None,
    ) -> None:
        """One entry of the built-in events section (its fields in the section's order)."""
        self._k8s_events.append(
            {
                "ts": self.ts(minute),
                "namespace": namespace,
                "kind": kind,
                "object": obj,
                "reason": reason,
                "type": type,
                "message": message,
                "count": count,
                "service": service,
            }
        )

    # ------------------------------------------------------------------------------- Kubernetes
    def deployment(
        self,
        name: str,
        namespace: str,
        *,
        selector: dict[str, str],
        replicas: int,
        revision: int,
        image: str,
        container: str,
        created: float,
        ready: int | None = None,
        updated: int | None = None,
        available: int | None = None,
        conditions: list[Json] | None = None,
        generation: int | None = None,
    ) -> Json:
        ready = replicas if ready is None else ready
        obj: Json = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": uid(self.name, "deploy", namespace, name),
                "generation": generation or revision,
                "creationTimestamp": self.ts(created),
                "labels": dict(selector),
                "annotations": {"deployment.kubernetes.io/revision": str(revision)},
            },
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": dict(selector)},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": {
                    "metadata": {"labels": dict(selector)},
                    "spec": {"containers": [{"name": container, "image": image}]},
                },
            },
            "status": {
                "observedGeneration": generation or revision,
                "replicas": replicas,
                "updatedReplicas": replicas if updated is None else updated,
                "readyReplicas": ready,
                "availableReplicas": ready if available is None else available,
                "conditions": conditions or [],
            },
        }
        if ready < replicas:
            obj["status"]["unavailableReplicas"] = replicas - ready
        self._k8s["deployments"].append(obj)
        return obj

    def replicaset(
        self,
        deployment: str,
        namespace: str,
        template_hash: str,
        *,
        selector: dict[str, str],
        revision: int,
        image: str,
        container: str,
        created: float,
        replicas: int,
        ready: int | None = None,
    ) -> str:
        name = f"{deployment}-{template_hash}"
        labels = {**selector, "pod-template-hash": template_hash}
        ready = replicas if ready is None else ready
        self._k8s["replicasets"].append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "uid": uid(self.name, "rs", namespace, name),
                    "creationTimestamp": self.ts(created),
                    "labels": labels,
                    "annotations": {
                        "deployment.kubernetes.io/desired-replicas": str(replicas),
                        "deployment.kubernetes.io/max-replicas": str(replicas + 1),
                        "deployment.kubernetes.io/revision": str(revision),
                    },
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": deployment,
                            "uid": uid(self.name, "deploy", namespace, deployment),
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {"containers": [{"name": container, "image": image}]},
                    },
                },
                "status": {
                    "replicas": replicas,
                    "fullyLabeledReplicas": replicas,
                    "readyReplicas": ready,
                    "availableReplicas": ready,
                    "observedGeneration": 1,
                },
            }
        )
        return name

    def pod(
        self,
        name: str,
        namespace: str,
        *,
        labels: dict[str, str],
        node: str | None = None,
        containers: Sequence[Json],
        statuses: Sequence[Json] = (),
        created: float,
        owner: tuple[str, str] | None = None,
        phase: str = "Running",
        ip: str | None = None,
        host_ip: str | None = None,
        qos: str = "Burstable",
        reason: str | None = None,
        message: str | None = None,
        conditions: list[Json] | None = None,
        init_statuses: Sequence[Json] = (),
        volumes: Sequence[Json] = (),
        node_selector: dict[str, str] | None = None,
        tolerations: Sequence[Json] = (),
        service_account: str | None = None,
        restart_policy: str = "Always",
        init_containers: Sequence[Json] = (),
        affinity: Json | None = None,
    ) -> Json:
        metadata: Json = {
            "name": name,
            "namespace": namespace,
            "uid": uid(self.name, "pod", namespace, name),
            "creationTimestamp": self.ts(created),
            "labels": dict(labels),
        }
        if owner is not None:
            kind, owner_name = owner
            api = "batch/v1" if kind == "Job" else "apps/v1"
            metadata["generateName"] = name[: name.rfind("-") + 1] if kind != "StatefulSet" else None
            if metadata["generateName"] is None:
                del metadata["generateName"]
            metadata["ownerReferences"] = [
                {
                    "apiVersion": api,
                    "kind": kind,
                    "name": owner_name,
                    "uid": uid(self.name, kind.lower(), namespace, owner_name),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ]
        spec: Json = {
            "containers": list(containers),
            "restartPolicy": restart_policy,
            "serviceAccountName": service_account or labels.get("app.kubernetes.io/name") or "default",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                *tolerations,
            ],
        }
        add_set(
            spec,
            initContainers=list(init_containers),
            nodeName=node,
            volumes=list(volumes),
            nodeSelector=dict(node_selector or {}),
            affinity=affinity,
        )
        status: Json = {"phase": phase, "qosClass": qos}
        if conditions is None:
            ready = all(s.get("ready") for s in statuses) and phase == "Running" and bool(statuses)
            conditions = pod_conditions(self, created, scheduled=node is not None, ready=ready, statuses=statuses)
        status["conditions"] = conditions
        if node is not None:
            status["hostIP"] = host_ip or node_ip(node)
            status["startTime"] = self.ts(created + 0.02)
            if ip is not None:
                status["podIP"] = ip
                status["podIPs"] = [{"ip": ip}]
        add_set(
            status,
            reason=reason,
            message=message,
            initContainerStatuses=list(init_statuses),
            containerStatuses=list(statuses),
        )
        obj: Json = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}
        self._k8s["pods"].append(obj)
        return obj

    def event(
        self,
        first: float,
        namespace: str,
        kind: str,
        obj: str,
        reason: str,
        message: str,
        *,
        type: str = "Normal",
        last: float | None = None,
        count: int = 1,
        component: str = "kubelet",
        host: str | None = None,
        field_path: str | None = None,
        api_version: str | None = None,
        new_api: bool = False,
        action: str | None = None,
    ) -> None:
        """A core/v1 Event as ``kubectl get events -o json`` shows it.

        ``new_api``: recorded through events.k8s.io (the scheduler, newer controllers): ``eventTime`` and
        ``series`` are set and ``firstTimestamp``/``lastTimestamp`` are null, as the API returns them.
        """
        last = first if last is None else last
        involved: Json = {
            "kind": kind,
            "namespace": namespace,
            "name": obj,
            "uid": uid(self.name, kind.lower(), namespace, obj),
            "apiVersion": api_version or _api_version(kind),
        }
        if field_path:
            involved["fieldPath"] = field_path
        name = f"{obj}.{digest(self.name, obj, reason, message, first)}"
        event: Json = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": uid(self.name, "event", name),
                "creationTimestamp": self.ts(first),
            },
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type,
        }
        if new_api:
            event["firstTimestamp"] = None
            event["lastTimestamp"] = None
            event["eventTime"] = iso(self.at(first), micro=True)
            event["reportingComponent"] = component
            event["reportingInstance"] = f"{component}-{host or 'control-plane'}"
            event["action"] = action or "Scheduling"
            event["source"] = {}
            if count > 1:
                event["series"] = {"count": count, "lastObservedTime": iso(self.at(last), micro=True)}
        else:
            event["firstTimestamp"] = self.ts(first)
            event["lastTimestamp"] = self.ts(last)
            event["count"] = count
            event["source"] = {"component": component, **({"host": host} if host else {})}
            event["reportingComponent"] = component if component != "kubelet" else "kubelet"
            event["reportingInstance"] = host or ""
            event["eventTime"] = None
        self._k8s["events"].append(event)

    def objects(self, plural: str, *objects: Json) -> None:
        """Objects of any kind under its API plural name (``services``, ``nodes``, ...), as the API returns them."""
        self._k8s.setdefault(plural, []).extend(objects)

    def scheduled(self, minute: float, namespace: str, pod: str, node: str) -> None:
        """The scheduler's Scheduled event of ``pod`` (recorded through events.k8s.io)."""
        self.event(
            minute,
            namespace,
            "Pod",
            pod,
            "Scheduled",
            f"Successfully assigned {namespace}/{pod} to {node}",
            component="default-scheduler",
            new_api=True,
            action="Binding",
        )

    def pod_log(
        self, namespace: str, pod: str, lines: Sequence[str], *, container: str, previous: bool = False
    ) -> None:
        self._k8s["pod_logs"].append(
            {"namespace": namespace, "pod": pod, "container": container, "previous": previous, "lines": list(lines)}
        )

    # ------------------------------------------------------------------------------ Prometheus
    def series(
        self, labels: dict[str, str], values: Sequence[float | str], *, every: float = 1.0, start: float = 0.0
    ) -> None:
        """One series: ``values`` sampled every ``every`` minutes from ``start`` (a value is kept as given)."""
        samples = [[self.unix(start + i * every), _sample(v)] for i, v in enumerate(values)]
        self._series.append({"metric": dict(labels), "values": samples})

    # ------------------------------------------------------------------------------------ Loki
    def stream(self, labels: dict[str, str], entries: Iterable[tuple[float, str]]) -> None:
        key = json.dumps(labels, sort_keys=True)
        stream = self._streams.setdefault(key, {"stream": dict(labels), "values": []})
        stream["values"] += [[self.ns(minute), line] for minute, line in entries]

    # ------------------------------------------------------------------------------------ truth
    def truth(
        self,
        *,
        kind: str,
        service: str | None = None,
        summary: str,
        key_evidence: Sequence[str] = (),
        ambiguous: bool = False,
    ) -> None:
        self.doc["truth"] = {
            "root_cause": {"service": service, "kind": kind, "summary": summary},
            "key_evidence": list(key_evidence),
            "healthy": kind == "none",
            "ambiguous": ambiguous,
        }

    # ------------------------------------------------------------------------------------ output
    def build(self) -> Json:
        doc = dict(self.doc)
        truth = doc.pop("truth")
        if self._logs:
            doc["logs"] = sorted(self._logs, key=lambda x: x["ts"])
        if self._metrics:
            doc["metrics"] = self._metrics
        if self._deploys:
            doc["deploys"] = self._deploys
        if self._k8s_events:
            doc["k8s_events"] = sorted(self._k8s_events, key=lambda x: x["ts"])
        k8s = {key: value for key, value in self._k8s.items() if value}
        if k8s:
            doc["kubernetes"] = k8s
        if self._series:
            doc["prometheus"] = {"series": self._series}
        if self._streams:
            streams = []
            for stream in self._streams.values():
                stream["values"].sort(key=lambda v: int(v[0]))
                streams.append(stream)
            doc["loki"] = {"streams": streams}
        doc["truth"] = truth
        return doc

    def write(self, directory: Path) -> Path:
        path = directory / f"{self.name}.json"
        path.write_text(json.dumps(self.build(), indent=1, ensure_ascii=False) + "\n")
        return path


def _api_version(kind: str) -> str:
    return {
        "Deployment": "apps/v1",
        "ReplicaSet": "apps/v1",
        "StatefulSet": "apps/v1",
        "DaemonSet": "apps/v1",
        "Job": "batch/v1",
        "CronJob": "batch/v1",
        "HorizontalPodAutoscaler": "autoscaling/v2",
        "Certificate": "cert-manager.io/v1",
        "CertificateRequest": "cert-manager.io/v1",
        "Ingress": "networking.k8s.io/v1",
    }.get(kind, "v1")


def _sample(value: float | str) -> str:
    if isinstance(value, str):
        return value
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(round(value, 6))


def add_set(target: Json, **fields: Any) -> Json:
    """``target`` with those of ``fields`` that are set (not None, not an empty list or mapping), in their order."""
    for key, value in fields.items():
        if value is not None and value != [] and value != {}:
            target[key] = value
    return target


def node_ip(node: str) -> str:
    """The node's InternalIP read back from an EC2-style name (``ip-10-0-12-34...``), else a stable one."""
    if node.startswith("ip-"):
        parts = node.split(".")[0].split("-")[1:5]
        if len(parts) == 4 and all(p.isdigit() for p in parts):
            return ".".join(parts)
    h = int(digest(node, length=4), 16)
    return f"10.20.{h % 250}.{(h // 250) % 250 + 2}"


def pod_conditions(
    pack: Pack, created: float, *, scheduled: bool, ready: bool, statuses: Sequence[Json] = ()
) -> list[Json]:
    if not scheduled:
        return []
    started = pack.ts(created + 0.05)
    not_ready = [s["name"] for s in statuses if not s.get("ready")]
    message = f"containers with unready status: [{' '.join(not_ready)}]" if not_ready else None
    conditions: list[Json] = [
        {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": started},
        {"type": "Initialized", "status": "True", "lastTransitionTime": pack.ts(created + 0.02)},
    ]
    for kind in ("Ready", "ContainersReady"):
        cond: Json = {"type": kind, "status": "True" if ready else "False", "lastTransitionTime": started}
        if not ready:
            cond["reason"] = "ContainersNotReady"
            if message:
                cond["message"] = message
        conditions.append(cond)
    conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": pack.ts(created)})
    return conditions


def condition(
    pack: Pack, type: str, status: str, reason: str, message: str, at: float, *, updated: bool = False
) -> Json:
    """A status condition that changed ``at``; ``updated``: with a lastUpdateTime too (a Deployment's)."""
    cond: Json = {"type": type, "status": status, "reason": reason, "message": message}
    if updated:
        cond["lastUpdateTime"] = pack.ts(at)
    cond["lastTransitionTime"] = pack.ts(at)
    return cond


def unschedulable(pack: Pack, created: float, message: str) -> list[Json]:
    return [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
            "lastTransitionTime": pack.ts(created),
        }
    ]


# -------------------------------------------------------------------------------- container parts
def container(
    name: str,
    image: str,
    *,
    cpu: str | None = "250m",
    memory: str | None = "256Mi",
    limit_memory: str | None = None,
    limit_cpu: str | None = None,
    port: int | None = 8080,
    probes: Json | None = None,
    env: Sequence[Json] = (),
    env_from: Sequence[Json] = (),
    mounts: Sequence[Json] = (),
    command: Sequence[str] = (),
    args: Sequence[str] = (),
    resources: Json | None = None,
) -> Json:
    """A container spec; ``resources``: the whole block as given (extended resources, ephemeral-storage), instead of
    the one ``cpu``/``memory``/``limit_*`` make."""
    c: Json = add_set(
        {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}, command=list(command), args=list(args)
    )
    if resources is None:
        requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
        limits = {k: v for k, v in (("cpu", limit_cpu), ("memory", limit_memory)) if v}
        resources = {}
        if requests:
            resources["requests"] = requests
        if limits:
            resources["limits"] = limits
    c["resources"] = resources
    add_set(
        c,
        ports=None if port is None else [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        env=list(env),
        envFrom=list(env_from),
        volumeMounts=list(mounts),
    )
    if probes:
        c.update(probes)
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(path: str, port: int, *, period: int = 10, timeout: int = 1, failures: int = 3, delay: int = 0) -> Json:
    probe: Json = {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "timeoutSeconds": timeout,
        "periodSeconds": period,
        "successThreshold": 1,
        "failureThreshold": failures,
    }
    return add_set(probe, initialDelaySeconds=delay or None)


def running(pack: Pack, since: float) -> Json:
    return {"running": {"startedAt": pack.ts(since)}}


def waiting(reason: str, message: str | None = None) -> Json:
    return {"waiting": add_set({"reason": reason}, message=message)}


def terminated(
    pack: Pack,
    reason: str,
    code: int,
    started: float,
    finished: float,
    *,
    message: str | None = None,
    cid: str | None = None,
    signal: int | None = None,
    never_started: bool = False,
) -> Json:
    """A terminated state; ``never_started``: the runtime could not start the process (startedAt is the epoch)."""
    inner: Json = {
        "exitCode": code,
        "reason": reason,
        "startedAt": "1970-01-01T00:00:00Z" if never_started else pack.ts(started),
        "finishedAt": pack.ts(finished),
        "containerID": f"containerd://{digest(pack.name, cid or reason, started, length=64)}",
    }
    return {"terminated": add_set(inner, signal=signal, message=message)}


def status(
    pack: Pack,
    name: str,
    image: str,
    *,
    state: Json,
    ready: bool = True,
    restarts: int = 0,
    last: Json | None = None,
    started: bool | None = None,
) -> Json:
    s: Json = {
        "name": name,
        "image": image,
        "imageID": ""
        if "waiting" in state and restarts == 0
        else f"{image.split(':')[0]}@sha256:{digest(image, length=64)}",
        "ready": ready,
        "restartCount": restarts,
        "started": ready if started is None else started,
        "state": state,
        "lastState": last or {},
    }
    if "running" in state or restarts:
        s["containerID"] = f"containerd://{digest(pack.name, name, json.dumps(state), length=64)}"
    return s


def crashloop_message(container_name: str, pod: str, namespace: str, pack: Pack, backoff: str = "5m0s") -> str:
    return (
        f"back-off {backoff} restarting failed container={container_name} "
        f"pod={pod}_{namespace}({uid(pack.name, 'pod', namespace, pod)})"
    )


def backoff_event_message(container_name: str, pod: str, namespace: str, pack: Pack) -> str:
    return (
        f"Back-off restarting failed container {container_name} in pod "
        f"{pod}_{namespace}({uid(pack.name, 'pod', namespace, pod)})"
    )


def pod_start_events(
    pack: Pack,
    namespace: str,
    pod: str,
    node: str,
    container_name: str,
    image: str,
    minute: float,
    *,
    pulled: bool = True,
    pull_seconds: float = 2.417,
) -> None:
    """The Normal events every healthy pod start leaves: Scheduled, Pulling/Pulled, Created, Started."""
    pack.scheduled(minute, namespace, pod, node)
    if pulled:
        size = int(digest(image, length=6), 16) * 97 % 400_000_000 + 40_000_000
        pulls = [
            (0.02, "Pulling", f'Pulling image "{image}"'),
            (
                0.06,
                "Pulled",
                f'Successfully pulled image "{image}" in {pull_seconds}s ({pull_seconds}s including waiting). '
                f"Image size: {size} bytes.",
            ),
        ]
    else:
        pulls = [(0.02, "Pulled", f'Container image "{image}" already present on machine')]
    steps = [
        *pulls,
        (0.07, "Created", f"Created container {container_name}"),
        (0.08, "Started", f"Started container {container_name}"),
    ]
    for offset, reason, message in steps:
        pack.event(
            minute + offset,
            namespace,
            "Pod",
            pod,
            reason,
            message,
            host=node,
            field_path=f"spec.containers{{{container_name}}}",
        )


def healthy_pod(
    pack: Pack,
    *,
    name: str,
    namespace: str,
    app: str,
    rs: str,
    template_hash: str,
    node: str,
    container_name: str,
    image: str,
    created: float,
    ip: str,
    restarts: int = 0,
    last: Json | None = None,
    extra_labels: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    memory: str = "256Mi",
    limit_memory: str | None = "512Mi",
    port: int = 8080,
) -> Json:
    base = labels if labels is not None else {"app.kubernetes.io/name": app}
    all_labels = {**base, "pod-template-hash": template_hash, **(extra_labels or {})}
    return pack.pod(
        name,
        namespace,
        labels=all_labels,
        node=node,
        created=created,
        owner=("ReplicaSet", rs),
        ip=ip,
        containers=[container(container_name, image, memory=memory, limit_memory=limit_memory, port=port)],
        statuses=[
            status(pack, container_name, image, state=running(pack, created + 0.1), restarts=restarts, last=last)
        ],
    )


def write_all(packs: Iterable[Pack], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    return [pack.write(directory) for pack in packs]
