"""A literal between two boundaries: matched as written (no metacharacter is special), only where the
boundaries allow, and compiled once per (literal, boundaries)."""

from __future__ import annotations

from diagnosis_server.text.literal import literal_between


def test_the_literal_is_matched_as_written() -> None:
    pattern = literal_between("1.5", r"(?<![\d.])", r"(?!\d|\.\d)")
    assert pattern.search("latency rose to 1.5 s")
    assert not pattern.search("latency rose to 105 s")  # "." is not any character
    assert not pattern.search("latency rose to 11.5 s")  # the lookbehind holds
    assert not pattern.search("latency rose to 1.55 s")  # and the lookahead
    assert literal_between("a+b").search("x a+b y") and not literal_between("a+b").search("aab")


def test_words_are_whole_between_letter_boundaries() -> None:
    pattern = literal_between("oom", r"(?<![a-z])", r"(?![a-z])")
    assert pattern.search("killed (oom) at 13:02")
    assert not pattern.search("a zoom meeting")
    assert not pattern.search("oomkilled")


def test_a_pattern_is_compiled_once_for_its_arguments() -> None:
    first = literal_between("checkout-api", r"(?<![a-z0-9-])", r"(?![a-z0-9-])")
    assert literal_between("checkout-api", r"(?<![a-z0-9-])", r"(?![a-z0-9-])") is first
    assert literal_between("checkout-api") is not first
