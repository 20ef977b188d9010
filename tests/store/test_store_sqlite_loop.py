"""The SQLite hot path: transactions on the event loop when they cannot block, the worker thread otherwise;
one conditional insert a tool call, refusing every call once its run is final, under concurrency."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.store import NodeCommit, Repository, RunAlreadyFinished, RunNotFound, RunStore, open_repository
from diagnosis_server.store.runners import SqliteRunner

from .store_builders import OpenStore, make_event, make_invocation, make_run


def _runner(repository: Repository) -> SqliteRunner:
    runner = repository._runner
    assert isinstance(runner, SqliteRunner)
    return runner


async def test_uncontended_transactions_run_on_the_loop(tmp_path: Path) -> None:
    repository = await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'loop.db'}")
    try:
        runner = _runner(repository)
        worker_before = runner.on_worker
        await repository.create_run(make_run("run-1"))
        await repository.commit_node(NodeCommit("run-1", events=[make_event("run-1", 1)]))
        await repository.add_tool_invocation(make_invocation("run-1", "inv-1"))
        assert [e.sequence for e in await repository.list_events("run-1")] == [1]
        assert len(await repository.list_tool_invocations("run-1")) == 1
        assert runner.on_loop >= 5 and runner.on_worker == worker_before
    finally:
        await repository.close()


async def test_a_write_meeting_a_held_lock_waits_on_the_worker_not_on_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "held.db"
    repository = await open_repository(f"sqlite+aiosqlite:///{path}")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        await repository.create_run(make_run("run-1"))
        runner = _runner(repository)
        worker_before = runner.on_worker
        holder.execute("BEGIN IMMEDIATE")  # another process's writer, say
        threading.Timer(0.4, holder.execute, ("COMMIT",)).start()
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.ensure_future(ticker())
        started = time.perf_counter()
        await repository.add_tool_invocation(make_invocation("run-1", "inv-1"))
        waited = time.perf_counter() - started
        ticking.cancel()
        assert waited >= 0.3  # it waited for the lock (the busy timeout, on the worker)
        assert ticks >= 10  # and the loop went on meanwhile
        assert runner.on_worker == worker_before + 1
        assert [i.invocation_id for i in await repository.list_tool_invocations("run-1")] == ["inv-1"]
        # Once the lock is free again, the next transaction is back on the loop.
        loop_before = runner.on_loop
        await repository.commit_node(NodeCommit("run-1", events=[make_event("run-1", 1)]))
        assert runner.on_loop == loop_before + 1
    finally:
        holder.close()
        await repository.close()


async def test_an_in_memory_store_runs_on_the_loop() -> None:
    repository = await open_repository("sqlite+aiosqlite://")
    try:
        await repository.create_run(make_run("run-1"))
        await repository.add_tool_invocation(make_invocation("run-1", "inv-1"))
        assert len(await repository.list_tool_invocations("run-1")) == 1
        assert _runner(repository).on_loop >= 3
    finally:
        await repository.close()


async def test_the_conditional_insert_refuses_a_missing_run(repo: RunStore) -> None:
    with pytest.raises(RunNotFound):
        await repo.add_tool_invocation(make_invocation("run-nobody", "inv-1"))


async def test_tool_calls_racing_the_final_write_are_stored_before_it_or_refused(
    repo: RunStore, backend: OpenStore
) -> None:
    """Many concurrent tool-call writes (two instances) against one final write: each call is either stored,
    and then before the run became final, or refused RunAlreadyFinished; none lands after the final record."""
    other = await backend("instance-b")
    try:
        await repo.create_run(make_run("run-1"))
        done = make_run("run-1")
        done.status = run_pb2.RUN_STATUS_SUCCESS

        async def call(index: int) -> bool:
            store = repo if index % 2 else other
            await asyncio.sleep(0.001 * (index % 7))
            try:
                await store.add_tool_invocation(make_invocation("run-1", f"inv-{index:03d}"))
            except RunAlreadyFinished:
                return False
            return True

        async def finish() -> None:
            await asyncio.sleep(0.004)
            await repo.finish_run(done)

        results = await asyncio.gather(*(call(i) for i in range(60)), finish())
        stored = await repo.list_tool_invocations("run-1")
        accepted = sorted(f"inv-{i:03d}" for i, ok in enumerate(results[:60]) if ok)
        assert sorted(i.invocation_id for i in stored) == accepted
        with pytest.raises(RunAlreadyFinished):
            await repo.add_tool_invocation(make_invocation("run-1", "inv-late"))
        assert len(await repo.list_tool_invocations("run-1")) == len(accepted)
    finally:
        await other.close()


async def test_the_log_stays_bounded_under_continuous_writes_on_the_loop(tmp_path: Path) -> None:
    """A run of writes with no pause checkpoints the log as it goes (SQLite's own 1,000-page point), so the
    log starts over and its file stays near that size; a checkpoint left to the worker thread never caught up
    with the loop's writes, and the file grew with every row."""
    path = tmp_path / "log.db"
    repository = await open_repository(f"sqlite+aiosqlite:///{path}")
    try:
        runs = 50
        for r in range(runs):
            await repository.create_run(make_run(f"run-{r}"))
            for i in range(50):
                invocation = make_invocation(f"run-{r}", f"inv-{i}")
                invocation.output.string_value = "x" * 8192  # two overflow pages a row
                await repository.add_tool_invocation(invocation)
        written = runs * 50 * 8192
        wal = os.stat(f"{path}-wal").st_size
        assert written > 20_000_000
        # 1,000 pages of 4 KiB and the transaction that crossed them, with room to spare; not the 20 MB written.
        assert wal < 6 * 1024 * 1024, wal
        assert _runner(repository).on_loop > runs * 50
        assert len(await repository.list_tool_invocations(f"run-{runs - 1}")) == 50
    finally:
        await repository.close()
