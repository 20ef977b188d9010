"""The blocking client: one method per RPC, keyword-only ``timeout`` and ``metadata`` on each."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable
from types import TracebackType
from typing import TypeVar

import grpc

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


def open_channel(config: ConnectionConfig) -> grpc.Channel:
    """A blocking channel for ``config`` (plaintext or TLS, with its retry policy and limits)."""
    options = config.channel_arguments()
    tls = config.tls_config
    if tls is None:
        return grpc.insecure_channel(config.target, options=options)
    return grpc.secure_channel(config.target, tls.credentials(), options=options)


class DiagnosisClient:
    """A blocking client of DiagnosisService and GatekeeperService.

    ``config`` None reads ``DIAGNOSIS_TARGET`` / ``DIAGNOSIS_TOKEN`` (:meth:`ConnectionConfig.from_env`); a string
    is a target. Pass ``channel`` to use a channel of your own (it is not closed by :meth:`close`).
    Every failed call raises a :class:`~diagnosis.errors.DiagnosisError`.
    """

    def __init__(self, config: ConnectionConfig | str | None = None, *, channel: grpc.Channel | None = None) -> None:
        if config is None:
            config = ConnectionConfig.from_env()
        elif isinstance(config, str):
            config = ConnectionConfig(target=config)
        self.config = config
        self._owns_channel = channel is None
        self._channel = channel if channel is not None else open_channel(config)
        self._diagnosis = diagnosis_service_pb2_grpc.DiagnosisServiceStub(self._channel)
        self._gatekeeper = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(self._channel)

    def __enter__(self) -> DiagnosisClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_channel:
            self._channel.close()

    # ------------------------------------------------------------------ Diagnose

    def diagnose(
        self,
        question: str,
        *,
        scenario: str = "",
        environment: str = "",
        timeout: float | None = None,
        metadata: Metadata = (),
    ) -> Generator[diagnosis_service_pb2.DiagnoseResponse, None, None]:
        """Starts a run and yields its messages in order: ``started``, the events, then the ``run``.

        Stop iterating (or close the iterator) to cancel the call.
        """
        call = self._diagnosis.Diagnose(
            _requests.diagnose_request(question, scenario, environment),
            timeout=self.config.timeout_for(timeout),
            metadata=self.config.call_metadata(metadata),
        )
        try:
            yield from call
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from exc
        finally:
            call.cancel()

    def ask(
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
        for response in self.diagnose(
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

    def get_run(self, run_id: str, *, timeout: float | None = None, metadata: Metadata = ()) -> run_pb2.DiagnosisRun:
        response = self._unary(
            self._diagnosis.GetRun, diagnosis_service_pb2.GetRunRequest(run_id=run_id), timeout, metadata
        )
        if not response.HasField("run"):
            raise ProtocolError(f"GetRun answered with no run for {run_id!r}")
        return response.run

    def list_runs(
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
        return self._unary(self._diagnosis.ListRuns, request, timeout, metadata)

    def iter_runs(
        self,
        *,
        page_size: int = 0,
        status: RunStatusLike = None,
        verdict: VerdictLike = None,
        timeout: float | None = None,
        metadata: Metadata = (),
    ) -> Generator[run_pb2.DiagnosisRun, None, None]:
        """Every run, newest first, page after page (``timeout`` applies to each page)."""
        token = ""
        seen: set[str] = set()
        while True:
            page = self.list_runs(
                page_size=page_size,
                page_token=token,
                status=status,
                verdict=verdict,
                timeout=timeout,
                metadata=metadata,
            )
            yield from page.runs
            token = page.next_page_token
            if not token:
                return
            if token in seen:
                raise ProtocolError("ListRuns returned a page token it had already returned")
            seen.add(token)

    def watch_run(
        self, run_id: str, *, after_sequence: int = 0, timeout: float | None = None, metadata: Metadata = ()
    ) -> Generator[diagnosis_service_pb2.WatchRunResponse, None, None]:
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
                for response in call:
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
            time.sleep(delay)

    # ------------------------------------------------------------------ Scenarios and the Gatekeeper

    def list_scenarios(
        self, *, timeout: float | None = None, metadata: Metadata = ()
    ) -> list[diagnosis_service_pb2.Scenario]:
        request = diagnosis_service_pb2.ListScenariosRequest()
        return list(self._unary(self._diagnosis.ListScenarios, request, timeout, metadata).scenarios)

    def list_environments(
        self, *, timeout: float | None = None, metadata: Metadata = ()
    ) -> list[diagnosis_service_pb2.Environment]:
        """The server's configured environments: name, default flag, tool names and sources (no credentials)."""
        request = diagnosis_service_pb2.ListEnvironmentsRequest()
        return list(self._unary(self._diagnosis.ListEnvironments, request, timeout, metadata).environments)

    def list_tool_invocations(
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
        return self._unary(self._diagnosis.ListToolInvocations, request, timeout, metadata)

    def iter_tool_invocations(
        self, run_id: str, *, page_size: int = 0, timeout: float | None = None, metadata: Metadata = ()
    ) -> Generator[contracts_pb2.ToolInvocation, None, None]:
        """Every invocation of a run, in call order, page after page (``timeout`` applies to each page)."""
        token = ""
        seen: set[str] = set()
        while True:
            page = self.list_tool_invocations(
                run_id, page_size=page_size, page_token=token, timeout=timeout, metadata=metadata
            )
            yield from page.invocations
            token = page.next_page_token
            if not token:
                return
            if token in seen:
                raise ProtocolError("ListToolInvocations returned a page token it had already returned")
            seen.add(token)

    def check_evidence(
        self,
        request: gatekeeper_service_pb2.CheckEvidenceRequest | None = None,
        *,
        run_id: str = "",
        tool_invocations: Iterable[ToolInvocationLike] = (),
        executor_output: ExecutorOutputLike | None = None,
        timeout: float | None = None,
        metadata: Metadata = (),
    ) -> gatekeeper_service_pb2.CheckEvidenceResponse:
        """Runs the Gatekeeper on an executor output: pass a request, or its fields as keywords
        (``executor_output`` raw text, a JSON object or a Struct; invocations as messages or proto JSON)."""
        built = _requests.check_evidence_request(
            request, run_id=run_id, tool_invocations=tool_invocations, executor_output=executor_output
        )
        return self._unary(self._gatekeeper.CheckEvidence, built, timeout, metadata)

    def _unary(
        self,
        method: grpc.UnaryUnaryMultiCallable[RequestT, ResponseT],
        request: RequestT,
        timeout: float | None,
        metadata: Metadata,
    ) -> ResponseT:
        try:
            return method(
                request, timeout=self.config.timeout_for(timeout), metadata=self.config.call_metadata(metadata)
            )
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from exc
