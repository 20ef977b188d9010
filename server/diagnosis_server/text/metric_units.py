"""What a Prometheus metric name says of its values' unit: its base-unit part (``_seconds``, ``_milliseconds`` or
``_ms``, ``_bytes``) before any suffix (``grpc_server_handling_seconds:p99``, ``..._seconds_bucket``).

One table for the analyzers that write a unit after a named series' value and for the derivability check that
finds that unit in the series' name.
"""

from __future__ import annotations

import re

# A snake_case metric name's unit part (``..._seconds``), or a camelCase field's last word (``periodSeconds``,
# ``timeoutSeconds``, ``terminationGracePeriodSeconds``: Kubernetes' own way of naming a field's unit).
NAME_UNITS = {
    "s": re.compile(r"[a-z0-9]_seconds(?![a-z])|[a-z]Seconds(?![a-z])"),
    "ms": re.compile(r"[a-z0-9]_(?:milliseconds|ms)(?![a-z])|[a-z](?:Milliseconds|Ms)(?![a-z])"),
    "b": re.compile(r"[a-z0-9]_bytes(?![a-z])|[a-z]Bytes(?![a-z])"),
}
TIME_UNITS = ("s", "ms")


def names_unit(unit: str, text: str) -> bool:
    """Whether ``text`` holds a metric name whose base-unit part is ``unit`` (``s`` in ``..._seconds:p99``)."""
    pattern = NAME_UNITS.get(unit.casefold())
    if pattern is None:
        return False
    return pattern.search(text) is not None or pattern.search(text.casefold()) is not None


def time_unit(name: str) -> str:
    """The time unit a metric's values are in, as its name says (``s``, ``ms``), or ''."""
    return next((unit for unit in TIME_UNITS if names_unit(unit, name)), "")
