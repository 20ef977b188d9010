"""The same quantity written another way: one rule per equivalence, each failing closed (another value never matches).

A claim's number is found in its evidence when the evidence writes the same quantity:

- ``same_unit_family``: bytes (``B``, ``KB``/``MB``/``GB``/``TB`` by 1000, ``Ki``/``Mi``/``Gi``/``Ti`` and their
  ``iB`` forms by 1024, ``bytes``) and times (``ms``, ``s``/``sec``/``seconds``, ``min``/``minutes``,
  ``h``/``hours``, ``d``/``days``) convert within their family; ``%`` is a ratio times 100. Ambiguous units
  (a bare ``m``: minutes, metres or millicores; a bare ``K``/``M``/``G``: a byte multiple or a count) convert to
  nothing: they are found only as written.
- ``within_precision``: the evidence's value rounds to the claim's at the precision the claim writes (``25%`` is
  ``0.2534``; ``1.5 s`` is ``1.52 s``; ``250ms`` is ``0.2497 s``), never further (``3 s`` is not ``2.4 s``).
- ``count_of``: a whole number equal to the number of items of a bound list.
- ``same_instant``: a timestamp or a time of day in another zone or format (``2024-05-01T10:15:00Z`` is
  ``2024-05-01T12:15:00+02:00`` and ``10:15 UTC``); a time without a zone matches only the same wall time.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, timezone

_BYTES = {"b": 1.0, "byte": 1.0, "bytes": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}
_BYTES |= {p + s: float(1024**n) for n, p in enumerate(("k", "m", "g", "t"), start=1) for s in ("i", "ib")}
_TIMES = {
    "ms": 1e-3, "msec": 1e-3, "millisecond": 1e-3, "milliseconds": 1e-3,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
}  # fmt: skip
_RATIO = {"%": 0.01, "percent": 0.01}
_SCALES: dict[str, tuple[str, float]] = {}
for _family, _table in (("bytes", _BYTES), ("seconds", _TIMES), ("ratio", _RATIO)):
    _SCALES.update({unit: (_family, scale) for unit, scale in _table.items()})

UNIT_WORDS = tuple(sorted(_SCALES, key=len, reverse=True))
_QUANTITY = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s?(" + "|".join(re.escape(u) for u in UNIT_WORDS) + r")?(?![\w]|\.\d)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number as written (its digits after the point are its precision) with its unit's family and scale."""

    number: float
    decimals: int
    family: str = ""  # "" for a plain number
    scale: float = 1.0
    approximate: bool = False  # written "about 270", "~250ms"

    @property
    def base(self) -> float:
        return self.number * self.scale


def quantity(number: str, unit: str = "", *, approximate: bool = False) -> Quantity | None:
    """The quantity written as ``number`` and ``unit``; None when the unit converts to nothing (fail closed)."""
    try:
        value = float(number)
    except ValueError:
        return None
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    if not unit:
        return Quantity(value, decimals, approximate=approximate)
    family = _SCALES.get(unit.casefold())
    if family is None:
        return None
    return Quantity(value, decimals, family[0], family[1], approximate)


def quantities(text: str) -> list[Quantity]:
    """Every quantity written in ``text`` (plain numbers too)."""
    out = []
    for match in _QUANTITY.finditer(text):
        found = quantity(match.group(1), match.group(2) or "")
        if found is not None:
            out.append(found)
    return out


def within_precision(claimed: Quantity, value_in_claimed_unit: float) -> bool:
    """``value`` rounds to the claimed number at the claimed precision (half a unit of its last digit; for an
    approximate whole number, of its last digit that is not a trailing zero: "about 270" is 265 to 275)."""
    decimals = claimed.decimals
    if claimed.approximate and decimals == 0 and claimed.number >= 10:
        digits = str(int(claimed.number))
        decimals = -(len(digits) - len(digits.rstrip("0")))
    tolerance = 0.5 * 10.0 ** (-decimals)
    difference = abs(value_in_claimed_unit - claimed.number)
    # (a half rounds either way: 1.5 minutes is "two minutes" as people round it)
    return difference <= tolerance or math.isclose(difference, tolerance, rel_tol=1e-9)


def same_quantity(claimed: Quantity, evidence: Quantity) -> bool:
    """The evidence writes the claimed quantity: the same family (a plain number is a ratio to a percentage,
    and nothing else), the value within the claimed precision."""
    if claimed.family == evidence.family:
        return within_precision(claimed, evidence.base / claimed.scale)
    if claimed.family == "ratio" and not evidence.family and 0.0 <= evidence.number <= 1.0:
        return within_precision(claimed, evidence.number / claimed.scale)
    if not claimed.family and evidence.family == "ratio" and 0.0 <= claimed.number <= 1.0:
        return within_precision(claimed, evidence.base)
    return False


def count_of(number: str, values: Iterable[str]) -> bool:
    """``number`` (a whole number) is the number of items of one of ``values`` that is a JSON list."""
    if not number.isdigit():
        return False
    wanted = int(number)
    for value in values:
        if not value.startswith("["):
            continue
        try:
            parsed = json.loads(value)
        except ValueError:
            continue
        if isinstance(parsed, list) and len(parsed) == wanted:
            return True
    return False


_ISO = re.compile(
    r"(?<![\w.])(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?)"
    r"\s?(Z|UTC|GMT|[+-]\d{2}:?\d{2})?(?![\w])",
    re.IGNORECASE,
)
# Zone abbreviations with one fixed offset (hours east of UTC); an offset may follow (UTC+2, GMT-05:00).
ZONES = {
    "Z": 0.0, "UTC": 0.0, "GMT": 0.0, "WET": 0.0, "BST": 1.0, "WEST": 1.0, "CET": 1.0, "CEST": 2.0, "EET": 2.0,
    "EEST": 3.0, "MSK": 3.0, "IST": 5.5, "JST": 9.0, "KST": 9.0, "AEST": 10.0, "AEDT": 11.0,
    "EST": -5.0, "EDT": -4.0, "CST": -6.0, "CDT": -5.0, "MST": -7.0, "MDT": -6.0, "PST": -8.0, "PDT": -7.0,
}  # fmt: skip
ZONE = r"(?:" + "|".join(sorted(ZONES, key=len, reverse=True)) + r")(?:[+-]\d{1,2}(?::?\d{2})?)?"
# A time of day: 24-hour, or 12-hour with its AM/PM ("1:56 PM"), and a zone ("13:51 UTC", "9:15am EDT").
MERIDIEM = r"[AaPp]\.?[Mm]\.?(?![\w])"
_CLOCK = re.compile(
    rf"(?<![\w:.-])(\d{{1,2}}):(\d{{2}})(?::(\d{{2}}))?(?:\s?({MERIDIEM}))?(?:\s?({ZONE})(?![\w]))?(?![\w:])"
)


def zone_offset(zone: str) -> float | None:
    """Hours east of UTC of a written zone (``CET`` 1, ``UTC+2`` 2, ``EST`` -5), None for an unknown one."""
    match = re.fullmatch(r"([A-Z]+)(?:([+-])(\d{1,2})(?::?(\d{2}))?)?", zone)
    if match is None or match.group(1) not in ZONES:
        return None
    offset = ZONES[match.group(1)]
    if match.group(2):
        hours = int(match.group(3)) + int(match.group(4) or 0) / 60
        offset += hours if match.group(2) == "+" else -hours
    return offset


# Unix time in seconds, milliseconds, microseconds or nanoseconds (Loki's line timestamps), 2017 to 2033.
_EPOCH = re.compile(r"(?<![\w.])(1[5-9]\d{8}|1[5-9]\d{11}|1[5-9]\d{14}|1[5-9]\d{17})(?:\.\d+)?(?![\w])")
_EPOCH_SCALE = {10: 1, 13: 1_000, 16: 1_000_000, 19: 1_000_000_000}


@dataclass(frozen=True, slots=True)
class Instant:
    """A moment as written: aware (with a zone) or a wall time (naive)."""

    moment: datetime

    @property
    def aware(self) -> bool:
        return self.moment.tzinfo is not None


def _iso(date: str, clock: str, zone: str) -> datetime | None:
    zone = zone.upper()
    offset = "+00:00" if zone in ("Z", "UTC", "GMT") else zone
    if offset and ":" not in offset:
        offset = f"{offset[:3]}:{offset[3:]}"
    try:
        return datetime.fromisoformat(f"{date}T{clock.replace(',', '.')}{offset}")
    except ValueError:
        return None


def instants(text: str) -> list[Instant]:
    """The timestamps ``text`` writes: ISO 8601 (with or without a zone) and Unix seconds or milliseconds."""
    out = []
    for match in _ISO.finditer(text):
        moment = _iso(match.group(1), match.group(2), match.group(3) or "")
        if moment is not None:
            out.append(Instant(moment))
    for match in _EPOCH.finditer(text):
        digits = match.group(1)
        seconds = int(digits) / _EPOCH_SCALE[len(digits)]
        out.append(Instant(datetime.fromtimestamp(seconds, tz=UTC)))
    return out


def same_instant(claimed: str, evidence: Iterable[Instant]) -> bool:
    """``claimed`` (an ISO timestamp) is one of the evidence's moments: aware ones compared as moments,
    a wall time only with the same wall time."""
    match = _ISO.fullmatch(claimed.strip())
    if match is None:
        return False
    moment = _iso(match.group(1), match.group(2), match.group(3) or "")
    if moment is None:
        return False
    for other in evidence:
        if moment.tzinfo is None and other.aware:
            # A timestamp written without a zone is read as UTC, the zone every recorded output writes.
            if other.moment.astimezone(UTC).replace(tzinfo=None) == moment:
                return True
            continue
        if (moment.tzinfo is None) != (not other.aware):
            continue
        if other.moment == moment:
            return True
    return False


def clock_times(text: str) -> list[tuple[str, time, float | None]]:
    """The times of day ``text`` writes outside timestamps: (as written, the time, its zone's offset or None)."""
    out = []
    for match in _CLOCK.finditer(text):
        hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
        meridiem = (match.group(4) or "").lower().replace(".", "")
        if meridiem and not 1 <= hour <= 12:
            continue
        if meridiem:
            hour = hour % 12 + (12 if meridiem == "pm" else 0)
        if hour < 24 and minute < 60 and second < 60:
            zone = match.group(5)
            out.append((match.group(0), time(hour, minute, second), zone_offset(zone) if zone else None))
    return out


def same_clock_time(claimed: time, seconds_written: bool, offset: float | None, evidence: Iterable[Instant]) -> bool:
    """A time of day one of the evidence's moments shows: an aware moment in the claim's zone (UTC when it names
    none), a wall time as written and only when the claim names no zone."""
    for other in evidence:
        if not other.aware and offset is not None:
            continue
        moment = other.moment.astimezone(timezone(timedelta(hours=offset or 0.0))) if other.aware else other.moment
        shown = moment.time().replace(microsecond=0)
        if not seconds_written:
            shown = shown.replace(second=0)
        if shown == claimed:
            return True
    return False
