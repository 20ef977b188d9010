"""The four agents as a careful model plays them in one case variant: the Planner's plan and the Executor's claims
as written, the Verifier's checks and the Composer's choice made from the input each is actually given.

A model sees its input: the Verifier classifies only the claims the Gatekeeper passed, with refs to their verified
evidence, and computes its verdict by its prompt's rules; the Composer chooses only from the allowed material (the
cause as headline when it is a likely cause, the other claims in the case's order, every gap and next step). The
Verifier is played as the Executor's claims are written: it takes each claim as its case says (an untrue claim is
not caught by it), so that what reaches the answer is what the service's own checks let through.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import Agent, AgentReply, AgentRequest, AgentRole
from diagnosis_server.conversions import to_struct, to_value

Json = dict[str, Any]
MODEL = "eval-models"


def _invocation(recorded: Json) -> contracts_pb2.ToolInvocation:
    return contracts_pb2.ToolInvocation(
        invocation_id=recorded["invocation_id"],
        tool_name=recorded["tool_name"],
        arguments=to_struct(recorded.get("arguments", {})),
        output=to_value(recorded["output"]),
        status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
    )


class Planner:
    def __init__(self, plan: Json) -> None:
        self._text = json.dumps(plan, ensure_ascii=False)

    async def run(self, request: AgentRequest) -> AgentReply:
        return AgentReply(text=self._text, model=MODEL)


class Executor:
    """Records the case's tool calls as this run's invocations (their outputs as the tools gave them), then claims."""

    def __init__(self, invocations: Sequence[Json], output: Json) -> None:
        self._invocations = list(invocations)
        self._text = json.dumps(output, ensure_ascii=False)

    async def run(self, request: AgentRequest) -> AgentReply:
        if request.tools is not None and request.cycle == 1 and request.attempt == 1:
            for recorded in self._invocations:
                await request.tools.record(_invocation(recorded))
        return AgentReply(text=self._text, model=MODEL)


_OBSERVED = {"direct_observation"}
_SHOWN = {"direct_observation", "reasonable_inference"}


class Verifier:
    def __init__(self, checks: Json) -> None:
        self._checks = checks

    async def run(self, request: AgentRequest) -> AgentReply:
        data = json.loads(request.input_bytes)
        claims = data.get("verified_executor_output", {}).get("claims", [])
        evidence = data.get("verified_evidence", [])
        checks: list[Json] = []
        critical: list[str] = []
        for c in claims:
            cid = c.get("claim_id", "")
            intent = self._checks.get(cid, {"classification": "unsupported", "rationale": "Not in my notes."})
            refs = [
                {k: e.get(k, "") for k in ("claim_id", "source_invocation_id", "tool_name", "raw_path")}
                for e in evidence
                if e.get("claim_id") == cid
            ]
            classification = intent["classification"] if refs else "unsupported"
            checks.append(
                {
                    "claim_id": cid,
                    "classification": classification,
                    "critical": bool(c.get("critical")),
                    "evidence_refs": refs,
                    "rationale": intent["rationale"] if refs else "No verified evidence is left for it.",
                }
            )
            if c.get("critical"):
                critical.append(classification)
        ceiling = str(data.get("verdict_ceiling", "VERDICT_LOW_CONFID"))
        observed = sum(1 for k in critical if k in _OBSERVED)
        score = round(observed / len(critical), 2) if critical else 0.0
        if any(k == "contradicted" for k in critical):
            verdict = "REJECT"
        elif (
            critical and all(k in _SHOWN for k in critical) and observed and ceiling == "VERDICT_PASS" and score >= 0.5
        ):
            verdict = "PASS"
        else:
            verdict = "LOW_CONFID"
        out = {
            "claim_checks": checks,
            "verdict": verdict,
            "groundedness_score": score,
            "rationale": "Each claim judged against its own verified evidence.",
            "evidence_gaps": [],
        }
        return AgentReply(text=json.dumps(out, ensure_ascii=False), model=MODEL)


class Composer:
    def __init__(self, intent: Json, statements: dict[str, str]) -> None:
        self._intent = intent
        self._statements = statements

    async def run(self, request: AgentRequest) -> AgentReply:
        data = json.loads(request.input_bytes)
        verdict = str(data.get("verdict", "REJECT")).upper().removeprefix("VERDICT_")
        order = [*self._intent.get("order", []), self._intent.get("headline", "")]

        def ids(key: str) -> list[str]:
            present = [c.get("claim_id", "") for c in data.get(key, []) if isinstance(c, dict)]
            return sorted(present, key=lambda cid: order.index(cid) if cid in order else len(order))

        def item(cid: str) -> Json:
            return {"text": self._statements.get(cid, cid), "claim_ids": [cid]}

        causes = ids("likely_causes") if verdict == "PASS" else []
        headline = self._intent.get("headline") if self._intent.get("headline") in causes else None
        if headline is None and causes:
            headline = causes[0]
        out: Json = {
            "summary": self._intent.get("summary", ""),
            "confirmed_facts": [item(cid) for cid in ids("confirmed_facts")],
            "possible_directions": []
            if verdict == "REJECT"
            else [item(cid) for cid in [*ids("possible_directions"), *(c for c in causes if c != headline)]],
            "evidence_gaps": [
                {"text": str(g.get("description", "")), "ref": g["gap_id"]}
                for g in data.get("evidence_gaps", [])
                if isinstance(g, dict) and "gap_id" in g
            ],
            "next_steps": [
                {"text": str(s.get("text", "")), "ref": s["step_id"]}
                for s in data.get("next_steps", [])
                if isinstance(s, dict) and "step_id" in s
            ],
        }
        if headline:
            out["headline"] = headline
        return AgentReply(text=json.dumps(out, ensure_ascii=False), model=MODEL)


class PlayedProvider:
    """One case variant's four agents."""

    name = "eval-models"

    def __init__(self, case: Json, variant: str) -> None:
        played = case["variants"][variant]
        statements = {c["claim_id"]: c["statement"] for c in played["executor"]["claims"]}
        self._agents: dict[AgentRole, Agent] = {
            "planner": Planner(case["plan"]),
            "executor": Executor(case["tool_invocations"], played["executor"]),
            "verifier": Verifier(played["verifier"]),
            "composer": Composer(played["composer"], statements),
        }

    def agent(self, role: AgentRole) -> Agent:
        return self._agents[role]
