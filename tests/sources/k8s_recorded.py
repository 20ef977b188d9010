"""Recorded Kubernetes API answers for the fake API server (written from the API reference: core/v1 Pod, Event,
apps/v1 Deployment and ReplicaSet, meta/v1 Status), with secrets planted where real clusters have them."""

from __future__ import annotations

import copy
from typing import Any

from .fake_http import Request, Response, json_response, text_response

NAMESPACE = "shop"
# Planted secrets: none of them may reach a recorded invocation, the database or a log line.
DB_PASSWORD = "Tr0ub4dor-and-3-horses"
SA_TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6InRlc3QifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6c2hvcDpjaGVja291dCJ9.c2lnbmF0dXJlLXBsYW50ZWQ"
LOG_BEARER = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
SECRETS = (DB_PASSWORD, SA_TOKEN, LOG_BEARER, "checkout-db-credentials", "regcred-private")

DEPLOYMENT_UID = "8b0a3f1e-6c2d-4d5e-9f10-2a3b4c5d6e7f"
NEW_RS_UID = "4e5f6a7b-8c9d-4e0f-a1b2-c3d4e5f6a7b8"


def pod(name: str, *, phase: str = "Running", restarts: int = 0, oom: bool = False) -> dict[str, Any]:
    last_state: dict[str, Any] = {}
    state: dict[str, Any] = {"running": {"startedAt": "2024-11-29T13:52:10Z"}}
    if oom:
        last_state = {
            "terminated": {
                "exitCode": 137,
                "reason": "OOMKilled",
                "startedAt": "2024-11-29T13:49:02Z",
                "finishedAt": "2024-11-29T13:51:36Z",
                "containerID": "containerd://1f2e3d4c5b6a",
            }
        }
        state = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 2m40s restarting failed container"}}
    return {
        "metadata": {
            "name": name,
            "generateName": "checkout-api-7f9c6d8b5-",
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "resourceVersion": "918273",
            "creationTimestamp": "2024-11-29T13:40:12Z",
            "labels": {"app": "checkout-api", "pod-template-hash": "7f9c6d8b5"},
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": '{"apiVersion":"v1","kind":"Pod","env":"DB_PASSWORD='
                + DB_PASSWORD
                + '"}',
                "example.com/bootstrap-token": SA_TOKEN,
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "checkout-api-7f9c6d8b5",
                    "uid": NEW_RS_UID,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2024-11-29T13:40:12Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {}},
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "checkout-api",
                    "image": "registry.example.com/shop/checkout-api:2.14.0",
                    "resources": {"limits": {"memory": "512Mi", "cpu": "500m"}, "requests": {"memory": "256Mi"}},
                    "env": [
                        {"name": "DB_HOST", "value": "orders-db.shop.svc"},
                        {"name": "DB_PASSWORD", "value": DB_PASSWORD},
                        {
                            "name": "DB_USER",
                            "valueFrom": {"secretKeyRef": {"name": "checkout-db-credentials", "key": "username"}},
                        },
                    ],
                    "envFrom": [{"secretRef": {"name": "checkout-db-credentials"}}],
                }
            ],
            "volumes": [{"name": "tls", "secret": {"secretName": "checkout-db-credentials", "defaultMode": 420}}],
            "imagePullSecrets": [{"name": "regcred-private"}],
            "nodeName": "node-b",
            "serviceAccountName": "checkout",
        },
        "status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": "False" if oom else "True"}],
            "podIP": "10.42.1.17",
            "startTime": "2024-11-29T13:40:12Z",
            "containerStatuses": [
                {
                    "name": "checkout-api",
                    "ready": not oom,
                    "restartCount": restarts,
                    "image": "registry.example.com/shop/checkout-api:2.14.0",
                    "imageID": "registry.example.com/shop/checkout-api@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                    "state": state,
                    "lastState": last_state,
                }
            ],
        },
    }


def pod_list(items: list[dict[str, Any]], *, cont: str = "", remaining: int | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"resourceVersion": "918300"}
    if cont:
        metadata["continue"] = cont
    if remaining is not None:
        metadata["remainingItemCount"] = remaining
    return {"kind": "PodList", "apiVersion": "v1", "metadata": metadata, "items": items}


EVENTS: dict[str, Any] = {
    "kind": "EventList",
    "apiVersion": "v1",
    "metadata": {"resourceVersion": "918301"},
    "items": [
        {
            "metadata": {
                "name": "checkout-api-7f9c6d8b5-tr6zn.17fb2c1d0a9e8f7b",
                "namespace": NAMESPACE,
                "uid": "ev-1",
                "resourceVersion": "918290",
                "creationTimestamp": "2024-11-29T13:51:37Z",
                "managedFields": [{"manager": "kubelet"}],
            },
            "involvedObject": {
                "kind": "Pod",
                "namespace": NAMESPACE,
                "name": "checkout-api-7f9c6d8b5-tr6zn",
                "uid": "uid-checkout-api-7f9c6d8b5-tr6zn",
                "apiVersion": "v1",
                "fieldPath": "spec.containers{checkout-api}",
            },
            "reason": "BackOff",
            "message": "Back-off restarting failed container checkout-api in pod checkout-api-7f9c6d8b5-tr6zn_shop",
            "source": {"component": "kubelet", "host": "node-b"},
            "firstTimestamp": "2024-11-29T13:51:37Z",
            "lastTimestamp": "2024-11-29T13:58:02Z",
            "count": 7,
            "type": "Warning",
            "reportingComponent": "kubelet",
            "reportingInstance": "node-b",
        },
        {
            "metadata": {
                "name": "checkout-api.17fb2b0e11aa22bb",
                "namespace": NAMESPACE,
                "uid": "ev-2",
                "resourceVersion": "918100",
                "creationTimestamp": "2024-11-29T13:40:11Z",
            },
            "involvedObject": {
                "kind": "Deployment",
                "namespace": NAMESPACE,
                "name": "checkout-api",
                "apiVersion": "apps/v1",
            },
            "reason": "ScalingReplicaSet",
            "message": "Scaled up replica set checkout-api-7f9c6d8b5 to 3",
            "source": {"component": "deployment-controller"},
            "firstTimestamp": "2024-11-29T13:40:11Z",
            "lastTimestamp": "2024-11-29T13:40:11Z",
            "count": 1,
            "type": "Normal",
        },
    ],
}

DEPLOYMENT = {
    "kind": "Deployment",
    "apiVersion": "apps/v1",
    "metadata": {
        "name": "checkout-api",
        "namespace": NAMESPACE,
        "uid": DEPLOYMENT_UID,
        "generation": 14,
        "annotations": {"deployment.kubernetes.io/revision": "14"},
    },
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "checkout-api"}}},
    "status": {"replicas": 3, "readyReplicas": 1, "updatedReplicas": 3},
}


def replicaset(name: str, revision: int, image: str, created: str, *, owner: str = DEPLOYMENT_UID) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": NEW_RS_UID if revision == 14 else f"uid-{name}",
            "creationTimestamp": created,
            "labels": {"app": "checkout-api", "pod-template-hash": name.rsplit("-", 1)[-1]},
            "annotations": {
                "deployment.kubernetes.io/revision": str(revision),
                "deployment.kubernetes.io/desired-replicas": "3",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "checkout-api",
                    "uid": owner,
                    "controller": True,
                }
            ],
        },
        "spec": {
            "replicas": 3 if revision == 14 else 0,
            "selector": {"matchLabels": {"app": "checkout-api", "pod-template-hash": name.rsplit("-", 1)[-1]}},
            "template": {
                "spec": {
                    "containers": [
                        {"name": "checkout-api", "image": image, "env": [{"name": "DB_PASSWORD", "value": DB_PASSWORD}]}
                    ]
                }
            },
        },
        "status": {"replicas": 3 if revision == 14 else 0, "readyReplicas": 1 if revision == 14 else 0},
    }


REPLICASETS = {
    "kind": "ReplicaSetList",
    "apiVersion": "apps/v1",
    "metadata": {"resourceVersion": "918302"},
    "items": [
        replicaset(
            "checkout-api-5d4c3b2a1", 13, "registry.example.com/shop/checkout-api:2.13.4", "2024-11-20T09:12:44Z"
        ),
        replicaset(
            "checkout-api-7f9c6d8b5", 14, "registry.example.com/shop/checkout-api:2.14.0", "2024-11-29T13:40:11Z"
        ),
        # Same labels, another owner (a copy someone made by hand): not a rollout of the deployment.
        replicaset(
            "checkout-api-0a0a0a0a0",
            1,
            "registry.example.com/shop/checkout-api:debug",
            "2024-11-25T08:00:00Z",
            owner="another-owner",
        ),
    ],
}

POD_LOG = (
    "2024-11-29T13:51:30.114Z INFO  starting checkout-api 2.14.0\n"
    f"2024-11-29T13:51:31.002Z DEBUG calling payments with Authorization: Bearer {LOG_BEARER}\n"
    "2024-11-29T13:51:35.870Z WARN  heap usage 498Mi of 512Mi\n"
    "2024-11-29T13:51:36.001Z ERROR java.lang.OutOfMemoryError: Java heap space\n"
)


def status(code: int, reason: str, message: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": extra.pop("metadata", {}),
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
        **extra,
    }


FORBIDDEN = status(
    403,
    "Forbidden",
    'pods is forbidden: User "system:serviceaccount:diag:reader" cannot list resource "pods" in API group "" in '
    'the namespace "payments"',
    details={"kind": "pods"},
)
EXPIRED = status(
    410,
    "Expired",
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results.",
    metadata={"continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTE4MzAwLCJzdGFydCI6ImZyZXNoIn0"},
)


class Cluster:
    """The API server's behaviour: which namespace forbids, how big the pod list is, whether continue expires."""

    def __init__(self, *, huge_pods: int = 0, expire_once: bool = False) -> None:
        self.huge_pods = huge_pods
        self.expire_once = expire_once
        self.expired = False

    def __call__(self, request: Request) -> Response:
        path = request.path
        if request.headers.get("authorization") != f"Bearer {SA_TOKEN}":
            return json_response(401, status(401, "Unauthorized", "Unauthorized"))
        if path == "/api/v1/namespaces/payments/pods":
            return json_response(403, FORBIDDEN)
        if path == f"/api/v1/namespaces/{NAMESPACE}/pods":
            return self._pods(request)
        if path == f"/api/v1/namespaces/{NAMESPACE}/events":
            events = copy.deepcopy(EVENTS)
            selector = request.query.get("fieldSelector", "")
            events["items"] = [e for e in events["items"] if _fields_match(e, selector)]
            return json_response(200, events)
        if path == f"/api/v1/namespaces/{NAMESPACE}/pods/checkout-api-7f9c6d8b5-tr6zn/log":
            lines = POD_LOG.splitlines(keepends=True)
            tail = int(request.query.get("tailLines", len(lines)))
            return text_response(200, "".join(lines[-tail:]))
        if path.startswith(f"/api/v1/namespaces/{NAMESPACE}/pods/") and path.endswith("/log"):
            name = path.split("/")[-2]
            return json_response(404, status(404, "NotFound", f'pods "{name}" not found', details={"name": name}))
        if path == f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/checkout-api":
            return json_response(200, DEPLOYMENT)
        if path == f"/apis/apps/v1/namespaces/{NAMESPACE}/replicasets":
            assert request.query.get("labelSelector") == "app=checkout-api"
            return json_response(200, REPLICASETS)
        return json_response(404, status(404, "NotFound", "the server could not find the requested resource"))

    def _pods(self, request: Request) -> Response:
        selector = request.query.get("labelSelector", "")
        if not self.huge_pods:
            items = [pod("checkout-api-7f9c6d8b5-tr6zn", restarts=6, oom=True), pod("checkout-api-7f9c6d8b5-x2k9p")]
            if selector and selector != "app=checkout-api":
                items = []
            return json_response(200, pod_list(items))
        limit = int(request.query.get("limit", self.huge_pods))
        start = int(request.query.get("continue", "0") or 0)
        if start and self.expire_once and not self.expired:
            self.expired = True
            return json_response(410, EXPIRED)
        end = min(start + limit, self.huge_pods)
        items = [pod(f"checkout-api-7f9c6d8b5-{i:05d}") for i in range(start, end)]
        cont = str(end) if end < self.huge_pods else ""
        return json_response(200, pod_list(items, cont=cont, remaining=self.huge_pods - end if cont else None))


def _fields_match(obj: dict[str, Any], selector: str) -> bool:
    """An event field selector as the API server applies it: ``a.b=v``, ``a.b==v`` and ``a.b!=v`` terms, all of them."""
    for term in filter(None, (t.strip() for t in selector.split(","))):
        negated = "!=" in term
        key, value = term.replace("==", "=").replace("!=", "=").split("=", 1)
        found: Any = obj
        for part in key.strip().split("."):
            found = found.get(part) if isinstance(found, dict) else None
        if (str(found if found is not None else "") == value.strip()) == negated:
            return False
    return True
