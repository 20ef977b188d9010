"""How the Composer guard tells an excluded statement in a text: said outright (unless an allowed statement it is
part of says it), or paraphrased (most of its words, when it has enough of them) (R-R-3, R-A-1)."""

from __future__ import annotations

import pytest

from diagnosis_server.composition.composer_rules import _holds_excluded

ALLOWED = "cormorant connection pool exhausted"


@pytest.mark.requirement("R-R-3")
@pytest.mark.parametrize(
    ("text", "excluded", "allowed", "held"),
    [
        # Said outright, even when too short to be told by its words.
        ("the pool exhausted", "pool exhausted", [], True),
        # ... but not when the allowed statement that holds it is what the text says.
        ("the db pool exhausted at 10:02", "pool exhausted", ["the db pool exhausted at 10:02"], False),
        # Reworded, with three words or more: most of its words are enough.
        ("vault tokens expired", "expired vault tokens", [], True),
        ("the cormorant pool is what checkout-api exhausts", "checkout-api exhausts the cormorant pool", [], True),
        ("alpha bravo charlie delta", "alpha bravo charlie delta echo", [], True),  # 4 of 5: the 80 % bound
        ("alpha bravo charlie", "alpha bravo charlie delta echo", [], False),  # 3 of 5
        # Two words reworded are too few to tell.
        ("exhausted the cormorant", "cormorant exhausted", [], False),
        # Every word of it is an allowed statement's: a text may say that one.
        ("a restart; cormorant pool exhausted connection", "pool connection cormorant exhausted", [ALLOWED], False),
    ],
)
def test_an_excluded_statement_is_told_by_its_words(text: str, excluded: str, allowed: list[str], held: bool) -> None:
    assert _holds_excluded(text, excluded, allowed) is held
