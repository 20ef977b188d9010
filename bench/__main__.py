"""`python -m bench` (`make bench`): every section, a table, var/bench/latest.json.

Every figure is a ratio against a baseline measured in the same run (these machines are noisy).
Bounded in count and time, loopback only. A missed goal is reported with a cProfile of its slow path,
captured in the same run after all measurements (so the profiler perturbs none of them).

    python -m bench [--only engine,gatekeeper,...] [--output PATH] [--no-profile] [--strict]

Exit status: 0 when every section ran (goals missed or not; with ``--strict`` a missed goal is 1 too),
1 when a section failed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import (
    capture,
    crossreplica,
    endtoend,
    engine,
    fanout,
    gatekeeper,
    heuristic,
    largepack,
    live,
    peer,
    responsive,
    samework,
    store,
)
from bench.profiling import ProfileSummary
from bench.report import check_goals, finite, pinned, render, write_json
from diagnosis_server.api.server import tune_gc

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "var" / "bench" / "latest.json"
# No section (nor its profile) may take longer than this: a hang is reported as a failed section.
SECTION_TIMEOUT_S = 180.0


@dataclass(frozen=True, slots=True)
class Section:
    name: str
    title: str
    measure: Callable[[Path], Awaitable[dict[str, Any]]]
    profile: Callable[[Path], Awaitable[ProfileSummary]]


async def _gatekeeper_measure(_: Path) -> dict[str, Any]:
    return dict(gatekeeper.measure())


async def _gatekeeper_profile(_: Path) -> ProfileSummary:
    return gatekeeper.profile()


async def _engine_measure(_: Path) -> dict[str, Any]:
    return dict(await engine.measure())


async def _engine_profile(_: Path) -> ProfileSummary:
    return await engine.profile()


async def _heuristic_measure(_: Path) -> dict[str, Any]:
    return dict(await heuristic.measure(runs=50, repeats=2))


async def _heuristic_profile(_: Path) -> ProfileSummary:
    return await heuristic.profile()


async def _store_measure(_: Path) -> dict[str, Any]:
    return await store.measure(await capture.capture())


async def _store_profile(_: Path) -> ProfileSummary:
    return await store.profile(await capture.capture())


async def _peer_measure(_: Path) -> dict[str, Any]:
    return await peer.measure(await capture.capture())


async def _peer_profile(_: Path) -> ProfileSummary:
    return await peer.profile(await capture.capture())


async def _samework_measure(_: Path) -> dict[str, Any]:
    return await samework.measure()


async def _samework_profile(_: Path) -> ProfileSummary:
    return await peer.profile(await capture.capture())


async def _live_measure(_: Path) -> dict[str, Any]:
    return await live.measure()


async def _live_profile(_: Path) -> ProfileSummary:
    return await heuristic.profile()


async def _largepack_measure(_: Path) -> dict[str, Any]:
    return await largepack.measure()


async def _largepack_profile(_: Path) -> ProfileSummary:
    return await largepack.profile()


async def _responsive_measure(workdir: Path) -> dict[str, Any]:
    return await responsive.measure(workdir=workdir)


async def _responsive_profile(_: Path) -> ProfileSummary:
    return await heuristic.profile()


async def _crossreplica_measure(workdir: Path) -> dict[str, Any]:
    return await crossreplica.measure(workdir=workdir)


async def _crossreplica_profile(workdir: Path) -> ProfileSummary:
    return await crossreplica.profile(workdir=workdir)


async def _endtoend_measure(workdir: Path) -> dict[str, Any]:
    return await endtoend.measure(workdir=workdir, captured=await capture.capture())


async def _endtoend_profile(workdir: Path) -> ProfileSummary:
    return await endtoend.profile(workdir=workdir)


async def _fanout_measure(workdir: Path) -> dict[str, Any]:
    return await fanout.measure(workdir=workdir)


async def _fanout_profile(workdir: Path) -> ProfileSummary:
    return await fanout.profile(workdir=workdir)


# In-process CPU-bound sections first, then the ones with server processes.
SECTIONS = (
    Section("engine", "engine: our graph vs LangGraph, no-op nodes", _engine_measure, _engine_profile),
    Section("gatekeeper", "Gatekeeper: checked bindings/s", _gatekeeper_measure, _gatekeeper_profile),
    Section("heuristic", "heuristic CPU per in-process run", _heuristic_measure, _heuristic_profile),
    Section("store", "store: our SQLite store vs a raw sqlite3 loop, same rows", _store_measure, _store_profile),
    Section("peer", "peer: in-process runs/s vs LangGraph + SqliteSaver", _peer_measure, _peer_profile),
    Section(
        "samework",
        "same work: LangGraph + AsyncSqliteSaver over our nodes vs our engine and store",
        _samework_measure,
        _samework_profile,
    ),
    Section("live", "live tools answering after 50 ms: wall time vs the sum of calls", _live_measure, _live_profile),
    Section("largepack", "heuristic run on a large namespace (1x, 2x, 4x)", _largepack_measure, _largepack_profile),
    Section("endtoend", "end to end: Diagnose vs a no-op stream and its floor", _endtoend_measure, _endtoend_profile),
    Section(
        "responsive",
        "health checks and run-cap refusals while runs compute over hostile lines",
        _responsive_measure,
        _responsive_profile,
    ),
    Section("fanout", "fan-out: WatchRun subscribers on one run", _fanout_measure, _fanout_profile),
    Section("crossreplica", "cross-replica WatchRun on PostgreSQL", _crossreplica_measure, _crossreplica_profile),
)


def _describe(exc: Exception) -> str:
    if isinstance(exc, TimeoutError) and not str(exc):
        return f"did not finish within {SECTION_TIMEOUT_S:g} s"
    return f"{type(exc).__name__}: {exc}"


def _machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


async def run(
    sections: list[Section], *, output: Path, profile: bool, log: Callable[[str], None]
) -> tuple[dict[str, Any], bool]:
    """Runs ``sections``, writes ``output``; the document, and whether every section ran."""
    workdir = output.parent / "logs"
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    # The in-process sections run with the collector as ``serve`` sets it after its start-up (the heap so far
    # frozen, full collections rarer); the peer runs in this same process, so it has the same collector.
    tune_gc()
    results: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    errors: dict[str, str] = {}
    for section in sections:
        log(f"bench: {section.title} ...")
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(SECTION_TIMEOUT_S):
                results.update(await section.measure(workdir))
        except Exception as exc:
            errors[section.name] = _describe(exc)
            traceback.print_exc(file=sys.stderr)
        seconds[section.name] = round(time.perf_counter() - t0, 2)
    goals = {name: goal for name, goal in check_goals(results).items() if goal["section"] in seconds}
    if profile:
        profiles: dict[str, ProfileSummary] = {}
        for section in sections:
            missed = [g for g in goals.values() if g["section"] == section.name and not g["met"]]
            if not missed or section.name in errors:
                continue
            log(f"bench: profiling {section.name} (goal missed) ...")
            t0 = time.perf_counter()
            try:
                async with asyncio.timeout(SECTION_TIMEOUT_S):
                    profiles[section.name] = await section.profile(workdir)
            except Exception as exc:
                errors[f"{section.name} profile"] = _describe(exc)
            seconds[f"{section.name}_profile"] = round(time.perf_counter() - t0, 2)
        for goal in goals.values():
            if not goal["met"] and goal["section"] in profiles:
                goal["profile"] = profiles[goal["section"]]
    document: dict[str, Any] = {
        "generated_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": _machine(),
        "duration_s": round(time.perf_counter() - started, 1),
        "section_seconds": seconds,
        "pinned": pinned(results, goals),
        **results,
        "goals": goals,
        "errors": errors,
    }
    document = finite(document)
    write_json(output, document)
    print(render(results, goals, errors))
    print(f"\nwrote {output} ({document['duration_s']} s)")
    return document, not errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run the benchmarks.")
    parser.add_argument(
        "--only", default="", help=f"comma-separated sections of: {', '.join(s.name for s in SECTIONS)}"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="the JSON report (var/bench/latest.json)")
    parser.add_argument("--no-profile", action="store_true", help="do not profile the slow path of a missed goal")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args(argv)
    wanted = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(wanted) - {s.name for s in SECTIONS})
    if unknown:
        parser.error(f"unknown section(s): {', '.join(unknown)}")
    sections = [s for s in SECTIONS if not wanted or s.name in wanted]

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    document, complete = asyncio.run(run(sections, output=args.output, profile=not args.no_profile, log=log))
    if not complete:
        return 1
    if args.strict and not all(goal["met"] for goal in document["goals"].values()):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
