"""diagnosis.v1.GatekeeperService: the Gatekeeper for callers with executors of their own."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc.aio

from diagnosis.v1 import gatekeeper_service_pb2 as pb
from diagnosis.v1 import gatekeeper_service_pb2_grpc
from diagnosis_server.api.errors import invalid_argument
from diagnosis_server.api.validation import check_run_id
from diagnosis_server.gatekeeper.service import CheckInputError, check_evidence


class GatekeeperServicer(gatekeeper_service_pb2_grpc.GatekeeperServiceServicer):
    async def CheckEvidence(
        self, request: pb.CheckEvidenceRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.CheckEvidenceResponse:
        # Run ids follow the API's one rule (empty means "not given" here).
        if request.run_id:
            check_run_id(request.run_id)
        for position, invocation in enumerate(request.tool_invocations):
            if invocation.run_id:
                check_run_id(invocation.run_id, field=f"tool_invocations[{position}].run_id")
        try:
            # Pure and CPU-bound: off the event loop, so a large request never stalls other calls.
            return await asyncio.to_thread(check_evidence, request)
        except CheckInputError as exc:
            field, sep, description = str(exc).partition(": ")
            if not sep:
                field, description = "request", str(exc)
            raise invalid_argument(field, description) from None
