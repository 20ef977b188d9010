"""JSON schemas of the four agent contracts, for the endpoint's ``response_format``.

Each is its protocol model's ``model_json_schema()`` (``protocols.shapes.schema_of``), post-processed for
OpenAI's structured output: every object closed and every property required, the run's tool names as the
enum of a tool-name field, and the fields marked ``UNOFFERED`` left out (strict mode would make them
required; the parsers read them as absent). The parsers stay the judges. Executor, Verifier and Composer
schemas are *strict*. The Planner schema is not: a step's ``arguments`` is a free-form object, which
strict mode cannot express. For the same reason the gaps' optional ``next_calls`` (free-form arguments)
are not offered: a model under ``json_schema`` states gaps without suggested calls, and the answer's next
steps then come from templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from diagnosis_server.agents.base import AgentRole
from diagnosis_server.conversions import JsonObject
from diagnosis_server.json_schema import schema_of
from diagnosis_server.protocols.composer import ComposerReply
from diagnosis_server.protocols.executor import ExecutorReply
from diagnosis_server.protocols.planner import PlannerReply
from diagnosis_server.protocols.shapes import TOOL_NAMES, UNOFFERED, Shape
from diagnosis_server.protocols.verifier import VerifierReply

ResponseFormatKind = Literal["json_schema", "json_object", "none"]

SCHEMA_NAMES: dict[AgentRole, str] = {
    "planner": "planner_plan",
    "executor": "executor_evidence_v2",
    "verifier": "verifier_claim_checks",
    "composer": "composer_answer",
}

_MARKS = frozenset({TOOL_NAMES, UNOFFERED, "description", "properties"})

# role -> (its reply model, whether its schema is strict)
_CONTRACTS: dict[AgentRole, tuple[type[Shape], bool]] = {
    "planner": (PlannerReply, False),
    "executor": (ExecutorReply, True),
    "verifier": (VerifierReply, True),
    "composer": (ComposerReply, True),
}


def _offered(node: Any, tool_names: Sequence[str]) -> Any:
    """Objects closed with every property required, unoffered fields left out, tool names listed.

    A model's docstring (``description``) is its reader's, not the endpoint's: it is left out too.
    """
    if isinstance(node, list):
        return [_offered(item, tool_names) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _offered(value, tool_names) for key, value in node.items() if key not in _MARKS}
    if node.get(TOOL_NAMES) and tool_names:
        out["enum"] = list(tool_names)
    properties = node.get("properties")
    if node.get("type") == "object" and isinstance(properties, dict):
        kept = {name: _offered(sub, tool_names) for name, sub in properties.items() if not sub.get(UNOFFERED)}
        out.update(properties=kept, required=list(kept), additionalProperties=False)
    return out


def contract_schema(role: AgentRole, tool_names: Sequence[str] = ()) -> tuple[JsonObject, bool]:
    """The role's contract schema and whether it is strict."""
    model, strict = _CONTRACTS[role]
    schema: JsonObject = _offered(schema_of(model), tool_names)
    return schema, strict


def response_format(role: AgentRole, kind: ResponseFormatKind, tool_names: Sequence[str] = ()) -> JsonObject | None:
    """The ``response_format`` request field for ``kind``; None when none is sent."""
    if kind == "none":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    schema, strict = contract_schema(role, tool_names)
    return {"type": "json_schema", "json_schema": {"name": SCHEMA_NAMES[role], "schema": schema, "strict": strict}}
