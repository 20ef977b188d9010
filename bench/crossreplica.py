"""Cross-replica WatchRun: a run on replica A followed by WatchRun subscribers on replica B (PostgreSQL).

Two servers (``bench.launcher diagnose``) share one PostgreSQL database: A runs the run (heuristic agents,
each call delayed so that its events are spread out), B only serves WatchRun, following the run through
the store: woken by PostgreSQL NOTIFY at each commit, polling every 0.5 s at the latest. Delay = receive time
at the subscriber minus the event's timestamp (set just before its commit on A). Only events stamped after
every subscriber was attached count (earlier ones come from B's replay). The PostgreSQL server is a
throwaway one, started with the store tests' own helper (``tests/store/conftest.py``: initdb and pg_ctl),
or ``DIAGNOSIS_TEST_POSTGRES_URL``; without either the section says why and reports nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.capture import QUESTION, SCENARIO
from bench.profiling import ProfileSummary, load_profile
from bench.servers import ServerProcess
from bench.timing import percentile
from diagnosis import AsyncDiagnosisClient

ROOT = Path(__file__).resolve().parent.parent
RUN_TIMEOUT_S = 60.0
SETTLE_S = 0.3


class NoPostgres(RuntimeError):
    """No PostgreSQL server could be had (the reason)."""


def _helper() -> Any:
    """The store tests' PostgreSQL helper (``tests.support.postgres``)."""
    try:
        return importlib.import_module("tests.support.postgres")
    except ImportError as exc:
        raise NoPostgres(f"tests/support/postgres.py (the PostgreSQL helper) cannot be imported: {exc}") from None


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    """A PostgreSQL URL: ``DIAGNOSIS_TEST_POSTGRES_URL``, or a throwaway server of the store tests' helper."""
    configured = os.environ.get("DIAGNOSIS_TEST_POSTGRES_URL", "").strip()
    if configured:
        yield configured
        return
    helper = _helper()
    try:
        server = helper.Cluster(
            bin_dir=helper.find_bin_dir(), base=Path(tempfile.mkdtemp(prefix="bench-pg-")), runner=helper.runner()
        )
    except helper.PostgresUnavailable as exc:
        raise NoPostgres(str(exc)) from None
    try:
        url = server.start()
    except Exception as exc:
        server.stop()
        raise NoPostgres(f"could not start one: {exc}") from None
    try:
        yield url
    finally:
        server.stop()


async def _one_run(a: AsyncDiagnosisClient, b: AsyncDiagnosisClient, watchers: int) -> tuple[list[float], int]:
    """Delays (ms) of live events at ``watchers`` WatchRun streams on B, for one run started on A."""
    stream = a.diagnose(QUESTION, scenario=SCENARIO, timeout=RUN_TIMEOUT_S)
    run_id = (await anext(stream)).run_id
    delays: list[float] = []
    attached_ns = 0
    ended = 0

    async def watch() -> None:
        nonlocal ended
        async for response in b.watch_run(run_id, timeout=RUN_TIMEOUT_S):
            received = time.time_ns()
            if response.WhichOneof("kind") == "event":
                stamp = response.event.timestamp.ToNanoseconds()
                if attached_ns and stamp > attached_ns:
                    delays.append((received - stamp) / 1e6)
            else:
                ended += 1

    async def drain() -> None:
        async for _ in stream:
            pass

    tasks = [asyncio.ensure_future(watch()) for _ in range(watchers)]
    await asyncio.sleep(SETTLE_S)
    attached_ns = time.time_ns()
    await asyncio.gather(drain(), *tasks)
    return delays, ended


async def measure(
    *, workdir: Path, watchers: int = 10, runs: int = 4, agent_sleep_ms: float = 120.0, profile_path: Path | None = None
) -> dict[str, Any]:
    try:
        with postgres() as url:
            return await _measure(
                url,
                workdir=workdir,
                watchers=watchers,
                runs=runs,
                agent_sleep_ms=agent_sleep_ms,
                profile_path=profile_path,
            )
    except NoPostgres as exc:
        return {"watch_cross_replica_skipped": str(exc)}


async def profile(*, workdir: Path) -> ProfileSummary:
    """A cProfile of replica B while its WatchRun subscribers follow runs of replica A."""
    with tempfile.TemporaryDirectory(prefix="bench-cross-profile-") as tmp:
        path = Path(tmp) / "replica-b.prof"
        await measure(workdir=workdir, runs=2, profile_path=path)
        return load_profile(str(path), "replica B serving WatchRun for runs of replica A")


async def _measure(
    url: str, *, workdir: Path, watchers: int, runs: int, agent_sleep_ms: float, profile_path: Path | None
) -> dict[str, Any]:
    async with contextlib.AsyncExitStack() as stack:
        args = ("diagnose", "--database-url", url)
        a = await stack.enter_async_context(
            ServerProcess(*args, "--agent-sleep-ms", f"{agent_sleep_ms:g}", log_path=workdir / "replica-a.log")
        )
        extra = ("--profile", str(profile_path)) if profile_path is not None else ()
        b = await stack.enter_async_context(ServerProcess(*args, *extra, log_path=workdir / "replica-b.log"))
        client_a = await stack.enter_async_context(AsyncDiagnosisClient(a.target))
        client_b = await stack.enter_async_context(AsyncDiagnosisClient(b.target))
        await _one_run(client_a, client_b, 1)  # warm-up: B's listening connection, caches
        per_run: list[list[float]] = []
        ended = 0
        for _ in range(runs):
            delays, done = await _one_run(client_a, client_b, watchers)
            per_run.append(delays)
            ended += done
    everything = [d for delays in per_run for d in delays]
    p99s = [percentile(d, 99) for d in per_run if d]
    return {
        "watch_cross_replica_p99_ms": round(percentile(everything, 99), 2),
        "watch_cross_replica_p99_ms_rounds": [round(v, 2) for v in p99s],
        "watch_cross_replica_p50_ms": round(percentile(everything, 50), 2),
        "watch_cross_replica_events": len(everything),
        "watch_cross_replica_watchers": watchers,
        "watch_cross_replica_poll_interval_ms": 500,
        "watch_cross_replica_median_round_p99_ms": round(statistics.median(p99s), 2) if p99s else None,
        "watch_cross_replica_streams_ended": ended,
    }
