"""Each equivalence of ``text.quantities`` is one rule, and each fails closed: another value never matches."""

from __future__ import annotations

import pytest

from diagnosis_server.text.quantities import (
    clock_times,
    count_of,
    instants,
    quantities,
    quantity,
    same_clock_time,
    same_instant,
    same_quantity,
)


def _q(number: str, unit: str = ""):  # type: ignore[no-untyped-def]
    found = quantity(number, unit)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("claimed", "evidence"),
    [
        (("512", "MiB"), ("512", "Mi")),
        (("1", "Gi"), ("1024", "Mi")),
        (("2", "GB"), ("2000", "MB")),
        (("1536", "bytes"), ("1.5", "KiB")),
        (("1.5", "s"), ("1500", "ms")),
        (("2", "min"), ("120", "s")),
        (("250", "ms"), ("0.25", "s")),
    ],
)
def test_the_same_quantity_in_another_unit_of_its_family_matches(
    claimed: tuple[str, str], evidence: tuple[str, str]
) -> None:
    assert same_quantity(_q(*claimed), _q(*evidence))


@pytest.mark.parametrize(
    ("claimed", "evidence"),
    [
        (("512", "MiB"), ("512", "MB")),  # 1024 is not 1000
        (("1", "Gi"), ("1600", "Mi")),  # 1.56 GiB does not round to 1
        (("1.5", "s"), ("1600", "ms")),
        (("2", "min"), ("2", "s")),
        (("512", "MiB"), ("512", "ms")),  # another family
    ],
)
def test_another_value_or_family_never_matches(claimed: tuple[str, str], evidence: tuple[str, str]) -> None:
    assert not same_quantity(_q(*claimed), _q(*evidence))


def test_an_ambiguous_unit_converts_to_nothing() -> None:
    assert quantity("500", "m") is None  # minutes, metres or millicores
    assert quantity("512", "M") is None  # a byte multiple or a count


@pytest.mark.parametrize(
    ("claimed", "evidence", "matches"),
    [
        (("25", "%"), ("0.2534", ""), True),  # a ratio read as a percentage, rounded as written
        (("25", "%"), ("0.26", ""), False),
        (("0.25", ""), ("25", "%"), True),
        (("1.5", "s"), ("1.52", "s"), True),
        (("1.5", "s"), ("1.56", "s"), False),
        (("250", "ms"), ("0.2497", "s"), True),
        (("3", "s"), ("2.4", "s"), False),  # never rounded further than written
        (("25", "%"), ("25", ""), False),  # a plain 25 is no ratio
    ],
)
def test_rounding_stays_within_the_precision_written(
    claimed: tuple[str, str], evidence: tuple[str, str], matches: bool
) -> None:
    assert same_quantity(_q(*claimed), _q(*evidence)) is matches


def test_quantities_reads_numbers_with_their_units_and_not_a_final_period() -> None:
    found = quantities("limit 512Mi, p99 0.25 s, restarts 3.")
    assert [(q.number, q.family) for q in found] == [(512.0, "bytes"), (0.25, "seconds"), (3.0, "")]


def test_a_count_is_the_number_of_items_of_a_bound_list() -> None:
    assert count_of("3", ['["a","b","c"]'])
    assert not count_of("2", ['["a","b","c"]'])
    assert not count_of("3", ['{"a":1,"b":2,"c":3}', "a b c", "[broken"])


def test_a_timestamp_in_another_zone_is_the_same_instant_and_a_wall_time_only_the_same_wall_time() -> None:
    evidence = instants("at 2024-05-01T12:15:00+02:00 and 2024-05-01 09:00:00")
    assert same_instant("2024-05-01T10:15:00Z", evidence)
    assert not same_instant("2024-05-01T10:16:00Z", evidence)
    assert same_instant("2024-05-01T09:00:00", evidence)
    assert not same_instant("2024-05-01T09:00:00Z", evidence)  # a wall time has no zone to compare


def test_unix_seconds_and_milliseconds_are_instants() -> None:
    assert same_instant("2024-05-01T10:15:00Z", instants("ts=1714558500"))
    assert same_instant("2024-05-01T10:15:00Z", instants("ts=1714558500000"))
    assert not same_instant("2024-05-01T10:15:01Z", instants("ts=1714558500"))


def test_a_time_of_day_in_utc_or_a_named_zone_is_found_in_a_moment_written_in_another_zone() -> None:
    evidence = instants("2024-05-01T12:15:30+02:00")
    ((_, clock, offset),) = clock_times("at 10:15 UTC")
    assert offset == 0.0 and same_clock_time(clock, False, offset, evidence)
    ((_, est, est_offset),) = clock_times("at 05:15 EST")
    assert est_offset == -5.0 and same_clock_time(est, False, est_offset, evidence)
    ((_, cet, cet_offset),) = clock_times("at 11:15 CET")
    assert same_clock_time(cet, False, cet_offset, evidence)
    ((_, wrong, wrong_offset),) = clock_times("at 10:15 CET")  # an hour off
    assert not same_clock_time(wrong, False, wrong_offset, evidence)
    ((_, other, none),) = clock_times("at 10:16")
    assert none is None and not same_clock_time(other, False, none, evidence)
    ((_, seconds, _),) = clock_times("at 10:15:31")
    assert not same_clock_time(seconds, True, None, evidence)


def test_a_written_offset_adds_to_its_zone() -> None:
    ((_, _, offset),) = clock_times("at 12:15 UTC+2")
    assert offset == 2.0


def test_an_approximate_whole_number_rounds_at_its_last_nonzero_digit() -> None:
    about = quantity("270", approximate=True)
    assert about is not None
    assert same_quantity(about, _q("272")) and same_quantity(about, _q("266"))
    assert not same_quantity(about, _q("276"))
    assert not same_quantity(_q("270"), _q("272"))  # written exactly, it is exact
