"""What a run's sources gave it: which failed (where, and their own error) and whether the run saw nothing at all.

A run that could see nothing must say so, not conclude: each failing source is named on the answer's first line
and in ``DiagnosisRun.source_failures``, and a run whose calls all failed or held nothing, or whose sources
failed while it confirmed nothing, is ``blind`` (``diagnosis ask`` exits 3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from google.protobuf.json_format import MessageToDict

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.conversions import JsonValue
from diagnosis_server.time_window import describe_proto

FAILED = frozenset({contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, contracts_pb2.TOOL_INVOCATION_STATUS_TIMEOUT})
USABLE = frozenset({contracts_pb2.TOOL_INVOCATION_STATUS_OK, contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED})
MAX_MESSAGE = 300
# An upstream that answered "no such object" (HTTP 404, Kubernetes' NotFound) answered: its source did not fail.
_NOT_FOUND = re.compile(r"\b404\b|\bNotFound\b|\bnot found\b")


def source_failed(invocation: contracts_pb2.ToolInvocation) -> bool:
    """Whether a call failed at its source (could not reach it, timed out, was refused, an upstream error), not
    merely asked for something the source does not hold."""
    return invocation.status in FAILED and not _NOT_FOUND.search(invocation.error)


def _source_of(tool_name: str) -> tuple[str, str]:
    """(kind, name) of the source a tool belongs to: ``prometheus.query`` -> prometheus, ``mcp.grafana.x`` ->
    mcp grafana; a built-in or recorded tool is its own source (``logs.search`` -> logs)."""
    head, _, rest = tool_name.partition(".")
    if head == "mcp":
        return "mcp", rest.partition(".")[0]
    return head, head


def _endpoints(context: JsonValue) -> dict[tuple[str, str], str]:
    sources = context.get("sources") if isinstance(context, dict) else None
    out: dict[tuple[str, str], str] = {}
    for item in sources if isinstance(sources, list) else []:
        if isinstance(item, dict) and isinstance(item.get("kind"), str):
            kind, name, endpoint = str(item["kind"]), str(item.get("name", "")), item.get("endpoint")
            key = (kind, name if kind == "mcp" else kind)
            out[key] = endpoint if isinstance(endpoint, str) else ""
    return out


def source_failures(
    invocations: Iterable[contracts_pb2.ToolInvocation], context: JsonValue
) -> list[run_pb2.SourceFailure]:
    """One entry per configured source (the run context's ``sources``) with a failed call, in the order they first
    failed: where it is and its first error as it said it."""
    endpoints = _endpoints(context)
    by_source: dict[tuple[str, str], run_pb2.SourceFailure] = {}
    for invocation in invocations:
        if not source_failed(invocation):
            continue
        kind, name = _source_of(invocation.tool_name)
        if (kind, name) not in endpoints:
            continue  # not a configured source (a recorded pack's refusal of a query it cannot answer)
        failure = by_source.get((kind, name))
        if failure is None:
            label = f"mcp:{name}" if kind == "mcp" else kind
            message = invocation.error or contracts_pb2.ToolInvocationStatus.Name(invocation.status)
            failure = run_pb2.SourceFailure(
                source=label, endpoint=endpoints[(kind, name)], message=" ".join(message.split())[:MAX_MESSAGE]
            )
            by_source[(kind, name)] = failure
        if invocation.tool_name not in failure.tool_names:
            failure.tool_names.append(invocation.tool_name)
        failure.failed_calls += 1
    return list(by_source.values())


def holds_data(value: JsonValue) -> bool:
    """Whether an output holds anything: a listing with no item (``items: []``, ``result: []``, ``lines: []``)
    holds nothing; an output without any list is taken to hold what it says."""
    lists: list[list[JsonValue]] = []

    def walk(node: JsonValue) -> None:
        if isinstance(node, list):
            lists.append(node)
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for item in node.values():
                walk(item)

    walk(value)
    return not lists or any(lists)


def _held(invocation: contracts_pb2.ToolInvocation) -> bool:
    if invocation.status not in USABLE:
        return False
    output: JsonValue = MessageToDict(invocation.output) if invocation.HasField("output") else {}
    return holds_data(output)


_KSM_QUERY = re.compile(r"^\s*kube_[a-z_]+")


def absences(invocations: Sequence[contracts_pb2.ToolInvocation], context: JsonValue) -> list[str]:
    """What a configured Prometheus does not hold that the run looked for: kube-state-metrics, when every
    ``kube_*`` query answered and none returned a series."""
    if ("prometheus", "prometheus") not in _endpoints(context):
        return []
    asked = [
        i
        for i in invocations
        if i.tool_name.startswith("prometheus.") and _KSM_QUERY.match(str(MessageToDict(i.arguments).get("query", "")))
    ]
    if not asked or not all(i.status in USABLE for i in asked) or any(_held(i) for i in asked):
        return []
    return [f"No kube-state-metrics series in this Prometheus: {len(asked)} kube_* queries returned none."]


def failure_line(failures: Sequence[run_pb2.SourceFailure]) -> str:
    """The answer's first line when sources failed: each source, where it is, and its own error."""
    parts = []
    for failure in failures:
        where = f" at {failure.endpoint}" if failure.endpoint else ""
        parts.append(f"{failure.source}{where} failed ({failure.failed_calls} call(s)): {failure.message}")
    return "Sources that failed: " + "; ".join(parts)


def report_sources(
    done: run_pb2.DiagnosisRun, invocations: Sequence[contracts_pb2.ToolInvocation], context: JsonValue
) -> None:
    """Record on the finished run which sources failed and whether it was blind; lead its answer with them."""
    failures = source_failures(invocations, context)
    del done.source_failures[:]
    done.source_failures.extend(failures)
    answer = done.answer
    confirmed = bool(answer.confirmed_facts) or answer.HasField("likely_cause")
    nothing_held = not any(_held(i) for i in invocations)
    done.blind = done.status == run_pb2.RUN_STATUS_SUCCESS and (nothing_held or (bool(failures) and not confirmed))
    lines = []
    if failures:
        lines.append(failure_line(failures))
    if done.blind and nothing_held:
        count = len(invocations)
        lines.append(
            f"The sources held nothing for this question: {count} call(s), none returned data; "
            "this answer rests on no observation."
            if count
            else "No source was called: this answer rests on no observation."
        )
    lines += absences(invocations, context)
    if done.HasField("time_window"):
        lines.append(describe_proto(done.time_window))
    if lines and done.answer_text:
        done.answer_text = "\n".join(lines) + "\n\n" + done.answer_text
