"""The heuristic Planner: the calls an operator makes first, or, in an evidence retry, only what the gaps name.

FULL mode, in priority order, at most ``MAX_STEPS`` calls:

1. each target service (named in the question, else the entry services): its description
   (topology.dependencies), its warnings and errors, its error rate and latency, its Kubernetes events;
   and the window's deploys;
2. the targets' own health metrics (memory, restarts, CPU, disk, certificates, replicas, connection
   pools, upstreams) and their 5xx access-log lines;
3. other services the question names: their warnings, events and metrics;
4. a shallow look at the targets' direct dependencies (headline metrics; an http dependency's warnings)
   and at their dependencies in turn (headline metrics).

EVIDENCE_GAP_ONLY mode plans exactly the calls the gaps name (their structured ``next_calls``, or a
``(next: ...)`` part of a description, ``gaps.parse_next``); a metrics.query without a metric reads the
service's metrics from the context's catalog.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from diagnosis_server.agents.base import AgentReply, AgentRequest
from diagnosis_server.agents.heuristic import signals as sig
from diagnosis_server.agents.heuristic.analyzers.rules import current_rules
from diagnosis_server.agents.heuristic.cluster_plan import cluster_steps
from diagnosis_server.agents.heuristic.gaps import NextCall, arguments_json, for_run_tools, parse_next
from diagnosis_server.agents.heuristic.inputs import load_input
from diagnosis_server.agents.heuristic.live_plan import (
    live_steps,
    live_window,
    namespaces_of,
    question_namespaces,
    question_subjects,
)
from diagnosis_server.agents.heuristic.mcp_tools import mcp_steps
from diagnosis_server.agents.heuristic.targets import ServiceInfo, Targets, select_targets, services_from_context
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.offload import off_loop
from diagnosis_server.protocols.planner import DEFAULT_MAX_STEPS, PlannerMode

MAX_STEPS = 16
MAX_LIVE_STEPS = 16
MODEL = "heuristic"
ACCESS_5XX_QUERY = '" 5'
# Used only when the context has no metrics catalog.
_CONVENTIONAL = {sig.ERROR: "http_requests_error_rate", sig.LATENCY: "http_request_duration_p99_ms"}
_NOT_READ = frozenset({sig.TRAFFIC, sig.CACHE, sig.OTHER})


class Plan:
    """Steps in order, without duplicates, only of tools the run offers, at most ``cap``."""

    def __init__(self, tools: Mapping[str, JsonObject], cap: int = MAX_STEPS) -> None:
        self._tools = tools
        self._cap = cap
        self._seen: set[str] = set()
        self.steps: list[JsonObject] = []

    def add(self, tool_name: str, arguments: JsonObject, purpose: str) -> None:
        if tool_name not in self._tools or len(self.steps) >= self._cap:
            return
        key = tool_name + json.dumps(arguments, sort_keys=True)
        if key in self._seen:
            return
        self._seen.add(key)
        self.steps.append({"tool_name": tool_name, "arguments": arguments, "purpose": purpose})

    @property
    def full(self) -> bool:
        return len(self.steps) >= self._cap

    def extend(self, steps: Iterable[tuple[str, JsonObject, str]], *, cap: int) -> None:
        """Add steps past the first cap, up to ``cap`` in all."""
        self._cap = max(self._cap, cap)
        for tool_name, arguments, purpose in steps:
            self.add(tool_name, arguments, purpose)


def metrics_of(service: ServiceInfo, families: Iterable[str]) -> list[str]:
    """The service's metrics of these families, in the families' order (names sorted within one)."""
    wanted = list(families)
    if service.metrics is None:
        return [_CONVENTIONAL[f] for f in wanted if f in _CONVENTIONAL and service.kind in ("http", "")]
    ranked = sorted(
        (wanted.index(family), name) for name in service.metrics if (family := sig.metric_family(name)) in wanted
    )
    return [name for _, name in ranked]


def _readable_metrics(service: ServiceInfo) -> list[str]:
    if service.metrics is None:
        return metrics_of(service, (sig.ERROR, sig.LATENCY))
    families = (sig.ERROR, sig.LATENCY, *sig.HEALTH_FAMILIES, sig.LAG)
    return [m for m in metrics_of(service, families) if sig.metric_family(m) not in _NOT_READ]


def _read_metrics(plan: Plan, service: ServiceInfo, names: Iterable[str], purpose: str) -> None:
    for name in names:
        plan.add("metrics.query", {"metric": name, "service": service.name}, purpose)


def full_plan(question: str, tools: Mapping[str, JsonObject], services: Sequence[ServiceInfo]) -> tuple[Plan, Targets]:
    plan = Plan(tools)
    by_name = {s.name: s for s in services}
    targets = select_targets(question, services)
    for target in targets.primary:
        name = target.name
        plan.add("topology.dependencies", {"service": name}, f"what {name} calls, what calls it, its metrics")
        plan.add("logs.search", {"service": name, "level": "WARN"}, f"{name}'s warnings and errors")
        _read_metrics(plan, target, metrics_of(target, (sig.ERROR, sig.LATENCY)), f"{name}'s errors and latency")
        plan.add("k8s.events", {"service": name}, f"what Kubernetes reports about {name}'s pods")
    plan.add("deploys.list", {}, "deploys in the window, to line up with any onset")
    for target in targets.primary:
        _read_metrics(plan, target, metrics_of(target, sig.HEALTH_FAMILIES), f"{target.name}'s saturation and health")
        if target.kind in ("http", ""):
            plan.add(
                "logs.search",
                {"service": target.name, "query": ACCESS_5XX_QUERY},
                f"{target.name}'s 5xx access-log lines",
            )
    for other in targets.secondary:
        plan.add("logs.search", {"service": other.name, "level": "WARN"}, f"{other.name}'s warnings and errors")
        plan.add("k8s.events", {"service": other.name}, f"what Kubernetes reports about {other.name}")
        _read_metrics(plan, other, _readable_metrics(other), f"{other.name}'s health")
    looked = {s.name for s in (*targets.primary, *targets.secondary)}
    level: list[ServiceInfo] = list(targets.primary)
    for depth in (1, 2):
        nxt: list[ServiceInfo] = []
        for parent in level:
            for dep_name in parent.depends_on:
                dep = by_name.get(dep_name)
                if dep is None or dep.name in looked:
                    continue
                looked.add(dep.name)
                nxt.append(dep)
                purpose = f"a first look at {dep.name}, which {parent.name} calls"
                _read_metrics(plan, dep, metrics_of(dep, sig.HEADLINE_FAMILIES), purpose)
                if depth == 1 and dep.kind == "http":
                    plan.add("logs.search", {"service": dep.name, "level": "WARN"}, purpose)
        level = nxt
    return plan, targets


def gap_plan(retry_context: JsonValue, tools: Mapping[str, JsonObject], services: Sequence[ServiceInfo]) -> Plan:
    plan = Plan(tools)
    by_name = {s.name: s for s in services}
    gaps = retry_context.get("evidence_gaps") if isinstance(retry_context, dict) else None
    items = [g for g in (gaps if isinstance(gaps, list) else []) if isinstance(g, dict)]
    descriptions = [str(g["description"]) for g in items if g.get("description")]
    named: list[NextCall] = []
    for gap in items:
        structured = gap.get("next_calls")
        calls = [c for c in map(NextCall.from_json, structured if isinstance(structured, list) else []) if c]
        description = gap.get("description")
        named += calls or (parse_next(description) if isinstance(description, str) else [])
    for call in for_run_tools(named, tools):
        tool = tools.get(call.tool_name)
        if tool is None:
            continue
        schema = tool.get("input_schema")
        arguments: JsonObject = dict(arguments_json(call, schema if isinstance(schema, dict) else None))
        service_name = arguments.get("service")
        service = by_name.get(service_name) if isinstance(service_name, str) else None
        if by_name and isinstance(service_name, str) and service is None:
            continue  # a service this system does not have
        purpose = "named by an evidence gap"
        if call.tool_name == "metrics.query" and service is not None:
            metric = arguments.get("metric")
            if metric is None:
                _read_metrics(plan, service, _readable_metrics(service), purpose)
                continue
            if service.metrics is not None and metric not in service.metrics:
                continue
        plan.add(call.tool_name, arguments, purpose)
    if not plan.steps:
        mentioned = [s for s in services if any(s.name in d for d in descriptions)]
        for service in mentioned:
            plan.add("logs.search", {"service": service.name, "level": "WARN"}, "a service an evidence gap names")
            plan.add("k8s.events", {"service": service.name}, "a service an evidence gap names")
        if not plan.steps:
            plan.add("deploys.list", {}, "the gaps name no call; recent changes are the cheapest next look")
    return plan


def live_targets(
    question: str, targets: Targets, services: Sequence[ServiceInfo], namespaces: Sequence[str] = ()
) -> list[str]:
    """The workloads the live calls look at: the services the question names, else the names it gives."""
    if targets.how != "entry services (no caller)":
        return [t.name for t in targets.primary]
    return question_subjects(question, namespaces)


def _tools(payload: JsonObject) -> dict[str, JsonObject]:
    raw = payload.get("tools")
    out: dict[str, JsonObject] = {}
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            out[str(item["name"])] = item
    return out


class HeuristicPlanner:
    async def run(self, request: AgentRequest) -> AgentReply:
        return await off_loop(plan_reply, request.input_bytes)  # CPU work: off the event loop


def plan_reply(input_bytes: bytes) -> AgentReply:
    """The Planner's reply to its input: the plan's steps and why."""
    payload = load_input(input_bytes, "planner")
    tools = _tools(payload)
    services = services_from_context(payload.get("context"))
    if payload.get("mode") == PlannerMode.EVIDENCE_GAP_ONLY:
        plan = gap_plan(payload.get("retry_context"), tools, services)
        reasoning = f"evidence retry: {len(plan.steps)} call(s) named by the gaps"
    else:
        question = payload.get("question")
        text = question if isinstance(question, str) else ""
        plan, targets = full_plan(text, tools, services)
        context = payload.get("context")
        live = live_targets(text, targets, services, namespaces_of(context))
        live_calls = live_steps(tools, context, live, question_namespaces(text))
        namespaces = namespaces_of(context)
        window = live_window(context)
        live_calls += mcp_steps(current_rules(), tools, live, namespaces[0] if namespaces else "", text, window)
        plan.extend(live_calls, cap=MAX_STEPS + MAX_LIVE_STEPS)
        plan.extend(cluster_steps(tools, context, live), cap=DEFAULT_MAX_STEPS)
        names = ", ".join(t.name for t in targets.primary) or "none"
        reasoning = f"targets {names} ({targets.how}); workloads {', '.join(live) or 'any'}; {len(plan.steps)} call(s)"
    steps: list[JsonValue] = list(plan.steps)
    return AgentReply(text=json.dumps({"steps": steps, "reasoning": reasoning}), model=MODEL)
