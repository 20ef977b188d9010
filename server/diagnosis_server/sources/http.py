"""HTTP for the sources: one httpx2 client a source, a timeout on every request, retries with backoff.

httpx2 is the maintained line of httpx that the ``mcp`` and ``openai`` SDKs build on: one HTTP stack for all.
A request is retried only when a retry can help: a connection error (nothing reached the upstream, or the
connection broke) or a 5xx/429 answer; never another 4xx. Backoff is exponential with full jitter, and a
``Retry-After`` (seconds or an HTTP date) is honoured as given when the call has that long left (its tool
time-out; ``max_retry_after_s`` outside a runner's call); when it has not, the call fails at once, saying so.
A body is read as a stream and no further than ``MAX_BODY_BYTES``. Every outgoing request carries the current
trace context (``opentelemetry.propagate.inject``; a no-op when no SDK is configured). Error messages name the
source and the URL without its userinfo or query: never a credential.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx2
from opentelemetry import propagate

from diagnosis_server.limits import DEFAULT_LIMITS
from diagnosis_server.tools.base import SourceUnreachable, ToolError, call_time_left

T = TypeVar("T")
USER_AGENT = "diagnosis-graph"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# A source's answer is read as a stream and no further than this: the tool output bound's 16 times, room for
# what redaction removes (Kubernetes managedFields) and what trimming to the output bound keeps. An answer over
# it fails the call, saying so, before more of it is in memory.
MAX_BODY_BYTES = 16 * DEFAULT_LIMITS.max_tool_output_bytes
_CHUNK = 64 * 1024
_PLAIN_HEADERS = ("content-encoding", "content-length", "transfer-encoding")
# A query's parameters: a mapping, or pairs when a name repeats (Prometheus' ``match[]``).
QueryParams = Mapping[str, str | int | float] | Sequence[tuple[str, str | int | float]]


class BodyTooLarge(ToolError):
    """An answer over the read bound (only its first MAX_BODY_BYTES were read)."""


def too_large(source: str, max_bytes: int) -> str:
    return (
        f"{source}: the answer is over the {max_bytes} byte read bound and was not read further; "
        "narrow the request (a shorter range, a coarser step, a selector)"
    )


async def read_bounded(
    client: httpx2.AsyncClient, source: str, path: str, params: QueryParams, max_bytes: int
) -> httpx2.Response:
    """GET ``path`` reading the body in chunks, stopping past ``max_bytes`` (BodyTooLarge); the response with
    its whole (decoded) body."""
    pairs: list[tuple[str, str | int | float | bool | None]] = [
        *(params.items() if isinstance(params, Mapping) else params)
    ]
    request = client.build_request("GET", path, params=pairs)
    response = await client.send(request, stream=True)
    try:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes and not response.headers.get("content-encoding"):
            raise BodyTooLarge(too_large(source, max_bytes))
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes(_CHUNK):
            size += len(chunk)
            if size > max_bytes:
                raise BodyTooLarge(too_large(source, max_bytes))
            chunks.append(chunk)
    finally:
        await response.aclose()
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _PLAIN_HEADERS]
    return httpx2.Response(response.status_code, headers=headers, content=b"".join(chunks), request=request)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 2.0
    # The longest Retry-After waited for outside a runner's call (inside one: what the call has left).
    max_retry_after_s: float = 30.0

    def delay(self, failures: int, retry_after: float | None = None) -> float:
        """Full jitter over an exponential ceiling; the upstream's Retry-After as it says, when it says."""
        if retry_after is not None:
            return max(retry_after, 0.0)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** max(failures - 1, 0))
        return random.uniform(0, ceiling)


DEFAULT_RETRY = RetryPolicy()


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After: 3`` or an HTTP date, as seconds from now; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def safe_url(url: str | httpx2.URL) -> str:
    """The URL without userinfo, query or fragment (what a message or a listing may show)."""
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


async def _inject_trace_context(request: httpx2.Request) -> None:
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    for key, value in carrier.items():
        request.headers[key] = value


def trace_headers() -> dict[str, str]:
    """The current trace context as headers (empty without an OpenTelemetry SDK)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def create_client(
    base_url: str,
    *,
    timeout_s: float,
    headers: Mapping[str, str] | None = None,
    transport: httpx2.AsyncBaseTransport | None = None,
) -> httpx2.AsyncClient:
    """A client for one upstream: its timeout, its headers (auth), trace context on every request."""
    return httpx2.AsyncClient(
        base_url=base_url,
        timeout=httpx2.Timeout(timeout_s, connect=min(timeout_s, 5.0)),
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        event_hooks={"request": [_inject_trace_context]},
        follow_redirects=False,
        transport=transport,
        trust_env=False,
    )


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    retryable: Callable[[T | BaseException], tuple[bool, float | None]],
    *,
    policy: RetryPolicy = DEFAULT_RETRY,
    source: str = "the upstream",
) -> T:
    """``attempt()`` until it gives a result ``retryable`` refuses, or the attempts are spent.

    ``retryable`` sees a result or an exception and says whether to try again and after how long the upstream
    asked (Retry-After), if it did. The last result is returned; the last exception is raised. A Retry-After
    longer than the call has left is SourceUnreachable at once (``source`` names who asked), not a wait that
    the call's time-out would cut.
    """
    failures = 0
    while True:
        try:
            outcome: T | BaseException = await attempt()
        except Exception as exc:
            outcome = exc
        again, retry_after = retryable(outcome)
        failures += 1
        if not again or failures >= policy.attempts:
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome
        if retry_after is not None:
            left = call_time_left()
            budget = policy.max_retry_after_s if left is None else left
            if retry_after > budget:
                raise SourceUnreachable(
                    f"{source}: asked to retry after {retry_after:g}s (Retry-After), more than the {budget:.1f}s "
                    "this call has left"
                )
        await asyncio.sleep(policy.delay(failures, retry_after))


def _retryable_http(outcome: httpx2.Response | BaseException) -> tuple[bool, float | None]:
    if isinstance(outcome, httpx2.Response):
        if outcome.status_code in RETRY_STATUSES:
            return True, retry_after_seconds(outcome.headers.get("Retry-After"))
        return False, None
    return isinstance(outcome, httpx2.TransportError) and not isinstance(outcome, httpx2.UnsupportedProtocol), None


async def get(
    client: httpx2.AsyncClient,
    source: str,
    path: str,
    params: QueryParams,
    *,
    policy: RetryPolicy = DEFAULT_RETRY,
    max_bytes: int = MAX_BODY_BYTES,
) -> httpx2.Response:
    """GET with retries, the body read no further than ``max_bytes`` (BodyTooLarge); SourceUnreachable naming
    the source when no answer came (the last connection error)."""
    try:
        return await with_retries(
            lambda: read_bounded(client, source, path, params, max_bytes), _retryable_http, policy=policy, source=source
        )
    except httpx2.TimeoutException:
        raise SourceUnreachable(f"{source}: no answer from {safe_url(client.base_url)} in time") from None
    except httpx2.TransportError as exc:
        reason = type(exc).__name__
        raise SourceUnreachable(f"{source}: cannot reach {safe_url(client.base_url)} ({reason})") from None
