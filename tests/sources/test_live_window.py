"""A live run reads the window it is asked about: the request's ``time_window`` (or the question's dates and
times, else the last hour) bounds every Prometheus range and instant read of the embedded default on a real
Prometheus (backfilled with promtool), is recorded on the run and said in the answer; a window that does not run
forwards is INVALID_ARGUMENT naming the field; with environments configured and none the default, a request naming
neither environment nor scenario is INVALID_ARGUMENT naming them."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import grpc
import grpc.aio
import pytest
from google.protobuf.json_format import MessageToDict

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.api.components import load_provider
from diagnosis_server.settings import load_settings

from . import k8s_recorded as rec
from .conftest import PrometheusServer, write_kubeconfig
from .fake_http import FakeUpstream

# The backfilled requests are labelled by job: the operator's error-rate query names the service by it.
ERROR_RATE = (
    'sum by (job) (rate(http_requests_total{{job="{service}",code=~"5.."}}[5m]))'
    ' / sum by (job) (rate(http_requests_total{{job="{service}"}}[5m]))'
)


@dataclass
class Served:
    running: RunningServer
    stub: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub


async def _serve(tmp_path: Path, environments: str) -> tuple[RunningServer, grpc.aio.Channel]:
    (tmp_path / "environments.toml").write_text(environments)
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'window.db'}",
        metrics_address="",
        http_address="",
        environments_file=str(tmp_path / "environments.toml"),
    )
    running = await start_server(settings, provider=load_provider("heuristic"))
    return running, grpc.aio.insecure_channel(running.target)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)


@pytest.fixture
async def served(tmp_path: Path, clean_env: None, prometheus_server: PrometheusServer) -> AsyncIterator[Served]:
    cluster = FakeUpstream(rec.Cluster())
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", cluster.url)
    running, channel = await _serve(
        tmp_path,
        f"""
[environments.prod]
default = true
prometheus = {{ url = "{prometheus_server.url}", error_rate_query = '{ERROR_RATE}' }}
kubernetes = {{ kubeconfig = "{kubeconfig}", context = "test", namespaces = ["shop"] }}
""",
    )
    try:
        yield Served(running, diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel))
    finally:
        await channel.close()
        await running.stop(grace=2.0)
        cluster.close()


def _window(start: float, end: float) -> run_pb2.TimeWindow:
    window = run_pb2.TimeWindow()
    window.start.FromSeconds(int(start))
    window.end.FromSeconds(int(end))
    return window


async def _diagnose(
    stub: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub, **context: object
) -> run_pb2.DiagnosisRun:
    request = pb.DiagnoseRequest(question="Why is checkout-api failing?", context=pb.RequestContext(**context))  # type: ignore[arg-type]
    messages = [m async for m in stub.Diagnose(request)]
    return messages[-1].run


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


async def test_every_prometheus_read_covers_the_requested_window(
    served: Served, prometheus_server: PrometheusServer
) -> None:
    start, end = prometheus_server.start, prometheus_server.start + 3600  # the first of the two backfilled hours
    run = await _diagnose(served.stub, environment="prod", time_window=_window(start, end))
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert (run.time_window.start.seconds, run.time_window.end.seconds) == (start, end)
    listed = await served.stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run.run_id))
    ranges = [i for i in listed.invocations if i.tool_name == "prometheus.query_range"]
    instants = [i for i in listed.invocations if i.tool_name == "prometheus.query"]
    assert ranges and instants
    for invocation in ranges:
        arguments = MessageToDict(invocation.arguments)
        assert (arguments["start"], arguments["end"]) == (_stamp(start), _stamp(end)), arguments
    for invocation in instants:
        assert MessageToDict(invocation.arguments)["time"] == _stamp(end)
    # The backfilled series were read over that hour: a range answer's samples lie within it.
    samples = [
        float(point[0])
        for invocation in ranges
        if invocation.status == 1
        for series in MessageToDict(invocation.output).get("data", {}).get("result", [])
        for point in series.get("values", [])
    ]
    assert samples and start <= min(samples) and max(samples) <= end
    assert f"Window read: {_stamp(start)} to {_stamp(end)}" in run.answer_text


async def test_a_question_about_yesterday_reads_yesterday(served: Served) -> None:
    request = pb.DiagnoseRequest(
        question="Why was checkout-api failing yesterday?", context=pb.RequestContext(environment="prod")
    )
    run = [m async for m in served.stub.Diagnose(request)][-1].run
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    assert (run.time_window.start.seconds, run.time_window.end.seconds) == (today - 86400, today)
    listed = await served.stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run.run_id))
    ranges = [MessageToDict(i.arguments) for i in listed.invocations if i.tool_name == "prometheus.query_range"]
    assert ranges and all(a["end"] == _stamp(today) for a in ranges), json.dumps(ranges)


async def test_a_window_that_does_not_run_forwards_is_invalid_argument(served: Served) -> None:
    for start, end in ((2000, 1000), (1000, 1000)):
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await _diagnose(served.stub, environment="prod", time_window=_window(start, end))
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error.value.details() == "context.time_window: start must be before end"
    half = run_pb2.TimeWindow()
    half.start.FromSeconds(1000)
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await _diagnose(served.stub, environment="prod", time_window=half)
    assert error.value.details() == "context.time_window.end: must be set when the other bound is"


async def test_environments_without_a_default_never_answer_from_the_demo(tmp_path: Path, clean_env: None) -> None:
    running, channel = await _serve(
        tmp_path,
        """
[environments.staging]
prometheus = { url = "http://127.0.0.1:9" }
[environments.prod]
prometheus = { url = "http://127.0.0.1:9" }
""",
    )
    try:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await _diagnose(stub)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error.value.details() == (
            "context.environment: name an environment (configured: prod, staging; none is the default) or a scenario"
        )
        recorded = await _diagnose(stub, scenario="checkout-oom")  # a scenario asked for by name still runs
        assert recorded.scenario == "checkout-oom" and recorded.environment == ""
    finally:
        await channel.close()
        await running.stop(grace=2.0)
