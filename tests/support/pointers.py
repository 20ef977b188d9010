"""The RFC 6901 pointers of a JSON value: every value inside it, itself first, in document order."""

from __future__ import annotations

from collections.abc import Iterator

from diagnosis_server.conversions import JsonValue


def escape(token: str) -> str:
    """A member name as a pointer token: ``~`` as ``~0`` first, then ``/`` as ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def pointed(value: JsonValue, pointer: str = "") -> Iterator[tuple[str, JsonValue]]:
    """``(pointer, value)`` for ``value`` and, depth first, for every value inside it."""
    yield pointer, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from pointed(child, f"{pointer}/{escape(key)}")
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from pointed(child, f"{pointer}/{index}")
