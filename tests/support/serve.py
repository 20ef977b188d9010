"""The real server as a subprocess on a free loopback port: `diagnosis serve`, or the slow launcher.

Ready when grpc.health.v1 answers SERVING. The process can be stopped with SIGTERM or killed with SIGKILL, and
its resident memory and CPU time read from /proc. The server gets its own database, no metrics endpoint (no port
clash) and none of the shell's DIAGNOSIS_* or OTEL_* variables. Used by the client, contract, kill-and-restart,
fault and telemetry tests, and by `make load` and `make soak-api`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from .settings import SHELL_PREFIXES, sqlite_url

READY_TIMEOUT_S = 30.0
CLI = "import sys; from diagnosis_server.cli import main; sys.exit(main())"
# `diagnosis serve` with the heuristic agents slowed down, so a run is in flight long enough to kill it.
SLOW_LAUNCHER = Path(__file__).with_name("slow_serve.py")


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (now)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServeProcess:
    process: subprocess.Popen[bytes]
    target: str
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last write; what the store holds is what was committed."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=15)

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait (SIGKILL if it does not stop in time); the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        return self.process.returncode

    def rss_kib(self) -> int:
        """Resident set size (VmRSS) of the server process, in KiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError(f"no VmRSS for process {self.pid}")

    def cpu_seconds(self) -> float:
        """User plus system CPU time the server process has used so far."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_text(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""


def start_serve(
    workdir: Path,
    database: Path | str,
    *,
    env: Mapping[str, str] | None = None,
    slow: bool = False,
    piped: bool = False,
    log_name: str = "server.log",
) -> ServeProcess:
    """`diagnosis serve` (``slow``: the slow launcher) on a free port; returns once SERVING.

    ``database`` is a SQLite file or a database URL. The output goes to ``workdir / log_name``, through a pipe
    copied by a thread when ``piped`` (a test that lowers the server's RLIMIT_FSIZE must not fail its log writes).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    target = f"127.0.0.1:{free_port()}"
    environment = {key: value for key, value in os.environ.items() if not key.startswith(SHELL_PREFIXES)}
    environment |= {
        "DIAGNOSIS_ADDRESS": target,
        "DIAGNOSIS_DATABASE_URL": database if isinstance(database, str) else sqlite_url(database),
        "DIAGNOSIS_METRICS_ADDRESS": "",
        "DIAGNOSIS_HTTP_ADDRESS": "",
    }
    environment |= dict(env or {})
    command = [sys.executable, str(SLOW_LAUNCHER)] if slow else [sys.executable, "-c", CLI, "serve"]
    log = workdir / log_name
    if piped:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment, cwd=workdir
        )
        assert process.stdout is not None
        threading.Thread(target=_copy, args=(process.stdout, log), daemon=True).start()
    else:
        with log.open("ab") as sink:
            process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=environment, cwd=workdir)
    server = ServeProcess(process=process, target=target, log=log)
    try:
        wait_serving(server)
    except BaseException:
        server.stop(timeout=5)
        raise
    return server


@contextlib.contextmanager
def serving(workdir: Path, env: Mapping[str, str] | None = None) -> Iterator[ServeProcess]:
    """The server over a fresh ``workdir / "diagnosis.db"``, stopped with SIGTERM at the end."""
    server = start_serve(workdir, workdir / "diagnosis.db", env=env)
    try:
        yield server
    finally:
        server.stop(timeout=15)


def wait_serving(server: ServeProcess, timeout: float = READY_TIMEOUT_S) -> None:
    """Until the server's health service answers SERVING; RuntimeError with its log's tail if it exits first."""
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(server.target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while True:
            if server.process.poll() is not None:
                raise RuntimeError(f"the server exited with {server.process.returncode}:\n{server.log_text()[-4000:]}")
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server was not SERVING after {timeout:.0f}s:\n{server.log_text()[-4000:]}")
            time.sleep(0.05)


def _copy(pipe: IO[bytes], log: Path) -> None:
    with log.open("ab") as sink:
        for line in iter(pipe.readline, b""):
            sink.write(line)
            sink.flush()
