"""Check a case file's claims the way the Gatekeeper does, and nothing further: a player's bindings must resolve.

``python -m tests.eval_models.check_bindings FILE [FILE ...]`` prints every binding the Gatekeeper fails or warns
on (and every claim that is not legal executor_evidence_v2), per variant; exit 1 when any fails. It runs only the
Gatekeeper, so a player can check its pointers without seeing what the later guards make of its words.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from diagnosis_server.gatekeeper import run_gatekeeper
from diagnosis_server.protocols.executor import parse_executor_output
from tests.eval_models.players import _invocation

Json = dict[str, Any]


def problems(case: Json) -> list[str]:
    """What the Gatekeeper says of each variant's executor output, one line a failed or warned binding."""
    invocations = [_invocation(i) for i in case["tool_invocations"]]
    out: list[str] = []
    for variant, played in case["variants"].items():
        parsed = parse_executor_output(json.dumps(played["executor"], ensure_ascii=False))
        if not parsed.ok:
            out.append(f"{variant}: not legal executor_evidence_v2: {parsed.error}")
            continue
        result = run_gatekeeper(parsed, invocations, run_id="")
        for issue in [*result.errors, *result.warnings]:
            where = f"{variant} {issue.claim_id or '-'} binding {issue.binding_index}"
            out.append(f"{where}: {issue.rule}: {issue.message}")
        claims = {c["claim_id"] for c in played["executor"]["claims"]}
        for key in ("marks", "verifier"):
            missing = claims - set(played.get(key, {}))
            if missing:
                out.append(f"{variant}: {key} lacks {sorted(missing)}")
        if played.get("cause_claim") not in claims:
            out.append(f"{variant}: cause_claim {played.get('cause_claim')!r} is not a claim")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])]
    if not paths:
        print("usage: python -m tests.eval_models.check_bindings FILE [FILE ...]", file=sys.stderr)
        return 2
    bad = 0
    for path in paths:
        found = problems(json.loads(path.read_text(encoding="utf-8")))
        bad += bool(found)
        print(f"{path.name}: {'ok' if not found else f'{len(found)} problem(s)'}")
        for line in found:
            print(f"  {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
