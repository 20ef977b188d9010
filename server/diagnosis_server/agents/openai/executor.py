"""The Executor's bounded tool-calling loop.

Each turn offers the run's tools as functions; every tool call the model makes runs through the run's
tool runner (``request.tools``: recorded as a tool_invocation row, allow-listed), and a compact JSON
result goes back: the invocation id (what a claim binds to), the tool name, the status and the output,
cut to what is left of the output budget. A blocked tool raises ``ToolBlockedError``, which ends the
attempt (the node maps it to TOOL_BLOCKED).

Bounds of one Executor run: at most ``max_tool_calls`` tool calls (calls past the cap in one turn are
answered "not run") and at most ``max_tool_output_chars`` characters of tool output fed back. Once
either is spent, the next turn offers no tools and asks for the final ``executor_evidence_v2`` JSON
with structured output; a turn without tool calls is the final answer. So the loop makes at most
``max_tool_calls + 1`` endpoint calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from diagnosis_server.agents.base import ToolCaller
from diagnosis_server.agents.openai.endpoint import ChatEndpoint, Usage
from diagnosis_server.agents.openai.functions import FunctionTable
from diagnosis_server.conversions import JsonObject, JsonValue, enum_short_name

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageToolCallUnion

    from diagnosis_server.tools.runner import ToolCallResult

FINAL_TURN = (
    "The tool budget of this run is spent: no more tool calls. Return the final executor_evidence_v2 JSON "
    "object now, binding claims only to the invocation ids returned above."
)
_MAX_ERROR = 500


@dataclass(slots=True)
class ToolBudget:
    max_calls: int
    max_chars: int
    calls: int = 0
    chars: int = 0

    @property
    def open(self) -> bool:
        return self.calls < self.max_calls and self.chars < self.max_chars

    @property
    def chars_left(self) -> int:
        return max(0, self.max_chars - self.chars)


def _dumps(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _assistant_turn(message: ChatCompletionMessage) -> JsonObject:
    calls: list[JsonValue] = []
    for call in message.tool_calls or []:
        if call.type == "function":
            calls.append(
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
            )
        else:
            calls.append(
                {"id": call.id, "type": "custom", "custom": {"name": call.custom.name, "input": call.custom.input}}
            )
    return {"role": "assistant", "content": message.content, "tool_calls": calls}


def _status(result: ToolCallResult) -> str:
    from diagnosis.v1 import contracts_pb2

    return enum_short_name(contracts_pb2.ToolInvocationStatus, result.status, lower=True) or "unknown"


def feedback(result: ToolCallResult, budget: ToolBudget) -> JsonObject:
    """The compact result the model sees; the output is cut to the budget and counted against it."""
    out: JsonObject = {"invocation_id": result.invocation_id, "tool_name": result.tool_name, "status": _status(result)}
    if result.error:
        out["error"] = result.error[:_MAX_ERROR]
    if result.output is None:
        return out
    text = _dumps(result.output)
    left = budget.chars_left
    if len(text) <= left:
        out["output"] = result.output
        budget.chars += len(text)
    else:
        out["output_truncated"] = True
        out["output_chars"] = len(text)
        out["output_prefix"] = text[:left]
        budget.chars += left
    return out


def _arguments(raw: str) -> JsonObject | str:
    try:
        value = json.loads(raw or "{}")
    except ValueError as exc:
        return f"the arguments are not JSON: {exc}"
    if not isinstance(value, dict):
        return "the arguments are not a JSON object"
    return value


def _prepare(
    call: ChatCompletionMessageToolCallUnion, table: FunctionTable, budget: ToolBudget
) -> JsonObject | tuple[str, JsonObject]:
    """A tool call of the turn: its answer when it is not run, else (tool name, arguments) to run."""
    if call.type != "function":
        budget.calls += 1
        return {"status": "error", "error": "only function tools are offered"}
    tool_name = table.tool_name(call.function.name)
    if budget.calls >= budget.max_calls:
        return {"tool_name": tool_name, "status": "not_run", "error": "the tool call limit of this run is reached"}
    budget.calls += 1
    arguments = _arguments(call.function.arguments)
    if isinstance(arguments, str):
        return {"tool_name": tool_name, "status": "error", "error": arguments}
    return tool_name, arguments


async def answer_turn(
    calls: Sequence[ChatCompletionMessageToolCallUnion], table: FunctionTable, tools: ToolCaller, budget: ToolBudget
) -> list[JsonObject]:
    """The answers to one turn's tool calls, in the model's order: its calls are independent of each other,
    so they run together (``call_many``); the output budget is spent in the model's order."""
    prepared = [_prepare(call, table, budget) for call in calls]
    to_run = [item for item in prepared if isinstance(item, tuple)]
    # ToolBlockedError propagates: a blocked tool ends the attempt.
    results = iter(await tools.call_many(to_run)) if to_run else iter(())
    return [item if isinstance(item, dict) else feedback(next(results), budget) for item in prepared]


async def run_tool_loop(
    endpoint: ChatEndpoint,
    *,
    model: str,
    messages: list[JsonObject],
    table: FunctionTable,
    tools: ToolCaller,
    budget: ToolBudget,
    usage: Usage,
) -> str:
    """Turns until the model answers without tool calls, or the budget forces a final turn; its text."""
    offered = bool(table.definitions)
    while True:
        offer = table.definitions if offered and budget.open else None
        message = await endpoint.complete(
            role="executor",
            model=model,
            messages=messages,
            usage=usage,
            tools=offer,
            structured=offer is None,
            tool_names=table.tool_names,
        )
        if offer is None or not message.tool_calls:
            return message.content or ""
        messages.append(_assistant_turn(message))
        answers = await answer_turn(message.tool_calls, table, tools, budget)
        for call, result in zip(message.tool_calls, answers, strict=True):
            messages.append({"role": "tool", "tool_call_id": call.id, "content": _dumps(result)})
        if not budget.open:
            messages.append({"role": "user", "content": FINAL_TURN})
