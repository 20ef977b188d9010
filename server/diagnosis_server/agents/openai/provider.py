"""The `openai` provider: the four agents on any OpenAI-compatible chat-completions endpoint.

Messages: the system message is the rendered prompt (``request.prompt_text``: the catalog prompt with
the node's input JSON in place of ``{{input}}``), and a short fixed user message asks for the answer
(many chat templates need a user turn). Nothing else of the run reaches the endpoint.

Each agent returns the model's raw text; the node's protocol parser judges it (off-contract text becomes
INVALID_OUTPUT there). Refusals and endpoint failures raise the typed agent errors of ``errors``.
The reply carries the model the endpoint named, the tokens summed over the attempt's endpoint calls,
and in ``extra`` the number of endpoint calls, the latency, the response format used and (Executor)
the tool calls made: never prompt text or reasoning.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from diagnosis_server.agents.base import (
    AGENT_ROLES,
    Agent,
    AgentNonRetryableError,
    AgentReply,
    AgentRequest,
    AgentRole,
)
from diagnosis_server.agents.openai.config import OpenAISettings
from diagnosis_server.agents.openai.endpoint import ChatEndpoint, Usage, load_openai
from diagnosis_server.agents.openai.errors import AgentConfigurationError
from diagnosis_server.agents.openai.executor import ToolBudget, run_tool_loop
from diagnosis_server.agents.openai.functions import function_table
from diagnosis_server.conversions import JsonObject, JsonValue

PROVIDER_NAME = "openai"

USER_TURNS: dict[AgentRole, str] = {
    "planner": "Plan the tool calls now. Answer with the JSON object only.",
    "executor": (
        "Call the tools the plan needs, then answer with the executor_evidence_v2 JSON object only, binding each "
        "claim to the invocation ids the tool results returned."
    ),
    "verifier": "Check the claims now. Answer with the JSON object only.",
    "composer": "Write the answer now. Answer with the JSON object only.",
}


def _input_tool_specs(input_bytes: bytes) -> list[dict[str, JsonValue]]:
    """The ``tools`` list of a node's input JSON (Planner and Executor inputs carry one); [] otherwise."""
    try:
        data = json.loads(input_bytes)
    except ValueError:
        return []
    tools = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(tools, list):
        return []
    return [spec for spec in tools if isinstance(spec, dict)]


def _tool_names(specs: Sequence[dict[str, JsonValue]]) -> list[str]:
    return [name for spec in specs if isinstance(name := spec.get("name"), str) and name]


class OpenAIAgent:
    def __init__(self, role: AgentRole, endpoint: ChatEndpoint, settings: OpenAISettings) -> None:
        self._role = role
        self._endpoint = endpoint
        self._settings = settings
        self._model = settings.model_for(role)

    @property
    def model(self) -> str:
        return self._model

    async def run(self, request: AgentRequest) -> AgentReply:
        if not request.prompt_text.strip():
            raise AgentNonRetryableError(f"the {self._role} request carries no rendered prompt")
        started = time.monotonic()
        usage = Usage()
        messages: list[JsonObject] = [
            {"role": "system", "content": request.prompt_text},
            {"role": "user", "content": USER_TURNS[self._role]},
        ]
        specs = _input_tool_specs(request.input_bytes) if self._role in ("planner", "executor") else []
        extra: dict[str, JsonValue] = {}
        if self._role == "executor" and request.tools is not None:
            table = function_table(specs)
            budget = ToolBudget(self._settings.max_tool_calls, self._settings.max_tool_output_chars)
            text = await run_tool_loop(
                self._endpoint,
                model=self._model,
                messages=messages,
                table=table,
                tools=request.tools,
                budget=budget,
                usage=usage,
            )
            extra["tool_calls"] = budget.calls
            extra["tool_output_chars"] = budget.chars
        else:
            message = await self._endpoint.complete(
                role=self._role, model=self._model, messages=messages, usage=usage, tool_names=_tool_names(specs)
            )
            text = message.content or ""
        extra["endpoint_calls"] = usage.endpoint_calls
        extra["latency_ms"] = int((time.monotonic() - started) * 1000)
        extra["response_format"] = usage.response_format
        return AgentReply(
            text=text,
            model=usage.model or self._model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            extra=extra,
        )


class OpenAIProvider:
    """The four agents on one endpoint; they share its client and its structured-output fallback."""

    name = PROVIDER_NAME

    def __init__(self, settings: OpenAISettings | None = None) -> None:
        self.settings = settings if settings is not None else OpenAISettings()
        missing = self.settings.missing()
        if missing:
            raise AgentConfigurationError(
                f"the openai agent provider needs {' and '.join(missing)} "
                "(the endpoint's API root, e.g. http://127.0.0.1:8000/v1, and the model name)"
            )
        self.endpoint = ChatEndpoint(self.settings, load_openai())
        self._agents: dict[AgentRole, OpenAIAgent] = {
            role: OpenAIAgent(role, self.endpoint, self.settings) for role in AGENT_ROLES
        }

    def agent(self, role: AgentRole) -> Agent:
        return self._agents[role]

    async def aclose(self) -> None:
        await self.endpoint.aclose()


def create_provider(settings: OpenAISettings | None = None) -> OpenAIProvider:
    """The `openai` provider from ``settings`` or the DIAGNOSIS_OPENAI_* environment.

    Raises AgentConfigurationError when the ``openai`` package is missing or the base URL or model is unset.
    """
    load_openai()
    return OpenAIProvider(settings)
