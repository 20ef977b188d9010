"""RFC 6901 JSON Pointer, exactly: the Gatekeeper resolves every binding's ``raw_path`` with it."""

from __future__ import annotations

import re
import sys

from google.protobuf import struct_pb2

from diagnosis_server.conversions import JsonValue, from_value


class PointerError(ValueError):
    """The pointer is not a JSON Pointer, or it does not resolve in the document."""


def parse(pointer: str) -> tuple[str, ...]:
    """The pointer's reference tokens, unescaped (``~1`` -> ``/`` first, then ``~0`` -> ``~``)."""
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise PointerError(f"{pointer!r} is not a JSON Pointer: it must be empty or start with '/'")
    tokens = pointer[1:].split("/")
    if "~" not in pointer:
        return tuple(tokens)
    out: list[str] = []
    for token in tokens:
        if "~" in token:
            if re.search(r"~(?![01])", token):
                raise PointerError(f"{pointer!r} is not a JSON Pointer: '~' must be followed by '0' or '1'")
            token = token.replace("~1", "/").replace("~0", "~")
        out.append(token)
    return tuple(out)


def resolve(document: JsonValue, pointer: str) -> JsonValue:
    """The value ``pointer`` refers to in ``document``; ``PointerError`` if there is none."""
    value = document
    for depth, token in enumerate(parse(pointer)):
        if isinstance(value, dict):
            if token not in value:
                raise PointerError(f"{_prefix(pointer, depth)}: no member {token!r}")
            value = value[token]
        elif isinstance(value, list):
            value = value[_array_index(pointer, depth, token, len(value))]
        else:
            kind = "null" if value is None else type(value).__name__
            raise PointerError(f"{_prefix(pointer, depth)}: cannot take {token!r} of a {kind}")
    return value


def _array_index(pointer: str, depth: int, token: str, length: int) -> int:
    """The index ``token`` names in an array of ``length`` elements, or the PointerError saying why it names none."""
    index = _index(token)
    if not 0 <= index < length:
        raise _no_element(pointer, depth, token, length)
    return index


def _no_element(pointer: str, depth: int, token: str, length: int) -> PointerError:
    """Why ``token`` names no element of an array of ``length`` elements."""
    if token == "-":
        return PointerError(f"{_prefix(pointer, depth)}: '-' refers to no existing array element")
    if not is_array_index(token):
        return PointerError(f"{_prefix(pointer, depth)}: {token!r} is not an array index")
    return PointerError(f"{_prefix(pointer, depth)}: index {token} is out of range (length {length})")


# An index of more digits than this names no element of any array (and int() refuses a string of 4,300 digits).
_MAX_INDEX_DIGITS = 18


def _index(token: str) -> int:
    """The index ``token`` names (-1: it is not an array index; one past any array's end: it is too long to)."""
    if not is_array_index(token):
        return -1
    return int(token) if len(token) <= _MAX_INDEX_DIGITS else sys.maxsize


def is_array_index(token: str) -> bool:
    """Whether ``token`` is an RFC 6901 array index: ``0``, or ASCII digits without a leading zero.

    The same answer as matching ``0|[1-9][0-9]*`` whole: ``01``, ``-``, ``""``, ``+1`` and non-ASCII
    digits (``١``, ``²``) are not indexes.
    """
    return token.isascii() and token.isdigit() and (token[0] != "0" or len(token) == 1)


def resolve_value(document: struct_pb2.Value | None, pointer: str) -> JsonValue:
    """``resolve(from_value(document), pointer)``, walking the message: only the value found is converted.

    The same value, and the same PointerError with the same message, as ``resolve`` on the converted
    document (an absent document, or a Value with no kind, is JSON null).
    """
    value = locate(document, pointer)
    return None if value is None else from_value(value)


# The array indexes most pointers use, looked up instead of checked and parsed ("01" is not one of them).
_SMALL_INDEXES: dict[str, int] = {str(i): i for i in range(1024)}


def locate(document: struct_pb2.Value | None, pointer: str) -> struct_pb2.Value | None:
    """The recorded Value ``pointer`` refers to in ``document`` (None: the absent document itself), not converted.

    ``PointerError`` with ``resolve``'s message when there is none; nothing of the document is converted
    but a scalar that a token cannot be taken of (for the message).
    """
    # parse's result without its call when there is nothing to unescape (most pointers): a list, not a tuple.
    tokens = pointer[1:].split("/") if pointer[:1] == "/" and "~" not in pointer else parse(pointer)
    if document is None:
        if tokens:
            raise PointerError(f"{_prefix(pointer, 0)}: cannot take {tokens[0]!r} of a null")
        return None
    value = document
    for depth, token in enumerate(tokens):
        kind = value.WhichOneof("kind")
        if kind == "struct_value":
            fields = value.struct_value.fields
            if token not in fields:  # (indexing a missing key would add it)
                raise PointerError(f"{_prefix(pointer, depth)}: no member {token!r}")
            value = fields[token]
        elif kind == "list_value":
            items = value.list_value.values
            index = _SMALL_INDEXES.get(token)
            if index is None or index >= len(items):
                index = _array_index(pointer, depth, token, len(items))
            value = items[index]
        else:
            scalar = from_value(value)
            name = "null" if scalar is None else type(scalar).__name__
            raise PointerError(f"{_prefix(pointer, depth)}: cannot take {token!r} of a {name}")
    return value


def _prefix(pointer: str, depth: int) -> str:
    """The part of ``pointer`` resolved so far (its first ``depth`` tokens), for messages."""
    if depth == 0:
        return "at the document root"
    end = 0
    for _ in range(depth):
        end = pointer.index("/", end) + 1
    nxt = pointer.find("/", end)
    return f"at {pointer[: nxt if nxt != -1 else len(pointer)]!r}"
