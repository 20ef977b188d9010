"""Runs: create, get with tenant isolation, finish; a run's record is final once finished (R-T-2 repository)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.store import MemoryStore, NodeCommit, RunStore
from diagnosis_server.store.errors import DuplicateRecord, InvalidRecord, RunAlreadyFinished, RunNotFound, StoreError

from .store_builders import make_run


def _finished(
    run: run_pb2.DiagnosisRun, *, status: run_pb2.RunStatus.ValueType = run_pb2.RUN_STATUS_SUCCESS
) -> run_pb2.DiagnosisRun:
    final = run_pb2.DiagnosisRun()
    final.CopyFrom(run)
    final.status = status
    final.verdict = contracts_pb2.VERDICT_LOW_CONFID
    final.answer_text = "Payments returned 500s; the cause is not confirmed."
    final.answer.summary = final.answer_text
    final.answer.source = contracts_pb2.COMPOSER_SOURCE_COMPOSER
    final.self_evaluation.verifier_evaluation.traceability_version = "v2"
    final.self_evaluation.verifier_evaluation.effective_verdict = contracts_pb2.VERDICT_LOW_CONFID
    final.orchestration_trace.path.extend([run_pb2.NODE_NAME_PLANNER, run_pb2.NODE_NAME_COMPOSER])
    final.orchestration_trace.degraded = True
    return final


async def test_create_and_get_run(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    stored = await repo.get_run("run-1")
    assert stored is not None
    assert stored.run_id == "run-1"
    assert stored.tenant == "acme"
    assert stored.status == run_pb2.RUN_STATUS_RUNNING
    assert stored.HasField("created_at")
    assert stored.HasField("updated_at")
    assert not stored.HasField("completed_at")
    assert await repo.get_run("missing") is None


async def test_create_keeps_a_given_created_at_to_the_microsecond(repo: RunStore) -> None:
    run = make_run("run-1")
    run.created_at.FromDatetime(datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC))
    run.created_at.nanos += 999
    await repo.create_run(run)
    stored = await repo.get_run("run-1")
    assert stored is not None
    assert stored.created_at.ToDatetime(tzinfo=UTC) == datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    assert stored.created_at.nanos % 1000 == 0


@pytest.mark.requirement("R-S-4")
async def test_get_run_of_a_foreign_tenant_is_none(repo: RunStore) -> None:
    """run_id is the ownership boundary; a tenant never sees another tenant's run."""
    await repo.create_run(make_run("run-1", tenant="acme"))
    assert await repo.get_run("run-1", tenant="globex") is None
    assert await repo.get_run("run-1", tenant="acme") is not None
    assert await repo.get_run("run-1") is not None


async def test_duplicate_run_id_is_refused(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1", question="first"))
    with pytest.raises(DuplicateRecord) as caught:
        await repo.create_run(make_run("run-1", question="second", tenant="globex"))
    assert isinstance(caught.value, StoreError)
    assert caught.value.__cause__ is not None or isinstance(repo, MemoryStore)  # the SQL driver's error, chained
    stored = await repo.get_run("run-1")
    assert stored is not None
    assert stored.question == "first"
    assert stored.tenant == "acme"


@pytest.mark.parametrize("status", [run_pb2.RUN_STATUS_SUCCESS, run_pb2.RUN_STATUS_FAILED])
async def test_a_new_run_that_is_not_running_is_refused(repo: RunStore, status: run_pb2.RunStatus.ValueType) -> None:
    run = make_run("run-1")
    run.status = status
    with pytest.raises(InvalidRecord):
        await repo.create_run(run)
    assert await repo.get_run("run-1") is None


@pytest.mark.parametrize("run_id", ["", "x" * 129])
async def test_a_run_id_empty_or_too_long_is_refused(repo: RunStore, run_id: str) -> None:
    with pytest.raises(InvalidRecord):
        await repo.create_run(make_run(run_id))


@pytest.mark.requirement("R-A-6")
async def test_finish_run_stores_the_final_state(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    created = await repo.get_run("run-1")
    assert created is not None
    await repo.finish_run(_finished(created))

    stored = await repo.get_run("run-1")
    assert stored is not None
    assert stored.status == run_pb2.RUN_STATUS_SUCCESS
    assert stored.verdict == contracts_pb2.VERDICT_LOW_CONFID
    assert stored.answer.summary.startswith("Payments")
    assert stored.self_evaluation.verifier_evaluation.effective_verdict == contracts_pb2.VERDICT_LOW_CONFID
    assert stored.orchestration_trace.degraded
    assert stored.HasField("completed_at")
    assert stored.created_at == created.created_at
    page = await repo.list_runs(tenant="acme", page_size=10, status=run_pb2.RUN_STATUS_SUCCESS)
    assert [run.run_id for run in page.runs] == ["run-1"]


async def test_finish_run_without_created_at_keeps_the_stored_one(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    created = await repo.get_run("run-1")
    assert created is not None
    final = _finished(make_run("run-1"))
    assert not final.HasField("created_at")
    await repo.finish_run(final)
    stored = await repo.get_run("run-1")
    assert stored is not None
    assert stored.created_at == created.created_at


async def test_finished_run_never_goes_back_to_running(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    created = await repo.get_run("run-1")
    assert created is not None
    await repo.finish_run(_finished(created, status=run_pb2.RUN_STATUS_FAILED))

    with pytest.raises(RunAlreadyFinished):
        await repo.commit_node(NodeCommit("run-1", run=created))
    with pytest.raises(RunAlreadyFinished):
        await repo.finish_run(_finished(created, status=run_pb2.RUN_STATUS_SUCCESS))
    stored = await repo.get_run("run-1")
    assert stored is not None
    assert stored.status == run_pb2.RUN_STATUS_FAILED


async def test_finish_run_needs_a_final_status(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1"))
    with pytest.raises(InvalidRecord):
        await repo.finish_run(make_run("run-1"))
    with pytest.raises(RunNotFound):
        await repo.finish_run(_finished(make_run("missing")))


async def test_a_run_cannot_move_to_another_tenant(repo: RunStore) -> None:
    await repo.create_run(make_run("run-1", tenant="acme"))
    with pytest.raises(InvalidRecord):
        await repo.finish_run(_finished(make_run("run-1", tenant="globex")))
    assert await repo.get_run("run-1", tenant="acme") is not None


async def test_payload_and_indexed_columns_agree(repo: RunStore) -> None:
    """The status and verdict filters see exactly what the payload says."""
    await repo.create_run(make_run("run-1"))
    await repo.create_run(make_run("run-2"))
    run = await repo.get_run("run-2")
    assert run is not None
    await repo.finish_run(_finished(run, status=run_pb2.RUN_STATUS_FAILED))
    for status in (run_pb2.RUN_STATUS_RUNNING, run_pb2.RUN_STATUS_FAILED):
        page = await repo.list_runs(tenant=None, page_size=10, status=status)
        assert page.runs
        assert all(item.status == status for item in page.runs)
    page = await repo.list_runs(tenant=None, page_size=10, verdict=contracts_pb2.VERDICT_LOW_CONFID)
    assert [item.run_id for item in page.runs] == ["run-2"]
    assert await repo.count_runs(tenant="acme") == 2
    assert await repo.count_runs(status=run_pb2.RUN_STATUS_FAILED) == 1
