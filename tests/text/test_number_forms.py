"""Numbers as people write them are read in their plain forms (``text.number_forms``); each rule fails closed."""

from __future__ import annotations

import pytest

from diagnosis_server.text.number_forms import grouped, plain_numbers
from diagnosis_server.verification.derivability import derive


@pytest.mark.parametrize(
    ("written", "plain"),
    [
        ("25 percent of calls", "25% of calls"),
        ("25 per cent of calls", "25% of calls"),
        ("25 pct of calls", "25% of calls"),
        ("1e3 requests", "1000 requests"),
        ("1.0E+4 requests", "10000 requests"),
        ("10^3 requests", "1000 requests"),
        ("1 × 10^4 requests", "10000 requests"),
        ("1/4 of calls", "~25% of calls"),
        ("¼ of calls", "~25% of calls"),
        ("one in four calls", "~25% of calls"),
        ("two hundred fifty errors", "250 errors"),
        ("twenty-five pods", "25 pods"),
        ("one thousand and twenty rows", "1020 rows"),
        ("1 234,5 ms", "1234.5 ms"),
        # what is no single number stays as written
        ("one or two pods", "one or two pods"),
        ("one two three", "one two three"),
        ("3/5 replicas ready", "3/5 replicas ready"),
        ("restarted 3 in 10 minutes", "restarted 3 in 10 minutes"),
        ("pod-1e3 and v1e3", "pod-1e3 and v1e3"),
        ("1 234 pods", "1 234 pods"),  # an ordinary space alone: two numbers as often as one
    ],
)
def test_a_number_form_is_read_as_its_plain_number(written: str, plain: str) -> None:
    assert plain_numbers(written) == plain


def test_digits_grouped_by_an_apostrophe_or_a_thin_space_are_one_number() -> None:
    assert grouped("p99 is 1'234.5 ms") == "p99 is 1234.5 ms"
    assert grouped("1\u2009234.5 ms and 1\u202f000 calls") == "1234.5 ms and 1000 calls"
    assert grouped("1,000 calls") == "1,000 calls"  # commas are read where facts are read


@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        ("25 pct of ledger-svc requests failed", True),
        ("52 pct of ledger-svc requests failed", False),
        ("one in four ledger-svc requests failed", True),
        ("one in three ledger-svc requests failed", False),
        ("ledger-svc logged two hundred fifty errors", True),
        ("ledger-svc logged two hundred errors", False),
        ("ledger-svc logged 2.5e2 errors", True),
        ("ledger-svc logged 2.5e1 errors", False),
    ],
)
def test_a_plain_form_is_compared_with_the_evidence_like_any_number(statement: str, shown: bool) -> None:
    fields = ["error_ratio: 0.25", "service: ledger-svc", "errors: 250"]
    derivation = derive(statement, ["0.25", "250", "ledger-svc"], bound=fields, fields=fields)
    assert (derivation.missing == () and derivation.conflicts == ()) is shown, derivation.reason()


@pytest.mark.parametrize(
    ("written", "plain"),
    [
        ("1 in 4 calls", "~25% of calls"),
        ("1e7 requests", "10000000 requests"),
        ("5/4 of calls", "5/4 of calls"),  # more than the whole: no share
        ("1/0 of calls", "1/0 of calls"),
        ("¼ of ｃａｌｌｓ", "~25% of ｃａｌｌｓ"),  # only the fraction is folded
        ("ten three", "ten three"),
        ("one hundred twenty three rows", "123 rows"),
        ("two hundred thousand rows", "200000 rows"),
        ("one hundred hundred", "one hundred hundred"),
        ("one million two thousand rows", "1002000 rows"),
    ],
)
def test_each_rule_of_a_number_form_holds_at_its_edges(written: str, plain: str) -> None:
    assert plain_numbers(written) == plain
