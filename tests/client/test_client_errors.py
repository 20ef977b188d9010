"""Error mapping: a typed DiagnosisError per status class with code, message and decoded google.rpc details."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2

from diagnosis import (
    AsyncDiagnosisClient,
    ConnectionConfig,
    DiagnosisClient,
    DiagnosisError,
    InvalidArgumentError,
    NotFoundError,
    ProtocolError,
    UnauthenticatedError,
    UnavailableError,
    error_from_rpc,
)
from diagnosis._status import decode_details
from diagnosis.v1 import diagnosis_service_pb2

from .client_fakes import FakeServer, bad_request, rich_status


class FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, message: str, trailers: tuple[tuple[str, str | bytes], ...] = ()):
        self._code, self._message, self._trailers = code, message, trailers

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._message

    def trailing_metadata(self) -> tuple[tuple[str, str | bytes], ...]:  # type: ignore[override]
        return self._trailers


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (grpc.StatusCode.NOT_FOUND, NotFoundError),
        (grpc.StatusCode.INVALID_ARGUMENT, InvalidArgumentError),
        (grpc.StatusCode.UNAUTHENTICATED, UnauthenticatedError),
        (grpc.StatusCode.UNAVAILABLE, UnavailableError),
        (grpc.StatusCode.DATA_LOSS, DiagnosisError),
    ],
)
def test_each_status_class_has_its_error_type(code: grpc.StatusCode, cls: type[DiagnosisError]) -> None:
    error = error_from_rpc(FakeRpcError(code, "what happened"))
    assert type(error) is cls
    assert error.code == code
    assert error.message == "what happened"
    assert str(error) == f"{code.name}: what happened"
    assert error.details == ()
    assert error.status_details is None


def test_an_error_without_a_message_gets_one_from_its_code() -> None:
    assert error_from_rpc(FakeRpcError(grpc.StatusCode.NOT_FOUND, "")).message == "not found"


def test_bad_request_details_are_decoded_into_their_types() -> None:
    status = rich_status(grpc.StatusCode.INVALID_ARGUMENT, "question: empty", bad_request("question", "empty"))
    error = error_from_rpc(FakeRpcError(grpc.StatusCode.INVALID_ARGUMENT, status.details, status.trailing_metadata))
    (detail,) = error.details
    assert isinstance(detail, error_details_pb2.BadRequest)
    assert error.field_violations() == [("question", "empty")]
    assert isinstance(error.status_details, bytes)


def test_details_of_an_unknown_type_stay_any_and_garbage_decodes_to_nothing() -> None:
    from google.rpc import status_pb2

    unknown = any_pb2.Any(type_url="type.googleapis.com/acme.v1.NotInstalled", value=b"\x08\x01")
    raw = status_pb2.Status(code=3, message="m", details=[unknown]).SerializeToString()
    (detail,) = decode_details(raw)
    assert isinstance(detail, any_pb2.Any)
    assert detail.type_url.endswith("acme.v1.NotInstalled")
    assert decode_details(b"\xff\xff\xff") == ()
    assert decode_details(None) == ()


def test_not_found_from_a_real_call(fake: FakeServer) -> None:
    with DiagnosisClient(ConnectionConfig(target=fake.target, default_timeout=10)) as client:
        with pytest.raises(NotFoundError) as caught:
            list(client.watch_run("nope"))
        assert caught.value.code == grpc.StatusCode.NOT_FOUND
        assert caught.value.message == "scripted NOT_FOUND"


def test_invalid_argument_with_details_from_a_real_call(fake: FakeServer) -> None:
    with (
        DiagnosisClient(ConnectionConfig(target=fake.target, default_timeout=10)) as client,
        pytest.raises(InvalidArgumentError) as caught,
    ):
        client.get_run("bad")
    assert caught.value.field_violations() == [("run_id", "malformed")]


async def test_async_errors_carry_details_too(fake: FakeServer) -> None:
    async with AsyncDiagnosisClient(ConnectionConfig(target=fake.target, default_timeout=10)) as client:
        with pytest.raises(InvalidArgumentError) as caught:
            await client.get_run("bad")
    assert caught.value.field_violations() == [("run_id", "malformed")]


def test_a_diagnose_stream_without_a_final_run_is_a_protocol_error(fake: FakeServer) -> None:
    fake.service.diagnose_script = [
        diagnosis_service_pb2.DiagnoseResponse(run_id="r", started=diagnosis_service_pb2.RunStarted(run_id="r"))
    ]
    with (
        DiagnosisClient(ConnectionConfig(target=fake.target, default_timeout=10)) as client,
        pytest.raises(ProtocolError, match="without the final run"),
    ):
        client.ask("q")


def test_a_repeated_page_token_is_a_protocol_error_not_a_loop(fake: FakeServer) -> None:
    fake.service.pages = {"": (["a"], "t1"), "t1": (["b"], "t1")}
    with DiagnosisClient(ConnectionConfig(target=fake.target, default_timeout=10)) as client:
        seen: list[str] = []
        with pytest.raises(ProtocolError, match="page token"):
            seen.extend(run.run_id for run in client.iter_runs())
    assert seen == ["a", "b"]


def test_unreachable_server_is_unavailable() -> None:
    from tests.support.serve import free_port

    config = ConnectionConfig(target=f"127.0.0.1:{free_port()}", retry=None, default_timeout=5)
    with DiagnosisClient(config) as client, pytest.raises(UnavailableError):
        client.list_scenarios()
