"""A recorded pack's ``kubernetes.list`` and ``kubernetes.get``: its objects of any kind, as an API server answers.

A pack's ``kubernetes`` object holds each kind under its API plural name (``services``, ``nodes``,
``persistentvolumeclaims``, ...; ``events`` with its ``k8s_events`` as core/v1 Events). A List holds the
objects of the namespace asked (every object of a cluster-scoped kind), narrowed by label selector and by the
field selectors the API server supports for every kind (``metadata.name``, ``metadata.namespace``) and for pods
and events; a get of a name the pack lacks is the API server's 404. A Secret's values are dropped before the
object is redacted (``k8s_kinds.secret_keys_only``), as the live tool does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.sources import k8s_kinds as kinds
from diagnosis_server.sources.arguments import Args
from diagnosis_server.sources.declared import Declaration, DeclaredTool
from diagnosis_server.sources.selectors import field_terms, field_test, label_selector
from diagnosis_server.tools.base import Tool, ToolError

Pair = tuple[JsonObject, JsonValue]


def _path(*keys: str) -> Callable[[Mapping[str, object]], str]:
    def get(obj: Mapping[str, object]) -> str:
        value: object = obj
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        return "" if value is None else str(value)

    return get


_COMMON = {"metadata.name": _path("metadata", "name"), "metadata.namespace": _path("metadata", "namespace")}
FIELDS: dict[str, dict[str, Callable[[Mapping[str, object]], str]]] = {
    "pods": {**_COMMON, "status.phase": _path("status", "phase"), "spec.nodeName": _path("spec", "nodeName")},
    "events": {
        **_COMMON,
        "involvedObject.kind": _path("involvedObject", "kind"),
        "involvedObject.name": _path("involvedObject", "name"),
        "involvedObject.namespace": _path("involvedObject", "namespace"),
        "reason": _path("reason"),
        "type": _path("type"),
    },
    "nodes": {**_COMMON, "spec.unschedulable": _path("spec", "unschedulable")},
    "secrets": {**_COMMON, "type": _path("type")},
}


class PackObjects:
    """The pack's objects of each kind with their redacted forms, made once per kind when first read."""

    def __init__(self, raw: Callable[[str], list[JsonObject]], redact: Callable[[JsonValue], JsonValue]) -> None:
        self._raw = raw
        self._redact = redact
        self._made: dict[str, list[Pair]] = {}

    def of(self, plural: str) -> list[Pair]:
        made = self._made.get(plural)
        if made is None:
            objects = self._raw(plural)
            if plural == "secrets":
                objects = [kinds.without_managed_fields(o) for o in objects]
                made = [(o, self._redact(kinds.secret_keys_only(o))) for o in objects]
            else:
                made = [(o, self._redact(o)) for o in objects]
            self._made[plural] = made
        return made

    @cached_property
    def present(self) -> bool:
        return any(self._raw(plural) for plural in kinds.PLURALS)


class _PackObjectTool(DeclaredTool):
    def __init__(self, objects: PackObjects, namespaces: tuple[str, ...], declaration: Declaration) -> None:
        self._objects = objects
        self._namespaces = namespaces
        self.declaration = declaration

    async def call(self, arguments: JsonObject) -> JsonValue:
        return self.answer(self._args(arguments))

    def answer(self, args: Args) -> JsonValue:
        raise NotImplementedError

    def _target(self, args: Args) -> tuple[kinds.Kind, str]:
        kind = kinds.kind_of(self.name, str(args["kind"]).lower())
        namespace = str(args.get("namespace", self._namespaces[0]))
        if (
            kind.namespaced
            and namespace not in self._namespaces
            and not (namespace == kinds.CONTROL_PLANE_NAMESPACE and kind.plural in kinds.CONTROL_PLANE_KINDS)
        ):
            raise ToolError(
                f"{self.name}: namespace {namespace!r} is not in this incident ({', '.join(self._namespaces)})"
            )
        return kind, namespace if kind.namespaced else ""


def _in(obj: JsonObject, namespace: str) -> bool:
    metadata = obj.get("metadata")
    return not namespace or (isinstance(metadata, dict) and metadata.get("namespace") == namespace)


def _labels(obj: JsonObject) -> dict[str, str]:
    metadata = obj.get("metadata")
    own = metadata.get("labels") if isinstance(metadata, dict) else None
    return {str(k): str(v) for k, v in own.items()} if isinstance(own, dict) else {}


class PackObjectList(_PackObjectTool):
    def answer(self, args: Args) -> JsonValue:
        kind, namespace = self._target(args)
        labels = label_selector(self.name, str(args["label_selector"])) if "label_selector" in args else None
        fields = FIELDS.get(kind.plural, _COMMON)
        by_field = None
        if "field_selector" in args:
            by_field = field_test(field_terms(self.name, str(args["field_selector"]), fields), fields)
        items: list[JsonValue] = [
            redacted
            for obj, redacted in self._objects.of(kind.plural)
            if _in(obj, namespace) and (labels is None or labels(_labels(obj))) and (by_field is None or by_field(obj))
        ]
        return {
            "apiVersion": kind.group_version,
            "kind": kind.list_kind,
            "metadata": {"resourceVersion": ""},
            "items": items,
        }


class PackObjectGet(_PackObjectTool):
    def answer(self, args: Args) -> JsonValue:
        kind, namespace = self._target(args)
        name = str(args["name"])
        for obj, redacted in self._objects.of(kind.plural):
            metadata = obj.get("metadata")
            if _in(obj, namespace) and isinstance(metadata, dict) and metadata.get("name") == name:
                return redacted
        group = kind.group_version.split("/")[0] if "/" in kind.group_version else ""
        resource = f"{kind.plural}.{group}" if group else kind.plural
        raise ToolError(f'{self.name}: 404 NotFound: {resource} "{name}" not found')


def pack_object_tools(objects: PackObjects, namespaces: tuple[str, ...]) -> list[Tool]:
    """``kubernetes.list`` and ``kubernetes.get`` over the pack's objects (none when it has no object)."""
    if not objects.present or not namespaces:
        return []
    declared = kinds.object_declarations(namespaces, namespaces[0])
    return [
        PackObjectList(objects, namespaces, declared[kinds.LIST]),
        PackObjectGet(objects, namespaces, declared[kinds.GET]),
    ]
