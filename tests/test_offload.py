"""``off_loop`` runs a run's CPU work on a thread of its own, in the caller's context, one piece at a time, and
gives back its result or its exception (issue 33: the loop answers while runs compute)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest
import structlog

from diagnosis_server import offload
from diagnosis_server.offload import off_loop

REQUEST = contextvars.ContextVar[str]("request", default="")


def _thread_and_request() -> tuple[int, str]:
    return threading.get_ident(), REQUEST.get()


@pytest.mark.asyncio
async def test_the_work_runs_off_the_loop_thread_in_the_callers_context() -> None:
    REQUEST.set("run-1")
    structlog.contextvars.bind_contextvars(run_id="run-1")
    try:
        thread, request = await off_loop(_thread_and_request)
        fields = await off_loop(structlog.contextvars.get_contextvars)
    finally:
        structlog.contextvars.unbind_contextvars("run_id")
    assert thread != threading.get_ident()
    assert request == "run-1"
    assert fields.get("run_id") == "run-1"


def _fail(message: str) -> None:
    raise LookupError(message)


@pytest.mark.asyncio
async def test_an_exception_of_the_work_is_raised_to_the_caller() -> None:
    with pytest.raises(LookupError, match="no such claim"):
        await off_loop(_fail, "no such claim")


@pytest.mark.asyncio
async def test_the_loop_runs_its_callbacks_while_the_work_computes() -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    def spin(seconds: float) -> int:
        end, n = time.monotonic() + seconds, 0
        while time.monotonic() < end:
            n += 1
        return n

    ticker = asyncio.create_task(tick())
    try:
        await off_loop(spin, 0.5)
    finally:
        ticker.cancel()
    assert ticks >= 10, f"the loop ran {ticks} times during 0.5 s of CPU work"


@pytest.mark.asyncio
async def test_pieces_of_concurrent_callers_compute_one_at_a_time() -> None:
    """At most ``CPU_THREADS`` pieces at once, whatever the number of runs: the loop waits for no more."""
    inside = 0
    most = 0
    lock = threading.Lock()

    def piece() -> None:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.02)
        with lock:
            inside -= 1

    await asyncio.gather(*(off_loop(piece) for _ in range(8)))
    assert most == offload.CPU_THREADS == 1
