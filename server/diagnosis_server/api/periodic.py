"""A background task that does one thing every few seconds until stopped (run maintenance, the store probe)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class Periodic:
    """Awaits ``tick()`` every ``interval_s`` (the first after one interval) while ``until()`` is false.

    A tick that raises is logged as ``failed`` and the next one comes on time: the task never dies silently.
    """

    tick: Callable[[], Awaitable[object]]
    interval_s: float
    name: str
    failed: str
    until: Callable[[], bool] = lambda: False
    _task: asyncio.Task[None] | None = field(default=None, init=False)

    def start(self) -> None:
        if self._task is None and self.interval_s > 0:
            self._task = asyncio.create_task(self._loop(), name=self.name)

    async def _loop(self) -> None:
        while not self.until():
            await asyncio.sleep(self.interval_s)
            try:
                await self.tick()
            except Exception as exc:
                log.warning(self.failed, error=type(exc).__name__, detail=str(exc)[:300])

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
