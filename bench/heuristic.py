"""Heuristic CPU: process CPU time of one in-process run of a scenario with the heuristic provider.

Measured with the real SQLite store (a temporary file; the driver's thread counts, it is this
process's CPU) and with the in-memory store keeping the records uncopied (``MemoryStore(copies=False)``: agents, tools
and graph only). The baseline is the engine's no-op run (``bench.engine``): what a run costs
beyond moving through the graph.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from bench.capture import QUESTION, SCENARIO, orchestrator
from bench.engine import our_engine
from bench.profiling import ProfileSummary, profile_async
from bench.timing import cpu_per_op_async
from diagnosis.v1 import run_pb2
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.store import MemoryStore, open_repository


async def _run_once(runner: Orchestrator) -> run_pb2.DiagnosisRun:
    run = await runner.run(question=QUESTION, scenario=SCENARIO)
    if run.status != run_pb2.RUN_STATUS_SUCCESS:
        raise RuntimeError(f"the heuristic run ended {run_pb2.RunStatus.Name(run.status)}: {run.failure_reason}")
    return run


async def measure(*, runs: int = 50, repeats: int = 3) -> dict[str, float]:
    """CPU ms per run with the SQLite store and with the in-memory store, and per engine no-op run."""
    engine, ctx = our_engine()

    async def engine_run() -> object:
        return await engine.run(DiagnosisState(run_id="run-bench", question="q", scenario=""), ctx)

    engine_s = await cpu_per_op_async(engine_run, ops=max(runs * 20, 100), repeats=repeats)
    bare = orchestrator(MemoryStore(owner="bench", copies=False))
    await _run_once(bare)
    bare_s = await cpu_per_op_async(lambda: _run_once(bare), ops=runs, repeats=repeats)
    with tempfile.TemporaryDirectory(prefix="bench-heuristic-") as tmp:
        repository = await open_repository(f"sqlite+aiosqlite:///{Path(tmp) / 'heuristic.db'}")
        try:
            stored = orchestrator(repository)
            await _run_once(stored)
            stored_s = await cpu_per_op_async(lambda: _run_once(stored), ops=runs, repeats=repeats)
        finally:
            await repository.close()
    return {
        "heuristic_cpu_ms_per_run": round(stored_s * 1000, 3),
        "heuristic_cpu_ms_per_run_no_store": round(bare_s * 1000, 3),
        "engine_noop_cpu_ms_per_run": round(engine_s * 1000, 4),
        "heuristic_vs_engine_noop": round(stored_s / engine_s, 1),
        "heuristic_no_store_vs_engine_noop": round(bare_s / engine_s, 1),
    }


async def profile(*, runs: int = 20) -> ProfileSummary:
    """A cProfile of in-process heuristic runs with the SQLite store (the slow path)."""
    with tempfile.TemporaryDirectory(prefix="bench-heuristic-profile-") as tmp:
        repository = await open_repository(f"sqlite+aiosqlite:///{Path(tmp) / 'heuristic.db'}")
        try:
            stored = orchestrator(repository)
            await _run_once(stored)
            return await profile_async(
                lambda: _run_once(stored), ops=runs, what=f"{runs} in-process heuristic runs with the SQLite store"
            )
        finally:
            await repository.close()


if __name__ == "__main__":
    print(asyncio.run(measure()))
