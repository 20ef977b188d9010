"""The Gatekeeper: deterministic rules between the Executor and the Verifier (R-GK-1..7, R-C-3)."""

from __future__ import annotations

from diagnosis_server.gatekeeper.check import run_gatekeeper
from diagnosis_server.gatekeeper.pointer import PointerError, resolve
from diagnosis_server.gatekeeper.rules import INSTRUCTION_TEXT, INVOCATION_REF, MATCHED_TEXT, RAW_PATH, RULES, SCHEMA

__all__ = [
    "INSTRUCTION_TEXT",
    "INVOCATION_REF",
    "MATCHED_TEXT",
    "RAW_PATH",
    "RULES",
    "SCHEMA",
    "PointerError",
    "resolve",
    "run_gatekeeper",
]
