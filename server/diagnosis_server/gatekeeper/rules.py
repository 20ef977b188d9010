"""The Gatekeeper's rules, and the per-pair evidence checks behind the three evidence rules.

Rules, in the order a (binding, source invocation id) pair is checked; a pair stops at its first failure:

* ``schema.executor_v2``: removed fields present (R-GK-1), a confirmed claim without bindings (R-GK-2),
  a malformed claim or binding.
* ``evidence.invocation_ref``: the invocation is not one of this run's (R-GK-3), or its persisted tool
  name differs from the binding's (R-GK-4).
* ``evidence.raw_path``: the binding's JSON Pointer does not resolve in the invocation's output.
* ``evidence.matched_text``: the matched text is not found in the value at the pointer. A match found
  only after case folding and whitespace collapsing is a warning, not a failure.
* ``evidence.instruction_text`` (a warning): the value at the pointer reads as an instruction to the
  diagnosis ("ignore previous instructions, the root cause is ..."), not as an observation of the system.
  The pair passes (R-GK-5) and the guarded Verifier never lets a claim resting on it be more than unsupported
  (``verification.classification_ceiling``): such text is never shown as a fact. It excludes only the claims
  bound to it: the run's ceiling stays what the other findings make it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, cast

from google.protobuf import struct_pb2

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import EnumType, enum_short_name, from_value, value_text
from diagnosis_server.gatekeeper.pointer import PointerError, locate
from diagnosis_server.text.language import reads_as_instruction

SCHEMA = "schema.executor_v2"
INVOCATION_REF = "evidence.invocation_ref"
RAW_PATH = "evidence.raw_path"
MATCHED_TEXT = "evidence.matched_text"
INSTRUCTION_TEXT = "evidence.instruction_text"
RULES: tuple[str, ...] = (SCHEMA, INVOCATION_REF, RAW_PATH, MATCHED_TEXT, INSTRUCTION_TEXT)

_INVOCATION_STATUS: EnumType = cast(Any, contracts_pb2.ToolInvocationStatus)

# Invocations whose output holds no data of the tool: nothing in them can be evidence. A TRUNCATED
# invocation is not one of them: its output is the upstream's JSON with trailing array elements dropped,
# so what is kept is real upstream data at its own pointers.
_NO_OUTPUT_STATUSES = frozenset(
    {
        contracts_pb2.TOOL_INVOCATION_STATUS_ERROR,
        contracts_pb2.TOOL_INVOCATION_STATUS_TIMEOUT,
        contracts_pb2.TOOL_INVOCATION_STATUS_BLOCKED,
    }
)


class PairOutcome(NamedTuple):
    """The result of the evidence rules on one pair: a failure, a warning, or a clean pass.

    A tuple, so that the Gatekeeper's loop unpacks it in one step.
    """

    failed_rule: str | None = None
    warning_rule: str | None = None
    message: str = ""


PASSED = PairOutcome()
_UNCHECKED = PairOutcome(message="not checked yet")  # a marker: a checked reference that passed is cached as None


class EvidenceIndex:
    """This run's invocations, indexed once by id. A pointer is resolved in the recorded output itself,
    converting only the value it designates.

    Resolved pointers are cached per (invocation id, raw path), so that the cost of a check stays
    linear in the number of bindings whatever the size of the outputs.
    """

    __slots__ = ("_by_id", "_duplicates", "_folded", "_instructions", "_located", "_refs", "_run_id")

    def __init__(self, invocations: Sequence[contracts_pb2.ToolInvocation], *, run_id: str) -> None:
        self._run_id = run_id
        self._by_id: dict[str, contracts_pb2.ToolInvocation] = {}
        self._duplicates: set[str] = set()
        for invocation in invocations:
            if invocation.invocation_id in self._by_id:
                self._duplicates.add(invocation.invocation_id)
            else:
                self._by_id[invocation.invocation_id] = invocation
        self._refs: dict[tuple[str, str], PairOutcome | None] = {}
        # The text at each resolved pointer (or the pair's evidence.raw_path failure); per text, whether it
        # reads as an instruction and its folded form, computed on first need (a pair whose matched text is
        # not found needs neither).
        self._located: dict[tuple[str, str], str | PairOutcome] = {}
        self._instructions: dict[str, bool] = {}
        self._folded: dict[str, str] = {}

    def check(self, source_id: str, tool_name: str, raw_path: str, matched_text: str) -> PairOutcome:
        """Runs ``evidence.invocation_ref``, ``evidence.raw_path`` and ``evidence.matched_text`` in order, then
        ``evidence.instruction_text`` on a pair that passed them (R-GK-5).

        The Gatekeeper's hot path (once per pair): the per-run caches are read inline.
        """
        ref_key = (source_id, tool_name)
        refused = self._refs.get(ref_key, _UNCHECKED)
        if refused is _UNCHECKED:
            refused = self._refs[ref_key] = self._check_ref(source_id, tool_name)
        if refused is not None:
            return refused
        located_key = (source_id, raw_path)
        text = self._located.get(located_key)
        if text is None:
            text = self._located[located_key] = self._locate(source_id, raw_path)
        if isinstance(text, PairOutcome):
            return text  # evidence.raw_path: the pointer does not resolve
        if not matched_text.strip():
            return PairOutcome(MATCHED_TEXT, message="matched_text is empty")
        if matched_text in text:
            outcome = PASSED
        elif fold(matched_text) in self._fold(text):
            outcome = PairOutcome(
                warning_rule=MATCHED_TEXT,
                message="matched_text matches only after case folding and whitespace collapsing",
            )
        else:
            return PairOutcome(MATCHED_TEXT, message=f"matched_text is not found at raw_path {raw_path!r}")
        instruction = self._instructions.get(text)
        if instruction is None:
            instruction = self._instructions[text] = reads_as_instruction(text)
        if instruction:
            return PairOutcome(
                warning_rule=INSTRUCTION_TEXT,
                message=f"the value at raw_path {raw_path!r} reads as an instruction, not as an observation",
            )
        return outcome

    def _fold(self, text: str) -> str:
        folded = self._folded.get(text)
        if folded is None:
            folded = self._folded[text] = fold(text)
        return folded

    def _check_ref(self, source_id: str, tool_name: str) -> PairOutcome | None:
        """``evidence.invocation_ref`` (R-GK-3, R-GK-4): None when the pair may go on to the next rule."""
        invocation = self._by_id.get(source_id)
        if invocation is None or source_id in self._duplicates:
            return PairOutcome(INVOCATION_REF, message=self._ref_message(source_id))
        if invocation.run_id and invocation.run_id != self._run_id:
            return PairOutcome(
                INVOCATION_REF,
                message=f"invocation {source_id!r} belongs to run {invocation.run_id!r}, not {self._run_id!r}",
            )
        if invocation.tool_name != tool_name:
            return PairOutcome(
                INVOCATION_REF,
                message=f"tool_name {tool_name!r} differs from the invocation's tool {invocation.tool_name!r}",
            )
        if invocation.status in _NO_OUTPUT_STATUSES:
            status = enum_short_name(_INVOCATION_STATUS, invocation.status, lower=True)
            return PairOutcome(INVOCATION_REF, message=f"invocation {source_id!r} has no tool output (status {status})")
        return None

    def _ref_message(self, source_id: str) -> str:
        if source_id in self._duplicates:
            return f"invocation id {source_id!r} is not unique among this run's invocations"
        if not source_id:
            return "source invocation id is empty"
        return f"invocation {source_id!r} is not one of this run's tool invocations"

    def _locate(self, source_id: str, raw_path: str) -> str | PairOutcome:
        """The value at ``raw_path`` in the invocation's output, or the pair's ``evidence.raw_path`` failure."""
        invocation = self._by_id[source_id]
        output = invocation.output if invocation.HasField("output") else None
        try:
            # Walks the recorded Value: only the value at the pointer is converted, not the whole output.
            value = locate(output, raw_path)
        except PointerError as exc:
            return PairOutcome(RAW_PATH, message=f"raw_path does not resolve in invocation {source_id!r}: {exc}")
        return _text_of(value)


def _text_of(value: struct_pb2.Value | None) -> str:
    """``value_text(from_value(value))`` (None: JSON null): a string is read as it is, anything else as JSON."""
    if value is None:
        return value_text(None)
    text = value.string_value  # "" unless the Value is a string
    if text or value.HasField("string_value"):
        return text
    return value_text(from_value(value))


def fold(text: str) -> str:
    """Case-folded, with every run of whitespace collapsed to one space (and none at the ends)."""
    return " ".join(text.casefold().split())
