"""Loki: ``loki.query_range`` over the HTTP API (``/loki/api/v1/query_range``), and its source kind
(``loki = { url = ... }`` in an environment: ``LOKI``).

The recorded output is Loki's JSON body as returned, redacted: ``{status, data: {resultType: streams,
result: [{stream: {labels}, values: [["<unix ns>", "<log line>"], ...]}], stats}}`` (a LogQL metric query
answers ``resultType: matrix``). Loki's errors are plain text; they become a ``ToolError`` with that text.
"""

from __future__ import annotations

import json
import time

import httpx2
from pydantic import Field, field_validator

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.sources.arguments import Args, Param
from diagnosis_server.sources.declared import RANGE_START, Declaration, DeclaredTool, time_range
from diagnosis_server.sources.http import create_client, get, safe_url
from diagnosis_server.sources.sections import DEFAULT_TIMEOUT_S, Seconds, TokenAuth, check_url
from diagnosis_server.sources.source import Opened, Opening, Prepared, SourceInfo, SourceKind, url_secrets
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import ToolError

QUERY_RANGE = "loki.query_range"
DEFAULT_LIMIT = 100
MAX_LIMIT = 5000

DECLARATION = Declaration(
    QUERY_RANGE,
    (
        "Run a LogQL query over a time range (Loki /loki/api/v1/query_range). Returns Loki's JSON as is: {status, "
        'data: {resultType: streams, result: [{stream: {labels}, values: [["<unix ns>", "<log line>"], ...]}], '
        'stats}}. Examples: {namespace="shop", app="checkout-api"} |= "error", {app="payments"} |~ "timeout|'
        'refused". start/end: RFC 3339, Unix seconds or now-1h (default: the last hour); limit: most lines '
        f"(default {DEFAULT_LIMIT}, max {MAX_LIMIT}); direction: backward (newest first, default) or forward."
    ),
    (
        Param("query", "string", "The LogQL query (a stream selector, optionally with line filters).", required=True),
        RANGE_START,
        Param("end", "string", "Range end (RFC 3339, Unix seconds, now). Default: now."),
        Param("limit", "integer", f"Most log lines to return (default {DEFAULT_LIMIT}).", minimum=1, maximum=MAX_LIMIT),
        Param(
            "direction",
            "string",
            "backward: newest first (default); forward: oldest first.",
            enum=("backward", "forward"),
        ),
    ),
)


def window(args: Args, *, now: float) -> tuple[float, float]:
    return time_range(QUERY_RANGE, args, now=now)


class LokiQueryRange(DeclaredTool):
    declaration = DECLARATION

    def __init__(self, client: httpx2.AsyncClient, redactor: Redactor) -> None:
        self._client = client
        self._redactor = redactor

    async def call(self, arguments: JsonObject) -> JsonValue:
        args = self._args(arguments)
        start, end = window(args, now=time.time())
        params: dict[str, str | int | float] = {
            "query": str(args["query"]),
            "start": str(int(start * 1e9)),
            "end": str(int(end * 1e9)),
            "limit": int(args.get("limit", DEFAULT_LIMIT)),
            "direction": str(args.get("direction", "backward")),
        }
        response = await get(self._client, self.name, "/loki/api/v1/query_range", params)
        return self._body(response)

    def _body(self, response: httpx2.Response) -> JsonValue:
        if not response.is_success:
            text = self._redactor.text(" ".join(response.text[:400].split()))
            raise ToolError(f"{self.name}: HTTP {response.status_code}: {text or response.reason_phrase}")
        try:
            body: JsonValue = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ToolError(f"{self.name}: HTTP {response.status_code}: the answer is not JSON") from None
        if not isinstance(body, dict) or body.get("status") != "success":
            raise ToolError(f"{self.name}: HTTP {response.status_code}: not a Loki API answer")
        return self._redactor.value(body)

    async def aclose(self) -> None:
        await self._client.aclose()


class LokiConfig(TokenAuth):
    url: str
    # Sent as X-Scope-OrgID (multi-tenant Loki).
    tenant: str | None = Field(default=None, min_length=1, max_length=256)
    timeout_s: Seconds = DEFAULT_TIMEOUT_S

    _url = field_validator("url")(check_url)


def _prepare(section: LokiConfig, opening: Opening, key: str) -> Prepared:
    token = opening.secret(section.token_ref(), section.token_key(key))

    async def open_(redactor: Redactor) -> Opened:
        headers = {"X-Scope-OrgID": section.tenant} if section.tenant else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        loki = LokiQueryRange(create_client(section.url, timeout_s=section.timeout_s, headers=headers), redactor)
        return Opened(tools=[loki], sources=[SourceInfo("loki", "loki", safe_url(section.url))], closers=[loki.aclose])

    return Prepared(open_, (*([token] if token else []), *url_secrets(section.url)))


LOKI = SourceKind("loki", LokiConfig, _prepare)
