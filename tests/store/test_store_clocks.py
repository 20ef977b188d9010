"""Orphan detection compares no two clocks (R-S-3): a replica's clock ahead or behind, or this instance's clock
stepped back, never makes a live run an orphan nor keeps a dead one alive. The instances' wall clocks are
shifted where the store reads them (``utc_now`` of the store module), the rest is the real store."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.store import LiveRuns, RunStore, memory, records, repository
from diagnosis_server.store.liveness import OrphanJudge, Running

from .store_builders import OpenStore, make_run


@contextlib.contextmanager
def clock_shifted(monkeypatch: pytest.MonkeyPatch, seconds: float) -> Iterator[None]:
    """The wall clock the store stamps with, ``seconds`` off (ahead when positive) while inside."""
    shifted = lambda: records.utc_now() + timedelta(seconds=seconds)  # noqa: E731
    with monkeypatch.context() as patch:
        patch.setattr(repository, "utc_now", shifted)
        patch.setattr(memory, "utc_now", shifted)
        yield


async def _status(repo: RunStore, run_id: str) -> int:
    run = await repo.get_run(run_id)
    assert run is not None
    return run.status


@pytest.mark.requirement("R-S-3")
@pytest.mark.parametrize("offset_s", [60.0, -3600.0, 3600.0], ids=["ahead-60s", "behind-1h", "ahead-1h"])
async def test_a_replicas_clock_never_decides_whether_its_runs_are_orphans(
    repo: RunStore, backend: OpenStore, monkeypatch: pytest.MonkeyPatch, offset_s: float
) -> None:
    """A replica whose clock is off by ``offset_s`` heartbeats its run: never swept while it does (a clock
    behind used to make a live run look stale at once); once it stops, swept after the staleness (a clock ahead
    used to keep a dead run looking fresh)."""
    other = await backend("replica-b")
    try:
        with clock_shifted(monkeypatch, offset_s):
            await other.create_run(make_run("theirs"))
        for _ in range(3):
            assert await repo.interrupt_orphans(stale_after_s=0.2) == []
            await asyncio.sleep(0.1)
            with clock_shifted(monkeypatch, offset_s):
                await other.heartbeat(["theirs"])
        assert await _status(repo, "theirs") == run_pb2.RUN_STATUS_RUNNING

        # The replica stops heartbeating (its task died): this instance sees the stamp unchanged, then sweeps.
        assert await repo.interrupt_orphans(stale_after_s=0.2) == []
        await asyncio.sleep(0.25)
        assert await repo.interrupt_orphans(stale_after_s=0.2) == ["theirs"]
    finally:
        await other.close()


@pytest.mark.requirement("R-S-3")
async def test_this_instances_clock_stepped_back_never_sweeps_its_own_live_runs(
    repo: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clock steps back 120 s under a running instance: its live runs, heartbeated from then on with stamps
    older than its start, stay RUNNING (every run of such a server used to be swept as a previous life's)."""
    await repo.create_run(make_run("before-the-step"))
    with clock_shifted(monkeypatch, -120.0):
        await repo.create_run(make_run("after-the-step"))
        await repo.heartbeat(["before-the-step", "after-the-step"])
        live = LiveRuns(frozenset({"before-the-step", "after-the-step"}), time.monotonic())
        assert await repo.interrupt_orphans(stale_after_s=30, live=live) == []
        # Its task gone (not among the live runs), a run of this instance is swept whatever its stamp says.
        gone = LiveRuns(frozenset({"after-the-step"}), time.monotonic())
        assert await repo.interrupt_orphans(stale_after_s=30, live=gone) == ["before-the-step"]
    assert await _status(repo, "after-the-step") == run_pb2.RUN_STATUS_RUNNING


def test_after_the_store_failed_a_sweep_every_watch_starts_again() -> None:
    """Nobody could renew while the store was out of reach: a lease watched before an outage is not judged
    stale by the time the outage took (the first sweep after it only starts watching again)."""
    judge = OrphanJudge("replica-a")
    theirs = [Running("theirs", "replica-b", "stamp-1")]
    assert judge.orphans(theirs, stale_after_s=0.05, live=None) == []
    time.sleep(0.1)
    judge.lost_sight()  # a heartbeat or a sweep of this replica failed: the store hung
    assert judge.orphans(theirs, stale_after_s=0.05, live=None) == []
    time.sleep(0.1)
    assert judge.orphans(theirs, stale_after_s=0.05, live=None) == theirs  # then unchanged for the staleness
