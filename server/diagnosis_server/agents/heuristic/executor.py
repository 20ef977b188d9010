"""The heuristic Executor: runs the plan through the run's tool runner, then states what the outputs show.

It reads only its input (the plan) and the outputs of the calls it makes; it keeps nothing between
calls. Its only output is executor_evidence_v2: claims bound by JSON Pointer to this cycle's recorded
invocations, with matched texts copied verbatim, and evidence gaps; never a summary or an answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import AgentNonRetryableError, AgentReply, AgentRequest
from diagnosis_server.agents.heuristic.diagnosis import Assessment, assess
from diagnosis_server.agents.heuristic.follow_ups import EVENTS, NODE_EVENTS_NAMESPACE, follow_up_calls
from diagnosis_server.agents.heuristic.inputs import load_input, plan_steps
from diagnosis_server.agents.heuristic.live_plan import question_subjects
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.conversions import JsonObject, JsonValue

CONTRACT = "executor_evidence_v2"
MODEL = "heuristic"
_MAX_ERROR = 160
# Outputs with data: whole, or trimmed to the output bound (the kept part is the upstream's own JSON).
_USABLE = frozenset({contracts_pb2.TOOL_INVOCATION_STATUS_OK, contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED})


def evidence_json(assessment: Assessment, failures: list[str], carried: list[JsonObject] | None = None) -> JsonObject:
    """The executor_evidence_v2 output: carried claims of an earlier cycle first (their ids kept), then the new
    ones (ids that do not collide, statements not already carried)."""
    carried = carried or []
    used = {str(c.get("claim_id")) for c in carried}
    said = {str(c.get("statement")) for c in carried}
    claims: list[JsonValue] = list(carried)
    number = 0
    for claim in assessment.claims:
        if claim.statement in said:
            continue
        number += 1
        while f"c{number}" in used:
            number += 1
        claims.append(
            {
                "claim_id": f"c{number}",
                "statement": claim.statement,
                "critical": claim.critical,
                "status": "hypothesis" if claim.hypothesis else "confirmed",
                "evidence_bindings": [binding.to_json() for binding in claim.bindings],
            }
        )
    gaps: list[JsonValue] = []
    for gap in assessment.gaps:
        item: JsonObject = {"description": gap.description, "critical": gap.critical}
        if gap.calls:
            item["next_calls"] = [call.to_json() for call in gap.calls]
        if gap.subject:
            item["subject"] = gap.subject
        gaps.append(item)
    gaps += [{"description": failure, "critical": False} for failure in failures]
    return {"contract": CONTRACT, "claims": claims, "evidence_gaps": gaps}


def _carried(payload: JsonObject) -> list[JsonObject]:
    """An evidence retry's earlier verified claims, to state again with the new ones (their bindings stand)."""
    raw = payload.get("earlier_claims")
    if not isinstance(raw, list):
        return []
    return [c for c in raw if isinstance(c, dict) and isinstance(c.get("claim_id"), str)]


def reads_namespace(payload: JsonObject, tool: str, namespace: str) -> bool:
    """Whether ``tool`` may read ``namespace``: its schema's namespace enum holds it, or it has no enum."""
    raw = payload.get("tools")
    for spec in raw if isinstance(raw, list) else []:
        if not isinstance(spec, dict) or spec.get("name") != tool:
            continue
        schema = spec.get("input_schema")
        properties = schema.get("properties") if isinstance(schema, dict) else None
        param = properties.get("namespace") if isinstance(properties, dict) else None
        allowed = param.get("enum") if isinstance(param, dict) else None
        return not isinstance(allowed, list) or namespace in allowed
    return False


def _tool_names(payload: JsonObject) -> list[str]:
    raw = payload.get("tools")
    return [str(t["name"]) for t in raw if isinstance(t, dict) and "name" in t] if isinstance(raw, list) else []


def _evidence_text(
    observations: list[Observation],
    subjects: Sequence[str],
    question: object,
    failures: list[str],
    carried: list[JsonObject],
) -> str:
    assessment = assess(observations, subjects=subjects, question=question if isinstance(question, str) else "")
    return json.dumps(evidence_json(assessment, failures, carried), ensure_ascii=False)


class HeuristicExecutor:
    async def run(self, request: AgentRequest) -> AgentReply:
        tools = request.tools
        if tools is None:
            raise AgentNonRetryableError("the executor needs the run's tools")
        payload = load_input(request.input_bytes, "executor")
        question = payload.get("question")
        subjects = question_subjects(question if isinstance(question, str) else "")
        observations: list[Observation] = []
        failures: list[str] = []

        async def call_all(first: int, calls: list[tuple[str, JsonObject]]) -> None:
            # The calls of one step are independent: run together, their results read in plan order.
            results = await tools.call_many(calls)
            for index, ((tool_name, arguments), result) in enumerate(zip(calls, results, strict=True), first):
                if result.status in _USABLE and isinstance(result.output, dict):
                    observations.append(Observation(index, tool_name, arguments, result.invocation_id, result.output))
                else:
                    error = (result.error or "no JSON object output")[:_MAX_ERROR]
                    failures.append(f"{tool_name} {json.dumps(arguments, sort_keys=True)} gave no output: {error}")

        steps = plan_steps(payload)
        await call_all(0, [(step.tool_name, step.arguments) for step in steps])
        node_events = reads_namespace(payload, EVENTS, NODE_EVENTS_NAMESPACE)
        # The analyses are CPU work: off the event loop, so health checks and other calls answer while they run.
        follow_ups = await asyncio.to_thread(
            follow_up_calls, observations, subjects, _tool_names(payload), node_events=node_events
        )
        await call_all(len(steps), list(follow_ups))
        carried = _carried(payload)
        # An evidence retry's calls follow what the first cycle found about the question's workloads: that
        # they do not name them again is no sign that there is no data about them.
        text = await asyncio.to_thread(
            _evidence_text, observations, () if carried else subjects, question, failures, carried
        )
        return AgentReply(text=text, model=MODEL, extra={"tool_calls": len(observations) + len(failures)})
