"""Evaluation cases: replay recorded tool outputs and agent outputs through the real graph, check `expect`.

A case file is JSON Lines; each case holds ``case_id``, ``question``, ``tool_invocations`` (with their
``invocation_id``; optional ``cycle`` 1 or 2, and ``foreign: true`` for an invocation stored under
another run's id), ``agent_outputs`` (raw strings per agent, replayed attempt by attempt; ``"!timeout"``
and ``"!refuse"`` stand for those failures) and an optional ``expect``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import AgentRole
from diagnosis_server.agents.scripted import ScriptedProvider
from diagnosis_server.conversions import JsonObject, JsonValue, enum_short_name, message_to_dict, to_struct, to_value
from diagnosis_server.graph.context import ToolEnvironment
from diagnosis_server.graph.orchestrator import Orchestrator, new_run_id
from diagnosis_server.store import RunStore, open_repository
from diagnosis_server.text.normalize import compact, normalize
from diagnosis_server.tools.base import ToolError, Toolset
from diagnosis_server.tools.builtin import TOOL_NAMES
from diagnosis_server.validation_errors import first_problem


class CaseFileError(ValueError):
    """A case file that cannot be read: the message names the line and the reason."""


class CaseInvocation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    invocation_id: str = Field(min_length=1)
    tool_name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    output: Any = None
    cycle: int = Field(default=1, ge=1, le=2)
    foreign: bool = False


class AgentOutputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    planner: list[str] = Field(default_factory=list)
    executor: list[str] = Field(default_factory=list)
    verifier: list[str] = Field(default_factory=list)
    composer: list[str] = Field(default_factory=list)

    @field_validator("planner", "executor", "verifier", "composer", mode="before")
    @classmethod
    def _raw_strings(cls, value: Any) -> Any:
        # An agent output given as a JSON object is replayed as its JSON text.
        if isinstance(value, list):
            return [v if isinstance(v, str) else json.dumps(v) for v in value]
        return value


class EvalCase(BaseModel):
    model_config = ConfigDict(extra="ignore")

    case_id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    scenario: str = ""
    tool_invocations: list[CaseInvocation] = Field(default_factory=list)
    agent_outputs: AgentOutputs
    expect: dict[str, Any] | None = None
    requirements: list[str] = Field(default_factory=list)
    rule_evaluation: dict[str, Any] | None = None
    aiops_rule_evaluation: dict[str, Any] | None = None


def read_cases(path: Path) -> list[EvalCase]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CaseFileError(f"{path}: {exc.strerror or exc}") from exc
    cases: list[EvalCase] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            case = EvalCase.model_validate_json(line)
        except ValidationError as exc:
            raise CaseFileError(f"{path}:{number}: {first_problem(exc, 'case')}") from exc
        if case.case_id in seen:
            raise CaseFileError(f"{path}:{number}: case_id {case.case_id!r} appears twice")
        seen.add(case.case_id)
        cases.append(case)
    if not cases:
        raise CaseFileError(f"{path}: no cases")
    return cases


class _ReplayOnlyTool:
    """A tool a case names: planners may plan it; its outputs come from the case's recordings."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.description = f"{name} (replayed from recorded outputs)"
        self.input_schema: JsonObject = {"type": "object"}

    async def call(self, arguments: JsonObject) -> JsonValue:
        raise ToolError(f"{self.name} is replay-only in evaluations")


def _case_tools(case: EvalCase) -> ToolEnvironment:
    names = dict.fromkeys([*TOOL_NAMES, *(inv.tool_name for inv in case.tool_invocations)])
    return ToolEnvironment(toolset=Toolset(_ReplayOnlyTool(name) for name in names))


def _invocation(inv: CaseInvocation, run_id: str) -> contracts_pb2.ToolInvocation:
    return contracts_pb2.ToolInvocation(
        invocation_id=inv.invocation_id,
        run_id=run_id,
        tool_name=inv.tool_name,
        arguments=to_struct(inv.arguments),
        output=to_value(inv.output),
        status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
        cycle=inv.cycle,
    )


@dataclass(frozen=True, slots=True)
class CaseResult:
    case_id: str
    run: run_pb2.DiagnosisRun
    report: JsonObject
    expect_ok: bool
    mismatches: list[str]


async def run_case(case: EvalCase, repository: RunStore) -> CaseResult:
    run_id = new_run_id()
    foreign_run_id = f"{run_id}-other"
    own = [inv for inv in case.tool_invocations if not inv.foreign]
    foreign = [inv for inv in case.tool_invocations if inv.foreign]
    if foreign:
        other = run_pb2.DiagnosisRun(run_id=foreign_run_id, status=run_pb2.RUN_STATUS_RUNNING, question="other run")
        other.created_at.GetCurrentTime()
        await repository.create_run(other)
        for inv in foreign:
            await repository.add_tool_invocation(_invocation(inv, foreign_run_id))
        other.status = run_pb2.RUN_STATUS_SUCCESS
        await repository.finish_run(other)
    by_cycle: dict[int, list[contracts_pb2.ToolInvocation]] = {}
    for inv in own:
        by_cycle.setdefault(inv.cycle, []).append(_invocation(inv, run_id))
    outputs: dict[AgentRole, list[str]] = {
        "planner": case.agent_outputs.planner,
        "executor": case.agent_outputs.executor,
        "verifier": case.agent_outputs.verifier,
        "composer": case.agent_outputs.composer,
    }
    orchestrator = Orchestrator(
        store=repository,
        provider=ScriptedProvider(outputs, invocations_by_cycle=by_cycle),
        tools_for=lambda _scenario: _case_tools(case),
    )
    await orchestrator.run(
        question=case.question,
        scenario=case.scenario,
        run_id=run_id,
        rule_evaluation=case.rule_evaluation,
        aiops_rule_evaluation=case.aiops_rule_evaluation,
    )
    stored = await repository.get_run(run_id)
    assert stored is not None, "the run was stored"
    report = case_report(case.case_id, stored)
    mismatches = check_expect(case.expect or {}, report)
    report["expect_ok"] = not mismatches
    report["mismatches"] = list(mismatches)
    return CaseResult(case.case_id, stored, report, not mismatches, mismatches)


async def run_cases(cases: Sequence[EvalCase], *, database_url: str | None = None) -> list[CaseResult]:
    """Each case runs through the real graph with the scripted provider and a throwaway store."""
    with tempfile.TemporaryDirectory(prefix="diagnosis-eval-") as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'eval.db'}"
        repository = await open_repository(url)
        try:
            return [await run_case(case, repository) for case in cases]
        finally:
            await repository.close()


def _short(enum_type: Any, value: int) -> str | None:
    return None if value == 0 else enum_short_name(enum_type, value)


def node_route(run: run_pb2.DiagnosisRun) -> list[str]:
    return [enum_short_name(run_pb2.NodeName, node, lower=True) for node in run.orchestration_trace.path]


def case_report(case_id: str, run: run_pb2.DiagnosisRun) -> JsonObject:
    evaluation = run.self_evaluation.verifier_evaluation
    gk = message_to_dict(evaluation.gatekeeper_result) if evaluation.HasField("gatekeeper_result") else None
    return {
        "case_id": case_id,
        "run_id": run.run_id,
        "route": list(node_route(run)),
        "parse_status": _short(contracts_pb2.ParseStatus, evaluation.executor_output_parse_status),
        "gatekeeper_result": gk,
        "verdict_ceiling": _short(contracts_pb2.Verdict, evaluation.verdict_ceiling),
        "model_verdict": _short(contracts_pb2.Verdict, evaluation.model_verdict)
        if evaluation.HasField("model_verdict")
        else None,
        "effective_verdict": _short(contracts_pb2.Verdict, evaluation.effective_verdict)
        if evaluation.HasField("effective_verdict")
        else None,
        "status": _short(run_pb2.RunStatus, run.status),
        "answer_text": run.answer_text,
        "composer_output": message_to_dict(run.answer) if run.HasField("answer") else None,
        "verifier_evaluation": message_to_dict(evaluation),
        "orchestration_trace": message_to_dict(run.orchestration_trace),
    }


def _norm(value: Any, prefixes: Sequence[str] = ()) -> str:
    text = str(value).strip().upper()
    for prefix in prefixes:
        text = text.removeprefix(prefix)
    return text


_ENUM_PREFIXES = (
    "VERDICT_",
    "GATEKEEPER_STATUS_",
    "GATEKEEPER_SEVERITY_",
    "RUN_STATUS_",
    "NODE_NAME_",
    "NODE_OUTCOME_",
    "COMPOSER_SOURCE_",
    "PARSE_STATUS_",
    "CLAIM_CLASSIFICATION_",
    "FACT_SUPPORT_",
    "CLAIM_STATUS_",
)
_MISSING = object()


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def lookup(document: Any, path: str) -> Any:
    """The value at a dotted path (``gatekeeper_result.errors.0.rule``; a number indexes a list; a last
    segment ``#`` is the length of the list or object there), or ``_MISSING``."""
    value = document
    for segment in path.split("."):
        if segment == "#" and isinstance(value, list | dict):
            value = len(value)
        elif isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.lstrip("-").isdigit() and -len(value) <= int(segment) < len(value):
            value = value[int(segment)]
        else:
            return _MISSING
    return value


def matches(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` is what ``expected`` pins: an object's listed keys match (others are free), a list
    matches element by element at the same length, numbers compare as numbers (proto JSON writes 64-bit
    integers as strings), and strings compare as enum words in any case and form (``PASS``, ``VERDICT_PASS``)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            matches(value, actual[key]) if key in actual else value is None for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(matches(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float):
        try:
            return isinstance(actual, int | float | str) and float(actual) == float(expected)
        except ValueError:
            return False
    if expected is None:
        return actual is None
    return isinstance(actual, str | int | float) and _norm(expected, _ENUM_PREFIXES) == _norm(actual, _ENUM_PREFIXES)


def _pins(expected: Any) -> list[tuple[str, Any]]:
    """``evaluation_has``'s forms as (path, expected value or _MISSING): a path or a list of paths (present),
    an object of path -> value, or a list mixing paths and such objects."""
    pins: list[tuple[str, Any]] = []
    for item in _as_list(expected):
        if isinstance(item, dict):
            pins.extend((str(path), value) for path, value in item.items())
        else:
            pins.append((str(item), _MISSING))
    return pins


def _check_has(key: str, expected: Any, document: dict[str, Any]) -> list[str]:
    mismatches: list[str] = []
    for path, want in _pins(expected):
        got = lookup(document, path)
        if got is _MISSING:
            if want is _MISSING or want is not None:
                mismatches.append(f"{key}: {path!r} missing")
        elif want is None:
            mismatches.append(f"{key}: {path!r} expected absent, got {got!r}")
        elif want is not _MISSING and not matches(want, got):
            mismatches.append(f"{key}: {path!r} expected {want!r}, got {got!r}")
    return mismatches


def check_expect(expect: dict[str, Any], report: JsonObject) -> list[str]:
    """What differs from ``expect`` (unknown keys are ignored). Enum words compare in any case and form.

    ``evaluation_has`` (the persisted verifier evaluation) and ``trace_has`` (the orchestration trace) take
    paths that must be present (``["prompt_audit", "gatekeeper_result.errors"]``), or pin values by path
    (``{"groundedness_score": 0.5, "gatekeeper_result.errors.0.rule": "evidence.matched_text",
    "gatekeeper_result.rules.#": 5}``), or a list mixing both; ``evaluation_lacks`` takes paths.
    """
    mismatches: list[str] = []
    gk = report.get("gatekeeper_result")
    gk_dict: dict[str, Any] = gk if isinstance(gk, dict) else {}
    evaluation = report.get("verifier_evaluation")
    evaluation_dict: dict[str, Any] = evaluation if isinstance(evaluation, dict) else {}
    trace = report.get("orchestration_trace")
    trace_dict: dict[str, Any] = trace if isinstance(trace, dict) else {}
    answer = str(report.get("answer_text") or "")
    # What the user could read, in the one comparison form: the answer text and the persisted composer output.
    shown = normalize(answer) + "\x00" + normalize(json.dumps(report.get("composer_output") or {}, ensure_ascii=False))
    shown_compact = shown.replace(" ", "")

    def same(key: str, expected: Any, actual: Any) -> None:
        if expected is None:
            if actual is not None:
                mismatches.append(f"{key}: expected absent, got {actual!r}")
            return
        if actual is None or _norm(expected, _ENUM_PREFIXES) != _norm(actual, _ENUM_PREFIXES):
            mismatches.append(f"{key}: expected {expected!r}, got {actual!r}")

    for key, expected in expect.items():
        if key == "route":
            want = [_norm(v, _ENUM_PREFIXES) for v in _as_list(expected)]
            got = [_norm(v) for v in _as_list(report.get("route") or [])]
            if want != got:
                mismatches.append(f"route: expected {want}, got {got}")
        elif key == "gatekeeper_status":
            same(key, expected, gk_dict.get("status"))
        elif key == "severity":
            same(key, expected, gk_dict.get("severity"))
        elif key == "failed_rules":
            want_rules = set(_as_list(expected))
            got_rules = set(gk_dict.get("failed_rules", []))
            if want_rules != got_rules:
                mismatches.append(f"failed_rules: expected {sorted(want_rules)}, got {sorted(got_rules)}")
        elif key in ("model_verdict", "effective_verdict", "status", "verdict_ceiling", "parse_status"):
            same(key, expected, report.get(key))
        elif key == "answer_contains":
            mismatches.extend(
                f"answer_contains: {t!r} not in the answer"
                for t in _as_list(expected)
                if normalize(str(t)) not in normalize(answer)
            )
        elif key == "answer_excludes":
            # Compared normalized and without whitespace: no spelling of the marker may survive.
            mismatches.extend(
                f"answer_excludes: {t!r} is in the answer or the composer output"
                for t in _as_list(expected)
                if compact(str(t)) and compact(str(t)) in shown_compact
            )
        elif key == "evaluation_has":
            mismatches.extend(_check_has(key, expected, evaluation_dict))
        elif key == "evaluation_lacks":
            mismatches.extend(
                f"evaluation_lacks: {f!r} present"
                for f in _as_list(expected)
                if lookup(evaluation_dict, str(f)) is not _MISSING
            )
        elif key == "trace_has":
            mismatches.extend(_check_has(key, expected, trace_dict))
    return mismatches


def iter_reports(results: Sequence[CaseResult]) -> Iterator[str]:
    for result in results:
        yield json.dumps(result.report, sort_keys=True, ensure_ascii=False)


def invocation_from_json(data: JsonObject) -> contracts_pb2.ToolInvocation:
    return json_format.ParseDict(data, contracts_pb2.ToolInvocation())
