"""A run's window as the default span of every call that reads one: its live reads cover the window asked about."""

from __future__ import annotations

from collections.abc import Mapping

from diagnosis_server.conversions import JsonObject, JsonValue


def run_window(context: Mapping[str, JsonValue]) -> tuple[str, str] | None:
    """(start, end) of the run context's ``window`` (RFC 3339), if it has one."""
    window = context.get("window")
    if not isinstance(window, dict):
        return None
    start, end = window.get("start"), window.get("end")
    return (start, end) if isinstance(start, str) and isinstance(end, str) else None


def within_window(schema: Mapping[str, object], arguments: JsonObject, window: tuple[str, str]) -> JsonObject:
    """The call's arguments with the window filled in where its tool reads a span and the call names none: a
    range's ``start`` and ``end``, an instant query's ``time`` (the window's end). A call that names its own span
    keeps it."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return arguments
    start, end = window
    out = dict(arguments)
    if "start" in properties and "end" in properties and "start" not in out and "end" not in out:
        out["start"], out["end"] = start, end
    elif "time" in properties and "time" not in out and "start" not in properties:
        out["time"] = end
    return out
