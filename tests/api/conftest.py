"""Fixtures of the API tests: the real server on a loopback port, a real SQLite store, real channels."""

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

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, gatekeeper_service_pb2_grpc
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.settings import Settings, load_settings

from .fakes import PassProvider, tools_for


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DIAGNOSIS_* variable of the shell leaks into a test's settings."""
    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "address": "127.0.0.1:0",
        "database_url": f"sqlite+aiosqlite:///{tmp_path / 'api.db'}",
        "metrics_address": "",
        "shutdown_grace_s": 5.0,
    }
    values.update(overrides)
    return load_settings(**values)


@dataclass
class Api:
    """A running server and async stubs on a channel to it."""

    running: RunningServer
    channel: grpc.aio.Channel
    diagnosis: diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub
    gatekeeper: gatekeeper_service_pb2_grpc.GatekeeperServiceAsyncStub
    provider: PassProvider

    async def diagnose(
        self, question: str = "Why is checkout-api failing?", **kwargs: Any
    ) -> list[pb.DiagnoseResponse]:
        request = pb.DiagnoseRequest(question=question)
        return [message async for message in self.diagnosis.Diagnose(request, **kwargs)]


ApiFactory = Callable[..., Awaitable[Api]]


@pytest.fixture
async def api_factory(tmp_path: Path) -> AsyncIterator[ApiFactory]:
    """Starts servers (stopped at the end); keyword arguments are settings, plus ``provider``."""
    started: list[Api] = []

    async def factory(
        *, provider: PassProvider | None = None, start_kwargs: dict[str, Any] | None = None, **settings: Any
    ) -> Api:
        agents = provider or PassProvider()
        running = await start_server(
            make_settings(tmp_path, **settings), provider=agents, tools_for=tools_for, **(start_kwargs or {})
        )
        channel = grpc.aio.insecure_channel(running.target)
        api = Api(
            running=running,
            channel=channel,
            diagnosis=diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel),
            gatekeeper=gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel),
            provider=agents,
        )
        started.append(api)
        return api

    yield factory
    for api in started:
        if api.provider.gate is not None:
            api.provider.gate.set()
        await api.channel.close()
        await asyncio.wait_for(api.running.stop(grace=2.0), timeout=10)


@pytest.fixture
async def api(api_factory: ApiFactory) -> Api:
    return await api_factory()
