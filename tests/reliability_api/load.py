"""`make load`: many concurrent Diagnose streams and WatchRun subscribers against a real `diagnosis serve`.

The server is a subprocess in its default configuration (embedded heuristic provider, SQLite store in a
fresh temporary folder) on a loopback port. For ``LOAD_SECONDS`` (60), ``LOAD_STREAMS`` (200) callers each
run Diagnose streams back to back, and ``LOAD_WATCHERS`` (500) subscribers each follow one of the newest
runs with WatchRun, again and again. Then the callers stop, the in-flight runs finish, the server is
stopped with SIGTERM and the store is read back.

Concurrent runs: the server caps them (``max_concurrent_runs``, 32 by default) and answers RESOURCE_EXHAUSTED
above the cap. This test sizes the server for its callers (DIAGNOSIS_MAX_CONCURRENT_RUNS = max(256,
LOAD_STREAMS), or ``LOAD_MAX_RUNS``), so any RESOURCE_EXHAUSTED is a failure like any other error.

It fails (exit status 1) on any RPC error, any started run not stored SUCCESS (a lost run), a run stored
that no caller started, a watch stream whose events are not 1..n followed by its end, or the server's
resident memory growing more than ``LOAD_MAX_RSS_GROWTH`` (0.5 = 50 %) between the middle and the end of
the load. It prints runs/s, p50/p99 Diagnose latency, watch deliveries, errors and the server's RSS.

    make load
    LOAD_SECONDS=10 LOAD_STREAMS=50 LOAD_WATCHERS=100 make load
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import grpc.aio

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from tests.support.serve import ServeProcess, start_serve

from .stress import env_float, env_int, percentile, stored_statuses, verdict

CHANNELS = 8  # client connections the callers are spread over
CALL_TIMEOUT_S = 120.0
# After the load stops, how long the callers get to finish what they started.
DRAIN_TIMEOUT_S = 120.0
QUESTIONS = (
    "Why is checkout-api returning 503s?",
    "What is wrong with the service right now?",
    "Why did latency go up in the last hour?",
    "Is the last deploy the cause of the errors?",
)


@dataclass(frozen=True)
class LoadConfig:
    seconds: float
    streams: int
    watchers: int
    max_runs: int
    max_rss_growth: float

    @classmethod
    def from_env(cls) -> LoadConfig:
        streams = env_int("LOAD_STREAMS", 200)
        config = cls(
            seconds=env_float("LOAD_SECONDS", 60.0),
            streams=streams,
            watchers=env_int("LOAD_WATCHERS", 500),
            max_runs=env_int("LOAD_MAX_RUNS", max(256, streams)),
            max_rss_growth=env_float("LOAD_MAX_RSS_GROWTH", 0.5),
        )
        if config.seconds <= 0 or config.streams < 1 or config.watchers < 0 or config.max_runs < 1:
            raise SystemExit("load: LOAD_SECONDS > 0, LOAD_STREAMS >= 1, LOAD_WATCHERS >= 0, LOAD_MAX_RUNS >= 1")
        return config


@dataclass
class Tally:
    started: set[str] = field(default_factory=set)
    completed: int = 0
    not_success: int = 0
    latencies: list[float] = field(default_factory=list)
    diagnose_events: int = 0
    watches: int = 0
    watch_deliveries: int = 0
    watch_mismatches: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=64))


async def _diagnose_loop(
    stub: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub, scenarios: list[str], tally: Tally, until: float
) -> None:
    rng = random.Random()
    while time.monotonic() < until:
        request = pb.DiagnoseRequest(
            question=rng.choice(QUESTIONS), context=pb.RequestContext(scenario=rng.choice(scenarios))
        )
        began = time.perf_counter()
        final: run_pb2.DiagnosisRun | None = None
        try:
            async for message in stub.Diagnose(request, timeout=CALL_TIMEOUT_S):
                kind = message.WhichOneof("kind")
                if kind == "started":
                    tally.started.add(message.run_id)
                    tally.recent.append(message.run_id)
                elif kind == "event":
                    tally.diagnose_events += 1
                else:
                    final = message.run
        except grpc.aio.AioRpcError as exc:
            tally.errors[f"Diagnose {exc.code().name}"] += 1
            continue
        tally.latencies.append(time.perf_counter() - began)
        tally.completed += 1
        if final is None:
            tally.errors["Diagnose without a final run"] += 1
        elif final.status != run_pb2.RUN_STATUS_SUCCESS:
            tally.not_success += 1


async def _watch_loop(stub: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub, tally: Tally, until: float) -> None:
    rng = random.Random()
    while time.monotonic() < until:
        if not tally.recent:
            await asyncio.sleep(0.05)
            continue
        run_id = rng.choice(tuple(tally.recent))
        sequences: list[int] = []
        ended: pb.RunEnded | None = None
        try:
            async for message in stub.WatchRun(pb.WatchRunRequest(run_id=run_id), timeout=CALL_TIMEOUT_S):
                if message.WhichOneof("kind") == "event":
                    sequences.append(message.event.sequence)
                else:
                    ended = message.ended
        except grpc.aio.AioRpcError as exc:
            tally.errors[f"WatchRun {exc.code().name}"] += 1
            continue
        tally.watches += 1
        tally.watch_deliveries += len(sequences)
        whole = sequences == list(range(1, len(sequences) + 1)) and bool(sequences)
        if ended is None or not whole or ended.last_sequence != len(sequences):
            tally.watch_mismatches += 1


async def _sample_rss(server: ServeProcess, samples: list[tuple[float, int]], until: float) -> None:
    began = time.monotonic()
    while time.monotonic() < until:
        samples.append((time.monotonic() - began, server.rss_kib()))
        await asyncio.sleep(1.0)


async def _drive(server: ServeProcess, config: LoadConfig, tally: Tally, rss: list[tuple[float, int]]) -> float:
    """Runs the load; the wall-clock seconds from its start until every caller has finished."""
    # Separate connections: each channel its own subchannel pool.
    channels = [
        grpc.aio.insecure_channel(server.target, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(CHANNELS)
    ]
    try:
        stubs = [diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel) for channel in channels]
        scenarios = [s.name for s in (await stubs[0].ListScenarios(pb.ListScenariosRequest(), timeout=10)).scenarios]
        began = time.monotonic()
        until = began + config.seconds
        sampler = asyncio.create_task(_sample_rss(server, rss, until))
        callers = [
            asyncio.create_task(_diagnose_loop(stubs[n % CHANNELS], scenarios, tally, until))
            for n in range(config.streams)
        ]
        callers += [asyncio.create_task(_watch_loop(stubs[n % CHANNELS], tally, until)) for n in range(config.watchers)]
        async with asyncio.timeout(config.seconds + DRAIN_TIMEOUT_S):
            await asyncio.gather(*callers)
        elapsed = time.monotonic() - began
        rss.append((elapsed, server.rss_kib()))
        await sampler
        return elapsed
    finally:
        for channel in channels:
            await channel.close()


def _rss_at(samples: list[tuple[float, int]], moment: float) -> int:
    return min(samples, key=lambda sample: abs(sample[0] - moment))[1]


def main() -> int:
    config = LoadConfig.from_env()
    workdir = Path(tempfile.mkdtemp(prefix="diagnosis-load-"))
    database = workdir / "load.db"
    env = {"DIAGNOSIS_MAX_CONCURRENT_RUNS": str(config.max_runs)}
    print(
        f"load: {config.seconds:g} s, {config.streams} Diagnose streams, {config.watchers} WatchRun subscribers, "
        f"max_concurrent_runs {config.max_runs}; store {database}",
        flush=True,
    )
    server = start_serve(workdir, database, env=env)
    tally = Tally()
    rss: list[tuple[float, int]] = []
    try:
        rss_start = server.rss_kib()
        cpu_start = server.cpu_seconds()
        elapsed = asyncio.run(_drive(server, config, tally, rss))
        cpu = server.cpu_seconds() - cpu_start
    finally:
        exit_status = server.stop(timeout=60)
    stored = stored_statuses(database)

    lost = [run_id for run_id in tally.started if stored.get(run_id) != run_pb2.RUN_STATUS_SUCCESS]
    strangers = [run_id for run_id in stored if run_id not in tally.started]
    rss_middle = _rss_at(rss, config.seconds / 2)
    rss_end = rss[-1][1]
    rss_peak = max(value for _, value in rss)
    growth = (rss_end - rss_middle) / rss_middle
    total_growth = (rss_end - rss_start) / rss_start
    errors = sum(tally.errors.values())

    print(f"runs: {tally.completed} completed in {elapsed:.1f} s ({tally.completed / elapsed:.1f} runs/s); "
          f"{len(tally.started)} started, {sum(s == run_pb2.RUN_STATUS_SUCCESS for s in stored.values())} stored "
          f"SUCCESS, {len(lost)} lost, {len(strangers)} unexpected, {tally.not_success} not SUCCESS")  # fmt: skip
    print(f"Diagnose latency: p50 {percentile(tally.latencies, 0.5) * 1000:.0f} ms, "
          f"p99 {percentile(tally.latencies, 0.99) * 1000:.0f} ms, "
          f"max {max(tally.latencies, default=float('nan')) * 1000:.0f} ms; "
          f"{tally.diagnose_events} events streamed")  # fmt: skip
    print(f"WatchRun: {tally.watches} streams to their end, {tally.watch_deliveries} event deliveries "
          f"({tally.watch_deliveries / elapsed:.0f}/s), {tally.watch_mismatches} incomplete")  # fmt: skip
    print(f"errors: {errors}" + (f" {dict(tally.errors)}" if errors else ""))
    print(f"server RSS: start {rss_start / 1024:.1f} MiB, middle {rss_middle / 1024:.1f} MiB, "
          f"end {rss_end / 1024:.1f} MiB, peak {rss_peak / 1024:.1f} MiB "
          f"(middle to end {growth * 100:+.1f} %, start to end {total_growth * 100:+.1f} %)")  # fmt: skip
    print(f"server CPU: {cpu:.1f} s in {elapsed:.1f} s ({cpu / elapsed * 100:.0f} % of one core); "
          f"exit status after SIGTERM: {exit_status}")  # fmt: skip

    failures = []
    if errors:
        failures.append(f"{errors} RPC errors")
    if lost or tally.not_success or strangers:
        failures.append(f"{len(lost)} lost, {tally.not_success} not SUCCESS, {len(strangers)} unexpected runs")
    if tally.watch_mismatches:
        failures.append(f"{tally.watch_mismatches} incomplete watch streams")
    if growth > config.max_rss_growth:
        failures.append(
            f"RSS grew {growth * 100:.0f} % from the middle to the end (limit {config.max_rss_growth * 100:.0f} %)"
        )
    if not tally.completed:
        failures.append("no run completed")
    return verdict("load", failures, exit_status, server, workdir)


if __name__ == "__main__":
    sys.exit(main())
