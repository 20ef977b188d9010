"""The agents' JSON as the golden case generators write it: an Executor claim and a Composer answer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# A case, an agent output or a piece of one: JSON objects written as literals.
Json = dict[str, Any]


def claim(cid: str, statement: str, *bindings: Json, critical: bool = True, status: str = "confirmed") -> Json:
    return {
        "claim_id": cid,
        "statement": statement,
        "critical": critical,
        "status": status,
        "evidence_bindings": list(bindings),
    }


def item(text: str, *ids: str) -> Json:
    """An answer item, citing the claims ``ids`` (none: the key is left out)."""
    out: Json = {"text": text}
    if ids:
        out["claim_ids"] = list(ids)
    return out


def composer(
    summary: str,
    facts: Iterable[Json] = (),
    dirs: Iterable[Json] = (),
    gaps: Iterable[Json] = (),
    steps: Iterable[Json] = (),
) -> Json:
    return {
        "summary": summary,
        "confirmed_facts": list(facts),
        "possible_directions": list(dirs),
        "evidence_gaps": list(gaps),
        "next_steps": list(steps),
    }
