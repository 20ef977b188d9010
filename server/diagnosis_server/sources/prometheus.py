"""Prometheus: ``prometheus.query`` and ``prometheus.query_range`` over the HTTP API, and its source kind
(``prometheus = { url = ... }`` in an environment: ``PROMETHEUS``).

The recorded output is the API's JSON body as returned (``status``, ``data.resultType``, ``data.result``,
``warnings``), redacted, so a binding points at ``/data/result/0/values/12/1``. An answer with ``status:
error`` (bad PromQL, a timeout, too many samples) is a ``ToolError`` with Prometheus's own ``errorType`` and
``error``; so is an HTTP error without a Prometheus body and a Prometheus that cannot be reached.
"""

from __future__ import annotations

import json
import math
import time

import httpx2
from pydantic import Field, field_validator

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.sources.arguments import (
    Args,
    Param,
    parse_duration,
    parse_time,
)
from diagnosis_server.sources.declared import RANGE_START, Declaration, DeclaredTool, time_range
from diagnosis_server.sources.http import create_client, get, safe_url
from diagnosis_server.sources.sections import DEFAULT_TIMEOUT_S, Seconds, TokenAuth, check_url
from diagnosis_server.sources.source import Opened, Opening, Prepared, SourceInfo, SourceKind, url_secrets
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import ToolError

QUERY = "prometheus.query"
QUERY_RANGE = "prometheus.query_range"
# Points a range query aims at when no step is given (Prometheus refuses more than 11,000 a series).
TARGET_POINTS = 240

_QUERY_DESCRIPTION = (
    "Evaluate a PromQL expression at one instant (Prometheus /api/v1/query). Returns Prometheus's JSON as is: "
    "{status, data: {resultType: vector|scalar|matrix|string, result: [{metric: {labels}, value: [unix_time, "
    '"value"]}]}, warnings}; sample values are strings. time: RFC 3339, Unix seconds or now-15m (default: now).'
)
_QUERY_RANGE_DESCRIPTION = (
    "Evaluate a PromQL expression over a time range (Prometheus /api/v1/query_range). Returns Prometheus's JSON "
    'as is: {status, data: {resultType: matrix, result: [{metric: {labels}, values: [[unix_time, "value"], '
    "...]}]}, warnings}; values oldest first, as strings. Examples: sum by (pod) (rate(http_requests_total"
    '{code=~"5.."}[5m])), histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket[5m]))). '
    f"start/end: RFC 3339, Unix seconds or now-1h (default: the last hour); step: 30s, 1m (default: about "
    f"{TARGET_POINTS} points)."
)
_EXPRESSION = Param("query", "string", "The PromQL expression.", required=True)
QUERY_DECLARATION = Declaration(
    QUERY,
    _QUERY_DESCRIPTION,
    (_EXPRESSION, Param("time", "string", "Evaluation time (RFC 3339, Unix seconds, now, now-15m). Default: now.")),
)
QUERY_RANGE_DECLARATION = Declaration(
    QUERY_RANGE,
    _QUERY_RANGE_DESCRIPTION,
    (
        _EXPRESSION,
        RANGE_START,
        Param("end", "string", "Range end, inclusive (RFC 3339, Unix seconds, now). Default: now."),
        Param("step", "string", f"Resolution (30s, 1m, 5m or seconds). Default: about {TARGET_POINTS} points."),
    ),
)


def auto_step(start: float, end: float) -> float:
    """A round step giving about TARGET_POINTS points over [start, end] (at least 1 s)."""
    raw = max((end - start) / TARGET_POINTS, 1.0)
    for nice in (1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400):
        if raw <= nice:
            return float(nice)
    return float(math.ceil(raw / 86400) * 86400)


def range_arguments(tool: str, args: Args, *, now: float) -> tuple[float, float, float]:
    """(start, end, step) in seconds, with the defaults; ToolError when they make no range."""
    start, end = time_range(tool, args, now=now)
    step = parse_duration(tool, "step", str(args["step"])) if "step" in args else auto_step(start, end)
    if (end - start) / step > 11_000:
        raise ToolError(f"{tool}: the range has more than 11,000 points at step {args.get('step', step)}; raise step")
    return start, end, step


class PrometheusApi:
    """One Prometheus: its client and the redactor its answers go through."""

    def __init__(self, client: httpx2.AsyncClient, redactor: Redactor) -> None:
        self.client = client
        self.redactor = redactor

    async def get(self, tool: str, path: str, params: dict[str, str | int | float]) -> JsonValue:
        response = await get(self.client, tool, path, params)
        return self._body(tool, response)

    def _body(self, tool: str, response: httpx2.Response) -> JsonValue:
        try:
            body: JsonValue = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            text = self.redactor.text(response.text[:300].strip())
            raise ToolError(f"{tool}: HTTP {response.status_code}: {text or response.reason_phrase}") from None
        if isinstance(body, dict) and body.get("status") == "error":
            kind = body.get("errorType") or f"HTTP {response.status_code}"
            raise ToolError(self.redactor.text(f"{tool}: {kind}: {body.get('error') or 'no message'}"))
        if not response.is_success or not isinstance(body, dict) or body.get("status") != "success":
            raise ToolError(f"{tool}: HTTP {response.status_code}: not a Prometheus API answer")
        return self.redactor.value(body)

    async def aclose(self) -> None:
        await self.client.aclose()


class _PrometheusTool(DeclaredTool):
    """A tool of one Prometheus: its calls go through ``PrometheusApi``."""

    def __init__(self, api: PrometheusApi) -> None:
        self._api = api


class PrometheusQuery(_PrometheusTool):
    declaration = QUERY_DECLARATION

    async def call(self, arguments: JsonObject) -> JsonValue:
        args = self._args(arguments)
        params: dict[str, str | int | float] = {"query": str(args["query"])}
        if "time" in args:
            params["time"] = parse_time(self.name, "time", str(args["time"]))
        return await self._api.get(self.name, "/api/v1/query", params)


class PrometheusQueryRange(_PrometheusTool):
    declaration = QUERY_RANGE_DECLARATION

    async def call(self, arguments: JsonObject) -> JsonValue:
        args = self._args(arguments)
        start, end, step = range_arguments(self.name, args, now=time.time())
        params: dict[str, str | int | float] = {"query": str(args["query"]), "start": start, "end": end, "step": step}
        return await self._api.get(self.name, "/api/v1/query_range", params)


DEFAULT_ERROR_RATE_QUERY = (
    'sum(rate(http_requests_total{{service="{service}",code=~"5.."}}[5m]))'
    ' / sum(rate(http_requests_total{{service="{service}"}}[5m]))'
)
DEFAULT_LATENCY_QUERY = (
    'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{{service="{service}"}}[5m])))'
)


class PrometheusConfig(TokenAuth):
    url: str
    timeout_s: Seconds = DEFAULT_TIMEOUT_S
    # The embedded default's queries for a service's error rate and p99 latency; ``{service}`` and
    # ``{namespace}`` are filled in (literal braces doubled, as in Python's str.format).
    error_rate_query: str = Field(default=DEFAULT_ERROR_RATE_QUERY, min_length=1, max_length=2000)
    latency_query: str = Field(default=DEFAULT_LATENCY_QUERY, min_length=1, max_length=2000)

    _url = field_validator("url")(check_url)


def _prepare(section: PrometheusConfig, opening: Opening, key: str) -> Prepared:
    token = opening.secret(section.token_ref(), section.token_key(key))

    async def open_(redactor: Redactor) -> Opened:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        api = PrometheusApi(create_client(section.url, timeout_s=section.timeout_s, headers=headers), redactor)
        return Opened(
            tools=[PrometheusQuery(api), PrometheusQueryRange(api)],
            sources=[SourceInfo("prometheus", "prometheus", safe_url(section.url))],
            closers=[api.aclose],
            context={
                "prometheus": {"error_rate_query": section.error_rate_query, "latency_query": section.latency_query}
            },
        )

    return Prepared(open_, (*([token] if token else []), *url_secrets(section.url)))


PROMETHEUS = SourceKind("prometheus", PrometheusConfig, _prepare)
