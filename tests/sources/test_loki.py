"""loki.query_range against a loopback server speaking Loki's HTTP API from recorded answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import from_value

from .fake_http import FakeUpstream, Request, Response, json_response, text_response
from .helpers import call, opened

LOKI_TOKEN = "loki-bearer-7c1e9a0b"
STREAMS = {
    "status": "success",
    "data": {
        "resultType": "streams",
        "result": [
            {
                "stream": {"namespace": "shop", "app": "checkout-api", "pod": "checkout-api-7f9c6d8b5-tr6zn"},
                "values": [
                    ["1732888296001000000", "ERROR java.lang.OutOfMemoryError: Java heap space"],
                    ["1732888291002000000", "DEBUG connecting with password=hunter2-prod to orders-db"],
                ],
            }
        ],
        "stats": {"summary": {"bytesProcessedPerSecond": 120394, "totalEntriesReturned": 2, "execTime": 0.012}},
    },
}


def _loki(request: Request) -> Response:
    if (
        request.headers.get("x-scope-orgid") != "team-a"
        or request.headers.get("authorization") != f"Bearer {LOKI_TOKEN}"
    ):
        return text_response(401, "no org id")
    if request.path != "/loki/api/v1/query_range":
        return text_response(404, "404 page not found")
    if "|=" not in request.query["query"] and "{" not in request.query["query"]:
        return text_response(400, "parse error at line 1, col 1: syntax error: unexpected IDENTIFIER")
    if request.query["query"] == "{app=~}":
        return text_response(400, "parse error at line 1, col 7: syntax error: unexpected }")
    if request.query["query"] == '{app="flaky"}':
        return text_response(503, "too many outstanding requests")
    return json_response(200, STREAMS)


@pytest.fixture
def loki() -> Iterator[FakeUpstream]:
    upstream = FakeUpstream(_loki)
    yield upstream
    upstream.close()


def _env(loki: FakeUpstream, tmp_path: Path) -> str:
    (tmp_path / "loki-token").write_text(LOKI_TOKEN)
    return (
        f'[environments.prod]\nloki = {{ url = "{loki.url}", tenant = "team-a", bearer_token_file = "loki-token" }}\n'
    )


async def test_query_range_records_loki_body_as_returned(loki: FakeUpstream, tmp_path: Path) -> None:
    async with opened(tmp_path, _env(loki, tmp_path)) as registry:
        invocation = await call(
            registry.tools_for("prod").toolset,
            "loki.query_range",
            {
                "query": '{app="checkout-api"} |= "Error"',
                "start": "2024-11-29T13:00:00Z",
                "end": "2024-11-29T14:00:00Z",
                "limit": 50,
                "direction": "BACKWARD",
            },
        )
    assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK, invocation.error
    sent = loki.requests[-1]
    assert sent.query["start"] == "1732885200000000000" and sent.query["end"] == "1732888800000000000"
    assert sent.query["limit"] == "50" and sent.query["direction"] == "backward"
    assert "traceparent" not in sent.headers  # no OpenTelemetry SDK in the tests: inject is a no-op
    body: Any = from_value(invocation.output)
    assert body["data"]["stats"] == STREAMS["data"]["stats"]  # type: ignore[index]
    values = body["data"]["result"][0]["values"]
    assert values[0] == ["1732888296001000000", "ERROR java.lang.OutOfMemoryError: Java heap space"]
    assert values[1][1] == "DEBUG connecting with password=[REDACTED] to orders-db"
    assert b"hunter2-prod" not in invocation.SerializeToString()


async def test_loki_errors_are_recorded_with_its_text(loki: FakeUpstream, tmp_path: Path) -> None:
    async with opened(tmp_path, _env(loki, tmp_path)) as registry:
        toolset = registry.tools_for("prod").toolset
        bad = await call(toolset, "loki.query_range", {"query": "{app=~}"})
        busy = await call(toolset, "loki.query_range", {"query": '{app="flaky"}'})
    assert bad.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
    assert bad.error == "loki.query_range: HTTP 400: parse error at line 1, col 7: syntax error: unexpected }"
    # A 503 is retried (three attempts in all), then recorded with Loki's text.
    assert [r.query["query"] for r in loki.requests].count('{app="flaky"}') == 3
    assert busy.error == "loki.query_range: HTTP 503: too many outstanding requests"
