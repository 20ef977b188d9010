"""Starts the real server (`diagnosis serve`) as a subprocess on a free loopback port, for integration tests.

Used by the fixtures of tests/client and tests/contract. The server gets its own SQLite file, no metrics endpoint
(no port clash), and is ready when grpc.health.v1 answers SERVING.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from diagnosis.v1 import diagnosis_service_pb2, run_pb2

READY_TIMEOUT_S = 30.0
# tenant -> token of the server started with DIAGNOSIS_AUTH_TOKENS.
AUTH_TOKENS = {"acme": "acme-token-1", "zenith": "zenith-token-2"}


@dataclass(frozen=True)
class LiveServer:
    target: str
    log: Path


@dataclass(frozen=True)
class FinishedRun:
    """A Diagnose stream read to its end, and its final run."""

    responses: list[diagnosis_service_pb2.DiagnoseResponse]
    run: run_pb2.DiagnosisRun


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def diagnosis_executable() -> str:
    beside = Path(sys.executable).parent / "diagnosis"
    if beside.exists():
        return str(beside)
    found = shutil.which("diagnosis")
    if found is None:
        raise RuntimeError("the `diagnosis` console script is not installed (run `make setup`)")
    return found


def wait_serving(target: str, process: subprocess.Popen[bytes], log: Path, timeout: float = READY_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"`diagnosis serve` exited with {process.returncode}:\n{_tail(log)}")
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"`diagnosis serve` not SERVING after {timeout:.0f}s:\n{_tail(log)}")
            time.sleep(0.1)


@contextlib.contextmanager
def run_server(workdir: Path, env: Mapping[str, str] | None = None) -> Iterator[LiveServer]:
    """The server on a free port with a fresh database in ``workdir``; stopped with SIGTERM at the end."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    target = f"127.0.0.1:{port}"
    log = workdir / "server.log"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DIAGNOSIS_")}
    environment["DIAGNOSIS_METRICS_ADDRESS"] = ""
    environment.update(env or {})
    command = [
        diagnosis_executable(),
        "serve",
        "--address",
        target,
        "--database-url",
        f"sqlite+aiosqlite:///{workdir / 'diagnosis.db'}",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=environment, cwd=workdir)
    try:
        wait_serving(target, process, log)
        yield LiveServer(target=target, log=log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


def _tail(log: Path, lines: int = 40) -> str:
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
