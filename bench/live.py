"""A heuristic run over live tools that answer after 50 ms each: its wall time over the sum of its calls' latencies.

Each tool of the bench's run (the ``checkout-oom`` pack's) makes a real HTTP request to a loopback server that
answers after ``DELAY_S`` (a threaded server: requests in flight overlap, as an upstream's do), then gives the
pack's answer. Ours: the run with the default concurrency limits; the baseline in the same run: the same run with
one call at a time (``max_concurrent_tool_calls=1``), whose wall time is about the sum. The sum is of the calls'
own recorded durations (``tool_invocation.duration_ms``). Rounds alternate; each round's ratio is one sample.
"""

from __future__ import annotations

import dataclasses
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

from bench.capture import QUESTION, SCENARIO, orchestrator
from diagnosis.v1 import run_pb2
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.graph.context import ToolEnvironment
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import MemoryStore
from diagnosis_server.tools.base import Tool, Toolset

DELAY_S = 0.05


@contextmanager
def slow_upstream(delay_s: float = DELAY_S) -> Iterator[str]:
    """A loopback HTTP server answering every GET after ``delay_s``; its URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            time.sleep(delay_s)
            body = b'{"status":"success"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()


class LiveTool:
    """A pack tool behind a live upstream: one HTTP request (answered after the delay), then the pack's answer."""

    def __init__(self, tool: Tool, client: httpx2.AsyncClient) -> None:
        self._tool = tool
        self._client = client
        self.name = tool.name
        self.description = tool.description
        self.input_schema = tool.input_schema

    async def call(self, arguments: JsonObject) -> JsonValue:
        response = await self._client.get("/api/v1/query", params={"tool": self.name})
        response.raise_for_status()
        return await self._tool.call(arguments)


def live_orchestrator(base: Orchestrator, client: httpx2.AsyncClient, *, concurrency: int | None) -> Orchestrator:
    def tools_for(scenario: str) -> ToolEnvironment:
        tools = base.tools_for(scenario)
        live = Toolset(LiveTool(tool, client) for tool in tools.toolset.as_mapping().values())
        return ToolEnvironment(toolset=live, context=tools.context)

    limits = base.limits
    if concurrency is not None:
        limits = dataclasses.replace(limits, max_concurrent_tool_calls=concurrency)
    return Orchestrator(
        store=base.store,
        provider=base.provider,
        tools_for=tools_for,
        catalog=base.catalog,
        nodes=base.nodes,
        limits=limits,
    )


async def _wall_and_sum(runner: Orchestrator, store: MemoryStore) -> tuple[float, float, int]:
    started = time.perf_counter()
    run = await runner.run(question=QUESTION, scenario=SCENARIO)
    wall = time.perf_counter() - started
    if run.status != run_pb2.RUN_STATUS_SUCCESS:
        raise RuntimeError(f"the live bench run ended {run_pb2.RunStatus.Name(run.status)}: {run.failure_reason}")
    invocations = await store.list_tool_invocations(run.run_id)
    return wall, sum(i.duration_ms for i in invocations) / 1000.0, len(invocations)


async def measure(*, rounds: int = 5) -> dict[str, Any]:
    store = MemoryStore(owner="bench-live")
    base = orchestrator(store)
    with slow_upstream() as url:
        limits = httpx2.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx2.AsyncClient(base_url=url, timeout=10.0, limits=limits, trust_env=False) as client:
            ours = live_orchestrator(base, client, concurrency=None)
            one_at_a_time = live_orchestrator(base, client, concurrency=1)
            await _wall_and_sum(ours, store)
            figures: dict[str, list[float]] = {"ours": [], "sequential": [], "wall": [], "sum": [], "vs_one": []}
            calls = 0
            for _ in range(rounds):
                one_wall, total, calls = await _wall_and_sum(one_at_a_time, store)
                figures["sequential"].append(one_wall / total)
                wall, total, calls = await _wall_and_sum(ours, store)
                figures["ours"].append(wall / total)
                figures["vs_one"].append(wall / one_wall)
                figures["wall"].append(wall * 1000)
                figures["sum"].append(total * 1000)
    return {
        "live_wall_vs_sum_of_calls": round(statistics.median(figures["ours"]), 3),
        "live_wall_vs_sum_of_calls_rounds": [round(v, 3) for v in figures["ours"]],
        "live_wall_ms": round(statistics.median(figures["wall"]), 1),
        "live_sum_of_calls_ms": round(statistics.median(figures["sum"]), 1),
        "live_sequential_wall_vs_sum_of_calls": round(statistics.median(figures["sequential"]), 3),
        "live_sequential_wall_vs_sum_of_calls_rounds": [round(v, 3) for v in figures["sequential"]],
        # Calls in flight together take longer each on a busy machine: the wall time against the one-at-a-time run's.
        "live_wall_vs_one_at_a_time": round(statistics.median(figures["vs_one"]), 3),
        "live_tool_calls_per_run": calls,
        "live_call_delay_ms": DELAY_S * 1000,
        "live_max_concurrent_tool_calls": base.limits.max_concurrent_tool_calls,
    }
