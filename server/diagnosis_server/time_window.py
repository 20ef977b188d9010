"""The span of time a run reads: given on the request, else the dates and times its question writes, else the last
hour; live reads (Prometheus ranges, Loki, Kubernetes events) cover it and the answer says which it was."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from diagnosis.v1 import run_pb2
from diagnosis_server.conversions import JsonValue

DEFAULT_SPAN_S = 3600.0
# A moment written alone ("at 14:05", "2026-12-01 10:00") is read with this much on each side.
AROUND_S = 1800.0
_DATE = r"(\d{4}-\d{2}-\d{2})"
_TIME = r"(\d{1,2}:\d{2}(?::\d{2})?)"
_STAMP = re.compile(rf"\b{_DATE}(?:[T ]{_TIME}(Z|[+-]\d{{2}}:?\d{{2}})?)?\b")
_CLOCK = re.compile(rf"(?<![\d:.-]){_TIME}\s*(utc|z)?(?![\d:])", re.IGNORECASE)
_LAST = re.compile(r"\b(?:last|past)\s+(\d+)\s*(minutes?|mins?|hours?|hrs?|h|days?|d)\b", re.IGNORECASE)
_UNITS = {"m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True, slots=True)
class Window:
    start: float
    end: float
    # Where it came from: "request", "question" or "default".
    origin: str = "default"

    def to_proto(self) -> run_pb2.TimeWindow:
        window = run_pb2.TimeWindow()
        window.start.FromMicroseconds(int(self.start * 1_000_000))
        window.end.FromMicroseconds(int(self.end * 1_000_000))
        return window

    def to_json(self) -> dict[str, JsonValue]:
        """``{"start", "end"}`` in RFC 3339 (UTC), as the live tools take them, and where the window came from."""
        return {"start": _stamp(self.start), "end": _stamp(self.end), "origin": self.origin}

    def describe(self) -> str:
        """``Window read: 2026-12-01T10:00:00Z to 2026-12-01T11:00:00Z (from the question)``."""
        where = {
            "request": "as asked",
            "alert": "from the alert",
            "question": "from the question",
            "default": "the last hour",
        }[self.origin]
        return f"Window read: {_stamp(self.start)} to {_stamp(self.end)} ({where})"


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def describe_proto(window: run_pb2.TimeWindow) -> str:
    """``Window read: START to END`` of a run's recorded window."""
    start, end = window.start.ToMicroseconds() / 1e6, window.end.ToMicroseconds() / 1e6
    return f"Window read: {_stamp(start)} to {_stamp(end)}"


def from_proto(window: run_pb2.TimeWindow) -> Window | None:
    """The request's window, or None when it gives none (neither bound set)."""
    if not window.HasField("start") and not window.HasField("end"):
        return None
    return Window(window.start.ToMicroseconds() / 1e6, window.end.ToMicroseconds() / 1e6, "request")


def from_trigger(trigger: run_pb2.RunTrigger) -> Window | None:
    """The window an alert's trigger gives (its earliest startsAt less the look-back, to now), None without one."""
    if not trigger.HasField("window_start") or not trigger.HasField("window_end"):
        return None
    return Window(trigger.window_start.ToMicroseconds() / 1e6, trigger.window_end.ToMicroseconds() / 1e6, "alert")


def _moment(date: str, clock: str | None, zone: str | None) -> datetime:
    text = f"{date}T{clock or '00:00'}"
    if clock and clock.count(":") == 1:
        text += ":00"
    zone = zone or "+00:00"
    if zone == "Z":
        zone = "+00:00"
    elif ":" not in zone:
        zone = zone[:3] + ":" + zone[3:]
    return datetime.fromisoformat(text + zone)


def question_window(question: str, now: float) -> Window | None:
    """The window a question writes: ``last 3 hours``; ``yesterday`` (the previous UTC day); a date (that day), a
    date and time or a clock time today (UTC; yesterday's when it is still to come), or two of them (from the
    first to the second); a lone moment is read ``AROUND_S`` either side of it."""
    text = question.lower()
    last = _LAST.search(text)
    if last:
        span = int(last.group(1)) * _UNITS[last.group(2)[0]]
        return Window(now - span, now, "question") if span > 0 else None
    moments: list[tuple[datetime, bool]] = []  # (moment, whether a whole day)
    for match in _STAMP.finditer(question):
        try:
            moments.append((_moment(match.group(1), match.group(2), match.group(3)), match.group(2) is None))
        except ValueError:
            continue
    today = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if not moments:
        stripped = _STAMP.sub(" ", question)
        for match in _CLOCK.finditer(stripped):
            try:
                clock = _moment(today.date().isoformat(), match.group(1), None)
            except ValueError:
                continue
            if clock.timestamp() > now:
                clock -= timedelta(days=1)
            moments.append((clock, False))
    if not moments and "yesterday" in text:
        start = today - timedelta(days=1)
        return Window(start.timestamp(), today.timestamp(), "question")
    if not moments:
        return None
    if len(moments) >= 2:
        first, second = moments[0][0], moments[1][0]
        end = second + (timedelta(days=1) if moments[1][1] else timedelta())
        if first < end:
            return Window(first.timestamp(), min(end.timestamp(), now), "question")
    moment, whole_day = moments[0]
    if whole_day:
        return Window(moment.timestamp(), min((moment + timedelta(days=1)).timestamp(), now), "question")
    low, high = moment.timestamp() - AROUND_S, min(moment.timestamp() + AROUND_S, now)
    return Window(low, high, "question") if low < high else None


def resolve_window(requested: Window | None, question: str, now: float) -> Window:
    """The request's window, else the question's, else the last hour up to ``now``."""
    if requested is not None:
        return requested
    return question_window(question, now) or Window(now - DEFAULT_SPAN_S, now)
