"""Builders of the protos the store tests write."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.store import RunStore

# Opens the store as one server instance (its owner id): a second call with another owner is another
# instance on the same data, with the same owner a new life of that instance (the ``backend`` fixture).
OpenStore = Callable[[str], Awaitable[RunStore]]


def make_run(
    run_id: str, *, tenant: str = "acme", question: str = "why is checkout returning 500s?"
) -> run_pb2.DiagnosisRun:
    return run_pb2.DiagnosisRun(run_id=run_id, tenant=tenant, question=question, scenario="checkout-500")


def make_event(
    run_id: str, sequence: int, *, node: run_pb2.NodeName.ValueType = run_pb2.NODE_NAME_PLANNER
) -> run_pb2.OrchestrationEvent:
    return run_pb2.OrchestrationEvent(
        run_id=run_id, sequence=sequence, node=node, outcome=run_pb2.NODE_OUTCOME_OK, reason_code="OK", attempt=1
    )


def make_invocation(run_id: str, invocation_id: str, *, tool_name: str = "logs.search") -> contracts_pb2.ToolInvocation:
    invocation = contracts_pb2.ToolInvocation(
        run_id=run_id, invocation_id=invocation_id, tool_name=tool_name, status=contracts_pb2.TOOL_INVOCATION_STATUS_OK
    )
    invocation.output.struct_value.update({"lines": ["HTTP 500 from payments"]})
    return invocation


def make_step(
    run_id: str, *, node: run_pb2.NodeName.ValueType = run_pb2.NODE_NAME_PLANNER, attempt: int = 1
) -> run_pb2.NodeStep:
    return run_pb2.NodeStep(
        run_id=run_id, node=node, attempt=attempt, cycle=1, provider="heuristic", model="rules", latency_ms=3
    )
