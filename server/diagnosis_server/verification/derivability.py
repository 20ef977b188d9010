"""A deterministic derivability check of a claim against its verified evidence (R-V-1..R-V-5).

Pure: used by the embedded Verifier and, as a guard, beside every other Verifier (a model's, a script's).
Every comparison reads ``normalization.normalize`` forms; facts are read as people write them (a sentence's final
period, apostrophes, possessives, hyphenated words, plurals, names split into their words) and numbers and times
match by the equivalences of ``text.quantities``. The classification, strongest first:

1. a fact the evidence states another value for (the same key with another value, the other side of a polar
   word: ``succeeded`` where it says ``failed``), or a concrete fact (an identifier, error code, number with
   its unit, timestamp or quoted string) that no recorded output of the run holds: ``contradicted`` (R-V-4);
2. a fact of the run's recorded outputs outside the claim's bound text (the same output, another one, another
   claim's evidence), or an observation's fact bound from another output whose records it bound do not show it
   with its other facts (a pod of the logs said to be the one the events show OOMKilled): ``unsupported`` for
   that claim, with where it was found; only a hedged conclusion ("is the likely cause") may rest on another
   claim's verified evidence: ``reasonable_inference``;
3. no concrete fact at all: nothing can be checked: ``unsupported``; except a conclusion whose words are all
   grounded and which names something specific its own evidence holds (a word of its evidence that is not
   in the neutral vocabulary, "the redis refusals likely cause ..."): ``reasonable_inference``;
4. all facts found, but words that neither the evidence (its matched texts, the whole values they were found
   in), the question nor the neutral lexicon holds (any word of another script, letter-like symbols, words of
   certainty or scope, a negated number the evidence does not negate), or a clause that instructs the reader
   (``text.language.instructions``: "roll back now"; an instruction is never a fact): the statement says more
   than its evidence: ``overstated``; the question grounds words of an observation, never of a clause that
   concludes or instructs;
5. causal or conclusive language (root cause, because, led to, ...): a conclusion drawn from the evidence, never
   an observation: ``reasonable_inference``;
6. otherwise, every fact in the claim's own matched texts: ``direct_observation``.

``Derivation.located`` records where each fact was found (bound text, same output, other output, nowhere).

How a fact is found (the claim's own evidence is its matched texts, and the whole string at a bound pointer an
excerpt was bound from: a message the model cut short holds its tail's facts too):

- a quoted string, a timestamp or an identifier: in the matched texts, normalized and without whitespace (a
  plural name by its singular; a hyphenated English word by its parts);
- a number: as a whole number (``97`` is not found in ``1997``, ``0.97`` or ``pod-97x``); with a unit, either
  written with its unit (``2337ms``), as the same quantity in another unit or rounded within the precision
  written, or as a whole number in one text and the unit as a word in another (a metric's ``/summary/max`` and
  its ``/unit``), or as the base-unit suffix of a Prometheus metric name in another (``1.52 s`` from a sample
  ``1.52`` and ``grpc_server_handling_seconds:p99``); a count as the number of items of a bound list.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import value_text
from diagnosis_server.text.language import (
    SET_SCOPE_WORDS,
    causal_phrases,
    hedged,
    held_stems,
    instructions,
    name_parts,
    quoted_instruction,
    scope_words,
    specific_words,
    stance_compound,
    stem,
    ungrounded_words,
    vocabulary,
    word_parts,
)
from diagnosis_server.text.literal import literal_between
from diagnosis_server.text.metric_units import names_unit
from diagnosis_server.text.normalize import compact, normalize, skeleton, strip_invisible
from diagnosis_server.text.polarity import polarity
from diagnosis_server.text.quantities import (
    ZONE,
    clock_times,
    count_of,
    instants,
    quantities,
    quantity,
    same_clock_time,
    same_instant,
    same_quantity,
)

_C = contracts_pb2.ClaimClassification

# Quotation marks, never apostrophes: a single quote opens and closes only beside a non-letter ("client's",
# "didn't" and "pods'" quote nothing).
_QUOTED = re.compile(
    r"\"([^\"]{2,200})\"|“([^”]{2,200})”|`([^`]{2,200})`"
    r"|(?<![A-Za-z0-9])'([^']{2,200})'(?![A-Za-z0-9])|(?<![A-Za-z0-9])‘([^’]{2,200})’(?![A-Za-z0-9])"
)
_TIMESTAMP = re.compile(
    r"(?<![\w.])\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w])"
)
_CLOCK = re.compile(rf"(?<![\w:.-])\d{{1,2}}:\d{{2}}(?::\d{{2}})?(?:\s?{ZONE}(?![\w]))?(?![\w:])")
_UNITS = r"%|ms|s|m|h|d|[KMGT]i?B?|bytes|cores|rps|req/s|connections|conns"
# A sentence's final period is never part of a number ("#failure=3." is 3).
_NUMBER = re.compile(rf"(?<![\w.])(\d+(?:\.\d+)?)\s?({_UNITS})?(?![\w]|\.\d)", re.IGNORECASE)
# Numbers in other forms: thousands separators (9,768), and tokens that begin with a digit and are no plain
# number (0x1F4, 1e6, 14,22): each a fact as written.
_GROUPED = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w]|[.,]\d)")
_ODD_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*[A-Za-z_][\w]*(?:[.,]\w+)*|(?<![\w.,])\d+(?:,\d+)+(?![\w])")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.IGNORECASE)
_NUMBER_WORDS = {
    "zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20", "hundred": "100",
}  # fmt: skip
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
_APPROXIMATE = re.compile(r"(?:~|≈|\b(?:about|around|approximately|roughly|nearly|almost|some|over|under)\s)\s*$", re.I)
# Identifiers worth checking: dotted/hyphenated/underscored names, CamelCase words with an inner
# capital (OOMKilled, BackOff), ALLCAPS codes of 3+ (ENOSPC, FATAL), and codes with digits (x509, E11000).
_IDENTIFIER = re.compile(
    r"\b([A-Za-z][A-Za-z0-9]*(?:[-_./:][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*"
    r"|[A-Z]{2,}[a-z]+[A-Za-z0-9]*"
    r"|[A-Z][A-Z0-9_]{2,}|[A-Za-z]+\d+[A-Za-z0-9]*)\b"
)
_COMPOUND = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+")
# A key's value ends before a sentence's final punctuation ("image=busybox:1.35." is busybox:1.35).
_KEY_VALUE = re.compile(
    r"\b([A-Za-z_][A-Za-z0-9_.-]{1,40})\s*(?:=|:)\s*\"?([A-Za-z0-9_%]+(?:[./:-][A-Za-z0-9_%]+){0,8})\"?"
)
_STOP = frozenset({"HTTP", "API", "THE", "AND", "NOT", "FOR", "WITH"})


@dataclass(frozen=True, slots=True)
class _Fact:
    text: str
    number: str = ""  # set for a number fact
    unit: str = ""
    kind: str = ""  # "quoted", "timestamp", "clock", "identifier", "compound", "number", "written"
    approximate: bool = False


@dataclass(frozen=True, slots=True)
class Record:
    """A record a claim bound a value in, as a whole: the element of its output's outermost list the value stands
    in (an event, a pod, a log stream), or the whole output for a value outside any list; ``name`` says where."""

    output: str
    name: str
    text: str
    pointer: str = ""  # the element's pointer ("/items/2"); "" for the whole output


BOUND_TEXT = "bound text"
SAME_OUTPUT = "same output"
OTHER_OUTPUT = "other output"
NOWHERE = "nowhere"


@dataclass(frozen=True, slots=True)
class Derivation:
    classification: int
    facts: tuple[str, ...]
    found: tuple[str, ...]
    conflicts: tuple[str, ...]
    ungrounded: tuple[str, ...] = ()
    causal: tuple[str, ...] = ()
    # Facts that only other claims' verified evidence holds (the claim's own does not show them).
    borrowed: tuple[str, ...] = ()
    # Where each fact was found: its bound text, the same recorded output outside it, another output, nowhere.
    located: tuple[tuple[str, str], ...] = ()
    # Facts of the run's recorded outputs that the claim did not bind (never shown as its facts).
    unbound: tuple[str, ...] = ()
    searched_outputs: bool = False  # the run's recorded outputs were searched for the facts not bound
    # Clauses that instruct the reader ("roll back now"): an instruction is never a fact.
    instructions: tuple[str, ...] = ()
    # Facts of an observation that no record it bound shows together with its other facts, with the records that
    # show them (a pod bound from the logs said to be the one the events show OOMKilled).
    apart: tuple[tuple[str, str], ...] = ()

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(f for f in self.facts if f not in self.found and f not in self.borrowed and f not in self.unbound)

    @property
    def fabricated(self) -> bool:
        """The statement names a fact no recorded output of the run holds, or one that conflicts with its
        evidence (R-V-4)."""
        return bool(self.conflicts or self.missing)

    def where(self, fact: str) -> str:
        return next((where for f, where in self.located if f == fact), NOWHERE)

    def _unbound_places(self) -> str:
        return ", ".join(f"{f} (found in the {self.where(f)})" for f in self.unbound)

    def _apart_places(self) -> str:
        return "; ".join(f"{fact} only in {where}" for fact, where in self.apart)

    def reason(self) -> str:
        """Why the claim has its class; a refused claim's reason names every fact it fails on, and where each
        fact it did not bind was found (R-V-4)."""
        if self.conflicts:
            return f"evidence conflicts with {', '.join(self.conflicts)}"
        if self.missing:
            held = (
                "no recorded output of the run holds"
                if self.searched_outputs
                else "its verified evidence does not contain"
            )
            why = f"names {', '.join(self.missing)}, which {held}"
            return f"{why}; and {self._unbound_places()}, outside the evidence it bound" if self.unbound else why
        if self.unbound:
            return f"names {self._unbound_places()}, outside the evidence it bound"
        if self.apart:
            alone = [fact for fact, _ in self.apart]
            others = [f for f in self.found if f not in alone]
            which = f"{', '.join(alone)} with {', '.join(others)}" if others else "its facts together"
            never = "a fact of one output is never said of another's"
            return f"no output it bound shows {which}: {self._apart_places()}; {never}"
        if self.borrowed and self.classification == _C.CLAIM_CLASSIFICATION_UNSUPPORTED:
            return (
                f"its own evidence does not show {', '.join(self.borrowed)}, which other verified evidence holds; "
                "only a hedged conclusion (likely, may) may rest on another claim's evidence"
            )
        if self.instructions:
            return f"it instructs the reader ({'; '.join(self.instructions[:3])}): an instruction is never a fact"
        if not self.facts and self.classification == _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE:
            return f"it concludes ({', '.join(self.causal)}) from what its evidence names"
        if not self.facts:
            return "the claim states no concrete fact to check"
        if self.ungrounded:
            return f"says more than its evidence: {', '.join(self.ungrounded[:8])}"
        if self.causal:
            return f"all of {', '.join(self.facts)} found; it concludes ({', '.join(self.causal)})"
        if self.borrowed:
            return f"its own evidence does not show {', '.join(self.borrowed)}, which other verified evidence holds"
        return f"all of {', '.join(self.facts)} found in the verified evidence"


def _plain_word(word: str) -> bool:
    """An English word written in capitals ("CAUSED", "ERROR"): a word of the vocabulary, not an identifier."""
    return word.isalpha() and word.isupper() and (stem(word.lower()) in vocabulary() or bool(causal_phrases(word)))


def _prepared(statement: str) -> str:
    """The statement as its facts are read: NFKC, invisible characters removed, homoglyphs as ASCII."""
    return skeleton(strip_invisible(unicodedata.normalize("NFKC", statement)))


def _facts(statement: str) -> list[_Fact]:
    text = _prepared(statement)
    facts: list[_Fact] = []
    taken: list[tuple[int, int]] = []

    def free(start: int) -> bool:
        return all(not (a <= start < b) for a, b in taken)

    def take(match: re.Match[str], fact: _Fact) -> None:
        facts.append(fact)
        taken.append(match.span())

    for match in _QUOTED.finditer(text):
        take(match, _Fact(next(g for g in match.groups() if g), kind="quoted"))
    for pattern, kind in ((_TIMESTAMP, "timestamp"), (_CLOCK, "clock")):
        for match in pattern.finditer(text):
            if free(match.start()):
                take(match, _Fact(match.group(0), kind=kind))
    for match in _GROUPED.finditer(text):
        if free(match.start()):
            take(match, _Fact(match.group(0), number=match.group(0).replace(",", ""), kind="number"))
    for match in _ODD_NUMBER.finditer(text):
        if free(match.start()) and _NUMBER.fullmatch(match.group(0)) is None:
            written = match.group(0)
            ordinal = _ORDINAL.fullmatch(written)
            fact = _Fact(written, number=written[:-2], kind="number") if ordinal else _Fact(written, kind="written")
            take(match, fact)
    for match in _IDENTIFIER.finditer(text):
        word = match.group(1)
        is_unit = re.fullmatch(_UNITS, word, re.IGNORECASE) is not None  # "GiB" is the unit of its number
        if free(match.start()) and word.upper() not in _STOP and not _plain_word(word) and not is_unit:
            kind = "compound" if _COMPOUND.fullmatch(word) else "identifier"
            if kind == "compound" and stance_compound(word):
                taken.append(match.span())  # "never-failing", "non-zero": words whose stance is checked, no name
                continue
            take(match, _Fact(word, kind=kind))  # its digits are no number of their own
    for match in _NUMBER.finditer(text):
        if free(match.start()):
            number, unit = match.group(1), match.group(2) or ""
            approximate = _APPROXIMATE.search(text, 0, match.start()) is not None
            facts.append(_Fact(f"{number}{unit}", number=number, unit=unit, kind="number", approximate=approximate))
    for match in _NUMBER_WORD.finditer(text):
        if free(match.start()):
            facts.append(_Fact(match.group(1).lower(), number=_NUMBER_WORDS[match.group(1).lower()], kind="number"))
    compacts = [compact(f.text) for f in facts]
    seen: set[str] = set()
    unique: list[_Fact] = []
    # A name inside a longer one is checked once (the longer); a number is never hidden by a name holding its digits.
    names = [key for fact, key in zip(facts, compacts, strict=True) if not fact.number]
    for fact, key in zip(facts, compacts, strict=True):
        inside = not fact.number and any(key in other and key != other for other in names)
        if key and key not in seen and not inside:
            seen.add(key)
            unique.append(fact)
    return unique


def concrete_facts(statement: str) -> tuple[str, ...]:
    """The checkable facts of a statement, in order of appearance within each kind, without duplicates."""
    return tuple(fact.text for fact in _facts(statement))


def _has_number(number: str, texts: Sequence[str]) -> bool:
    """A whole number of a text: not a part of a longer number, nor of a name (``4`` is not in ``pod-4mk7x``;
    it is in ``4m`` and ``512Mi``, a number with its unit)."""
    pattern = literal_between(number, r"(?<![\d.])(?<![a-z0-9]-)(?<![a-z])", r"(?!\d|\.\d)(?![a-z]+\d)")
    return any(pattern.search(text) for text in texts)


def _has_word(word: str, texts: Sequence[str]) -> bool:
    pattern = literal_between(word.casefold(), r"(?<![a-z])", r"(?![a-z])")
    return any(pattern.search(text) for text in texts)


def _has_unit(unit: str, texts: Sequence[str], raw: Sequence[str]) -> bool:
    """The unit as a word of a (normalized) text, or as the unit suffix of a metric name in a raw text (the
    normalized form drops the name's underscores)."""
    if _has_word(unit, texts):
        return True
    return any(names_unit(unit, text) for text in raw)


def _singular(word: str) -> str:
    """A plural name's singular (``GPUs`` -> ``GPU``, ``proxies`` -> ``proxy``), or '' when it is not plural."""
    if len(word) > 4 and word.lower().endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("s", "S")) and not word.lower().endswith("ss") and word[-2].isalpha():
        return word[:-1]
    return ""


def _found(
    fact: _Fact,
    texts: Sequence[str],
    haystack: str,
    raw: Sequence[str] = (),
    lists: Sequence[str] = (),
    fields: Sequence[str] = (),
) -> bool:
    if fact.kind in ("timestamp", "clock"):
        return compact(fact.text) in haystack or _same_time(fact, raw)
    if not fact.number:
        if compact(fact.text) in haystack or (fact.kind == "identifier" and _names_field(fact.text, fields)):
            return True
        singular = _singular(fact.text) if fact.kind in ("identifier", "compound") else ""
        if singular and compact(singular) in haystack:
            return True
        return fact.kind == "compound" and _compound_found(fact.text, raw)
    if not fact.unit:
        if _has_number(fact.number, texts) or count_of(fact.number, lists):
            return True
        if fact.text in _NUMBER_WORDS and _has_word(fact.text, texts):
            return True
        return ("." in fact.number or fact.approximate) and _same_quantity(fact, raw)
    written = literal_between(compact(fact.text), r"(?<![\d.])")
    if written.search(haystack):
        return True
    if _has_number(fact.number, texts) and _has_unit(fact.unit, texts, raw):
        return True
    return _same_quantity(fact, [*raw, *(field for field in fields if _NAMED_NUMBER.fullmatch(field))])


def _names_field(identifier: str, fields: Sequence[str]) -> bool:
    """An identifier that is the name of a bound field, or one of its words (``p99`` of ``p99_latency_ms:
    1234.5``): the pointer the value was found at says what the value is."""
    wanted = identifier.casefold()
    for field in fields:
        name = field.partition(": ")[0]
        if wanted == name.casefold() or wanted in name_parts(name).casefold().split()[1:]:
            return True
    return False


def _compound_found(word: str, raw: Sequence[str]) -> bool:
    """A hyphenated word of plain parts, not found whole (``crash-looping`` for ``CrashLoopBackOff``): every part
    is a word of the evidence (its names split into words), or a short function word of the vocabulary (``of``,
    ``off``). A name of vocabulary words (``auth-gateway``, ``events-db``) is never found by its parts alone."""
    held = held_stems(raw)
    return all(stem(part) in held or part in _FUNCTION_PARTS for part in word_parts(word))


# Function words and prefixes of English compounds ("out-of-memory", "back-off", "re-run", "non-zero"): never a
# name's part ("db", "api" are).
_FUNCTION_PARTS = frozenset({"of", "off", "out", "up", "in", "on", "to", "by", "non", "re", "pre", "co", "per", "via"})


# A bound scalar named by its field ("p99_latency_ms: 1234.5"): the unit its name says is the unit of that one
# number (``text.metric_units``), never of another value's.
_NAMED_NUMBER = re.compile(r"[A-Za-z_][\w.-]{0,80}: -?\d+(?:\.\d+)?")


def _same_quantity(fact: _Fact, raw: Sequence[str]) -> bool:
    """The evidence writes the fact's quantity in another unit or more precisely (``text.quantities``)."""
    claimed = quantity(fact.number, fact.unit, approximate=fact.approximate)
    if claimed is None:
        return False
    for text in raw:
        written = quantities(text)
        if claimed.family in ("seconds", "bytes") and not any(q.family for q in written):
            # A metric's values are in the unit its name says (``..._seconds``, ``..._bytes``).
            unit = next((u for u in ("s", "ms", "b") if names_unit(u, text)), "")
            if unit:
                written = [q for q in (quantity(_plain(q.number), unit) for q in written) if q is not None]
        if any(same_quantity(claimed, other) for other in written):
            return True
    return False


def _plain(number: float) -> str:
    return repr(number)


def _same_time(fact: _Fact, raw: Sequence[str]) -> bool:
    """A timestamp or time of day the evidence writes in another zone or format (``text.quantities``)."""
    moments = [moment for text in raw for moment in instants(text)]
    if not moments:
        return False
    if fact.kind == "timestamp":
        return same_instant(fact.text, moments)
    clocks = clock_times(fact.text)
    return bool(clocks) and same_clock_time(clocks[0][1], fact.text.count(":") == 2, clocks[0][2], moments)


def _key_values(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for key, value in _KEY_VALUE.findall(text):
        out.setdefault(key.lower(), set()).add(value.lower())
    return out


def derive(
    statement: str,
    matched_texts: Iterable[str],
    *,
    run_texts: Iterable[str] = (),
    grounding: Iterable[str] = (),
    question: str = "",
    bound: Iterable[str] = (),
    fields: Iterable[str] = (),
    scopes: Iterable[Record] = (),
    covered: Iterable[str] = (),
    same_outputs: Iterable[str] = (),
    other_outputs: Iterable[str] = (),
) -> Derivation:
    """Classify ``statement`` against ``matched_texts`` (its own verified evidence). ``run_texts`` (the run's
    other verified evidence) may hold a fact the claim then infers; ``grounding`` texts (the question, the
    whole values the evidence was found in) may ground its words but never its facts; ``bound`` (the whole
    values it bound) holds its polarity and its lists; ``fields`` (its bound scalars as "name: value") name what
    a value is (a unit, ``p99``); ``scopes`` (the records it bound) tell whether the records of one output show
    an observation's facts with those of another (``Record``); ``covered`` (the lists it bound every element of)
    hold its counts and its scope ("all"); ``same_outputs`` and ``other_outputs`` (the recorded
    outputs it bound, and the others) tell where a fact it did not bind stands."""
    same, other = _Texts.of(same_outputs), _Texts.of(other_outputs)
    return _derive(
        statement,
        _Texts.of(matched_texts),
        _Texts.of(run_texts),
        grounding,
        question=question,
        bound=tuple(bound),
        fields=tuple(fields),
        scopes=[(record, _Texts.of([record.text])) for record in scopes],
        covered=tuple(covered),
        outputs=(same, other) if same.raw or other.raw else None,
    )


class _Texts:
    """Verified evidence texts as a derivation reads them: the non-empty ones, normalized, and their
    normalized forms run together without whitespace (where a fact split across texts or lines is found)."""

    __slots__ = ("_spaceless", "normalized", "raw")

    def __init__(self, raw: list[str], normalized: list[str]) -> None:
        self.raw = raw
        self.normalized = normalized
        self._spaceless: str | None = None

    @classmethod
    def of(cls, texts: Iterable[str]) -> _Texts:
        raw = [t for t in texts if t]
        return cls(raw, [normalize(t) for t in raw])

    @property
    def spaceless(self) -> str:
        if self._spaceless is None:
            self._spaceless = "".join(t.replace(" ", "") for t in self.normalized)
        return self._spaceless


def _derive(
    statement: str,
    own: _Texts,
    others: _Texts,
    grounding: Iterable[str],
    *,
    question: str = "",
    bound: Sequence[str] = (),
    fields: Sequence[str] = (),
    scopes: Sequence[tuple[Record, _Texts]] = (),
    covered: Sequence[str] = (),
    outputs: tuple[_Texts, _Texts] | None = None,
) -> Derivation:
    """``derive`` on texts already read (the others' run together only when a fact is not in the claim's own)."""
    texts, raw = own.normalized, own.raw
    facts = _facts(statement)
    found = tuple(f.text for f in facts if _found(f, texts, own.spaceless, raw, [*bound, *covered], fields))
    missing = [f for f in facts if f.text not in found]
    borrowed = tuple(f.text for f in missing if _found(f, others.normalized, others.spaceless, others.raw))
    located = [(f, BOUND_TEXT) for f in found] + [(f, OTHER_OUTPUT) for f in borrowed]
    unbound: list[str] = []
    for fact in (f for f in missing if f.text not in borrowed):
        for where, place in zip((SAME_OUTPUT, OTHER_OUTPUT), outputs or (), strict=False):
            if _found(fact, place.normalized, place.spaceless, place.raw):
                unbound.append(fact.text)
                located.append((fact.text, where))
                break
        else:
            located.append((fact.text, NOWHERE))
    evidence_kv: dict[str, set[str]] = {}
    for text in texts:
        for key, values in _key_values(text).items():
            evidence_kv.setdefault(key, set()).update(values)
    run_spaceless = [others.spaceless, *(place.spaceless for place in outputs or ())]
    conflicts = [
        f"{key}={value} (evidence: {', '.join(sorted(evidence_kv[key]))})"
        for key, values in _key_values(normalize(statement)).items()
        for value in sorted(values)
        if key in evidence_kv
        and value not in evidence_kv[key]
        # The same key with this value elsewhere in the run's outputs: unbound, not contradicted.
        and not any(compact(f"{key}={value}") in h or compact(f"{key}: {value}") in h for h in run_spaceless)
        and not _equivalent_value(value, evidence_kv[key])
    ]
    polar = polarity(statement, [*raw, *bound])
    conflicts += list(polar.conflicts)
    grounding = list(grounding)
    asked = (question,) if question else ()
    ungrounded = ungrounded_words(statement, [*raw, *others.raw, *grounding], question=asked)
    ungrounded += tuple(w for w in polar.missing if w not in ungrounded)
    ungrounded += _unshown_scope(
        statement, [f for f in facts if f.text in found], [*texts, *grounding], [*bound, *covered]
    )
    causal = causal_phrases(statement)
    said = [*raw, *bound, *_outputs_raw(outputs)]
    instructing = tuple(c for c in instructions(statement) if not quoted_instruction(c, said))
    apart = (
        () if causal or len(scopes) < 2 else _apart_in_clauses(statement, [f for f in facts if f.text in found], scopes)
    )
    if conflicts or len(found) + len(borrowed) + len(unbound) < len(facts):
        classification = _C.CLAIM_CLASSIFICATION_CONTRADICTED
    elif unbound or apart or (borrowed and not (causal and hedged(statement))):
        # A fact the claim did not bind (another claim's evidence, an output outside its bound text): never its
        # fact, and no ground for its conclusion either (an invented cause names another claim's service).
        classification = _C.CLAIM_CLASSIFICATION_UNSUPPORTED
    elif (
        not facts and causal and not ungrounded and not instructing and specific_words(statement, [*texts, *grounding])
    ):
        classification = _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
    elif not facts:
        classification = _C.CLAIM_CLASSIFICATION_UNSUPPORTED
    elif ungrounded or instructing:
        classification = _C.CLAIM_CLASSIFICATION_OVERSTATED
    elif causal or borrowed:
        classification = _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
    else:
        classification = _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
    return Derivation(
        classification=classification,
        facts=tuple(f.text for f in facts),
        found=found,
        conflicts=tuple(conflicts),
        ungrounded=ungrounded,
        causal=causal,
        borrowed=borrowed,
        located=tuple(located),
        unbound=tuple(unbound),
        searched_outputs=outputs is not None,
        instructions=instructing,
        apart=apart,
    )


def _unshown_scope(
    statement: str, facts: Sequence[_Fact], evidence: Sequence[str], bound: Sequence[str]
) -> tuple[str, ...]:
    """The scope words of a statement ("all 3 pods are OOMKilled") that its evidence neither says nor shows: a list
    it bound whole (``bound``) shows one when every item holds each of the claim's facts that an item holds, and an
    item holds at least one."""
    words = scope_words(statement)
    if not words:
        return ()
    said = [normalize(text) for text in evidence]
    shown = any(_every_item_holds(facts, items) for items in _lists(bound))
    return tuple(w for w in words if not (shown and w in SET_SCOPE_WORDS) and not _has_word(w, said))


def _lists(texts: Sequence[str]) -> list[list[str]]:
    """The JSON lists among ``texts``, each as its items' normalized texts."""
    out = []
    for text in texts:
        if not text.startswith("["):
            continue
        try:
            parsed = json.loads(text)
        except ValueError:
            continue
        if isinstance(parsed, list) and parsed:
            out.append([normalize(value_text(item)).replace(" ", "") for item in parsed])
    return out


def _every_item_holds(facts: Sequence[_Fact], items: Sequence[str]) -> bool:
    named = [compact(f.text) for f in facts if not f.number and f.kind in ("identifier", "compound", "quoted")]
    held = [key for key in named if key and any(key in item for item in items)]
    return bool(held) and all(key in item for key in held for item in items)


# Where one observation of a statement ends and the next begins: a semicolon, or a sentence's end.
_CLAUSE_END = re.compile(r";\s*|[.!?]\s+(?=[A-Z])")


def _apart_in_clauses(
    statement: str, facts: Sequence[_Fact], scopes: Sequence[tuple[Record, _Texts]]
) -> tuple[tuple[str, str], ...]:
    """``_apart`` of each observation of a statement ("X is CrashLoopBackOff; pod Y is Pending" is two)."""
    out: list[tuple[str, str]] = []
    for clause in _CLAUSE_END.split(statement):
        named = {fact.text for fact in _facts(clause)}
        out += [a for a in _apart([f for f in facts if f.text in named], scopes) if a not in out]
    return tuple(out)


def _apart(facts: Sequence[_Fact], scopes: Sequence[tuple[Record, _Texts]]) -> tuple[tuple[str, str], ...]:
    """The names and codes of an observation (a pod, ``OOMKilled``) that only records of other outputs than those
    holding its other facts hold, each with the records that hold it: an observation joins what one output shows
    (the records of one output, a list's elements, may be named together), when two or more names or codes are
    placed: a quoted text, a number or a time keeps a name company but is never apart itself (it is what its own
    record says: "the event says '...'; the claim asks for fast-ssd"). A fact no single record holds (found by
    combining texts) takes no part; a claim whose facts all stand in one output's records has none."""
    if len({record.output for record, _ in scopes}) < 2 or len(facts) < 2:
        return ()
    holders = {
        fact.text: [record for record, texts in scopes if _found(fact, texts.normalized, texts.spaceless, texts.raw)]
        for fact in facts
    }
    outputs = {fact: {record.output for record in records} for fact, records in holders.items() if records}
    if len(outputs) < 2:
        return ()
    names = {fact.text for fact in facts if fact.kind in ("identifier", "compound") and fact.text in outputs}
    if len(names) < 2:
        return ()
    return tuple(
        (fact, ", ".join(record.name for record in holders[fact]))
        for fact, held in outputs.items()
        if fact in names and not any(held & other for name, other in outputs.items() if name != fact)
    )


def _outputs_raw(outputs: tuple[_Texts, _Texts] | None) -> list[str]:
    """The recorded outputs a claim bound (where a field it names, ``restartCount``, stands)."""
    return list(outputs[0].raw) if outputs is not None else []


def _equivalent_value(value: str, held: set[str]) -> bool:
    """A key's value written as another form of a held one (``512mib`` and ``512mi``, ``1.5s`` and ``1500ms``)."""
    match = _NUMBER.fullmatch(value)
    if match is None:
        return False
    claimed = quantity(match.group(1), match.group(2) or "")
    return claimed is not None and any(same_quantity(claimed, q) for h in held for q in quantities(h))


class RunEvidence:
    """A run's verified evidence items, each read once (normalized, run together), for the derivation of every
    claim of the run: a claim's own items are its evidence, the others may hold a fact it infers."""

    __slots__ = ("_by_claim", "_claim_ids", "_normalized", "_raw")

    def __init__(self, evidence: Sequence[contracts_pb2.VerifiedEvidence]) -> None:
        self._claim_ids = [e.claim_id for e in evidence]
        self._raw = [e.matched_text for e in evidence]
        self._normalized = [normalize(t) if t else "" for t in self._raw]
        self._by_claim: dict[str, list[int]] = {}
        for index, claim_id in enumerate(self._claim_ids):
            self._by_claim.setdefault(claim_id, []).append(index)

    def _texts(self, indexes: Iterable[int]) -> _Texts:
        raw, normalized = self._raw, self._normalized
        kept = [i for i in indexes if raw[i]]
        return _Texts([raw[i] for i in kept], [normalized[i] for i in kept])

    def derive_claim(
        self,
        claim: contracts_pb2.Claim,
        *,
        grounding: Iterable[str] = (),
        question: str = "",
        bound: Sequence[str] = (),
        fields: Sequence[str] = (),
        scopes: Sequence[Record] = (),
        whole: Sequence[str] = (),
        covered: Sequence[str] = (),
        outputs: tuple[Sequence[str], Sequence[str]] | None = None,
    ) -> Derivation:
        """``derive_claim`` of one claim of the run (``outputs``: the recorded outputs it bound, and the others;
        ``whole``: the whole strings its evidence is excerpts of, read as its own evidence)."""
        claim_id = claim.claim_id
        own = self._texts(self._by_claim.get(claim_id, ()))
        if whole:
            own = _Texts([*own.raw, *whole], [*own.normalized, *(normalize(t) for t in whole)])
        others = self._texts(i for i, other in enumerate(self._claim_ids) if other != claim_id)
        places = (_Texts.of(outputs[0]), _Texts.of(outputs[1])) if outputs is not None else None
        return _derive(
            claim.statement,
            own,
            others,
            grounding,
            question=question,
            bound=bound,
            fields=fields,
            scopes=[(record, _Texts.of([record.text])) for record in scopes],
            covered=covered,
            outputs=places,
        )


def derive_claim(
    claim: contracts_pb2.Claim,
    evidence: Sequence[contracts_pb2.VerifiedEvidence],
    *,
    grounding: Iterable[str] = (),
) -> Derivation:
    """Check one verified claim against the verified evidence items that belong to it; the other items may
    hold facts it infers."""
    return RunEvidence(evidence).derive_claim(claim, grounding=grounding)
