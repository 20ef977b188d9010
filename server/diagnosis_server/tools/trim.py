"""The output cap: trim a JSON value's arrays until its canonical bytes fit a bound.

Only arrays shrink, and only by dropping trailing elements: every kept element keeps its index, so a JSON
Pointer into what is kept resolves to the same upstream value as before the trim. No string is cut and no
object key is dropped. Arrays are filled in order: each element is kept whole while it fits; the first one
that does not is itself trimmed (when it holds arrays) or dropped, and the elements after it are dropped.
An object's members are given room smallest first, so small members (``status``, ``warnings``) stay whole
and the largest one takes what is left.

``trim_to_fit`` returns the trimmed value and what was trimmed (``/data/result kept 120 of 5000 items``), or
raises ``Untrimmable`` when even every array emptied would not fit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from diagnosis_server.conversions import JsonValue, canonical_json_bytes

MAX_REPORTED = 5


class Untrimmable(ValueError):
    """The value cannot be made to fit by trimming arrays (its strings and keys alone are too large)."""


@dataclass(frozen=True, slots=True)
class Trim:
    pointer: str
    kept: int
    total: int

    def describe(self) -> str:
        return f"{self.pointer or '/'} kept {self.kept} of {self.total} items"


@dataclass(slots=True)
class _Trimmer:
    trims: list[Trim] = field(default_factory=list)
    # Each array's and object's canonical size, measured once (the value is held, so its id stays its own).
    sizes: dict[int, tuple[JsonValue, int]] = field(default_factory=dict)

    def size(self, value: JsonValue) -> int:
        if not isinstance(value, list | dict):
            return _size(value)
        known = self.sizes.get(id(value))
        if known is None:
            known = self.sizes[id(value)] = (value, _size(value))
        return known[1]

    def _sized(self, value: list[JsonValue] | dict[str, JsonValue], size: int) -> JsonValue:
        self.sizes[id(value)] = (value, size)
        return value

    def fit(self, value: JsonValue, budget: int, pointer: str) -> JsonValue | None:
        """``value`` trimmed to at most ``budget`` bytes, or None when it cannot be."""
        if self.size(value) <= budget:
            return value
        if isinstance(value, list):
            return self._fit_array(value, budget, pointer)
        if isinstance(value, dict):
            return self._fit_object(value, budget, pointer)
        return None

    def _derive_largest(self, members: dict[str, JsonValue], keys: list[str], overhead: int) -> None:
        """With the object's own size known, its member with the most elements is not measured: its size is what
        the braces, commas, keys and other members leave (an upstream listing's ``items`` is most of its bytes)."""
        whole = self.sizes.get(id(members))
        if whole is None:
            return
        containers: dict[str, list[JsonValue] | dict[str, JsonValue]] = {}
        for key in keys:
            member = members[key]
            if isinstance(member, list | dict):
                containers[key] = member
        if not containers:
            return
        largest = max(containers, key=lambda key: len(containers[key]))
        rest = sum(self.size(members[key]) for key in keys if key != largest)
        if id(containers[largest]) not in self.sizes:
            self._sized(containers[largest], whole[1] - overhead - rest)

    def _fit_array(self, items: list[JsonValue], budget: int, pointer: str) -> JsonValue | None:
        left = budget - 2  # the brackets
        if left < 0:
            return None
        kept: list[JsonValue] = []
        for index, item in enumerate(items):
            room = left - (1 if kept else 0)  # the comma before it
            size = self.size(item)
            if size <= room:
                kept.append(item)
                left = room - size
                continue
            # The first element that does not fit whole: trim it if it can be, then stop.
            if room >= _min_size(item):
                trimmed = self.fit(item, room, f"{pointer}/{index}")
                if trimmed is not None:
                    kept.append(trimmed)
                    left = room - self.size(trimmed)
            break
        if len(kept) < len(items):
            self.trims.append(Trim(pointer, len(kept), len(items)))
        return self._sized(kept, budget - left)

    def _fit_object(self, members: dict[str, JsonValue], budget: int, pointer: str) -> JsonValue | None:
        keys = list(members)
        overhead = 2 + max(0, len(keys) - 1) + sum(_size(key) + 1 for key in keys)
        self._derive_largest(members, keys, overhead)
        minimum = {key: _min_size(members[key]) for key in keys}
        left = budget - overhead - sum(minimum.values())
        if left < 0:
            return None
        out: dict[str, JsonValue] = {}
        # Smallest first: each member gets its minimum plus whatever the members before it left over.
        for key in sorted(keys, key=lambda k: (self.size(members[k]), k)):
            room = minimum[key] + left
            trimmed = self.fit(members[key], room, f"{pointer}/{_escape(key)}")
            if trimmed is None:  # cannot happen (room >= its minimum); fail closed all the same
                return None
            out[key] = trimmed
            left = room - self.size(trimmed)
        fitted = {key: out[key] for key in keys}
        return self._sized(fitted, overhead + sum(self.size(member) for member in fitted.values()))


def _size(value: JsonValue) -> int:
    return len(canonical_json_bytes(value))


def _min_size(value: JsonValue) -> int:
    """The size of ``value`` with every array in it emptied: the least trimming can make it."""
    if isinstance(value, list):
        return 2
    if isinstance(value, dict):
        if not value:
            return 2
        return 1 + sum(_size(key) + 1 + _min_size(child) + 1 for key, child in value.items())
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def trim_to_fit(value: JsonValue, max_bytes: int, *, size: int | None = None) -> tuple[JsonValue, list[Trim]]:
    """``value`` with arrays trimmed to fit ``max_bytes`` canonical bytes, and the trims made (outermost first).
    ``size``: the value's canonical size when the caller has measured it already."""
    trimmer = _Trimmer()
    if size is not None and isinstance(value, list | dict):
        trimmer.sizes[id(value)] = (value, size)
    trimmed = trimmer.fit(value, max_bytes, "")
    if trimmed is None or trimmer.size(trimmed) > max_bytes:
        raise Untrimmable(f"its strings and keys alone are over {max_bytes} bytes")
    return trimmed, sorted(trimmer.trims, key=lambda t: (t.pointer.count("/"), t.pointer))


def describe_trims(trims: list[Trim], max_bytes: int) -> str:
    """``trimmed to fit 262144 bytes: /data/result kept 120 of 5000 items`` (the first few, then a count)."""
    shown = "; ".join(trim.describe() for trim in trims[:MAX_REPORTED])
    more = f"; and {len(trims) - MAX_REPORTED} more array(s)" if len(trims) > MAX_REPORTED else ""
    return f"trimmed to fit {max_bytes} bytes: {shown}{more}"
