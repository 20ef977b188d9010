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
  The pair passes (R-GK-5), the ceiling is LOW_CONFID, and the guarded Verifier never lets a claim resting
  on it be more than unsupported (``verification.classification_ceiling``): such text is never shown as a fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import EnumType, enum_short_name, value_text
from diagnosis_server.gatekeeper.pointer import PointerError, resolve_value
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


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """The result of the evidence rules on one pair: a failure, a warning, or a clean pass."""

    failed_rule: str | None = None
    warning_rule: str | None = None
    message: str = ""


PASSED = PairOutcome()


class _Located:
    """The value a pointer designates, as text, with its folded form computed on first need."""

    __slots__ = ("_folded", "_instruction", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._folded: str | None = None
        self._instruction: bool | None = None

    @property
    def instruction(self) -> bool:
        if self._instruction is None:
            self._instruction = reads_as_instruction(self.text)
        return self._instruction

    @property
    def folded(self) -> str:
        if self._folded is None:
            self._folded = fold(self.text)
        return self._folded


class EvidenceIndex:
    """This run's invocations, indexed once by id. A pointer is resolved in the recorded output itself,
    converting only the value it designates.

    Resolved pointers are cached per (invocation id, raw path), so that the cost of a check stays
    linear in the number of bindings whatever the size of the outputs.
    """

    __slots__ = ("_by_id", "_duplicates", "_located", "_refs", "_run_id")

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
        self._located: dict[tuple[str, str], _Located | str] = {}

    def check(self, source_id: str, tool_name: str, raw_path: str, matched_text: str) -> PairOutcome:
        """Runs ``evidence.invocation_ref``, ``evidence.raw_path`` and ``evidence.matched_text`` in order."""
        ref_key = (source_id, tool_name)
        if ref_key in self._refs:
            refused = self._refs[ref_key]
        else:
            refused = self._refs[ref_key] = self._check_ref(source_id, tool_name)
        if refused is not None:
            return refused
        located = self._located.get((source_id, raw_path))
        if located is None:
            located = self._locate(source_id, raw_path)
        if isinstance(located, str):
            return PairOutcome(RAW_PATH, message=located)
        if not matched_text.strip():
            return PairOutcome(MATCHED_TEXT, message="matched_text is empty")
        if matched_text in located.text:
            outcome = PASSED
        elif fold(matched_text) in located.folded:
            outcome = PairOutcome(
                warning_rule=MATCHED_TEXT,
                message="matched_text matches only after case folding and whitespace collapsing",
            )
        else:
            return PairOutcome(MATCHED_TEXT, message=f"matched_text is not found at raw_path {raw_path!r}")
        if located.instruction:
            return PairOutcome(
                warning_rule=INSTRUCTION_TEXT,
                message=f"the value at raw_path {raw_path!r} reads as an instruction, not as an observation",
            )
        return outcome

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

    def _locate(self, source_id: str, raw_path: str) -> _Located | str:
        invocation = self._by_id[source_id]
        output = invocation.output if invocation.HasField("output") else None
        located: _Located | str
        try:
            # Walks the recorded Value: only the value at the pointer is converted, not the whole output.
            located = _Located(value_text(resolve_value(output, raw_path)))
        except PointerError as exc:
            located = f"raw_path does not resolve in invocation {source_id!r}: {exc}"
        self._located[(source_id, raw_path)] = located
        return located


def fold(text: str) -> str:
    """Case-folded, with every run of whitespace collapsed to one space (and none at the ends)."""
    return " ".join(text.casefold().split())
