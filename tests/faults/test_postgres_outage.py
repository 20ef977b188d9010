"""PostgreSQL stopped under a running server for a few seconds, then started again (a real outage).

While it is down: health NOT_SERVING (the store probe), reads are UNAVAILABLE with a google.rpc.RetryInfo,
new runs are refused the same way, and a run in flight keeps retrying its final write; once it is back:
SERVING again, the run ends with a final record (never RUNNING), and new runs succeed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.settings import load_settings
from diagnosis_server.store import INTERRUPTED
from tests.support.fakes import PassProvider, tools_for
from tests.support.postgres import reset_postgres
from tests.support.rpc import error_reason, eventually, next_message, read_rest, retry_delay_s

from .postgres import RestartablePostgres

pytestmark = pytest.mark.postgres

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.fixture(params=[60.0], ids=["retry-60s"])
async def served(
    postgres: RestartablePostgres, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[RunningServer, PassProvider]]:
    await reset_postgres(postgres.url, drop=False)
    provider = PassProvider(gate=asyncio.Event(), gate_role="composer")
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=postgres.url,
        metrics_address="",
        http_address="",
        store_probe_interval_s=0.1,
        store_retry_s=request.param,
    )
    running = await start_server(settings, provider=provider, tools_for=tools_for, heartbeat_interval_s=0.1)
    try:
        yield running, provider
    finally:
        assert provider.gate is not None
        provider.gate.set()
        if not postgres.running:
            postgres.start()
        await asyncio.wait_for(running.stop(grace=5), timeout=30)


async def _health(channel: grpc.aio.Channel) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""))
    return int(reply.status)


async def test_postgres_restart_mid_run(
    served: tuple[RunningServer, PassProvider], postgres: RestartablePostgres
) -> None:
    running, provider = served
    assert provider.gate is not None
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        assert await _health(channel) == SERVING
        stream = stub.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
        started = await next_message(stream)
        await provider.entered.acquire()  # the run waits in its Composer

        await asyncio.to_thread(postgres.stop)
        await eventually(lambda: not running.store_health.writable, within_s=10)
        assert await _health(channel) == NOT_SERVING

        with pytest.raises(grpc.aio.AioRpcError) as read_failed:
            await stub.GetRun(pb.GetRunRequest(run_id=started.run_id))
        assert read_failed.value.code() == grpc.StatusCode.UNAVAILABLE
        assert error_reason(read_failed.value) == "STORE_UNAVAILABLE"
        assert retry_delay_s(read_failed.value) > 0
        assert "postgres" not in (read_failed.value.details() or "")

        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await read_rest(stub.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?")))
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert retry_delay_s(refused.value) > 0

        provider.gate.set()  # the run goes on while the store is down: its writes fail, its final write retries
        await asyncio.sleep(1.0)
        await asyncio.to_thread(postgres.start)

        rest = await asyncio.wait_for(read_rest(stream), timeout=60)
        final = rest[-1].run
        assert final.status in (run_pb2.RUN_STATUS_SUCCESS, run_pb2.RUN_STATUS_FAILED)
        assert final.status == run_pb2.RUN_STATUS_SUCCESS or final.failure_reason.startswith("STORE_ERROR")
        stored = (await stub.GetRun(pb.GetRunRequest(run_id=started.run_id))).run
        assert stored.status == final.status

        await eventually(lambda: running.store_health.writable, within_s=10)
        assert await _health(channel) == SERVING
        provider.gate.set()
        again = await read_rest(stub.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?")))
        assert again[-1].run.status == run_pb2.RUN_STATUS_SUCCESS


@pytest.mark.parametrize("served", [0.5], ids=["retry-0.5s"], indirect=True)
async def test_a_final_write_given_up_during_an_outage_is_swept_by_its_own_instance(
    served: tuple[RunningServer, PassProvider], postgres: RestartablePostgres
) -> None:
    """The outage outlasts DIAGNOSIS_STORE_RETRY_S: the run's task ends with the run RUNNING in the store.
    Its stream fails UNAVAILABLE (never OK with a RUNNING run); once PostgreSQL is back, this instance's
    own sweep marks it INTERRUPTED (it is no longer heartbeated), and WatchRun shows how it ended."""
    running, provider = served
    assert provider.gate is not None
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        stream = stub.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
        started = await next_message(stream)
        await provider.entered.acquire()
        await asyncio.to_thread(postgres.stop)
        provider.gate.set()
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await asyncio.wait_for(read_rest(stream), timeout=30)
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
        await eventually(lambda: not running.runs.active_run_ids, within_s=10)  # the task gave up

        await asyncio.to_thread(postgres.start)
        await eventually(lambda: running.store_health.writable, within_s=10)

        async def interrupted() -> run_pb2.DiagnosisRun:
            while True:
                run = (await stub.GetRun(pb.GetRunRequest(run_id=started.run_id))).run
                if run.status != run_pb2.RUN_STATUS_RUNNING:
                    return run
                await asyncio.sleep(0.05)

        run = await asyncio.wait_for(interrupted(), timeout=15)
        assert (run.status, run.failure_reason) == (run_pb2.RUN_STATUS_FAILED, INTERRUPTED)
        watched = [m async for m in stub.WatchRun(pb.WatchRunRequest(run_id=started.run_id))]
        assert (watched[-1].ended.status, watched[-1].ended.reason) == (run_pb2.RUN_STATUS_FAILED, INTERRUPTED)
