"""The gRPC API: servicers, the interceptor and its layers (tracing, logging, metrics, errors, auth, decoding), health,
reflection, start-up and shutdown."""

from __future__ import annotations

from diagnosis_server.api.auth import DEFAULT_TENANT, TokenAuthenticator
from diagnosis_server.api.errors import ApiError
from diagnosis_server.api.hub import EventHub
from diagnosis_server.api.logging import configure_logging
from diagnosis_server.api.metrics import Metrics
from diagnosis_server.api.runs import RunManager
from diagnosis_server.api.server import SERVICE_NAMES, RunningServer, StartupError, check_bind_policy, start_server
from diagnosis_server.api.validation import RUN_ID_PATTERN

__all__ = [
    "DEFAULT_TENANT",
    "RUN_ID_PATTERN",
    "SERVICE_NAMES",
    "ApiError",
    "EventHub",
    "Metrics",
    "RunManager",
    "RunningServer",
    "StartupError",
    "TokenAuthenticator",
    "check_bind_policy",
    "configure_logging",
    "start_server",
]
