"""Prometheus: ``prometheus.query``, ``prometheus.query_range``, ``prometheus.series`` and
``prometheus.label_values`` over the HTTP API, and its source kind (``prometheus = { url = ... }`` in an
environment: ``PROMETHEUS``).

The recorded output is the API's JSON body as returned (``status``, ``data.resultType``, ``data.result``,
``warnings``), redacted, so a binding points at ``/data/result/0/values/12/1``. An answer with ``status:
error`` (bad PromQL, a timeout, too many samples) is a ``ToolError`` with Prometheus's own ``errorType`` and
``error``; so is an HTTP error without a Prometheus body and a Prometheus that cannot be reached.

``prometheus.series`` lists what the server holds (``/api/v1/series``): the label sets of the series a selector
matches, or of those whose naming labels (``SERIES_NAME_LABELS``) hold a name, over a range; at most ``limit``
of them (a warning says when more matched), so that a planner learns which metrics and labels a service has.
``prometheus.label_values`` lists one label's values (``/api/v1/label/<name>/values``: ``__name__`` gives the metric
names), likewise bounded.
"""

from __future__ import annotations

import json
import math
import re
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
from diagnosis_server.sources.http import QueryParams, create_client, get, safe_url
from diagnosis_server.sources.sections import DEFAULT_TIMEOUT_S, Seconds, TokenAuth, check_url
from diagnosis_server.sources.source import Opened, Opening, Prepared, SourceInfo, SourceKind, url_secrets
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import Tool, ToolError

QUERY = "prometheus.query"
QUERY_RANGE = "prometheus.query_range"
SERIES = "prometheus.series"
LABEL_VALUES = "prometheus.label_values"
DEFAULT_VALUES_LIMIT = 2000
MAX_VALUES_LIMIT = 10000
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# The labels whose values name what a series is about (the namespace label names a namespace: never searched).
SERIES_NAME_LABELS = ("service", "job", "app", "container", "pod", "instance")
DEFAULT_SERIES_LIMIT = 200
MAX_SERIES_LIMIT = 1000
_SERIES_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,126}")
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


_SERIES_DESCRIPTION = (
    "Find the series Prometheus holds (Prometheus /api/v1/series): the label sets of those a selector matches "
    f"(match), or of those whose {', '.join(SERIES_NAME_LABELS)} label holds a name as a word (name: checkout-api "
    'finds job="checkout-api", pod="checkout-api-7d9f-x2", instance="checkout-api:8080"), over a range. '
    "Returns Prometheus's JSON: {status, data: [{__name__, label: value, ...}], warnings}; at most limit series "
    f"(default {DEFAULT_SERIES_LIMIT}; a warning says when more matched). start/end: RFC 3339, Unix seconds or "
    "now-1h (default: the last hour)."
)
SERIES_DECLARATION = Declaration(
    SERIES,
    _SERIES_DESCRIPTION,
    (
        Param("match", "string", 'A series selector: up{job="checkout-api"}, {service=~"checkout.*"}.'),
        Param("name", "string", f"A name to find in the {', '.join(SERIES_NAME_LABELS)} labels (match or name)."),
        RANGE_START,
        Param("end", "string", "Range end (RFC 3339, Unix seconds, now). Default: now."),
        Param(
            "limit",
            "integer",
            f"At most this many series (default {DEFAULT_SERIES_LIMIT}).",
            minimum=1,
            maximum=MAX_SERIES_LIMIT,
        ),
    ),
)


def name_matchers(name: str) -> list[str]:
    """One selector a naming label: the series whose label value holds ``name`` as a word (RE2, case-insensitive:
    ``checkout-api`` in ``checkout-api``, ``checkout-api-7d9f-x2``, ``checkout-api:8080``, not ``checkout-apis``)."""
    if not _SERIES_NAME.fullmatch(name):
        raise ToolError(f"{SERIES}: name {name!r} is not a name (letters, digits, '.', '_', ':', '-')")
    word = name.replace(".", "[.]")
    pattern = f"(?i)(.*[^a-z0-9])?{word}([^a-z0-9].*)?"
    return [f'{{{label}=~"{pattern}"}}' for label in SERIES_NAME_LABELS]


def clip_series(body: JsonValue, limit: int, *, tool: str = SERIES, what: str = "series") -> JsonValue:
    """The answer with at most ``limit`` series (or values), and a warning saying so when more came."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return body
    listed = body["data"]
    if not isinstance(listed, list) or len(listed) <= limit:
        return body
    warnings = body.get("warnings")
    kept: list[JsonValue] = list(warnings) if isinstance(warnings, list) else []
    kept.append(f"{tool}: more than {limit} {what} matched; the first {limit} are listed (narrow the selector)")
    return {**body, "data": listed[:limit], "warnings": kept}


_LABEL_VALUES_DESCRIPTION = (
    "List the values one label takes in Prometheus (Prometheus /api/v1/label/<label>/values): label __name__ lists "
    "the metric names, job the scrape jobs, service the services. Returns Prometheus's JSON: {status, data: "
    f"[value, ...], warnings}}; at most limit values (default {DEFAULT_VALUES_LIMIT}; a warning says when more). "
    "match: only the series a selector matches; start/end: RFC 3339, Unix seconds or now-1h (default: the last hour)."
)
LABEL_VALUES_DECLARATION = Declaration(
    LABEL_VALUES,
    _LABEL_VALUES_DESCRIPTION,
    (
        Param("label", "string", "The label name (__name__ for metric names).", required=True),
        Param("match", "string", "Only the values of the series this selector matches."),
        RANGE_START,
        Param("end", "string", "Range end (RFC 3339, Unix seconds, now). Default: now."),
        Param(
            "limit",
            "integer",
            f"At most this many values (default {DEFAULT_VALUES_LIMIT}).",
            minimum=1,
            maximum=MAX_VALUES_LIMIT,
        ),
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

    async def get(self, tool: str, path: str, params: QueryParams) -> JsonValue:
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


class PrometheusSeries(_PrometheusTool):
    declaration = SERIES_DECLARATION

    async def call(self, arguments: JsonObject) -> JsonValue:
        args = self._args(arguments)
        matchers = [str(args["match"])] if "match" in args else []
        if "name" in args:
            matchers += name_matchers(str(args["name"]))
        if not matchers:
            raise ToolError(f"{self.name}: give match (a series selector) or name")
        start, end = time_range(self.name, args, now=time.time())
        limit = int(args.get("limit", DEFAULT_SERIES_LIMIT))
        # One more than asked: a Prometheus that honours limit shows so that more matched (an older one ignores it).
        params: list[tuple[str, str | int | float]] = [("match[]", m) for m in matchers]
        params += [("start", start), ("end", end), ("limit", limit + 1)]
        return clip_series(await self._api.get(self.name, "/api/v1/series", params), limit)


class PrometheusLabelValues(_PrometheusTool):
    declaration = LABEL_VALUES_DECLARATION

    async def call(self, arguments: JsonObject) -> JsonValue:
        args = self._args(arguments)
        label = str(args["label"])
        if not _LABEL_NAME.fullmatch(label):
            raise ToolError(f"{self.name}: label {label!r} is not a Prometheus label name")
        start, end = time_range(self.name, args, now=time.time())
        limit = int(args.get("limit", DEFAULT_VALUES_LIMIT))
        params: list[tuple[str, str | int | float]] = [("match[]", str(args["match"]))] if "match" in args else []
        params += [("start", start), ("end", end), ("limit", limit + 1)]
        body = await self._api.get(self.name, f"/api/v1/label/{label}/values", params)
        return clip_series(body, limit, tool=self.name, what="values")


def prometheus_tools(api: PrometheusApi) -> list[Tool]:
    """Every tool of one Prometheus."""
    return [PrometheusQuery(api), PrometheusQueryRange(api), PrometheusSeries(api), PrometheusLabelValues(api)]


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
            tools=prometheus_tools(api),
            sources=[SourceInfo("prometheus", "prometheus", safe_url(section.url))],
            closers=[api.aclose],
            context={
                "prometheus": {"error_rate_query": section.error_rate_query, "latency_query": section.latency_query}
            },
        )

    return Prepared(open_, (*([token] if token else []), *url_secrets(section.url)))


PROMETHEUS = SourceKind("prometheus", PrometheusConfig, _prepare)
