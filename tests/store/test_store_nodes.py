"""commit_node: a node's outcome (events, steps, run) is written whole or not at all, on every backend."""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.store import MemoryStore, NodeCommit, RunStore
from diagnosis_server.store.errors import DuplicateRecord, InvalidRecord, RunAlreadyFinished, RunNotFound, StoreError

from .store_builders import make_event, make_run, make_step


async def _first_node(repo: RunStore) -> run_pb2.DiagnosisRun:
    await repo.create_run(make_run("run-1"))
    run = await repo.get_run("run-1")
    assert run is not None
    run.orchestration_trace.path.append(run_pb2.NODE_NAME_PLANNER)
    await repo.commit_node(
        NodeCommit(
            "run-1",
            events=[make_event("run-1", 1), make_event("run-1", 2, node=run_pb2.NODE_NAME_EXECUTOR)],
            steps=[make_step("run-1")],
            run=run,
        )
    )
    stored = await repo.get_run("run-1")
    assert stored is not None
    return stored


async def test_commit_node_writes_events_steps_and_run(repo: RunStore) -> None:
    stored = await _first_node(repo)
    assert list(stored.orchestration_trace.path) == [run_pb2.NODE_NAME_PLANNER]
    assert [event.sequence for event in await repo.list_events("run-1")] == [1, 2]
    steps = await repo.list_node_steps("run-1")
    assert steps == [make_step("run-1")]


async def test_commit_node_atomic_on_a_failure_mid_transaction(repo: RunStore) -> None:
    """A duplicate event sequence fails the node's transaction after its run and step writes:
    nothing of that node is written and earlier data is unchanged (R-S-1 bounded Append stays consistent)."""
    before = await _first_node(repo)
    changed = run_pb2.DiagnosisRun()
    changed.CopyFrom(before)
    changed.verdict = contracts_pb2.VERDICT_REJECT
    changed.orchestration_trace.path.append(run_pb2.NODE_NAME_EXECUTOR)

    with pytest.raises(DuplicateRecord) as caught:
        await repo.commit_node(
            NodeCommit(
                "run-1",
                events=[make_event("run-1", 3), make_event("run-1", 2)],
                steps=[make_step("run-1", node=run_pb2.NODE_NAME_EXECUTOR)],
                run=changed,
            )
        )
    assert isinstance(caught.value, StoreError)
    assert caught.value.__cause__ is not None or isinstance(repo, MemoryStore)  # the SQL driver's error, chained

    assert await repo.get_run("run-1") == before
    assert [event.sequence for event in await repo.list_events("run-1")] == [1, 2]
    assert len(await repo.list_node_steps("run-1")) == 1
    assert (await repo.list_runs(tenant="acme", page_size=5, verdict=contracts_pb2.VERDICT_REJECT)).runs == []


async def test_a_duplicate_event_of_a_node_commit_writes_nothing(repo: RunStore) -> None:
    """The guarded first event, then a duplicate: the commit's step and first event are rolled back too."""
    await _first_node(repo)
    with pytest.raises(DuplicateRecord):
        await repo.commit_node(
            NodeCommit("run-1", events=[make_event("run-1", 3), make_event("run-1", 1)], steps=[make_step("run-1")])
        )
    assert [event.sequence for event in await repo.list_events("run-1")] == [1, 2]
    assert len(await repo.list_node_steps("run-1")) == 1


@pytest.mark.requirement("R-S-4")
async def test_records_of_another_run_are_refused(repo: RunStore) -> None:
    """No event, step or run of another run is written under this run_id."""
    await repo.create_run(make_run("run-1"))
    await repo.create_run(make_run("run-2"))
    bad_calls = [
        {"events": [make_event("run-2", 1)]},
        {"steps": [make_step("run-2")]},
        {"run": make_run("run-2")},
        {"events": [make_event("run-1", 0)]},
    ]
    for kwargs in bad_calls:
        with pytest.raises(InvalidRecord):
            await repo.commit_node(NodeCommit("run-1", **kwargs))  # type: ignore[arg-type]
    assert await repo.list_events("run-1") == []
    assert await repo.list_events("run-2") == []
    assert await repo.list_node_steps("run-1") == []


async def test_commit_node_of_unknown_or_finished_run_is_refused(repo: RunStore) -> None:
    with pytest.raises(RunNotFound):
        await repo.commit_node(NodeCommit("missing", events=[make_event("missing", 1)]))
    run = await _first_node(repo)
    run.status = run_pb2.RUN_STATUS_SUCCESS
    await repo.finish_run(run)
    for refused in (
        NodeCommit("run-1", events=[make_event("run-1", 3)]),
        NodeCommit("run-1", steps=[make_step("run-1")]),
    ):
        with pytest.raises(RunAlreadyFinished):
            await repo.commit_node(refused)
    with pytest.raises(RunAlreadyFinished):
        await repo.commit_node(NodeCommit("run-1"))  # a node with nothing to record still checks its run
    assert len(await repo.list_events("run-1")) == 2
    assert len(await repo.list_node_steps("run-1")) == 1


async def test_final_node_and_final_run_in_one_commit(repo: RunStore) -> None:
    run = await _first_node(repo)
    run.status = run_pb2.RUN_STATUS_SUCCESS
    await repo.commit_node(
        NodeCommit("run-1", events=[make_event("run-1", 3, node=run_pb2.NODE_NAME_COMPOSER)], run=run)
    )
    stored = await repo.get_run("run-1")
    assert stored is not None
    assert stored.status == run_pb2.RUN_STATUS_SUCCESS
    assert stored.HasField("completed_at")


async def test_events_after_a_sequence_with_a_limit(repo: RunStore) -> None:
    """WatchRun replays events from a sequence number."""
    await repo.create_run(make_run("run-1"))
    await repo.create_run(make_run("run-2"))
    for sequence in range(1, 8):
        await repo.commit_node(NodeCommit("run-1", events=[make_event("run-1", sequence)]))
    await repo.commit_node(NodeCommit("run-2", events=[make_event("run-2", 1)]))

    assert [event.sequence for event in await repo.list_events("run-1")] == [1, 2, 3, 4, 5, 6, 7]
    assert [event.sequence for event in await repo.list_events("run-1", after_sequence=4)] == [5, 6, 7]
    assert [event.sequence for event in await repo.list_events("run-1", after_sequence=2, limit=2)] == [3, 4]
    assert await repo.list_events("run-1", after_sequence=7) == []
    assert {event.run_id for event in await repo.list_events("run-2")} == {"run-2"}
    with pytest.raises(ValueError, match="limit"):
        await repo.list_events("run-1", limit=0)


async def test_node_steps_in_recording_order(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    nodes = [run_pb2.NODE_NAME_PLANNER, run_pb2.NODE_NAME_EXECUTOR, run_pb2.NODE_NAME_VERIFIER]
    for node in nodes:
        await repo.commit_node(NodeCommit("run-1", steps=[make_step("run-1", node=node)]))
    await repo.commit_node(NodeCommit("run-1", steps=[make_step("run-1", node=run_pb2.NODE_NAME_VERIFIER, attempt=2)]))
    steps = await repo.list_node_steps("run-1")
    assert [(step.node, step.attempt) for step in steps] == [(node, 1) for node in nodes] + [
        (run_pb2.NODE_NAME_VERIFIER, 2)
    ]
