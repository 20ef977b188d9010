"""The real server as a subprocess on a free loopback port: `diagnosis serve`, or the slow launcher.

Ready when grpc.health.v1 answers SERVING. The process can be stopped with SIGTERM or killed with
SIGKILL, and its resident memory read from /proc. Used by the kill-and-restart tests and by `make load`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

READY_TIMEOUT_S = 30.0
CLI = "import sys; from diagnosis_server.cli import main; sys.exit(main())"
# `diagnosis serve` with the heuristic agents slowed down, so a run is in flight long enough to kill it.
SLOW_LAUNCHER = Path(__file__).with_name("slow_serve.py")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


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
    database: Path,
    *,
    env: Mapping[str, str] | None = None,
    slow: bool = False,
    log_name: str = "server.log",
) -> ServeProcess:
    """`diagnosis serve` (or the slow launcher) on a free port over ``database``; returns once SERVING."""
    workdir.mkdir(parents=True, exist_ok=True)
    target = f"127.0.0.1:{free_port()}"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("DIAGNOSIS_")}
    environment |= {
        "DIAGNOSIS_ADDRESS": target,
        "DIAGNOSIS_DATABASE_URL": f"sqlite+aiosqlite:///{database}",
        "DIAGNOSIS_METRICS_ADDRESS": "",
    }
    environment |= dict(env or {})
    command = [sys.executable, str(SLOW_LAUNCHER)] if slow else [sys.executable, "-c", CLI, "serve"]
    log = workdir / log_name
    with log.open("ab") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=environment, cwd=workdir)
    server = ServeProcess(process=process, target=target, log=log)
    try:
        _wait_serving(server)
    except BaseException:
        server.stop(timeout=5)
        raise
    return server


def _wait_serving(server: ServeProcess, timeout: float = READY_TIMEOUT_S) -> None:
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
