"""Endpoint failures -> typed agent failures (-> node outcomes): the mapping table of agents.openai.errors."""

from __future__ import annotations

import httpx2
import openai
import pytest

from diagnosis_server.agents.base import AgentNonRetryableError, AgentRetryableError
from diagnosis_server.agents.openai.errors import AgentRefusalError, agent_error_for, rejects_response_format

_REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def _status_error(status: int, message: str = "boom", body: object = None) -> openai.APIStatusError:
    response = httpx2.Response(status, request=_REQUEST)
    classes: dict[int, type[openai.APIStatusError]] = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        403: openai.PermissionDeniedError,
        404: openai.NotFoundError,
        409: openai.ConflictError,
        422: openai.UnprocessableEntityError,
        429: openai.RateLimitError,
    }
    cls = classes.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return cls(message, response=response, body=body)


@pytest.mark.parametrize(
    "exc",
    [
        openai.APITimeoutError(request=_REQUEST),
        openai.APIConnectionError(request=_REQUEST),
        _status_error(429),
        _status_error(500),
        _status_error(502),
        _status_error(503),
        _status_error(408),
        _status_error(409),
    ],
    ids=lambda e: type(e).__name__ + str(getattr(e, "status_code", "")),
)
def test_transient_failures_are_retryable(exc: Exception) -> None:
    """Time-outs, connection errors, 429 and 5xx -> RETRYABLE_FAILED (R-R-1: one technical retry)."""
    assert isinstance(agent_error_for(exc), AgentRetryableError)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_client_errors_are_not_retryable(status: int) -> None:
    error = agent_error_for(_status_error(status, "bad things"))
    assert isinstance(error, AgentNonRetryableError)
    assert str(status) in str(error)


def test_content_filter_is_a_refusal() -> None:
    assert isinstance(agent_error_for(openai.ContentFilterFinishReasonError()), AgentRefusalError)


def test_anything_else_is_not_mapped() -> None:
    assert agent_error_for(ValueError("not an endpoint failure")) is None


def test_a_long_error_message_is_cut() -> None:
    error = agent_error_for(_status_error(400, "x" * 5000))
    assert error is not None and len(str(error)) < 300


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (_status_error(400, "response_format json_schema is not supported"), True),
        (_status_error(400, "invalid", body={"param": "response_format"}), True),
        (_status_error(400, "Invalid schema for 'json_schema'"), True),
        (_status_error(400, "messages must not be empty"), False),
        (_status_error(422, "response_format is wrong"), False),
        (_status_error(500, "response_format"), False),
    ],
)
def test_only_a_400_about_response_format_triggers_the_fallback(exc: Exception, expected: bool) -> None:
    assert rejects_response_format(exc) is expected
