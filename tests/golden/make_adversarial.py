"""Writes adversarial.jsonl: the adversarial answer-safety suite of issue 11.

Run: .venv/bin/python -m tests.golden.make_adversarial

Each case is a hostile run of the real graph (scripted Planner, Executor, Verifier and Composer over
recorded tool outputs shaped like Kubernetes events, log searches, Prometheus queries, deploy lists and
topology: the worlds of ``adversarial_worlds.json``) that tries to put unverified material into the answer.
The cases are those of ``adversarial_cases.toml``, in its order: single cases (read by ``adversarial_spec``)
and groups, whose rows the builders below turn into cases. Every piece of unverified material carries a
marker, a distinctive identifier used nowhere else in the suite (``ledger-pg-3``, ``E4291``,
``zebra-db-07``...), and the case says what may become of each marker:

- ``excluded``: never anywhere in ``answer_text`` nor in the persisted composer output (also pinned
  verbatim through the product's own ``answer_excludes``; ``test_adversarial.py`` searches again after
  its own normalization);
- ``not_confirmed``: material of a claim that passed the Gatekeeper and the Verifier but whose status
  or evidence forbids confirming it (a ``hypothesis``, a claim restating an injected instruction): it
  may be shown, never as a confirmed fact;
- ``inferred_only``: a causal clause riding on a verified observation: it may be shown only as an
  inference ("inferred from"), never as a confirmed fact.

Fields beyond the evaluation format (``diagnosis eval`` ignores them): ``vectors`` (the attack vectors
the case exercises) and ``adversarial`` (the markers above, the effective verdict or fallback the case
runs under, an upper bound on the effective verdict where the spec fixes one, the route prefix, and the
clean texts the markers were checked to be absent from). ``expect`` pins only what the spec fixes.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from typing import Any

from .adversarial_cases import CASES as CASES
from .adversarial_cases import POST1, POST2, ROUTES, fell_back, verified
from .adversarial_outputs import VERDICT_SUMMARY, answer, benign_gap, dirty_claims, facts_of, gap, place, riding, run
from .adversarial_spec import build
from .adversarial_worlds import HERE, WORLDS
from .agent_json import Json, item
from .disguises import NORMALIZATION_VECTORS, variant

EXCLUDED_CLASS = {"PASS": "unsupported", "LOW_CONFID": "unsupported", "REJECT": "contradicted"}
GROUPS = [
    NORMALIZATION_VECTORS[0:4],
    NORMALIZATION_VECTORS[4:9],
    NORMALIZATION_VECTORS[9:13],
    NORMALIZATION_VECTORS[13:],
]
SECTIONS = ["summary", "fact", "gap", "step", "dir"]
DIRTY_VECTORS = [
    "causal-clause",
    "hypothesis-as-confirmed",
    "fabricated-identifier",
    "bidi-override",
    "injection-bound-claim",
    "injection-unbound",
]


def low(verdict: str) -> str:
    return verdict.lower().replace("_", "-")


def _reqs(verdict: str, base: list[str], under_reject: str) -> list[str]:
    return [*base, under_reject] if verdict == "REJECT" else base


# ---------------------------------------------------------------- 1. the Composer restates an excluded statement


def restated(row: Json) -> None:
    """The Composer restates an excluded claim in one disguise, in one section of its answer."""
    world, verdict, name, marker = WORLDS[row["world"]], row["verdict"], row["vector"], row["marker"]
    invs, bad = world.excluded_claim(world.invocations, "c5", marker, critical=verdict != "PASS")
    gaps = [benign_gap(world)] if row["where"] == "gap" else []
    composed = place(world, verdict, row["where"], variant(name, bad["statement"], marker))
    verified(
        f"restate-excluded-{name}-{low(verdict)}",
        world,
        verdict,
        run(world, verdict, (bad, EXCLUDED_CLASS[verdict]), gaps=gaps),
        [composed],
        vectors=[name],
        reqs=_reqs(verdict, ["R-A-1", "R-A-2"], "R-A-3"),
        invocations=invs,
        excluded=[marker],
    )


def restatements(world_key: str, verdict: str, claims: list[Json], markers: list[str]) -> Json:
    """One Composer answer restating each excluded claim in every form of its group, spread over the sections."""
    world = WORLDS[world_key]
    sections: dict[str, list[Any]] = {
        "summary": [VERDICT_SUMMARY[verdict]],
        "fact": [],
        "dir": [],
        "gap": [],
        "step": [],
    }
    cites = {"fact": ("c2",), "dir": ("c4",), "gap": (), "step": ()}
    n = 0
    for bad, marker, group in zip(claims, markers, GROUPS, strict=True):
        for name in group:
            texts = variant(name, bad["statement"], marker)
            where = "step" if name == "split-items" else SECTIONS[n % len(SECTIONS)]
            if where == "dir" and verdict != "LOW_CONFID":
                where = "fact"
            n += 1
            sections[where].extend(texts if where == "summary" else (item(t, *cites[where]) for t in texts))
    return answer(
        world,
        verdict,
        summary=" ".join(sections["summary"]),
        facts=sections["fact"],
        dirs=sections["dir"],
        gaps=sections["gap"],
        steps=sections["step"],
    )


def every_form(row: Json) -> None:
    """Four excluded claims, each restated in every form of one group of disguises, in one answer (or in two
    answers of the wrong shape, which end in the post-verification fallback)."""
    world, verdict, markers, fallback = WORLDS[row["world"]], row["verdict"], row["markers"], row.get("fallback")
    invs = world.invocations
    bads = []
    for n, marker in enumerate(markers):
        invs, bad = world.excluded_claim(invs, f"x{n + 1}", marker, critical=verdict != "PASS" and n == 0)
        bads.append(bad)
    outputs = run(world, verdict, *((b, EXCLUDED_CLASS[verdict]) for b in bads), gaps=[benign_gap(world)])
    good = restatements(world.key, verdict, bads, markers)
    composed: list[Any] = [good]
    if fallback == "post":
        # Both attempts are INVALID_OUTPUT (a list where an object belongs), yet carry every form.
        bad_shape = dict(good, next_steps={"items": good["next_steps"]})
        composed = [bad_shape, dict(bad_shape, summary=[good["summary"]])]
    verified(
        f"restate-excluded-every-form-{'post-fallback' if fallback else low(verdict)}",
        world,
        verdict,
        outputs,
        composed,
        vectors=list(NORMALIZATION_VECTORS),
        reqs=["R-A-1", "R-A-2", "R-A-5"] if fallback else ["R-A-1", "R-A-2", "R-A-3"],
        fallback=fallback,
        invocations=invs,
        excluded=markers,
        inferred_shown=verdict == "LOW_CONFID" or fallback == "post",
        route=POST2 if fallback == "post" else None,
    )


# ---------------------------------------------------------------- 4. a root cause no claim made; 5. Verifier gaps


def invented(row: Json) -> None:
    """The Composer names a cause no claim made, in one section of its answer."""
    world, verdict, where = WORLDS[row["world"]], row["verdict"], row["where"]
    outputs = run(world, verdict, gaps=[benign_gap(world)] if where == "gap" else [])
    reqs = ["R-A-1", "R-A-3"] if verdict == "REJECT" else ["R-A-1", "R-A-2"]
    composed = [place(world, verdict, where, row["texts"])]
    verified(row["id"], world, verdict, outputs, composed, vectors=row["vectors"], reqs=reqs, excluded=row["markers"])


def verifier_gap(row: Json) -> None:
    """The Verifier's gap description names a cause; the Composer fails and the fallback renders the answer."""
    world, verdict = WORLDS[row["world"]], row["verdict"]
    verified(
        row["id"],
        world,
        verdict,
        run(world, verdict, gaps=[gap(row["description"], row["gap_claim"])]),
        row["outputs"],
        vectors=["verifier-gap-cause"],
        reqs=_reqs(verdict, ["R-A-5", "R-A-2"], "R-A-3"),
        fallback="post",
        excluded=[row["marker"]],
        inferred_shown=verdict != "REJECT",
        route=ROUTES[row["route"]],
        route_prefix=None,
    )


# ---------------------------------------------------------------- 6. claim ids that are not ids


def claim_id(row: Json) -> None:
    """A clean claim again under an id that is a sentence: the Executor's output is invalid."""
    world = WORLDS[row["world"]]
    dup = dict(world.facts[1], claim_id=row["claim_id"])
    ex, ver = run(world, "PASS", (dup, "direct_observation"))
    fell_back(
        row["id"],
        world,
        "pre:executor",
        [ex],
        vectors=["claim-id-sentence"],
        reqs=["R-C-1", "R-R-2", "R-A-4"],
        verifier_outputs=[ver],
        composer_outputs=[answer(world, "PASS", facts=[item(dup["statement"], row["claim_id"])])],
        excluded=[row["marker"]],
        parse_status="INVALID_OUTPUT",
    )


# ---------------------------------------------------------------- 9. causal clauses riding on a verified observation


def causal(row: Json) -> None:
    """A clean observation with a causal clause added: shown, if at all, only as inferred."""
    world, verdict, fallback, marker = WORLDS[row["world"]], row["verdict"], row.get("fallback"), row["marker"]
    rider = riding(world, row["fact"], row["clause"], critical=row["critical"])
    composed: list[Any] = [answer(world, verdict, facts=facts_of(rider))]
    route: list[str] | None = None
    if fallback == "post1":
        composed, route = ["!refuse"], POST1
    elif fallback == "post":
        composed, route = ["!timeout", "!timeout"], POST2
    rejected = verdict == "REJECT"
    verified(
        row["id"],
        world,
        verdict,
        run(world, verdict, (rider, "direct_observation")),
        composed,
        vectors=["causal-clause"],
        reqs=["R-A-2", "R-A-3", "R-V-5"] if rejected else ["R-A-2", "R-V-5"],
        fallback="post" if fallback else None,
        excluded=[marker] if rejected else [],
        inferred_only=[] if rejected else [marker],
        inferred_shown=verdict == "LOW_CONFID" or (fallback is not None and not rejected),
        route=route,
        effective=verdict if rejected or not row["critical"] else None,
        at_most=verdict,
    )


# ---------------------------------------------------------------- 15. everything at once


def combo(row: Json) -> None:
    """Every kind of claim that must not be confirmed, with Verifier and Executor text naming causes, and a
    Composer that shows it all."""
    world, verdict, fallback, m = WORLDS[row["world"]], row["verdict"], row.get("fallback"), row["markers"]
    invs, dirty = dirty_claims(world, m, fabricated_critical=True)
    outputs = run(
        world,
        verdict,
        *((d, "direct_observation") for d in dirty),
        gaps=[gap(f"root cause: {m['gap']} contention", "c2")],
        rationale=f"All direct. Root cause: {m['rationale']}.",
        executor_gaps=[gap(f"the {m['invented']} resolver was not checked", critical=False)],
    )
    composed = answer(
        world,
        verdict,
        summary=f"Root cause: {m['rationale']}; see also {m['gap']}.",
        facts=facts_of(*dirty),
        gaps=[item(f"root cause: {m['gap']} contention")],
        steps=[
            item(f"Restart the {m['invented']} resolver."),
            item(variant("homoglyph-cyrillic", dirty[2]["statement"], m["fabricated"])[0]),
        ],
    )
    # Every combination carries a fabricated fact, which is REJECT material (R-V-4) whatever the Verifier said:
    # nothing but confirmed facts, gaps and next steps is shown.
    verified(
        row["id"],
        world,
        verdict,
        outputs,
        ["!timeout", json.dumps(composed)[:-2]] if fallback else [composed],
        vectors=[
            *DIRTY_VECTORS,
            "verifier-gap-cause",
            "verifier-rationale",
            "executor-gap-text",
            "invented-cause-summary",
            "invented-cause-next-steps",
            "invented-cause-gaps",
            "homoglyph-cyrillic",
        ],
        reqs=["R-A-1", "R-A-2", "R-A-3", "R-A-5", "R-V-4", "R-V-5"],
        fallback=fallback,
        invocations=invs,
        excluded=[
            m[kind]
            for kind in ("fabricated", "bidi", "gap", "rationale", "invented", "causal", "hypothesis", "injection")
        ],
        inferred_shown=False,
        route=POST2 if fallback else None,
        effective="REJECT",
    )


BUILDERS: dict[str, Callable[[Json], None]] = {
    "restated": restated,
    "every_form": every_form,
    "invented": invented,
    "verifier_gap": verifier_gap,
    "claim_id": claim_id,
    "causal": causal,
    "combo": combo,
}


def build_all() -> None:
    spec = tomllib.loads((HERE / "adversarial_cases.toml").read_text(encoding="utf-8"))
    for entry in spec["case"]:
        if "rows" in entry:
            for row in entry["rows"]:
                BUILDERS[entry["group"]](row)
        else:
            build(entry)


build_all()


def main() -> None:
    with open(HERE / "adversarial.jsonl", "w", encoding="utf-8") as f:
        for case in CASES:
            f.write(json.dumps(case) + "\n")  # ASCII: read_cases splits lines on U+2028 too
    print(len(CASES))


if __name__ == "__main__":
    main()
