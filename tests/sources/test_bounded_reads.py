"""Source answers read no further than the read bound (Prometheus, Kubernetes), and Retry-After as the upstream said."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import from_value
from diagnosis_server.sources.http import MAX_BODY_BYTES

from .conftest import write_kubeconfig
from .fake_http import FakeUpstream, Request, Response, json_response, text_response
from .helpers import call, opened

OK = contracts_pb2.TOOL_INVOCATION_STATUS_OK
ERROR = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
SUCCESS = {"status": "success", "data": {"resultType": "vector", "result": []}}
ENDLESS_BYTES = 64 * 1024 * 1024


def _prometheus(url: str) -> str:
    return f'[environments.prod]\nprometheus = {{ url = "{url}" }}\n'


class EndlessAnswer:
    """A loopback upstream whose answer never ends: chunked JSON-looking bytes, up to 64 MiB, counting what it
    could write before the client stopped reading and closed."""

    def __init__(self) -> None:
        self.written = 0
        self.done = threading.Event()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b'{"status":"success","data":{"resultType":"vector","result":[' + b"0," * 32_000
                try:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    upstream.written += len(chunk)
                    piece = b"1," * 32_768
                    while upstream.written < ENDLESS_BYTES:
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        upstream.written += len(piece)
                except OSError:
                    pass
                finally:
                    upstream.done.set()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"


@pytest.fixture
def endless() -> Iterator[EndlessAnswer]:
    upstream = EndlessAnswer()
    yield upstream
    upstream.server.shutdown()
    upstream.server.server_close()


async def test_a_prometheus_answer_past_the_read_bound_is_not_read_further(
    endless: EndlessAnswer, tmp_path: Path
) -> None:
    async with opened(tmp_path, _prometheus(endless.url)) as registry:
        invocation = await call(registry.tools_for("prod").toolset, "prometheus.query", {"query": "up"})
    assert invocation.status == ERROR
    assert invocation.error == (
        f"prometheus.query: the answer is over the {MAX_BODY_BYTES} byte read bound and was not read further; "
        "narrow the request (a shorter range, a coarser step, a selector)"
    )
    assert endless.done.wait(10)
    # What the upstream got written before the connection closed: the bound and the sockets' buffers, not 64 MiB.
    assert endless.written < MAX_BODY_BYTES + 8 * 1024 * 1024


async def test_an_answer_declared_larger_than_the_bound_is_refused_before_its_body(tmp_path: Path) -> None:
    big = json_response(200, {**SUCCESS, "padding": "x" * (MAX_BODY_BYTES + 10)})
    upstream = FakeUpstream(lambda request: big)
    try:
        async with opened(tmp_path, _prometheus(upstream.url)) as registry:
            invocation = await call(registry.tools_for("prod").toolset, "prometheus.query", {"query": "up"})
    finally:
        upstream.close()
    assert invocation.status == ERROR and "over the 4194304 byte read bound" in invocation.error


async def test_an_answer_within_the_bound_still_reads_whole(tmp_path: Path) -> None:
    result = [{"metric": {"pod": f"p{n}"}, "value": [1, "1"]} for n in range(3000)]
    answer = json_response(200, {"status": "success", "data": {"resultType": "vector", "result": result}})
    upstream = FakeUpstream(lambda request: answer)
    try:
        async with opened(tmp_path, _prometheus(upstream.url)) as registry:
            invocation = await call(registry.tools_for("prod").toolset, "prometheus.query", {"query": "up"})
    finally:
        upstream.close()
    assert invocation.status == OK
    body: Any = from_value(invocation.output)
    assert len(body["data"]["result"]) == 3000


async def test_a_kubernetes_log_past_the_read_bound_is_not_read_further(tmp_path: Path) -> None:
    log = "line of the log\n" * (MAX_BODY_BYTES // 16 + 1000)
    upstream = FakeUpstream(lambda request: text_response(200, log))
    try:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", upstream.url)
        toml = f'[environments.prod]\nkubernetes = {{ kubeconfig = "{kubeconfig}", context = "test" }}\n'
        async with opened(tmp_path, toml) as registry:
            invocation = await call(registry.tools_for("prod").toolset, "kubernetes.pod_logs", {"pod": "p"})
    finally:
        upstream.close()
    assert invocation.status == ERROR
    assert invocation.error.startswith(f"kubernetes.pod_logs: the answer is over the {MAX_BODY_BYTES} byte read bound")


class RateLimited:
    """429 with ``Retry-After: seconds`` for the first ``refusals`` requests, then a Prometheus answer."""

    def __init__(self, retry_after: str, refusals: int = 1) -> None:
        self.retry_after = retry_after
        self.refusals = refusals
        self.times: list[float] = []
        self.upstream = FakeUpstream(self._answer)

    def _answer(self, request: Request) -> Response:
        self.times.append(time.monotonic())
        if len(self.times) <= self.refusals:
            body = {"status": "error", "errorType": "unavailable", "error": "too many requests"}
            return json_response(429, body, {"Retry-After": self.retry_after})
        return json_response(200, SUCCESS)


async def test_a_retry_after_within_the_calls_time_is_waited_out_as_given(tmp_path: Path) -> None:
    # 3 s: longer than the backoff's 2 s cap, which used to cut it.
    limited = RateLimited("3")
    try:
        async with opened(tmp_path, _prometheus(limited.upstream.url)) as registry:
            invocation = await call(registry.tools_for("prod").toolset, "prometheus.query", {"query": "up"})
    finally:
        limited.upstream.close()
    assert invocation.status == OK, invocation.error
    assert len(limited.times) == 2
    assert limited.times[1] - limited.times[0] >= 3.0


async def test_a_retry_after_longer_than_the_call_has_left_fails_at_once_saying_so(tmp_path: Path) -> None:
    limited = RateLimited("3600")
    try:
        async with opened(tmp_path, _prometheus(limited.upstream.url)) as registry:
            started = time.monotonic()
            invocation = await call(registry.tools_for("prod").toolset, "prometheus.query", {"query": "up"})
            took = time.monotonic() - started
    finally:
        limited.upstream.close()
    assert invocation.status == ERROR
    assert invocation.error.startswith(
        "prometheus.query: asked to retry after 3600s (Retry-After), more than the "
    ) and invocation.error.endswith("s this call has left")
    assert len(limited.times) == 1
    assert took < 1.0
