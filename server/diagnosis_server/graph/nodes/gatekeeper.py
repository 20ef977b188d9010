"""Gatekeeper node: deterministic checks of every binding against this run's recorded invocations."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.composition.suggestions import RecordedCall
from diagnosis_server.conversions import value_text
from diagnosis_server.gatekeeper import run_gatekeeper
from diagnosis_server.gatekeeper.pointer import PointerError, resolve_value
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import NodeResult, ProjectedNode
from diagnosis_server.offload import off_loop
from diagnosis_server.protocols.executor import ExecutorParse
from diagnosis_server.verification.verdict import verdict_ceiling

_OUTCOME_BY_CEILING = {
    contracts_pb2.VERDICT_PASS: (run_pb2.NODE_OUTCOME_CEILING_PASS, "CEILING_PASS"),
    contracts_pb2.VERDICT_LOW_CONFID: (run_pb2.NODE_OUTCOME_CEILING_LOW_CONFID, "CEILING_LOW_CONFID"),
}


@dataclass(frozen=True, slots=True)
class GatekeeperInput:
    run_id: str
    executor_parse: ExecutorParse | None

    def legal_parse(self) -> ExecutorParse:
        """The Executor's parse; the Gatekeeper is routed to only after a legal one (a RuntimeError otherwise)."""
        if self.executor_parse is None or not self.executor_parse.ok:
            raise RuntimeError("the Gatekeeper runs only after a legal Executor parse")
        return self.executor_parse


class GatekeeperNode(ProjectedNode[GatekeeperInput]):
    name = run_pb2.NODE_NAME_GATEKEEPER

    async def run(self, inputs: GatekeeperInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        parse = inputs.legal_parse()
        invocations = await ctx.invocations.list_tool_invocations(inputs.run_id)
        # The checks and the values they bound are CPU work: off the event loop.
        return await off_loop(checked, parse, invocations, run_id=inputs.run_id)


def checked(parse: ExecutorParse, invocations: list[contracts_pb2.ToolInvocation], *, run_id: str) -> NodeResult:
    """The Gatekeeper's result on ``parse`` against the run's recorded ``invocations``: its outcome and writes."""
    result = run_gatekeeper(parse, invocations, run_id=run_id)
    ceiling = verdict_ceiling(result)
    outcome, reason = _OUTCOME_BY_CEILING.get(ceiling, (run_pb2.NODE_OUTCOME_CEILING_REJECT, "GATEKEEPER_REJECT"))
    own = [invocation for invocation in invocations if invocation.run_id in ("", run_id)]
    updates = {
        "gatekeeper_result": result,
        "verdict_ceiling": ceiling,
        "recorded_calls": tuple(RecordedCall.of(invocation) for invocation in own),
        "bound_values": {**recorded_outputs(own), **bound_values(result, own)},
    }
    return NodeResult(outcome, reason, updates=updates)


def bound_values(
    result: contracts_pb2.GatekeeperResult, invocations: list[contracts_pb2.ToolInvocation]
) -> dict[tuple[str, str], str]:
    """The whole value at each passed pair's pointer, as text (what its matched text was found in)."""
    by_id = {invocation.invocation_id: invocation for invocation in invocations}
    values: dict[tuple[str, str], str] = {}
    for checked in result.checked_bindings:
        key = (checked.source_invocation_id, checked.raw_path)
        invocation = by_id.get(checked.source_invocation_id)
        if not checked.passed or key in values or invocation is None:
            continue
        try:
            values[key] = value_text(resolve_value(invocation.output, checked.raw_path))
        except PointerError:
            continue
    return values


def recorded_outputs(invocations: list[contracts_pb2.ToolInvocation]) -> dict[tuple[str, str], str]:
    """Each invocation's whole output as text, at the empty pointer: where the guard finds a fact a claim names but
    did not bind (the same output, another one), and the lists a bound element stands in."""
    return {
        (invocation.invocation_id, ""): value_text(resolve_value(invocation.output, "")) for invocation in invocations
    }
