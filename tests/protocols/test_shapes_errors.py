"""How a refused document is told (``protocols.shapes``): the field's path, the words of what is wrong, which
error is told first, and an enum's words. These are the ``error`` of every agent parser (R-C-1)."""

from __future__ import annotations

import math
from typing import Annotated, Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper
from pydantic import TypeAdapter, ValidationError

from diagnosis_server.protocols import shapes
from diagnosis_server.protocols.executor import ExecutorReply
from diagnosis_server.protocols.verifier import VerifierReply

CLAIM = {"claim_id": "c1", "statement": "checkout pods were OOMKilled", "critical": True, "status": "confirmed"}
EXECUTOR = {"contract": "executor_evidence_v2", "claims": [CLAIM]}
VERIFIER = {"claim_checks": [], "verdict": "PASS", "groundedness_score": 0.5}


def _one_word_enum() -> Any:
    """``Mode``: ``MODE_UNSPECIFIED = 0`` and one word, ``MODE_ONLY = 1`` (no contract enum has a single word)."""
    file = descriptor_pb2.FileDescriptorProto(name="tests/one_word.proto", package="tests.v1", syntax="proto3")
    enum = file.enum_type.add(name="Mode")
    enum.value.add(name="MODE_UNSPECIFIED", number=0)
    enum.value.add(name="MODE_ONLY", number=1)
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(file.SerializeToString())
    return EnumTypeWrapper(pool.FindEnumTypeByName("tests.v1.Mode"))


MODE = _one_word_enum()


def _claim(**changes: Any) -> dict[str, Any]:
    return {**EXECUTOR, "claims": [{**CLAIM, **changes}]}


def _refusal(model: type[shapes.Shape], document: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(document)
    return caught.value


@pytest.mark.requirement("R-C-1")
@pytest.mark.parametrize(
    ("model", "document", "message"),
    [
        (ExecutorReply, [], "expected an object, got array"),
        (ExecutorReply, {**EXECUTOR, "k" * 80: 1}, "k" * 80 + ": unknown field"),
        (ExecutorReply, {**EXECUTOR, "k" * 81: 1}, "k" * 77 + "...: unknown field"),
        (ExecutorReply, _claim(critical=1, note="x"), "claims[0].note: unknown field"),
        (VerifierReply, {**VERIFIER, "groundedness_score": math.nan}, "groundedness_score: expected a finite number"),
        (
            VerifierReply,
            {**VERIFIER, "verdict": b"PASS"},
            "verdict: expected 'PASS', 'LOW_CONFID' or 'REJECT', got \"b'PASS'\"",
        ),
    ],
    ids=[
        "not-an-object-has-no-path",
        "an-80-character-key-is-shown-whole",
        "a-longer-key-is-cut",
        "an-unknown-key-is-told-before-a-fault-in-its-object",
        "a-non-finite-number",
        "a-value-json-cannot-show-is-shown-as-text",
    ],
)
def test_a_refused_document_is_told_in_these_words(model: type[shapes.Shape], document: object, message: str) -> None:
    assert shapes.validate(model, document) == message


def test_a_prefix_is_put_before_every_path() -> None:
    """``validate``, ``describe`` and ``path_of`` name a field under ``prefix``; without one, from the top."""
    document = {**EXECUTOR, "claims": [{}]}
    assert shapes.validate(ExecutorReply, document, prefix="reply") == "reply.claims[0].claim_id: missing"
    refusal = _refusal(ExecutorReply, _claim(critical=1))
    assert shapes.describe(refusal) == "claims[0].critical: expected a boolean, got number"
    assert shapes.describe(refusal, "reply") == "reply.claims[0].critical: expected a boolean, got number"
    assert shapes.path_of(("claims", 0, "critical")) == "claims[0].critical"
    assert shapes.path_of(("claims", 0, "critical"), "reply") == "reply.claims[0].critical"


@pytest.mark.parametrize(
    ("document", "error"),
    [
        (
            _claim(critical=1, note="x"),
            {
                "type": "extra_forbidden",
                "loc": ("claims", 0, "note"),
                "msg": "Extra inputs are not permitted",
                "input": "x",
            },
        ),
        (
            _claim(status="sure"),
            {
                "type": "contract",
                "loc": ("claims", 0, "status"),
                "msg": "expected 'confirmed' or 'hypothesis', got \"sure\"",
                "input": "sure",
            },
        ),
    ],
    ids=["the-unknown-key-of-the-faulty-object", "a-contract-error"],
)
def test_first_error_is_the_error_told(document: dict[str, Any], error: dict[str, Any]) -> None:
    """The error details as pydantic gives them, without documentation links; a contract's own error has the
    type ``contract``."""
    assert shapes.first_error(_refusal(ExecutorReply, document)) == error


def test_an_enum_of_one_word_reads_it_and_names_it_alone() -> None:
    """The type is built here, not at import: its schema and validator are made when it is built."""
    mode = TypeAdapter(Annotated[int, shapes.ProtoEnum(MODE, lower=True)])
    assert mode.json_schema() == {"type": "string", "enum": ["only"]}
    assert mode.validate_python("Only") == 1
    with pytest.raises(ValidationError) as caught:
        mode.validate_python("both")
    assert shapes.describe(caught.value) == "expected 'only', got \"both\""
