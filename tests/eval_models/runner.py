"""Replay every case variant through the real graph and count what reaches the answer (``make eval-models``).

Each run is the Orchestrator's, with the real Gatekeeper, verified-input builder, Verifier guard, Composer guard and
an SQLite store, over the pack's own toolset and context; the played agents (``players``) stand for the model. Per
variant it counts: the cause as the likely cause, the cause as a possible direction, true claims shown (a confirmed
fact or the likely cause) of those written, true claims shown only as a direction, REJECT runs, untrue claims shown
(and shown as a direction), and runs whose untrue claim is critical that end PASS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import diagnosis_server
from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import open_repository
from diagnosis_server.tools.scenario import load_user_scenarios
from tests.eval_models.players import PlayedProvider

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
PACKS_DIR = HERE.parent / "incidents" / "packs"
VARIANTS = ("honest", "typical", "untrue")
Json = dict[str, Any]


@dataclass
class RunResult:
    incident: str
    variant: str
    verdict: str
    source: str
    cause_likely: bool
    cause_direction: bool
    true_written: int
    true_shown: int
    true_direction: int
    untrue_shown: int
    untrue_direction: int
    untrue_critical: bool
    shown: list[str] = field(default_factory=list)
    directions: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    # The classes of the refused claims that are true (what a fixed guard should let through).
    refused_true: list[str] = field(default_factory=list)
    # Why the guard changed a claim's class, in its own words.
    reasons: dict[str, str] = field(default_factory=dict)


@dataclass
class Totals:
    runs: int = 0
    cause_likely: int = 0
    cause_direction: int = 0
    true_written: int = 0
    true_shown: int = 0
    true_direction: int = 0
    reject: int = 0
    passed: int = 0
    low_confid: int = 0
    untrue_shown: int = 0
    untrue_direction: int = 0
    untrue_critical_pass: int = 0
    fallback: int = 0


def load_cases(names: Sequence[str] = (), cases_dir: Path = CASES_DIR) -> list[Json]:
    paths = sorted(cases_dir.glob("*.json"))
    if names:
        paths = [p for p in paths if p.stem in set(names)]
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


def _claim_ids(item: contracts_pb2.ComposedItem, verified: list[str]) -> set[str]:
    """An answer names a claim by its id, or by ``#N``, its position in the verified output."""
    out = set()
    for cid in item.claim_ids:
        if cid.startswith("#") and cid[1:].isdigit() and 0 < int(cid[1:]) <= len(verified):
            out.add(verified[int(cid[1:]) - 1])
        else:
            out.add(cid)
    return out


def judge(case: Json, variant: str, run: run_pb2.DiagnosisRun) -> RunResult:
    played = case["variants"][variant]
    marks: Json = played["marks"]
    evaluation = run.self_evaluation.verifier_evaluation
    verified = [c.claim_id for c in evaluation.verified_executor_output.claims]
    answer = run.answer
    likely = _claim_ids(answer.likely_cause, verified) if answer.HasField("likely_cause") else set()
    facts = set().union(*(_claim_ids(i, verified) for i in answer.confirmed_facts)) | likely
    directions = set().union(*(_claim_ids(i, verified) for i in answer.possible_directions)) - facts
    true_ids = [cid for cid, m in marks.items() if m["true"]]
    untrue_ids = [cid for cid, m in marks.items() if not m["true"]]
    cause = played["cause_claim"]
    cause_true = marks[cause]["true"]
    refused = {
        c.claim_id: contracts_pb2.ClaimClassification.Name(c.classification).removeprefix("CLAIM_CLASSIFICATION_")
        for c in evaluation.claim_checks
        if c.classification
        not in (
            contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
            contracts_pb2.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        )
    }
    for cid in marks:
        if cid not in verified:
            refused.setdefault(cid, "GATEKEEPER")
    reasons = {c.claim_id: c.reason for c in evaluation.classification_changes if c.source == "guard"}
    return RunResult(
        incident=case["incident"],
        variant=variant,
        verdict=contracts_pb2.Verdict.Name(run.verdict).removeprefix("VERDICT_"),
        source=contracts_pb2.ComposerSource.Name(answer.source).removeprefix("COMPOSER_SOURCE_"),
        cause_likely=cause_true and cause in likely,
        cause_direction=cause_true and cause in directions,
        true_written=len(true_ids),
        true_shown=sum(1 for cid in true_ids if cid in facts),
        true_direction=sum(1 for cid in true_ids if cid in directions),
        untrue_shown=sum(1 for cid in untrue_ids if cid in facts),
        untrue_direction=sum(1 for cid in untrue_ids if cid in directions),
        untrue_critical=any(marks[cid].get("critical") for cid in untrue_ids),
        shown=sorted(facts),
        directions=sorted(directions),
        refused=refused,
        refused_true=sorted(refused[cid] for cid in true_ids if cid in refused),
        reasons=reasons,
    )


async def run_all(cases: Sequence[Json], variants: Sequence[str] = VARIANTS) -> list[RunResult]:
    scenarios = load_user_scenarios(PACKS_DIR)
    tools_for = pack_tools_for({c["scenario"]: scenarios[c["scenario"]] for c in cases})
    results: list[RunResult] = []
    with tempfile.TemporaryDirectory(prefix="eval-models-") as tmp:
        repository = await open_repository(f"sqlite+aiosqlite:///{Path(tmp) / 'eval.db'}")
        try:
            for case in cases:
                for variant in variants:
                    orchestrator = Orchestrator(
                        store=repository, provider=PlayedProvider(case, variant), tools_for=tools_for
                    )
                    run = await orchestrator.run(question=case["question"], scenario=case["scenario"])
                    stored = await repository.get_run(run.run_id)
                    assert stored is not None
                    results.append(judge(case, variant, stored))
        finally:
            await repository.close()
    return results


def totals(results: Sequence[RunResult]) -> dict[str, Totals]:
    out: dict[str, Totals] = {}
    for r in results:
        t = out.setdefault(r.variant, Totals())
        t.runs += 1
        t.cause_likely += r.cause_likely
        t.cause_direction += r.cause_direction
        t.true_written += r.true_written
        t.true_shown += r.true_shown
        t.true_direction += r.true_direction
        t.reject += r.verdict == "REJECT"
        t.passed += r.verdict == "PASS"
        t.low_confid += r.verdict == "LOW_CONFID"
        t.untrue_shown += r.untrue_shown
        t.untrue_direction += r.untrue_direction
        t.untrue_critical_pass += r.untrue_critical and r.verdict == "PASS"
        t.fallback += r.source != "COMPOSER"
    return out


def table(by_variant: dict[str, Totals]) -> str:
    lines = [
        f"{'variant':<8} {'runs':>4} {'cause likely':>12} {'cause dir':>9} {'true shown/written':>18} "
        f"{'true dir':>8} {'PASS':>4} {'LOW':>4} {'REJECT':>6} {'untrue shown':>12} {'untrue dir':>10} "
        f"{'untrue crit PASS':>16} {'fallback':>8}"
    ]
    for variant, t in by_variant.items():
        lines.append(
            f"{variant:<8} {t.runs:>4} {t.cause_likely:>12} {t.cause_direction:>9} "
            f"{f'{t.true_shown}/{t.true_written}':>18} {t.true_direction:>8} {t.passed:>4} {t.low_confid:>4} "
            f"{t.reject:>6} {t.untrue_shown:>12} {t.untrue_direction:>10} {t.untrue_critical_pass:>16} "
            f"{t.fallback:>8}"
        )
    return "\n".join(lines)


def shares(t: Totals) -> dict[str, float]:
    """The counts as shares, in the terms of the goals: of runs, of true claims written, of runs without untruth."""

    def share(part: int, whole: int) -> float:
        return round(part / whole, 3) if whole else 0.0

    return {
        "cause_likely": share(t.cause_likely, t.runs),
        "cause_likely_or_direction": share(t.cause_likely + t.cause_direction, t.runs),
        "true_shown": share(t.true_shown, t.true_written),
        "reject": share(t.reject, t.runs),
    }


def refusals(results: Sequence[RunResult]) -> dict[str, dict[str, int]]:
    """Per variant, how many true claims each class (or the Gatekeeper) kept out of the answer."""
    out: dict[str, Counter[str]] = {}
    for r in results:
        out.setdefault(r.variant, Counter()).update(r.refused_true)
    return {variant: dict(sorted(counts.items())) for variant, counts in out.items()}


def summary(results: Sequence[RunResult]) -> Json:
    by_variant = totals(results)
    return {
        "server_package": str(Path(diagnosis_server.__file__).resolve().parent),
        "cases": len({r.incident for r in results}),
        "variants": {v: asdict(t) for v, t in by_variant.items()},
        "shares": {v: shares(t) for v, t in by_variant.items()},
        "refused_true_claims": refusals(results),
        "runs": [asdict(r) for r in results],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.eval_models", description=__doc__.splitlines()[0])
    parser.add_argument("incidents", nargs="*", help="only these incidents (default: every case file)")
    parser.add_argument("--cases-dir", type=Path, default=CASES_DIR, help="where the case files are (default: cases/)")
    parser.add_argument("--out", default="var/eval-models/summary.json", help="where the summary goes")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per run")
    args = parser.parse_args(argv)
    cases = load_cases(args.incidents, args.cases_dir)
    if not cases:
        print("no case files", file=sys.stderr)
        return 1
    results = asyncio.run(run_all(cases))
    if args.verbose:
        for r in results:
            print(
                f"{r.incident:<38} {r.variant:<7} {r.verdict:<10} {r.source:<28} likely={int(r.cause_likely)} "
                f"dir={int(r.cause_direction)} true {r.true_shown}/{r.true_written} untrue={r.untrue_shown} "
                f"refused={r.refused}"
            )
            for cid, reason in r.reasons.items():
                print(f"    {cid}: {reason}")
    data = summary(results)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"server code: {data['server_package']}")
    print(f"{data['cases']} incidents, {len(results)} runs")
    print(table(totals(results)))
    for variant, counts in refusals(results).items():
        print(f"true claims refused ({variant}): " + (", ".join(f"{k} {n}" for k, n in counts.items()) or "none"))
    print(f"summary: {out}")
    return 0
