"""The SQLite database file deleted (or replaced) under a running server: a real unlink of the file.

The server's connection keeps writing to the unlinked inode, so every write "succeeds" and is lost on
restart. The store probe compares the file at the path with the one opened: NOT_SERVING, a clear log
line naming the path, and new runs refused, for the rest of the process's life.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from structlog.testing import capture_logs

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.settings import load_settings
from tests.support.fakes import PassProvider, tools_for
from tests.support.rpc import error_reason, eventually


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[RunningServer]:
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}",
        metrics_address="",
        http_address="",
        store_probe_interval_s=0.05,
    )
    server = await start_server(settings, provider=PassProvider(), tools_for=tools_for)
    try:
        yield server
    finally:
        await server.stop(grace=1)


@pytest.mark.parametrize("how", ["deleted", "replaced"])
async def test_database_file_lost_goes_not_serving(running: RunningServer, tmp_path: Path, how: str) -> None:
    database = tmp_path / "store.db"
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        assert (await health.Check(health_pb2.HealthCheckRequest())).status == health_pb2.HealthCheckResponse.SERVING
        with capture_logs() as logs:
            if how == "replaced":
                shutil.copyfile(database, tmp_path / "copy.db")
                (tmp_path / "copy.db").replace(database)
            else:
                database.unlink()
            await eventually(lambda: running.store_health.file_lost, within_s=5)
        lost = next(entry for entry in logs if entry["event"] == "store_file_lost")
        assert lost["log_level"] == "error"
        assert str(database) in lost["error"] and how in lost["error"]
        assert "restart" in lost["hint"]
        for service in ("", "diagnosis.v1.DiagnosisService"):
            status = (await health.Check(health_pb2.HealthCheckRequest(service=service))).status
            assert status == health_pb2.HealthCheckResponse.NOT_SERVING
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            [m async for m in stub.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))]
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert error_reason(refused.value) == "STORE_UNAVAILABLE"
        # It stays so: a later probe does not turn it SERVING again.
        assert not await running.store_health.probe_once()
        assert (
            await health.Check(health_pb2.HealthCheckRequest())
        ).status == health_pb2.HealthCheckResponse.NOT_SERVING
