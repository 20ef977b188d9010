"""A loopback Kubernetes API server over a store of objects: list and get of any kind by its REST path.

It answers ``/api/v1/namespaces/{ns}/{plural}``, ``/api/v1/{plural}`` (cluster-scoped kinds), their
``/apis/{group}/{version}/...`` forms and ``.../{plural}/{name}``, as the API server does: a List object
(``{kind}List``, items without kind) or the object, ``labelSelector`` equality terms and ``fieldSelector``
``metadata.name``; anything else is the API server's 404 Status. Requests need the test kubeconfig's bearer token.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from diagnosis_server.sources.k8s_kinds import KINDS

from .fake_http import Request, Response, json_response, text_response
from .k8s_recorded import SA_TOKEN, status


def _labels_match(obj: dict[str, Any], selector: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, (t.strip() for t in selector.split(","))):
        key, _, value = term.partition("=")
        if labels.get(key.strip()) != value.strip():
            return False
    return True


def _fields_match(obj: dict[str, Any], selector: str) -> bool:
    for term in filter(None, (t.strip() for t in selector.split(","))):
        key, _, value = term.partition("=")
        if key.strip() == "metadata.name" and obj["metadata"]["name"] != value.strip():
            return False
    return True


_PATH = re.compile(
    r"^(?:/api/(?P<core>v1)|/apis/(?P<group>[^/]+/[^/]+))(?:/namespaces/(?P<namespace>[^/]+))?"
    r"/(?P<plural>[^/]+)(?:/(?P<name>[^/]+))?$"
)


_LOG_PATH = re.compile(r"^/api/v1/namespaces/(?P<namespace>[^/]+)/pods/(?P<pod>[^/]+)/log$")


class Store:
    """The API server's objects, by plural name; every request is answered from them. ``logs``: pods' container
    logs (a pack's ``pod_logs`` entries: namespace, pod, container, previous, lines), answered at
    ``.../pods/{name}/log`` as text."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]], logs: list[dict[str, Any]] | None = None) -> None:
        self.objects = objects
        self.logs = logs or []

    def _log(self, request: Request, namespace: str, pod: str) -> Response:
        container = request.query.get("container")
        previous = request.query.get("previous", "false").lower() == "true"
        for entry in self.logs:
            if entry["namespace"] != namespace or entry["pod"] != pod or bool(entry.get("previous")) != previous:
                continue
            if container and entry.get("container") not in (None, container):
                continue
            lines = list(entry["lines"])
            tail = request.query.get("tailLines")
            if tail and tail.isdigit():
                lines = lines[-int(tail) :]
            return text_response(200, "".join(line + "\n" for line in lines))
        if not previous and any(
            p.get("metadata", {}).get("name") == pod and p.get("metadata", {}).get("namespace") == namespace
            for p in self.objects.get("pods", [])
        ):
            # A running container that wrote nothing: the kubelet answers with an empty log.
            return text_response(200, "")
        message = f'previous terminated container "{container}" in pod "{pod}" not found'
        return json_response(400, status(400, "BadRequest", message))

    def __call__(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {SA_TOKEN}":
            return json_response(401, status(401, "Unauthorized", "Unauthorized"))
        logged = _LOG_PATH.match(request.path)
        if logged is not None:
            return self._log(request, logged.group("namespace"), logged.group("pod"))
        match = _PATH.match(request.path)
        kind = KINDS.get(match.group("plural")) if match else None
        if (
            match is None
            or kind is None
            or (match.group("core") or match.group("group")) != kind.group_version
            or kind.namespaced != (match.group("namespace") is not None)
        ):
            return json_response(404, status(404, "NotFound", "the server could not find the requested resource"))
        namespace, name = match.group("namespace"), match.group("name")
        if name is None:
            return self._list(request, kind.plural, namespace)
        for obj in self._of(kind.plural, namespace):
            if obj["metadata"]["name"] == name:
                return json_response(200, copy.deepcopy(obj))
        message = f'{kind.plural} "{name}" not found'
        return json_response(404, status(404, "NotFound", message, details={"name": name}))

    def _of(self, plural: str, namespace: str | None) -> list[dict[str, Any]]:
        objects = self.objects.get(plural, [])
        return [o for o in objects if namespace is None or o["metadata"].get("namespace") == namespace]

    def _list(self, request: Request, plural: str, namespace: str | None) -> Response:
        kind = KINDS[plural]
        items = []
        for obj in self._of(plural, namespace):
            if _labels_match(obj, request.query.get("labelSelector", "")) and _fields_match(
                obj, request.query.get("fieldSelector", "")
            ):
                item = copy.deepcopy(obj)
                item.pop("kind", None)
                item.pop("apiVersion", None)
                items.append(item)
        body = {
            "kind": kind.list_kind,
            "apiVersion": kind.group_version,
            "metadata": {"resourceVersion": "918400"},
            "items": items,
        }
        return json_response(200, body)
