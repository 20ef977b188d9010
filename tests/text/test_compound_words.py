"""English compounds are words, not names: a prefix and a word, two known words written as one."""

from __future__ import annotations

import pytest

from diagnosis_server.text.language import english_compound, ungrounded_words


@pytest.mark.parametrize("word", ["in-cluster", "re-issued", "self-signed", "multi-attach", "in-memory"])
def test_a_prefix_and_a_word_is_an_english_compound(word: str) -> None:
    assert english_compound(word)


@pytest.mark.parametrize("word", ["orders-api", "ledger-db", "re-frobnicator", "in-zorble"])
def test_a_name_or_an_unknown_word_after_a_prefix_is_no_english_compound(word: str) -> None:
    assert not english_compound(word)


@pytest.mark.requirement("R-V-2")
def test_two_known_words_written_as_one_are_grounded_and_an_unknown_one_is_not() -> None:
    assert ungrounded_words("its data outgrows the limit", ["data limit"]) == ()
    assert ungrounded_words("its data outzorbles the limit", ["data limit"]) == ("outzorbles",)
