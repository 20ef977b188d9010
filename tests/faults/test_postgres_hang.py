"""PostgreSQL hung under two running replicas (SIGSTOP of the server and its backends), then resumed.

A hung server answers nothing and closes nothing: every store call must be bounded (DIAGNOSIS_STORE_TIMEOUT_S,
1 s here), health must turn NOT_SERVING and calls UNAVAILABLE while it hangs, and once it resumes neither
replica may sweep the other's live run for the heartbeats nobody could write meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.settings import load_settings
from tests.support.fakes import PassProvider, tools_for
from tests.support.postgres import reset_postgres
from tests.support.rpc import eventually, next_message, read_rest, retry_delay_s

from .postgres import RestartablePostgres

pytestmark = pytest.mark.postgres

NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVING = health_pb2.HealthCheckResponse.SERVING
STORE_TIMEOUT_S = 1.0
STALE_AFTER_S = 1.0
HANG_S = 3.0  # longer than the staleness: a sweep comparing what it saw before with after would fire


def _server_processes(postgres: RestartablePostgres) -> list[int]:
    """The postmaster and every process it started (backends, checkpointer, WAL writer, ...)."""
    postmaster = int((Path(postgres.server.data) / "postmaster.pid").read_text().split()[0])
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                    children.append(int(entry.name))
    return [postmaster, *children]


@contextlib.contextmanager
def hung(postgres: RestartablePostgres) -> Iterator[None]:
    processes = _server_processes(postgres)
    for pid in processes:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in processes:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


@pytest.fixture
async def replicas(postgres: RestartablePostgres) -> AsyncIterator[list[tuple[RunningServer, PassProvider]]]:
    await reset_postgres(postgres.url, drop=False)
    started: list[tuple[RunningServer, PassProvider]] = []
    try:
        for name in ("node-a", "node-b"):
            provider = PassProvider(gate=asyncio.Event(), gate_role="composer")
            settings = load_settings(
                address="127.0.0.1:0",
                database_url=postgres.url,
                metrics_address="",
                http_address="",
                instance_id=name,
                store_probe_interval_s=0.1,
                store_timeout_s=STORE_TIMEOUT_S,
                orphan_stale_after_s=STALE_AFTER_S,
            )
            running = await start_server(settings, provider=provider, tools_for=tools_for, heartbeat_interval_s=0.1)
            started.append((running, provider))
        yield started
    finally:
        for running, provider in started:
            assert provider.gate is not None
            provider.gate.set()
            await asyncio.wait_for(running.stop(grace=5), timeout=30)


async def _health(channel: grpc.aio.Channel) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    return int(reply.status)


async def test_a_hung_postgres_is_an_outage_and_live_runs_survive_it(
    replicas: list[tuple[RunningServer, PassProvider]], postgres: RestartablePostgres
) -> None:
    (first, provider), (second, _) = replicas
    async with grpc.aio.insecure_channel(first.target) as channel:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        stream = stub.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
        run_id = (await next_message(stream)).run_id
        await provider.entered.acquire()  # the run is live on the first replica, waiting in its Composer
        await asyncio.sleep(2 * STALE_AFTER_S)  # the second replica has watched its heartbeat being renewed

        with hung(postgres):
            began = time.monotonic()
            with pytest.raises(grpc.aio.AioRpcError) as read:
                await stub.GetRun(pb.GetRunRequest(run_id=run_id), timeout=30)
            assert read.value.code() == grpc.StatusCode.UNAVAILABLE
            assert retry_delay_s(read.value) > 0
            assert time.monotonic() - began < 4 * STORE_TIMEOUT_S + 2  # bounded, not the call's 30 s
            await eventually(lambda: not first.store_health.writable, within_s=10)
            await eventually(lambda: not second.store_health.writable, within_s=10)
            assert await _health(channel) == NOT_SERVING
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await read_rest(stub.Diagnose(pb.DiagnoseRequest(question="a new run"), timeout=30))
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            await asyncio.sleep(max(0.0, HANG_S - (time.monotonic() - began)))

        await eventually(lambda: first.store_health.writable and second.store_health.writable, within_s=20)
        assert await _health(channel) == SERVING
        await asyncio.sleep(3 * STALE_AFTER_S)  # many sweeps of both replicas after the hang
        stored = (await stub.GetRun(pb.GetRunRequest(run_id=run_id), timeout=10)).run
        assert stored.status == run_pb2.RUN_STATUS_RUNNING, stored.failure_reason  # not swept for the outage

        assert provider.gate is not None
        provider.gate.set()
        rest = await asyncio.wait_for(read_rest(stream), timeout=60)
        assert rest[-1].run.status == run_pb2.RUN_STATUS_SUCCESS
