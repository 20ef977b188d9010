"""End to end: `Diagnose` runs/s over loopback vs a no-op server streaming the same messages.

The real server (``bench.launcher diagnose``: heuristic agents, SQLite store) runs in a child process;
so does the no-op server (``bench.launcher noop``), a generic handler at the same method that streams
the recorded bytes of a real `Diagnose` stream (same count, same sizes) and does nothing else. One
client process (``AsyncDiagnosisClient``, grpc.aio) drives both at concurrency 1 and 16, rounds
interleaved so that noise on the machine falls on both; the best round of each counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.capture import QUESTION, SCENARIO, CapturedRun, capture, orchestrator
from bench.launcher import save_messages
from bench.profiling import ProfileSummary, load_profile
from bench.servers import ServerProcess, cpu_seconds
from bench.store import StoreBench
from bench.timing import percentile
from diagnosis import AsyncDiagnosisClient
from diagnosis.v1 import diagnosis_service_pb2
from diagnosis_server.store import MemoryStore


@dataclass(frozen=True, slots=True)
class Throughput:
    streams_per_s: float
    streams: int
    messages: int
    p50_ms: float
    server_cpu_ms_per_stream: float | None


async def _one_stream(client: AsyncDiagnosisClient) -> list[diagnosis_service_pb2.DiagnoseResponse]:
    return [message async for message in client.diagnose(QUESTION, scenario=SCENARIO)]


async def throughput(client: AsyncDiagnosisClient, *, concurrency: int, duration_s: float, pid: int) -> Throughput:
    """``concurrency`` callers, each starting a new stream as soon as its last one ended, for ``duration_s``.

    Every stream started is read to its end and counted; the elapsed time runs until the last ends.
    """
    latencies: list[float] = []
    messages = 0
    deadline = time.perf_counter() + duration_s

    async def caller() -> None:
        nonlocal messages
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            async for _ in client.diagnose(QUESTION, scenario=SCENARIO):
                messages += 1
            latencies.append(time.perf_counter() - started)

    cpu_before = cpu_seconds(pid)
    started = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    cpu_after = cpu_seconds(pid)
    server_cpu = None
    if cpu_before is not None and cpu_after is not None and latencies:
        server_cpu = (cpu_after - cpu_before) / len(latencies) * 1000
    return Throughput(
        streams_per_s=len(latencies) / elapsed,
        streams=len(latencies),
        messages=messages,
        p50_ms=percentile(latencies, 50) * 1000,
        server_cpu_ms_per_stream=server_cpu,
    )


async def record_stream(client: AsyncDiagnosisClient, *, samples: int) -> tuple[float, list[bytes]]:
    """The average message count of ``samples`` Diagnose streams, and one stream's serialized messages."""
    counts: list[int] = []
    last: list[diagnosis_service_pb2.DiagnoseResponse] = []
    for _ in range(samples):
        last = await _one_stream(client)
        counts.append(len(last))
    return sum(counts) / len(counts), [message.SerializeToString() for message in last]


def noop_messages(recorded: list[bytes], count: int) -> list[bytes]:
    """``count`` messages shaped like a Diagnose stream: the recorded ones, the middle repeated or cut."""
    if count <= len(recorded):
        return recorded[: max(count - 1, 0)] + recorded[-1:] if count else []
    middle = recorded[1:-1] or recorded[:1]
    extra = [middle[i % len(middle)] for i in range(count - len(recorded))]
    return recorded[:-1] + extra + recorded[-1:]


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


async def _floor_parts(captured: CapturedRun, store: StoreBench, runs: int) -> tuple[float, float]:
    """(in-process run CPU ms with no store, raw sqlite3 CPU ms for the run's rows), measured here and now."""
    bare = orchestrator(MemoryStore(owner="bench", copies=False))
    start = time.process_time()
    for _ in range(runs):
        await bare.run(question=QUESTION, scenario=SCENARIO)
    run_ms = (time.process_time() - start) / runs * 1000
    return run_ms, store.floor_cpu_ms(runs)


async def measure(
    *,
    workdir: Path | None = None,
    concurrencies: tuple[int, ...] = (1, 16),
    diagnose_s: float = 3.0,
    noop_s: float = 1.5,
    rounds: int = 3,
    samples: int = 4,
    captured: CapturedRun | None = None,
    floor_runs: int = 10,
) -> dict[str, object]:
    """Runs/s of Diagnose and of the no-op stream at each concurrency, and their ratio; at the largest
    concurrency, each round also measures the floor of a Diagnose's server CPU (``diagnose_cpu_vs_floor``):
    the in-process run with no store + the raw sqlite3 loop writing its rows + the no-op stream's server CPU.
    """
    captured = captured or await capture()
    with tempfile.TemporaryDirectory(prefix="bench-e2e-") as tmp:
        base = workdir or Path(tmp)
        database_url = f"sqlite+aiosqlite:///{Path(tmp) / 'e2e.db'}"
        async with contextlib.AsyncExitStack() as stack:
            real = await stack.enter_async_context(
                ServerProcess("diagnose", "--database-url", database_url, log_path=base / "e2e-server.log")
            )
            client = await stack.enter_async_context(AsyncDiagnosisClient(real.target))
            average, recorded = await record_stream(client, samples=samples)
            messages_path = Path(tmp) / "noop-messages.json"
            save_messages(messages_path, noop_messages(recorded, max(1, round(average))))
            noop = await stack.enter_async_context(
                ServerProcess("noop", "--messages", str(messages_path), log_path=base / "noop-server.log")
            )
            noop_client = await stack.enter_async_context(AsyncDiagnosisClient(noop.target))
            await _one_stream(noop_client)
            floor_store = StoreBench(captured, Path(tmp))
            await floor_store.open()
            stack.push_async_callback(floor_store.close)
            out: dict[str, object] = {
                "diagnose_messages_per_stream": round(average, 2),
                "diagnose_bytes_per_stream": sum(len(item) for item in recorded),
            }
            for concurrency in concurrencies:
                noops: list[Throughput] = []
                reals: list[Throughput] = []
                floors: list[tuple[float, float, float, float]] = []  # (ratio, run, sqlite, noop) per round
                for _ in range(rounds):
                    noops.append(
                        await throughput(noop_client, concurrency=concurrency, duration_s=noop_s, pid=noop.pid)
                    )
                    reals.append(await throughput(client, concurrency=concurrency, duration_s=diagnose_s, pid=real.pid))
                    ours_cpu, noop_cpu = reals[-1].server_cpu_ms_per_stream, noops[-1].server_cpu_ms_per_stream
                    if concurrency == max(concurrencies) and ours_cpu is not None and noop_cpu is not None:
                        run_ms, sqlite_ms = await _floor_parts(captured, floor_store, floor_runs)
                        floors.append((ours_cpu / (run_ms + sqlite_ms + noop_cpu), run_ms, sqlite_ms, noop_cpu))
                best_noop = max(noops, key=lambda t: t.streams_per_s)
                best_real = max(reals, key=lambda t: t.streams_per_s)
                c = f"c{concurrency}"
                out[f"diagnose_runs_per_s_{c}"] = round(best_real.streams_per_s, 2)
                out[f"noop_streams_per_s_{c}"] = round(best_noop.streams_per_s, 2)
                out[f"diagnose_vs_noop_{c}"] = round(best_real.streams_per_s / best_noop.streams_per_s, 5)
                out[f"diagnose_p50_ms_{c}"] = round(best_real.p50_ms, 2)
                out[f"noop_p50_ms_{c}"] = round(best_noop.p50_ms, 3)
                out[f"diagnose_server_cpu_ms_per_run_{c}"] = _round(best_real.server_cpu_ms_per_stream)
                out[f"noop_server_cpu_ms_per_stream_{c}"] = _round(best_noop.server_cpu_ms_per_stream, 3)
                if floors:
                    ratios = [f[0] for f in floors]
                    middle = sorted(floors)[len(floors) // 2]
                    out[f"diagnose_cpu_vs_floor_{c}"] = round(statistics.median(ratios), 3)
                    out[f"diagnose_cpu_vs_floor_{c}_rounds"] = [round(r, 3) for r in ratios]
                    out[f"diagnose_server_cpu_ms_{c}_rounds"] = [_round(t.server_cpu_ms_per_stream) for t in reals]
                    out[f"diagnose_floor_ms_{c}"] = round(middle[1] + middle[2] + middle[3], 3)
                    out[f"diagnose_floor_parts_ms_{c}"] = {
                        "run_no_store": round(middle[1], 3),
                        "raw_sqlite": round(middle[2], 3),
                        "noop_stream": round(middle[3], 3),
                    }
            return out


async def profile(*, workdir: Path, concurrency: int = 16, duration_s: float = 3.0) -> ProfileSummary:
    """A cProfile of the real server while it serves Diagnose at ``concurrency`` (the slow path)."""
    with tempfile.TemporaryDirectory(prefix="bench-e2e-profile-") as tmp:
        stats_path = Path(tmp) / "server.prof"
        database_url = f"sqlite+aiosqlite:///{Path(tmp) / 'e2e.db'}"
        args = ("diagnose", "--database-url", database_url, "--profile", str(stats_path))
        async with (
            ServerProcess(*args, log_path=workdir / "e2e-profile-server.log") as real,
            AsyncDiagnosisClient(real.target) as client,
        ):
            result = await throughput(client, concurrency=concurrency, duration_s=duration_s, pid=real.pid)
        return load_profile(str(stats_path), f"the Diagnose server at concurrency {concurrency}, {result.streams} runs")


if __name__ == "__main__":
    print(asyncio.run(measure()))
