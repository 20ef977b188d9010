"""How an endpoint's failures map to the agent's typed failures (and so to node outcomes).

| failure                                                   | agent error            | node outcome          |
| --------------------------------------------------------- | ---------------------- | --------------------- |
| time-out, connection error                                 | AgentRetryableError    | RETRYABLE_FAILED      |
| 429, 408, 409, 5xx                                         | AgentRetryableError    | RETRYABLE_FAILED      |
| other 4xx (400, 401, 403, 404, 422, ...)                   | AgentNonRetryableError | NON_RETRYABLE_FAILED  |
| refusal (finish_reason content_filter, a message refusal)  | AgentNonRetryableError | NON_RETRYABLE_FAILED  |
| unparseable or off-contract text                           | none: returned as text | INVALID_OUTPUT        |

408 and 409 are retried as the ``openai`` client itself would retry them. Messages name the status and
the endpoint's short error message, never the prompt.
"""

from __future__ import annotations

import email.utils
import socket
from collections.abc import Sequence
from datetime import UTC, datetime

from diagnosis_server.agents.base import AgentError, AgentNonRetryableError, AgentRetryableError
from diagnosis_server.text.redaction import redact_text

INSTALL_HINT = "the openai agent provider needs the 'openai' package: pip install 'diagnosis-graph[openai]'"
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_MAX_DETAIL = 200


class AgentConfigurationError(RuntimeError):
    """The provider cannot be built: the package is missing or the configuration is incomplete."""


class AgentRefusalError(AgentNonRetryableError):
    """The model refused to answer (a refusal message, or the endpoint's content filter)."""


def _detail(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    text = " ".join(str(message).split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


_MAX_RETRY_AFTER_S = 3600.0


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` without the given secrets, credentials in URLs, or token-shaped words (the one redaction)."""
    return redact_text(text, secrets)


def _cause_detail(exc: BaseException) -> str:
    """The lowest cause's words (e.g. "[Errno 111] Connection refused" under "Connection error.")."""
    seen: set[int] = set()
    cause: BaseException | None = exc.__cause__ or exc.__context__
    deepest: BaseException | None = None
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        deepest = cause
        cause = cause.__cause__ or cause.__context__
    if deepest is None:
        return ""
    return f"{type(deepest).__name__}: {_detail(deepest)}"


def _connection_class(exc: BaseException) -> str:
    text = f"{_detail(exc)} {_cause_detail(exc)}".lower()
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    if any(isinstance(c, ConnectionRefusedError) for c in chain) or "refused" in text:
        return "connection_refused"
    if any(isinstance(c, socket.gaierror) for c in chain) or "name or service not known" in text:
        return "dns_failure"
    if "ssl" in text or "certificate" in text:
        return "tls_failure"
    return "connection_error"


def retry_after_s(exc: BaseException) -> float | None:
    """The wait an HTTP error asks for (``Retry-After`` seconds or date, or ``retry-after-ms``), bounded."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value: float | None = None
    try:
        if headers.get("retry-after-ms"):
            value = float(headers["retry-after-ms"]) / 1000.0
        elif headers.get("retry-after"):
            text = str(headers["retry-after"]).strip()
            try:
                value = float(text)
            except ValueError:
                when = email.utils.parsedate_to_datetime(text)
                value = (when - datetime.now(UTC)).total_seconds()
    except (TypeError, ValueError, OverflowError):
        return None
    if value is None or value != value:  # NaN
        return None
    return min(max(value, 0.0), _MAX_RETRY_AFTER_S)


def agent_error_for(exc: BaseException, *, secrets: Sequence[str] = ()) -> AgentError | None:
    """The typed agent failure for an ``openai`` exception; None for anything that is not one.

    Endpoint failures (time-outs, connection errors, HTTP errors) carry their class, the endpoint's own
    message with the underlying cause (``connection refused``), redacted, and any Retry-After.
    """
    import openai

    if isinstance(exc, openai.APITimeoutError):
        message = redact(f"the model endpoint did not answer in time: {_detail(exc)}", secrets)
        return AgentRetryableError(message, failure_class="timeout", endpoint=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = _cause_detail(exc)
        message = f"could not reach the model endpoint: {_detail(exc)}" + (f" ({cause})" if cause else "")
        return AgentRetryableError(
            redact(message, secrets)[: _MAX_DETAIL * 2], failure_class=_connection_class(exc), endpoint=True
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = redact(f"the model endpoint answered {status}: {_detail(exc)}", secrets)
        failure_class = "rate_limited" if status == 429 else f"http_{status}"
        if status >= 500 or status in _RETRYABLE_STATUS:
            return AgentRetryableError(
                message, failure_class=failure_class, endpoint=True, retry_after_s=retry_after_s(exc)
            )
        return AgentNonRetryableError(message, failure_class=failure_class, endpoint=True)
    if isinstance(exc, openai.ContentFilterFinishReasonError):
        return AgentRefusalError("the endpoint's content filter stopped the answer", failure_class="refusal")
    if isinstance(exc, openai.OpenAIError):
        message = redact(f"the openai client failed: {type(exc).__name__}: {_detail(exc)}", secrets)
        return AgentNonRetryableError(message, failure_class="client_error", endpoint=True)
    return None


def rejects_response_format(exc: BaseException) -> bool:
    """Whether ``exc`` is a 400 that blames the request's response_format (an unsupported structured output)."""
    import openai

    if not isinstance(exc, openai.BadRequestError):
        return False
    parts = [str(exc.message), str(exc.param or ""), str(exc.code or "")]
    if exc.body is not None:
        parts.append(str(exc.body))
    text = " ".join(parts).lower()
    return any(word in text for word in ("response_format", "json_schema", "json_object", "structured output"))
