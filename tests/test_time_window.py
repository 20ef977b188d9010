"""The window a question writes, and the window ``ask --since/--until`` sends."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

import pytest

from diagnosis_server.cli.client_commands import _moment_or_span, _window
from diagnosis_server.time_window import Window, question_window, resolve_window

NOW = datetime(2026, 12, 2, 13, 0, tzinfo=UTC).timestamp()


def _at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("why did checkout-api fail yesterday?", "2026-12-01T00:00", "2026-12-02T00:00"),
        ("errors in the last 3 hours?", "2026-12-02T10:00", "2026-12-02T13:00"),
        ("what broke on 2026-11-30?", "2026-11-30T00:00", "2026-12-01T00:00"),
        ("errors between 2026-12-01 10:00 and 2026-12-01 12:30", "2026-12-01T10:00", "2026-12-01T12:30"),
        ("what happened at 10:15?", "2026-12-02T09:45", "2026-12-02T10:45"),
        ("what happened at 14:15 UTC?", "2026-12-01T13:45", "2026-12-01T14:45"),  # still to come today
        ("latency spike at 2026-12-01T08:00:00Z", "2026-12-01T07:30", "2026-12-01T08:30"),
    ],
)
def test_dates_and_times_written_in_a_question_are_its_window(question: str, start: str, end: str) -> None:
    window = question_window(question, NOW)
    assert window is not None and (window.start, window.end) == (_at(start), _at(end)), window


@pytest.mark.parametrize("question", ["why is checkout-api failing?", "pod 10.0.1.90:80 refused", "image 2.14.0"])
def test_a_question_without_a_time_gets_the_last_hour(question: str) -> None:
    assert question_window(question, NOW) is None
    assert resolve_window(None, question, NOW) == Window(NOW - 3600, NOW, "default")


def test_the_requests_window_wins_over_the_questions() -> None:
    asked = Window(1000.0, 2000.0, "request")
    assert resolve_window(asked, "what happened yesterday?", NOW) is asked


def test_ask_since_a_duration_or_a_time_until_a_time() -> None:
    since = _moment_or_span("6h")
    assert since == (21600.0,)
    assert _window(since, NOW) == (NOW - 21600, NOW)
    assert _window(_moment_or_span("2026-12-01T10:00:00Z"), _at("2026-12-01T11:00")) == (
        _at("2026-12-01T10:00"),
        _at("2026-12-01T11:00"),
    )
    assert _window(None, None) is None
    with pytest.raises(ValueError, match="--until needs --since"):
        _window(None, NOW)
    with pytest.raises(ValueError, match="--since must be before --until"):
        _window(NOW, NOW - 60)
    with pytest.raises(argparse.ArgumentTypeError):
        _moment_or_span("yesterday-ish")
