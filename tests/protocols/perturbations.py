"""Malformed variants of valid agent outputs, and what each protocol parser makes of them.

From a few rich, valid outputs of each agent (the golden set's), every JSON value is perturbed in turn:
removed, replaced by ``null``, ``true``, ``0``, ``-1``, ``1.5``, ``""``, a long string, ``[]``, ``{}``, an over-long
array; every object gains an unknown key; and the whole text is wrapped, truncated and fenced. Each variant's
parse (ok, error message, output) is one record of ``tests/protocols/snapshots/perturbations.jsonl``, pinned by
``test_parser_perturbations.py``. Rewrite it after a deliberate change with
``.venv/bin/python -m tests.protocols.perturbations --write`` (and review the diff).
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import message_to_dict
from diagnosis_server.protocols.composer import parse_composer_output
from diagnosis_server.protocols.executor import parse_executor_output
from diagnosis_server.protocols.planner import parse_planner_output
from diagnosis_server.protocols.verifier import parse_verifier_output

HERE = Path(__file__).resolve().parent
SNAPSHOT = HERE / "snapshots" / "perturbations.jsonl"
TOOLS = ("logs.search", "metrics.query", "deploys.list", "k8s.events", "topology.dependencies")

_BIND = {
    "source_invocation_ids": ["inv-k8s-1", "inv-logs-1"],
    "tool_name": "k8s.events",
    "raw_path": "/events/0/reason",
    "matched_text": "OOMKilled",
}
EXECUTOR: dict[str, Any] = {
    "contract": "executor_evidence_v2",
    "claims": [
        {
            "claim_id": "c1",
            "statement": "checkout-api containers are OOMKilled",
            "critical": True,
            "status": "confirmed",
            "evidence_bindings": [_BIND, dict(_BIND, raw_path="/events/0/message", matched_text="512Mi")],
        },
        {
            "claim_id": "c2",
            "statement": "a deploy may be involved",
            "critical": False,
            "status": "hypothesis",
            "evidence_bindings": [],
        },
    ],
    "evidence_gaps": [
        {
            "description": "memory metrics",
            "critical": True,
            "next_calls": [{"tool_name": "metrics.query", "arguments": {"service": "checkout-api"}}],
        }
    ],
}
VERIFIER: dict[str, Any] = {
    "claim_checks": [
        {
            "claim_id": "c1",
            "classification": "direct_observation",
            "critical": True,
            "evidence_refs": [
                {
                    "claim_id": "c1",
                    "source_invocation_id": "inv-k8s-1",
                    "tool_name": "k8s.events",
                    "raw_path": "/events/0/reason",
                }
            ],
            "rationale": "seen",
        },
        {"claim_id": "c2", "classification": "unsupported", "critical": False, "evidence_refs": [], "rationale": "no"},
    ],
    "facts_checked": [{"claim_id": "c1", "fact": "containers are OOMKilled", "classification": "direct_evidence"}],
    "verdict": "LOW_CONFID",
    "groundedness_score": 0.75,
    "rationale": "checked",
    "evidence_gaps": [
        {
            "claim_id": "c1",
            "description": "memory",
            "critical": True,
            "next_calls": [{"tool_name": "metrics.query", "arguments": {"service": "checkout-api"}}],
        }
    ],
}
COMPOSER: dict[str, Any] = {
    "summary": "s",
    "headline": "c3",
    "confirmed_facts": [{"text": "t", "claim_ids": ["c1", "c2"]}],
    "possible_directions": [{"text": "d", "claim_ids": ["c4"]}],
    "evidence_gaps": [{"text": "g", "ref": "g1"}],
    "next_steps": [{"text": "n", "ref": "s1", "claim_ids": []}],
}
PLANNER: dict[str, Any] = {
    "steps": [
        {"tool_name": "k8s.events", "arguments": {"service": "checkout-api"}, "purpose": "restarts"},
        {"tool_name": "logs.search", "arguments": {"query": "503", "limit": 5}, "purpose": "symptom"},
    ],
    "reasoning": "start with restarts",
}


def _verifier_input() -> contracts_pb2.VerifierInput:
    vi = contracts_pb2.VerifierInput(verdict_ceiling=contracts_pb2.VERDICT_PASS)
    for cid in ("c1", "c2"):
        claim = vi.verified_executor_output.claims.add(claim_id=cid, statement=f"claim {cid}", critical=cid == "c1")
        claim.evidence_bindings.add(
            source_invocation_ids=["inv-k8s-1"], tool_name="k8s.events", raw_path="/events/0/reason"
        )
    vi.verified_evidence.add(
        claim_id="c1",
        source_invocation_id="inv-k8s-1",
        tool_name="k8s.events",
        raw_path="/events/0/reason",
        matched_text="OOMKilled",
    )
    return vi


VERIFIER_INPUT = _verifier_input()
_REPLACEMENTS: tuple[tuple[str, Any], ...] = (
    ("null", None),
    ("true", True),
    ("zero", 0),
    ("minus", -1),
    ("float", 1.5),
    ("empty", ""),
    ("long", "x" * 5000),
    ("list", []),
    ("object", {}),
    ("text", "c 1"),
    ("big", 10**20),
    ("many", list(range(300))),
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _set(document: Any, path: tuple[Any, ...], value: Any, *, delete: bool = False) -> Any:
    out = copy.deepcopy(document)
    if not path:
        return value
    target = out
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return out


def variants(document: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(label, raw text) of every perturbation of ``document``."""
    text = json.dumps(document)
    yield "valid", text
    yield "fenced", f"```json\n{text}\n```"
    yield "prose-around", f"Here you go: {text} done"
    yield "truncated", text[: len(text) // 2]
    yield "two-objects", text + text
    yield "duplicate-key", text[:-1] + ', "' + next(iter(document)) + '": null}'
    yield "not-object", "[" + text + "]"
    yield "nan", text.replace("0.75", "NaN") if "0.75" in text else text.replace("true", "NaN", 1)
    yield "infinity", text.replace("true", "-Infinity", 1)
    yield "deep", "[" * 200 + "]" * 200
    for path in _paths(document):
        where = "/".join(str(p) for p in path) or "(root)"
        if path:
            yield f"{where}:deleted", json.dumps(_set(document, path, None, delete=True))
        for name, value in _REPLACEMENTS:
            yield f"{where}:{name}", json.dumps(_set(document, path, value))
        node: Any = document
        for key in path:
            node = node[key]
        if isinstance(node, dict):
            yield f"{where}:unknown-key", json.dumps(_set(document, path, {**node, "surprise": 1}))


def _digest(message: Any) -> str | None:
    if message is None:
        return None
    return hashlib.sha256(json.dumps(message_to_dict(message), sort_keys=True).encode()).hexdigest()[:16]


def _executor_fields(raw: str) -> dict[str, Any]:
    parsed = parse_executor_output(raw)
    return {
        "status": parsed.status,
        "error": parsed.error,
        "forbidden": list(parsed.forbidden_fields),
        "issues": [[i.claim_id, i.binding_index, i.claim_index, i.message] for i in parsed.schema_issues],
        "output": _digest(parsed.output),
    }


def _verifier_fields(raw: str) -> dict[str, Any]:
    parsed = parse_verifier_output(raw, VERIFIER_INPUT)
    return {"ok": parsed.ok, "error": parsed.error, "output": _digest(parsed.output)}


def _composer_fields(raw: str) -> dict[str, Any]:
    parsed = parse_composer_output(raw)
    refs = sorted(f"{k[0]}[{k[1]}]={v}" for k, v in parsed.refs.items())
    return {
        "ok": parsed.ok,
        "error": parsed.error,
        "headline": parsed.headline,
        "refs": refs,
        "output": _digest(parsed.output),
    }


def _planner_fields(raw: str) -> dict[str, Any]:
    parsed = parse_planner_output(raw, allowed_tools=TOOLS, max_steps=4)
    steps = [[s.tool_name, json.dumps(s.arguments, sort_keys=True), s.purpose] for s in parsed.steps]
    return {"ok": parsed.ok, "error": parsed.error, "steps": steps}


# Each agent: its valid output, and what its parser makes of a variant of it.
PARSERS: tuple[tuple[str, dict[str, Any], Callable[[str], dict[str, Any]]], ...] = (
    ("executor", EXECUTOR, _executor_fields),
    ("verifier", VERIFIER, _verifier_fields),
    ("composer", COMPOSER, _composer_fields),
    ("planner", PLANNER, _planner_fields),
)


def records() -> Iterator[dict[str, Any]]:
    for agent, document, fields in PARSERS:
        for label, raw in variants(document):
            yield {"agent": agent, "variant": label, **fields(raw)}


def line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print("usage: python -m tests.protocols.perturbations --write", file=sys.stderr)
        return 2
    SNAPSHOT.parent.mkdir(exist_ok=True)
    SNAPSHOT.write_text("".join(line(r) + "\n" for r in records()), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
