"""Runs attack cases through the real graph (scripted agents, real guards, a real SQLite store) and reads the answer.

A claim is *shown as a fact* when the answer cites it as a confirmed fact or as the likely cause; a text *reaches
the user* when, after the adversarial suite's own normalization (``tests.golden.leaks``), it occurs in the answer
text or any persisted composer output.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.conversions import message_to_dict
from diagnosis_server.evaluation import EvalCase, run_case
from diagnosis_server.store import open_repository
from tests.golden.leaks import Haystack, strings

from .world import Json


@dataclass(frozen=True, slots=True)
class Outcome:
    run: run_pb2.DiagnosisRun
    invocations: list[contracts_pb2.ToolInvocation]

    @property
    def verdict(self) -> str:
        return contracts_pb2.Verdict.Name(self.run.verdict).removeprefix("VERDICT_")

    def fact_ids(self) -> set[str]:
        """Claim ids the answer cites as confirmed facts or as the likely cause."""
        answer = self.run.answer
        items = [*answer.confirmed_facts, *([answer.likely_cause] if answer.HasField("likely_cause") else [])]
        return {self._resolve(cid) for item in items for cid in item.claim_ids}

    def _resolve(self, cid: str) -> str:
        """An answer names a claim by its id, or by ``#N``: its position in the verified Executor output."""
        verified = [c.claim_id for c in self.run.self_evaluation.verifier_evaluation.verified_executor_output.claims]
        if cid.startswith("#") and cid[1:].isdigit() and 0 < int(cid[1:]) <= len(verified):
            return verified[int(cid[1:]) - 1]
        return cid

    def shown_as_fact(self, claim_id: str) -> bool:
        return claim_id in self.fact_ids()

    def shown_texts(self) -> str:
        """The answer text and every string of the persisted composer output."""
        texts = [self.run.answer_text]
        if self.run.HasField("answer"):
            texts.extend(strings(message_to_dict(self.run.answer)))
        return "\n".join(texts)

    def reaches_user(self, marker: str) -> bool:
        return marker in Haystack(self.shown_texts())

    def stored_texts(self) -> str:
        """Every string the store holds for the run: the run record (keys too) and its tool invocations."""
        texts = list(strings(message_to_dict(self.run)))
        for invocation in self.invocations:
            texts.extend(strings(message_to_dict(invocation)))
        return "\n".join(texts)


async def _run_all(cases: Sequence[Json]) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="attacks-") as tmp:
        repository = await open_repository(f"sqlite+aiosqlite:///{Path(tmp) / 'attacks.db'}")
        try:
            for raw in cases:
                result = await run_case(EvalCase.model_validate(raw), repository)
                invocations = await repository.list_tool_invocations(result.run.run_id)
                out[raw["case_id"]] = Outcome(result.run, invocations)
        finally:
            await repository.close()
    return out


def run_all(cases: Iterable[Json]) -> dict[str, Outcome]:
    """Every case once; ids must be distinct."""
    listed = list(cases)
    ids = [c["case_id"] for c in listed]
    assert len(ids) == len(set(ids)), "case ids repeat"
    return asyncio.run(_run_all(listed))
