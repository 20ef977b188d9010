"""Diagnose requests the service refuses with INVALID_ARGUMENT: each a question, a scenario and the field the
refusal names, from an empty question to values far over the limits."""

from __future__ import annotations

import pytest

BAD_DIAGNOSE_INPUTS = [
    pytest.param("", "", "question", id="empty"),
    pytest.param("   \n\t ", "", "question", id="blank"),
    pytest.param(" \t\r\n ", "", "question", id="blank-cr"),
    pytest.param("x" * 4001, "", "question", id="too-long"),
    pytest.param("é" * 4001, "", "question", id="too-long-multibyte"),
    pytest.param("x" * 1_000_000, "", "question", id="huge"),
    pytest.param("Why?", "no-such-scenario", "context.scenario", id="unknown-scenario"),
    pytest.param("Why?", "../../etc/passwd", "context.scenario", id="path"),
    pytest.param("Why?", "s" * 100_000, "context.scenario", id="huge-scenario"),
    pytest.param("Why?", "é" * 50_000, "context.scenario", id="huge-utf8"),
]
