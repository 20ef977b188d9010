"""Concurrent tool calls over a slow loopback Prometheus API: overlap, bounds, plan order, the per-source breaker."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.conversions import JsonObject, from_value
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.breaker import SourceBreaker
from diagnosis_server.tools.runner import InvocationIds, ToolRunner

from .conftest import free_port
from .helpers import opened
from .slow_prometheus import SlowPrometheus

OK = contracts_pb2.TOOL_INVOCATION_STATUS_OK
ERROR = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
TIMEOUT = contracts_pb2.TOOL_INVOCATION_STATUS_TIMEOUT


@pytest.fixture
def slow() -> Iterator[SlowPrometheus]:
    server = SlowPrometheus(0.3, {"q1": 0.6, "q2": 0.45, "q3": 0.3, "q4": 0.15})
    yield server
    server.upstream.close()


def _env(url: str) -> str:
    return f'[environments.prod]\ndefault = true\nprometheus = {{ url = "{url}", timeout_s = 5 }}\n'


def _runner(
    toolset: Toolset,
    recorded: list[contracts_pb2.ToolInvocation],
    *,
    progress: list[run_pb2.ToolCallEvent] | None = None,
    breaker: SourceBreaker | None = None,
    ids: InvocationIds | None = None,
    **limits: Any,
) -> ToolRunner:
    async def record(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    async def heard(event: run_pb2.ToolCallEvent) -> None:
        assert progress is not None
        progress.append(event)

    return ToolRunner(
        run_id="run-concurrent",
        toolset=toolset,
        recorder=record,
        breaker=breaker,
        ids=ids or InvocationIds(),
        on_progress=heard if progress is not None else None,
        **limits,
    )


def _queries(*names: str) -> list[tuple[str, JsonObject]]:
    return [("prometheus.query", {"query": name}) for name in names]


async def test_a_steps_calls_overlap_and_are_recorded_in_plan_order(slow: SlowPrometheus, tmp_path: Path) -> None:
    # The first call answers last and the last first: the record follows the plan, not the answers.
    recorded: list[contracts_pb2.ToolInvocation] = []
    progress: list[run_pb2.ToolCallEvent] = []
    async with opened(tmp_path, _env(slow.upstream.url)) as registry:
        runner = _runner(registry.tools_for("prod").toolset, recorded, progress=progress, max_per_source=4)
        started = time.perf_counter()
        results = await runner.call_many(_queries("q1", "q2", "q3", "q4"))
        wall = time.perf_counter() - started
    assert slow.max_in_flight == 4
    assert wall < 0.6 + 0.35  # one slowest answer, not the 1.5 s of their sum
    assert [r.status for r in results] == [OK] * 4
    assert [r.invocation_id for r in results] == ["inv-0001", "inv-0002", "inv-0003", "inv-0004"]
    assert [i.invocation_id for i in recorded] == ["inv-0001", "inv-0002", "inv-0003", "inv-0004"]
    labels: list[Any] = [from_value(i.output)["data"]["result"][0]["metric"]["query"] for i in recorded]  # type: ignore[index]
    assert labels == ["q1", "q2", "q3", "q4"]
    assert [r.output["data"]["result"][0]["metric"]["query"] for r in results] == labels  # type: ignore[call-overload,index]
    # Each call's own duration, measured from when it ran: the slowest about 600 ms, the fastest about 150 ms.
    assert recorded[0].duration_ms >= 550 and recorded[3].duration_ms < 450
    # Progress: every start in plan order at dispatch, then every end in plan order as it is recorded.
    phases = [(e.invocation_id, e.phase) for e in progress]
    started_ids = [(i, run_pb2.TOOL_CALL_PHASE_STARTED) for i in ("inv-0001", "inv-0002", "inv-0003", "inv-0004")]
    ended_ids = [(i, run_pb2.TOOL_CALL_PHASE_ENDED) for i in ("inv-0001", "inv-0002", "inv-0003", "inv-0004")]
    assert phases == started_ids + ended_ids
    ended = progress[4:]
    assert [e.status for e in ended] == [OK] * 4
    assert [e.duration_ms for e in ended] == [i.duration_ms for i in recorded]


async def test_each_result_is_recorded_before_the_executor_reads_it(slow: SlowPrometheus, tmp_path: Path) -> None:
    recorded: list[contracts_pb2.ToolInvocation] = []
    async with opened(tmp_path, _env(slow.upstream.url)) as registry:
        runner = _runner(registry.tools_for("prod").toolset, recorded)
        results = await runner.call_many(_queries("q4", "q1"))
    assert {r.invocation_id for r in results} <= {i.invocation_id for i in recorded}
    assert len(recorded) == 2


@pytest.mark.parametrize(("per_source", "per_run", "expected"), [(2, 8, 2), (4, 3, 3), (1, 8, 1)])
async def test_calls_on_one_source_are_bounded_per_source_and_per_run(
    tmp_path: Path, per_source: int, per_run: int, expected: int
) -> None:
    server = SlowPrometheus(0.15)
    try:
        recorded: list[contracts_pb2.ToolInvocation] = []
        async with opened(tmp_path, _env(server.upstream.url)) as registry:
            runner = _runner(
                registry.tools_for("prod").toolset, recorded, max_per_source=per_source, max_concurrency=per_run
            )
            results = await runner.call_many(_queries(*(f"q{n}" for n in range(6))))
    finally:
        server.upstream.close()
    assert server.max_in_flight == expected
    assert [r.status for r in results] == [OK] * 6
    assert [i.invocation_id for i in recorded] == [f"inv-{n:04d}" for n in range(1, 7)]


async def test_a_source_that_times_out_is_called_once_then_its_remaining_calls_fail_at_once(tmp_path: Path) -> None:
    # A Prometheus that never answers within the tool's time-out: one wait, not one a call.
    server = SlowPrometheus(3.0)
    breaker = SourceBreaker()
    ids = InvocationIds()
    try:
        recorded: list[contracts_pb2.ToolInvocation] = []
        async with opened(tmp_path, _env(server.upstream.url)) as registry:
            toolset = registry.tools_for("prod").toolset
            runner = _runner(toolset, recorded, breaker=breaker, ids=ids, max_per_source=1, timeout_s=0.4)
            started = time.perf_counter()
            results = await runner.call_many(_queries("a", "b", "c", "d", "e"))
            # A later Executor attempt of the run (an evidence retry) shares the breaker: it fails at once too.
            again = _runner(toolset, recorded, breaker=breaker, ids=ids, cycle=2, timeout_s=0.4)
            [later] = await again.call_many(_queries("f"))
            wall = time.perf_counter() - started
    finally:
        server.upstream.close()
    assert server.requests == 1
    assert wall < 0.4 + 0.5
    assert [r.status for r in results] == [TIMEOUT, ERROR, ERROR, ERROR, ERROR]
    assert later.status == ERROR
    first = recorded[0]
    assert first.error == "no output within 0.4s"
    for invocation in recorded[1:]:
        assert invocation.error == (
            "not called: source 'prometheus' failed earlier in this run (inv-0001: no output within 0.4s)"
        )
    assert [i.invocation_id for i in recorded] == [f"inv-{n:04d}" for n in range(1, 7)]


async def test_a_source_that_refuses_opens_its_breaker_with_the_refusal(tmp_path: Path) -> None:
    recorded: list[contracts_pb2.ToolInvocation] = []
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens: connection refused
    async with opened(tmp_path, _env(url)) as registry:
        runner = _runner(registry.tools_for("prod").toolset, recorded, max_per_source=1)
        results = await runner.call_many(_queries("a", "b", "c"))
    assert [r.status for r in results] == [ERROR, ERROR, ERROR]
    refusal = recorded[0].error
    assert refusal.startswith("prometheus.query: cannot reach http://127.0.0.1:") and "ConnectError" in refusal
    assert recorded[1].error.startswith("not called: source 'prometheus' failed earlier in this run (inv-0001: ")
    assert refusal[:100] in recorded[2].error


async def test_calls_in_flight_when_the_breaker_opens_run_to_their_end(tmp_path: Path) -> None:
    # Two slots. "hang" and "quick" start at once; "late" takes quick's slot at 0.4 s and is still running when
    # hang times out at 1 s: it ends on its own (OK at 1.2 s). "last", dispatched behind them, fails at once.
    server = SlowPrometheus(3.0, {"hang": 3.0, "quick": 0.4, "late": 0.8})
    try:
        recorded: list[contracts_pb2.ToolInvocation] = []
        async with opened(tmp_path, _env(server.upstream.url)) as registry:
            runner = _runner(registry.tools_for("prod").toolset, recorded, max_per_source=2, timeout_s=1.0)
            results = await runner.call_many(_queries("hang", "quick", "late", "last"))
    finally:
        server.upstream.close()
    assert [r.status for r in results] == [TIMEOUT, OK, OK, ERROR]
    assert server.requests == 3
    assert recorded[3].error.startswith("not called: source 'prometheus' failed earlier in this run (inv-0001")


async def test_a_cancelled_step_cancels_its_calls_in_flight(slow: SlowPrometheus, tmp_path: Path) -> None:
    recorded: list[contracts_pb2.ToolInvocation] = []
    async with opened(tmp_path, _env(slow.upstream.url)) as registry:
        runner = _runner(registry.tools_for("prod").toolset, recorded)
        task = asyncio.ensure_future(runner.call_many(_queries("q1", "q2")))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)
        assert [t for t in asyncio.all_tasks() if "ToolRunner._run" in repr(t.get_coro()) and not t.done()] == []
    assert recorded == []
