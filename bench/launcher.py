"""A server for a benchmark, in a process of its own (so its CPU and RSS are its own).

``python -m bench.launcher diagnose --database-url URL [--agent-sleep-ms MS] [--gate-subscribers N]
[--max-concurrent-runs N] [--scenarios-dir DIR] [--profile PATH]``: the real service (``diagnosis serve``'s
``serve``) with the heuristic agents (over the packs of DIR if given), optionally each agent call delayed by a
small sleep, and the planner's first call of a run held until
N subscribers follow that run and have read its (empty) history from the store: a fan-out then
measures live delivery only.

``python -m bench.launcher noop [--messages PATH] [--watch-events PATH --watch-subscribers N
--event-gaps-ms LIST] [--profile PATH]``: a grpc.aio server with generic handlers and no work of its
own, the transport's cost: ``Diagnose`` streams the pre-built messages of PATH (a JSON list of base64
serialized ``DiagnoseResponse``); ``WatchRun`` waits for N subscribers, then broadcasts the messages of
PATH (serialized ``WatchRunResponse``: node events and tool call progress, stamped when sent) at the given
gaps, then ``ended``.

Either prints ``PORT <port>`` on stdout once serving, and stops on SIGTERM; with ``--profile`` it
writes a cProfile to PATH before exiting: of its whole life, or with ``--gate-subscribers`` from the
moment the first run's gate opens (the fan-out itself).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import cProfile
import json
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from diagnosis.v1 import diagnosis_service_pb2, run_pb2
from diagnosis_server.agents.base import Agent, AgentReply, AgentRequest, AgentRole
from diagnosis_server.agents.heuristic import create_provider
from diagnosis_server.api import RunningServer, configure_logging
from diagnosis_server.api.hub import EventHub
from diagnosis_server.cli.serve import serve
from diagnosis_server.settings import load_settings
from diagnosis_server.store import RunStore

DIAGNOSIS_SERVICE = "diagnosis.v1.DiagnosisService"
GATE_TIMEOUT_S = 60.0
# Called once when a run's gate opens (the profiler's start, when profiling a fan-out).
_GATE_OPENED: list[Callable[[], object]] = []
# A store read this fast is not waiting behind other readers.
SETTLED_READ_S = 0.005


class _SleepyAgent:
    def __init__(self, inner: Agent, provider: SleepyProvider) -> None:
        self._inner = inner
        self._provider = provider

    async def run(self, request: AgentRequest) -> AgentReply:
        if request.role == "planner" and request.attempt == 1 and request.cycle == 1:
            await self._provider.wait_for_subscribers(request.run_id)
        if self._provider.sleep_s > 0:
            await asyncio.sleep(self._provider.sleep_s)
        return await self._inner.run(request)


class SleepyProvider:
    """The heuristic agents, each call delayed by ``sleep_s``; a run's first call waits for subscribers."""

    name = "heuristic"

    def __init__(self, *, sleep_s: float, gate_subscribers: int) -> None:
        # As the service makes it: the rules in force are read (and their patterns compiled) at start-up.
        self._heuristic = create_provider()
        self.sleep_s = sleep_s
        self.gate_subscribers = gate_subscribers
        self.hub: EventHub | None = None
        self.repository: RunStore | None = None

    def agent(self, role: AgentRole) -> Agent:
        return _SleepyAgent(self._heuristic.agent(role), self)

    async def wait_for_subscribers(self, run_id: str) -> None:
        if self.gate_subscribers <= 0 or self.hub is None:
            return
        # The Diagnose stream that started the run holds one subscription of its own.
        wanted = self.gate_subscribers + 1
        deadline = time.monotonic() + GATE_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.hub.subscriber_count(run_id) >= wanted:
                break
            await asyncio.sleep(0.01)
        # Each subscriber reads the store once it is subscribed (its replay): wait until those reads are
        # done, i.e. until a read of our own is not queued behind others, twice in a row.
        quick = 0
        while self.repository is not None and quick < 2 and time.monotonic() < deadline:
            started = time.perf_counter()
            await self.repository.get_run(run_id)
            quick = quick + 1 if time.perf_counter() - started < SETTLED_READ_S else 0
            await asyncio.sleep(0.01)
        while _GATE_OPENED:
            _GATE_OPENED.pop()()


def _announce(port: int) -> None:
    print(f"PORT {port}", flush=True)


async def _serve_diagnose(args: argparse.Namespace) -> int:
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=args.database_url,
        metrics_address="",
        http_address="",
        log_level=args.log_level,
        shutdown_grace_s=2.0,
        max_concurrent_runs=args.max_concurrent_runs,
        **({"scenarios_dir": args.scenarios_dir} if args.scenarios_dir else {}),
    )
    options: dict[str, Any] = {}
    provider: SleepyProvider | None = None
    if args.agent_sleep_ms > 0 or args.gate_subscribers > 0:
        provider = SleepyProvider(sleep_s=args.agent_sleep_ms / 1000, gate_subscribers=args.gate_subscribers)
        options["provider"] = provider

    def on_serving(running: RunningServer) -> None:
        if provider is not None:
            provider.hub = running.hub
            provider.repository = running.repository
        _announce(running.port)

    return await serve(settings, on_serving=on_serving, **options)


def load_messages(path: Path) -> list[bytes]:
    return [base64.b64decode(item) for item in json.loads(path.read_text(encoding="utf-8"))]


def save_messages(path: Path, messages: list[bytes]) -> None:
    path.write_text(json.dumps([base64.b64encode(item).decode("ascii") for item in messages]), encoding="utf-8")


class _Broadcast:
    """The no-op fan-out: once ``subscribers`` streams are open, the events go out at the given gaps."""

    def __init__(self, events: list[bytes], gaps_s: list[float], subscribers: int) -> None:
        self._events = [diagnosis_service_pb2.WatchRunResponse.FromString(item) for item in events]
        self._gaps_s = gaps_s
        self._subscribers = subscribers
        self._queues: list[asyncio.Queue[bytes | None]] = []
        self._attached = asyncio.Event()

    async def watch(self, request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._queues.append(queue)
        if len(self._queues) >= self._subscribers:
            self._attached.set()
        while (item := await queue.get()) is not None:
            yield item

    async def run(self) -> None:
        """One broadcast each time ``subscribers`` streams are open (a round), for as long as the server runs."""
        while True:
            await self._attached.wait()
            queues, self._queues = self._queues, []
            self._attached.clear()
            for response, gap in zip(self._events, self._gaps_s, strict=False):
                await asyncio.sleep(gap)
                stamped = response.event if response.WhichOneof("kind") == "event" else response.tool_call
                stamped.timestamp.GetCurrentTime()
                message = response.SerializeToString()
                for queue in queues:
                    queue.put_nowait(message)
            last = max((r.event.sequence for r in self._events if r.WhichOneof("kind") == "event"), default=0)
            ended = diagnosis_service_pb2.WatchRunResponse(
                ended=diagnosis_service_pb2.RunEnded(status=run_pb2.RUN_STATUS_SUCCESS, last_sequence=last)
            ).SerializeToString()
            for queue in queues:
                queue.put_nowait(ended)
                queue.put_nowait(None)


async def _serve_noop(args: argparse.Namespace) -> int:
    methods: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    background: list[asyncio.Task[None]] = []
    if args.messages:
        messages = load_messages(Path(args.messages))

        async def diagnose(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> AsyncIterator[bytes]:
            for message in messages:
                yield message

        methods["Diagnose"] = grpc.unary_stream_rpc_method_handler(diagnose)
    if args.watch_events:
        gaps = [float(item) / 1000 for item in args.event_gaps_ms.split(",") if item.strip()]
        broadcast = _Broadcast(load_messages(Path(args.watch_events)), gaps, args.watch_subscribers)
        methods["WatchRun"] = grpc.unary_stream_rpc_method_handler(broadcast.watch)
        background.append(asyncio.create_task(broadcast.run()))
    # No (de)serializers: requests are ignored and the pre-built bytes go out as they are.
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(DIAGNOSIS_SERVICE, methods)])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    _announce(port)
    await stop.wait()
    for task in background:
        task.cancel()
    await server.stop(1.0)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.launcher", description=__doc__.splitlines()[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    real = modes.add_parser("diagnose", help="the real service with the heuristic agents")
    real.add_argument("--database-url", required=True)
    real.add_argument("--agent-sleep-ms", type=float, default=0.0)
    real.add_argument("--gate-subscribers", type=int, default=0)
    real.add_argument("--max-concurrent-runs", type=int, default=64)
    real.add_argument("--log-level", default="info")
    real.add_argument("--scenarios-dir", default="", help="the scenario packs of this directory, not the bundled")
    noop = modes.add_parser("noop", help="a server streaming pre-built messages")
    noop.add_argument("--messages", default="", help="Diagnose: stream these messages")
    noop.add_argument("--watch-events", default="", help="WatchRun: broadcast these events")
    noop.add_argument("--watch-subscribers", type=int, default=1)
    noop.add_argument("--event-gaps-ms", default="", help="comma-separated gaps before each event")
    for sub in (real, noop):
        sub.add_argument("--profile", default="", help="write a cProfile of the process's life to this path")
    args = parser.parse_args(argv)
    configure_logging(getattr(args, "log_level", "warning"), stream=sys.stderr)
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        if getattr(args, "gate_subscribers", 0) > 0:
            # A fan-out's slow path starts when the subscribers are attached: profile from there.
            _GATE_OPENED.append(profiler.enable)
        else:
            profiler.enable()
    try:
        return asyncio.run(_serve_diagnose(args) if args.mode == "diagnose" else _serve_noop(args))
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)


if __name__ == "__main__":
    raise SystemExit(main())
