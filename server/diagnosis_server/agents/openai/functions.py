"""Tools as OpenAI functions: names mapped reversibly, schemas passed through.

OpenAI function names must match ``^[a-zA-Z0-9_-]{1,64}$``; tool names carry dots (``logs.search``).
A dot becomes ``__`` (``logs__search``) and any other character outside the alphabet becomes ``_``.
The reverse is a table built from the offered tools, so it is exact even when two tool names would map
alike (the later one gets a numeric suffix). A function name the table does not hold is turned back by
the dot rule alone, so the tool runner records it (and blocks it) under the name the model meant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from diagnosis_server.conversions import JsonObject, JsonValue

MAX_NAME = 64
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
_DEFAULT_PARAMETERS: JsonObject = {"type": "object", "properties": {}}


def function_name(tool_name: str) -> str:
    """``logs.search`` -> ``logs__search`` (at most 64 characters; never empty)."""
    name = _INVALID.sub("_", tool_name.replace(".", "__"))[:MAX_NAME]
    return name or "tool"


def guess_tool_name(name: str) -> str:
    """The tool name a function name stands for by the dot rule alone (``a__b`` -> ``a.b``)."""
    return name.replace("__", ".")


@dataclass(frozen=True, slots=True)
class FunctionTable:
    """The functions offered to the model and the tool each one calls."""

    definitions: list[JsonObject]
    tool_by_function: Mapping[str, str]

    def tool_name(self, function: str) -> str:
        return self.tool_by_function.get(function) or guess_tool_name(function)

    @property
    def tool_names(self) -> list[str]:
        return list(self.tool_by_function.values())


def function_table(specs: Iterable[Mapping[str, JsonValue]]) -> FunctionTable:
    """Function definitions for tool specs given as JSON (``name``, ``description``, ``input_schema``).

    A spec without a usable name is skipped; a missing or non-object schema becomes an open object.
    """
    definitions: list[JsonObject] = []
    tool_by_function: dict[str, str] = {}
    for spec in specs:
        tool = spec.get("name")
        if not isinstance(tool, str) or not tool.strip() or tool in tool_by_function.values():
            continue
        base = function_name(tool)
        name, suffix = base, 2
        while name in tool_by_function:
            tail = f"_{suffix}"
            name, suffix = base[: MAX_NAME - len(tail)] + tail, suffix + 1
        tool_by_function[name] = tool
        description = spec.get("description")
        parameters = spec.get("input_schema")
        definitions.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": description if isinstance(description, str) else "",
                    "parameters": parameters if isinstance(parameters, dict) else dict(_DEFAULT_PARAMETERS),
                },
            }
        )
    return FunctionTable(definitions=definitions, tool_by_function=tool_by_function)
