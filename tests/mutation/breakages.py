"""Issue 17's breakages, each applied to a scratch copy of the tree to show that a test fails on it.

Run: ``.venv/bin/python -m tests.mutation.breakages [ID ...]``. Each breakage is one textual edit of
production code (the file must hold ``old`` exactly once); the copy's tests run against the copy (its
``server/`` first on ``PYTHONPATH``); the breakage is shown caught when the named tests fail. The tree itself
is never edited. Writes ``var/breakages/report.md`` (breakage -> failing tests -> first assertion).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = "server/diagnosis_server/"


@dataclass(frozen=True)
class Breakage:
    id: str
    requirement: str
    what: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


BREAKAGES = (
    Breakage(
        "composer-source-forced",
        "R-P-2",
        "the persisted composer_output.source forced to the Composer on a fallback run",
        SRC + "graph/result.py",
        "        evaluation.composer_output.CopyFrom(answer)\n",
        "        evaluation.composer_output.CopyFrom(answer)\n"
        "        evaluation.composer_output.source = contracts_pb2.COMPOSER_SOURCE_COMPOSER\n",
        ("tests/graph/test_end_to_end.py", "tests/graph/test_result_mapping.py"),
    ),
    Breakage(
        "fallback-rendered-as-composer",
        "R-P-2",
        "the post-verification fallback's rendering labelled as the Composer's",
        SRC + "composition/render.py",
        "return render_answer(material, None, source=_S.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK, notes=notes)",
        "return render_answer(material, None, source=_S.COMPOSER_SOURCE_COMPOSER, notes=notes)",
        ("tests/graph/test_end_to_end.py", "tests/composition"),
    ),
    Breakage(
        "prompt-names-dropped",
        "R-P-3",
        "prompt names dropped from prompt_audit",
        SRC + "agents/prompts/__init__.py",
        "contracts_pb2.PromptRef(agent=role, name=self.prompts[role].name, version=self.prompts[role].version)",
        "contracts_pb2.PromptRef(agent=role, version=self.prompts[role].version)",
        ("tests/graph/test_end_to_end.py",),
    ),
    Breakage(
        "gatekeeper-result-stripped",
        "R-P-1",
        "the persisted gatekeeper_result stripped of its errors, warnings and rules",
        SRC + "graph/result.py",
        "        evaluation.gatekeeper_result.CopyFrom(state.gatekeeper_result)\n",
        "        evaluation.gatekeeper_result.CopyFrom(state.gatekeeper_result)\n"
        "        for name in ('errors', 'warnings', 'rules'):\n"
        "            evaluation.gatekeeper_result.ClearField(name)\n",
        ("tests/graph/test_end_to_end.py", "tests/graph/test_result_mapping.py"),
    ),
    Breakage(
        "groundedness-persisted-as-one",
        "R-P-1",
        "groundedness_score persisted as 1.0",
        SRC + "graph/result.py",
        "evaluation.groundedness_score = output.groundedness_score",
        "evaluation.groundedness_score = 1.0",
        ("tests/graph/test_end_to_end.py", "tests/graph/test_result_mapping.py"),
    ),
    Breakage(
        "verifier-status-dropped",
        "R-P-6",
        "verifier_status dropped from the evaluation after a pre-verification fallback",
        SRC + "graph/result.py",
        "        verifier_status=state.verifier_status,  # type: ignore[arg-type]\n",
        "        verifier_status=state.verifier_status if state.pre_fallback_output is None else 0,"
        "  # type: ignore[arg-type]\n",
        ("tests/graph/test_end_to_end.py", "tests/graph/test_result_mapping.py", "tests/graph/test_retries.py"),
    ),
    Breakage(
        "composer-input-carries-excluded",
        "R-R-3",
        "the Composer's input carrying the statements it must not use",
        SRC + "graph/nodes/composer.py",
        "ask_agent(ctx, self.name, material.to_json(),",
        'ask_agent(ctx, self.name, {**material.to_json(), "excluded": list(inputs.excluded_statements)},',
        ("tests/graph/test_composer_input.py",),
    ),
    Breakage(
        "executor-projection-whole-state",
        "R-S-2",
        "the Executor's input projection carrying a state field it must not see (the routing event)",
        SRC + "graph/nodes/executor.py",
        "    plan: tuple[PlanStep, ...]\n",
        "    plan: tuple[PlanStep, ...]\n    routed_by: object = None\n",
        ("tests/graph/test_projections.py",),
    ),
    Breakage(
        "executor-projection-returns-state",
        "R-S-2",
        "the Executor's projection replaced by the state itself (a duck-typed whole state)",
        SRC + "graph/nodes/executor.py",
        "    def project(self, state: DiagnosisState) -> ExecutorInput:\n        return projection(",
        "    def project(self, state: DiagnosisState) -> ExecutorInput:\n"
        "        state.mode = state.planner_mode  # type: ignore[attr-defined]\n"
        "        return state  # type: ignore[return-value]\n        return projection(",
        ("tests/graph/test_projections.py",),
    ),
    Breakage(
        "technical-retries-per-run",
        "R-R-7",
        "technical retries counted per run instead of per cycle",
        SRC + "graph/engine.py",
        "attempt = retries.get((current, cycle), 0) + 1",
        "attempt = retries.get((current, 0), 0) + 1",
        ("tests/graph/test_retries.py", "tests/graph/test_end_to_end.py"),
    ),
    Breakage(
        "trace-evidence-count-mixed",
        "R-R-7",
        "the trace's evidence retry count mixed with technical retries",
        SRC + "graph/result.py",
        "evidence_retry_count=state.evidence_retry_count,",
        "evidence_retry_count=state.evidence_retry_count + sum(c for _, c in state.technical_retries),",
        ("tests/graph/test_retries.py", "tests/graph/test_end_to_end.py", "tests/graph/test_result_mapping.py"),
    ),
    Breakage(
        "builder-drops-retry-context",
        "R-C-4",
        "the builder never passing retry_context to the second cycle's Verifier",
        SRC + "graph/nodes/builder.py",
        "            retry_context=inputs.retry_context,\n        )\n        if verifier_input is None:",
        "            retry_context=None,\n        )\n        if verifier_input is None:",
        ("tests/graph/test_retries.py",),
    ),
    Breakage(
        "guard-accepts-cause-under-reject",
        "R-A-3",
        "the Composer guard accepting a REJECT reply naming a root cause",
        SRC + "composition/composer_rules.py",
        "        if material.verdict == _V.VERDICT_REJECT and _concludes(text):",
        "        if False and material.verdict == _V.VERDICT_REJECT and _concludes(text):",
        ("tests/composition",),
    ),
    Breakage(
        "guard-accepts-extra-gap",
        "R-A-2",
        "the Composer guard accepting an invented extra gap when the Verifier named some",
        SRC + "composition/composer_rules.py",
        "    if len(output.evidence_gaps) > len(gaps):\n"
        '        return [Violation(INVENTED_GAP, "more evidence gaps are listed than the Verifier identified")]\n'
        "    return [",
        "    return [] and [",
        ("tests/composition",),
    ),
    Breakage(
        "fabricated-fact-not-reject",
        "R-V-4",
        "a fabricated fact no longer making the run REJECT (the issue's defect, restored)",
        SRC + "graph/nodes/verifier.py",
        "        if fabricated:\n",
        "        if fabricated and False:\n",
        ("tests/graph/test_fabrication.py", "tests/graph/test_end_to_end.py"),
    ),
    Breakage(
        "fabrication-is-only-a-missing-fact",
        "R-V-4",
        "a claim with some facts found classified reasonable_inference (the defect's first form)",
        SRC + "verification/derivability.py",
        "    if conflicts or len(found) + len(borrowed) < len(facts):",
        "    if conflicts or not (found or borrowed) and facts:",
        ("tests/graph/test_fabrication.py", "tests/verification"),
    ),
)


def _copy() -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="breakage-"))
    ignore = shutil.ignore_patterns(".venv", "var", ".git", "__pycache__", "*.pyc", ".hypothesis", "node_modules")
    for item in ROOT.iterdir():
        if item.name in (".venv", "var", ".git", "node_modules"):
            continue
        target = scratch / item.name
        if item.is_dir():
            shutil.copytree(item, target, ignore=ignore)
        else:
            shutil.copy2(item, target)
    return scratch


_FAILED = re.compile(r"^FAILED (\S+)", re.MULTILINE)
_ERROR = re.compile(r"^E\s+(.+)$", re.MULTILINE)


def run(breakage: Breakage) -> tuple[bool, list[str], str]:
    scratch = _copy()
    try:
        target = scratch / breakage.path
        text = target.read_text(encoding="utf-8")
        if text.count(breakage.old) != 1:
            raise SystemExit(f"{breakage.id}: the text to break is not in {breakage.path} exactly once")
        target.write_text(text.replace(breakage.old, breakage.new), encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=f"{scratch / 'server'}{os.pathsep}{scratch}", PYTHONDONTWRITEBYTECODE="1")
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", *breakage.tests],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        failed = _FAILED.findall(result.stdout)
        first = _ERROR.search(result.stdout)
        # Caught means: the named tests ran and some failed (an error collecting them proves nothing).
        caught = bool(failed)
        return caught, failed, first.group(1).strip() if first else result.stdout[-300:]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str]) -> int:
    chosen = [b for b in BREAKAGES if not argv or b.id in argv]
    lines = ["| breakage | requirement | failing tests | how it failed |", "| --- | --- | --- | --- |"]
    missed = 0
    for breakage in chosen:
        caught, failed, how = run(breakage)
        missed += not caught
        names = ", ".join(sorted({f.split("[")[0] for f in failed})[:4]) + (
            f" (+{len(failed) - 4})" if len(failed) > 4 else ""
        )
        print(f"{'caught' if caught else 'MISSED'} {breakage.id}: {len(failed)} failed; {how[:160]}")
        lines.append(f"| {breakage.what} | {breakage.requirement} | {names or '-'} ({len(failed)}) | {how[:200]} |")
    out = ROOT / "var" / "breakages"
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(chosen) - missed} of {len(chosen)} breakages caught; var/breakages/report.md")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
