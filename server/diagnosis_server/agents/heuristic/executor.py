"""The heuristic Executor: runs the plan through the run's tool runner, then states what the outputs show.

It reads only its input (the plan) and the outputs of the calls it makes; it keeps nothing between
calls. Its only output is executor_evidence_v2: claims bound by JSON Pointer to this cycle's recorded
invocations, with matched texts copied verbatim, and evidence gaps; never a summary or an answer.
"""

from __future__ import annotations

import json

from diagnosis_server.agents.base import AgentNonRetryableError, AgentReply, AgentRequest
from diagnosis_server.agents.heuristic.diagnosis import Assessment, assess
from diagnosis_server.agents.heuristic.inputs import load_input, plan_steps
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.conversions import JsonObject, JsonValue

CONTRACT = "executor_evidence_v2"
MODEL = "heuristic"
_MAX_ERROR = 160


def evidence_json(assessment: Assessment, failures: list[str]) -> JsonObject:
    claims: list[JsonValue] = []
    for number, claim in enumerate(assessment.claims, start=1):
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
        gaps.append(item)
    gaps += [{"description": failure, "critical": False} for failure in failures]
    return {"contract": CONTRACT, "claims": claims, "evidence_gaps": gaps}


class HeuristicExecutor:
    async def run(self, request: AgentRequest) -> AgentReply:
        if request.tools is None:
            raise AgentNonRetryableError("the executor needs the run's tools")
        payload = load_input(request.input_bytes, "executor")
        observations: list[Observation] = []
        failures: list[str] = []
        for index, step in enumerate(plan_steps(payload)):
            result = await request.tools.call(step.tool_name, step.arguments)
            if result.ok and isinstance(result.output, dict):
                observations.append(
                    Observation(index, step.tool_name, step.arguments, result.invocation_id, result.output)
                )
            else:
                error = (result.error or "no JSON object output")[:_MAX_ERROR]
                failures.append(
                    f"{step.tool_name} {json.dumps(step.arguments, sort_keys=True)} gave no output: {error}"
                )
        assessment = assess(observations)
        text = json.dumps(evidence_json(assessment, failures), ensure_ascii=False)
        return AgentReply(text=text, model=MODEL, extra={"tool_calls": len(observations) + len(failures)})
