"""PostgreSQL LISTEN/NOTIFY for followers of a run on another replica.

Every node commit that writes events (and a run's final write) sends ``NOTIFY diagnosis_run_events,
'<run_id> <last sequence>[ end]'`` in its own transaction (``sql.notify_events``), so the notification is
delivered when, and only if, the rows are committed. A repository on PostgreSQL keeps one listening
connection (``RunNotifier``), opened on first use: a follower of a run this process does not run
(``RunWatch``) wakes on its run's notifications instead of sleeping its whole poll interval. Polling stays
the fallback: a watch waits at most the poll interval, and while the listening connection is down (it is
reopened on the next wait, at most every ``RECONNECT_S``) a watch simply sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import structlog

from diagnosis_server.store.sql import NOTIFY_CHANNEL

log = structlog.get_logger(__name__)

RECONNECT_S = 1.0
CONNECT_TIMEOUT_S = 5.0


class RunWatch:
    """Notifications of one run since the last ``wait``: a notification that comes while its follower reads
    the store is not lost, the next ``wait`` returns at once."""

    def __init__(self, notifier: RunNotifier, run_id: str) -> None:
        self._notifier = notifier
        self.run_id = run_id
        self.notified = asyncio.Event()
        self.ended = False

    async def wait(self, seconds: float) -> bool:
        """True when the run was notified (rows committed) within ``seconds``, else False."""
        await self._notifier.ensure_listening()
        if not self._notifier.listening:
            await asyncio.sleep(seconds)
            return False
        try:
            async with asyncio.timeout(seconds):
                await self.notified.wait()
        except TimeoutError:
            return False
        self.notified.clear()
        return True

    def close(self) -> None:
        self._notifier._forget(self)


class RunNotifier:
    """One LISTEN connection of a repository, dispatching each notification to the watches of its run."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._conn: Any = None
        self._watches: dict[str, set[RunWatch]] = {}
        self._lock = asyncio.Lock()
        self._next_try = 0.0
        self.delivered = 0  # notifications that woke at least one watch (tests read it)

    @property
    def listening(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    def watch(self, run_id: str) -> RunWatch:
        watch = RunWatch(self, run_id)
        self._watches.setdefault(run_id, set()).add(watch)
        return watch

    def _forget(self, watch: RunWatch) -> None:
        watches = self._watches.get(watch.run_id)
        if watches is not None:
            watches.discard(watch)
            if not watches:
                del self._watches[watch.run_id]

    async def ensure_listening(self) -> None:
        if self.listening or time.monotonic() < self._next_try:
            return
        async with self._lock:
            if self.listening or time.monotonic() < self._next_try:
                return
            self._next_try = time.monotonic() + RECONNECT_S
            import asyncpg  # the PostgreSQL driver: only a PostgreSQL store gets here

            try:
                conn = await asyncpg.connect(self._dsn, timeout=CONNECT_TIMEOUT_S)
                await conn.add_listener(NOTIFY_CHANNEL, self._on_notify)
            except Exception as exc:  # unreachable, refused, timed out, bad credentials: poll instead
                log.warning("store_listen_unavailable", error=type(exc).__name__, hint="followers poll the store")
                return
            conn.add_termination_listener(self._on_lost)
            self._conn = conn
            # Whatever was committed while nobody listened: every watch looks at the store once.
            self._wake_all()

    def _on_notify(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        run_id, _, rest = payload.partition(" ")
        watches = self._watches.get(run_id)
        if not watches:
            return
        self.delivered += 1
        ended = rest.endswith("end")
        for watch in watches:
            watch.ended = watch.ended or ended
            watch.notified.set()

    def _on_lost(self, conn: Any) -> None:
        if conn is self._conn:
            self._conn = None
            self._wake_all()

    def _wake_all(self) -> None:
        for watches in self._watches.values():
            for watch in watches:
                watch.notified.set()

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close(timeout=2)
