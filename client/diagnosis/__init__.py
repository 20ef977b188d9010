"""Client library and generated contracts of the diagnosis-graph service.

>>> from diagnosis import ConnectionConfig, DiagnosisClient
>>> with DiagnosisClient(ConnectionConfig(target="127.0.0.1:50051")) as client:  # doctest: +SKIP
...     run = client.ask("why is checkout returning 500s?", scenario="checkout-oom")
...     print(run_status_name(run.status), verdict_name(run.verdict))  # SUCCESS LOW_CONFID

Needs only grpcio and protobuf; ``google.rpc`` error details are decoded when googleapis-common-protos is installed.
"""

from __future__ import annotations

from diagnosis._async import AsyncDiagnosisClient, open_aio_channel
from diagnosis._config import (
    DEFAULT_TARGET,
    ConnectionConfig,
    Metadata,
    ReconnectPolicy,
    RetryPolicy,
    TLSConfig,
    parse_target,
)
from diagnosis._names import enum_name, message_to_dict, message_to_json, run_status_name, verdict_name
from diagnosis._requests import run_status, verdict
from diagnosis._sync import DiagnosisClient, open_channel
from diagnosis.errors import (
    AlreadyExistsError,
    DeadlineExceededError,
    DiagnosisError,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ProtocolError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    UnimplementedError,
    error_from_rpc,
)

__all__ = [
    "DEFAULT_TARGET",
    "AlreadyExistsError",
    "AsyncDiagnosisClient",
    "ConnectionConfig",
    "DeadlineExceededError",
    "DiagnosisClient",
    "DiagnosisError",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "Metadata",
    "NotFoundError",
    "PermissionDeniedError",
    "ProtocolError",
    "ReconnectPolicy",
    "ResourceExhaustedError",
    "RetryPolicy",
    "TLSConfig",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "enum_name",
    "error_from_rpc",
    "message_to_dict",
    "message_to_json",
    "open_aio_channel",
    "open_channel",
    "parse_target",
    "run_status",
    "run_status_name",
    "verdict",
    "verdict_name",
]
