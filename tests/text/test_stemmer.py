"""The stemmer the guards compare words with: Snowball English, compiled (PyStemmer), the same stems as the
pure-Python Snowball stemmer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from snowballstemmer.english_stemmer import EnglishStemmer

from diagnosis_server.text import language

REFERENCE = EnglishStemmer()


def test_the_compiled_stemmer_is_the_one_in_use() -> None:
    """snowballstemmer hands out PyStemmer's stemmer when it is installed (a dependency): the pure-Python one costs
    about 80 us a word, a tenth of a fan-out server's CPU on a run's cold words."""
    assert type(language._STEMMER).__module__ == "Stemmer"


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("restarts", "restart"),
        ("restarted", "restart"),
        ("restarting", "restart"),
        ("refusals", "refus"),
        ("refused", "refus"),
        ("connections", "connect"),
        ("exhausted", "exhaust"),
        ("evicted", "evict"),
        ("oomkilled", "oomkil"),
    ],
)
def test_word_forms_share_a_stem(word: str, expected: str) -> None:
    assert language.stem(word) == expected


@settings(max_examples=300)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz'", min_size=1, max_size=24))
def test_stems_are_the_pure_python_snowball_stems(word: str) -> None:
    assert language.stem(word) == REFERENCE.stemWord(word)
