"""The agents' outputs of an adversarial run over one world: the Executor's claims, the Verifier's checks and
verdict, the Composer's answer, each from the world's clean material plus what a case adds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .adversarial_worlds import World, bind
from .agent_json import Json, claim, composer, item
from .disguises import reversed_behind_override

VERDICT_SUMMARY = {
    "PASS": "Diagnosis below, from verified evidence.",
    "LOW_CONFID": "The evidence is partial; see the confirmed facts and possible directions.",
    "REJECT": "The current evidence cannot support a reliable conclusion.",
}


def executor(*claims: Json, gaps: Sequence[Json] = (), **extra: Any) -> Json:
    doc: Json = {"contract": "executor_evidence_v2", "claims": list(claims)}
    if gaps:
        doc["evidence_gaps"] = list(gaps)
    doc.update(extra)
    return doc


def ref(c: Json) -> list[Json]:
    b = c["evidence_bindings"][0]
    return [
        {
            "claim_id": c["claim_id"],
            "source_invocation_id": b["source_invocation_ids"][0],
            "tool_name": b["tool_name"],
            "raw_path": b["raw_path"],
        }
    ]


def check(c: Json, classification: str, rationale: str = "") -> Json:
    return {
        "claim_id": c["claim_id"],
        "classification": classification,
        "critical": c["critical"],
        "evidence_refs": ref(c),
        "rationale": rationale or f"{classification.replace('_', ' ')} against its verified evidence",
    }


def verifier(
    checks: list[Json], verdict: str, score: float = 0.9, gaps: Sequence[Json] = (), rationale: str = ""
) -> Json:
    return {
        "claim_checks": checks,
        "verdict": verdict,
        "groundedness_score": score,
        "rationale": rationale or "Every verified claim was checked against its own verified evidence.",
        "evidence_gaps": list(gaps),
    }


def gap(description: str, claim_id: str = "", critical: bool = False) -> Json:
    out: Json = {"description": description, "critical": critical}
    if claim_id:
        out["claim_id"] = claim_id
    return out


def benign_gap(world: World) -> Json:
    """A gap any run over ``world`` may report, naming nothing a case plants."""
    description, claim_id = world.benign_gap
    return gap(description, claim_id)


def facts_of(*claims: Json) -> list[Json]:
    return [item(c["statement"], c["claim_id"]) for c in claims]


def run(
    world: World,
    verdict: str,
    *extra: tuple[Json, str],
    gaps: Sequence[Json] = (),
    rationale: str = "",
    executor_gaps: Sequence[Json] = (),
    executor_extra: Json | None = None,
    inference: bool = True,
) -> tuple[Json, Json]:
    """The Executor output (the world's clean claims and ``extra`` claims) and a Verifier output whose model
    verdict is ``verdict``: clean observations direct, the clean inference reasonable_inference, each extra
    claim with its given classification (``""``: no check, e.g. for a claim that never reaches the Verifier)."""
    claims = [*world.facts, *([world.inference] if inference else []), *(c for c, _ in extra)]
    checks = [check(c, "direct_observation") for c in world.facts]
    checks += [check(world.inference, "reasonable_inference")] if inference else []
    checks += [check(c, cls) for c, cls in extra if cls]
    ex = executor(*claims, gaps=executor_gaps, **(executor_extra or {}))
    return ex, verifier(checks, verdict, 0.9, gaps, rationale)


def answer(
    world: World,
    verdict: str,
    *,
    summary: str | None = None,
    facts: Sequence[Json] = (),
    dirs: Sequence[Json] = (),
    gaps: Sequence[Json] = (),
    steps: Sequence[Json] = (),
    clean: bool = True,
) -> Json:
    """A Composer output citing the world's clean material the verdict allows, plus the hostile items given."""
    clean_facts = facts_of(*world.facts) if clean else []
    clean_dirs = facts_of(world.inference) if clean and verdict == "LOW_CONFID" else []
    return composer(
        VERDICT_SUMMARY[verdict] if summary is None else summary,
        [*clean_facts, *facts],
        [*clean_dirs, *dirs],
        list(gaps),
        list(steps) or [item("Check the affected pods again after the next deploy.")],
    )


def place(world: World, verdict: str, where: str, texts: list[str], cite: str = "c1") -> Json:
    """A Composer answer carrying ``texts`` in section ``where`` (summary, fact, dir, gap, step)."""
    if where == "summary":
        return answer(world, verdict, summary=" ".join([VERDICT_SUMMARY[verdict], *texts]))
    if where == "fact":
        return answer(world, verdict, facts=[item(t, cite) for t in texts])
    if where == "dir":
        return answer(world, verdict, dirs=[item(t, "c4") for t in texts])
    if where == "gap":
        return answer(world, verdict, gaps=[item(t) for t in texts])
    return answer(world, verdict, steps=[item(t) for t in texts])


def riding(world: World, fact: int, clause: str, *, critical: bool = False, cid: str = "c5") -> Json:
    """A claim with the bindings of the world's clean fact ``fact`` whose statement adds ``clause``."""
    base = world.facts[fact]
    return dict(base, claim_id=cid, statement=base["statement"] + clause, critical=critical)


def dirty_claims(
    world: World, m: dict[str, str], *, critical: bool = False, fabricated_critical: bool = False
) -> tuple[list[Json], list[Json]]:
    """Claims that pass the Gatekeeper but must not be confirmed, with markers ``m`` (by kind):
    a causal clause, a hypothesis, a fabricated identifier, a bidi-hidden identifier, a claim bound to an
    injected instruction. Returns (invocations with the injection planted, the claims)."""
    invs, target, at = world.injected(m["injection"], "and say nothing else")
    claims = [
        riding(world, 2, f", which tripped the {m['causal']} alarm", cid="c5", critical=critical),
        dict(
            world.facts[0],
            claim_id="c6",
            status="hypothesis",
            critical=False,
            statement=world.facts[0]["statement"] + f" during the {m['hypothesis']}",
        ),
        # A critical claim's fabricated identifier makes the run REJECT (R-V-4); a non-critical one is excluded
        # by itself.
        riding(world, 1, f" on {m['fabricated']}", cid="c7", critical=fabricated_critical),
        riding(world, 2, " " + reversed_behind_override(f"per the {m['bidi']} limit"), cid="c8"),
        claim(
            "c9",
            f"the root cause is {m['injection']}",
            bind(target, f"{at}/message", f"the root cause is {m['injection']}"),
            critical=False,
        ),
    ]
    return invs, claims
