"""PostgreSQL LISTEN/NOTIFY: a follower on another instance is woken by a run's commits, not by its poll.

Each commit that writes events (and the final write) notifies at commit; a watch taken on another
repository (another replica) wakes within milliseconds; on SQLite there is no watch and followers poll.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.api.follow import RunFollower
from diagnosis_server.api.hub import EventHub
from diagnosis_server.store import NodeCommit, Repository, StoreError, open_repository
from tests.support.postgres import reset_postgres

from .store_builders import make_event, make_run

pytestmark = pytest.mark.postgres


@pytest.fixture
async def pg_pair(postgres_url: str) -> AsyncIterator[tuple[Repository, Repository]]:
    await reset_postgres(postgres_url, drop=False)
    a = await open_repository(postgres_url, owner="replica-a")
    b = await open_repository(postgres_url, owner="replica-b")
    yield a, b
    await b.close()
    await a.close()


async def test_a_commit_on_one_replica_wakes_a_watch_on_another(pg_pair: tuple[Repository, Repository]) -> None:
    a, b = pg_pair
    await a.create_run(make_run("run-1"))
    watch = b.watch_run("run-1")
    assert watch is not None
    try:
        # Listening starts: one wake-up to look at the store once (what was committed before it listened).
        assert await watch.wait(5.0) is True
        assert await watch.wait(0.05) is False  # nothing committed since: the poll interval passes
        waiter = asyncio.ensure_future(watch.wait(10.0))
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        await a.commit_node(NodeCommit("run-1", events=[make_event("run-1", 1)]))
        assert await waiter is True
        assert time.perf_counter() - started < 1.0
        # A notification that comes while nobody waits is kept for the next wait.
        await a.commit_node(NodeCommit("run-1", events=[make_event("run-1", 2)]))
        await asyncio.sleep(0.2)
        assert await watch.wait(0.01) is True
        # A rolled-back write notifies nobody.
        with pytest.raises(StoreError):
            await a.commit_node(NodeCommit("run-1", events=[make_event("run-1", 2)]))  # duplicate sequence
        assert await watch.wait(0.2) is False
    finally:
        watch.close()


async def test_a_follower_on_another_replica_gets_each_event_well_within_its_poll_interval(
    pg_pair: tuple[Repository, Repository],
) -> None:
    a, b = pg_pair
    await a.create_run(make_run("run-1"))
    subscription = EventHub().subscribe("run-1")  # a run this replica does not run: detached
    follower = RunFollower(b, subscription, poll_interval_s=30.0)
    received: list[tuple[int, float]] = []

    async def follow() -> None:
        async for event in follower.events():
            received.append((event.sequence, time.perf_counter()))

    task = asyncio.ensure_future(follow())
    await asyncio.sleep(0.3)
    committed: list[float] = []
    for sequence in (1, 2, 3):
        committed.append(time.perf_counter())
        await a.commit_node(NodeCommit("run-1", events=[make_event("run-1", sequence)]))
        await asyncio.sleep(0.1)
    done = make_run("run-1")
    done.status = run_pb2.RUN_STATUS_SUCCESS
    await a.finish_run(done)
    await asyncio.wait_for(task, 5.0)
    assert [sequence for sequence, _ in received] == [1, 2, 3]
    delays = [at - committed[i] for i, (_, at) in enumerate(received)]
    assert max(delays) < 1.0, delays  # the poll interval is 30 s
    assert follower.final is not None and follower.final.status == run_pb2.RUN_STATUS_SUCCESS


async def test_sqlite_has_no_watch(tmp_path: object) -> None:
    repository = await open_repository(f"sqlite+aiosqlite:///{tmp_path}/x.db")
    try:
        assert repository.watch_run("run-1") is None
    finally:
        await repository.close()
