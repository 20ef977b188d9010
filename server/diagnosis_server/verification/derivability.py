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
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import value_text
from diagnosis_server.text.calendar_dates import shows_date, shows_weekday, written_dates, written_weekdays
from diagnosis_server.text.failure_modes import named_modes, shows, unshown_modes
from diagnosis_server.text.language import (
    SET_SCOPE_WORDS,
    causal_phrases,
    cause_side,
    core_lexicon,
    english_compound,
    finds_nothing,
    held_stems,
    instructions,
    lexicon,
    name_parts,
    quoted_instruction,
    scope_words,
    specific_words,
    split_names,
    stem,
    ungrounded_words,
    vocabulary,
    vocabulary_words,
    word_parts,
)
from diagnosis_server.text.literal import literal_between
from diagnosis_server.text.metric_units import NAME_UNITS, names_unit
from diagnosis_server.text.names import name_forms, written_form
from diagnosis_server.text.normalize import compact, normalize, skeleton, strip_invisible
from diagnosis_server.text.number_forms import grouped, plain_numbers
from diagnosis_server.text.polarity import negates, polarity
from diagnosis_server.text.quantities import (
    MERIDIEM,
    ZONE,
    clock_times,
    count_of,
    instants,
    quantities,
    quantity,
    same_clock_time,
    same_instant,
    same_quantity,
    within_precision,
)
from diagnosis_server.text.quotes import QUOTED
from diagnosis_server.verification.restated import restated_values

_C = contracts_pb2.ClaimClassification

# Quotation marks, never apostrophes: a single quote opens and closes only beside a non-letter ("client's",
# "didn't" and "pods'" quote nothing).
_QUOTED = QUOTED
_TIMESTAMP = re.compile(
    r"(?<![\w.])\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w])"
)
_CLOCK = re.compile(
    rf"(?<![\w:.])(?<![A-Za-z]-)\d{{1,2}}:\d{{2}}(?::\d{{2}})?(?:\s?{MERIDIEM})?(?:\s?{ZONE}(?![\w]))?(?![\w:])"
)
# A duration as Go and Kubernetes write one ("1m40s", "5m0s", "2h30m").
_GO_DURATION = re.compile(r"(?<![\w.])(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?![\w])")
_UNITS = (
    r"%|ms|milliseconds?|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|[KMGT]i?B?|bytes|cores|rps|req/s"
    r"|connections|conns"
)
# A sentence's final period is never part of a number ("#failure=3." is 3).
_NUMBER = re.compile(rf"(?<![\w.])(\d+(?:\.\d+)?)\+?\s?({_UNITS})?(?![\w]|\.\d)", re.IGNORECASE)
# An HTTP status written in the plural ("500s", "HTTP 429s"): the status, not seconds.
# (HTTP status codes as IANA registers them: "502s" are responses, "120s" two minutes)
_STATUS_PLURAL = re.compile(r"(?:10[0-3]|2[0-2]\d|30[0-8]|4[0-4]\d|45[01]|5[01]\d)s", re.IGNORECASE)
# Numbers in other forms: thousands separators (9,768), and tokens that begin with a digit and are no plain
# number (0x1F4, 1e6, 14,22): each a fact as written.
_GROUPED = re.compile(rf"(?<![\w.,])(\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?)\s?({_UNITS})?(?![\w]|[.,]\d)", re.IGNORECASE)
_ODD_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*[A-Za-z_][\w]*(?:[.,]\w+)*|(?<![\w.,])\d+(?:,\d+)+(?![\w])")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.IGNORECASE)
# An end of a range ("partitions 0–5", "13:02-13:03"): no value of a field.
_RANGE = re.compile(r"\d[-–]|[-–]\d")
# What a count counts: a plural word after it, past a name or an adjective ("3 pods", "6 orders.created partitions").
_COUNTED = re.compile(r"\s+(?:[\w.-]+\s+)?[a-z]{3,}(?<!s)s\b")
# A number of times ("restarted 4 times", "4 restarts"): a value, never how many items were bound.
_REPEATS = re.compile(r"\s*(?:times?|restarts?|attempts?|retries|failures|errors)\b", re.IGNORECASE)
# A multiple ("4x", "52x"): so many times another number, or so many times over.
_TIMES_WRITTEN = re.compile(r"(\d+(?:\.\d+)?)[x×]", re.IGNORECASE)
_NUMBER_WORDS = {
    "zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14", "fifteen": "15",
    "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30",
    "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90", "hundred": "100",
    "thousand": "1000",
}  # fmt: skip
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
# Numbers of times in words: "twice", "once" after a verb in the past, "a single", "a couple of", "a dozen", and
# Roman numerals before "times" (only there: "CI", "CD", "MIX" are words elsewhere).
_REPEAT_WORDS = {"once": "1", "twice": "2", "thrice": "3", "single": "1", "couple": "2", "dozen": "12"}
_REPEAT_WORD = re.compile(
    r"(?<=ed )(once)\b|\b(twice|thrice)\b|\ba (single|couple|dozen)\b"
    r"|\b(?=[ivxlcIVXLC]+ times\b)((?:[IVXLC]{1,7}|[ivxlc]{1,7}))(?= times\b)",
    re.IGNORECASE,
)
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
# The repeat words that count things too ("a single pod", "a couple of nodes"), unless a repeat follows them.
_COUNTING_REPEATS = frozenset({"single", "couple", "dozen"})
_REPEAT_NOUN = re.compile(r"(?:\s+of)?\s+(?:times?|restarts?|attempts?|retries|retry|failures?|errors?|crash(?:es)?)\b")


def _roman(written: str) -> str:
    """A Roman numeral's value ("VI": "6", "xi": "11"), or '' when it is not one written the usual way."""
    values = [_ROMAN[ch] for ch in written.lower() if ch in _ROMAN]
    if len(values) != len(written):
        return ""
    total = sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))
    canonical = _to_roman(total)
    return str(total) if total > 0 and canonical == written.lower() else ""


def _to_roman(number: int) -> str:
    out = ""
    for value, letters in (
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ):
        while number >= value:
            out += letters
            number -= value
    return out


_WORD_UNIT = re.compile(r"\s(milliseconds?|seconds?|minutes?|hours?|days?)\b", re.IGNORECASE)
_EVERY = re.compile(r"\bevery\s+(?:~|≈|(?:about|around|roughly|approximately)\s+)?$", re.I)
_APPROXIMATE = re.compile(
    r"(?:~|≈|\b(?:about|around|approximately|roughly|nearly|almost|some|over|under)\s)\s*(?:every\s+)?$", re.I
)
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
# A name of a setting or a file people know ("max_connections", "min.insync.replicas", "resolv.conf"): lower-case
# words joined by "_" or ".", no digit; a host ("payments.internal", "api.acme.io") is a name of the system.
_KNOWLEDGE_NAME = re.compile(r"[a-z]+(?:[_.][a-z]+)+")
_HOST = re.compile(r"\.(?:com|io|net|org|local|internal|svc|cluster|example|dev|cloud|corp|lan)\b")
# Latin abbreviations of prose ("i.e.", "e.g."), never names.
_ABBREVIATIONS = frozenset({"i.e", "e.g", "cf", "etc", "vs", "a.k.a", "n.b"})
# A host with its port ("orders-db.shop.svc:5432"): the host and the port are facts each.
_HOST_PORT = re.compile(r"(.+[A-Za-z].*):(\d{1,5})")
# A count written before its "x" ("x90"): so many times.
_TIMES_BEFORE = re.compile(r"[x×](\d+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Fact:
    text: str
    number: str = ""  # set for a number fact
    unit: str = ""
    kind: str = ""  # "quoted", "timestamp", "clock", "identifier", "compound", "number", "written"
    approximate: bool = False
    repeats: bool = False  # a number of times ("restarted 4 times"), never a count of items
    # The stems of the words around a number or a time: what it is a value of ("restarted", "exit code", "limit").
    context: frozenset[str] = frozenset()
    # A count of things ("3 pods", "6 orders.created partitions") or a part of a fraction ("3/5"): no value of a
    # field the claim bound.
    counted: bool = False
    # The stems of the words right beside it, within its clause ("peak 0.0056", "code 9", "repeated 137 times").
    near: frozenset[str] = frozenset()
    # A code ("exit code 137", "HTTP 503", "errno 111"): a key fact, fabricated when no output holds it (R-V-4).
    code: bool = False
    # A cadence ("every ~3 minutes"): the time between repeats, not between two moments.
    every: bool = False


# What writes the number after it as a code.
_CODE_BEFORE = re.compile(
    r"(?:\b(?:exit|status|error|return|response|http|grpc)\s+code|\bexit\s+status|\berrno|\bhttp(?:/[\d.]+)?|"
    r"\bcode)\s*[:=]?\s*\(?$",
    re.IGNORECASE,
)
# The exit code a container killed by a signal ends with (128 + the signal's number), by what its evidence says killed
# it: "OOMKilled" (SIGKILL) is exit code 137 wherever a runtime reports it.
_SIGNAL_CODES = {
    "137": re.compile(r"oomkill|sigkill|\bsignal 9\b|out of memory", re.IGNORECASE),
    "143": re.compile(r"sigterm|\bsignal 15\b", re.IGNORECASE),
    "139": re.compile(r"sigsegv|segmentation (?:fault|violation)|\bsignal 11\b", re.IGNORECASE),
    "134": re.compile(r"sigabrt|\bsignal 6\b|\baborted\b", re.IGNORECASE),
}


def _signal_code(fact: _Fact, raw: Sequence[str]) -> bool:
    """An exit code the claim knows from the signal its own evidence names (137 of an OOMKilled container)."""
    pattern = _SIGNAL_CODES.get(fact.number)
    return pattern is not None and "exit" in fact.context and any(pattern.search(text) for text in raw)


@dataclass(frozen=True, slots=True)
class Record:
    """A record a claim bound a value in, as a whole: the element of its output's outermost list the value stands
    in (an event, a pod, a log stream), or the whole output for a value outside any list; ``name`` says where."""

    output: str
    name: str
    text: str
    pointer: str = ""  # the element's pointer ("/items/2"); "" for the whole output
    # The names the record is of (a pod's or event's object, a log stream's or series' pod, app or service).
    identity: tuple[str, ...] = ()
    # What the record itself states, when that is less than its text (a whole output's own fields, not its lists'
    # records): the states it takes.
    stated: str | None = None


BOUND_TEXT = "bound text"
SAME_OUTPUT = "same output"
OTHER_OUTPUT = "other output"
NOWHERE = "nowhere"
QUESTION = "question"
# Scope words a conclusion may say beyond its evidence and still be a possible direction.
_SCOPE_TOKENS = frozenset({"all", "every", "never"})
# Facts that name something (a name, a code, a quote): one that no output of the run holds is fabricated (R-V-4).
_KEY_KINDS = frozenset({"identifier", "compound", "quoted", "written"})


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
    # Where each fact was found: its bound text, the same recorded output outside it, another output, the
    # question, nowhere.
    located: tuple[tuple[str, str], ...] = ()
    # Facts of the run's recorded outputs that the claim did not bind (never shown as its facts).
    unbound: tuple[str, ...] = ()
    searched_outputs: bool = False  # the run's recorded outputs were searched for the facts not bound
    # Clauses that instruct the reader ("roll back now"): an instruction is never a fact.
    instructions: tuple[str, ...] = ()
    # Facts of an observation that no record it bound shows together with its other facts, with the records that
    # show them (a pod bound from the logs said to be the one the events show OOMKilled).
    apart: tuple[tuple[str, str], ...] = ()
    # Names, codes and quotes that no recorded output of the run holds (fabricated).
    invented: tuple[str, ...] = ()
    # Numbers and times no recorded output holds as written nor as a quantity it shows (not observed).
    unshown: tuple[str, ...] = ()
    # Facts only the question holds (what the user asked about, never observed).
    asked: tuple[str, ...] = ()
    # Names a conclusion blames that its own evidence does not hold.
    blamed: tuple[str, ...] = ()
    # Settings and files named from knowledge that no output holds (external to the evidence).
    unshown_names: tuple[str, ...] = ()

    @property
    def missing(self) -> tuple[str, ...]:
        """The facts no recorded output of the run holds."""
        return (*self.invented, *self.unshown, *self.unshown_names)

    @property
    def fabricated(self) -> bool:
        """The statement names a name, code or quote no recorded output of the run holds, or a fact that conflicts
        with its evidence (R-V-4)."""
        return bool(self.conflicts or self.invented)

    @property
    def direction_only(self) -> bool:
        """A conclusion whose facts rest on verified evidence and whose only excess is what a reader may take as a
        possibility: a number or time worked out and not shown, a setting named from knowledge, a fact of an output
        it did not bind, a scope word. Never one that conflicts, fabricates, blames what it did not bind, joins
        records apart, instructs, or holds words its evidence and the lexicon lack (another script, a rider)."""
        if not self.causal or not self.found or self.classification == _C.CLAIM_CLASSIFICATION_CONTRADICTED:
            return False
        if self.conflicts or self.invented or self.apart or self.blamed or self.instructions:
            return False
        soft_words = all(w in _SCOPE_TOKENS for w in self.ungrounded)
        return soft_words and bool(self.unshown or self.unshown_names or self.unbound or self.ungrounded)

    def where(self, fact: str) -> str:
        return next((where for f, where in self.located if f == fact), NOWHERE)

    def _unbound_places(self) -> str:
        return ", ".join(f"{f} (found in the {self.where(f)})" for f in self.unbound)

    def _apart_places(self) -> str:
        return "; ".join(f"{fact} only in {where}" for fact, where in self.apart)

    def _held(self) -> str:
        return "no recorded output of the run holds" if self.searched_outputs else "its verified evidence does not hold"

    def reason(self) -> str:
        """Why the claim has its class, in an operator's words: the rule, and every fact it fails on with where the
        fact was found (R-V-4)."""
        if self.conflicts:
            return f"contradicted: its evidence states otherwise: {', '.join(self.conflicts)}"
        if self.invented:
            why = f"fabricated: it names {', '.join(self.invented)}, which {self._held()}"
            return f"{why}; and {self._unbound_places()}, outside the evidence it bound" if self.unbound else why
        if self.unbound:
            return f"not bound: it names {self._unbound_places()}, outside the evidence it bound"
        if self.classification == _C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN:
            return f"outside the evidence: {', '.join(self.unshown_names)} is named from knowledge no output holds"
        if self.unshown:
            shown = "is in no recorded output as written or as a quantity one shows"
            return f"not observed: {', '.join(self.unshown)} {shown}"
        if self.apart:
            alone = [fact for fact, _ in self.apart]
            others = [f for f in self.found if f not in alone]
            which = f"{', '.join(alone)} with {', '.join(others)}" if others else "its facts together"
            never = "a fact of one record is never said of another's"
            return f"not together: no record it bound shows {which}: {self._apart_places()}; {never}"
        if self.blamed:
            return (
                f"blames {', '.join(self.blamed)}, which none of its own evidence shows: a cause rests on what it bound"
            )
        if (self.borrowed or self.asked) and self.classification == _C.CLAIM_CLASSIFICATION_UNSUPPORTED:
            where = [
                *(f"{f} (another claim's evidence)" for f in self.borrowed),
                *(f"{f} (the question)" for f in self.asked),
            ]
            return f"not bound: it states {', '.join(where)} as observed; only a conclusion may rest on them"
        if self.instructions:
            return f"instructs: {'; '.join(self.instructions[:3])}: an instruction is never a fact"
        if not self.facts and self.classification == _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE:
            return f"it concludes ({', '.join(self.causal)}) from what its evidence names"
        if not self.facts and self.classification == _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION:
            return "an absence its evidence shows (an empty list or a zero count)"
        if not self.facts:
            return "nothing to check: the claim states no concrete fact"
        if self.ungrounded:
            return f"overstated: says more than its evidence: {', '.join(self.ungrounded[:8])}"
        if self.causal:
            return f"all of {', '.join(self.facts)} found; it concludes ({', '.join(self.causal)})"
        if self.borrowed or self.asked:
            rest = [*self.borrowed, *self.asked]
            return f"a conclusion: {', '.join(rest)} from the run's other evidence or the question"
        return f"all of {', '.join(self.facts)} found in the verified evidence"


_INFLECTED_CAPS = re.compile(r"[A-Z]{2,}(?:ed|s|es|ing)")


def _plain_word(word: str) -> bool:
    """An English word written in capitals ("CAUSED", "ERROR"), or a term of the vocabulary so written and inflected
    ("SIGKILLed"): a word, not an identifier."""
    if not word.isalpha():
        return False
    if word.isupper() or _INFLECTED_CAPS.fullmatch(word):
        return stem(word.lower()) in vocabulary() or word.lower() in vocabulary_words() or bool(causal_phrases(word))
    return False


# A number joined to its unit as an adjective ("a 40-minute window", "5-second timeout"): the quantity.
_HYPHENATED_UNIT = re.compile(r"(?<=\d)-(?=(?:milli)?(?:second|minute|hour|day)s?\b)", re.IGNORECASE)


def _prepared(statement: str) -> str:
    """The statement as its facts are read: NFKC, invisible characters removed, homoglyphs as ASCII, a number
    joined to its unit by a hyphen read as the quantity, numbers in plain forms (``text.number_forms``)."""
    text = skeleton(strip_invisible(unicodedata.normalize("NFKC", grouped(statement))))
    return plain_numbers(_HYPHENATED_UNIT.sub(" ", text))


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
    for span, _ in written_dates(text):
        if free(span[0]):
            facts.append(_Fact(text[span[0] : span[1]], kind="date"))
            taken.append(span)
    for match in _FRACTION.finditer(text):
        before = (match.group(1) or "").lower()
        if free(match.start()) and before not in _ORDINAL_WORDS:
            # (a share in words, "a third of", "half of": a percentage as rounded as words are)
            count = _FRACTION_COUNTS.get(before, 1)
            share = 100 * count / _FRACTION_PARTS[match.group(2).lower().rstrip("s")]
            written = match.group(0)[: -len("of")].strip()
            fact = _Fact(written, number=f"{share:.3g}", unit="%", kind="number", approximate=True)
            facts.append(fact)
            taken.append(match.span())
    for span, _ in written_weekdays(text):
        if free(span[0]):
            facts.append(_Fact(text[span[0] : span[1]], kind="weekday"))
            taken.append(span)
    for pattern, kind in ((_TIMESTAMP, "timestamp"), (_CLOCK, "clock")):
        for match in pattern.finditer(text):
            if free(match.start()):
                take(match, _Fact(match.group(0), kind=kind, context=_context(text, *match.span())))
    for match in _GROUPED.finditer(text):
        if free(match.start()):
            # (thousands grouped with commas: "9,768", "1,234.5 ms", "536,870,912 bytes")
            grouped, unit = match.group(1).replace(",", ""), match.group(2) or ""
            take(
                match,
                _Fact(
                    f"{match.group(1)}{unit}",
                    number=grouped,
                    unit=unit,
                    kind="number",
                    context=_context(text, *match.span()),
                    near=_near(text, *match.span()),
                ),
            )
    for match in _ODD_NUMBER.finditer(text):
        if free(match.start()) and _NUMBER.fullmatch(match.group(0)) is None:
            written = match.group(0)
            ordinal = _ORDINAL.fullmatch(written)
            times = _TIMES_WRITTEN.fullmatch(written)
            seconds = _go_seconds(written)
            if ordinal:
                fact = _Fact(written, number=written[:-2], kind="number")
            elif times:
                fact = _Fact(written, number=times.group(1), unit="x", kind="number")
            elif seconds is not None:
                fact = _Fact(
                    written,
                    number=seconds,
                    unit="s",
                    kind="number",
                    context=_context(text, *match.span()),
                    approximate=_APPROXIMATE.search(text, 0, match.start()) is not None,
                    every=_EVERY.search(text, max(0, match.start() - 40), match.start()) is not None,
                )
            else:
                fact = _Fact(written, kind="written")
            take(match, fact)
    for match in _IDENTIFIER.finditer(text):
        word = match.group(1)
        is_unit = re.fullmatch(_UNITS, word, re.IGNORECASE) is not None  # "GiB" is the unit of its number
        if free(match.start()) and word.upper() not in _STOP and not _plain_word(word) and not is_unit:
            kind = "compound" if _COMPOUND.fullmatch(word) else "identifier"
            if word.lower() in _ABBREVIATIONS or (kind == "compound" and english_compound(word)):
                taken.append(match.span())  # "i.e.", "crash-looping", "never-failing": words, no name
                continue
            if (times := _TIMES_BEFORE.fullmatch(word)) is not None:
                take(match, _Fact(word, number=times.group(1), unit="x", kind="number"))
                continue
            take(match, _Fact(word, kind=kind))  # its digits are no number of their own
    for match in _NUMBER.finditer(text):
        if free(match.start()):
            number, unit = match.group(1), match.group(2) or ""
            if unit.lower() == "s" and _STATUS_PLURAL.fullmatch(match.group(0).replace(" ", "")):
                unit = ""
            approximate = _APPROXIMATE.search(text, 0, match.start()) is not None
            repeats = _REPEATS.match(text, match.end()) is not None
            around = text[max(0, match.start() - 1) : match.end() + 1]
            counted = not unit and (
                _COUNTED.match(text, match.end()) is not None or "/" in around or _RANGE.search(around) is not None
            )
            facts.append(
                _Fact(
                    f"{number}{unit}",
                    number=number,
                    unit=unit,
                    kind="number",
                    approximate=approximate,
                    repeats=repeats,
                    context=_context(text, *match.span()),
                    counted=counted and not repeats,
                    near=_near(text, *match.span()),
                    code=not unit and _CODE_BEFORE.search(text, max(0, match.start() - 24), match.start()) is not None,
                    every=_EVERY.search(text, max(0, match.start() - 40), match.start()) is not None,
                )
            )
    for match in _REPEAT_WORD.finditer(text):
        # "restarted twice", "a dozen times", "XI times": a number of times, however written
        written = next(g for g in match.groups() if g)
        number = _REPEAT_WORDS.get(written.lower()) or _roman(written)
        if number and free(match.start()):
            facts.append(
                _Fact(
                    match.group(0),
                    number=number,
                    kind="number",
                    approximate=written.lower() == "couple",
                    context=_context(text, *match.span()),
                    # ("a single pod" counts pods; "a single restart", "once" are numbers of times)
                    repeats=written.lower() not in _COUNTING_REPEATS
                    or _REPEAT_NOUN.match(text, match.end()) is not None,
                    near=_near(text, *match.span()),
                )
            )
            taken.append(match.span())
    for match in _NUMBER_WORD.finditer(text):
        if free(match.start()):
            unit = _WORD_UNIT.match(text, match.end())
            facts.append(
                _Fact(
                    match.group(1).lower() + (unit.group(0) if unit else ""),
                    number=_NUMBER_WORDS[match.group(1).lower()],
                    unit=unit.group(1).lower() if unit else "",
                    kind="number",
                    approximate=_APPROXIMATE.search(text, 0, match.start()) is not None,
                    context=_context(text, *match.span()),
                    repeats=_REPEATS.match(text, match.end()) is not None,
                    near=_near(text, *match.span()),
                )
            )
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


_CONTEXT_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")
# A hyphenated name ("payments-api", "checkout-7d9f"): what a value is of, never a word of what it is.
_HYPHENATED_NAME = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")
_CONTEXT_REACH = 3
# Words that say nothing of what a value is of.
_NO_CONTEXT = frozenset(
    {"the", "and", "for", "with", "its", "their", "was", "were", "are", "has", "had", "have", "this", "that", "from",
     "into", "than", "then", "after", "before", "about", "around", "over", "under", "since", "until", "all", "each",
     "every", "both", "only", "just", "also", "still", "now", "not", "none", "out", "per", "via", "at", "of", "to",
     "in", "on", "is", "be", "by", "or", "an", "as", "it", "utc", "gmt"}
)  # fmt: skip


def _context(text: str, start: int, end: int) -> frozenset[str]:
    """The stems of the words within ``_CONTEXT_REACH`` words before and after ``text[start:end]`` (names split into
    their words: ``restartCount`` is "restart count")."""
    before = _CONTEXT_WORD.findall(split_names(_HYPHENATED_NAME.sub(" ", text[max(0, start - 80) : start])))
    after = _CONTEXT_WORD.findall(split_names(_HYPHENATED_NAME.sub(" ", text[end : end + 80])))
    before = [w for w in before if w.lower() not in _NO_CONTEXT][-_CONTEXT_REACH:]
    after = [w for w in after if w.lower() not in _NO_CONTEXT][:_CONTEXT_REACH]
    return frozenset(stem(w.lower()) for w in (*before, *after))


def _near(text: str, start: int, end: int) -> frozenset[str]:
    """The stems of the two words before and the word after ``text[start:end]``, not past a punctuation mark."""
    before_text = re.split(r"[,;:()\[\]]", text[max(0, start - 60) : start])[-1]
    after_text = re.split(r"[,;:()\[\]]", text[end : end + 40])[0]
    before = _CONTEXT_WORD.findall(split_names(before_text))[-2:]
    after = _CONTEXT_WORD.findall(split_names(after_text))[:1]
    return frozenset(stem(w.lower()) for w in (*before, *after) if w.lower() not in _NO_CONTEXT)


def _valued(texts: Sequence[str]) -> list[tuple[str, str, frozenset[str]]]:
    """The numbers and times the evidence writes, each with what it is a value of: (as written, kind, context)."""
    out: list[tuple[str, str, frozenset[str]]] = []
    for text in texts:
        named = _FIELD_NUMBER.match(text.strip()) or _FIELD_TIME.match(text.strip())
        if named is not None:
            key = frozenset(stem(w.lower()) for w in _CONTEXT_WORD.findall(name_parts(named.group(1))))
            kind = "time" if _TIMESTAMP.search(named.group(2)) else "number"
            written = named.group(2)
            # (a bare value of a field whose name says its unit: ``p99_latency_ms: 1234.5`` is 1234.5 ms)
            unit = next((u for u in NAME_UNITS if names_unit(u, named.group(1))), "") if kind == "number" else ""
            if unit and _NUMBER.fullmatch(written) and not _NUMBER.fullmatch(written).group(2):  # type: ignore[union-attr]
                written = f"{written} {unit}"
            out.append((written, kind, key - _NO_CONTEXT))
            continue
        times = [match.span() for match in _TIMESTAMP.finditer(text)]
        out.extend((text[a:b], "time", _context(text, a, b)) for a, b in times)
        for match in _NUMBER.finditer(text):
            if not any(a <= match.start() < b for a, b in times):
                out.append((match.group(0), "number", _context(text, *match.span())))
    return out


def _other_value(fact: _Fact, evidence: Sequence[tuple[str, str, frozenset[str]]]) -> str:
    """The value the evidence states for the same thing as a number or time of the claim that no output holds (its
    words around it say what it is of: "restarted 4 times" and ``restartCount: 0``; "the limit is 512MB" and
    ``limits.memory: 512Mi``; "first seen at 11:15 UTC" and "12:15:30+02:00 first seen"), or ''."""
    if not fact.context or fact.unit == "x" or (fact.approximate and not fact.unit):
        return ""
    if fact.counted:
        # A count of things is no value of a field, but a field that counts them ("OOMKilled count 9" and "zero
        # OOMKilled events").
        counts = [(w, k, c) for w, k, c in evidence if "count" in c and (fact.context & c) - {"count"}]
        return next((w.strip() for w, k, _ in counts if k == "number"), "")
    kind = "time" if fact.kind in ("timestamp", "clock") else "number"
    claimed = quantity(fact.number, fact.unit) if kind == "number" else None
    about = fact.context | ({"count"} if fact.repeats else set())
    for written, held_kind, context in evidence:
        if held_kind != kind or not about & context:
            continue
        if claimed is not None:
            match = _NUMBER.fullmatch(written.strip())
            held = quantity(match.group(1), match.group(2) or "") if match else None
            plain_ratio = held is not None and not held.family and claimed.family == "ratio" and held.number <= 1
            if held is None or not (held.family == claimed.family or plain_ratio):
                continue  # another kind of quantity (a size, a duration) is no value of the same thing
        return written.strip()
    return ""


# Words before a cause's subject ("the", "its new").
_SUBJECT_SKIP = frozenset(
    {"the", "a", "an", "its", "their", "this", "that", "these", "those", "new", "old", "all", "both"}
)


def _cause_subject(statement: str, facts: Sequence[_Fact], run_names: Collection[str]) -> str:
    """The subject of a conclusion's cause (``text.language.cause_side``: its first word, past an article), when it
    is a name (a fact's, the run's, or a word of no common English); '' when it is a word of the language ("the
    node")."""
    names = {normalize(f.text) for f in facts if f.kind in ("identifier", "compound")}
    for token in re.findall(r"[a-z0-9][a-z0-9.:/_-]*", cause_side(statement)):
        if token in _SUBJECT_SKIP or token.replace(".", "").isdigit():
            continue
        named = token in names or token in run_names or (token.isalpha() and stem(token) not in core_lexicon())
        return token if named else ""
    return ""


def _blamed(
    statement: str,
    facts: Sequence[_Fact],
    mine: _Texts,
    run_names: Collection[str],
    scopes: Sequence[tuple[Record, _Texts]] = (),
    run_scopes: Sequence[tuple[Record, _Texts]] = (),
) -> tuple[str, ...]:
    """The subject of a conclusion's cause when the claim does not show it failing so: a name its own evidence does
    not hold (a cause is blamed on what the claim bound, never on a name only another claim, another output or
    nothing shows: "psp is the root cause: orders-api fails ...", bound to orders-api's failure alone), or one that
    no record it bound shows with the failure the conclusion names ("the ledger-db certificate expired", bound to
    ledger-db in the topology and to ledger-grpc's certificate events)."""
    subject = _cause_subject(statement, facts, run_names)
    if not subject:
        return ()
    fact = _Fact(subject, kind="compound" if "-" in subject else "identifier")
    if not _found(fact, mine.normalized, mine.spaceless, mine.raw):
        return (subject,)
    modes = named_modes(statement)
    records = [*scopes, *run_scopes]
    if not modes or not records:
        return ()
    # The subject's own records (those of it: its pods, its events, its log streams), else those naming it.
    own_records = [texts for record, texts in records if any(_of(subject, name) for name in record.identity)]
    held = own_records or [t for _, t in records if _found(fact, t.normalized, t.spaceless, t.raw)]
    showing = [texts for _, texts in records if any(shows(mode, text) for mode in modes for text in texts.raw)]
    if not held:
        return ()
    # The subject's records show the failure, or share an id with a record that does (the kernel's OOM kill of pid
    # 28841 and the worker's log of pid 28841).
    if any(a is b or _share_token(a, b) for a in held for b in showing):
        return ()
    return (f"{subject} ({', '.join(mode.name for mode in modes)})",)


def _of(subject: str, name: str) -> bool:
    """``name`` (a record's) is ``subject``'s: the same, or one of its objects (``ledger-grpc-tls`` of
    ``ledger-grpc``, pod ``cart-svc-7d9f-x2k8q`` of ``cart-svc``)."""
    folded = normalize(name)
    return folded == subject or folded.startswith(subject + "-")


def _share_token(a: _Texts, b: _Texts) -> bool:
    """Two records holding one id (a process id, a pod's name, an address), never only a date or a time."""
    tokens = {t for text in a.raw for t in _LINK_TOKEN.findall(text) if _linking(t)}
    return any(_has_token(normalize(t), text) for t in tokens for text in b.normalized)


_DATE_START = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}")


def _linking(token: str) -> bool:
    return (any(c.isdigit() for c in token) or "-" in token) and _DATE_START.match(token) is None


# (a count is followed by a space and the word of what it counts: "7 node(s) had", never "111) on" or "3000/v2")
_COUNTED_PHRASE = re.compile(r"(?<![\w.])(\d+)(?![\w.])(\s+[A-Za-z][\w'()/]*(?:\W+[A-Za-z][\w'()/]*){0,5})")


def _phrases(text: str) -> list[tuple[str, frozenset[str]]]:
    """Each whole number of ``text`` with the stems of the words after it ("2 node(s) had untolerated taint")."""
    out = []
    for match in _COUNTED_PHRASE.finditer(text):
        words = [w.lower() for w in _CONTEXT_WORD.findall(match.group(2))]
        out.append((match.group(1), frozenset(stem(w) for w in words if w not in _NO_CONTEXT)))
    return out


def _swapped_numbers(statement: str, raw: Sequence[str]) -> list[str]:
    """Numbers a statement puts before what another number counts in one of its bound texts ("7 nodes had the
    untolerated taint", where the message reads "2 node(s) had untolerated taint, 7 node(s) didn't match"): the
    evidence says another number of the same thing, and this number of another."""
    out: list[str] = []
    for number, words in _phrases(_prepared(statement)):
        if len(number) > 4 or len(words) < 3:
            continue  # an id, a size, a timestamp's digits: no count of things
        for text in raw:
            held = _phrases(text)
            own = [w for n, w in held if n == number]
            if not own or len({n for n, _ in held}) < 2 or any(len(words & w) > 1 for w in own):
                continue
            same = [n for n, w in held if n != number and len(words & w) >= 3]
            if same:
                out.append(f"{number} (evidence: {same[0]} of that)")
                break
    return out


def _misread_field(fact: _Fact, fields: Sequence[str]) -> str:
    """A number of the claim found only as the value of another field than the one its words name ("repeated 137
    times", where ``count: 9`` and ``exitCode: 137``; "exited with code 9", where ``exitCode: 137`` and ``count:
    9``): what the named field says, or ''."""
    if not fact.number or fact.unit or not fact.near:
        return ""
    wanted = fact.near | ({"count"} if fact.repeats else set())
    named: list[tuple[str, str]] = []
    other = False
    for field in fields:
        match = _FIELD_NUMBER.match(field.strip())
        if match is None:
            continue
        name, value = match.groups()
        words = {stem(w.lower()) for w in _CONTEXT_WORD.findall(name_parts(name))}
        if words & wanted:
            named.append((name, value))
        elif _has_number(fact.number, [value]):
            other = True
    if other and named and not any(_has_number(fact.number, [value]) for _, value in named):
        return f"{fact.text} ({', '.join(f'{name}: {value}' for name, value in named)})"
    return ""


def _other_count(fact: _Fact, covered: Sequence[str]) -> str:
    """The size of a list the claim bound whole, where it states another count of items ("4 pods are pending" of a
    list of 3), or ''."""
    if not fact.number.isdigit() or fact.unit or fact.repeats or fact.approximate or not fact.counted:
        return ""
    # Lists of names, or of named objects where it counts what a listing lists ("4 pods" of a pod listing; "10
    # lines each" counts something else of its items).
    listed = _LISTED.search(" ".join(fact.context)) is not None
    sizes = [len(items) for items in _name_lists(covered, objects=listed)]
    # More items than the whole list holds (never fewer: "the 3 older pods" of 5 is a part of it).
    return f"a list of {max(sizes)}" if sizes and int(fact.number) > max(sizes) else ""


# What a listing lists, as the stems of the words a count is of.
_LISTED = re.compile(r"\b(?:pod|replica|node|contain|instanc|job|servic|deploy|target|endpoint|broker|partit)")


def _name_lists(texts: Sequence[str], *, objects: bool = False) -> list[list[str]]:
    """The lists of names among ``texts`` (and, with ``objects``, of objects each with a name)."""
    out = []
    for text in texts:
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            if not isinstance(parsed, list) or not parsed:
                continue
            if all(isinstance(item, str) for item in parsed):
                out.append(parsed)
            elif objects and all(_item_name(item) for item in parsed):
                out.append([_item_name(item) for item in parsed])
    return out


def _item_name(item: object) -> str:
    """A listed object's name (``name``, or its ``metadata.name``), or ''."""
    if not isinstance(item, dict):
        return ""
    metadata = item.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else item.get("name")
    return name if isinstance(name, str) else ""


def _go_seconds(written: str) -> str | None:
    """A Go or Kubernetes duration ("1m40s", "5m0s", "2h30m") in seconds, or None."""
    match = _GO_DURATION.fullmatch(written)
    if match is None or (sum(1 for g in match.groups() if g) < 2 and not written.endswith("s")):
        return None
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    return str(int(total)) if total.is_integer() else str(total)


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


def _other_unit(fact: _Fact, texts: Sequence[str], raw: Sequence[str]) -> str:
    """The unit the evidence's metric name gives a number the claim writes in another unit of its kind ("1.52 ms"
    of ``..._seconds`` 1.52), as "1.52 s", or ''."""
    if not fact.unit or not _has_number(fact.number, texts):
        return ""
    claimed = quantity(fact.number, fact.unit)
    if claimed is None or not claimed.family:
        return ""
    for unit in NAME_UNITS:
        held = quantity(fact.number, unit)
        other = held is not None and held.family == claimed.family and held.scale != claimed.scale
        if other and any(names_unit(unit, t) for t in raw) and not any(names_unit(fact.unit, t) for t in raw):
            return f"{fact.number} {unit}"
    return ""


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
    if fact.kind in ("date", "weekday"):
        return compact(fact.text) in haystack or _same_day(fact, raw)
    if not fact.number:
        if compact(fact.text) in haystack or (fact.kind == "identifier" and _names_field(fact.text, fields)):
            return True
        singular = _singular(fact.text) if fact.kind in ("identifier", "compound") else ""
        if singular and compact(singular) in haystack:
            return True
        if fact.kind == "identifier" and _name_form_found(fact.text, singular, raw):
            return True
        if fact.kind == "quoted" and _elided_quote_found(fact.text, texts):
            return True
        if fact.kind in ("identifier", "compound") and _parts_found(fact.text, texts, haystack, raw):
            return True
        return fact.kind == "compound" and _compound_found(fact.text, raw)
    if not fact.unit:
        # (a number of times, "restarted once", is a value: never how many items a list holds)
        if _has_number(fact.number, texts) or (not fact.repeats and count_of(fact.number, lists)):
            return True
        if fact.text in _NUMBER_WORDS and _has_word(fact.text, texts):
            return True
        return ("." in fact.number or fact.approximate) and _same_quantity(fact, raw)
    written = literal_between(compact(fact.text), r"(?<![\d.])")
    if written.search(haystack):
        return True
    if fact.unit == "k":
        # "48k SKUs": thousands, as rounded as written.
        claimed = quantity(fact.number, "", approximate=True)
        held = [q for text in raw for q in quantities(text) if not q.family]
        return claimed is not None and any(within_precision(claimed, q.number / 1000) for q in held)
    if _has_number(fact.number, texts) and _has_unit(fact.unit, texts, raw):
        return True
    return _same_quantity(fact, [*raw, *(field for field in fields if _NAMED_NUMBER.fullmatch(field))])


_VERSION = re.compile(r"[vV](\d+(?:\.\d+)+)")


def _name_form_found(identifier: str, singular: str, raw: Sequence[str]) -> bool:
    """An identifier the evidence writes in another form of a name (``text.names``): by its words joined
    (``restartcount``, ``SQLSTATE`` for ``sql_state_code``), by their initials (``NPE`` for
    ``NullPointerException``, ``HPA`` for ``horizontal-pod-autoscaler``), as one word of a name (``gRPC`` of
    ``io.grpc.StatusRuntimeException``), or a version with its ``v`` (``v5.21.0`` for ``5.21.0``)."""
    forms = name_forms(raw)
    if written_form(identifier) in forms or (singular and written_form(singular) in forms):
        return True
    version = _VERSION.fullmatch(identifier)
    return version is not None and any(_has_number(version.group(1), [normalize(t)]) for t in raw)


# An elided quote: its parts, in order, are the evidence's words ("Can't connect to MySQL server ... refused").
_ELLIPSIS = re.compile(r"\s*(?:\.{3}|…)\s*")
_FIELD_JOIN = re.compile(r"(?<=\w): (?=\w)")


def _elided_quote_found(quoted: str, texts: Sequence[str]) -> bool:
    """A quote cut with an ellipsis whose every part (two words or more each, or one name) one text holds in
    order; or a structured line's fields quoted as one message, joined by ": " ("invalid configuration: required
    key X missing value" of ``"msg":"invalid configuration","error":"required key X missing value"``), each part
    two words or more."""
    if _ELLIPSIS.search(quoted):
        parts = [normalize(p) for p in _ELLIPSIS.split(quoted) if p.strip()]
    else:
        parts = [normalize(p) for p in _FIELD_JOIN.split(quoted) if p.strip()]
        if any(len(p.split()) < 2 for p in parts):
            return False
    if len(parts) < 2:
        return False
    for text in texts:
        position = 0
        for part in parts:
            found = text.find(part, position)
            if found < 0:
                break
            position = found + len(part)
        else:
            return True
    return False


def _derived(fact: _Fact, raw: Sequence[str], counts: Collection[int], run: Sequence[str] = ()) -> bool:
    """A number the claim worked out from what it bound, by one rule each (each fails closed):

    - a count: the number of items of a list it bound items of, or of the items it bound ("3 pods");
    - a multiple: "4x" the ratio of two of its numbers ("to 16 from 4"), or a count written so ("52x");
    - a total: the sum of one field over the items it bound ("15 restarts" of ``restartCount`` 8 and 7);
    - a duration: the time between two of its moments, within the precision written ("~19 min", "36 s later").
    """
    number = float(fact.number)
    if not fact.unit or fact.unit == "x":
        if not fact.unit and number.is_integer() and int(number) in counts and not fact.repeats:
            return True
        if fact.unit == "x":
            values = [q.number for text in raw for q in quantities(text) if q.number]
            return any(_close(number, a / b, fact) for a in values for b in values if b and a > b) or any(
                _has_number(fact.number, [normalize(text)]) for text in raw
            )
        return _total(fact, raw)
    claimed = quantity(fact.number, fact.unit, approximate=fact.approximate)
    if claimed is None or claimed.family != "seconds":
        return False
    # (between two moments of its own evidence, or one of its own and one the run's verified evidence shows)
    own = {i.moment for text in raw for i in instants(text) if i.aware}
    moments = sorted(own | {i.moment for text in run for i in instants(text) if i.aware} if own else own)
    wanted = claimed.base
    if fact.every:
        # A cadence: the span of its moments over the repeats between them, for a list it bound items of.
        mine = sorted(own)
        if len(mine) < 2:
            return False
        span = (mine[-1] - mine[0]).total_seconds()
        gaps = [span / (n - 1) for n in {*counts, len(mine)} if n > 1]
    else:
        gaps = [abs((b - a).total_seconds()) for i, a in enumerate(moments) for b in moments[i + 1 :]]
        # (two moments its evidence writes with no zone are apart by as much in any zone)
        naive = sorted({i.moment for text in raw for i in instants(text) if not i.aware})
        gaps += [abs((b - a).total_seconds()) for i, a in enumerate(naive) for b in naive[i + 1 :]]
        gaps += _budgets(raw)
    return any(
        within_precision(claimed, gap / claimed.scale)
        or (fact.approximate and abs(gap - wanted) <= max(claimed.scale, wanted * 0.1))
        for gap in gaps
    )


_SECONDS_FIELD = re.compile(r"(?i)seconds$|period|delay|timeout|interval")


def _budgets(raw: Sequence[str]) -> list[float]:
    """The time a bound count of repeats of a bound period takes (a probe's ``failureThreshold`` times its
    ``periodSeconds``: "12 × 10s", "a budget of ~2 minutes"), in seconds."""
    periods: list[int] = []
    counts: list[int] = []
    for text in raw:
        match = _FIELD_NUMBER.match(text.strip())
        if match is None or not match.group(2).isdigit():
            continue
        (periods if _SECONDS_FIELD.search(match.group(1)) else counts).append(int(match.group(2)))
    return [float(p * n) for p in periods for n in counts if p and n > 1]


def _close(number: float, value: float, fact: _Fact) -> bool:
    decimals = len(fact.number.partition(".")[2])
    return round(value, decimals) == number or (fact.approximate and abs(value - number) <= 0.1 * number)


_FIELD_NUMBER = re.compile(r"^([A-Za-z][\w.-]{0,80}): (-?\d+(?:\.\d+)?\s?[A-Za-z%]{0,3})$")
_FIELD_TIME = re.compile(r"^([A-Za-z][\w.-]{0,80}): (\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)$")


def _total(fact: _Fact, raw: Sequence[str]) -> bool:
    """The fact's number is the sum of one bound field over two or more of the items the claim bound, within the
    precision written ("~80" of 40 and 41)."""
    sums: dict[str, list[int]] = {}
    for text in raw:
        match = _FIELD_NUMBER.match(text.strip())
        if match is not None and match.group(2).lstrip("-").isdigit():
            sums.setdefault(match.group(1), []).append(int(match.group(2)))
    number = float(fact.number)
    return any(len(values) > 1 and _close(number, sum(values), fact) for values in sums.values())


def _parts_found(name: str, texts: Sequence[str], haystack: str, raw: Sequence[str]) -> bool:
    """A name that is two facts written together: a host and its port (``orders-db.shop.svc:5432``: the host as
    the evidence writes it or the start of its longer name, and the port), or words joined by a slash
    (``Pending/Unschedulable``, ``disk/volume``): each a fact found, or a word of the neutral vocabulary or of its
    own evidence."""
    if (host_port := _HOST_PORT.fullmatch(name)) is not None and "/" not in name:
        host, port = host_port.groups()
        return compact(host) in haystack and _has_number(port, texts)
    if "/" not in name or name.startswith("/") or "." in name.partition("/")[0]:
        return False  # a path or an image reference ("ghcr.io/acme/app") is found whole or not at all
    held = held_stems(raw)
    for part in name.split("/"):
        if not part:
            return False
        if part.isalpha() and (stem(part.lower()) in lexicon() or stem(part.lower()) in held):
            continue
        kind = "compound" if _COMPOUND.fullmatch(part) else "identifier"
        if part.isdigit():
            if not _has_number(part, texts):
                return False
        elif not _found(_Fact(part, kind=kind), texts, haystack, raw):
            return False
    return True


def _loose_quote(quoted: str, raw: Sequence[str]) -> bool:
    """A quote the evidence does not hold as written but whose every word (but one) it holds: quoted loosely, not
    made up."""
    words = [w for w in re.findall(r"[a-z]{3,}", normalize(quoted)) if w not in _NO_CONTEXT]
    if len(words) < 3:
        return False
    held = held_stems(raw)
    return sum(1 for w in words if stem(w) not in held) <= 1


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


_FRACTION_PARTS = {"half": 2, "third": 3, "quarter": 4, "fifth": 5, "tenth": 10}
_FRACTION_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "nine": 9}
_ORDINAL_WORDS = frozenset({"first", "second", "last", "other", "latter", "former"})
_FRACTION = re.compile(
    r"\b(?:(a|an|one|two|three|four|nine|first|second|last|other|latter|former)\s+)?"
    r"(half|thirds?|quarters?|fifths?|tenths?)\s+of\b",
    re.IGNORECASE,
)


def _same_day(fact: _Fact, raw: Sequence[str]) -> bool:
    """A date or weekday one of the evidence's moments falls on (``text.calendar_dates``)."""
    moments = [moment for text in raw for moment in instants(text)]
    if fact.kind == "weekday":
        return any(shows_weekday(weekday, moments) for _, weekday in written_weekdays(f"on {fact.text}"))
    return any(shows_date(candidates, moments) for _, candidates in written_dates(fact.text))


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


# A key a statement writes before ": " as a field's name, not as a word of prose ("restartCount: OOMKilled",
# "exit_code: 137"; "nodes available: the 2 tainted ones" is prose): a name with an inner capital, a separator or a
# digit; a plain word is a key only of a number ("status: 502").
_NAME_SHAPED = re.compile(r"[a-z][A-Z]|[_.\-]|\d")
_PROSE_KEY_VALUE = re.compile(
    r"\b([A-Za-z_][A-Za-z0-9_.-]{1,40})(\s*=\s*|:(?!\s)|:\s+)\"?([A-Za-z0-9_%]+(?:[./:-][A-Za-z0-9_%]+){0,8})\"?"
)


def _statement_key_values(statement: str) -> dict[str, set[str]]:
    """A statement's key-value facts (``reason=OOMKilled``, ``restartCount: 6``), read from its own writing: a colon
    followed by a space joins a key to a value only when the key is written as a field's name; otherwise it is
    the colon of a sentence ("the scheduler says: 0/9 nodes available")."""
    out: dict[str, set[str]] = {}
    for key, separator, value in _PROSE_KEY_VALUE.findall(_prepared(statement)):
        prose = separator.startswith(":") and separator != ":"
        if prose and not _NAME_SHAPED.search(key) and not value[:1].isdigit():
            continue
        out.setdefault(normalize(key).replace(" ", ""), set()).add(normalize(value).replace(" ", ""))
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
    counts: Collection[int] = (),
    names: Sequence[str] = (),
) -> Derivation:
    """Classify ``statement`` against ``matched_texts`` (its own verified evidence). ``run_texts`` (the run's
    other verified evidence) may hold a fact the claim then infers; ``grounding`` texts (the question, the
    whole values the evidence was found in) may ground its words but never its facts; ``bound`` (the whole
    values it bound) holds its polarity and its lists; ``fields`` (its bound scalars as "name: value") name what
    a value is (a unit, ``p99``); ``scopes`` (the records it bound) tell whether the records of one output show
    an observation's facts with those of another (``Record``); ``covered`` (the lists it bound every element of)
    hold its counts and its scope ("all"); ``same_outputs`` and ``other_outputs`` (the recorded
    outputs it bound, and the others) tell where a fact it did not bind stands; ``counts`` (the sizes of the lists
    it bound items of, and how many it bound) are the counts it may state; ``names`` (what its bindings name besides
    their values: the tool, the pointer's keys) ground its names, never its facts' polarity."""
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
        counts=counts,
        named=_Texts.of(names) if names else None,
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
    counts: Collection[int] = (),
    named: _Texts | None = None,
    run_names: Collection[str] = (),
    states: Sequence[str] = (),
    run_scopes: Sequence[tuple[Record, _Texts]] = (),
    paths: Sequence[str] = (),
    lists: Sequence[str] = (),
) -> Derivation:
    """``derive`` on texts already read (the others' run together only when a fact is not in the claim's own).
    ``named``: what its bindings name besides their values (their tools, pointers' keys, records' names): they hold
    its facts and words, never its stances or values."""
    texts, raw = own.normalized, own.raw
    # What it bound, and the lists its items stand in: their polarity is the bound values' alone.
    stanced = [*raw, *bound]
    bound = [*bound, *lists]
    facts = _facts(statement)
    mine = own if named is None else _Texts([*own.raw, *named.raw], [*own.normalized, *named.normalized])
    found = tuple(
        f.text
        for f in facts
        if _found(f, mine.normalized, mine.spaceless, mine.raw, [*bound, *covered], fields)
        or (f.number and _derived(f, [*raw, *bound], counts, others.raw))
        # (an exit code restates the signal its own evidence names, as a unit restates a quantity)
        or (f.code and _signal_code(f, [*raw, *bound]))
    )
    missing = [f for f in facts if f.text not in found]
    borrowed = tuple(f.text for f in missing if _found(f, others.normalized, others.spaceless, others.raw))
    located = [(f, BOUND_TEXT) for f in found] + [(f, OTHER_OUTPUT) for f in borrowed]
    asked_texts = _Texts.of([question]) if question else None
    from_question: list[str] = []
    unbound: list[str] = []
    for fact in (f for f in missing if f.text not in borrowed):
        for where, place in zip((SAME_OUTPUT, OTHER_OUTPUT), outputs or (), strict=False):
            if _found(fact, place.normalized, place.spaceless, place.raw):
                unbound.append(fact.text)
                located.append((fact.text, where))
                break
        else:
            if asked_texts is not None and _found(fact, asked_texts.normalized, asked_texts.spaceless, asked_texts.raw):
                from_question.append(fact.text)
                located.append((fact.text, QUESTION))
            else:
                located.append((fact.text, NOWHERE))
    nowhere = [f for f in missing if f.text not in borrowed and f.text not in unbound and f.text not in from_question]
    # A name, code or quote no output holds is fabricated; a number or a time no output holds may be one the claim
    # worked out (a sum, a rounding, a time in another zone): never shown as observed, but no fabrication.
    keyed = [
        f
        for f in nowhere
        if (f.kind in _KEY_KINDS and not (f.kind == "quoted" and _loose_quote(f.text, raw))) or f.code
    ]
    # A setting or a file named from knowledge (max_connections, min.insync.replicas, resolv.conf): outside the
    # evidence, never fabricated of it.
    external = tuple(f.text for f in keyed if _KNOWLEDGE_NAME.fullmatch(f.text) and not _HOST.search(f.text))
    invented = tuple(f.text for f in keyed if f.text not in external)
    valued = _valued([*raw, *fields]) if any(f.kind not in _KEY_KINDS for f in nowhere) else []
    # A number or time no output holds, where its own evidence states another for the same thing: contradicted.
    restated = [
        (f.text, other)
        for f in nowhere
        if f.kind not in _KEY_KINDS
        and (other := _other_value(f, valued) or _other_count(f, [*covered, *raw]) or _other_unit(f, texts, raw))
    ]
    unshown = tuple(f.text for f in nowhere if f.text not in invented and f.text not in dict(restated))
    evidence_kv: dict[str, set[str]] = {}
    for text in texts:
        for key, values in _key_values(text).items():
            evidence_kv.setdefault(key, set()).update(values)
    run_spaceless = [others.spaceless, *(place.spaceless for place in outputs or ())]
    conflicts = [
        f"{key}={value} (evidence: {', '.join(sorted(evidence_kv[key]))})"
        for key, values in _statement_key_values(statement).items()
        for value in sorted(values)
        if key in evidence_kv
        and value not in evidence_kv[key]
        # The same key with this value elsewhere in the run's outputs: unbound, not contradicted.
        and not any(compact(f"{key}={value}") in h or compact(f"{key}: {value}") in h for h in run_spaceless)
        and not _equivalent_value(value, evidence_kv[key])
    ]
    # (a value already named by its key's conflict is said once)
    by_key = {conflict.partition(" ")[0].partition("=")[2] for conflict in conflicts}
    conflicts += [f"{claimed} (evidence: {held})" for claimed, held in restated if normalize(claimed) not in by_key]
    conflicts += [m for f in facts if f.text in found and (m := _misread_field(f, fields))]
    if not causal_phrases(statement):
        conflicts += _swapped_numbers(statement, raw)
    conflicts += restated_values(statement, raw, fields)
    conflicts += _misattributed(statement, scopes, fields)
    # A conclusion rests on the run's verified evidence: a state another claim's evidence shows is its ground too.
    concluding = bool(causal_phrases(statement))
    polar = polarity(
        statement, stanced, [r.text if r.stated is None else r.stated for r, _ in scopes], states if concluding else ()
    )
    conflicts += list(polar.conflicts)
    grounding = list(grounding)
    asked = (question,) if question else ()
    # (a number's words, "25 pct", "two hundred fifty", "¼ of", are the number, checked as a fact)
    ungrounded = ungrounded_words(
        plain_numbers(grouped(statement)), [*mine.raw, *others.raw, *grounding], question=asked
    )
    ungrounded += tuple(w for w in polar.missing if w not in ungrounded)
    # A failure mode the run's verified evidence never shows ("ran out of memory" where nothing was OOMKilled).
    ungrounded += tuple(
        f"{mode} (no evidence shows it)" for mode in unshown_modes(statement, [*mine.raw, *others.raw, *bound])
    )
    ungrounded += _unshown_scope(
        statement,
        [f for f in facts if f.text in found],
        [*texts, *grounding],
        [*bound, *covered],
        scopes,
        question,
        fields,
    )
    causal = causal_phrases(statement)
    said = [*raw, *bound, *_outputs_raw(outputs)]
    instructing = tuple(c for c in instructions(statement) if not quoted_instruction(c, said, statement=statement))
    placed = [f for f in facts if f.text in found]
    blamed = (
        _blamed(statement, facts, mine, run_names, scopes, run_scopes)
        if causal and not finds_nothing(statement)
        else ()
    )
    apart = () if causal or len(scopes) < 2 else _apart_in_clauses(statement, placed, scopes, raw)
    apart += _misqualified(statement, paths)
    if conflicts or invented:
        classification = _C.CLAIM_CLASSIFICATION_CONTRADICTED
    elif external and not unbound:
        classification = _C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN
    elif unbound or unshown or apart or ((borrowed or from_question) and not causal) or blamed:
        # A fact the claim did not bind (an output outside its bound text, another claim's evidence, the question)
        # or that no output shows as written: never its fact. A conclusion may rest on the run's verified evidence
        # and name what the question asks about, never on what no verified evidence holds; and what it blames (a
        # name) is one its own evidence shows, never one only another claim's evidence holds (an invented cause
        # names the service next door).
        classification = _C.CLAIM_CLASSIFICATION_UNSUPPORTED
    elif (
        not facts and causal and not ungrounded and not instructing and specific_words(statement, [*texts, *grounding])
    ):
        classification = _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
    elif not facts and not causal and not ungrounded and not instructing and _absence_shown(statement, [*raw, *bound]):
        classification = _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
    elif not facts:
        classification = _C.CLAIM_CLASSIFICATION_UNSUPPORTED
    elif ungrounded or instructing:
        classification = _C.CLAIM_CLASSIFICATION_OVERSTATED
    elif causal or borrowed or from_question:
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
        invented=invented,
        unshown=unshown,
        asked=tuple(from_question),
        blamed=blamed,
        unshown_names=external,
    )


_NONE_SAID = re.compile(r"[a-z]+(?:n't)?")
_ZERO_FIELD = re.compile(r"^(?:[A-Za-z][\w.-]{0,80}: )?(?:0(?:\.0+)?|\[\]|\{\})$")


def _absence_shown(statement: str, bound: Sequence[str]) -> bool:
    """A statement of absence ("no deploys in the window", "haven't restarted") whose bound evidence is a zero count
    or an empty list (``total: 0``, ``[]``): the absence is its fact (its words are grounded apart)."""
    words = _NONE_SAID.findall(_QUOTED.sub(" ", normalize(statement)).replace("’", "'"))
    if not any(negates(w) for w in words):
        return False
    return any(_ZERO_FIELD.match(text.strip()) for text in bound)


# A number said of a named thing: "restartCount 9 in pod-a", "3 on worker-2", "7 for keycloak-1".
_NUMBER_OF_NAME = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s+(?:in|on|for|of|at)\s+([A-Za-z0-9][\w.-]*[\w])")


def _misattributed(statement: str, scopes: Sequence[tuple[Record, _Texts]], fields: Sequence[str]) -> list[str]:
    """A bound value said of another record's name ("9 in pod-b" where the claim bound ``restartCount: 9`` in
    pod-a's record and pod-b's holds ``restartCount: 3``): the value of one record is never another's."""
    said = list(_NUMBER_OF_NAME.finditer(statement))
    if not said:
        return []
    records = [(r, _field_lines(r.text)) for r, _ in scopes if r.pointer]
    out: list[str] = []
    for match in said:
        number, name = match.group(1), match.group(2).lower()
        stated = _fields_stating(number, fields)
        named = [(r, lines) for r, lines in records if name in (i.lower() for i in r.identity)]
        if not stated or len(named) != 1 or stated & named[0][1]:
            continue
        record = named[0][0]
        if not any(other is not record and stated & held for other, held in records):
            continue
        keys = {field.partition(":")[0] for field in stated}
        own = sorted(line for line in record.text.splitlines() if compact(line).partition(":")[0] in keys)
        if own:
            out.append(f"{number} of {match.group(2)} (evidence: {', '.join(line.strip() for line in own[:2])})")
    return out


def _unshown_scope(
    statement: str,
    facts: Sequence[_Fact],
    evidence: Sequence[str],
    bound: Sequence[str],
    scopes: Sequence[tuple[Record, _Texts]] = (),
    question: str = "",
    fields: Sequence[str] = (),
) -> tuple[str, ...]:
    """The scope words of a statement ("all 3 pods are OOMKilled") that its evidence neither says nor shows: a list
    it bound whole (``bound``), or the records of one list it bound two or more of ("all 3 pods", of the three it
    bound), shows one when every item holds each of the claim's facts that more than one item holds, and every item
    holds one of them; the question's own scope ("every call has failed") is the user's to state. A number is held
    by an item as a field the claim bound ("all 4 pods exited with code 1": ``exitCode: 1`` in each)."""
    words = scope_words(statement)
    if not words:
        return ()
    said = [normalize(text) for text in (*evidence, question)]
    lists: dict[tuple[str, str], list[tuple[Record, _Texts]]] = {}
    for record, texts in scopes:
        if record.pointer:
            lists.setdefault((record.output, record.pointer.rpartition("/")[0]), []).append((record, texts))
    numbers = _numbers_as_fields(facts, fields)
    items = [
        *((listed, None) for listed in _lists(bound)),
        *(
            (
                [" ".join(texts.normalized).replace(" ", "") for _, texts in records],
                [_field_lines(record.text) for record, _ in records] if numbers else None,
            )
            for records in lists.values()
            if len(records) > 1
        ),
    ]
    shown = any(_every_item_holds(facts, listed, lines, numbers) for listed, lines in items)
    return tuple(w for w in words if not (shown and w in SET_SCOPE_WORDS) and not _has_word(w, said))


def _numbers_as_fields(facts: Sequence[_Fact], fields: Sequence[str]) -> dict[str, frozenset[str]]:
    """Each number fact as the bound fields that state it ("1": ``exitcode:1``), compact."""
    stated = {fact.text: _fields_stating(fact.text, fields) for fact in facts if fact.number}
    return {number: held for number, held in stated.items() if held}


def _fields_stating(value: str, fields: Sequence[str]) -> frozenset[str]:
    """The bound fields (``name: value``) whose value is ``value``, compact ("exitcode:1")."""
    return frozenset(compact(f) for f in fields if f.rpartition(": ")[2].strip() == value)


def _field_lines(record: str) -> frozenset[str]:
    return frozenset(compact(line) for line in record.splitlines())


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


def _every_item_holds(
    facts: Sequence[_Fact],
    items: Sequence[str],
    lines: Sequence[frozenset[str]] | None = None,
    numbers: dict[str, frozenset[str]] | None = None,
) -> bool:
    """Every item of a list holds what the claim says of all of them: the facts that more than one item holds are
    in every item, and every item holds one of its facts (the names of each, "A, B and C are all OOMKilled"); a
    number, as a field the claim bound, where the items' fields are known (``lines``)."""
    named = [compact(f.text) for f in facts if not f.number and f.kind in ("identifier", "compound", "quoted")]
    held = {key: [key in item for item in items] for key in named if key and any(key in item for item in items)}
    if lines is not None:
        for number, as_fields in (numbers or {}).items():
            where = [bool(as_fields & item) for item in lines]
            if any(where):
                held[number] = where
    if not held:
        return False
    shared = [key for key, where in held.items() if sum(where) > 1 or len(items) == 1]
    each = all(any(where[i] for where in held.values()) for i in range(len(items)))
    return all(all(held[key]) for key in shared) and (bool(shared) or each)


# Where one observation of a statement ends and the next begins: a semicolon, a sentence's end, or a comma before
# "and", "while" or "but" ("pod X is ready, and the worker connected ...").
_CLAUSE_END = re.compile(r";\s*|[.!?]\s+(?=[A-Z])|,\s+(?:and|while|but|whereas)\s+")


def _apart_in_clauses(
    statement: str, facts: Sequence[_Fact], scopes: Sequence[tuple[Record, _Texts]], bound: Sequence[str] = ()
) -> tuple[tuple[str, str], ...]:
    """``_apart`` and ``_misplaced`` of each observation of a statement ("X is CrashLoopBackOff; pod Y is Pending" is
    two)."""
    out: list[tuple[str, str]] = []
    for clause in _CLAUSE_END.split(statement):
        named = {fact.text for fact in _facts(clause)}
        mine = [f for f in facts if f.text in named]
        out += [a for a in (*_apart(mine, scopes, bound), *_misplaced(clause, mine, scopes)) if a not in out]
    return tuple(out)


# A value that ties records of two outputs together: an id, an address, a pod's name, a process id.
_LINK_TOKEN = re.compile(r"[A-Za-z0-9][\w.-]{3,}")


def _has_token(token: str, text: str) -> bool:
    start = text.find(token)
    while start >= 0:
        end = start + len(token)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        start = text.find(token, start + 1)
    return False


def _linked_outputs(scopes: Sequence[tuple[Record, _Texts]], bound: Sequence[str]) -> dict[str, str]:
    """Each bound output's group: outputs of one tool, and outputs whose records hold one value the claim bound
    (a pod's IP in the pod listing and in a caller's log line), are one group."""
    group = {record.output: record.output for record, _ in scopes}

    def root(output: str) -> str:
        while group[output] != output:
            output = group[output]
        return output

    def join(a: str, b: str) -> None:
        group[root(a)] = root(b)

    by_tool: dict[str, str] = {}
    for record, _ in scopes:
        first = by_tool.setdefault(record.name.split(" ", 1)[0], record.output)
        join(record.output, first)
    tokens = {normalize(t) for v in bound for t in _LINK_TOKEN.findall(v) if any(c.isdigit() or c == "-" for c in t)}
    for token in tokens:
        holding = [record.output for record, texts in scopes if any(_has_token(token, t) for t in texts.normalized)]
        for output in holding[1:]:
            join(output, holding[0])
    return {output: root(output) for output in group}


def _apart(
    facts: Sequence[_Fact], scopes: Sequence[tuple[Record, _Texts]], bound: Sequence[str] = ()
) -> tuple[tuple[str, str], ...]:
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
    linked = _linked_outputs(scopes, bound)
    outputs = {fact: {linked[record.output] for record in records} for fact, records in holders.items() if records}
    if len(outputs) < 2:
        return ()
    names = [fact.text for fact in facts if fact.kind in ("identifier", "compound") and fact.text in outputs]
    if len(names) < 2:
        return ()
    # The names joined by the outputs they share (a pod named in the pod listing and in the events joins both);
    # names no output joins to the largest group are apart ("the payments-api v2.4.1 deploy OOMKilled ledger-svc":
    # the deploy record and the pod's record share no name).
    groups: list[set[str]] = []
    for name in names:
        joined = [g for g in groups if any(outputs[name] & outputs[other] for other in g)]
        merged = {name}.union(*joined)
        groups = [g for g in groups if g not in joined] + [merged]
    if len(groups) < 2:
        return ()
    largest = max(groups, key=len)
    return tuple((fact, ", ".join(record.name for record in holders[fact])) for fact in names if fact not in largest)


# The facts an observation places in a record: names, codes, quotes and times (a number keeps them company).
_PLACED_KINDS = frozenset({"identifier", "compound", "quoted", "timestamp", "clock"})


def _misplaced(
    statement: str, facts: Sequence[_Fact], scopes: Sequence[tuple[Record, _Texts]]
) -> tuple[tuple[str, str], ...]:
    """The facts an observation says of one object that only another object's record holds: of the records of one
    list it bound (pods, events, log streams), it names one by its name, and states a fact (a state, a reason, a
    message, a time) that only records it does not name hold ("pod qsdzr is in CrashLoopBackOff", where the record
    holding CrashLoopBackOff is pod ggnwj's)."""
    said = normalize(_prepared(statement))
    lists: dict[tuple[str, str], list[int]] = {}
    for i, (record, _) in enumerate(scopes):
        if record.pointer and record.identity:
            lists.setdefault((record.output, record.pointer.rpartition("/")[0]), []).append(i)
    out: list[tuple[str, str]] = []
    for members in lists.values():
        if len(members) < 2:
            continue
        named = {i for i in members if any(_names(said, name) for name in scopes[i][0].identity)}
        if not named:
            continue
        for fact in facts:
            if fact.kind not in _PLACED_KINDS or fact.text in dict(out):
                continue
            held = {
                i for i in members if _found(fact, scopes[i][1].normalized, scopes[i][1].spaceless, scopes[i][1].raw)
            }
            if held and not held & named:
                out.append((fact.text, ", ".join(scopes[i][0].name for i in sorted(held))))
    return tuple(out)


def _names(said: str, name: str) -> bool:
    """The statement (normalized) names ``name`` (a pod, a workload) as written, not as a part of a longer name
    (``cart-svc-pbnrd5kngw-ggnwj`` names ``cart-svc``; ``cart-svc-ab12`` is not named by ``cart-svc-ab1``)."""
    key = normalize(name)
    if len(key) < 3:
        return False
    start = said.find(key)
    while start >= 0:
        end = start + len(key)
        if end == len(said) or not said[end].isalnum():
            return True
        start = said.find(key, start + 1)
    return False


def _misqualified(statement: str, paths: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Values bound from one of several sibling fields of a kind (``startupProbe`` and ``livenessProbe``,
    ``containers`` and ``initContainers``) that the statement names one of and not this one: "the startup probe's
    failure threshold is 3", with the 3 bound from ``livenessProbe``."""
    said = {stem(w.lower()) for w in _CONTEXT_WORD.findall(name_parts(_prepared(statement)))}
    kinds: dict[str, dict[str, tuple[str, ...]]] = {}
    for path in paths:
        for key in path.split("/")[1:-1]:  # the objects a value stands in, never the value's own field
            words = [w.lower() for w in _CAMEL_WORDS.findall(key)]
            if len(words) >= 2:
                kinds.setdefault(_singular(words[-1]) or words[-1], {})[key] = tuple(words[:-1])
    out: list[tuple[str, str]] = []
    for keys in kinds.values():
        if len(keys) < 2:
            continue
        named = {key for key, qualifier in keys.items() if all(stem(w) in said for w in qualifier)}
        if named:
            out += [(key, "a field the statement does not name") for key in keys if key not in named]
    return tuple(out)


_CAMEL_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


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

    __slots__ = ("_by_claim", "_claim_ids", "_fields", "_normalized", "_raw")

    def __init__(self, evidence: Sequence[contracts_pb2.VerifiedEvidence]) -> None:
        self._claim_ids = [e.claim_id for e in evidence]
        self._raw = [e.matched_text for e in evidence]
        # Each item as its field says it ("ready: true"): the state another claim's evidence shows.
        self._fields = [f"{e.raw_path.rsplit('/', 1)[-1]}: {e.matched_text}" for e in evidence]
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
        counts: Collection[int] = (),
        names: Sequence[str] = (),
        run_names: Collection[str] = (),
        run_records: Sequence[Record] = (),
        paths: Sequence[str] = (),
        lists: Sequence[str] = (),
    ) -> Derivation:
        """``derive_claim`` of one claim of the run (``outputs``: the recorded outputs it bound, and the others;
        ``whole``: the whole strings its evidence is excerpts of, read as its own evidence; ``lists``: the lists
        its bound items stand in, which hold its counts and words but never its stances: another log line's
        "went through" is not this one's)."""
        claim_id = claim.claim_id
        own = self._texts(self._by_claim.get(claim_id, ()))
        if whole:
            own = _Texts([*own.raw, *whole], [*own.normalized, *(normalize(t) for t in whole)])
        named = _Texts.of(names) if names else None
        others = self._texts(i for i, other in enumerate(self._claim_ids) if other != claim_id)
        states = [self._fields[i] for i, other in enumerate(self._claim_ids) if other != claim_id]
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
            counts=counts,
            named=named,
            run_names=run_names,
            states=states,
            run_scopes=[(record, _Texts.of([record.text])) for record in run_records],
            paths=paths,
            lists=lists,
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
