"""The model-answer cases and a quick replay of a few through the real graph (issue 28's measure).

The cases themselves: every binding names a recorded invocation and a JSON pointer of its output that holds the
matched text character for character, every plan step is a tool of the pack with arguments its schema lists, an
untrue variant has exactly one untrue claim (with why, and whether it is critical) and the others none, and the cause
claim names the incident's service. The replay pins only what must hold whatever the guard's precision: no untrue
claim reaches the answer (as a confirmed fact, the likely cause or a possible direction) and a run whose untrue claim
is critical never ends PASS (R-V-4, R-A-3). The other counts are printed: they rise as the guard learns to read
claims as people write them.
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any

import pytest

from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.scenario import load_user_scenarios
from tests.eval_models.runner import PACKS_DIR, VARIANTS, RunResult, load_cases, run_all, table, totals

CASES = load_cases()
# One incident for each kind of untruth: an invented cause, a line said of another service, a wrong pod, a wrong
# number, a wrong error code, a wrong dependency (not critical).
QUICK = (
    "basket-errors-after-rollout",
    "session-redis-aof-refused",
    "cart-pods-restarting",
    "coupon-gateway-readiness-port",
    "indexer-batches-lost",
    "webhooks-dns-timeouts",
)
# Untrue cases an earlier guard let through, each now kept out (the value names what once leaked):
# - a wrong single-digit number (an exit code, a restart count) is grounded by a digit inside the pod's name
#   (``notification-dispatcher-4nccf9g74x-v27nf`` grounds "exit code 4" where the bound exitCode is 1);
# - a log line put in another service's mouth, a service the run knows, is only lowered to an inference, and then
#   leads the answer as its likely cause.
FIXED_LEAKS = {
    "notifier-rollout-stuck": "a digit of the pod's name grounds a wrong exit code",
    "ssr-renderer-heap-limit": "a digit of the pod's name grounds a wrong restart count",
    "helpdesk-startup-probe": "a digit of the pod's name grounds a wrong restart count",
    "invoice-export-backofflimit": "a digit of the pod's name grounds a wrong restart count",
    "cart-worker-evictions": "a digit of the pod's name grounds a wrong restart count (shown in a REJECT answer)",
    "quote-engine-missing-env": "a line of one service said of another becomes the likely cause",
}


@cache
def toolsets() -> dict[str, Toolset]:
    scenarios = load_user_scenarios(PACKS_DIR)
    tools_for = pack_tools_for(scenarios)
    return {name: tools_for(name).toolset for name in scenarios}


def resolve(document: Any, path: str) -> Any:
    """The value at an RFC 6901 pointer."""
    value = document
    for raw in path.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def as_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else str(value)


def test_there_are_at_least_thirty_incidents_with_three_variants_each() -> None:
    assert len(CASES) >= 30
    assert all(set(case["variants"]) == set(VARIANTS) for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["incident"] for c in CASES])
def test_every_binding_holds_its_matched_text_at_its_pointer(case: dict[str, Any]) -> None:
    outputs = {inv["invocation_id"]: inv for inv in case["tool_invocations"]}
    for variant, played in case["variants"].items():
        for claim in played["executor"]["claims"]:
            assert claim["evidence_bindings"], (variant, claim["claim_id"])
            for binding in claim["evidence_bindings"]:
                (inv_id,) = binding["source_invocation_ids"]
                recorded = outputs[inv_id]
                assert binding["tool_name"] == recorded["tool_name"]
                value = as_text(resolve(recorded["output"], binding["raw_path"]))
                assert binding["matched_text"] in value, (variant, claim["claim_id"], binding["raw_path"])


@pytest.mark.parametrize("case", CASES, ids=[c["incident"] for c in CASES])
def test_the_plan_asks_only_the_packs_tools_with_their_arguments(case: dict[str, Any]) -> None:
    toolset = toolsets()[case["scenario"]]
    steps = case["plan"]["steps"]
    assert 1 <= len(steps) <= 16
    for step in steps:
        assert set(step) == {"tool_name", "arguments", "purpose"}
        tool = toolset.get(step["tool_name"])
        assert tool is not None, step["tool_name"]
        properties = tool.input_schema.get("properties")
        assert isinstance(properties, dict) and set(step["arguments"]) <= set(properties)


@pytest.mark.parametrize("case", CASES, ids=[c["incident"] for c in CASES])
def test_only_the_untrue_variant_has_one_untrue_claim_and_each_names_its_cause(case: dict[str, Any]) -> None:
    for variant, played in case["variants"].items():
        marks = played["marks"]
        claims = {c["claim_id"]: c for c in played["executor"]["claims"]}
        assert set(marks) == set(claims)
        untrue = [cid for cid, mark in marks.items() if not mark["true"]]
        assert len(untrue) == (1 if variant == "untrue" else 0)
        for cid in untrue:
            assert marks[cid]["why"] and marks[cid]["critical"] == claims[cid]["critical"]
        cause = played["cause_claim"]
        assert claims[cause]["critical"] and case["root_service"] in claims[cause]["statement"]
        assert {c["claim_id"] for c in played["executor"]["claims"]} == set(played["verifier"])


def _replay(names: tuple[str, ...]) -> list[RunResult]:
    cases = load_cases(names)
    assert sorted(c["incident"] for c in cases) == sorted(names)
    return asyncio.run(run_all(cases))


@pytest.mark.requirement("R-V-4")
def test_no_untrue_claim_is_shown_and_no_untrue_critical_run_passes() -> None:
    results = _replay(QUICK)
    print("\n" + table(totals(results)))
    for r in results:
        assert r.untrue_shown == 0 and r.untrue_direction == 0, (r.incident, r.variant, r.shown, r.directions)
        if r.untrue_critical:
            assert r.verdict != "PASS", (r.incident, r.verdict)


@pytest.mark.requirement("R-V-4")
@pytest.mark.parametrize("name", list(FIXED_LEAKS))
def test_a_known_leak_case_shows_no_untrue_claim(name: str) -> None:
    (result,) = [r for r in _replay((name,)) if r.variant == "untrue"]
    assert result.untrue_shown == 0 and result.untrue_direction == 0, (result.shown, result.refused)
    assert result.verdict != "PASS"
