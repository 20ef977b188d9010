"""Quantities an honest claim works out from what it bound: cadences, probe budgets, durations written the Go way;
each rule fails closed (another value stays unshown)."""

from __future__ import annotations

import pytest

from diagnosis_server.verification.derivability import concrete_facts, derive

_EVICTIONS = ["2025-06-24T10:12:54Z", "2025-06-24T10:53:54Z", "limit of containers 2Gi"]
_PROBE = ["12", "10"]
_PROBE_FIELDS = ["failureThreshold: 12", "periodSeconds: 10"]


@pytest.mark.requirement("R-V-2")
@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        ("log-archiver was evicted at its 2Gi limit roughly every 40 minutes", True),
        ("log-archiver was evicted at its 2Gi limit every ~40 min", True),
        ("log-archiver was evicted at its 2Gi limit roughly every 10 minutes", False),
        ("log-archiver was evicted at its 2Gi limit every 25 minutes", False),
    ],
)
def test_a_cadence_is_the_span_of_the_bound_moments_over_their_repeats(statement: str, shown: bool) -> None:
    derivation = derive(statement, _EVICTIONS, bound=_EVICTIONS, counts={2})
    assert (derivation.unshown == ()) is shown, derivation


@pytest.mark.requirement("R-V-2")
@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        ("the startup probe gives the app 12 × 10s = 120s to come up", True),
        ("the startup probe allows about 2 minutes to come up", True),
        ("the startup probe allows about 5 minutes to come up", False),
        ("the startup probe allows 130s to come up", False),
    ],
)
def test_a_probe_budget_is_its_bound_threshold_times_its_bound_period(statement: str, shown: bool) -> None:
    derivation = derive(statement, _PROBE, bound=[*_PROBE, *_PROBE_FIELDS], fields=_PROBE_FIELDS)
    assert (derivation.unshown == ()) is shown, derivation


def test_a_budget_needs_a_period_field_not_any_two_numbers() -> None:
    fields = ["replicas: 12", "restartCount: 10"]
    derivation = derive("the pods were down for 120s", ["12", "10"], bound=[*fields, "12", "10"], fields=fields)
    assert derivation.unshown == ("120s",)


@pytest.mark.requirement("R-V-2")
def test_an_approximate_go_duration_is_within_its_rounding() -> None:
    lines = ["[2025-10-01T08:24:00.812345 #1] Writing a.css", "[2025-10-01T08:25:39.912345 #1] Writing b.js"]
    assert derive("asset compilation still running ~1m40s in", lines, bound=lines).unshown == ()
    assert derive("asset compilation still running 1m40s in", lines, bound=lines).unshown == ("1m40s",)


def test_a_duration_in_seconds_is_no_http_status() -> None:
    assert "120s" in concrete_facts("the probe waits 120s")
    assert "502" in concrete_facts("edge-gateway returns 502s")


def test_a_number_before_a_path_counts_nothing() -> None:
    """ "errno 111 on GET /v2/orders" is no count of orders beside "3000/v2/orders" in the same line."""
    line = 'connect() failed (111: Connection refused), upstream: "http://10.6.3.57:3000/v2/orders?page=1"'
    derivation = derive('ingress-nginx logs "Connection refused" (errno 111) on GET /v2/orders?page=1', [line])
    assert derivation.conflicts == ()


@pytest.mark.requirement("R-V-2")
@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        ("there have been ~80 BackOff events", True),  # 40 + 41, as rounded as written
        ("there have been 81 BackOff events", True),
        ("there have been ~120 BackOff events", False),
        ("there have been 80 BackOff events", False),  # not approximate: the sum is 81
    ],
)
def test_an_approximate_total_is_the_sum_of_a_bound_field_as_rounded_as_written(statement: str, shown: bool) -> None:
    fields = ["count: 40", "count: 41"]
    derivation = derive(statement, ["BackOff", "40", "41"], bound=fields, fields=fields)
    assert (derivation.unshown == ()) is shown, derivation


@pytest.mark.requirement("R-V-2")
@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        ("no deploys were recorded in the 40-minute window", True),
        ("no deploys were recorded in the 40 minute window", True),
        ("no deploys were recorded in the 45-minute window", False),
    ],
)
def test_a_number_joined_to_its_unit_by_a_hyphen_is_the_quantity(statement: str, shown: bool) -> None:
    window = ["2025-03-18T08:45:00Z", "2025-03-18T09:25:00Z"]
    derivation = derive(statement, ["0", *window], bound=["total: 0", *window])
    assert (derivation.unshown == ()) is shown, derivation


def test_a_half_rounds_either_way_and_more_is_another_value() -> None:
    deploys = ["2025-08-14T18:22:30Z", "2025-08-14T18:24:00Z"]  # 1.5 minutes apart
    assert derive("orders-api was deployed two minutes earlier", deploys).unshown == ()
    assert derive("orders-api was deployed one minute earlier", deploys).unshown == ()
    assert derive("orders-api was deployed three minutes earlier", deploys).unshown == ("three minutes",)
