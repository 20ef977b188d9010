"""Crafted lines cannot make matching backtrack (issue 33 item 4): every rule runs on RE2 or is a lookaround
pattern proven safe, a rule that could backtrack is refused when the rules load, and the longest crafted lines
cost no more than a bounded prefix of them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from diagnosis_server.agents.heuristic.analyzers.rules import RulesError, bundled_rules, load_rules
from diagnosis_server.protocols.executor import MAX_STATEMENT_CHARS, parse_executor_output
from diagnosis_server.text.matching import MAX_MATCHED_CHARS, LinearPattern, NotLinear, backtrack_safe
from diagnosis_server.text.normalize import display_text
from diagnosis_server.text.redaction import Redactor

N = 12_000  # a 12 KB line

CRAFTED = [
    "a" * N,
    " " * N,
    "\t \t" * (N // 3),
    "Can't connect to MySQL server on '" + "a" * N,
    ("Can't connect to MySQL server on 'db' (1" + "x" * 40) * (N // 80),
    "java.lang.OutOfMemoryError: " + "A " * (N // 2),
    "x." * (N // 2) + "PoolTimeoutException",
    "w" * N + "TimeoutException",
    "ReadTimeout" + " " * N + "=",
    "timed out after " + "9" * N,
    "NXDOMAIN" * (N // 8),
    "UnhandledPromiseRejection" * (N // 25),
    "panic: " + "\n" * N,
    '"GET ' + "/a" * (N // 2),
    "lookup " + "a." * (N // 2) + ": no such host",
    "-----BEGIN RSA PRIVATE KEY-----" * (N // 31),
    "password=" * (N // 9),
    "a" * N + "password" + "b" * N,
    "eyJ" + "a" * N + "." + "b" * N,
    "Bearer " * (N // 7),
    "postgres://" + "u" * N + ":" * N,
    "Authorization: " + "x" * N,
    "[" * N + "](" * N,
    "<" * N + "a" * N,
    "\x1b[" + "0;" * N,
]


def test_every_bundled_rule_runs_on_re2_or_is_proven_safe() -> None:
    """The engine each rule uses, not a timing: only lookaround patterns are guarded, and each is proven safe."""
    rules = bundled_rules()
    guarded = 0
    for rule in rules.log:
        for pattern in rule.patterns:
            if "(?<" in pattern or "(?=" in pattern or "(?!" in pattern:
                backtrack_safe(pattern)
                guarded += 1
        assert rule.compiled.engines.count("guarded") == sum(
            ("(?<" in p or "(?=" in p or "(?!" in p) for p in rule.patterns
        )
    for event_rule in rules.event:
        if event_rule.compiled is not None:
            assert event_rule.compiled.engines == ("re2",), event_rule.kind
    assert 0 < guarded < 10


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (r"(a+)+(?!b)", "repeat inside a repeat"),
        (r"(?:\w+\s?)*(?<!x)$", "repeat inside a repeat"),
        (r"\w*(?<!Pool)Timeout", "unbounded repeat at its start"),
        (r"(\w+)-\1(?!x)", "back-reference"),
        (r"(\w+)=\1", "back-reference"),
    ],
)
def test_a_pattern_that_could_backtrack_is_refused(pattern: str, why: str) -> None:
    with pytest.raises(NotLinear, match=why):
        LinearPattern((pattern,))


def test_a_rules_file_with_a_backtracking_pattern_is_one_clear_error(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        'version = 1\n[[log]]\nkind = "evil"\nabout = "self"\nrole = "cause"\nphrase = "backtracks"\n'
        "patterns = ['(x+x+)+(?!y)']\n"
    )
    with pytest.raises(RulesError, match="linear time"):
        load_rules(str(rules))


def test_nested_repeats_re2_can_take_are_accepted_and_linear() -> None:
    """``(a+)+$`` backtracks exponentially in Python's engine; on RE2 it is an automaton."""
    pattern = LinearPattern((r"(a+)+$", r"(x|x)*y"))
    assert pattern.engines == ("re2",)
    started = time.perf_counter()
    assert pattern.search("a" * 3000 + "!") is None
    assert pattern.search("x" * 3000) is None
    assert time.perf_counter() - started < 1.0


def test_matching_reads_a_bounded_prefix() -> None:
    pattern = LinearPattern(("OutOfMemoryError",))
    assert pattern.search("x" * (MAX_MATCHED_CHARS - 20) + "OutOfMemoryError") is not None
    assert pattern.search("x" * MAX_MATCHED_CHARS + "OutOfMemoryError") is None


def test_crafted_lines_through_every_rule_redaction_and_display_end_quickly() -> None:
    """A bounded wall time far from any limit (each step is linear; together they take milliseconds)."""
    rules = bundled_rules()
    redactor = Redactor(["not-in-any-line"])
    started = time.perf_counter()
    for line in CRAFTED:
        for rule in rules.log:
            rule.compiled.search(line)
        for event_rule in rules.event:
            if event_rule.compiled is not None:
                list(event_rule.compiled.finditer(line))
        redactor.text(line)
        display_text(line)
    assert time.perf_counter() - started < 10.0


def test_a_420_kb_statement_is_bounded_before_any_later_step() -> None:
    statement = "orders-api returns status=502 " * 14_000  # 420 KB
    started = time.perf_counter()
    parsed = parse_executor_output(
        {
            "contract": "executor_evidence_v2",
            "claims": [{"claim_id": "c1", "statement": statement, "critical": True, "status": "confirmed"}],
        }
    )
    assert parsed.output is not None and len(parsed.output.claims[0].statement) == MAX_STATEMENT_CHARS
    assert any("longer than" in issue.message for issue in parsed.schema_issues)
    assert display_text(statement) and Redactor().text(statement)
    assert time.perf_counter() - started < 5.0
