"""Kubernetes ``kubernetes.list`` and ``kubernetes.get``: any kind a diagnosis reads, through the client's typed APIs.

Each kind's typed API and method come from ``k8s_kinds`` (``CoreV1Api.list_namespaced_service``,
``StorageV1Api.read_storage_class``); requests, pages, retries and errors are ``KubernetesApi``'s, the raw body
as the API returned it. A Secret's values are dropped as each page is parsed (``k8s_kinds.secret_keys_only``);
then the structural redactions and every string's (``Redactor.kubernetes``), as for the other Kubernetes tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.sources import k8s_kinds as kinds
from diagnosis_server.sources.declared import Declaration, DeclaredTool
from diagnosis_server.sources.kubernetes import KubernetesApi, _json
from diagnosis_server.tools.base import Tool


def _page_filter(kind: kinds.Kind) -> Callable[[JsonObject], JsonObject] | None:
    if kind.plural != "secrets":
        return None

    def keys_only(page: JsonObject) -> JsonObject:
        kept = kinds.secret_keys_only(page)
        assert isinstance(kept, dict)
        return kept

    return keys_only


class _ObjectTool(DeclaredTool):
    def __init__(self, api: KubernetesApi, declaration: Declaration) -> None:
        self._api = api
        self.declaration = declaration
        self._apis: dict[str, Any] = {}

    def _method(self, kind: kinds.Kind, name: str) -> Callable[..., Any]:
        from kubernetes import client

        api = self._apis.get(kind.api)
        if api is None:
            api = self._apis[kind.api] = getattr(client, kind.api)(self._api.access.api_client)
        method: Callable[..., Any] = getattr(api, name)
        return method

    def _target(self, args: dict[str, Any]) -> tuple[kinds.Kind, str]:
        kind = kinds.kind_of(self.name, str(args["kind"]).lower())
        namespace = str(args.get("namespace", self._api.access.default_namespace))
        return kind, kinds.checked_namespace(self.name, kind, namespace, self._api.access.namespaces)


class ObjectList(_ObjectTool):
    async def call(self, arguments: JsonObject) -> JsonValue:
        args = self._args(arguments)
        kind, namespace = self._target(args)
        selectors: dict[str, str] = {k: str(args[k]) for k in ("label_selector", "field_selector") if k in args}
        method = self._method(kind, kind.list_method)
        listing = await self._api.list(self.name, method, namespace or None, selectors, _page_filter(kind))
        listing.setdefault("kind", kind.list_kind)
        listing.setdefault("apiVersion", kind.group_version)
        return self._api.redactor.kubernetes(listing)


class ObjectGet(_ObjectTool):
    async def call(self, arguments: JsonObject) -> JsonValue:
        args = self._args(arguments)
        kind, namespace = self._target(args)
        name = str(args["name"])
        method = self._method(kind, kind.read_method)
        positional = (name, namespace) if kind.namespaced else (name,)
        body = _json(self.name, await self._api.request(self.name, method, *positional))
        keep = _page_filter(kind)
        return self._api.redactor.kubernetes(keep(body) if keep else body)


def object_tools(api: KubernetesApi) -> list[Tool]:
    declared = kinds.object_declarations(api.access.namespaces, api.access.default_namespace)
    return [ObjectList(api, declared[kinds.LIST]), ObjectGet(api, declared[kinds.GET])]
