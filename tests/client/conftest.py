"""Fixtures: the real server as a subprocess (plain, and with bearer tokens), one finished run, the fake service."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from diagnosis import AsyncDiagnosisClient, ConnectionConfig, DiagnosisClient
from tests.support.serve import ServeProcess, free_port, serving

from .client_fakes import FakeDiagnosisService, FakeServer
from .live_server import AUTH_TOKENS, FinishedRun


def _start(tmp_path_factory: pytest.TempPathFactory, name: str, env: dict[str, str]) -> Iterator[ServeProcess]:
    try:
        with serving(tmp_path_factory.mktemp(name), env) as server:
            yield server
    except RuntimeError as exc:
        pytest.fail(f"the server could not be started: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    # The HTTP side on a free loopback port: `diagnosis ask` ends with the run's viewer URL.
    yield from _start(tmp_path_factory, "server", {"DIAGNOSIS_HTTP_ADDRESS": f"127.0.0.1:{free_port()}"})


@pytest.fixture(scope="session")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    tokens = ",".join(f"{tenant}:{token}" for tenant, token in AUTH_TOKENS.items())
    yield from _start(tmp_path_factory, "auth-server", {"DIAGNOSIS_AUTH_TOKENS": tokens})


@pytest.fixture
def config(live_server: ServeProcess) -> ConnectionConfig:
    return ConnectionConfig(target=live_server.target, default_timeout=30.0)


@pytest.fixture
def client(config: ConnectionConfig) -> Iterator[DiagnosisClient]:
    with DiagnosisClient(config) as c:
        yield c


@pytest.fixture
async def aclient(config: ConnectionConfig) -> AsyncIterator[AsyncDiagnosisClient]:
    async with AsyncDiagnosisClient(config) as c:
        yield c


@pytest.fixture(scope="session")
def finished_run(live_server: ServeProcess) -> FinishedRun:
    """One diagnosis of the default scenario, run to its end (shared by read-only tests)."""
    with DiagnosisClient(ConnectionConfig(target=live_server.target, default_timeout=30.0)) as c:
        responses = list(c.diagnose("why is checkout returning 500s?", scenario="checkout-oom"))
    return FinishedRun(responses=responses, run=responses[-1].run)


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    # The generated servicer stub marks every RPC abstract; the fake serves those the client tests call.
    server = FakeServer(FakeDiagnosisService())  # type: ignore[abstract]
    try:
        yield server
    finally:
        server.stop()
