"""What the interceptor knows about the RPC being served, for the servicer, the call's layers and its log line.

Each RPC runs in its own context: ``begin_call`` makes a CallInfo current there and binds ``method`` to the
structlog contextvars, ``bind_tenant`` and ``bind_run`` bind ``tenant`` and ``run_id`` as they become known,
so every line logged inside the call (and inside a run task it starts: a task copies the context) names them.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio
import structlog

Context = grpc.aio.ServicerContext[Any, Any]


@dataclass(slots=True)
class CallInfo:
    # e.g. "diagnosis.v1.DiagnosisService/GetRun"
    method: str
    peer: str
    # A server-streaming method (Diagnose, WatchRun).
    streaming: bool = False
    # Set once the caller is authenticated.
    tenant: str = ""
    # Set by the servicer when the call concerns one run (logged with the call).
    run_id: str = ""
    # How the call ended, set by the error mapping (``errors.MappedErrors``).
    code: grpc.StatusCode = grpc.StatusCode.OK

    def bind_tenant(self, tenant: str) -> str:
        self.tenant = tenant
        structlog.contextvars.bind_contextvars(tenant=tenant)
        return tenant

    def bind_run(self, run_id: str) -> str:
        """The call concerns ``run_id``: its log line and every line logged inside it name the run."""
        self.run_id = run_id
        structlog.contextvars.bind_contextvars(run_id=run_id)
        return run_id


# One concern of every call (tracing, the log line, metrics, errors, auth, decoding): called as the call
# begins (it may refuse it by raising), its context manager entered before the method runs and left when it
# has ended, for a unary and a server-streaming method alike. A check with nothing to do after the call
# returns ``contextlib.nullcontext()``; the others are small classes (no generator per call and layer).
CallLayer = Callable[[Any, Context, CallInfo], AbstractAsyncContextManager[None]]

_CURRENT: ContextVar[CallInfo | None] = ContextVar("diagnosis_call", default=None)


def begin_call(method: str, peer: str, *, streaming: bool) -> CallInfo:
    """A new current call of this RPC's context, its log context holding only ``method``."""
    call = CallInfo(method=method, peer=peer, streaming=streaming)
    _CURRENT.set(call)
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(method=method)
    return call


def current_call() -> CallInfo:
    """The current RPC's CallInfo; a servicer reached without the interceptor fails closed."""
    call = _CURRENT.get()
    if call is None or not call.tenant:
        raise RuntimeError("no authenticated call in this context")
    return call
