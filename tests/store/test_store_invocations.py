"""Tool invocations: every tool call of a run is a row of that run, in recording order (R-C-2, R-S-4)."""

from __future__ import annotations

import asyncio

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.store import DuplicateRecord, InvalidRecord, RunAlreadyFinished, RunNotFound, RunStore

from .store_builders import make_invocation, make_run


@pytest.mark.requirement("R-C-2")
async def test_invocations_are_listed_in_recording_order(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    ids = ["inv-c", "inv-a", "inv-b"]
    for invocation_id in ids:
        await repo.add_tool_invocation(make_invocation("run-1", invocation_id))
    listed = await repo.list_tool_invocations("run-1")
    assert [item.invocation_id for item in listed] == ids
    assert listed[0] == make_invocation("run-1", "inv-c")


@pytest.mark.requirement("R-S-4")
async def test_invocations_are_scoped_to_their_run(repo: RunStore) -> None:
    """Another run's invocation, even with the same id, is never listed for this run (R-GK-3's input)."""
    await repo.create_run(make_run("run-1"))
    await repo.create_run(make_run("run-2", tenant="globex"))
    await repo.add_tool_invocation(make_invocation("run-1", "inv-1", tool_name="logs.search"))
    await repo.add_tool_invocation(make_invocation("run-2", "inv-1", tool_name="metrics.query"))
    await repo.add_tool_invocation(make_invocation("run-2", "inv-2"))

    first = await repo.list_tool_invocations("run-1")
    assert [(item.run_id, item.invocation_id, item.tool_name) for item in first] == [("run-1", "inv-1", "logs.search")]
    second = await repo.list_tool_invocations("run-2")
    assert {item.run_id for item in second} == {"run-2"}
    assert await repo.list_tool_invocations("run-3") == []


async def test_duplicate_invocation_id_in_a_run_is_refused(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    await repo.add_tool_invocation(make_invocation("run-1", "inv-1", tool_name="logs.search"))
    with pytest.raises(DuplicateRecord):
        await repo.add_tool_invocation(make_invocation("run-1", "inv-1", tool_name="metrics.query"))
    listed = await repo.list_tool_invocations("run-1")
    assert [item.tool_name for item in listed] == ["logs.search"]


async def test_invocation_of_an_unknown_or_finished_run_is_refused(repo: RunStore) -> None:
    with pytest.raises(RunNotFound):
        await repo.add_tool_invocation(make_invocation("missing", "inv-1"))
    await repo.create_run(make_run("run-1"))
    await repo.interrupt_owned()
    with pytest.raises(RunAlreadyFinished):
        await repo.add_tool_invocation(make_invocation("run-1", "inv-1"))
    assert await repo.list_tool_invocations("run-1") == []


@pytest.mark.parametrize(("run_id", "invocation_id"), [("", "inv-1"), ("run-1", "")])
async def test_invocation_without_ids_is_refused(repo: RunStore, run_id: str, invocation_id: str) -> None:
    await repo.create_run(make_run("run-1"))
    with pytest.raises(InvalidRecord):
        await repo.add_tool_invocation(make_invocation(run_id, invocation_id))


async def test_concurrent_tool_calls_of_one_run_are_all_recorded(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    await asyncio.gather(*(repo.add_tool_invocation(make_invocation("run-1", f"inv-{i:02d}")) for i in range(12)))
    listed = await repo.list_tool_invocations("run-1")
    assert sorted(item.invocation_id for item in listed) == [f"inv-{i:02d}" for i in range(12)]
    run = await repo.get_run("run-1")
    assert run is not None
    assert run.status == run_pb2.RUN_STATUS_RUNNING
