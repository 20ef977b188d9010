"""Dates and weekdays a statement writes in everyday forms ("30/11/2026", "Nov 30, 2026", "on Monday"), read against
the moments its evidence records, so that a true date is found and one assembled from a timestamp's digits is not."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, date

from diagnosis_server.text.quantities import Instant

_MONTHS = {
    name: number
    for number, names in enumerate(
        (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
         ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")),
        start=1,
    )
    for name in names
}  # fmt: skip
_WEEKDAYS = {
    name: number
    for number, names in enumerate(
        (("monday", "mon"), ("tuesday", "tue", "tues"), ("wednesday", "wed"), ("thursday", "thu", "thurs"),
         ("friday", "fri"), ("saturday", "sat"), ("sunday", "sun")),
    )
    for name in names
}  # fmt: skip
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
# 30/11/2026, 11/30/2026, 30.11.2026, 11-30-2026 (never ISO's year first: that is a timestamp).
_NUMERIC = re.compile(r"(?<![\w./-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?![\w/-]|\.\d)")
# Nov 30, 2026; November 30 2026; 30 Nov 2026; Nov 30 (a year of the evidence's).
_NAMED = re.compile(
    rf"(?<![\w])(?:({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?"
    rf"|(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?(?:,?\s+(\d{{4}}))?)(?![\w])",
    re.IGNORECASE,
)
_WEEKDAY = re.compile(rf"\b(?:on\s+)({'|'.join(sorted(_WEEKDAYS, key=len, reverse=True))})\b\.?", re.IGNORECASE)

# A date read both ways where its order is ambiguous: (year or None, month, day) candidates.
Candidates = frozenset[tuple[int | None, int, int]]


def written_dates(text: str) -> list[tuple[tuple[int, int], Candidates]]:
    """Each date ``text`` writes: (its span, the dates it may mean)."""
    out: list[tuple[tuple[int, int], Candidates]] = []
    for match in _NUMERIC.finditer(text):
        first, second, year = int(match.group(1)), int(match.group(3)), int(match.group(4))
        # (day/month in most of the world, month/day in the US: either reading that is a date)
        found = frozenset(c for c in ((year, second, first), (year, first, second)) if _valid(*c))
        out.append((match.span(), found))
    for match in _NAMED.finditer(text):
        if match.group(1):
            month, day, written = _MONTHS[match.group(1).lower()], int(match.group(2)), match.group(3)
        else:
            day, month, written = int(match.group(4)), _MONTHS[match.group(5).lower()], match.group(6)
        if (match.group(1) or match.group(5)) == "may":
            continue  # the verb ("pods may 2x"), never the month, unless capitalized
        candidate = (int(written) if written else None, month, day)
        out.append((match.span(), frozenset({candidate}) if _valid(*candidate) else frozenset()))
    return out


def written_weekdays(text: str) -> list[tuple[tuple[int, int], int]]:
    """Each weekday ``text`` says something happened on ("on Monday"): (its span, 0 for Monday .. 6)."""
    return [(match.span(1), _WEEKDAYS[match.group(1).lower()]) for match in _WEEKDAY.finditer(text)]


def shows_date(candidates: Candidates, moments: Iterable[Instant]) -> bool:
    """One of the evidence's moments falls on the date (in UTC, the zone every recorded output writes)."""
    days = {_day(m) for m in moments}
    return any(
        (year is None or year == d.year) and (month, day) == (d.month, d.day)
        for year, month, day in candidates
        for d in days
    )


def shows_weekday(weekday: int, moments: Iterable[Instant]) -> bool:
    return any(_day(m).weekday() == weekday for m in moments)


def _day(instant: Instant) -> date:
    return instant.moment.astimezone(UTC).date() if instant.aware else instant.moment.date()


def _valid(year: int | None, month: int, day: int) -> bool:
    try:
        date(year or 2000, month, day)
    except ValueError:
        return False
    return True
