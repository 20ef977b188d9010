"""SQLite writes failing for real: the server's RLIMIT_FSIZE lowered to one byte (prlimit on its pid), so
every write of the database, its WAL or journal fails with EFBIG as on a full disk, while reads go on.
(A tmpfs would need a mount; SQLite's max_page_count would spare writes that need no new page.)

What a store that cannot be written must do: health NOT_SERVING, new runs UNAVAILABLE with a retry hint;
the run in flight cannot store its final record, so its task ends with the run RUNNING in the store and
nobody heartbeating it; the Diagnose stream and a WatchRun then end UNAVAILABLE with a retry hint (neither
ends as if a RUNNING run were over, and neither is held open waiting for a store that may not come back), as
does a new WatchRun of the run. Once writes work again: SERVING, this instance's own sweep marks the run
INTERRUPTED, and a WatchRun replays its events and ends with that final record.
"""

from __future__ import annotations

import resource
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.store import INTERRUPTED
from tests.support.rpc import retry_delay_s
from tests.support.serve import ServeProcess, start_serve

QUESTION = "Why is checkout-api returning 503s?"
ENV = {
    "SLOW_SERVE_AGENT_DELAY_S": "0.4",
    "SLOW_SERVE_HEARTBEAT_S": "0.2",
    "DIAGNOSIS_STORE_PROBE_INTERVAL_S": "0.2",
    "DIAGNOSIS_STORE_RETRY_S": "1",
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    process = start_serve(tmp_path, tmp_path / "store.db", env=ENV, slow=True, piped=True)
    try:
        yield process
    finally:
        if process.process.poll() is None:
            resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        process.stop(timeout=15)


def _disk_full(server: ServeProcess, full: bool) -> None:
    limit = 1 if full else resource.RLIM_INFINITY
    resource.prlimit(server.pid, resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))


def _status(channel: grpc.Channel) -> int:
    reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    return int(reply.status)


def _until(condition: Any, within_s: float, what: str, server: ServeProcess) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not within {within_s}s:\n{server.log_text()[-3000:]}")
        time.sleep(0.05)


class _Reader(threading.Thread):
    """Reads a server stream to its end in the background: the messages, and how it ended."""

    def __init__(self, call: Any) -> None:
        super().__init__(daemon=True)
        self.call = call
        self.messages: list[Any] = []
        self.error: grpc.RpcError | None = None
        self.first = threading.Event()

    def run(self) -> None:
        try:
            for message in self.call:
                self.messages.append(message)
                if len(self.messages) >= 2:
                    self.first.set()
        except grpc.RpcError as exc:
            self.error = exc
        finally:
            self.first.set()


def test_writes_failing_then_recovering(server: ServeProcess) -> None:
    with grpc.insecure_channel(server.target) as channel:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        request = pb.DiagnoseRequest(question=QUESTION, context=pb.RequestContext(scenario="checkout-oom"))
        diagnose = _Reader(stub.Diagnose(request, timeout=120))
        diagnose.start()
        assert diagnose.first.wait(30) and diagnose.error is None  # started, and a first event committed
        run_id = diagnose.messages[0].run_id
        watch = _Reader(stub.WatchRun(pb.WatchRunRequest(run_id=run_id), timeout=120))
        watch.start()

        _disk_full(server, True)
        _until(lambda: _status(channel) == health_pb2.HealthCheckResponse.NOT_SERVING, 10, "NOT_SERVING", server)
        with pytest.raises(grpc.RpcError) as refused:
            list(stub.Diagnose(request, timeout=10))
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert retry_delay_s(refused.value) > 0

        # The run's writes fail; its final write is retried for DIAGNOSIS_STORE_RETRY_S, then given up: both
        # streams end UNAVAILABLE with a retry hint, never with a run message while the run is RUNNING.
        _until(lambda: '"run_finish_abandoned"' in server.log_text(), 20, "the final write given up", server)
        diagnose.join(10)
        watch.join(10)
        for reader in (diagnose, watch):
            assert not reader.is_alive()
            assert reader.error is not None and reader.error.code() == grpc.StatusCode.UNAVAILABLE
            assert retry_delay_s(reader.error) > 0
        assert not any(m.WhichOneof("kind") == "run" for m in diagnose.messages)
        assert not any(m.WhichOneof("kind") == "ended" for m in watch.messages)
        stored = stub.GetRun(pb.GetRunRequest(run_id=run_id), timeout=10).run  # reads still work
        assert stored.status == run_pb2.RUN_STATUS_RUNNING
        with pytest.raises(grpc.RpcError) as again:  # watched again while the store still holds it RUNNING
            list(stub.WatchRun(pb.WatchRunRequest(run_id=run_id), timeout=10))
        assert again.value.code() == grpc.StatusCode.UNAVAILABLE

        _disk_full(server, False)
        _until(lambda: _status(channel) == health_pb2.HealthCheckResponse.SERVING, 10, "SERVING again", server)
        _until(
            lambda: stub.GetRun(pb.GetRunRequest(run_id=run_id), timeout=10).run.status != run_pb2.RUN_STATUS_RUNNING,
            10,
            "the sweep",
            server,
        )
        watched = list(stub.WatchRun(pb.WatchRunRequest(run_id=run_id), timeout=30))
        ended = watched[-1].ended
        assert (ended.status, ended.reason) == (run_pb2.RUN_STATUS_FAILED, INTERRUPTED)
        assert [m.event.sequence for m in watched[:-1]] == list(range(1, len(watched)))
        assert '"store_unwritable"' in server.log_text() and '"store_writable_again"' in server.log_text()
        # New runs work again.
        assert list(stub.Diagnose(request, timeout=60))[-1].run.status == run_pb2.RUN_STATUS_SUCCESS
