"""Liveness of runs whose task died, the store probe, and store errors that say where the store is."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.store import INTERRUPTED, LiveRuns, RunStore, StoreError, StoreFileLost, open_repository

from .store_builders import OpenStore, make_run


async def _status(repo: RunStore, run_id: str) -> int:
    run = await repo.get_run(run_id)
    assert run is not None
    return run.status


async def test_heartbeat_refreshes_only_the_runs_whose_task_is_alive(repo: RunStore, backend: OpenStore) -> None:
    """Another instance's run whose task died is no longer heartbeated, so it goes stale and is swept (once this
    instance has watched its heartbeat unchanged for the staleness: the first sweep starts the watch)."""
    other = await backend("instance-b")
    try:
        await other.create_run(make_run("alive"))
        await other.create_run(make_run("task-died"))
        assert await repo.interrupt_orphans(stale_after_s=0.1) == []
        await asyncio.sleep(0.15)
        await other.heartbeat(["alive"])
        assert await repo.interrupt_orphans(stale_after_s=0.1) == ["task-died"]
        assert await _status(repo, "alive") == run_pb2.RUN_STATUS_RUNNING
    finally:
        await other.close()


async def test_an_instance_sweeps_its_own_runs_whose_task_is_gone(repo: RunStore) -> None:
    await repo.create_run(make_run("mine-alive"))
    await repo.create_run(make_run("mine-dead"))
    snapshot = time.monotonic()
    await repo.create_run(make_run("mine-new"))  # created after the snapshot of live tasks was taken
    swept = await repo.interrupt_orphans(stale_after_s=3600, live=LiveRuns(frozenset({"mine-alive"}), snapshot))
    assert swept == ["mine-dead"]
    stored = await repo.get_run("mine-dead")
    assert stored is not None and stored.failure_reason == INTERRUPTED
    assert await _status(repo, "mine-alive") == run_pb2.RUN_STATUS_RUNNING
    assert await _status(repo, "mine-new") == run_pb2.RUN_STATUS_RUNNING
    # Without the live set (a repository used outside a server), its own runs are left alone.
    assert await repo.interrupt_orphans(stale_after_s=3600) == []


async def test_probe_writes_on_a_healthy_store(repo: RunStore) -> None:
    await repo.probe()
    await repo.probe()


async def test_probe_notices_a_deleted_or_replaced_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    repo = await open_repository(f"sqlite+aiosqlite:///{path}")
    try:
        await repo.probe()
        shutil.copyfile(path, tmp_path / "other.db")
        (tmp_path / "other.db").replace(path)
        with pytest.raises(StoreFileLost, match="replaced") as replaced:
            await repo.probe()
        assert str(path) in str(replaced.value)
        path.unlink()
        with pytest.raises(StoreFileLost, match="deleted"):
            await repo.probe()
    finally:
        await repo.close()


async def test_an_unusable_sqlite_file_is_named_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / "not-a-database.db"
    path.write_bytes(b"this is not a SQLite file, just some text long enough to have a header" * 20)
    with pytest.raises(StoreError) as caught:
        await open_repository(f"sqlite+aiosqlite:///{path}")
    assert str(path) in str(caught.value)


async def test_an_unreachable_postgresql_is_named_without_its_password() -> None:
    url = "postgresql+asyncpg://diagnosis:hunter2@127.0.0.1:1/diagnosis"
    with pytest.raises(StoreError) as caught:
        await open_repository(url)
    text = str(caught.value)
    assert "127.0.0.1:1/diagnosis" in text
    assert "hunter2" not in text
