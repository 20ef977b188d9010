"""Executor outputs for the evidence checks: one claim per binding, in the contract's own shape."""

from __future__ import annotations

from typing import Any


def executor_output(*bindings: tuple[str, str, str, str], **extra: Any) -> dict[str, Any]:
    """Claims ``c1``, ``c2``... ("upstream timed out", critical, confirmed), each bound once: a binding is
    ``(invocation id, tool name, raw path, matched text)``; ``extra`` adds top-level fields."""
    return {
        "contract": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": f"c{n}",
                "statement": "upstream timed out",
                "critical": True,
                "status": "confirmed",
                "evidence_bindings": [
                    {"source_invocation_ids": [inv], "tool_name": tool, "raw_path": path, "matched_text": text}
                ],
            }
            for n, (inv, tool, path, text) in enumerate(bindings, start=1)
        ],
        **extra,
    }
