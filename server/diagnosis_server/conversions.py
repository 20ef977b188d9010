"""All conversion between wire types (proto messages, enums) and plain values, in one place.

Agents write enum values in the spec's words (``"confirmed"``, ``"direct_observation"``, ``"PASS"``);
protos carry prefixed enum names (``CLAIM_STATUS_CONFIRMED``). These helpers map between the two,
and give the canonical JSON and bytes of a message (same message -> same bytes, R-VI-4).
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Protocol, TypeAlias, cast

from google.protobuf import json_format, struct_pb2
from google.protobuf.descriptor import EnumDescriptor
from google.protobuf.message import Message

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
JsonObject: TypeAlias = dict[str, JsonValue]


class EnumType(Protocol):
    """A generated enum wrapper (e.g. ``contracts_pb2.Verdict``)."""

    DESCRIPTOR: EnumDescriptor

    def Value(self, name: str) -> Any: ...

    def Name(self, number: Any) -> str: ...


def _prefix(enum_type: EnumType) -> str:
    name = enum_type.DESCRIPTOR.name
    out = [name[0]]
    for prev, ch in itertools.pairwise(name):
        if ch.isupper() and not prev.isupper():
            out.append("_")
        out.append(ch)
    return "".join(out).upper() + "_"


def enum_short_name(enum_type: EnumType, value: int, *, lower: bool = False) -> str:
    """``(Verdict, VERDICT_LOW_CONFID)`` -> ``"LOW_CONFID"`` (``"low_confid"`` with ``lower``)."""
    full = enum_type.Name(value)
    prefix = _prefix(enum_type)
    short = full[len(prefix) :] if full.startswith(prefix) else full
    return short.lower() if lower else short


def enum_from_name(enum_type: EnumType, text: object) -> int | None:
    """Accepts the short name in any case (``"pass"``, ``"LOW_CONFID"``) or the full proto name.

    Returns None for anything else, and for the ``*_UNSPECIFIED`` zero value: callers fail closed on None.
    """
    if not isinstance(text, str) or not text:
        return None
    prefix = _prefix(enum_type)
    candidate = text.strip().upper()
    if not candidate.startswith(prefix):
        candidate = prefix + candidate
    if candidate == prefix + "UNSPECIFIED":
        return None
    values = enum_type.DESCRIPTOR.values_by_name
    if candidate not in values:
        return None
    return int(values[candidate].number)


def message_to_dict(message: Message) -> JsonObject:
    """Proto JSON with the spec's snake_case field names (unset fields omitted)."""
    result: JsonObject = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return result


def message_to_json(message: Message, *, indent: int | None = None) -> str:
    """Proto JSON text with snake_case names and sorted keys (stable across runs)."""
    return json.dumps(message_to_dict(message), indent=indent, sort_keys=True, ensure_ascii=False)


def canonical_bytes(message: Message) -> bytes:
    """The canonical serialization: sorted keys, no whitespace, UTF-8. Same message -> same bytes."""
    return json.dumps(message_to_dict(message), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def canonical_json_bytes(value: JsonValue) -> bytes:
    """The canonical serialization of a plain JSON value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def to_value(value: JsonValue) -> struct_pb2.Value:
    """A plain JSON value as a ``google.protobuf.Value``."""
    out = struct_pb2.Value()
    json_format.ParseDict(cast(Any, value), out)
    return out


def from_value(value: struct_pb2.Value) -> JsonValue:
    """A ``google.protobuf.Value`` as a plain JSON value (integral numbers come back as int).

    A direct walk of the message: tool outputs are converted on every Gatekeeper check, so this is a
    hot path (json_format's generic walk is several times slower).
    """
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "number_value":
        number = value.number_value
        # Value stores every number as a double; give integral ones back as int so that a tool
        # output's 503 compares as "503", never "503.0".
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return {key: from_value(item) for key, item in value.struct_value.fields.items()}
    if kind == "list_value":
        return [from_value(item) for item in value.list_value.values]
    return None


def to_struct(value: JsonObject) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    json_format.ParseDict(value, out)
    return out


def from_struct(value: struct_pb2.Struct) -> JsonObject:
    return {key: from_value(item) for key, item in value.fields.items()}
