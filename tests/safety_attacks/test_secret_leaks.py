"""Secrets of every documented format never reach a record, a log line or an answer (issue 33 item 3, 34 item 5).

Each secret of the corpus rides in the shapes each source returns (a log line, an event message, a Prometheus
label, a Loki stream, a Kubernetes object, an MCP tool's structured answer), in a tool call's arguments and in a
tool's error; what is recorded, logged or shown holds none of them, while URLs, hosts and ordinary configuration
read as written.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import structlog

from diagnosis.v1 import contracts_pb2
from diagnosis_server.api.logging import configure_logging
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.text.normalize import display_text
from diagnosis_server.text.redaction import REDACTED, Redactor, redact_text
from diagnosis_server.tools.base import ToolError, Toolset

from ..sources.conftest import MCP_SERVER
from ..sources.fake_http import FakeUpstream, Request, Response, json_response
from ..sources.helpers import call, opened
from .corpus import CARRIED, READABLE

IDS = [name for name, _, _ in CARRIED]


@pytest.mark.parametrize(("name", "secret", "text"), CARRIED, ids=IDS)
def test_a_carried_secret_is_redacted_in_text_and_in_what_is_shown(name: str, secret: str, text: str) -> None:
    recorded = Redactor().text(text)
    assert secret not in recorded and REDACTED in recorded, recorded
    assert secret not in display_text(text)
    assert secret not in redact_text(text)


@pytest.mark.parametrize("text", READABLE)
def test_what_is_not_a_secret_reads_as_written(text: str) -> None:
    assert Redactor().text(text) == text
    assert display_text(text) == text


def _shapes(text: str, secret: str) -> dict[str, JsonValue]:
    """The secret in each source's own answer shape, as a value and (where a key names it) under a key."""
    return {
        "prometheus": {
            "status": "success",
            "data": {"resultType": "vector", "result": [{"metric": {"job": "api", "url": text}, "value": [1, "1"]}]},
        },
        "loki": {
            "status": "success",
            "data": {"resultType": "streams", "result": [{"stream": {"app": "api"}, "values": [["1", text]]}]},
        },
        "kubernetes_event": {"kind": "EventList", "items": [{"reason": "Failed", "message": text}]},
        "kubernetes_pod": {
            "kind": "Pod",
            "metadata": {"name": "api-0", "annotations": {"note": text}},
            "spec": {"containers": [{"name": "api", "env": [{"name": "DB_URL", "value": secret}]}]},
        },
        "mcp": {"content": [{"type": "text", "text": text}], "config": {"password": secret, "api_key": secret}},
    }


@pytest.mark.parametrize(("name", "secret", "text"), CARRIED, ids=IDS)
def test_no_source_shape_keeps_a_secret(name: str, secret: str, text: str) -> None:
    redactor = Redactor()
    for source, body in _shapes(text, secret).items():
        redacted = redactor.kubernetes(body) if source.startswith("kubernetes") else redactor.value(body)
        assert secret not in json.dumps(redacted), source


class _Echo:
    """A tool that answers its arguments back, or fails with a message holding them."""

    name = "echo.call"
    description = "answers its arguments"

    @property
    def input_schema(self) -> JsonObject:
        return {"type": "object"}

    async def call(self, arguments: JsonObject) -> JsonValue:
        if arguments.get("fail"):
            raise RuntimeError(f"upstream refused {arguments.get('query')}")
        if arguments.get("tool_error"):
            raise ToolError(f"bad query {arguments.get('query')}")
        return {"ok": True}


@pytest.mark.requirement("R-C-2")
@pytest.mark.parametrize(("name", "secret", "text"), CARRIED, ids=IDS)
async def test_tool_arguments_and_errors_are_recorded_without_secrets(name: str, secret: str, text: str) -> None:
    toolset = Toolset([_Echo()])
    arguments: JsonObject = {"query": text, "options": {"password": secret, "headers": [text]}}
    ok = await call(toolset, "echo.call", arguments)
    failed = await call(toolset, "echo.call", {**arguments, "fail": True})
    refused = await call(toolset, "echo.call", {**arguments, "tool_error": True})
    for invocation in (ok, failed, refused):
        assert secret.encode() not in invocation.SerializeToString(), invocation.error
    assert failed.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR and "upstream refused" in failed.error


def test_log_lines_never_carry_a_secret() -> None:
    stream = io.StringIO()
    saved = structlog.get_config()
    configure_logging("debug", stream=stream)
    try:
        log = structlog.get_logger("diagnosis_server.test")
        for name, _, text in CARRIED:
            log.warning("source_failed", source=name, error=text, details={"body": text, "items": [text]})
        try:
            raise RuntimeError(CARRIED[0][2])
        except RuntimeError:
            log.exception("tool_crashed")
    finally:
        structlog.configure(**saved)  # the suite's own: a stream bound here would outlive this test's capture
    written = stream.getvalue()
    assert written.count("source_failed") == len(CARRIED)
    for _, secret, _ in CARRIED:
        assert secret not in written


def _answering(body: Any) -> FakeUpstream:
    def respond(request: Request) -> Response:
        return json_response(200, body)

    return FakeUpstream(respond)


@pytest.mark.parametrize(("name", "secret", "text"), CARRIED[::3], ids=IDS[::3])
async def test_live_prometheus_and_loki_answers_are_recorded_without_secrets(
    tmp_path: Path, name: str, secret: str, text: str
) -> None:
    shapes = _shapes(text, secret)
    prometheus, loki = _answering(shapes["prometheus"]), _answering(shapes["loki"])
    try:
        toml = f'[environments.prod]\nprometheus = {{ url = "{prometheus.url}" }}\nloki = {{ url = "{loki.url}" }}\n'
        async with opened(tmp_path, toml) as registry:
            toolset = registry.tools_for("prod").toolset
            queried = await call(toolset, "prometheus.query", {"query": f'up{{token="{secret}"}}'})
            streamed = await call(
                toolset,
                "loki.query_range",
                {"query": '{app="api"}', "start": "2026-12-02T12:00:00Z", "end": "2026-12-02T13:00:00Z"},
            )
    finally:
        prometheus.close()
        loki.close()
    assert queried.status == streamed.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK
    for invocation in (queried, streamed):
        assert secret.encode() not in invocation.SerializeToString()


async def test_an_mcp_servers_plain_env_stays_readable_and_its_secret_env_does_not(tmp_path: Path) -> None:
    """Only what the environment marks as a secret is: a plain ``env`` value (a URL) is shown as written."""
    command = f'["{sys.executable}", "{MCP_SERVER}", "stdio"]'
    secret_file = tmp_path / "token"
    secret_file.write_text("mcp-t0ken-from-a-file")
    scrape = "http://prometheus.monitoring.svc:9090/metrics"
    plain = f'env = {{ TEST_MCP_NOTE = "{scrape}" }}\n'
    marked = f'env = {{ TEST_MCP_NOTE = {{ file = "{secret_file}" }} }}\n'
    shown: list[Any] = []
    for env in (plain, marked):
        toml = f'[environments.prod]\n[[environments.prod.mcp]]\nname = "tools"\ncommand = {command}\n{env}'
        async with opened(tmp_path, toml) as registry:
            invocation = await call(registry.tools_for("prod").toolset, "mcp.tools.show_token", {})
        shown.append(json.loads(json.dumps(dict(invocation.output.struct_value))))
    assert shown[0]["note"] == scrape  # (a value under a key that names a secret, "token", is one anyway)
    assert shown[1]["note"] == REDACTED
