"""HTTP for the sources: one httpx2 client a source, a timeout on every request, retries with backoff.

httpx2 is the maintained line of httpx that the ``mcp`` and ``openai`` SDKs build on: one HTTP stack for all.
A request is retried only when a retry can help: a connection error (nothing reached the upstream, or the
connection broke) or a 5xx/429 answer; never another 4xx. Backoff is exponential with full jitter, and a
``Retry-After`` (seconds or an HTTP date) is honoured up to ``max_delay_s``. Every outgoing request carries
the current trace context (``opentelemetry.propagate.inject``; a no-op when no SDK is configured). Error
messages name the source and the URL without its userinfo or query: never a credential.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx2
from opentelemetry import propagate

from diagnosis_server.tools.base import SourceUnreachable

T = TypeVar("T")
USER_AGENT = "diagnosis-graph"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 2.0

    def delay(self, failures: int, retry_after: float | None = None) -> float:
        """Full jitter over an exponential ceiling; Retry-After when the upstream says, capped."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
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
) -> T:
    """``attempt()`` until it gives a result ``retryable`` refuses, or the attempts are spent.

    ``retryable`` sees a result or an exception and says whether to try again and after how long the upstream
    asked (Retry-After), if it did. The last result is returned; the last exception is raised.
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
    params: Mapping[str, str | int | float],
    *,
    policy: RetryPolicy = DEFAULT_RETRY,
) -> httpx2.Response:
    """GET with retries; ToolError naming the source when no answer came (the last connection error)."""
    try:
        return await with_retries(lambda: client.get(path, params=dict(params)), _retryable_http, policy=policy)
    except httpx2.TimeoutException:
        raise SourceUnreachable(f"{source}: no answer from {safe_url(client.base_url)} in time") from None
    except httpx2.TransportError as exc:
        reason = type(exc).__name__
        raise SourceUnreachable(f"{source}: cannot reach {safe_url(client.base_url)} ({reason})") from None
