"""Start-up and shutdown: health, graceful drain, INTERRUPTED runs, orphans, reflection, metrics, signals."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import urllib.request
from contextlib import closing
from pathlib import Path

import grpc
import grpc.aio
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.cli.serve import serve
from diagnosis_server.store import INTERRUPTED, open_repository
from tests.support.fakes import PassProvider, tools_for
from tests.support.rpc import eventually, next_message, read_rest

from .conftest import Api, ApiFactory, make_settings

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def test_health_is_serving_for_the_server_and_each_service(api: Api) -> None:
    health = health_pb2_grpc.HealthStub(api.channel)
    for service in ("", "diagnosis.v1.DiagnosisService", "diagnosis.v1.GatekeeperService"):
        assert (await health.Check(health_pb2.HealthCheckRequest(service=service))).status == SERVING


async def test_shutdown_goes_not_serving_and_interrupts_runs_left_after_the_grace(api_factory: ApiFactory) -> None:
    provider = PassProvider(gate=asyncio.Event())  # never released: the run cannot finish
    api = await api_factory(provider=provider)
    health = health_pb2_grpc.HealthStub(api.channel)
    watch = health.Watch(health_pb2.HealthCheckRequest(service=""))
    assert (await next_message(watch)).status == SERVING
    diagnose = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
    run_id = (await next_message(diagnose)).run_id
    await provider.entered.acquire()

    stopping = asyncio.create_task(api.running.stop(grace=0.2))
    assert (await next_message(watch)).status == NOT_SERVING
    watch.cancel()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnosis.ListScenarios(pb.ListScenariosRequest(), timeout=5)
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE  # no new RPCs once shutdown starts

    # The run's stream still gets its end: the stored run, FAILED with reason INTERRUPTED.
    final = (await read_rest(diagnose))[-1]
    assert final.run.run_id == run_id
    assert final.run.status == run_pb2.RUN_STATUS_FAILED
    assert final.run.failure_reason == INTERRUPTED
    assert await asyncio.wait_for(stopping, timeout=10) == [run_id]

    repository = await open_repository(api.running.settings.database_url.get_secret_value())
    try:
        stored = await repository.get_run(run_id)
    finally:
        await repository.close()
    assert stored is not None and stored.status == run_pb2.RUN_STATUS_FAILED
    assert stored.failure_reason == INTERRUPTED


async def test_shutdown_lets_a_run_finish_within_the_grace(api_factory: ApiFactory) -> None:
    provider = PassProvider(gate=asyncio.Event())
    api = await api_factory(provider=provider)
    diagnose = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
    run_id = (await next_message(diagnose)).run_id
    await provider.entered.acquire()

    stopping = asyncio.create_task(api.running.stop(grace=10))
    await eventually(lambda: not api.running.runs.accepting)  # the shutdown has begun ...
    provider.gate.set()  # type: ignore[union-attr]
    final = (await read_rest(diagnose))[-1]  # ... and the run still ends well, its stream too
    assert final.run.status == run_pb2.RUN_STATUS_SUCCESS
    assert await asyncio.wait_for(stopping, timeout=10) == []
    assert final.run.run_id == run_id


async def test_runs_left_running_by_a_dead_instance_are_interrupted_at_start_up(
    api_factory: ApiFactory, tmp_path: Path
) -> None:
    """A run whose heartbeat is older than DIAGNOSIS_ORPHAN_STALE_AFTER_S (a setting) is swept at start-up."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'api.db'}"
    previous_life = await open_repository(url, owner="node-a-0123456789ab")
    for run_id in ("run-left-behind", "run-fresh"):
        run = run_pb2.DiagnosisRun(run_id=run_id, tenant="default", question="q", scenario="checkout-oom")
        await previous_life.create_run(run)
    await previous_life.close()
    with closing(sqlite3.connect(tmp_path / "api.db")) as conn, conn:
        conn.execute(
            "UPDATE diagnosis_run SET heartbeat_at = '2000-01-01 00:00:00.000000' WHERE run_id = 'run-left-behind'"
        )

    api = await api_factory(instance_id="node-a", orphan_stale_after_s=600)
    stored = (await api.diagnosis.GetRun(pb.GetRunRequest(run_id="run-left-behind"))).run
    assert stored.status == run_pb2.RUN_STATUS_FAILED
    assert stored.failure_reason == INTERRUPTED
    # Fresh within the threshold: it may be alive on another instance.
    fresh = (await api.diagnosis.GetRun(pb.GetRunRequest(run_id="run-fresh"))).run
    assert fresh.status == run_pb2.RUN_STATUS_RUNNING


async def test_two_replicas_given_one_instance_id_never_interrupt_each_other(api_factory: ApiFactory) -> None:
    """DIAGNOSIS_INSTANCE_ID is a prefix: each process is its own owner in the store."""
    gate = asyncio.Event()
    first = await api_factory(
        provider=PassProvider(gate=gate), instance_id="node-a", start_kwargs={"heartbeat_interval_s": 0.05}
    )
    stream = first.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
    started = await next_message(stream)
    assert first.provider is not None
    await first.provider.entered.acquire()  # the run is live in the first replica

    second = await api_factory(instance_id="node-a", start_kwargs={"heartbeat_interval_s": 0.05})
    assert first.running.repository.owner != second.running.repository.owner
    assert first.running.repository.owner.startswith("node-a-")
    await asyncio.sleep(0.3)  # several sweeps of the second replica
    await second.running.stop(grace=0)  # its shutdown interrupts only its own runs
    run = (await first.diagnosis.GetRun(pb.GetRunRequest(run_id=started.run_id))).run
    assert run.status == run_pb2.RUN_STATUS_RUNNING

    gate.set()
    rest = await read_rest(stream)
    assert rest[-1].run.status == run_pb2.RUN_STATUS_SUCCESS


async def test_reflection_lists_every_service_and_describes_them(api: Api) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(api.channel)
    requests = [
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="diagnosis.v1.DiagnosisService"),
    ]
    responses = [r async for r in stub.ServerReflectionInfo(iter(requests))]
    names = {s.name for s in responses[0].list_services_response.service}
    assert names == {
        "diagnosis.v1.DiagnosisService",
        "diagnosis.v1.GatekeeperService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    }
    assert responses[1].file_descriptor_response.file_descriptor_proto  # enough for grpcurl / buf curl


async def test_reflection_v1_answers_and_describes_itself(api: Api) -> None:
    """grpc.reflection.v1 (what current grpcurl and buf curl try first) is served, not only v1alpha."""
    info = api.channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    requests = [
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="diagnosis.v1.DiagnosisService"),
    ]
    responses = [r async for r in info(iter(requests))]
    names = {s.name for s in responses[0].list_services_response.service}
    assert "grpc.reflection.v1.ServerReflection" in names and "diagnosis.v1.DiagnosisService" in names
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in responses[1].file_descriptor_response.file_descriptor_proto
    ]
    v1 = next(f for f in files if f.package == "grpc.reflection.v1")
    assert v1.service[0].method[0].input_type == ".grpc.reflection.v1.ServerReflectionRequest"
    assert responses[2].file_descriptor_response.file_descriptor_proto


async def test_health_list_reports_every_service(api: Api) -> None:
    reply = await health_pb2_grpc.HealthStub(api.channel).List(health_pb2.HealthListRequest())
    statuses = {name: status.status for name, status in reply.statuses.items()}
    assert statuses == {
        "": SERVING,
        "diagnosis.v1.DiagnosisService": SERVING,
        "diagnosis.v1.GatekeeperService": SERVING,
    }


async def test_metrics_endpoint_counts_runs_rpcs_and_node_latency(api_factory: ApiFactory) -> None:
    api = await api_factory(metrics_address="127.0.0.1:0")
    assert api.running.metrics_port
    await api.diagnose()
    # An RPC is counted once it is over on the server, which may be just after the caller has its answer.
    rpcs = api.running.metrics.rpcs.labels(method="diagnosis.v1.DiagnosisService/Diagnose", code="OK")
    await eventually(lambda: rpcs._value.get() == 1)
    url = f"http://127.0.0.1:{api.running.metrics_port}/metrics"
    body = (await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())).decode()
    assert 'diagnosis_runs_total{end_reason="COMPOSED",status="SUCCESS",verdict="PASS"} 1.0' in body
    assert "diagnosis_runs_in_progress 0.0" in body
    assert 'diagnosis_rpcs_total{code="OK",method="diagnosis.v1.DiagnosisService/Diagnose"} 1.0' in body
    assert 'diagnosis_rpc_duration_seconds_count{code="OK",method="diagnosis.v1.DiagnosisService/Diagnose"} 1.0' in body
    assert 'diagnosis_node_latency_seconds_count{node="planner"} 1.0' in body
    assert 'diagnosis_active_streams{method="diagnosis.v1.DiagnosisService/Diagnose"} 0.0' in body
    assert "diagnosis_store_writable 1.0" in body
    # The tools the PassProvider's Executor called, by tool and status, with their latency.
    tool_calls = [line for line in body.splitlines() if line.startswith("diagnosis_tool_calls_total{")]
    assert tool_calls and all('status="OK"' in line for line in tool_calls), tool_calls
    assert "diagnosis_tool_call_duration_seconds_bucket{" in body
    # The standard collectors: this process's CPU, memory and file descriptors, the interpreter, its GC.
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "python_info"):
        assert f"\n{name}" in body, name
    assert "python_gc_collections_total" in body
    own = {line.split("{")[0].split(" ")[0] for line in body.splitlines() if line and not line.startswith("#")}
    unprefixed = sorted(n for n in own if not n.startswith(("diagnosis_", "process_", "python_")))
    assert unprefixed == []
    assert api.running.metrics.runs.labels(status="SUCCESS", verdict="PASS", end_reason="COMPOSED")._value.get() == 1


async def test_sigterm_stops_serve_gracefully_with_status_0(tmp_path: Path) -> None:
    served: list[RunningServer] = []
    ready = asyncio.Event()

    def on_serving(running: RunningServer) -> None:
        served.append(running)
        ready.set()

    settings = make_settings(tmp_path, shutdown_grace_s=1.0)
    task = asyncio.create_task(serve(settings, on_serving=on_serving, provider=PassProvider(), tools_for=tools_for))
    await asyncio.wait_for(ready.wait(), timeout=10)
    async with grpc.aio.insecure_channel(served[0].target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        assert (await health.Check(health_pb2.HealthCheckRequest())).status == SERVING
    os.kill(os.getpid(), signal.SIGTERM)
    assert await asyncio.wait_for(task, timeout=10) == 0


async def test_serve_refuses_bad_start_up_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = make_settings(tmp_path, address="0.0.0.0:0")
    assert await serve(settings, provider=PassProvider(), tools_for=tools_for) == 2
    assert "refusing to serve on 0.0.0.0:0 without authentication" in capsys.readouterr().err


async def test_a_run_interrupted_by_shutdown_counts_in_metrics(api_factory: ApiFactory) -> None:
    provider = PassProvider(gate=asyncio.Event())
    api = await api_factory(provider=provider)
    diagnose = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="q"))
    await diagnose.read()
    await provider.entered.acquire()
    assert len(await api.running.stop(grace=0)) == 1
    assert api.running.metrics.runs.labels(status="FAILED", verdict="NONE", end_reason=INTERRUPTED)._value.get() == 1
    assert api.running.metrics.runs.labels(status="SUCCESS", verdict="PASS", end_reason="COMPOSED")._value.get() == 0


async def test_stopping_the_server_closes_a_provider_that_holds_connections(tmp_path: Path) -> None:
    class ClosingProvider(PassProvider):
        closed = 0

        async def aclose(self) -> None:
            ClosingProvider.closed += 1

    running = await start_server(make_settings(tmp_path), provider=ClosingProvider(), tools_for=tools_for)
    await running.stop(0.1)
    assert ClosingProvider.closed == 1
