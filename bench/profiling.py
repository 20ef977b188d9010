"""Where the time goes: a cProfile of a slow path, summarised for the report of a missed goal.

Two views of one profile: the share of internal time by area (our packages by subpackage, libraries
by top-level package, the event loop's wait for I/O apart; a builtin's time goes to its callers'
areas) and the top functions by internal time.
Internal time (``tottime``) is used because cumulative figures are unreliable across coroutine resumes
and greenlet switches. cProfile sees one thread: a database driver's own thread is not in it (its CPU
shows in the process CPU figures of the sections).
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Awaitable, Callable
from pathlib import PurePath
from typing import TypedDict

# Functions whose internal time is waiting, not working (the event loop's poll, a thread's lock wait).
_WAITING = (
    "<method 'poll' of 'select.epoll'",
    "<method 'select' of 'select.",
    "<method 'acquire' of",
    "<built-in method time.sleep",
)


class ProfileLine(TypedDict):
    function: str
    calls: int
    tottime_ms: float
    cumtime_ms: float


class ProfileSummary(TypedDict):
    what: str
    total_ms: float
    by_area: dict[str, float]
    top: list[ProfileLine]


def _area(filename: str, name: str) -> str:
    if filename == "~" or filename.startswith("<"):
        if any(name.startswith(prefix) for prefix in _WAITING):
            return "waiting (event loop poll, locks)"
        if name.startswith("<method 'run' of '_contextvars.Context'"):
            return "event loop callbacks (incl. grpc's Cython)"
        if "_upb._message" in name or "google._upb" in name:
            return "google.protobuf"
        if "grpc" in name.lower():
            return "grpc"
        return "builtins"
    parts = PurePath(filename).parts
    if "diagnosis_server" in parts:
        index = parts.index("diagnosis_server")
        rest = parts[index + 1 :]
        return "diagnosis_server." + (rest[0].removesuffix(".py") if len(rest) > 1 else "(top)")
    if "diagnosis" in parts and "client" in parts:
        return "diagnosis (client)"
    if "site-packages" in parts:
        index = parts.index("site-packages")
        top = parts[index + 1] if len(parts) > index + 1 else "?"
        if top == "google" and len(parts) > index + 2:
            return f"google.{parts[index + 2]}"
        return top.removesuffix(".py")
    if "bench" in parts:
        return "bench"
    if "lib" in parts and "python3" in "".join(parts):
        stem = PurePath(filename).stem
        return "asyncio" if "asyncio" in parts else f"stdlib.{stem}"
    return PurePath(filename).stem


def _short(filename: str, line: int, name: str) -> str:
    if filename == "~":
        return name
    parts = PurePath(filename).parts
    for anchor in ("diagnosis_server", "site-packages", "bench"):
        if anchor in parts:
            index = parts.index(anchor)
            keep = parts[index + 1 :] if anchor == "site-packages" else parts[index:]
            return f"{'/'.join(keep)}:{line}({name})"
    return f"{PurePath(filename).name}:{line}({name})"


def summarize(stats: pstats.Stats, what: str, *, top: int = 12) -> ProfileSummary:
    """The two views of ``stats``: internal time by area (shares, %) and the ``top`` functions."""
    raw = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in raw.values()) or 1e-12
    areas: dict[str, float] = {}
    lines: list[tuple[float, ProfileLine]] = []
    for (filename, line, name), (_, calls, tottime, cumtime, callers) in raw.items():
        area = _area(filename, name)
        if area == "builtins" and callers:
            # A builtin's time belongs to whoever called it (greenlet switches to SQLAlchemy, a queue's
            # put to the driver that uses it), shared by each caller's part of that time.
            spent = sum(entry[2] for entry in callers.values()) or 1e-12
            for (caller_file, _, caller_name), entry in callers.items():
                caller_area = _area(caller_file, caller_name)
                areas[caller_area] = areas.get(caller_area, 0.0) + tottime * entry[2] / spent
        else:
            areas[area] = areas.get(area, 0.0) + tottime
        if area.startswith("waiting"):
            continue  # not work: shown in the areas only
        lines.append(
            (
                tottime,
                ProfileLine(
                    function=_short(filename, line, name),
                    calls=int(calls),
                    tottime_ms=round(tottime * 1000, 3),
                    cumtime_ms=round(cumtime * 1000, 3),
                ),
            )
        )
    by_area = {area: round(100 * seconds / total, 1) for area, seconds in sorted(areas.items(), key=lambda kv: -kv[1])}
    lines.sort(key=lambda pair: -pair[0])
    return ProfileSummary(
        what=what,
        total_ms=round(total * 1000, 1),
        by_area={area: share for area, share in by_area.items() if share >= 0.5},
        top=[line for _, line in lines[:top]],
    )


def profile_sync(fn: Callable[[], object], *, ops: int, what: str) -> ProfileSummary:
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        for _ in range(ops):
            fn()
    finally:
        profiler.disable()
    return summarize(pstats.Stats(profiler), what)


async def profile_async(fn: Callable[[], Awaitable[object]], *, ops: int, what: str) -> ProfileSummary:
    """Profiles ``ops`` awaited calls (everything the event loop runs meanwhile is included)."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        for _ in range(ops):
            await fn()
    finally:
        profiler.disable()
    return summarize(pstats.Stats(profiler), what)


def load_profile(path: str, what: str) -> ProfileSummary:
    """A profile dumped by another process (``cProfile.Profile.dump_stats``)."""
    return summarize(pstats.Stats(path), what)


def format_profile(summary: ProfileSummary, *, indent: str = "    ") -> str:
    areas = ", ".join(f"{area} {share:g}%" for area, share in summary["by_area"].items())
    out = [
        f"{indent}profile: {summary['what']} ({summary['total_ms']:g} ms profiled)",
        f"{indent}  by area (internal time): {areas}",
        f"{indent}  top functions (internal ms / cumulative ms / calls):",
    ]
    out += [
        f"{indent}    {line['tottime_ms']:9.1f} {line['cumtime_ms']:9.1f} {line['calls']:7d}  {line['function']}"
        for line in summary["top"]
    ]
    return "\n".join(out)
