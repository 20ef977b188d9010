"""All conversion between wire types (proto messages, enums) and plain values, in one place.

Agents write enum values in the spec's words (``"confirmed"``, ``"direct_observation"``, ``"PASS"``);
protos carry prefixed enum names (``CLAIM_STATUS_CONFIRMED``). These helpers map between the two,
and give the canonical JSON and bytes of a message (same message -> same bytes, R-VI-4).
"""

from __future__ import annotations

import base64
import itertools
import json
import math
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeAlias

from google.protobuf import json_format, struct_pb2
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.internal import type_checkers
from google.protobuf.message import Message

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
JsonObject: TypeAlias = dict[str, JsonValue]


class EnumType(Protocol):
    """A generated enum wrapper (e.g. ``contracts_pb2.Verdict``)."""

    DESCRIPTOR: EnumDescriptor

    def Value(self, name: str) -> Any: ...

    def Name(self, number: Any) -> str: ...


_PREFIXES: dict[str, str] = {}


def _prefix(enum_type: EnumType) -> str:
    """``Verdict`` -> ``VERDICT_`` (computed once an enum: the engine names a node and an outcome per attempt)."""
    full_name = enum_type.DESCRIPTOR.full_name
    prefix = _PREFIXES.get(full_name)
    if prefix is None:
        prefix = _PREFIXES[full_name] = _prefix_of(enum_type)
    return prefix


def _prefix_of(enum_type: EnumType) -> str:
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


def value_text(value: JsonValue) -> str:
    """A value as text: a string as is, any other value as compact JSON (the text matched text is looked for in)."""
    if isinstance(value, str):
        return value
    # (a scalar as json.dumps writes it, without its cost: most values asked for are numbers)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float) and math.isfinite(value):
        return float.__repr__(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def enum_short_names(enum_type: EnumType, *, lower: bool = False) -> tuple[str, ...]:
    """Every value's short name but the ``*_UNSPECIFIED`` zero, in number order: ``("PASS", "LOW_CONFID", ...)``."""
    return tuple(
        enum_short_name(enum_type, value.number, lower=lower)
        for value in enum_type.DESCRIPTOR.values
        if value.number != 0
    )


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
    """The canonical serialization: sorted keys, no whitespace, UTF-8. Same message -> same bytes.

    The JSON is ``message_to_dict``'s, built by a direct walk of the set fields (``_plain_message``):
    the same dict as json_format's, without its generic per-field dispatch.
    """
    return json.dumps(_plain_message(message), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


_FD = FieldDescriptor
_INT64 = frozenset({_FD.CPPTYPE_INT64, _FD.CPPTYPE_UINT64})
_FLOATS = frozenset({_FD.CPPTYPE_FLOAT, _FD.CPPTYPE_DOUBLE})
_STRUCTS = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"})


def _plain_message(message: Message) -> Any:
    """``json_format.MessageToDict(message, preserving_proto_field_name=True)``, walked directly."""
    descriptor = message.DESCRIPTOR
    special = _SPECIAL.get(descriptor)
    if special is None:
        special = _SPECIAL[descriptor] = _special_of(descriptor.full_name)
    if special is not _REGULAR:
        return special(message)
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        convert = _CONVERTERS.get(field)
        if convert is None:
            convert = _CONVERTERS[field] = _converter(field)
        out[field.name] = convert(value)
    return out


def _regular(message: Any) -> Any:
    raise AssertionError("not called")


_REGULAR = _regular
_SPECIAL: dict[Any, Callable[[Any], Any]] = {}
_CONVERTERS: dict[FieldDescriptor, Callable[[Any], Any]] = {}


def _special_of(full_name: str) -> Callable[[Any], Any]:
    if full_name == "google.protobuf.Value":
        return from_value_exact
    if full_name == "google.protobuf.Struct":
        return lambda message: {key: from_value_exact(item) for key, item in message.fields.items()}
    if full_name == "google.protobuf.ListValue":
        return lambda message: [from_value_exact(item) for item in message.values]
    if full_name.startswith("google.protobuf."):
        return lambda message: json_format.MessageToDict(message, preserving_proto_field_name=True)
    return _REGULAR


def _converter(field: FieldDescriptor) -> Callable[[Any], Any]:
    """How one field's value becomes JSON: a map, a repeated field or a single value."""
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        one = _single(value_field)
        return lambda value: {_map_key(key): one(item) for key, item in value.items()}
    single = _single(field)
    if field.is_repeated:
        return lambda value: [single(item) for item in value]
    return single


def _map_key(key: object) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _same(value: Any) -> Any:
    return value


def _single(field: FieldDescriptor) -> Callable[[Any], Any]:
    cpp = field.cpp_type
    if cpp == _FD.CPPTYPE_MESSAGE:
        return _plain_message
    if cpp == _FD.CPPTYPE_STRING:
        if field.type == _FD.TYPE_BYTES:
            return lambda value: base64.b64encode(value).decode("utf-8")
        return _same
    if cpp == _FD.CPPTYPE_ENUM:
        assert field.enum_type is not None
        if field.enum_type.full_name == "google.protobuf.NullValue":
            return lambda value: None
        names = {number: item.name for number, item in field.enum_type.values_by_number.items()}
        return lambda value: names.get(value, value)
    if cpp == _FD.CPPTYPE_BOOL:
        return bool
    if cpp in _INT64:
        return str
    if cpp in _FLOATS:
        shortest = cpp == _FD.CPPTYPE_FLOAT
        return lambda value: _float(value, shortest=shortest)
    return _same


def _float(value: float, *, shortest: bool) -> Any:
    if value - value != 0.0:  # NaN or an infinity: proto JSON's strings
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    return type_checkers.ToShortestFloat(value) if shortest else value


def _value_reader(number: Callable[[float], JsonValue]) -> Callable[[struct_pb2.Value], JsonValue]:
    """A direct walk of a Value into plain JSON, with ``number`` for each of its numbers."""

    def read(value: struct_pb2.Value) -> JsonValue:
        kind = value.WhichOneof("kind")
        if kind == "string_value":
            return value.string_value
        if kind == "number_value":
            return number(value.number_value)
        if kind == "bool_value":
            return value.bool_value
        if kind == "struct_value":
            return {key: read(item) for key, item in value.struct_value.fields.items()}
        if kind == "list_value":
            return [read(item) for item in value.list_value.values]
        return None

    return read


def _finite_number(number: float) -> float:
    if number - number != 0.0:
        raise json_format.SerializeToJsonError(f"cannot serialize the non-finite number {number!r} of a Value")
    return number


def _json_number(number: float) -> int | float:
    # Value stores every number as a double; give integral ones back as int so that a tool
    # output's 503 compares as "503", never "503.0".
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


_read_exact = _value_reader(_finite_number)
_read_json = _value_reader(_json_number)


def from_value_exact(value: struct_pb2.Value) -> Any:
    """A Value as json_format gives it (numbers stay floats; a non-finite number is an error)."""
    return _read_exact(value)


def canonical_json_bytes(value: JsonValue) -> bytes:
    """The canonical serialization of a plain JSON value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class JsonValueError(json_format.ParseError, ValueError):
    """A value a ``google.protobuf.Value``/``Struct`` cannot hold: not JSON (a set, bytes, a non-str key, a
    non-finite or out-of-range number), or nested deeper than protobuf's JSON parser allows.

    A ``json_format.ParseError`` (what ``ParseDict`` raised here before) and a ``ValueError``.
    """


# The one nesting bound of every JSON that enters the service (tool outputs and arguments, agent outputs,
# CheckEvidence requests), in containers: a scalar is 0 deep, ``{}`` and ``[]`` are 1. It is checked first,
# before any conversion, and keeps every message that holds such a value within protobuf's decode depth
# (100 message levels; a JSON object costs three of them: Value, Struct and its map entry).
MAX_JSON_DEPTH = 32
# to_value's own bound, in its recursion levels (a Value and its Struct/ListValue are one level each).
MAX_VALUE_DEPTH = 2 * MAX_JSON_DEPTH + 1


class JsonTooDeep(JsonValueError):
    """A JSON value nested deeper than MAX_JSON_DEPTH; the message says "nested deeper than N"."""


def too_deep_message(what: str) -> str:
    return f"{what} is nested deeper than {MAX_JSON_DEPTH}"


def _too_deep() -> JsonValueError:
    return JsonTooDeep(f"value is nested deeper than {MAX_JSON_DEPTH}")


def json_copy(value: JsonValue) -> JsonValue:
    """A copy of a plain JSON value: every dict and list new, the scalars (immutable) shared; about three times
    cheaper than ``copy.deepcopy``, which keeps a memo for shared and cyclic objects a JSON value cannot have."""
    if isinstance(value, dict):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_copy(item) for item in value]
    return value


def json_depth(value: object, *, limit: int = MAX_JSON_DEPTH) -> int:
    """Containers nested in a plain JSON value (a scalar 0, ``{}`` 1), walked without recursion; a walk
    stops as soon as it passes ``limit`` (a cycle is "deeper than any limit" this way, never a hang)."""
    return _depth(value, _json_children, limit)


def value_depth(value: struct_pb2.Value | struct_pb2.Struct, *, limit: int = MAX_JSON_DEPTH) -> int:
    """Containers nested in a protobuf Value or Struct (a Struct is 1), walked without recursion."""
    return _depth(value, _value_children, limit)


def holds_json(message: struct_pb2.Value | struct_pb2.Struct) -> bool:
    """Whether ``message`` is what ``to_value`` (``to_struct``) builds of some JSON value: every Value has a
    kind, every number is finite, and containers nest at most MAX_JSON_DEPTH deep.

    The message is walked level by level and nothing is converted: a recorded Value that holds JSON can be
    copied as it is instead of read out and built again.
    """
    level: list[struct_pb2.Value]
    if isinstance(message, struct_pb2.Struct):
        level, depth = list(message.fields.values()), 1
    else:
        level, depth = [message], 0
    isfinite = math.isfinite
    while level:
        below: list[struct_pb2.Value] = []
        nested = False
        for value in level:
            kind = value.WhichOneof("kind")
            if kind == "struct_value":
                fields = value.struct_value.fields
                below.extend(map(fields.__getitem__, fields))  # (the map's values() iterates in Python)
                nested = True
            elif kind == "list_value":
                below.extend(value.list_value.values)
                nested = True
            elif kind is None or (kind == "number_value" and not isfinite(value.number_value)):
                return False
        if nested:
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return False
        level = below
    return True


# What a depth walk sees in an item: None for a leaf, else its children and whether the item is a container
# (a level of its own) or only holds one (a Value holding a Struct or a ListValue: the same level).
_Children: TypeAlias = tuple[Iterable[Any], bool] | None


def _json_children(item: Any) -> _Children:
    if isinstance(item, dict):
        return item.values(), True
    if isinstance(item, list | tuple):
        return item, True
    return None


def _value_children(item: Any) -> _Children:
    if isinstance(item, struct_pb2.Struct):
        return item.fields.values(), True
    if isinstance(item, struct_pb2.ListValue):
        return item.values, True
    kind = item.WhichOneof("kind")
    if kind == "struct_value":
        return (item.struct_value,), False
    if kind == "list_value":
        return (item.list_value,), False
    return None


def _depth(value: object, children_of: Callable[[Any], _Children], limit: int) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        found = children_of(item)
        if found is None:
            continue
        children, container = found
        if container:
            level += 1
            if level > deepest:
                deepest = level
                if deepest > limit:
                    return deepest
        stack.extend((child, level) for child in children)
    return deepest


def to_value(value: JsonValue) -> struct_pb2.Value:
    """A plain JSON value as a ``google.protobuf.Value`` (JsonValueError for what a Value cannot hold).

    A direct build: tool outputs are converted on every recorded call (several times faster than
    ``json_format.ParseDict``, with the same result and the same depth bound).
    """
    out = struct_pb2.Value()
    _set_value(out, value, 1)
    return out


def fill_value(out: struct_pb2.Value, value: JsonValue) -> None:
    """``to_value`` into an existing Value (a field of the message that holds it: no copy); ``out`` is
    cleared first, and left cleared when the value cannot be held (JsonValueError)."""
    _fill(out, _set_value, value)


def fill_struct(out: struct_pb2.Struct, value: JsonObject) -> None:
    """``to_struct`` into an existing Struct (cleared first, and on failure)."""
    if not isinstance(value, dict):
        raise JsonValueError(f"Struct must be in a dict which is {value!r:.100}")
    _fill(out, _set_struct, value)


def _fill(out: Any, setter: Callable[[Any, Any, int], None], value: JsonValue) -> None:
    """``setter`` from depth 1 into ``out``, cleared first and cleared again when ``setter`` fails."""
    out.Clear()
    try:
        setter(out, value, 1)
    except BaseException:
        out.Clear()
        raise


def _set_value(out: struct_pb2.Value, value: Any, depth: int) -> None:
    """Fills ``out`` (a Value at ParseDict's recursion ``depth``) with ``value``."""
    if depth > MAX_VALUE_DEPTH:
        raise _too_deep()
    kind = type(value)
    if kind is str:
        out.string_value = value
    elif kind is dict:
        _set_struct(out.struct_value, value, depth + 1)
    elif kind is list or kind is tuple:
        _set_list(out.list_value, value, depth + 1)
    elif kind is float:
        if value - value != 0.0:  # NaN or an infinity: not JSON
            raise _not_finite(value)
        out.number_value = value
    elif kind is int:
        _set_number(out, value)
    elif kind is bool:
        out.bool_value = value
    elif value is None:
        out.null_value = struct_pb2.NULL_VALUE
    # Subclasses (an IntEnum, a str enum, an OrderedDict): in json_format's order, bool before int.
    elif isinstance(value, dict):
        _set_struct(out.struct_value, value, depth + 1)
    elif isinstance(value, list | tuple):
        _set_list(out.list_value, value, depth + 1)
    elif isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, int | float):
        _set_number(out, value)
    else:
        raise JsonValueError(f"Value {value!r:.100} has unexpected type {type(value)}")


def _set_number(out: struct_pb2.Value, number: float) -> None:
    try:
        as_float = float(number)
    except OverflowError:
        bits = int(number).bit_length()
        raise JsonValueError(f"an integer of {bits} bits is out of range for a JSON number") from None
    if as_float - as_float != 0.0:  # NaN or an infinity: not JSON
        raise _not_finite(number)
    out.number_value = as_float


def _not_finite(number: float) -> JsonValueError:
    return JsonValueError(f"number {number!r} is not a finite JSON number")


def _set_struct(out: struct_pb2.Struct, value: dict[Any, Any], depth: int) -> None:
    if depth > MAX_VALUE_DEPTH:
        raise _too_deep()
    out.SetInParent()  # {} is an empty Struct, not an unset one
    fields = out.fields
    for key, item in value.items():
        if type(key) is not str and not isinstance(key, str):
            raise JsonValueError(f"object key {key!r:.100} is not a string")
        _set_value(fields[key], item, depth + 1)


def _set_list(out: struct_pb2.ListValue, value: list[Any] | tuple[Any, ...], depth: int) -> None:
    if depth > MAX_VALUE_DEPTH:
        raise _too_deep()
    out.SetInParent()  # [] is an empty ListValue, not an unset one
    add = out.values.add
    for item in value:
        _set_value(add(), item, depth + 1)


def from_value(value: struct_pb2.Value) -> JsonValue:
    """A ``google.protobuf.Value`` as a plain JSON value (integral numbers come back as int).

    A direct walk of the message: tool outputs are converted on every Gatekeeper check, so this is a
    hot path (json_format's generic walk is several times slower).
    """
    return _read_json(value)


def to_struct(value: JsonObject) -> struct_pb2.Struct:
    """A plain JSON object as a ``google.protobuf.Struct`` (JsonValueError for what a Struct cannot hold)."""
    if not isinstance(value, dict):
        raise JsonValueError(f"Struct must be in a dict which is {value!r:.100}")
    out = struct_pb2.Struct()
    _set_struct(out, value, 1)
    return out


def from_struct(value: struct_pb2.Struct) -> JsonObject:
    return {key: from_value(item) for key, item in value.fields.items()}
