"""Fixtures of the alert tests: the real server with its HTTP side on a loopback port, a loopback receiver of
notifications (aiohttp), and Debian's Prometheus and Alertmanager started on loopback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.support import settings as support_settings
from tests.support.api import ApiFactory, api_servers


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    support_settings.clean_environment(monkeypatch)


@pytest.fixture
async def api_factory(tmp_path: Path) -> AsyncIterator[ApiFactory]:
    async with api_servers(lambda n: tmp_path / f"alerts-{n}.db") as factory:
        yield factory


@dataclass
class Receiver:
    """A loopback HTTP receiver: what each path got (JSON bodies); ``fail`` answers 500 to everything."""

    url: str
    received: dict[str, list[Any]] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)
    fail: bool = False
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_for(self, path: str, count: int = 1, within_s: float = 60.0) -> list[Any]:
        async with asyncio.timeout(within_s):
            while len(self.received.get(path, [])) < count:
                self.arrived.clear()
                await self.arrived.wait()
        return self.received[path]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    state = Receiver(url="")

    async def handle(request: web.Request) -> web.Response:
        state.hits[request.path] = state.hits.get(request.path, 0) + 1
        if state.fail:
            return web.Response(status=500, text="down")
        state.received.setdefault(request.path, []).append(json.loads(await request.read()))
        state.arrived.set()
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    state.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        yield state
    finally:
        await runner.cleanup()
