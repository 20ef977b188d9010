"""What the interceptor knows about the RPC being served, for the servicer and the RPC's log line."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(slots=True)
class CallInfo:
    # e.g. "diagnosis.v1.DiagnosisService/GetRun"
    method: str
    peer: str
    # Set by the interceptor once the caller is authenticated.
    tenant: str = ""
    # Set by the servicer when the call concerns one run (logged with the call).
    run_id: str = ""


_CURRENT: ContextVar[CallInfo | None] = ContextVar("diagnosis_call", default=None)


def bind_call(call: CallInfo) -> None:
    """Makes ``call`` the current call of this RPC's task (each RPC runs in its own context)."""
    _CURRENT.set(call)


def current_call() -> CallInfo:
    """The current RPC's CallInfo; a servicer reached without the interceptor fails closed."""
    call = _CURRENT.get()
    if call is None or not call.tenant:
        raise RuntimeError("no authenticated call in this context")
    return call
