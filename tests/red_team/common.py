"""What the red-team modules share: the leak mark, runs of packs through the embedded default, and the checks of
what the user reads.

A vector that leaks today is a ``pytest.param`` marked ``xfail(strict=True, reason="LEAK: ...")``: the suite is
green while the leak stands and turns red the day it is fixed (then drop the mark). ``REFUSED: ...`` marks an honest
claim the service refuses today (a false refusal).
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.heuristic import HeuristicProvider
from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import open_repository
from diagnosis_server.tools.scenario import load_user_scenarios
from tests.attacks.harness import Outcome
from tests.golden.leaks import Haystack

PACKS = Path(__file__).resolve().parent.parent / "incidents" / "packs"
Pack = dict[str, Any]
_C = contracts_pb2.ClaimClassification

# Data as the service quotes it: a JSON string, or a single-quoted span when the value holds double quotes.
QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"|(?<!\w)\'[^\'\n]*\'(?!\w)')


def vector(name: str, *values: object, leak: str = "", refused: str = "") -> Any:
    """A parameter set named ``name``; ``leak`` (what leaks today, and where) or ``refused`` (an honest claim
    refused today) marks it a strict xfail."""
    marks = []
    if leak:
        marks.append(pytest.mark.xfail(strict=True, reason=f"LEAK: {leak}"))
    if refused:
        marks.append(pytest.mark.xfail(strict=True, reason=f"REFUSED: {refused}"))
    return pytest.param(*values, id=name, marks=marks)


def load_pack(name: str) -> Pack:
    pack: Pack = json.loads((PACKS / f"{name}.json").read_text(encoding="utf-8"))
    return pack


def mutated(name: str, mutate: Callable[[Pack], None]) -> Pack:
    pack = copy.deepcopy(load_pack(name))
    mutate(pack)
    return pack


async def run_packs_async(
    packs: Mapping[str, Pack], folder: Path, *, question: str | None = None, with_invocations: bool = False
) -> dict[str, Outcome]:
    """Each pack (keyed by the name it is stored under) once through the embedded default agents, over a real
    SQLite store; the stored run (and, when asked, its recorded tool invocations)."""
    (folder / "packs").mkdir(parents=True, exist_ok=True)
    for name, pack in packs.items():
        stored = dict(pack, name=name)
        (folder / "packs" / f"{name}.json").write_text(json.dumps(stored), encoding="utf-8")
    scenarios = load_user_scenarios(folder / "packs")
    repository = await open_repository(f"sqlite+aiosqlite:///{folder / 'store.db'}")
    out: dict[str, Outcome] = {}
    try:
        for name in packs:
            scenario = scenarios[name]
            orchestrator = Orchestrator(
                store=repository, provider=HeuristicProvider(), tools_for=pack_tools_for(scenarios)
            )
            run = await orchestrator.run(question=question or scenario.question, scenario=name)
            stored_run = await repository.get_run(run.run_id)
            assert stored_run is not None
            invocations = await repository.list_tool_invocations(run.run_id) if with_invocations else []
            out[name] = Outcome(stored_run, invocations)
    finally:
        await repository.close()
    return out


def run_packs(
    packs: Mapping[str, Pack], *, question: str | None = None, with_invocations: bool = False
) -> dict[str, Outcome]:
    with tempfile.TemporaryDirectory(prefix="red-team-") as tmp:
        return asyncio.run(run_packs_async(packs, Path(tmp), question=question, with_invocations=with_invocations))


def unquoted_lines(text: str, marker: str) -> list[str]:
    """The answer's lines where ``marker`` stands outside quoted data (the service's own prose)."""
    return [line.strip() for line in text.split("\n") if marker in Haystack(QUOTED.sub('""', line))]


def classification(outcome: Outcome, claim_id: str) -> str:
    for check in outcome.run.self_evaluation.verifier_evaluation.claim_checks:
        if check.claim_id == claim_id:
            return _C.Name(check.classification).removeprefix("CLAIM_CLASSIFICATION_")
    return "ABSENT"


def shown_anywhere(outcome: Outcome, claim_id: str) -> bool:
    """Whether the answer cites the claim at all: a fact, the likely cause or a possible direction."""
    answer = outcome.run.answer
    items: Iterable[Any] = [
        *answer.confirmed_facts,
        *answer.possible_directions,
        *([answer.likely_cause] if answer.HasField("likely_cause") else []),
    ]
    cited = {outcome._resolve(cid) for item in items for cid in item.claim_ids}
    return claim_id in cited


def fact_lines(outcome: Outcome, claim_id: str) -> list[str]:
    return [line for line in outcome.run.answer_text.split("\n") if f"[{claim_id}]" in line]
