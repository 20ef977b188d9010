"""The forms a name of the evidence is written in: whole, its words, their joins and their initials.

People write a field or a class by its words or as one word (``restartCount``: "restart count", "restartcount";
``sql_state_code``: "SQLSTATE"), and a long name by its initials (``NullPointerException``: "NPE";
``horizontal-pod-autoscaler``: "HPA"; ``PersistentVolumeClaim``: "PVC"). Each form is read from the evidence
itself, so a name is found only where the evidence writes one it abbreviates (fail closed: "EACCES" is no form
of ``ENOSPC``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# A name as written: letters and digits joined by separators (``app.kubernetes.io/name``, ``sql_state_code``).
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_./:][A-Za-z0-9]+)*")
# Where a name's words meet: a separator, a lower-to-upper case change, an acronym before a capitalized word
# (``OOMKilled``: OOM, Killed), letters before digits.
_WORD_BREAK = re.compile(r"[-_./:]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# How many consecutive words a joined form takes ("restartcount", "sqlstate", "readonly").
_MAX_JOINED = 4


def name_words(name: str) -> list[str]:
    """The words of a name, in lower case (``restartCount`` -> restart, count)."""
    return [w.lower() for w in _WORD_BREAK.split(name) if w]


def _forms_of(name: str) -> set[str]:
    words = name_words(name)
    out = {name.lower(), *words}
    for start in range(len(words)):
        for stop in range(start + 2, min(len(words), start + _MAX_JOINED) + 1):
            run = words[start:stop]
            out.add("".join(run))
            out.add("".join(w[0] for w in run))
    return out


@lru_cache(maxsize=256)
def _forms_of_text(text: str) -> frozenset[str]:
    return frozenset(form for match in _NAME.finditer(text) for form in _forms_of(match.group(0)))


def name_forms(texts: Iterable[str]) -> frozenset[str]:
    """Every form of every name ``texts`` write (lower case): whole, each word, consecutive words joined, and their
    initials."""
    out: set[str] = set()
    for text in texts:
        out |= _forms_of_text(text)
    return frozenset(out)


def written_form(word: str) -> str:
    """A statement's word or name as its forms are compared: lower case, without separators."""
    return re.sub(r"[-_./:]+", "", word).lower()
