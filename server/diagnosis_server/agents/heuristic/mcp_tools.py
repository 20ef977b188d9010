"""MCP tools the operator mapped (the rules file's ``mcp`` tables): the calls the Planner makes of them, and how the
Executor reads their outputs with the analyzers of the source whose shape they have."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from diagnosis_server.agents.heuristic.analyzers.rules import McpRule, Rules
from diagnosis_server.conversions import JsonObject, JsonValue

_PER_WORKLOAD = frozenset({"logs", "metrics"})


def _filled(template: str, values: Mapping[str, str]) -> str | None:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError):
        return None


def mcp_steps(
    rules: Rules,
    tools: Mapping[str, JsonObject],
    workloads: Sequence[str],
    namespace: str,
    question: str,
    window: tuple[str, str] | None,
) -> list[tuple[str, JsonObject, str]]:
    """(tool, arguments, purpose) of each mapped MCP tool the run has: per workload for logs and metrics."""
    start, end = window or ("", "")
    steps: list[tuple[str, JsonObject, str]] = []
    for rule in rules.mcp:
        if rule.tool not in tools:
            continue
        targets = list(workloads) if rule.answers in _PER_WORKLOAD and workloads else [""]
        for workload in targets:
            values = {"workload": workload, "namespace": namespace, "start": start, "end": end, "question": question}
            arguments: JsonObject = {}
            for key, template in rule.arguments.items():
                value = _filled(template, values)
                if value is None:
                    break
                arguments[key] = value
            else:
                what = f"{workload}'s {rule.answers}" if workload else rule.answers
                steps.append((rule.tool, arguments, f"{what} (mapped MCP tool)"))
    return steps


def _shape(output: JsonValue) -> str:
    """The source whose answer an output's shape is: ``loki``, ``prometheus``, ``events`` or ''."""
    if not isinstance(output, dict):
        return ""
    data = output.get("data")
    if isinstance(data, dict) and isinstance(data.get("result"), list):
        kind = data.get("resultType")
        return "loki" if kind == "streams" else "prometheus" if kind in ("matrix", "vector") else ""
    items = output.get("items")
    if isinstance(items, list) and all(isinstance(i, dict) and "involvedObject" in i for i in items) and items:
        return "events"
    return ""


def read_as(rule: McpRule | None, output: JsonValue) -> str:
    """The live tool whose analyzers read a mapped MCP tool's output (its shape agreeing with what it answers),
    or '' (read as itself)."""
    if rule is None:
        return ""
    shape = _shape(output)
    if rule.answers == "logs" and shape == "loki":
        return "loki.query_range"
    if rule.answers == "metrics" and shape == "prometheus":
        data = output.get("data") if isinstance(output, dict) else None
        ranged = isinstance(data, dict) and data.get("resultType") == "matrix"
        return "prometheus.query_range" if ranged else "prometheus.query"
    if rule.answers == "events" and shape == "events":
        return "kubernetes.events"
    return ""


def rule_of(rules: Rules, tool_name: str) -> McpRule | None:
    return next((rule for rule in rules.mcp if rule.tool == tool_name), None)
