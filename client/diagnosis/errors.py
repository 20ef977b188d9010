"""Typed errors: every failed call raises a :class:`DiagnosisError` (a subclass per class of status code)."""

from __future__ import annotations

from typing import Any, ClassVar

import grpc
from google.protobuf.message import Message

from diagnosis._status import decode_details, status_details_bytes

__all__ = [
    "AlreadyExistsError",
    "DeadlineExceededError",
    "DiagnosisError",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "PermissionDeniedError",
    "ProtocolError",
    "ResourceExhaustedError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "error_from_rpc",
]


class DiagnosisError(Exception):
    """A call failed. ``code`` is the gRPC status code, ``message`` the server's words, ``details`` the
    ``google.rpc`` error details (e.g. ``BadRequest``; a ``google.protobuf.Any`` for a type not installed),
    and ``status_details`` the raw serialized ``google.rpc.Status`` the server sent, if any."""

    default_code: ClassVar[grpc.StatusCode] = grpc.StatusCode.UNKNOWN

    def __init__(
        self,
        message: str,
        *,
        code: grpc.StatusCode | None = None,
        details: tuple[Message, ...] = (),
        status_details: bytes | None = None,
    ) -> None:
        super().__init__(message)
        self.code: grpc.StatusCode = code if code is not None else self.default_code
        self.message: str = message
        self.details: tuple[Message, ...] = details
        self.status_details: bytes | None = status_details

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code.name}, message={self.message!r})"

    def field_violations(self) -> list[tuple[str, str]]:
        """``(field, description)`` of every ``BadRequest`` field violation in ``details``."""
        found: list[tuple[str, str]] = []
        for detail in self.details:
            if detail.DESCRIPTOR.full_name == "google.rpc.BadRequest":
                violations: Any = getattr(detail, "field_violations", ())
                found.extend((str(v.field), str(v.description)) for v in violations)
        return found


class InvalidArgumentError(DiagnosisError):
    default_code = grpc.StatusCode.INVALID_ARGUMENT


class NotFoundError(DiagnosisError):
    default_code = grpc.StatusCode.NOT_FOUND


class AlreadyExistsError(DiagnosisError):
    default_code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDeniedError(DiagnosisError):
    default_code = grpc.StatusCode.PERMISSION_DENIED


class UnauthenticatedError(DiagnosisError):
    default_code = grpc.StatusCode.UNAUTHENTICATED


class FailedPreconditionError(DiagnosisError):
    default_code = grpc.StatusCode.FAILED_PRECONDITION


class ResourceExhaustedError(DiagnosisError):
    default_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class UnavailableError(DiagnosisError):
    default_code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceededError(DiagnosisError):
    default_code = grpc.StatusCode.DEADLINE_EXCEEDED


class UnimplementedError(DiagnosisError):
    default_code = grpc.StatusCode.UNIMPLEMENTED


class InternalError(DiagnosisError):
    default_code = grpc.StatusCode.INTERNAL


class ProtocolError(DiagnosisError):
    """The server answered with a shape the contract rules out (e.g. a Diagnose stream with no final run)."""

    default_code = grpc.StatusCode.UNKNOWN


_BY_CODE: dict[grpc.StatusCode, type[DiagnosisError]] = {
    cls.default_code: cls
    for cls in (
        InvalidArgumentError,
        NotFoundError,
        AlreadyExistsError,
        PermissionDeniedError,
        UnauthenticatedError,
        FailedPreconditionError,
        ResourceExhaustedError,
        UnavailableError,
        DeadlineExceededError,
        UnimplementedError,
        InternalError,
    )
}


def error_from_rpc(error: grpc.RpcError) -> DiagnosisError:
    """The typed error for a failed call (sync ``grpc.RpcError`` or ``grpc.aio.AioRpcError``)."""
    code = _call(error, "code")
    if not isinstance(code, grpc.StatusCode):
        code = grpc.StatusCode.UNKNOWN
    message = _call(error, "details")
    raw = status_details_bytes(_call(error, "trailing_metadata"))
    cls = _BY_CODE.get(code, DiagnosisError)
    return cls(
        message if isinstance(message, str) and message else code.name.lower().replace("_", " "),
        code=code,
        details=decode_details(raw),
        status_details=raw,
    )


def _call(error: grpc.RpcError, name: str) -> Any:
    method = getattr(error, name, None)
    if method is None:
        return None
    try:
        return method()
    except Exception:  # a bare RpcError raised by an interceptor may not be a Call
        return None
