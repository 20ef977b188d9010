"""The real server in-process on a loopback port 0 (``start_server``), with async stubs on a channel to it.

``api_servers`` starts servers for one test and stops them at its end. Keywords of a start are settings, plus
``provider`` (a ``PassProvider``, by default a fresh one, or ``"heuristic"`` for the embedded default over the
bundled scenarios) and ``start_kwargs`` (passed to ``start_server``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, gatekeeper_service_pb2_grpc
from diagnosis_server.api import RunningServer, start_server

from .fakes import PassProvider, tools_for
from .settings import make_settings

HEURISTIC = "heuristic"


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


@contextlib.asynccontextmanager
async def api_servers(database_for: Callable[[int], Path]) -> AsyncIterator[ApiFactory]:
    """A factory of servers, the n-th (from 0) over ``database_for(n)``; all stopped when the block ends."""
    started: list[Api] = []

    async def factory(
        *, provider: PassProvider | str | None = None, start_kwargs: dict[str, Any] | None = None, **settings: Any
    ) -> Api:
        database = database_for(len(started))
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

    try:
        yield factory
    finally:
        for api in started:
            if api.provider is not None and api.provider.gate is not None:
                api.provider.gate.set()
            await api.channel.close()
            await asyncio.wait_for(api.running.stop(grace=2.0), timeout=10)
