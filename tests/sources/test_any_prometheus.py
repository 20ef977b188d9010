"""The embedded default on a Prometheus without kube-state-metrics (a real one, backfilled with promtool): it reads
the alerts firing, the targets down, the processes that restarted and the RED series by the labels that name
services, and says that no kube-state-metrics series are there."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc.aio
import pytest
from google.protobuf.json_format import MessageToDict

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.api import start_server
from diagnosis_server.api.components import load_provider
from diagnosis_server.settings import load_settings

from .conftest import REQUIRE_PROMETHEUS_ENV, _stop, _wait_http, free_port


def _series(start: int, end: int) -> str:
    """Two hours a minute apart: checkout-api's HighErrorRate alert firing for the last 30 minutes, its process
    restarted 20 minutes ago (its start time moved), payments-api's target down for the last 20 minutes."""
    lines = ["# HELP ALERTS Alerts.", "# TYPE ALERTS gauge"]
    alert = 'ALERTS{alertname="CheckoutHighErrorRate",alertstate="firing",job="checkout-api",severity="page"}'
    lines += [f"{alert} 1 {ts}" for ts in range(end - 1800, end + 1, 60)]
    lines += ["# HELP up Scrape target up.", "# TYPE up gauge"]
    for ts in range(start, end + 1, 60):
        lines.append(f'up{{job="checkout-api",instance="10.0.0.7:8080"}} 1 {ts}')
        lines.append(f'up{{job="payments-api",instance="10.0.0.9:8080"}} {0 if ts >= end - 1200 else 1} {ts}')
    lines += ["# HELP process_start_time_seconds Start time.", "# TYPE process_start_time_seconds gauge"]
    for ts in range(start, end + 1, 60):
        started = end - 1200 if ts >= end - 1200 else start - 86400
        lines.append(f'process_start_time_seconds{{job="checkout-api",instance="10.0.0.7:8080"}} {started} {ts}')
    lines += ["# HELP http_requests_total Requests.", "# TYPE http_requests_total counter"]
    for code in ("200", "500"):
        total = 0
        for ts in range(start, end + 1, 60):
            total += 600 if code == "200" else (120 if ts >= end - 1800 else 0)
            lines.append(f'http_requests_total{{job="checkout-api",code="{code}"}} {total} {ts}')
    return "\n".join([*lines, "# EOF"]) + "\n"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if binary is None or promtool is None:
        if os.environ.get(REQUIRE_PROMETHEUS_ENV) == "1":
            pytest.fail("prometheus and promtool are not installed")
        pytest.skip("prometheus and promtool are not installed (Debian package prometheus)")
    root = tmp_path_factory.mktemp("any-prometheus")
    end = (int(time.time()) - 120) // 60 * 60
    (root / "series.om").write_text(_series(end - 7200, end))
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(root / "series.om"), str(root / "data")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (root / "prometheus.yml").write_text("global:\n  scrape_interval: 1m\n")
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={root / 'prometheus.yml'}",
            f"--storage.tsdb.path={root / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--storage.tsdb.retention.time=7d",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_http(f"http://127.0.0.1:{port}/-/ready", process, "prometheus")
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(process)


@pytest.fixture
async def stub(
    tmp_path: Path, prometheus: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub]:
    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)
    (tmp_path / "environments.toml").write_text(
        f'[environments.metrics]\ndefault = true\nprometheus = {{ url = "{prometheus}" }}\n'
    )
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'any.db'}",
        metrics_address="",
        http_address="",
        environments_file=str(tmp_path / "environments.toml"),
    )
    running = await start_server(settings, provider=load_provider("heuristic"))
    channel = grpc.aio.insecure_channel(running.target)
    try:
        yield diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
    finally:
        await channel.close()
        await running.stop(grace=2.0)


async def test_alerts_targets_restarts_and_red_series_are_read_on_any_prometheus(
    stub: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub,
) -> None:
    request = pb.DiagnoseRequest(question="Why is checkout-api failing?", context=pb.RequestContext())
    run = [m async for m in stub.Diagnose(request)][-1].run
    assert run.status == run_pb2.RUN_STATUS_SUCCESS and run.environment == "metrics" and not run.blind
    listed = await stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run.run_id))
    arguments = [MessageToDict(i.arguments) for i in listed.invocations]
    queries = {str(a["query"]) for a in arguments if "query" in a}
    # What the server holds for checkout-api is listed first (its RED series by its job label are the built-in ones).
    assert any(i.tool_name == "prometheus.series" for i in listed.invocations)
    assert {'ALERTS{alertstate="firing"}', "up"} <= queries
    assert any(q.startswith("sum by (job, service)") for q in queries)
    text = run.answer_text
    assert "No kube-state-metrics series in this Prometheus" in text.splitlines()[0]
    assert "checkout-api has alert CheckoutHighErrorRate firing" in text
    # The restart as the series shows it (its start time moved), a confirmed fact; no count the series lacks.
    assert "checkout-api restarted in the window (process start time" in text
    assert any(f.text.startswith("checkout-api restarted in the window") for f in run.answer.confirmed_facts)
    assert "no data about" not in text.lower() and "no incident" not in text.lower()
