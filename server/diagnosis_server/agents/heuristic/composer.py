"""The heuristic Composer: it chooses from the Verifier-allowed material, and the service renders the answer.

- PASS: the headline is the first critical likely cause (else the first); every confirmed fact, every
  possible direction, every gap and every next step, in the material's order;
- LOW_CONFID: confirmed facts, possible directions, evidence gaps and next steps, kept apart;
- REJECT: confirmed facts, evidence gaps and next steps only.

Its texts restate the material (statements, the material's own step texts); they are never shown, and
the Composer guard holds them to the material like any Composer's.
"""

from __future__ import annotations

import json

from diagnosis_server.agents.base import AgentReply, AgentRequest
from diagnosis_server.agents.heuristic.inputs import load_input
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.offload import off_loop

MODEL = "heuristic"


def _claims(value: JsonValue) -> list[JsonObject]:
    return [
        item
        for item in (value if isinstance(value, list) else [])
        if isinstance(item, dict) and isinstance(item.get("claim_id"), str) and isinstance(item.get("statement"), str)
    ]


def _items(value: JsonValue, key: str) -> list[JsonObject]:
    return [item for item in (value if isinstance(value, list) else []) if isinstance(item, dict) and key in item]


def compose(material: JsonObject) -> JsonObject:
    verdict = str(material.get("verdict", "REJECT")).upper()
    facts = _claims(material.get("confirmed_facts"))
    causes = _claims(material.get("likely_causes")) if verdict == "PASS" else []
    directions = _claims(material.get("possible_directions")) if verdict != "REJECT" else []
    critical = [c for c in causes if c.get("critical") is True]
    headline = str((critical or causes)[0]["claim_id"]) if causes else ""
    out: JsonObject = {
        "summary": f"{verdict} answer from {len(facts)} confirmed fact(s)",
        "confirmed_facts": [{"text": str(c["statement"]), "claim_ids": [c["claim_id"]]} for c in facts],
        "possible_directions": [
            {"text": str(c["statement"]), "claim_ids": [c["claim_id"]]}
            for c in (*directions, *(c for c in causes if c["claim_id"] != headline))
        ],
        "evidence_gaps": [
            {"text": str(g.get("description") or g["gap_id"]), "ref": g["gap_id"]}
            for g in _items(material.get("evidence_gaps"), "gap_id")
        ],
        "next_steps": [
            {"text": str(s.get("text") or s["step_id"]), "ref": s["step_id"]}
            for s in _items(material.get("next_steps"), "step_id")
        ],
    }
    if headline:
        out["headline"] = headline
    return out


class HeuristicComposer:
    async def run(self, request: AgentRequest) -> AgentReply:
        return await off_loop(compose_reply, request.input_bytes)  # CPU work: off the event loop


def compose_reply(input_bytes: bytes) -> AgentReply:
    """The Composer's reply to the Verifier-allowed material it is given."""
    material = load_input(input_bytes, "composer")
    return AgentReply(text=json.dumps(compose(material), ensure_ascii=False), model=MODEL)
