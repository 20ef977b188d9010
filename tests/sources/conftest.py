"""Fixtures of the source tests: a throwaway Prometheus over backfilled series, a real MCP server over streamable
HTTP, and kubeconfigs for the fake API server. Everything listens on 127.0.0.1 only.

Prometheus is Debian's ``prometheus`` (with ``promtool``). Without it the Prometheus tests skip and say so, or
fail when ``DIAGNOSIS_TEST_REQUIRE_PROMETHEUS=1`` (CI sets it, so a missing install step cannot hide).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.serve import free_port

from .k8s_recorded import SA_TOKEN

__all__ = ["MCP_SERVER", "PrometheusServer", "free_port", "write_kubeconfig"]

REQUIRE_PROMETHEUS_ENV = "DIAGNOSIS_TEST_REQUIRE_PROMETHEUS"
MCP_SERVER = Path(__file__).with_name("mcp_test_server.py")
_START_TIMEOUT_S = 30


def _wait_http(url: str, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status < 500:
                    return
        except OSError as exc:
            if getattr(exc, "code", 0) and exc.code < 500:  # type: ignore[attr-defined]
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not answer {url} within {_START_TIMEOUT_S}s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


# ------------------------------------------------------------------------------------------ Prometheus


@dataclass(frozen=True)
class PrometheusServer:
    url: str
    # The backfilled samples' times (Unix seconds): every 60 s over the last two hours, the last 5 min ago.
    start: int
    end: int


def _openmetrics(start: int, end: int) -> str:
    lines = [
        "# HELP http_requests_total Requests served.",
        "# TYPE http_requests_total counter",
    ]
    for pod, per_minute in (("checkout-api-7f9c6d8b5-tr6zn", 60), ("checkout-api-7f9c6d8b5-x2k9p", 30)):
        for code in ("200", "500"):
            total = 0
            for ts in range(start, end + 1, 60):
                rate = per_minute if code == "200" else (per_minute // 10 if ts >= end - 1800 else 0)
                total += rate
                lines.append(f'http_requests_total{{job="checkout-api",pod="{pod}",code="{code}"}} {total} {ts}')
    lines += [
        "# HELP container_memory_working_set_bytes Memory in use.",
        "# TYPE container_memory_working_set_bytes gauge",
    ]
    for ts in range(start, end + 1, 60):
        value = 300_000_000 + (ts - start) * 20_000
        lines.append(f'container_memory_working_set_bytes{{pod="checkout-api-7f9c6d8b5-tr6zn"}} {value} {ts}')
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def prometheus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    binary, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if binary is None or promtool is None:
        reason = "prometheus and promtool are not installed (Debian package prometheus)"
        if os.environ.get(REQUIRE_PROMETHEUS_ENV) == "1":
            pytest.fail(f"{reason}; {REQUIRE_PROMETHEUS_ENV}=1 requires them")
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("prometheus")
    end = (int(time.time()) - 300) // 60 * 60
    start = end - 7200
    series = root / "series.om"
    series.write_text(_openmetrics(start, end))
    data = root / "data"
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(series), str(data)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    config = root / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1m\n")
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--storage.tsdb.retention.time=7d",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_http(f"http://127.0.0.1:{port}/-/ready", process, "prometheus")
        yield PrometheusServer(url=f"http://127.0.0.1:{port}", start=start, end=end)
    finally:
        _stop(process)


# ------------------------------------------------------------------------------------------ MCP


@pytest.fixture(scope="session")
def mcp_http_server() -> Iterator[str]:
    """The test MCP server over streamable HTTP; its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(MCP_SERVER), "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_http(f"http://127.0.0.1:{port}/mcp", process, "the MCP test server")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(process)


def mcp_stdio_command() -> list[str]:
    return [sys.executable, str(MCP_SERVER), "stdio"]


# ------------------------------------------------------------------------------------------ Kubernetes


def write_kubeconfig(path: Path, server_url: str, *, namespace: str = "shop") -> Path:
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: {server_url}
users:
- name: reader
  user:
    token: {SA_TOKEN}
contexts:
- name: test
  context:
    cluster: test
    user: reader
    namespace: {namespace}
current-context: test
"""
    )
    return path
