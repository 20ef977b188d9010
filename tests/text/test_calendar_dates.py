"""Dates and weekdays in everyday forms are found where the evidence's moments fall on them (R-V-4, R-V-5)."""

from __future__ import annotations

import pytest

from diagnosis_server.text.calendar_dates import shows_date, shows_weekday, written_dates, written_weekdays
from diagnosis_server.text.quantities import instants

MOMENTS = instants("finishedAt: 2026-11-30T09:47:12Z")  # a Monday


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("on 30/11/2026", True),
        ("on 11/30/2026", True),
        ("on 30.11.2026", True),
        ("on Nov 30, 2026", True),
        ("on 30 November 2026", True),
        ("on November 30th", True),
        ("on 12/30/2026", False),  # December
        ("on 11.30.2025", False),  # the year is wrong
        ("on Nov 3, 2026", False),
    ],
)
def test_a_date_is_shown_by_a_moment_on_that_day(text: str, shown: bool) -> None:
    ((_, candidates),) = written_dates(text)
    assert shows_date(candidates, MOMENTS) is shown


def test_an_ambiguous_order_reads_both_ways_and_an_impossible_one_none() -> None:
    ((_, both),) = written_dates("03/04/2026")
    assert both == {(2026, 4, 3), (2026, 3, 4)}
    ((_, none),) = written_dates("31/31/2026")
    assert not none


def test_may_the_verb_is_no_month_and_a_weekday_needs_on() -> None:
    assert written_dates("the pods may 2 times restart") == []
    assert written_weekdays("the sun is out") == []
    ((_, monday),) = written_weekdays("it failed on Monday")
    assert shows_weekday(monday, MOMENTS) and not shows_weekday(6, MOMENTS)
