"""One provider's connection to an OpenAI-compatible endpoint: the client, structured output, usage.

The ``openai`` package is imported here only when a provider is built (``load_openai``), so the rest
of the service works without it. The client's own retries are off (``max_retries=0``): a node attempt
and an endpoint call match one to one, and the graph alone decides retries (R-R-1). Two exceptions,
both within one attempt: the Executor's tool loop makes one call a turn, and a structured-output
rejection is retried once at once with the next response format (remembered by the provider, so it
happens once per provider, not once per run).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from diagnosis_server.agents.base import AgentRetryableError, AgentRole
from diagnosis_server.agents.openai.config import OpenAISettings
from diagnosis_server.agents.openai.errors import (
    INSTALL_HINT,
    AgentConfigurationError,
    AgentRefusalError,
    agent_error_for,
    rejects_response_format,
)
from diagnosis_server.agents.openai.schemas import ResponseFormatKind, response_format
from diagnosis_server.conversions import JsonObject
from diagnosis_server.telemetry import tracer

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionMessage

# Sent as the bearer key when none is configured (local endpoints usually ignore it).
PLACEHOLDER_API_KEY = "not-needed"

_LADDERS: dict[str, tuple[ResponseFormatKind, ...]] = {
    "auto": ("json_schema", "json_object", "none"),
    "on": ("json_schema",),
    "off": ("json_object",),
}


def load_openai() -> ModuleType:
    """The ``openai`` module, or a clear configuration error when it is not installed."""
    try:
        return importlib.import_module("openai")
    except ImportError as exc:
        raise AgentConfigurationError(INSTALL_HINT) from exc


@dataclass(slots=True)
class Usage:
    """What the endpoint calls of one attempt cost."""

    endpoint_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    response_format: ResponseFormatKind = "none"

    def add(self, completion: ChatCompletion) -> None:
        if completion.usage is not None:
            self.prompt_tokens += completion.usage.prompt_tokens or 0
            self.completion_tokens += completion.usage.completion_tokens or 0
        if completion.model:
            self.model = completion.model


class ChatEndpoint:
    """Chat completions against one endpoint, with the structured-output ladder of the settings."""

    def __init__(self, settings: OpenAISettings, module: ModuleType | None = None) -> None:
        self._settings = settings
        self._openai = module if module is not None else load_openai()
        self._ladder = _LADDERS[settings.json_schema]
        self._level = 0
        self._client: openai.AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def response_format_kind(self) -> ResponseFormatKind:
        """The structured output this endpoint is asked for now (it only ever steps down)."""
        return self._ladder[self._level]

    def _new_client(self) -> openai.AsyncOpenAI:
        key = self._settings.api_key.get_secret_value() if self._settings.api_key is not None else ""
        client: openai.AsyncOpenAI = self._openai.AsyncOpenAI(
            base_url=self._settings.base_url,
            api_key=key or PLACEHOLDER_API_KEY,
            max_retries=0,
            timeout=self._settings.timeout_s,
        )
        return client

    def client(self) -> openai.AsyncOpenAI:
        """The client of the running event loop (an HTTP connection pool belongs to one loop)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client, self._client_loop = self._new_client(), loop
        return self._client

    def _span(self, model: str) -> Span:
        """A CLIENT span of one model call, per the GenAI semantic conventions (no prompt, no output)."""
        attributes: dict[str, str | int] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.system": "openai",
            "gen_ai.request.model": model,
        }
        url = urlsplit(self._settings.base_url or "")
        if url.hostname:
            attributes["server.address"] = url.hostname
            if url.port:
                attributes["server.port"] = url.port
        return tracer().start_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes)

    async def aclose(self) -> None:
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.close()

    async def complete(
        self,
        *,
        role: AgentRole,
        model: str,
        messages: Sequence[JsonObject],
        usage: Usage,
        tools: Sequence[JsonObject] | None = None,
        structured: bool = True,
        tool_names: Sequence[str] = (),
    ) -> ChatCompletionMessage:
        """One chat completion's message; refusals and endpoint failures raise typed agent errors."""
        while True:
            level = self._level
            kind: ResponseFormatKind = self._ladder[level] if structured else "none"
            kwargs: dict[str, Any] = {"model": model, "messages": list(messages)}
            fmt = response_format(role, kind, tool_names)
            if fmt is not None:
                kwargs["response_format"] = fmt
            if tools:
                kwargs["tools"] = list(tools)
            usage.endpoint_calls += 1
            usage.response_format = kind
            span = self._span(model)
            try:
                with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                    completion: ChatCompletion = await self.client().chat.completions.create(**kwargs)
                _describe_completion(span, completion)
            except self._openai.OpenAIError as exc:
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                span.end()
                if kind != "none" and level + 1 < len(self._ladder) and rejects_response_format(exc):
                    self._level = max(self._level, level + 1)
                    continue
                key = self._settings.api_key.get_secret_value() if self._settings.api_key is not None else ""
                error = agent_error_for(exc, secrets=(key,))
                if error is None:  # pragma: no cover - every OpenAIError maps
                    raise
                raise error from exc
            except BaseException:
                span.end()
                raise
            span.end()
            usage.add(completion)
            return checked_message(completion)


def _describe_completion(span: Span, completion: ChatCompletion) -> None:
    """GenAI attributes of an answer: the model that answered, token counts, finish reasons; never text."""
    if completion.model:
        span.set_attribute("gen_ai.response.model", completion.model)
    if completion.id:
        span.set_attribute("gen_ai.response.id", completion.id)
    if completion.usage is not None:
        span.set_attribute("gen_ai.usage.input_tokens", completion.usage.prompt_tokens or 0)
        span.set_attribute("gen_ai.usage.output_tokens", completion.usage.completion_tokens or 0)
    reasons = [choice.finish_reason for choice in completion.choices if choice.finish_reason]
    if reasons:
        span.set_attribute("gen_ai.response.finish_reasons", reasons)


def checked_message(completion: ChatCompletion) -> ChatCompletionMessage:
    """The first choice's message; a refusal or a content-filter stop is a non-retryable failure."""
    if not completion.choices:
        raise AgentRetryableError("the endpoint answered without a choice")
    choice = completion.choices[0]
    if choice.finish_reason == "content_filter":
        raise AgentRefusalError("the endpoint's content filter stopped the answer")
    message = choice.message
    if message.refusal:
        raise AgentRefusalError("the model refused to answer")
    return message
