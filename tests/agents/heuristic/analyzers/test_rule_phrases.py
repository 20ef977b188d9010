"""Every phrase of the bundled rules reads in the neutral operational vocabulary (``text/vocabulary.txt``).

A statement reads "<workload> <phrase> (<what was read>)": the workload and the quoted part come from its
bindings, the phrase from the rules. A phrase word neither the evidence nor the vocabulary holds makes the
statement say more than its evidence (R-V-2: overstated), so a claim would never be a direct observation (R-V-1).
"""

from __future__ import annotations

import pytest

from diagnosis_server.agents.heuristic.analyzers.rules import bundled_rules
from diagnosis_server.text.language import ungrounded_words


def _phrases() -> list[str]:
    rules = bundled_rules()
    phrases = [rule.phrase for group in (rules.container, rules.event, rules.log) for rule in group]
    phrases += [rule.unknown_host_phrase for rule in rules.log if rule.unknown_host_phrase]
    phrases += [rule.misplaced_host_phrase for rule in rules.log if rule.misplaced_host_phrase]
    return sorted(set(phrases))


PHRASES = _phrases()


def test_the_rules_have_phrases_and_an_unknown_host_phrase() -> None:
    assert len(PHRASES) > 30
    assert "calls a host name that does not exist" in PHRASES


@pytest.mark.parametrize("phrase", PHRASES)
def test_a_rule_phrase_uses_only_vocabulary_words(phrase: str) -> None:
    """With no evidence at all (texts=[]), the phrase grounds itself; the workload name that precedes it in a
    statement is grounded by the statement's own service binding."""
    assert ungrounded_words(phrase, []) == ()
    assert ungrounded_words(f"silo-gateway {phrase}", ["silo-gateway"]) == ()
