"""One adversarial case as ``adversarial.jsonl`` holds it: the run, its markers checked, its expectations.

Every marker must be planted somewhere in what the hostile agents or tools wrote, be absent from the world's
clean material, and overlap no marker of another case. ``expect`` pins only what the spec fixes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .adversarial_worlds import World
from .agent_json import Json
from .leaks import Haystack, strings

REJECT_PHRASE = "cannot support a reliable conclusion"
INFERRED_PHRASE = "inferred from"
FULL = ["planner", "executor", "gatekeeper", "verified_input_builder", "verifier", "composer"]
POST2 = [*FULL, "composer", "post_verification_fallback"]  # the Composer failed twice
POST1 = [*FULL, "post_verification_fallback"]  # the Composer refused (non-retryable)
PRE_GK = ["planner", "executor", "gatekeeper", "pre_verification_fallback"]
PRE_EX = ["planner", "executor", "pre_verification_fallback"]
PRE_V2 = [*FULL[:5], "verifier", "pre_verification_fallback"]
PRE_PL = ["planner", "planner", "pre_verification_fallback"]
PRE_LACKS = ["model_verdict", "effective_verdict", "verdict", "claim_checks"]
ROUTES = {"POST1": POST1, "POST2": POST2}
FALLBACK_ROUTE = {"pre:planner": PRE_PL, "pre:executor": PRE_EX, "pre:gatekeeper": PRE_GK, "pre:verifier": PRE_V2}

CASES: list[Json] = []
_MARKERS: dict[str, tuple[str, Haystack]] = {}


def _reverse_present(marker: str, hostile: Haystack) -> bool:
    return marker in hostile or marker[::-1] in hostile


def _check_markers(case_id: str, world: World, markers: list[str], agent: Json, invocations: list[Json]) -> None:
    assert markers, f"{case_id}: a case plants at least one marker"
    clean = Haystack("\n".join(world.clean_texts()))
    hostile_parts = [s for out in agent.values() for o in out for s in strings(o)]
    hostile_parts += [s for out in agent.values() for o in out for s in strings(o, keys=False)]
    hostile_parts.extend(s for i in invocations for s in strings(i["output"]))
    hostile = Haystack("\n".join(hostile_parts))
    for marker in markers:
        assert marker not in clean, f"{case_id}: marker {marker!r} is in the clean material"
        assert _reverse_present(marker, hostile), f"{case_id}: marker {marker!r} is planted nowhere"
        mine = Haystack(marker)
        for other, (other_id, theirs) in _MARKERS.items():
            assert other_id == case_id or (marker not in theirs and other not in mine), (
                f"{case_id}: marker {marker!r} overlaps {other!r} of {other_id}"
            )
        _MARKERS[marker] = (case_id, mine)


def add(
    case_id: str,
    *,
    world: World,
    vectors: list[str],
    reqs: list[str],
    verdict: str | None,
    fallback: str | None,
    executor_outputs: Sequence[Any],
    verifier_outputs: Sequence[Any] = (),
    composer_outputs: Sequence[Any] = (),
    planner_outputs: Sequence[Any] | None = None,
    invocations: list[Json] | None = None,
    excluded: Sequence[str] = (),
    not_confirmed: Sequence[str] = (),
    inferred_only: Sequence[str] = (),
    allowed: Sequence[Json] = (),
    inferred_shown: bool = False,
    route: list[str] | None = None,
    route_prefix: list[str] | None = None,
    effective: str | None = None,
    at_most: str | None = None,
    parse_status: str | None = None,
    extra_expect: Json | None = None,
) -> None:
    """One case. ``allowed``: clean claims the answer is certain to show; ``inferred_shown``: a clean inference is."""
    assert case_id not in {c["case_id"] for c in CASES}, case_id
    invocations = invocations if invocations is not None else world.invocations
    agent = {
        "planner": list(planner_outputs) if planner_outputs is not None else [world.plan],
        "executor": list(executor_outputs),
        "verifier": list(verifier_outputs),
        "composer": list(composer_outputs),
    }
    _check_markers(case_id, world, [*excluded, *not_confirmed, *inferred_only], agent, invocations)
    expect: Json = {"status": "SUCCESS"}
    if route is not None:
        expect["route"] = route
    if parse_status is not None:
        expect["parse_status"] = parse_status
    if effective is not None:
        expect["effective_verdict"] = effective
    if excluded:
        expect["answer_excludes"] = list(excluded)
    contains = [c["statement"] for c in allowed]
    if verdict == "REJECT" or effective == "REJECT":
        contains.append(REJECT_PHRASE)
    if inferred_shown:
        contains.append(INFERRED_PHRASE)
    if contains:
        expect["answer_contains"] = contains
    if fallback and fallback.startswith("pre"):
        expect["evaluation_lacks"] = PRE_LACKS
    if extra_expect:
        expect.update(extra_expect)
    CASES.append(
        {
            "case_id": case_id,
            "requirements": reqs,
            "vectors": vectors,
            "question": world.question,
            "tool_invocations": invocations,
            "agent_outputs": agent,
            "expect": expect,
            "adversarial": {
                "verdict": verdict,
                "fallback": fallback,
                "excluded": list(excluded),
                "not_confirmed": list(not_confirmed),
                "inferred_only": list(inferred_only),
                "verdict_at_most": at_most,
                "route_prefix": route_prefix or route,
                "allowed": contains,
                "clean": world.clean_texts(),
            },
        }
    )


def verified(
    case_id: str,
    world: World,
    verdict: str,
    outputs: tuple[Json, Json],
    composed: Sequence[Any],
    *,
    vectors: list[str],
    reqs: list[str],
    **more: Any,
) -> None:
    """A case run through the Verifier: the Executor and Verifier outputs ``outputs`` (as ``run`` gives them)
    and the Composer outputs ``composed``. Unless ``more`` says otherwise: no fallback, the full route as the
    route prefix, the model verdict as the effective verdict, the world's clean observations shown, and its
    clean inference too under LOW_CONFID."""
    ex, ver = outputs
    settings: Json = {
        "fallback": None,
        "allowed": world.facts,
        "route_prefix": FULL,
        "effective": verdict,
        "inferred_shown": verdict == "LOW_CONFID",
        **more,
    }
    add(
        case_id,
        world=world,
        verdict=verdict,
        vectors=vectors,
        reqs=reqs,
        executor_outputs=[ex],
        verifier_outputs=[ver],
        composer_outputs=composed,
        **settings,
    )


def fell_back(
    case_id: str,
    world: World,
    fallback: str,
    executor_outputs: Sequence[Any],
    *,
    vectors: list[str],
    reqs: list[str],
    **more: Any,
) -> None:
    """A case that ends in the pre-verification fallback ``fallback`` (no model verdict), along the route
    that fallback takes (the Verifier's after its retry)."""
    add(
        case_id,
        world=world,
        verdict=None,
        fallback=fallback,
        route=FALLBACK_ROUTE[fallback],
        vectors=vectors,
        reqs=reqs,
        executor_outputs=executor_outputs,
        **more,
    )
