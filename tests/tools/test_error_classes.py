"""The class of a failed tool call (the `diagnosis_source_errors_total` label), read from the errors sources write."""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.tools.error_classes import error_class, source_of

ERROR = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR


def _failed(error: str, status: int = ERROR) -> contracts_pb2.ToolInvocation:
    return contracts_pb2.ToolInvocation(tool_name="prometheus.query", status=status, error=error)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ("prometheus.query: no answer from http://127.0.0.1:9090 in time", "timeout"),
        ("prometheus.query: cannot reach http://127.0.0.1:9090 (connection refused)", "unreachable"),
        ("kubernetes.pods: cannot reach the API server 127.0.0.1:6443 (MaxRetryError)", "unreachable"),
        ("MCP server 'tools' cannot be reached: the process exited with status 1", "unreachable"),
        ("loki: HTTP 429: Ingestion rate limit exceeded", "rate_limited"),
        ('kubernetes.pods: 403 Forbidden: pods is forbidden: User "system:anonymous" cannot list', "unauthorized"),
        ("prometheus.query: HTTP 401: Unauthorized", "unauthorized"),
        ('kubernetes.pod_logs: 404 NotFound: pods "checkout-api-7f9c" not found', "not_found"),
        ("prometheus.query: HTTP 503: Service Unavailable", "server_error"),
        ("kubernetes.events: 500 InternalError: etcdserver: request timed out", "timeout"),
        ("kubernetes.events: 500 InternalError: etcd cluster is unavailable", "server_error"),
        ("mcp.tools.alert_rules: the MCP server failed the call (BrokenResourceError)", "server_error"),
        ("loki.query_range: HTTP 400: parse error at line 1, col 5: syntax error", "client_error"),
        ("prometheus.query: HTTP 200: not a Prometheus API answer", "bad_answer"),
        ("kubernetes.pods: the API server's answer is not JSON", "bad_answer"),
        ("output is nested deeper than 32", "bad_answer"),
        ("mcp.tools.alert_rules: the environment is closed", "closed"),
        ("loki.query_range: the stream selector needs at least one matcher", "rejected"),
        ("metrics.query: unknown service 'cart'; services in this scenario: checkout-api", "rejected"),
    ],
)
def test_a_failed_call_is_classed_by_what_its_source_said(error: str, expected: str) -> None:
    assert error_class(_failed(error)) == expected


def test_calls_that_answered_or_never_ran_are_no_source_error() -> None:
    assert error_class(_failed("", contracts_pb2.TOOL_INVOCATION_STATUS_OK)) is None
    assert error_class(_failed("output trimmed: 3 of 9 items", contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED)) is None
    assert error_class(_failed("not on the allow-list", contracts_pb2.TOOL_INVOCATION_STATUS_BLOCKED)) is None
    assert error_class(_failed("no output within 10s", contracts_pb2.TOOL_INVOCATION_STATUS_TIMEOUT)) == "timeout"


def test_the_source_is_the_tool_names_first_part_and_an_mcp_server_by_name() -> None:
    assert source_of("prometheus.query_range") == "prometheus"
    assert source_of("kubernetes.pods") == "kubernetes"
    assert source_of("mcp.tools.alert_rules") == "mcp.tools"
    assert source_of("k8s.events") == "k8s"
    assert source_of("") == "unknown"
