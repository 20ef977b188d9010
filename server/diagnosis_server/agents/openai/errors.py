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

from diagnosis_server.agents.base import AgentError, AgentNonRetryableError, AgentRetryableError

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


def agent_error_for(exc: BaseException) -> AgentError | None:
    """The typed agent failure for an ``openai`` exception; None for anything that is not one."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return AgentRetryableError(f"the endpoint did not answer in time: {_detail(exc)}")
    if isinstance(exc, openai.APIConnectionError):
        return AgentRetryableError(f"could not reach the endpoint: {_detail(exc)}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status >= 500 or status in _RETRYABLE_STATUS:
            return AgentRetryableError(f"the endpoint answered {status}: {_detail(exc)}")
        return AgentNonRetryableError(f"the endpoint answered {status}: {_detail(exc)}")
    if isinstance(exc, openai.ContentFilterFinishReasonError):
        return AgentRefusalError("the endpoint's content filter stopped the answer")
    if isinstance(exc, openai.OpenAIError):
        return AgentNonRetryableError(f"the openai client failed: {type(exc).__name__}: {_detail(exc)}")
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
