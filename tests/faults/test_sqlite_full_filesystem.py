"""A SQLite store on a filesystem that fills up for real: a small tmpfs (mounted by the test, which needs root
and skips saying so elsewhere) holding the database, filled with another file until the kernel answers ENOSPC.

On a full disk SQLite can still rewrite what it has already allocated (a page of the database, the WAL file it
starts over after a checkpoint has copied it all back), so a probe that only rewrites one row goes on
succeeding while a run, which needs new pages, fails: health must say NOT_SERVING within the probe interval,
new runs must be UNAVAILABLE with a retry hint, and once space is freed the server is SERVING again and runs
work.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from tests.support.rpc import retry_delay_s
from tests.support.serve import ServeProcess, start_serve

PROBE_INTERVAL_S = 0.2
# Health follows a full disk within a few probe intervals (a probe in flight, the health update).
WITHIN_S = 3.0
REQUEST = pb.DiagnoseRequest(
    question="Why is checkout-api returning 503s?", context=pb.RequestContext(scenario="checkout-oom")
)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs of the test's own (unmounted at the end, lazily if something still holds it)."""
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(mountpoint)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)


@pytest.fixture
def server(small_disk: Path, tmp_path: Path) -> Iterator[ServeProcess]:
    env = {"DIAGNOSIS_STORE_PROBE_INTERVAL_S": str(PROBE_INTERVAL_S), "DIAGNOSIS_STORE_RETRY_S": "1"}
    process = start_serve(tmp_path / "work", small_disk / "store.db", env=env)
    try:
        yield process
    finally:
        process.stop(timeout=15)


def _fill(directory: Path) -> Path:
    """Writes a file in ``directory`` until the filesystem is full (ENOSPC); returns it."""
    filler = directory / "filler"
    chunk = b"\0" * 65536
    with filler.open("wb", buffering=0) as sink:
        while True:
            try:
                sink.write(chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
    with contextlib.suppress(OSError), filler.open("ab", buffering=0) as sink:  # the last partial block
        while sink.write(b"\0" * 512):
            pass
    return filler


def _health(channel: grpc.Channel) -> int:
    reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    return int(reply.status)


def _until(condition: Callable[[], bool], within_s: float, what: str, server: ServeProcess) -> float:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > within_s:
            raise AssertionError(f"{what} not within {within_s}s:\n{server.log_text()[-3000:]}")
        time.sleep(0.05)
    return time.monotonic() - started


def test_a_full_filesystem_turns_health_not_serving_and_back(server: ServeProcess, small_disk: Path) -> None:
    with grpc.insecure_channel(server.target) as channel:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        assert _health(channel) == health_pb2.HealthCheckResponse.SERVING
        for _ in range(2):
            assert list(stub.Diagnose(REQUEST, timeout=60))[-1].run.status == run_pb2.RUN_STATUS_SUCCESS
        # What SQLite does on its own once the log passes 1,000 pages: all of it copied back into the database,
        # and the next write starts the log over, in the space the log file already has.
        with contextlib.closing(sqlite3.connect(small_disk / "store.db")) as database:
            busy, _, _ = database.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
        assert busy == 0
        assert (small_disk / "store.db-wal").stat().st_size > 64 * 1024

        filler = _fill(small_disk)
        serving = health_pb2.HealthCheckResponse.SERVING
        _until(lambda: _health(channel) != serving, WITHIN_S, "NOT_SERVING on a full disk", server)
        assert _health(channel) == health_pb2.HealthCheckResponse.NOT_SERVING
        with pytest.raises(grpc.RpcError) as refused:
            list(stub.Diagnose(REQUEST, timeout=10))
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert retry_delay_s(refused.value) > 0
        assert '"store_unwritable"' in server.log_text()

        filler.unlink()
        _until(lambda: _health(channel) == serving, WITHIN_S, "SERVING once space is freed", server)
        assert list(stub.Diagnose(REQUEST, timeout=60))[-1].run.status == run_pb2.RUN_STATUS_SUCCESS
        assert '"store_writable_again"' in server.log_text()
