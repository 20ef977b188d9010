"""`diagnosis serve` with the embedded heuristic agents slowed down: each agent call first sleeps.

Run as a script (``python slow_serve.py``); settings come from the DIAGNOSIS_* environment as for
`diagnosis serve`. ``SLOW_SERVE_AGENT_DELAY_S`` is the sleep before each agent call (default 0.3 s),
so a run stays in flight long enough for a test to kill the process in the middle of it.
``SLOW_SERVE_HEARTBEAT_S`` is how often the server touches its runs' heartbeats and sweeps for orphans
(default: the server's own).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from diagnosis_server.agents.base import Agent, AgentProvider, AgentReply, AgentRequest, AgentRole
from diagnosis_server.api import configure_logging
from diagnosis_server.api.components import load_provider
from diagnosis_server.cli.serve import serve
from diagnosis_server.settings import SettingsError, load_settings
from diagnosis_server.telemetry import configure_tracing, shutdown_tracing


class SlowAgent:
    def __init__(self, inner: Agent, delay_s: float) -> None:
        self._inner = inner
        self._delay_s = delay_s

    async def run(self, request: AgentRequest) -> AgentReply:
        await asyncio.sleep(self._delay_s)
        return await self._inner.run(request)


class SlowProvider:
    """The four agents of ``inner``, each sleeping ``delay_s`` before it answers."""

    def __init__(self, inner: AgentProvider, delay_s: float) -> None:
        self._inner = inner
        self._delay_s = delay_s

    @property
    def name(self) -> str:
        return self._inner.name

    def agent(self, role: AgentRole) -> Agent:
        return SlowAgent(self._inner.agent(role), self._delay_s)


def main() -> int:
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"slow_serve: error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    configure_tracing()
    provider = SlowProvider(
        load_provider(settings.agent_provider), float(os.environ.get("SLOW_SERVE_AGENT_DELAY_S", "0.3"))
    )
    options: dict[str, Any] = {"provider": provider}
    if heartbeat := os.environ.get("SLOW_SERVE_HEARTBEAT_S"):
        options["heartbeat_interval_s"] = float(heartbeat)
    try:
        return asyncio.run(serve(settings, **options))
    finally:
        shutdown_tracing()


if __name__ == "__main__":
    sys.exit(main())
