"""Fan-out: many `WatchRun` subscribers on one run; delivery delay of live events and the server's RSS.

The server (``bench.launcher diagnose``) runs in a child process so that its RSS is its own. Its agents
are the heuristic ones, each call delayed by a small sleep, and a run's first agent call waits until
the wanted number of subscribers follow the run: every event the subscribers receive is then live
(published to them by the hub, not replayed from the store). Delay = receive time minus the event's
timestamp, both from this machine's clock. The baseline is the transport's own fan-out: the no-op
server (``bench.launcher noop``) broadcasting the same events, at the same gaps, to as many subscribers.
Rounds alternate between the two; the best round (lowest p99) of each counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc.aio

from bench.capture import QUESTION, SCENARIO
from bench.launcher import save_messages
from bench.profiling import ProfileSummary, load_profile
from bench.servers import ServerProcess, cpu_seconds, peak_rss_mb, rss_mb
from bench.timing import percentile
from diagnosis import AsyncDiagnosisClient

# Streams per connection: several connections, as many clients would have.
STREAMS_PER_CHANNEL = 100
RUN_TIMEOUT_S = 90.0
# The no-op's pause between the last subscriber attaching and its first event.
NOOP_SETTLE_MS = 250.0


def _channel(target: str, index: int) -> grpc.aio.Channel:
    # A local subchannel pool: each channel its own connection.
    options = [("grpc.use_local_subchannel_pool", 1), ("grpc.bench_channel", index)]
    return grpc.aio.insecure_channel(target, options=options)


@dataclass
class Fanout:
    delays_ms: list[float] = field(default_factory=list)
    by_sequence: dict[int, list[float]] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)
    # The first subscriber's messages (WatchRunResponse: node events and tool call progress, serialized) and
    # the time between them, for the no-op's replay.
    events: list[bytes] = field(default_factory=list)
    gaps_ms: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0
    max_rss_mb: float | None = None


async def _follow(target: str, subscribers: int, pid: int, run_id: str | None) -> Fanout:
    """``subscribers`` watchers of ``run_id`` (None: of a run started here) until it ends."""
    channels = [_channel(target, i) for i in range((subscribers + STREAMS_PER_CHANNEL - 1) // STREAMS_PER_CHANNEL)]
    clients = [AsyncDiagnosisClient(target, channel=channel) for channel in channels]
    out = Fanout(counts=[0] * subscribers)
    rss_samples: list[float] = []
    stamps: list[int] = []
    try:
        diagnose_stream = None
        if run_id is None:
            diagnose_stream = clients[0].diagnose(QUESTION, scenario=SCENARIO, timeout=RUN_TIMEOUT_S)
            run_id = (await anext(diagnose_stream)).run_id

        async def drain() -> None:
            if diagnose_stream is not None:
                async for _ in diagnose_stream:
                    pass

        async def watch(index: int, followed: str) -> None:
            client = clients[index % len(clients)]
            async for response in client.watch_run(followed, timeout=RUN_TIMEOUT_S):
                received = time.time_ns()
                kind = response.WhichOneof("kind")
                if kind == "event":
                    stamp = response.event.timestamp.ToNanoseconds()
                    delay = (received - stamp) / 1e6
                    out.delays_ms.append(delay)
                    out.by_sequence.setdefault(response.event.sequence, []).append(delay)
                    out.counts[index] += 1
                if index == 0 and kind in ("event", "tool_call"):
                    # The no-op broadcasts every message the watchers got (tool call progress too), at its gaps.
                    out.events.append(response.SerializeToString())
                    message = response.event if kind == "event" else response.tool_call
                    stamps.append(message.timestamp.ToNanoseconds())

        async def sample_rss() -> None:
            while True:
                value = rss_mb(pid)
                if value is not None:
                    rss_samples.append(value)
                await asyncio.sleep(0.05)

        started = time.perf_counter()
        runner = asyncio.create_task(drain())
        sampler = asyncio.create_task(sample_rss())
        try:
            await asyncio.gather(*(watch(i, run_id) for i in range(subscribers)))
            await runner
        finally:
            sampler.cancel()
        out.elapsed_s = time.perf_counter() - started
    finally:
        for client in clients:
            await client.close()
        for channel in channels:
            await channel.close()
    out.gaps_ms = [(later - earlier) / 1e6 for earlier, later in itertools.pairwise(stamps)]
    out.max_rss_mb = max(rss_samples, default=None)
    return out


def _ms(value: float) -> float:
    return round(value, 3)


def _round_figures(result: Fanout, prefix: str) -> dict[str, object]:
    return {
        f"{prefix}p50_ms": _ms(percentile(result.delays_ms, 50)),
        f"{prefix}p99_ms": _ms(percentile(result.delays_ms, 99)),
    }


async def measure(
    *,
    workdir: Path | None = None,
    subscribers: int = 1000,
    agent_sleep_ms: float = 20.0,
    rounds: int = 3,
    profile_path: Path | None = None,
) -> dict[str, object]:
    """p50/p99 delivery delay of live events to ``subscribers`` watchers of one run, and the server's RSS.

    The baseline: the no-op server broadcasting the same events, at the same gaps, to as many watchers.
    Rounds alternate between the two (one run each); the round with the lowest p99 of each counts.
    """
    with tempfile.TemporaryDirectory(prefix="bench-fanout-") as tmp:
        base = workdir or Path(tmp)
        args = [
            "diagnose",
            "--database-url",
            f"sqlite+aiosqlite:///{Path(tmp) / 'fanout.db'}",
            "--agent-sleep-ms",
            f"{agent_sleep_ms:g}",
            "--gate-subscribers",
            str(subscribers),
        ]
        if profile_path is not None:
            args += ["--profile", str(profile_path)]
            rounds = 1
        ours: list[Fanout] = []
        theirs: list[Fanout] = []
        async with contextlib.AsyncExitStack() as stack:
            server = await stack.enter_async_context(ServerProcess(*args, log_path=base / "fanout-server.log"))
            idle_rss = rss_mb(server.pid)
            cpu_before = cpu_seconds(server.pid)
            noop: ServerProcess | None = None
            for _ in range(rounds):
                ours.append(await _follow(server.target, subscribers, server.pid, None))
                if profile_path is not None or not ours[0].events:
                    continue
                if noop is None:
                    events_path = Path(tmp) / "events.json"
                    save_messages(events_path, ours[0].events)
                    gaps = [NOOP_SETTLE_MS, *ours[0].gaps_ms]
                    noop_args = [
                        "noop",
                        "--watch-events",
                        str(events_path),
                        "--watch-subscribers",
                        str(subscribers),
                        "--event-gaps-ms",
                        ",".join(f"{gap:.3f}" for gap in gaps),
                    ]
                    noop = await stack.enter_async_context(
                        ServerProcess(*noop_args, log_path=base / "fanout-noop-server.log")
                    )
                theirs.append(await _follow(noop.target, subscribers, noop.pid, "run-noop"))
            cpu_after = cpu_seconds(server.pid)
            peak = peak_rss_mb(server.pid)
        best = min(ours, key=lambda r: percentile(r.delays_ms, 99))
        rss = [r.max_rss_mb for r in ours if r.max_rss_mb is not None]
        out: dict[str, object] = {
            "watch_subscribers": subscribers,
            **_round_figures(best, "watch_"),
            "watch_max_ms": _ms(max(best.delays_ms, default=math.nan)),
            "watch_p99_ms_by_event": {str(seq): _ms(percentile(d, 99)) for seq, d in sorted(best.by_sequence.items())},
            "watch_p99_ms_rounds": [_ms(percentile(r.delays_ms, 99)) for r in ours],
            "watch_event_gaps_ms": [_ms(gap) for gap in best.gaps_ms],
            "watch_events_per_subscriber": round(sum(best.counts) / max(len(best.counts), 1), 2),
            "watch_run_s": round(best.elapsed_s, 3),
            "watch_rss_mb": round(max(rss), 1) if rss else None,
            "watch_peak_rss_mb": None if peak is None else round(peak, 1),
            "watch_idle_rss_mb": None if idle_rss is None else round(idle_rss, 1),
            "watch_server_cpu_s_per_run": None
            if cpu_before is None or cpu_after is None
            else round((cpu_after - cpu_before) / len(ours), 3),
        }
        if theirs:
            noop_best = min(theirs, key=lambda r: percentile(r.delays_ms, 99))
            noop_rss = [r.max_rss_mb for r in theirs if r.max_rss_mb is not None]
            out |= _round_figures(noop_best, "noop_watch_")
            out["noop_watch_p99_ms_rounds"] = [_ms(percentile(r.delays_ms, 99)) for r in theirs]
            out["noop_watch_rss_mb"] = round(max(noop_rss), 1) if noop_rss else None
            noop_p99 = percentile(noop_best.delays_ms, 99)
            if noop_p99 > 0:
                out["watch_p99_vs_noop"] = round(percentile(best.delays_ms, 99) / noop_p99, 3)
            # Each round's own ratio (ours and the no-op's run back to back): the spread.
            pairs = zip(ours[: len(theirs)], theirs, strict=True)
            per_round = [
                round(percentile(o.delays_ms, 99) / percentile(t.delays_ms, 99), 3)
                for o, t in pairs
                if t.delays_ms and percentile(t.delays_ms, 99) > 0
            ]
            out["watch_p99_vs_noop_rounds"] = per_round
            if per_round:
                out["watch_p99_vs_noop"] = round(statistics.median(per_round), 3)
        return out


async def profile(*, workdir: Path, subscribers: int = 1000) -> ProfileSummary:
    """A cProfile of the server while it fans one run out to ``subscribers`` watchers."""
    with tempfile.TemporaryDirectory(prefix="bench-fanout-profile-") as tmp:
        path = Path(tmp) / "server.prof"
        await measure(workdir=workdir, subscribers=subscribers, profile_path=path)
        return load_profile(str(path), f"the server fanning one run out to {subscribers} WatchRun subscribers")


if __name__ == "__main__":
    print(asyncio.run(measure()))
