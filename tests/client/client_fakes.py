"""A scripted in-process DiagnosisService on loopback: streams that break, calls that fail, rich error details.

It lets the client's resume, retry and error mapping be shown against real gRPC transport without the server.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from typing import TypeVar

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2, diagnosis_service_pb2_grpc, run_pb2

RUN_ID = "run-fake-1"

# One WatchRun call's script: messages to send, then optionally a status code to end with instead of OK.
Step = diagnosis_service_pb2.WatchRunResponse | grpc.StatusCode
R = TypeVar("R", bound=Message)


def event(
    sequence: int,
    node: run_pb2.NodeName.ValueType = run_pb2.NODE_NAME_PLANNER,
    outcome: run_pb2.NodeOutcome.ValueType = run_pb2.NODE_OUTCOME_OK,
) -> Step:
    return diagnosis_service_pb2.WatchRunResponse(
        event=run_pb2.OrchestrationEvent(run_id=RUN_ID, sequence=sequence, node=node, outcome=outcome, attempt=1)
    )


def ended(last_sequence: int) -> Step:
    return diagnosis_service_pb2.WatchRunResponse(
        ended=diagnosis_service_pb2.RunEnded(
            status=run_pb2.RUN_STATUS_SUCCESS, verdict=contracts_pb2.VERDICT_PASS, last_sequence=last_sequence
        )
    )


def rich_status(code: grpc.StatusCode, message: str, *details: Message) -> grpc.Status:
    status = status_pb2.Status(code=code.value[0], message=message)
    for detail in details:
        packed = any_pb2.Any()
        packed.Pack(detail)
        status.details.append(packed)
    result: grpc.Status = rpc_status.to_status(status)
    return result


def bad_request(field_name: str, description: str) -> error_details_pb2.BadRequest:
    violation = error_details_pb2.BadRequest.FieldViolation(field=field_name, description=description)
    return error_details_pb2.BadRequest(field_violations=[violation])


def played(script: list[R | grpc.StatusCode], context: grpc.ServicerContext) -> Iterator[R]:
    """A scripted stream: each response in turn, a status code ends it with that code."""
    for step in script:
        if isinstance(step, grpc.StatusCode):
            context.abort(step, f"scripted {step.name}")
        yield step


@dataclass
class FakeDiagnosisService(diagnosis_service_pb2_grpc.DiagnosisServiceServicer):
    watch_scripts: list[list[Step]] = field(default_factory=list)
    watch_requests: list[diagnosis_service_pb2.WatchRunRequest] = field(default_factory=list)
    # GetRun: these codes first (one a call), then the run.
    get_run_failures: list[grpc.StatusCode] = field(default_factory=list)
    get_run_calls: int = 0
    diagnose_calls: int = 0
    # Diagnose: the messages to send; a StatusCode ends the stream with that code.
    diagnose_script: list[diagnosis_service_pb2.DiagnoseResponse | grpc.StatusCode] = field(default_factory=list)
    # ListRuns: page token -> (run ids, next token).
    pages: dict[str, tuple[list[str], str]] = field(default_factory=dict)
    metadata_seen: list[tuple[tuple[str, str | bytes], ...]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def WatchRun(
        self, request: diagnosis_service_pb2.WatchRunRequest, context: grpc.ServicerContext
    ) -> Iterator[diagnosis_service_pb2.WatchRunResponse]:
        with self.lock:
            self.watch_requests.append(request)
            script: list[Step] = self.watch_scripts.pop(0) if self.watch_scripts else [grpc.StatusCode.NOT_FOUND]
        yield from played(script, context)

    def GetRun(
        self, request: diagnosis_service_pb2.GetRunRequest, context: grpc.ServicerContext
    ) -> diagnosis_service_pb2.GetRunResponse:
        with self.lock:
            self.get_run_calls += 1
            self.metadata_seen.append(tuple(context.invocation_metadata()))
            failure = self.get_run_failures.pop(0) if self.get_run_failures else None
        if failure is not None:
            context.abort(failure, f"scripted {failure.name}")
        if request.run_id == "bad":
            context.abort_with_status(
                rich_status(grpc.StatusCode.INVALID_ARGUMENT, "run_id: malformed", bad_request("run_id", "malformed"))
            )
        return diagnosis_service_pb2.GetRunResponse(run=run_pb2.DiagnosisRun(run_id=request.run_id))

    def ListRuns(
        self, request: diagnosis_service_pb2.ListRunsRequest, context: grpc.ServicerContext
    ) -> diagnosis_service_pb2.ListRunsResponse:
        ids, token = self.pages.get(request.page_token, ([], ""))
        return diagnosis_service_pb2.ListRunsResponse(
            runs=[run_pb2.DiagnosisRun(run_id=i) for i in ids], next_page_token=token
        )

    def Diagnose(
        self, request: diagnosis_service_pb2.DiagnoseRequest, context: grpc.ServicerContext
    ) -> Iterator[diagnosis_service_pb2.DiagnoseResponse]:
        with self.lock:
            self.diagnose_calls += 1
        yield from played(self.diagnose_script, context)

    def ListScenarios(
        self, request: diagnosis_service_pb2.ListScenariosRequest, context: grpc.ServicerContext
    ) -> diagnosis_service_pb2.ListScenariosResponse:
        return diagnosis_service_pb2.ListScenariosResponse(
            scenarios=[diagnosis_service_pb2.Scenario(name="fake", is_default=True)]
        )


class FakeServer:
    """The fake service on 127.0.0.1:<free port> in a thread pool; stop() when done."""

    def __init__(self, service: FakeDiagnosisService) -> None:
        self.service = service
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        diagnosis_service_pb2_grpc.add_DiagnosisServiceServicer_to_server(service, self._server)
        port = self._server.add_insecure_port("127.0.0.1:0")
        self.target = f"127.0.0.1:{port}"
        self._server.start()

    def stop(self) -> None:
        self._server.stop(grace=None)
