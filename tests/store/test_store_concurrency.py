"""Several runs writing at once: no "database is locked", nothing lost (SQLite WAL + busy timeout)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from diagnosis.v1 import run_pb2
from diagnosis_server.store import NodeCommit, RunStore, open_repository

from .store_builders import make_event, make_invocation, make_run, make_step

RUNS = 20
NODES = 5


async def _drive(repo: RunStore, run_id: str) -> None:
    """One run's life: create, tool calls and nodes interleaved, finish."""
    await repo.create_run(make_run(run_id))
    for node in range(1, NODES + 1):
        await repo.add_tool_invocation(make_invocation(run_id, f"inv-{node}"))
        run = await repo.get_run(run_id)
        assert run is not None
        run.orchestration_trace.steps = node
        await repo.commit_node(
            NodeCommit(run_id, events=[make_event(run_id, node)], steps=[make_step(run_id, attempt=node)], run=run)
        )
        await asyncio.sleep(0)
    final = await repo.get_run(run_id)
    assert final is not None
    final.status = run_pb2.RUN_STATUS_SUCCESS
    await repo.finish_run(final)


async def _check(repo: RunStore, run_ids: list[str]) -> None:
    for run_id in run_ids:
        run = await repo.get_run(run_id)
        assert run is not None
        assert run.status == run_pb2.RUN_STATUS_SUCCESS
        assert run.orchestration_trace.steps == NODES
        assert [event.sequence for event in await repo.list_events(run_id)] == list(range(1, NODES + 1))
        assert len(await repo.list_node_steps(run_id)) == NODES
        assert len(await repo.list_tool_invocations(run_id)) == NODES


async def test_concurrent_runs_commit_nodes(repo: RunStore) -> None:
    run_ids = [f"run-{i:02d}" for i in range(RUNS)]
    async with asyncio.timeout(30):
        await asyncio.gather(*(_drive(repo, run_id) for run_id in run_ids))
    await _check(repo, run_ids)
    assert await repo.count_runs(status=run_pb2.RUN_STATUS_SUCCESS) == RUNS


async def test_two_instances_write_one_sqlite_file(tmp_path: Path) -> None:
    """Two repositories (two connections, as two server processes would have) on the same file."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    first, second = await asyncio.gather(open_repository(url, owner="a"), open_repository(url, owner="b"))
    try:
        run_ids = [f"run-{i:02d}" for i in range(RUNS)]
        async with asyncio.timeout(30):
            await asyncio.gather(*(_drive(first if i % 2 else second, r) for i, r in enumerate(run_ids)))
        await _check(first, run_ids)
        await second.heartbeat(run_ids)
        assert await first.interrupt_orphans(stale_after_s=0) == []
    finally:
        await first.close()
        await second.close()


async def test_in_memory_sqlite_serves_concurrent_runs() -> None:
    """``sqlite+aiosqlite://`` (in memory) keeps one connection for the store's whole life."""
    repository = await open_repository("sqlite+aiosqlite://")
    try:
        run_ids = [f"run-{i:02d}" for i in range(RUNS)]
        async with asyncio.timeout(30):
            await asyncio.gather(*(_drive(repository, run_id) for run_id in run_ids))
        await _check(repository, run_ids)
    finally:
        await repository.close()
