"""``prometheus.series`` on a real Prometheus (backfilled with promtool), and the embedded default finding a service
that only Prometheus knows by its labels, then reading its RED series by the label that names it.

The service here is instrumented as Spring Boot's Micrometer does (``http_server_requests_seconds_count`` and
``_bucket`` with ``status`` and ``uri`` labels, under a ``service`` label a Kubernetes service discovery relabels),
not as the ``http_requests_total{code}`` the built-in RED queries assume: only what the server holds says which
series and labels to read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc.aio
import pytest
from google.protobuf.json_format import MessageToDict

from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2_grpc, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.api import start_server
from diagnosis_server.api.components import load_provider
from diagnosis_server.conversions import from_value
from diagnosis_server.settings import load_settings

from .conftest import REQUIRE_PROMETHEUS_ENV, _stop, _wait_http, free_port
from .helpers import call, opened

OK = contracts_pb2.TOOL_INVOCATION_STATUS_OK
ERROR = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
_BUCKETS = ("0.05", "0.1", "0.25", "0.5", "1.0", "+Inf")


def _series(start: int, end: int) -> str:
    """Two hours a minute apart: ledger-api (known only by its ``service`` label, scraped by the kubernetes-pods
    job) answers 600 requests a minute, 150 of them 500s over the last 30 minutes; orders-api beside it is quiet."""
    lines = ["# HELP http_server_requests_seconds Request durations.", "# TYPE http_server_requests_seconds histogram"]
    for service in ("ledger-api", "orders-api"):
        for status in ("200", "500"):
            count = 0
            for ts in range(start, end + 1, 60):
                failing = service == "ledger-api" and ts >= end - 1800
                count += (450 if failing else 600) if status == "200" else (150 if failing else 0)
                labels = f'job="kubernetes-pods",service="{service}",status="{status}",uri="/entries"'
                for le in _BUCKETS:
                    lines.append(f'http_server_requests_seconds_bucket{{{labels},le="{le}"}} {count} {ts}')
                lines.append(f"http_server_requests_seconds_count{{{labels}}} {count} {ts}")
                lines.append(f"http_server_requests_seconds_sum{{{labels}}} {count * 0.02:.2f} {ts}")
    lines += ["# HELP jvm_threads_live_threads Live threads.", "# TYPE jvm_threads_live_threads gauge"]
    for ts in range(start, end + 1, 60):
        for index in range(3):
            lines.append(f'jvm_threads_live_threads{{service="ledger-api",pod="ledger-api-0",id="{index}"}} 40 {ts}')
    return "\n".join([*lines, "# EOF"]) + "\n"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    binary, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if binary is None or promtool is None:
        if os.environ.get(REQUIRE_PROMETHEUS_ENV) == "1":
            pytest.fail("prometheus and promtool are not installed")
        pytest.skip("prometheus and promtool are not installed (Debian package prometheus)")
    root = tmp_path_factory.mktemp("series-prometheus")
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
        yield f"http://127.0.0.1:{port}", end
    finally:
        _stop(process)


def _env(url: str) -> str:
    return f'[environments.metrics]\ndefault = true\nprometheus = {{ url = "{url}" }}\n'


async def _series_call(tmp_path: Path, url: str, arguments: dict[str, Any]) -> contracts_pb2.ToolInvocation:
    async with opened(tmp_path, _env(url)) as registry:
        return await call(registry.tools_for("metrics").toolset, "prometheus.series", arguments)


async def test_series_by_name_lists_what_the_naming_labels_hold(prometheus: tuple[str, int], tmp_path: Path) -> None:
    """A name is looked for as a word in the naming labels: ledger-api's series (by service, and by pod
    ledger-api-0), never orders-api's; Prometheus's own JSON, each series its label set."""
    url, end = prometheus
    invocation = await _series_call(tmp_path, url, {"name": "ledger-api", "start": str(end - 3600), "end": str(end)})
    assert invocation.status == OK, invocation.error
    body: Any = from_value(invocation.output)
    assert body["status"] == "success"
    services = {s["service"] for s in body["data"]}
    assert services == {"ledger-api"}
    names = {s["__name__"] for s in body["data"]}
    assert names == {
        "http_server_requests_seconds_bucket",
        "http_server_requests_seconds_count",
        "http_server_requests_seconds_sum",
        "jvm_threads_live_threads",
    }
    assert "warnings" not in body


async def test_series_are_bounded_and_say_when_more_matched(prometheus: tuple[str, int], tmp_path: Path) -> None:
    url, end = prometheus
    arguments = {"match": '{job="kubernetes-pods"}', "limit": 5, "start": str(end - 3600), "end": str(end)}
    invocation = await _series_call(tmp_path, url, arguments)
    assert invocation.status == OK, invocation.error
    body: Any = from_value(invocation.output)
    assert len(body["data"]) == 5
    assert any("more than 5 series matched" in w for w in body["warnings"])


async def test_a_bad_selector_is_prometheus_own_error(prometheus: tuple[str, int], tmp_path: Path) -> None:
    url, _ = prometheus
    invocation = await _series_call(tmp_path, url, {"match": "{job=}"})
    assert invocation.status == ERROR
    assert invocation.error.startswith("prometheus.series: bad_data:")


async def test_label_values_list_the_metric_names_bounded(prometheus: tuple[str, int], tmp_path: Path) -> None:
    """/api/v1/label/__name__/values: the metric names the server holds, at most limit of them (a warning after)."""
    url, end = prometheus
    async with opened(tmp_path, _env(url)) as registry:
        toolset = registry.tools_for("metrics").toolset
        window = {"start": str(end - 3600), "end": str(end)}
        names = await call(toolset, "prometheus.label_values", {"label": "__name__", **window})
        clipped = await call(toolset, "prometheus.label_values", {"label": "__name__", "limit": 2, **window})
        services = await call(
            toolset, "prometheus.label_values", {"label": "service", "match": "jvm_threads_live_threads"}
        )
        bad = await call(toolset, "prometheus.label_values", {"label": "not a label"})
    assert names.status == OK, names.error
    body: Any = from_value(names.output)
    assert body["data"] == [
        "http_server_requests_seconds_bucket",
        "http_server_requests_seconds_count",
        "http_server_requests_seconds_sum",
        "jvm_threads_live_threads",
    ]
    short: Any = from_value(clipped.output)
    assert len(short["data"]) == 2 and any("more than 2 values matched" in w for w in short["warnings"])
    listed: Any = from_value(services.output)
    assert listed["data"] == ["ledger-api"]
    assert bad.status == ERROR and "is not a Prometheus label name" in bad.error


async def test_series_needs_a_selector_or_a_name(prometheus: tuple[str, int], tmp_path: Path) -> None:
    url, _ = prometheus
    invocation = await _series_call(tmp_path, url, {"limit": 3})
    assert invocation.status == ERROR and "give match" in invocation.error
    invocation = await _series_call(tmp_path, url, {"name": 'x"} or vector(1)'})
    assert invocation.status == ERROR and "is not a name" in invocation.error


@pytest.fixture
async def stub(
    tmp_path: Path, prometheus: tuple[str, int], monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub]:
    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)
    (tmp_path / "environments.toml").write_text(_env(prometheus[0]))
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'series.db'}",
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


async def test_a_service_only_prometheus_knows_gets_its_red_series_by_its_label(
    stub: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub,
) -> None:
    """The default lists ledger-api's series, then reads its 5xx share and p99 by ``service`` from the counter and
    histogram it has: the rise is a confirmed fact about ledger-api, and nothing says there is no data about it."""
    request = pb.DiagnoseRequest(question="Why is ledger-api returning errors?", context=pb.RequestContext())
    run = [m async for m in stub.Diagnose(request)][-1].run
    assert run.status == run_pb2.RUN_STATUS_SUCCESS and not run.blind
    listed = await stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run.run_id))
    calls = [(i.tool_name, MessageToDict(i.arguments)) for i in listed.invocations]
    series = [args for tool, args in calls if tool == "prometheus.series"]
    assert len(series) == 1 and series[0]["name"] == "ledger-api" and {"start", "end"} <= set(series[0])
    queries = {str(args.get("query")) for tool, args in calls if tool == "prometheus.query_range"}
    errors = (
        'sum by (service) (rate(http_server_requests_seconds_count{service="ledger-api",status=~"5.."}[5m]))'
        ' / sum by (service) (rate(http_server_requests_seconds_count{service="ledger-api"}[5m]))'
    )
    latency = (
        "histogram_quantile(0.99, sum by (service, le) "
        '(rate(http_server_requests_seconds_bucket{service="ledger-api"}[5m])))'
    )
    assert {errors, latency} <= queries
    facts = [f.text for f in run.answer.confirmed_facts]
    assert any(f.startswith("ledger-api error rate rose from 0 to 0.25") for f in facts), facts
    assert "no data about" not in run.answer_text.lower() and "no incident" not in run.answer_text.lower()
