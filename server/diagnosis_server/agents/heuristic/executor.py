"""The heuristic Executor: runs the plan through the run's tool runner, then states what the outputs show.

It reads only its input (the plan) and the outputs of the calls it makes; it keeps nothing between
calls. Its only output is executor_evidence_v2: claims bound by JSON Pointer to this cycle's recorded
invocations, with matched texts copied verbatim, and evidence gaps; never a summary or an answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import AgentNonRetryableError, AgentReply, AgentRequest
from diagnosis_server.agents.heuristic.addresses import dependencies
from diagnosis_server.agents.heuristic.analyzers.reads import blamed_workloads
from diagnosis_server.agents.heuristic.analyzers.rules import Rules, current_rules
from diagnosis_server.agents.heuristic.diagnosis import Assessment, assess
from diagnosis_server.agents.heuristic.follow_ups import (
    EVENTS,
    NODE_EVENTS_NAMESPACE,
    caller_log_calls,
    cluster_dns_calls,
    dependency_log_calls,
    follow_up_calls,
    quiet_log_calls,
)
from diagnosis_server.agents.heuristic.gaps import for_run_tools, live_key
from diagnosis_server.agents.heuristic.inputs import load_input, plan_steps
from diagnosis_server.agents.heuristic.live_plan import question_subjects
from diagnosis_server.agents.heuristic.mcp_tools import read_as, rule_of
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.agents.heuristic.prometheus_discovery import discovered_calls
from diagnosis_server.agents.heuristic.slow_chain import SLOW_HOPS, slow_dependency_calls
from diagnosis_server.agents.heuristic.subjects import named_workloads, resolve_subjects
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.offload import off_loop
from diagnosis_server.tools.runner import USABLE, ToolCallResult

CONTRACT = "executor_evidence_v2"
MODEL = "heuristic"
_MAX_ERROR = 160
# Waves of dependency logs after the callers' (``follow_ups.dependency_log_calls``).
DEPENDENCY_HOPS = 2
# An answer that the object asked for does not exist (HTTP 404, Kubernetes' NotFound): the source answered.
_NOT_FOUND = re.compile(r"\b404\b|\bNotFound\b|\bnot found\b")


def evidence_json(
    assessment: Assessment,
    failures: list[str],
    carried: list[JsonObject] | None = None,
    tools: Collection[str] | None = None,
    made: Collection[str] = (),
) -> JsonObject:
    """The executor_evidence_v2 output: carried claims of an earlier cycle first (their ids kept), then the new
    ones (ids that do not collide, statements not already carried). Given the run's tools, a gap's calls are
    named in them (``gaps.for_run_tools``)."""
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
        calls = gap.calls if tools is None else for_run_tools(gap.calls, tools, made)
        if calls:
            item["next_calls"] = [call.to_json() for call in calls]
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


def readable_namespaces(payload: JsonObject) -> list[str]:
    """The namespaces the pods tool names in its schema (the environment's): never a workload subject."""
    raw = payload.get("tools")
    for spec in raw if isinstance(raw, list) else []:
        if not isinstance(spec, dict) or spec.get("name") != "kubernetes.pods":
            continue
        schema = spec.get("input_schema")
        properties = schema.get("properties") if isinstance(schema, dict) else None
        param = properties.get("namespace") if isinstance(properties, dict) else None
        allowed = param.get("enum") if isinstance(param, dict) else None
        return [n for n in allowed if isinstance(n, str)] if isinstance(allowed, list) else []
    return []


def _observation(step: int, arguments: JsonObject, result: ToolCallResult, rules: Rules) -> Observation | None:
    """A call with a JSON object output as an observation (a mapped MCP tool answering in a source's shape is read
    by that source's analyzers); None for a call without one."""
    if result.status not in USABLE or not isinstance(result.output, dict):
        return None
    tool_name = result.tool_name
    alias = read_as(rule_of(rules, tool_name), result.output) if tool_name.startswith("mcp.") else ""
    return Observation(
        step,
        alias or tool_name,
        arguments,
        result.invocation_id,
        result.output,
        truncated=result.status == contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED,
        bound_as=tool_name if alias else "",
    )


def _observed(results: Sequence[ToolCallResult], rules: Rules) -> list[Observation]:
    """Earlier cycles' calls as observations, before this cycle's (negative steps, in the order recorded)."""
    made = (_observation(step, r.arguments or {}, r, rules) for step, r in enumerate(results, -len(results)))
    return [observation for observation in made if observation is not None]


def _tool_names(payload: JsonObject) -> list[str]:
    raw = payload.get("tools")
    return [str(t["name"]) for t in raw if isinstance(t, dict) and "name" in t] if isinstance(raw, list) else []


def _workloads(observations: list[Observation], subjects: Sequence[str], question: str) -> list[str]:
    """The question's pods, releases and controllers as the workloads the listings know them by."""
    return list(
        dict.fromkeys([*resolve_subjects(subjects, observations), *subjects, *named_workloads(question, observations)])
    )


def _follow_ups(
    observations: list[Observation],
    subjects: Sequence[str],
    question: str,
    tools: list[str],
    *,
    node_events: bool,
) -> list[tuple[str, JsonObject]]:
    """The follow-up calls of what the plan's outputs show, for the question's workloads."""
    workloads = _workloads(observations, subjects, question)
    return list(follow_up_calls(observations, workloads, tools, node_events=node_events))


def _quiet(
    observations: list[Observation], subjects: Sequence[str], question: str, tools: list[str]
) -> list[tuple[str, JsonObject]]:
    """Logs no read so far shows to matter: every pod's when the question names no workload and nothing is
    wrong; the callers' of a named workload whose own log is quiet."""
    workloads = _workloads(observations, subjects, question)
    known = dependencies(observations)
    callers = {w: known.callers(w) for w in workloads}
    return [
        *quiet_log_calls(observations, workloads, tools),
        *caller_log_calls(observations, workloads, callers, tools),
    ]


def _evidence_text(
    observations: list[Observation],
    subjects: Sequence[str],
    question: object,
    failures: list[str],
    carried: list[JsonObject],
    *,
    failed_calls: int,
    tools: list[str],
) -> str:
    # An evidence retry's calls follow what the first cycle found about the question's workloads: that they do
    # not name them again is no sign that there is no data about them.
    assessment = assess(
        observations,
        subjects=() if carried else resolve_subjects(subjects, observations),
        question=question if isinstance(question, str) else "",
        failed_calls=failed_calls,
    )
    made = {live_key(o.tool_name, o.arguments) for o in observations}
    return json.dumps(evidence_json(assessment, failures, carried, tools=tools, made=made), ensure_ascii=False)


class HeuristicExecutor:
    async def run(self, request: AgentRequest) -> AgentReply:
        tools = request.tools
        if tools is None:
            raise AgentNonRetryableError("the executor needs the run's tools")
        payload = load_input(request.input_bytes, "executor")
        question = payload.get("question")
        text = question if isinstance(question, str) else ""
        subjects = question_subjects(text, readable_namespaces(payload))
        observations: list[Observation] = []
        failures: list[str] = []
        rules = current_rules()
        # Calls whose source failed (not those that asked for an object it does not hold): while any did, no
        # conclusion that nothing is wrong.
        source_failures = 0
        # Previous-container log reads that failed (the container never terminated in this pod's life).
        no_previous: list[JsonObject] = []

        async def call_all(first: int, calls: list[tuple[str, JsonObject]]) -> None:
            # The calls of one step are independent: run together, their results read in plan order.
            nonlocal source_failures
            results = await tools.call_many(calls)
            for index, ((tool_name, arguments), result) in enumerate(zip(calls, results, strict=True), first):
                observation = _observation(index, arguments, result, rules)
                if observation is not None:
                    observations.append(observation)
                else:
                    if tool_name == "kubernetes.pod_logs" and arguments.get("previous"):
                        no_previous.append(arguments)
                    error = (result.error or "no JSON object output")[:_MAX_ERROR]
                    source_failures += not _NOT_FOUND.search(error)
                    failures.append(f"{tool_name} {json.dumps(arguments, sort_keys=True)} gave no output: {error}")

        steps = plan_steps(payload)
        await call_all(0, [(step.tool_name, step.arguments) for step in steps])
        node_events = reads_namespace(payload, EVENTS, NODE_EVENTS_NAMESPACE)
        # The analyses are CPU work: off the event loop, so health checks and other calls answer while they run.
        follow_ups = await off_loop(
            _follow_ups,
            observations,
            subjects,
            text,
            _tool_names(payload),
            node_events=node_events,
        )
        # The RED series of what the Prometheus series listings show for the question's workloads.
        follow_ups = [*follow_ups, *discovered_calls(observations, _tool_names(payload))]
        await call_all(len(steps), list(follow_ups))
        made = len(steps) + len(follow_ups)
        # A pod whose previous container's log cannot be read: its current one (``kubectl logs`` without
        # ``--previous``), which says what it meets now.
        current = [("kubernetes.pod_logs", {k: v for k, v in a.items() if k != "previous"}) for a in no_previous]
        await call_all(made, current)
        made += len(current)
        # Nothing wrong seen and no workload named: every running pod's own log.
        quiet = await off_loop(_quiet, observations, subjects, text, _tool_names(payload))
        await call_all(made, quiet)
        made += len(quiet)
        # The dependencies the callers' error lines blame: their own logs, two hops deep (frontend -> checkout ->
        # shipping).
        for _ in range(DEPENDENCY_HOPS):
            blamed = await off_loop(blamed_workloads, observations, subjects)
            calls = await off_loop(dependency_log_calls, observations, blamed, _tool_names(payload))
            await call_all(made, calls)
            made += len(calls)
            if not calls:
                break
        # A latency with no failure anywhere: what the slow workloads call, down the topology.
        for _ in range(2 * SLOW_HOPS):
            calls = await off_loop(slow_dependency_calls, observations, _tool_names(payload))
            await call_all(made, calls)
            made += len(calls)
            if not calls:
                break
        # Names the callers could not resolve: the cluster DNS server's own logs, read after the callers' logs.
        dns = await off_loop(cluster_dns_calls, observations, _tool_names(payload))
        await call_all(made, dns)
        carried = _carried(payload)
        if carried:
            # An evidence retry reads what the first cycle read too: a host its callers fail on is named by an
            # Ingress that cycle listed. (Its claims stand; only what they did not state is added.)
            observations = [*_observed(await tools.earlier(), rules), *observations]
        text = await off_loop(
            _evidence_text,
            observations,
            subjects,
            question,
            failures,
            carried,
            failed_calls=source_failures,
            tools=_tool_names(payload),
        )
        return AgentReply(text=text, model=MODEL, extra={"tool_calls": len(observations) + len(failures)})
