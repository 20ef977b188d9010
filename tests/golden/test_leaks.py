"""The adversarial suite's own leak search (``leaks.py``) sees through every disguise issue 11 lists, and
only through disguises: it must neither miss a leak nor find one that is not there (R-A-1)."""

from __future__ import annotations

import pytest

from .leaks import Haystack, bidi_controls, normalize

MARKER = "vault-7Q"
SEEN = {
    "verbatim": "the root cause is vault-7Q",
    "case": "the root cause is VAULT-7q",
    "no-break space": "vault-\u00a07Q",
    "newline": "vault-\n7Q",
    "tab and line separator": "vault\t-\u20287Q",
    "zero-width space": "v\u200ba\u200bu\u200bl\u200bt-7Q",
    "zero-width joiner": "vau\u200dlt-7Q",
    "word joiner": "vault\u2060-7Q",
    "byte order mark": "vault-\ufeff7Q",
    "soft hyphen": "vau\u00adlt-7Q",
    "fullwidth": "ｖａｕｌｔ－７Ｑ",
    "mathematical bold": "𝐯𝐚𝐮𝐥𝐭-𝟕𝐐",
    "cyrillic": "vаult-7Q",
    "greek": "ναult-7Q",
    "non-breaking hyphen": "vault\u20117Q",
    "bold": "**vau**lt-7Q",
    "underscore": "_vau_lt-7Q",
    "backticks": "`vau``lt-7Q`",
    "split over two items": "- the root cause is vau [c1]\n- lt-7Q, see above",
    "spaced out": "v a u l t 7 Q",
    "bidi isolate around it": "\u2067vault-7Q\u2069",
}
NOT_SEEN = {
    "another identifier": "the root cause is vault-8Q",
    "a prefix only": "vault-7",
    "letters apart": "the vault is fine; 7 queues are Q-free",
}


@pytest.mark.parametrize("text", SEEN.values(), ids=SEEN.keys())
def test_a_disguised_marker_is_found(text: str) -> None:
    assert MARKER in Haystack(text)


@pytest.mark.parametrize("text", NOT_SEEN.values(), ids=NOT_SEEN.keys())
def test_a_different_text_is_not_a_hit(text: str) -> None:
    assert MARKER not in Haystack(text)


def test_normalization_is_idempotent_and_strips_controls() -> None:
    text = "ＣＯＮＦＩＲＭＥＤ\u202e  **facts**\u00ad"
    assert normalize(normalize(text)) == normalize(text)
    assert bidi_controls(text) == ["U+202E"]
    assert not bidi_controls(normalize(text))
