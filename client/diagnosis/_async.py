"""The asyncio client (grpc.aio): the same methods as the blocking client, awaitable or async-iterable.

``timeout`` is the gRPC deadline of a call (sent to the server, which stops work at it), not a local
``asyncio.timeout``; hence ASYNC109 is off here.
"""

# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Iterable
from types import TracebackType
from typing import TypeVar

import grpc
import grpc.aio

from diagnosis import _requests
from diagnosis._config import ConnectionConfig, Metadata
from diagnosis._requests import ExecutorOutputLike, RunStatusLike, ToolInvocationLike, VerdictLike
from diagnosis.errors import DeadlineExceededError, ProtocolError, error_from_rpc
from diagnosis.v1 import (
    contracts_pb2,
    diagnosis_service_pb2,
    diagnosis_service_pb2_grpc,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
    run_pb2,
)

RequestT = TypeVar("RequestT")
ResponseT = TypeVar("ResponseT")


def open_aio_channel(config: ConnectionConfig) -> grpc.aio.Channel:
    """An asyncio channel for ``config`` (plaintext or TLS, with its retry policy and limits)."""
    options = config.channel_arguments()
    tls = config.tls_config
    if tls is None:
        return grpc.aio.insecure_channel(config.target, options=options)
    return grpc.aio.secure_channel(config.target, tls.credentials(), options=options)


class AsyncDiagnosisClient:
    """An asyncio client of DiagnosisService and GatekeeperService (create it inside a running loop).

    ``config`` None reads ``DIAGNOSIS_TARGET`` / ``DIAGNOSIS_TOKEN``; a string is a target. Pass ``channel`` to use
    a channel of your own (it is not closed by :meth:`close`). Every failed call raises a
    :class:`~diagnosis.errors.DiagnosisError`.
    """

    def __init__(
        self, config: ConnectionConfig | str | None = None, *, channel: grpc.aio.Channel | None = None
    ) -> None:
        if config is None:
            config = ConnectionConfig.from_env()
        elif isinstance(config, str):
            config = ConnectionConfig(target=config)
        self.config = config
        self._owns_channel = channel is None
        self._channel = channel if channel is not None else open_aio_channel(config)
        self._diagnosis = diagnosis_service_pb2_grpc.DiagnosisServiceStub(self._channel)
        self._gatekeeper = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(self._channel)

    async def __aenter__(self) -> AsyncDiagnosisClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        if self._owns_channel:
            await self._channel.close()

    # ------------------------------------------------------------------ Diagnose

    async def diagnose(
        self,
        question: str,
        *,
        scenario: str = "",
        environment: str = "",
        timeout: float | None = None,
        metadata: Metadata = (),
    ) -> AsyncGenerator[diagnosis_service_pb2.DiagnoseResponse, None]:
        """Starts a run and yields its messages in order: ``started``, the events, then the ``run``."""
        call = self._diagnosis.Diagnose(
            _requests.diagnose_request(question, scenario, environment),
            timeout=self.config.timeout_for(timeout),
            metadata=self.config.call_metadata(metadata),
        )
        try:
            async for response in call:
                yield response
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from exc
        finally:
            call.cancel()

    async def ask(
        self,
        question: str,
        *,
        scenario: str = "",
        environment: str = "",
        on_event: Callable[[run_pb2.OrchestrationEvent], object] | None = None,
        on_started: Callable[[diagnosis_service_pb2.RunStarted], object] | None = None,
        timeout: float | None = None,
        metadata: Metadata = (),
        on_tool_call: Callable[[run_pb2.ToolCallEvent], object] | None = None,
    ) -> run_pb2.DiagnosisRun:
        """Runs a diagnosis to its end and returns the final run; ``on_started``/``on_event`` see progress, and
        ``on_tool_call`` each tool call starting and ending."""
        last: diagnosis_service_pb2.DiagnoseResponse | None = None
        async for response in self.diagnose(
            question, scenario=scenario, environment=environment, timeout=timeout, metadata=metadata
        ):
            kind = response.WhichOneof("kind")
            if kind == "started" and on_started is not None:
                on_started(response.started)
            elif kind == "event" and on_event is not None:
                on_event(response.event)
            elif kind == "tool_call" and on_tool_call is not None:
                on_tool_call(response.tool_call)
            last = response
        return _requests.final_run(last)

    # ------------------------------------------------------------------ Runs

    async def get_run(
        self, run_id: str, *, timeout: float | None = None, metadata: Metadata = ()
    ) -> run_pb2.DiagnosisRun:
        request = diagnosis_service_pb2.GetRunRequest(run_id=run_id)
        response = await self._unary(self._diagnosis.GetRun, request, timeout, metadata)
        if not response.HasField("run"):
            raise ProtocolError(f"GetRun answered with no run for {run_id!r}")
        return response.run

    async def list_runs(
        self,
        *,
        page_size: int = 0,
        page_token: str = "",
        status: RunStatusLike = None,
        verdict: VerdictLike = None,
        timeout: float | None = None,
        metadata: Metadata = (),
    ) -> diagnosis_service_pb2.ListRunsResponse:
        """One page of runs, newest first; ``status``/``verdict`` filter (a name like ``"success"`` or an enum)."""
        request = _requests.list_runs_request(page_size, page_token, status, verdict)
        return await self._unary(self._diagnosis.ListRuns, request, timeout, metadata)

    async def iter_runs(
        self,
        *,
        page_size: int = 0,
        status: RunStatusLike = None,
        verdict: VerdictLike = None,
        timeout: float | None = None,
        metadata: Metadata = (),
    ) -> AsyncGenerator[run_pb2.DiagnosisRun, None]:
        """Every run, newest first, page after page (``timeout`` applies to each page)."""
        token = ""
        seen: set[str] = set()
        while True:
            page = await self.list_runs(
                page_size=page_size,
                page_token=token,
                status=status,
                verdict=verdict,
                timeout=timeout,
                metadata=metadata,
            )
            for run in page.runs:
                yield run
            token = page.next_page_token
            if not token:
                return
            if token in seen:
                raise ProtocolError("ListRuns returned a page token it had already returned")
            seen.add(token)

    async def watch_run(
        self, run_id: str, *, after_sequence: int = 0, timeout: float | None = None, metadata: Metadata = ()
    ) -> AsyncGenerator[diagnosis_service_pb2.WatchRunResponse, None]:
        """Yields the run's events after ``after_sequence``, then the ``ended`` message.

        A stream that breaks (UNAVAILABLE, or an end with no ``ended``) is reopened from the last sequence seen,
        with backoff, at most ``config.reconnect.max_attempts`` times in a row; no event is yielded twice.
        ``timeout`` is the deadline of the whole watch.
        """
        cursor = _requests.WatchCursor(run_id, after_sequence)
        deadline = _requests.Deadline(self.config.timeout_for(timeout))
        policy = self.config.reconnect
        call_metadata = self.config.call_metadata(metadata)
        while True:
            call = self._diagnosis.WatchRun(cursor.request(), timeout=deadline.remaining(), metadata=call_metadata)
            code: grpc.StatusCode | None = None
            try:
                async for response in call:
                    if not cursor.accept(response):
                        continue
                    yield response
                    if response.WhichOneof("kind") == "ended":
                        return
            except grpc.RpcError as exc:
                error = error_from_rpc(exc)
                if not cursor.may_resume(error.code, policy.max_attempts, policy.resume_status_codes):
                    raise error from exc
                code = error.code
            finally:
                call.cancel()
            if code is None and not cursor.may_resume(None, policy.max_attempts, policy.resume_status_codes):
                raise cursor.incomplete()
            delay = policy.delay(cursor.failures)
            if not deadline.allows(delay):
                raise DeadlineExceededError("deadline exceeded before the watch could resume")
            await asyncio.sleep(delay)

    # ------------------------------------------------------------------ Scenarios and the Gatekeeper

    async def list_scenarios(
        self, *, timeout: float | None = None, metadata: Metadata = ()
    ) -> list[diagnosis_service_pb2.Scenario]:
        request = diagnosis_service_pb2.ListScenariosRequest()
        response = await self._unary(self._diagnosis.ListScenarios, request, timeout, metadata)
        return list(response.scenarios)

    async def list_environments(
        self, *, timeout: float | None = None, metadata: Metadata = ()
    ) -> list[diagnosis_service_pb2.Environment]:
        """The server's configured environments: name, default flag, tool names and sources (no credentials)."""
        request = diagnosis_service_pb2.ListEnvironmentsRequest()
        response = await self._unary(self._diagnosis.ListEnvironments, request, timeout, metadata)
        return list(response.environments)

    async def list_tool_invocations(
        self,
        run_id: str,
        *,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
        metadata: Metadata = (),
    ) -> diagnosis_service_pb2.ListToolInvocationsResponse:
        """One page of a run's tool invocations as recorded, in call order."""
        request = diagnosis_service_pb2.ListToolInvocationsRequest(
            run_id=run_id, page_size=page_size, page_token=page_token
        )
        return await self._unary(self._diagnosis.ListToolInvocations, request, timeout, metadata)

    async def iter_tool_invocations(
        self, run_id: str, *, page_size: int = 0, timeout: float | None = None, metadata: Metadata = ()
    ) -> AsyncGenerator[contracts_pb2.ToolInvocation, None]:
        """Every invocation of a run, in call order, page after page (``timeout`` applies to each page)."""
        token = ""
        seen: set[str] = set()
        while True:
            page = await self.list_tool_invocations(
                run_id, page_size=page_size, page_token=token, timeout=timeout, metadata=metadata
            )
            for invocation in page.invocations:
                yield invocation
            token = page.next_page_token
            if not token:
                return
            if token in seen:
                raise ProtocolError("ListToolInvocations returned a page token it had already returned")
            seen.add(token)

    async def check_evidence(
        self,
        request: gatekeeper_service_pb2.CheckEvidenceRequest | None = None,
        *,
        run_id: str = "",
        tool_invocations: Iterable[ToolInvocationLike] = (),
        executor_output: ExecutorOutputLike | None = None,
        timeout: float | None = None,
        metadata: Metadata = (),
    ) -> gatekeeper_service_pb2.CheckEvidenceResponse:
        """Runs the Gatekeeper on an executor output: pass a request, or its fields as keywords."""
        built = _requests.check_evidence_request(
            request, run_id=run_id, tool_invocations=tool_invocations, executor_output=executor_output
        )
        return await self._unary(self._gatekeeper.CheckEvidence, built, timeout, metadata)

    async def _unary(
        self,
        method: grpc.aio.UnaryUnaryMultiCallable[RequestT, ResponseT],
        request: RequestT,
        timeout: float | None,
        metadata: Metadata,
    ) -> ResponseT:
        try:
            return await method(
                request, timeout=self.config.timeout_for(timeout), metadata=self.config.call_metadata(metadata)
            )
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from exc
