"""Excerpts and cause statements: what a binding quotes is always a verbatim substring of what was read, newlines
included (R-C-1: the matched text is found at the raw path; R-GK-5), and a cause claim quotes its finding's own
short detail, so the conclusion names the mechanism it rests on (R-V-3: a cause is an inference, shown as one).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis_server.agents.heuristic.findings import (
    BRIEF,
    CAUSE_CLAUSE,
    LEAD,
    Finding,
    Role,
    around,
    cause_statement,
    excerpt,
    one_line,
    quote,
)
from diagnosis_server.agents.heuristic.observations import Binding

# Log-like text: words, punctuation, quotes and every kind of whitespace a line or a message may hold.
TEXT = st.text(alphabet=st.sampled_from([*"abcXYZ019 :;,.-_/\"'`()[]{}=\t\r\n", "é", "→", "\u00a0"]), max_size=300)
LIMITS = st.integers(min_value=1, max_value=200)


@settings(max_examples=300, deadline=None)
@given(TEXT, LIMITS)
def test_an_excerpt_is_a_substring_of_its_input(text: str, limit: int) -> None:
    cut = excerpt(text, limit)
    assert cut in text
    assert cut == cut.strip()
    assert len(cut) <= limit or cut == text.strip()


@settings(max_examples=300, deadline=None)
@given(TEXT, st.data(), LIMITS)
def test_around_a_match_is_a_substring_of_its_input(text: str, data: st.DataObject, limit: int) -> None:
    start = data.draw(st.integers(min_value=0, max_value=len(text)))
    end = data.draw(st.integers(min_value=start, max_value=len(text)))
    assert around(text, start, end, limit) in text


def test_an_excerpt_keeps_newlines_and_one_line_shows_them_as_spaces() -> None:
    message = "panic: bins exhausted\n\ngoroutine 41 [running]:\n\tmain.assign()\n" + "x " * 80
    cut = excerpt(message, 60)
    assert "\n" in cut and message.startswith(cut)
    shown = one_line(cut)
    assert shown.startswith("panic: bins exhausted goroutine 41 [running]")
    assert "\n" not in shown and "\t" not in shown and "  " not in shown


def test_an_excerpt_cuts_at_whitespace_within_its_limit() -> None:
    text = "Readiness probe failed: Get http://10.244.3.27:8080/healthz: context deadline exceeded while awaiting"
    cut = excerpt(text, 50)
    assert cut == "Readiness probe failed: Get"
    assert excerpt("  short message  ") == "short message"
    # No whitespace past a third of the limit: a hard cut, still verbatim.
    assert excerpt("x" * 200, BRIEF) == "x" * BRIEF


def test_around_starts_at_a_word_at_most_lead_characters_before_the_match() -> None:
    prefix = "the scheduler tried every node of pool-b and then reported that "
    message = prefix + "0/3 nodes are available: 3 Insufficient cpu."
    start = message.index("nodes are available")
    shown = around(message, start, start + len("nodes are available"))
    assert "nodes are available" in shown and shown in message
    assert message.index(shown) >= start - LEAD
    assert shown.split()[0] in prefix.split()  # a whole word, not a cut one


def test_around_keeps_a_long_match_whole() -> None:
    """The docstring's promise: "through the match, within limit characters where the match allows"."""
    match = 'configmap "greenfield-seed-sorter-feature-flags-and-overrides-production-eu-west-1" not found'
    message = f"Error: {match} (retrying in 10s)"
    start = message.index(match)
    assert match in around(message, start, start + len(match))


def test_quote_picks_a_mark_the_text_does_not_hold() -> None:
    assert quote("plain") == '"plain"'
    assert quote('secret "tls" not found') == "'secret \"tls\" not found'"
    assert quote("""it's "x" """) == """`it's "x" `"""
    # A text holding all three marks is still quoted, never spliced in as prose (and no longer verbatim).
    assert quote("`a` 'b' \"c\"") == "\"`a` 'b' 'c'\""


def _finding(statement: str, detail: str = "") -> Finding:
    binding = Binding("inv-an-x", "kubernetes.events", "/items/0/message", "x")
    return Finding("failed_mount", Role.CAUSE, "hay-baler", statement, (binding,), strength=4, detail=detail)


def test_a_cause_statement_quotes_the_findings_own_detail() -> None:
    finding = _finding(
        'hay-baler pods cannot start (pod hay-baler-5c7d8f9b6c-q8w2z reports FailedMount, "MountVolume.SetUp failed '
        'for volume "tls" : secret "hay-baler-tls" not found")',
        detail='MountVolume.SetUp failed for volume "tls" :\n secret "hay-baler-tls" not found',
    )
    statement = cause_statement(finding)
    assert statement == (
        'hay-baler pods cannot start (\'MountVolume.SetUp failed for volume "tls" : secret "hay-baler-tls" '
        "not found')" + CAUSE_CLAUSE
    )


def test_a_cause_statement_without_a_detail() -> None:
    """A statement of values read quotes nothing: it is its own detail; one that quotes drops the quote."""
    values = _finding("orchard-db connections are exhausted (pg_stat_activity_count reached 97 against 100)")
    assert cause_statement(values) == values.statement + CAUSE_CLAUSE
    quoted = _finding('hay-baler pods cannot start ("FailedMount")')
    assert cause_statement(quoted) == "hay-baler pods cannot start" + CAUSE_CLAUSE
