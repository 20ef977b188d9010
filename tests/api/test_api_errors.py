"""Unexpected failures: INTERNAL with a generic message, never internal text; logged with the run id."""

from __future__ import annotations

from typing import Any

import grpc
import grpc.aio
import pytest
from structlog.testing import capture_logs

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from diagnosis_server.store import StoreError
from tests.support.rpc import error_reason, eventually, read_rest, retry_delay_s

from .conftest import Api

SECRET = "postgresql://admin:hunter2@db.internal/prod"


def fail_get_run(api: Api, monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """Every read of a run raises ``error``."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(api.running.repository, "get_run", broken)


async def test_an_unexpected_error_is_internal_with_a_generic_message(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_get_run(api, monkeypatch, RuntimeError(f"connection to {SECRET} refused"))
    with capture_logs() as logs:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await api.diagnosis.GetRun(pb.GetRunRequest(run_id="run-abc"))
        await eventually(lambda: any(entry["event"] == "rpc" for entry in logs))
    assert caught.value.code() == grpc.StatusCode.INTERNAL
    assert caught.value.details() == "internal error"
    assert error_reason(caught.value) == "INTERNAL"
    assert SECRET not in str(caught.value.trailing_metadata())
    failure = next(entry for entry in logs if entry["event"] == "rpc_failed")
    assert failure["run_id"] == "run-abc"
    assert failure["log_level"] == "error"
    assert any(entry["event"] == "rpc" and entry["code"] == "INTERNAL" for entry in logs)


async def test_a_store_failure_is_unavailable_with_a_retry_hint_and_no_internal_text(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_get_run(api, monkeypatch, StoreError(f"connection to {SECRET} refused"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnosis.GetRun(pb.GetRunRequest(run_id="run-abc"))
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    assert error_reason(caught.value) == "STORE_UNAVAILABLE"
    assert retry_delay_s(caught.value) > 0
    assert SECRET not in str(caught.value.trailing_metadata())


async def test_a_stream_failing_midway_ends_internal_after_what_it_sent(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = (await api.diagnose())[-1].run

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(SECRET)

    real_get_run = api.running.repository.get_run
    calls = 0

    async def get_run_once(*args: Any, **kwargs: Any) -> run_pb2.DiagnosisRun | None:
        nonlocal calls
        calls += 1
        if calls == 1:
            return await real_get_run(*args, **kwargs)
        await broken()
        return None

    monkeypatch.setattr(api.running.repository, "get_run", get_run_once)
    call = api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run.run_id))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await read_rest(call)
    assert caught.value.code() == grpc.StatusCode.INTERNAL
    assert SECRET not in (caught.value.details() or "")
