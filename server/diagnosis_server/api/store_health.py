"""Whether the store takes writes: a cheap periodic probe that drives gRPC health.

Every ``interval_s`` the probe rewrites one row (``RunStore.probe``). While that fails, every service
of the health servicer is NOT_SERVING, new runs are refused with UNAVAILABLE (and a retry hint), and one
log line says why; when a probe succeeds again, SERVING. A SQLite file deleted or replaced under the
running server (``StoreFileLost``) is final: NOT_SERVING until the server is restarted, since whatever
it wrote from then on would be lost.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog
from grpc_health.v1 import health_pb2
from grpc_health.v1._async import HealthServicer

from diagnosis_server.api.metrics import Metrics
from diagnosis_server.api.periodic import Periodic
from diagnosis_server.store import RunStore, StoreError, StoreFileLost

log = structlog.get_logger("diagnosis_server.api")

DEFAULT_PROBE_INTERVAL_S = 5.0
UNWRITABLE = "the store cannot be written"
FILE_LOST = "the database file was deleted or replaced"


class StoreHealth:
    def __init__(
        self,
        repository: RunStore,
        health: HealthServicer,
        services: Sequence[str],
        metrics: Metrics,
        *,
        interval_s: float = DEFAULT_PROBE_INTERVAL_S,
    ) -> None:
        self._repository = repository
        self._health = health
        self._services = tuple(services)
        self._metrics = metrics
        self._probing = Periodic(
            self.probe_once, interval_s=interval_s, name="store probe", failed="store_probe_failed", until=self._lost
        )
        self.writable = True
        # A short public phrase for callers ("" while writable); the cause is logged.
        self.problem = ""
        self.file_lost = False
        metrics.store_writable.set(1)

    def _lost(self) -> bool:
        return self.file_lost

    async def probe_once(self) -> bool:
        """Probes the store now; updates health on a change. True when the store took the write."""
        if self.file_lost:
            return False
        try:
            await self._repository.probe()
        except StoreFileLost as exc:
            self.file_lost = True
            log.error(
                "store_file_lost",
                error=str(exc),
                location=self._repository.location,
                hint="runs written from now on would be lost on restart: health is NOT_SERVING; restart the server",
            )
            await self._set(False, FILE_LOST)
            return False
        except StoreError as exc:
            if self.writable:
                log.error("store_unwritable", error=str(exc)[:500], location=self._repository.location)
            await self._set(False, UNWRITABLE)
            return False
        if not self.writable:
            log.info("store_writable_again", location=self._repository.location)
        await self._set(True, "")
        return True

    async def _set(self, writable: bool, problem: str) -> None:
        changed = writable != self.writable
        self.writable, self.problem = writable, problem
        self._metrics.store_writable.set(1 if writable else 0)
        if changed:
            status = health_pb2.HealthCheckResponse.SERVING if writable else health_pb2.HealthCheckResponse.NOT_SERVING
            for name in self._services:
                await self._health.set(name, status)

    def start(self) -> None:
        self._probing.start()

    async def stop(self) -> None:
        await self._probing.stop()
