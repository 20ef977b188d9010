"""Log lines go to standard error as it is when they are written: a caller that swapped it for a while (a
test's capture, a command run in-process) leaves no logger writing to a closed stream."""

from __future__ import annotations

import io
import json
import sys

import pytest
import structlog

from diagnosis_server.api import configure_logging


def test_lines_follow_stderr_when_it_is_swapped_and_closed(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info")
    try:
        swapped = io.StringIO()
        real, sys.stderr = sys.stderr, swapped
        try:
            structlog.get_logger("t").info("while_swapped", n=1)
        finally:
            sys.stderr = real
        written = swapped.getvalue()
        swapped.close()
        structlog.get_logger("t").warning("after_swap")  # the swapped stream is closed: this must not raise
        assert json.loads(written)["event"] == "while_swapped"
        assert json.loads(capsys.readouterr().err.strip().splitlines()[-1])["event"] == "after_swap"
    finally:
        configure_logging("debug")  # the suite's own setting (tests/conftest.py)
