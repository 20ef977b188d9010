"""Heartbeats and interruption: a run nobody runs any more ends FAILED with reason INTERRUPTED."""

from __future__ import annotations

import asyncio

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.store import INTERRUPTED, NodeCommit, RunStore

from .store_builders import OpenStore, make_event, make_run


async def _status(repo: RunStore, run_id: str) -> tuple[int, str]:
    run = await repo.get_run(run_id)
    assert run is not None
    return run.status, run.failure_reason


async def test_interrupt_orphans_of_a_dead_instance(repo: RunStore, backend: OpenStore) -> None:
    other = await backend("instance-b")
    try:
        await other.create_run(make_run("theirs"))
        await repo.create_run(make_run("mine"))

        # Their heartbeat is fresh: not an orphan yet.
        assert await repo.interrupt_orphans(stale_after_s=60) == []
        assert await _status(repo, "theirs") == (run_pb2.RUN_STATUS_RUNNING, "")

        await asyncio.sleep(0.01)
        assert await repo.interrupt_orphans(stale_after_s=0.001) == ["theirs"]
    finally:
        await other.close()

    status, reason = await _status(repo, "theirs")
    assert (status, reason) == (run_pb2.RUN_STATUS_FAILED, INTERRUPTED)
    stored = await repo.get_run("theirs")
    assert stored is not None
    assert stored.HasField("completed_at")
    assert stored.updated_at == stored.completed_at
    # This instance's own live run is never its own orphan, however old its heartbeat.
    assert await _status(repo, "mine") == (run_pb2.RUN_STATUS_RUNNING, "")
    # The indexed status agrees with the payload.
    failed = await repo.list_runs(tenant="acme", page_size=5, status=run_pb2.RUN_STATUS_FAILED)
    assert [run.run_id for run in failed.runs] == ["theirs"]
    # Interrupting is done once.
    assert await repo.interrupt_orphans(stale_after_s=0) == []


async def test_heartbeat_keeps_runs_alive(repo: RunStore, backend: OpenStore) -> None:
    other = await backend("instance-b")
    try:
        await other.create_run(make_run("theirs"))
        await asyncio.sleep(0.15)
        await other.heartbeat(["theirs"])
        assert await repo.interrupt_orphans(stale_after_s=0.1) == []
        await asyncio.sleep(0.15)
        assert await repo.interrupt_orphans(stale_after_s=0.1) == ["theirs"]
    finally:
        await other.close()


async def test_interrupt_orphans_of_this_instance_previous_life(backend: OpenStore) -> None:
    """An instance restarted under the same owner id interrupts what its previous life left running."""
    before = await backend("stable-owner")
    await before.create_run(make_run("old"))
    await before.close()

    after = await backend("stable-owner")
    await after.create_run(make_run("new"))
    assert await after.interrupt_orphans(stale_after_s=3600) == ["old"]
    assert await _status(after, "old") == (run_pb2.RUN_STATUS_FAILED, INTERRUPTED)
    assert await _status(after, "new") == (run_pb2.RUN_STATUS_RUNNING, "")


async def test_interrupt_owned_on_shutdown(repo: RunStore, backend: OpenStore) -> None:
    other = await backend("instance-b")
    try:
        await other.create_run(make_run("theirs"))
        await repo.create_run(make_run("mine-1"))
        await repo.create_run(make_run("mine-2"))
        done = await repo.get_run("mine-2")
        assert done is not None
        done.status = run_pb2.RUN_STATUS_SUCCESS
        await repo.finish_run(done)

        assert await repo.interrupt_owned(reason="SHUTDOWN") == ["mine-1"]
    finally:
        await other.close()
    assert await _status(repo, "mine-1") == (run_pb2.RUN_STATUS_FAILED, "SHUTDOWN")
    assert await _status(repo, "mine-2") == (run_pb2.RUN_STATUS_SUCCESS, "")
    assert await _status(repo, "theirs") == (run_pb2.RUN_STATUS_RUNNING, "")
    assert await repo.interrupt_owned() == []


async def test_an_interrupted_run_takes_no_more_writes(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    assert await repo.interrupt_owned() == ["run-1"]
    run = make_run("run-1")
    run.status = run_pb2.RUN_STATUS_SUCCESS
    with pytest.raises(Exception, match="final"):
        await repo.finish_run(run)
    assert await _status(repo, "run-1") == (run_pb2.RUN_STATUS_FAILED, INTERRUPTED)


async def test_a_run_record_write_takes_over_ownership(repo: RunStore, backend: OpenStore) -> None:
    """The instance that writes a run's record runs it: the run is its, with a fresh heartbeat."""
    other = await backend("instance-b")
    try:
        await other.create_run(make_run("run-1"))
        run = make_run("run-1")
        run.status = run_pb2.RUN_STATUS_RUNNING
        await repo.commit_node(NodeCommit("run-1", run=run))
        assert await other.interrupt_owned() == []
        assert await repo.interrupt_owned() == ["run-1"]
    finally:
        await other.close()


async def test_a_node_commit_leaves_owner_and_heartbeat_alone(repo: RunStore, backend: OpenStore) -> None:
    """Node commits write the node's rows only: the live run's heartbeat is the periodic one (``heartbeat``)."""
    other = await backend("instance-b")
    try:
        await other.create_run(make_run("run-1"))
        await repo.commit_node(NodeCommit("run-1", events=[make_event("run-1", 1)]))
        assert await repo.interrupt_owned() == []
        assert await other.interrupt_owned() == ["run-1"]
    finally:
        await other.close()


async def test_negative_staleness_is_refused(repo: RunStore) -> None:
    with pytest.raises(ValueError, match="stale_after_s"):
        await repo.interrupt_orphans(stale_after_s=-1)
