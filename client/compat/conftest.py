"""A real `diagnosis serve` for the client's suite: the command in DIAGNOSIS_COMPAT_SERVER, on a free loopback port."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from diagnosis import ConnectionConfig, DiagnosisClient, DiagnosisError

READY_TIMEOUT_S = 15.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    command = os.environ.get("DIAGNOSIS_COMPAT_SERVER", "")
    if not command:
        pytest.fail("DIAGNOSIS_COMPAT_SERVER names the `diagnosis` command of a server install", pytrace=False)
    workdir = tmp_path_factory.mktemp("server")
    target = f"127.0.0.1:{_free_port()}"
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("DIAGNOSIS_", "OTEL_"))}
    environment |= {
        "DIAGNOSIS_ADDRESS": target,
        "DIAGNOSIS_DATABASE_URL": f"sqlite+aiosqlite:///{workdir / 'diagnosis.db'}",
        "DIAGNOSIS_METRICS_ADDRESS": "",
        # (no HTTP server: its default port may be another process's)
        "DIAGNOSIS_HTTP_ADDRESS": "",
    }
    log = workdir / "server.log"
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [*shlex.split(command), "serve"], stdout=sink, stderr=subprocess.STDOUT, env=environment, cwd=workdir
        )
    try:
        _wait_ready(process, target, log)
        yield target
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def _wait_ready(process: subprocess.Popen[bytes], target: str, log: Path) -> None:
    """Until ListScenarios answers (the client has no health stub: its own calls say it is up)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    with DiagnosisClient(ConnectionConfig(target=target, default_timeout=2.0)) as client:
        while True:
            if process.poll() is not None:
                pytest.fail(f"the server exited with {process.returncode}:\n{log.read_text()[-4000:]}", pytrace=False)
            try:
                client.list_scenarios()
                return
            except DiagnosisError:
                pass
            if time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-4000:]
                pytest.fail(f"the server did not answer in {READY_TIMEOUT_S:.0f}s:\n{tail}", pytrace=False)
            time.sleep(0.1)


@pytest.fixture
def client(target: str) -> Iterator[DiagnosisClient]:
    with DiagnosisClient(ConnectionConfig(target=target, default_timeout=30.0)) as c:
        yield c


@pytest.fixture(scope="session")
def finished_run(target: str) -> tuple[str, int]:
    """One diagnosis of the default scenario, asked through the client, run to its end: its id and how many
    events its stream carried."""
    events: list[object] = []
    with DiagnosisClient(ConnectionConfig(target=target, default_timeout=60.0)) as c:
        run = c.ask("why is checkout returning 500s?", scenario="checkout-oom", on_event=events.append)
    return run.run_id, len(events)
