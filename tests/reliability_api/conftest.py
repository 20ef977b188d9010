"""Fixtures of the service-level reliability tests: the real server in-process on a loopback port 0.

Each server gets its own SQLite file (``Api.database``), so a test can compare a snapshot of the whole
store before and after what it does. ``provider="heuristic"`` runs the embedded default provider over
the bundled scenarios; otherwise the deterministic ``PassProvider`` of the API tests (optionally gated)
drives every run to SUCCESS.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from api.fakes import PassProvider, tools_for

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, gatekeeper_service_pb2_grpc
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.settings import Settings, load_settings

HEURISTIC = "heuristic"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DIAGNOSIS_* variable of the shell leaks into a test's settings."""
    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)


def make_settings(database: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "address": "127.0.0.1:0",
        "database_url": f"sqlite+aiosqlite:///{database}",
        "metrics_address": "",
        "shutdown_grace_s": 5.0,
    }
    values.update(overrides)
    return load_settings(**values)


@dataclass
class Api:
    """A running server, its SQLite file, and async stubs on a channel to it."""

    running: RunningServer
    database: Path
    channel: grpc.aio.Channel
    diagnosis: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub
    gatekeeper: gatekeeper_service_pb2_grpc.GatekeeperServiceAsyncStub
    provider: PassProvider | None

    async def diagnose(
        self, question: str = "Why is checkout-api failing?", scenario: str = "", **kwargs: Any
    ) -> list[pb.DiagnoseResponse]:
        request = pb.DiagnoseRequest(question=question, context=pb.RequestContext(scenario=scenario))
        return [message async for message in self.diagnosis.Diagnose(request, **kwargs)]


ApiFactory = Callable[..., Awaitable[Api]]


@pytest.fixture
async def api_factory(tmp_path: Path) -> AsyncIterator[ApiFactory]:
    """Starts servers (stopped at the end). Keywords are settings, plus ``provider`` and ``start_kwargs``."""
    started: list[Api] = []

    async def factory(
        *, provider: PassProvider | str | None = None, start_kwargs: dict[str, Any] | None = None, **settings: Any
    ) -> Api:
        database = tmp_path / f"store-{len(started)}.db"
        options: dict[str, Any] = dict(start_kwargs or {})
        agents: PassProvider | None = None
        if provider != HEURISTIC:
            agents = provider if isinstance(provider, PassProvider) else PassProvider()
            options |= {"provider": agents, "tools_for": tools_for}
        running = await start_server(make_settings(database, **settings), **options)
        channel = grpc.aio.insecure_channel(running.target)
        api = Api(
            running=running,
            database=database,
            channel=channel,
            diagnosis=diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel),
            gatekeeper=gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel),
            provider=agents,
        )
        started.append(api)
        return api

    yield factory
    for api in started:
        if api.provider is not None and api.provider.gate is not None:
            api.provider.gate.set()
        await api.channel.close()
        await asyncio.wait_for(api.running.stop(grace=2.0), timeout=10)


@pytest.fixture
async def api(api_factory: ApiFactory) -> Api:
    return await api_factory()
