"""The contract models: one pydantic model per agent output shape, its schema what the endpoint is given.

Enum words come from the proto descriptors; unknown keys are refused at every level; the strict schemas
are legal for OpenAI's strict mode (every object closed, every property required, no references). That
each parser still gives the same verdict as before is pinned by ``snapshots/perturbations.jsonl``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import AGENT_ROLES
from diagnosis_server.agents.openai.schemas import contract_schema
from diagnosis_server.json_schema import schema_of
from diagnosis_server.protocols import shapes
from diagnosis_server.protocols.composer import ComposerReply, parse_composer_output
from diagnosis_server.protocols.executor import ExecutorReply
from diagnosis_server.protocols.planner import PlannerReply
from diagnosis_server.protocols.verifier import VerifierReply
from diagnosis_server.tools.arguments import Param, arguments_model, check_arguments, input_schema
from diagnosis_server.tools.base import ToolError


def _names(enum: Any, *, lower: bool) -> list[str]:
    prefix = {
        "ClaimStatus": "CLAIM_STATUS_",
        "ClaimClassification": "CLAIM_CLASSIFICATION_",
        "Verdict": "VERDICT_",
        "FactSupport": "FACT_SUPPORT_",
    }[enum.DESCRIPTOR.name]
    names = [v.name.removeprefix(prefix) for v in enum.DESCRIPTOR.values if v.number]
    return [n.lower() for n in names] if lower else names


def _nodes(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for key, value in schema.items():
            if key == "properties":
                for sub in value.values():
                    yield from _nodes(sub)
            else:
                yield from _nodes(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _nodes(item)


def test_enum_words_are_the_proto_descriptors() -> None:
    executor = schema_of(ExecutorReply)["properties"]["claims"]["items"]["properties"]
    assert executor["status"]["enum"] == _names(contracts_pb2.ClaimStatus, lower=True) == ["confirmed", "hypothesis"]
    verifier = schema_of(VerifierReply)["properties"]
    assert verifier["verdict"]["enum"] == _names(contracts_pb2.Verdict, lower=False)
    check = verifier["claim_checks"]["items"]["properties"]
    assert check["classification"]["enum"] == _names(contracts_pb2.ClaimClassification, lower=True)
    assert "contradicted" in check["classification"]["enum"] and "unspecified" not in check["classification"]["enum"]
    fact = verifier["facts_checked"]["items"]["properties"]
    assert fact["classification"]["enum"] == _names(contracts_pb2.FactSupport, lower=True)


@pytest.mark.requirement("R-C-1")
@pytest.mark.parametrize("role", AGENT_ROLES)
def test_strict_schemas_are_legal_for_openai_strict_mode(role: Any) -> None:
    schema, strict = contract_schema(role, ["k8s.events"])
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and "title" not in schema
    objects = [node for node in _nodes(schema) if node.get("type") == "object"]
    assert objects
    for node in objects:
        if strict:
            assert node["additionalProperties"] is False, node
            assert sorted(node["required"]) == sorted(node["properties"]), node
        elif "properties" in node:
            assert node["additionalProperties"] is False, node
    if strict:
        assert '"next_calls"' not in text  # free-form arguments: not offered under strict mode


def test_tool_names_become_the_enum_of_tool_name_fields() -> None:
    planner, _ = contract_schema("planner", ["k8s.events", "logs.search"])
    assert planner["properties"]["steps"]["items"]["properties"]["tool_name"]["enum"] == ["k8s.events", "logs.search"]  # type: ignore[index, call-overload]
    bare, _ = contract_schema("planner")
    assert "enum" not in bare["properties"]["steps"]["items"]["properties"]["tool_name"]  # type: ignore[index, call-overload, operator]


VALID: dict[type[shapes.Shape], dict[str, Any]] = {
    PlannerReply: {"steps": [{"tool_name": "k8s.events", "arguments": {}, "purpose": "p"}]},
    ExecutorReply: {
        "contract": "executor_evidence_v2",
        "claims": [{"claim_id": "c1", "statement": "s", "critical": True, "status": "confirmed"}],
    },
    VerifierReply: {
        "claim_checks": [{"claim_id": "c1", "classification": "unsupported"}],
        "verdict": "PASS",
        "groundedness_score": 0.5,
    },
    ComposerReply: {"summary": "s", "confirmed_facts": [{"text": "t", "claim_ids": ["c1"]}]},
}


@pytest.mark.parametrize("model", list(VALID), ids=lambda m: m.__name__)
def test_extra_keys_are_refused_at_every_level(model: type[shapes.Shape]) -> None:
    document = VALID[model]
    assert not isinstance(shapes.validate(model, document, context=["k8s.events"]), str)
    top = shapes.validate(model, {**document, "surprise": 1}, context=["k8s.events"])
    assert top == "surprise: unknown field"
    name, items = next((k, v) for k, v in document.items() if isinstance(v, list))
    nested = shapes.validate(model, {**document, name: [{**items[0], "extra": 1}]}, context=["k8s.events"])
    assert nested == f"{name}[0].extra: unknown field"


def test_an_outer_unknown_key_is_told_before_an_inner_fault() -> None:
    document = {"summary": "s", "zz": 1, "confirmed_facts": [{"text": 3}]}
    assert shapes.validate(ComposerReply, document) == "zz: unknown field"
    assert parse_composer_output(json.dumps({"summary": "s", "confirmed_facts": [{"text": 3}]})).error == (
        "confirmed_facts[0].text: expected a string, got number"
    )


def test_types_are_strict() -> None:
    claim = {"claim_id": "c1", "statement": "s", "critical": 1, "status": "confirmed"}
    refused = shapes.validate(ExecutorReply, {"contract": "executor_evidence_v2", "claims": [claim]})
    assert refused == "claims[0].critical: expected a boolean, got number"
    score = shapes.validate(VerifierReply, {**VALID[VerifierReply], "groundedness_score": True})
    assert score == "groundedness_score: expected a number, got boolean"
    verdict = shapes.validate(VerifierReply, {**VALID[VerifierReply], "verdict": "UNSPECIFIED"})
    assert verdict == "verdict: expected 'PASS', 'LOW_CONFID' or 'REJECT', got \"UNSPECIFIED\""


# ------------------------------------------------------------------------------ tool arguments
PARAMS = (
    Param("query", "string", "The query.", required=True),
    Param("limit", "integer", "Most lines.", minimum=1, maximum=10),
    Param("direction", "string", "Order.", enum=("backward", "forward")),
    Param("previous", "boolean", "Previous container."),
)


def test_tool_argument_schema_is_the_models() -> None:
    schema = input_schema(PARAMS)
    assert schema == {
        "type": "object",
        "additionalProperties": False,
        "required": ["query"],
        "properties": {
            "query": {"type": "string", "description": "The query.", "minLength": 1},
            "limit": {"type": "integer", "description": "Most lines.", "minimum": 1, "maximum": 10},
            "direction": {"type": "string", "description": "Order.", "enum": ["backward", "forward"], "minLength": 1},
            "previous": {"type": "boolean", "description": "Previous container."},
        },
    }
    assert arguments_model(PARAMS) is arguments_model(PARAMS)  # built once a declaration


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": "q", "surprise": 1}, "t: unknown argument(s) surprise; allowed: query, limit, direction, previous"),
        ({}, "t: missing required argument 'query'"),
        ({"query": None}, "t: missing required argument 'query'"),
        ({"query": "  "}, "t: argument 'query' must not be empty"),
        ({"query": True}, "t: argument 'query' must be a string, got True"),
        ({"query": "q", "limit": 0}, "t: argument 'limit' must be at least 1, got 0"),
        ({"query": "q", "limit": 11}, "t: argument 'limit' must be at most 10, got 11"),
        ({"query": "q", "limit": "5"}, "t: argument 'limit' must be an integer, got '5'"),
        ({"query": "q", "direction": "up"}, "t: argument 'direction' must be one of backward, forward, got 'up'"),
        ({"query": "q", "previous": "yes"}, "t: argument 'previous' must be true or false, got 'yes'"),
    ],
)
def test_tool_arguments_are_checked_by_the_model(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        check_arguments("t", PARAMS, arguments)
    assert str(caught.value) == message


def test_tool_arguments_normalise_as_declared() -> None:
    checked = check_arguments("t", PARAMS, {"query": 42, "direction": " FORWARD ", "limit": None})
    assert checked == {"query": "42", "direction": "forward"}
    verbatim = (Param("query", "string", "Kept as given.", verbatim=True),)
    assert check_arguments("t", verbatim, {"query": " 502 "}) == {"query": " 502 "}
    with pytest.raises(ToolError, match="must be a string"):
        check_arguments("t", verbatim, {"query": 502})
