"""diagnosis.v1.GatekeeperService: the Gatekeeper for callers with executors of their own.

A check is pure CPU: it runs on a small pool of its own threads (never on the event loop, never in the
default executor other parts use), at most ``max_concurrent_per_tenant`` at a time per tenant (beyond
that: RESOURCE_EXHAUSTED with a retry hint), and within the per-request bounds of ``Limits.check_max_*``
(INVALID_ARGUMENT naming the limit).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc.aio

from diagnosis.v1 import gatekeeper_service_pb2 as pb
from diagnosis.v1 import gatekeeper_service_pb2_grpc
from diagnosis_server.api.calls import current_call
from diagnosis_server.api.errors import ApiError, error_info, invalid_argument, retry_info
from diagnosis_server.api.validation import check_run_id
from diagnosis_server.evidence_check import CheckInputError, check_evidence
from diagnosis_server.limits import DEFAULT_LIMITS, Limits

DEFAULT_CHECKS_PER_TENANT = 2
DEFAULT_CHECK_THREADS = 2
RETRY_AFTER_S = 1.0


class GatekeeperServicer(gatekeeper_service_pb2_grpc.GatekeeperServiceServicer):
    def __init__(
        self,
        *,
        limits: Limits = DEFAULT_LIMITS,
        max_concurrent_per_tenant: int = DEFAULT_CHECKS_PER_TENANT,
        threads: int = DEFAULT_CHECK_THREADS,
    ) -> None:
        self._limits = limits
        self._per_tenant = max_concurrent_per_tenant
        self._running: Counter[str] = Counter()
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="diagnosis-check")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def CheckEvidence(
        self, request: pb.CheckEvidenceRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.CheckEvidenceResponse:
        # Run ids follow the API's one rule (empty means "not given" here).
        if request.run_id:
            check_run_id(request.run_id)
        for position, invocation in enumerate(request.tool_invocations):
            if invocation.run_id:
                check_run_id(invocation.run_id, field=f"tool_invocations[{position}].run_id")
        tenant = current_call().tenant
        if self._running[tenant] >= self._per_tenant:
            raise ApiError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"too many CheckEvidence calls in progress for this tenant (limit {self._per_tenant}); retry later",
                [error_info("TOO_MANY_CHECKS", {"limit": str(self._per_tenant)}), retry_info(RETRY_AFTER_S)],
            )
        self._running[tenant] += 1
        try:
            loop = asyncio.get_running_loop()
            # Pure and CPU-bound: off the event loop, so a large request never stalls other calls.
            return await loop.run_in_executor(self._pool, check_evidence, request, self._limits)
        except CheckInputError as exc:
            field, sep, description = str(exc).partition(": ")
            if not sep:
                field, description = "request", str(exc)
            raise invalid_argument(field, description) from None
        finally:
            self._running[tenant] -= 1
            if not self._running[tenant]:
                del self._running[tenant]
