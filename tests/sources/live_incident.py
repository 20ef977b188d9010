"""A live incident written from Kubernetes' documented object shapes and the kubelet's event texts, as a pack, and
a loopback Kubernetes API server and Loki that serve the same objects (the real clients read them over HTTP).

cart-api (Deployment -> ReplicaSet cart-api-5d8f9c7b6 -> Pod cart-api-5d8f9c7b6-hx2kq) in namespace shop: its
container was OOMKilled (exit code 137) and is in CrashLoopBackOff; the kubelet reports ``BackOff`` "Back-off
restarting failed container cart-api in pod ..."; its log says ``java.lang.OutOfMemoryError: Java heap space``
without a level. Times are minutes before ``now``, so the live window (the last hour) covers them.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from diagnosis_server.sources import k8s_kinds as kinds
from diagnosis_server.sources.packs import pack_tools
from diagnosis_server.tools.scenario import Scenario

from .fake_http import Request, Response, json_response, text_response

NAMESPACE = "shop"
POD = "cart-api-5d8f9c7b6-hx2kq"
REPLICASET = "cart-api-5d8f9c7b6"
QUESTION = "Why is cart-api failing?"
POD_UID = "3f1c9a52-8d4e-4b7a-9c21-6e0f5d2a7b13"
BACKOFF_MESSAGE = f"back-off 5m0s restarting failed container=cart-api pod={POD}_shop({POD_UID})"
OOM_LINE = 'Exception in thread "http-nio-8080-exec-4" java.lang.OutOfMemoryError: Java heap space'
STARTED_LINE = "Started CartApplication in 7.9 seconds (process running for 8.6)"


def _at(now: datetime, minutes_ago: float) -> str:
    return (now - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def incident(now: datetime, name: str = "cart-api-oom") -> dict[str, Any]:
    labels = {"app": "cart-api", "pod-template-hash": "5d8f9c7b6"}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": POD,
            "generateName": f"{REPLICASET}-",
            "namespace": NAMESPACE,
            "uid": "3f1c9a52-8d4e-4b7a-9c21-6e0f5d2a7b13",
            "labels": labels,
            "creationTimestamp": _at(now, 50),
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": REPLICASET, "uid": "rs-5d8f9c7b6",
                 "controller": True, "blockOwnerDeletion": True}
            ],
        },
        "spec": {
            "nodeName": "pool-a-node-2",
            "containers": [
                {"name": "cart-api", "image": "registry.example.com/shop/cart-api:3.2.0",
                 "resources": {"limits": {"memory": "256Mi"}, "requests": {"memory": "256Mi"}}}
            ],
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                 "message": "containers with unready status: [cart-api]", "lastTransitionTime": _at(now, 9)},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": _at(now, 50)},
            ],
            "containerStatuses": [
                {
                    "name": "cart-api",
                    "image": "registry.example.com/shop/cart-api:3.2.0",
                    "ready": False,
                    "started": False,
                    "restartCount": 6,
                    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": BACKOFF_MESSAGE}},
                    "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                                 "startedAt": _at(now, 10), "finishedAt": _at(now, 9)}},
                }
            ],
        },
    }  # fmt: skip
    backoff = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{POD}.17c2b9d0a1e5f3c4", "namespace": NAMESPACE},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": POD, "namespace": NAMESPACE,
                           "uid": "3f1c9a52-8d4e-4b7a-9c21-6e0f5d2a7b13", "fieldPath": "spec.containers{cart-api}"},
        "reason": "BackOff",
        "message": "Back-off restarting failed container cart-api in pod "
        f"{POD}_shop(3f1c9a52-8d4e-4b7a-9c21-6e0f5d2a7b13)",
        "source": {"component": "kubelet", "host": "pool-a-node-2"},
        "firstTimestamp": _at(now, 30),
        "lastTimestamp": _at(now, 2),
        "count": 24,
        "type": "Warning",
        "reportingComponent": "kubelet",
        "reportingInstance": "pool-a-node-2",
    }  # fmt: skip
    stamp = int((now - timedelta(minutes=9)).timestamp() * 1e9)
    return {
        "name": name,
        "title": "cart-api out of memory",
        "description": "cart-api's container is OOMKilled and crash-looping.",
        "question": QUESTION,
        "time_window": {"start": _at(now, 60), "end": now.strftime("%Y-%m-%dT%H:%M:%SZ")},
        "topology": {"services": [{"name": "cart-api", "kind": "http", "depends_on": []}]},
        "kubernetes": {"pods": [pod], "events": [backoff]},
        "loki": {
            "streams": [
                {
                    "stream": {"app": "cart-api", "namespace": NAMESPACE, "pod": POD, "container": "cart-api"},
                    "values": [
                        [str(stamp), OOM_LINE],
                        [str(stamp - 1_000_000_000), STARTED_LINE],
                    ],
                }
            ]
        },
    }  # fmt: skip


class LiveUpstreams:
    """The Kubernetes API server and Loki answering from the incident's objects: the requests of the real clients
    (paths, selectors, times) mapped to what the objects hold."""

    def __init__(self, scenario: Scenario) -> None:
        self._tools = {tool.name: tool for tool in pack_tools(scenario)}

    def _answer(self, tool: str, arguments: dict[str, Any]) -> Any:
        return asyncio.run(self._tools[tool].call(arguments))

    def kubernetes(self, request: Request) -> Response:
        parts = request.path.strip("/").split("/")
        query = request.query
        selectors = {"label_selector": query.get("labelSelector"), "field_selector": query.get("fieldSelector")}
        selectors = {k: v for k, v in selectors.items() if v}
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 7 and parts[6] == "log":
            return text_response(404, f'pods "{parts[5]}" not found')
        listed = _listed(parts)
        if listed is not None:
            # Any list the real client asks for (a namespace's kind, a cluster-scoped kind, kube-system's pods), as
            # the pack's objects hold it: an API server answers an empty List for a kind it has none of.
            kind, namespace = listed
            where = {"namespace": namespace} if namespace else {}
            return json_response(200, self._answer("kubernetes.list", {"kind": kind, **where, **selectors}))
        return json_response(
            404,
            {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "NotFound",
             "message": f"the server could not find the requested resource ({request.path})", "code": 404},
        )  # fmt: skip

    def loki(self, request: Request) -> Response:
        if request.path != "/loki/api/v1/query_range":
            return text_response(404, "404 page not found")
        arguments: dict[str, Any] = {"query": request.query["query"]}
        for key in ("start", "end"):
            if key in request.query:
                arguments[key] = str(int(request.query[key]) / 1e9)
        if "limit" in request.query:
            arguments["limit"] = int(request.query["limit"])
        if "direction" in request.query:
            arguments["direction"] = request.query["direction"]
        return json_response(200, self._answer("loki.query_range", arguments))


def _listed(parts: list[str]) -> tuple[str, str] | None:
    """(kind, namespace) of a list path of a kind the tools know (``/api/v1/namespaces/NS/pods``,
    ``/apis/apps/v1/namespaces/NS/deployments``, ``/api/v1/nodes``, ...); the namespace is "" for a cluster-wide one."""
    core = parts[:2] == ["api", "v1"]
    group = parts[:1] == ["apis"] and len(parts) >= 4
    rest = parts[2:] if core else parts[3:] if group else []
    group_version = "v1" if core else "/".join(parts[1:3])
    if len(rest) == 3 and rest[0] == "namespaces":
        namespace, plural = rest[1], rest[2]
    elif len(rest) == 1:
        namespace, plural = "", rest[0]
    else:
        return None
    kind = kinds.KINDS.get(plural)
    if kind is None or kind.group_version != group_version:
        return None
    return plural, namespace


def now_utc() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)
