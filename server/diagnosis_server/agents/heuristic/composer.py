"""The heuristic Composer: the verdict's answer, from the Verifier-allowed material and nothing else.

- PASS: a summary naming the confirmed diagnosis (the confirmed root-cause statements), or "No incident
  found" when the confirmed facts are headline signals within their baselines;
- LOW_CONFID: a partial answer that keeps confirmed facts, possible directions, evidence gaps and next
  steps apart, and states no root cause as confirmed;
- REJECT: "the current evidence cannot support a reliable conclusion", with confirmed facts, evidence
  gaps and next steps only, and no root-cause conclusion.

Items cite only the claim ids the material lists for them; next steps come from the gaps' named calls
(``gaps.parse_next``) by fixed templates, never from tool output.
"""

from __future__ import annotations

import json

from diagnosis_server.agents.base import AgentReply, AgentRequest
from diagnosis_server.agents.heuristic.findings import HEALTHY_MARK, ROOT_CAUSE_CLAUSE, ROOT_CAUSE_MARK
from diagnosis_server.agents.heuristic.gaps import NextCall, parse_next, strip_next
from diagnosis_server.agents.heuristic.inputs import load_input
from diagnosis_server.conversions import JsonObject, JsonValue

MODEL = "heuristic"
NO_INCIDENT = "No incident found"
REJECT_SUMMARY = (
    "The current evidence cannot support a reliable conclusion, so no root cause is given. "
    "Only confirmed facts, evidence gaps and next steps are listed."
)
COLLECT_MORE = (
    "Collect more evidence (logs, metrics, recent deploys and Kubernetes events) and run the diagnosis again."
)
MAX_NEXT_STEPS = 8


def _items(value: JsonValue) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and isinstance(item.get("claim_id"), str) and isinstance(item.get("statement"), str):
            out.append((str(item["claim_id"]), str(item["statement"])))
    return out


def _gaps(value: JsonValue) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for item in value if isinstance(value, list) else []:
        description = item.get("description") if isinstance(item, dict) else None
        if isinstance(item, dict) and isinstance(description, str) and description.strip():
            claim_id = item.get("claim_id")
            out.append((claim_id if isinstance(claim_id, str) else "", description))
    return out


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _without_cause_clause(statement: str) -> str:
    return statement.replace(ROOT_CAUSE_CLAUSE, "")


def render_next(call: NextCall) -> str:
    service = call.argument("service") or "the affected service"
    tool = call.tool_name
    if tool == "k8s.events":
        text = f"List the Kubernetes events of {service}"
    elif tool == "metrics.query":
        metric = call.argument("metric")
        text = f"Read {service}'s {metric} metric" if metric else f"Read {service}'s saturation and health metrics"
    elif tool == "deploys.list":
        text = f"List the recent deploys of {service}" if call.argument("service") else "List the recent deploys"
    elif tool == "logs.search":
        query, level = call.argument("query"), call.argument("level")
        text = (
            f"Search {service}'s logs"
            + (f" for {query!r}" if query else "")
            + (f" at {level} and above" if level else "")
        )
    elif tool == "topology.dependencies":
        text = f"Describe {service}'s dependencies"
    else:
        text = f"Run {call.render()}"
    return f"{text} ({call.render()})."


def compose(material: JsonObject) -> JsonObject:
    verdict = str(material.get("verdict", "REJECT")).upper()
    confirmed = _items(material.get("confirmed_facts"))
    directions = _items(material.get("possible_directions")) if verdict != "REJECT" else []
    gaps = _gaps(material.get("evidence_gaps"))
    cited = {claim_id for claim_id, _ in (*confirmed, *directions)}

    roots = [(cid, s) for cid, s in confirmed if ROOT_CAUSE_MARK in s]
    healthy = [(cid, s) for cid, s in confirmed if HEALTHY_MARK in s]
    if verdict == "PASS" and roots:
        diagnosis = "; ".join(f"{s} [{cid}]" for cid, s in roots)
        summary = f"Diagnosis: {_sentence(diagnosis)}"
    elif verdict == "PASS" and healthy and not directions:
        summary = (
            f"{NO_INCIDENT}: {len(healthy)} verified headline signal(s) stayed within their baselines "
            f"and no failure was observed."
        )
    elif verdict == "PASS":
        summary = "The verified evidence confirms the facts below; it does not name a root cause."
    elif verdict == "LOW_CONFID":
        summary = (
            f"Partial diagnosis with low confidence: {len(confirmed)} fact(s) are confirmed, but the verified "
            "evidence does not establish the root cause."
        )
        if directions:
            summary += " Possible directions are listed separately; they are not confirmed."
    else:
        summary = REJECT_SUMMARY

    keep_cause = verdict == "PASS"
    facts: list[JsonValue] = []
    for claim_id, statement in confirmed:
        if not keep_cause and ROOT_CAUSE_MARK in statement:
            statement = _without_cause_clause(statement)
            if ROOT_CAUSE_MARK in statement:
                continue
        facts.append({"text": _sentence(statement), "claim_ids": [claim_id]})
    possible: list[JsonValue] = [
        {"text": _sentence(f"Possibly: {_without_cause_clause(s)}"), "claim_ids": [cid]} for cid, s in directions
    ]
    gap_items: list[JsonValue] = []
    calls: list[NextCall] = []
    for claim_id, description in gaps:
        item: JsonObject = {"text": _sentence(strip_next(description) or description)}
        if claim_id and claim_id in cited:
            item["claim_ids"] = [claim_id]
        gap_items.append(item)
        calls.extend(parse_next(description))
    steps = [render_next(call) for call in dict.fromkeys(calls)][:MAX_NEXT_STEPS]
    if not steps and verdict != "PASS":
        steps = [COLLECT_MORE]
    next_steps: list[JsonValue] = [{"text": text} for text in steps]
    return {
        "summary": summary,
        "confirmed_facts": facts,
        "possible_directions": possible,
        "evidence_gaps": gap_items,
        "next_steps": next_steps,
    }


class HeuristicComposer:
    async def run(self, request: AgentRequest) -> AgentReply:
        material = load_input(request.input_bytes, "composer")
        return AgentReply(text=json.dumps(compose(material), ensure_ascii=False), model=MODEL)
