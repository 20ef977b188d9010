"""A claim's polarity is a fact its evidence must hold: negations, antonyms (healthy/unhealthy, succeeded/failed)
and zero counts are never granted by the neutral vocabulary.

Texts are read as words of the one comparison form (``normalize``). A polar word takes a stance on a concept
(``healthy`` +, ``unhealthy`` -); a negation in the three words before it (``not healthy``) or a false or unknown
value in the two after it (``ready: false``, ``healthy=0``, ``Ready: Unknown``) turns the stance around.
``polarity`` of a statement against its evidence gives:

- ``conflicts``: the evidence takes the other stance on a concept the statement names (the statement says
  ``succeeded``, the evidence ``failed``): a contradiction;
  So is a negation of what a bound value states ("was never OOMKilled" where the bound reason is
  ``OOMKilled``), and a zero count of what a bound field counts ("no restarts" where ``restartCount: 4``,
  "without errors" where ``errors: 250``);
- ``missing``: a bare negation of a number or code ("does not return status=502") where the evidence writes no
  negative state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from diagnosis_server.text.normalize import normalize

# Words that negate what follows them; "n't" contractions are negations too.
NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nothing", "nobody", "nowhere", "zero", "without", "cannot", "neither", "nor"}
)
# Words of an evidence value that say "no" ("ready": false, restartCount 0, "absent").
_FALSE_VALUES = frozenset({"false", "0", "no", "none", "null", "nil", "off", "zero", "empty"})
# A value after a polar word that turns it around too: a condition not known to hold ("Ready: Unknown", which
# kubectl shows as NotReady) is not held.
_TURNING_VALUES = _FALSE_VALUES | {"unknown"}
# The good states a statement says only where its evidence says them (a deploy that succeeded, a pod that is ready,
# healthy or available, a request accepted): what an untrue claim turns around. ("normal", "stable", "mounted" and
# their kin describe more than they assert.)
_STATES = frozenset(
    {"succeeded", "healthy", "ready", "available", "reachable", "accepted", "valid", "enabled", "allowed", "fine",
     "stable", "ceased"}
)  # fmt: skip
# "is up" is the everyday "is fine" of a service or pod ("scaled up", "up to 5" are not states).
_IS_UP = re.compile(r"\b(is|are|was|were|stays|stayed|remains|remained|came|comes|been) up\b(?! (?:to|since|for)\b)")
# A value written right after its field, without a colon ("ready false"): only the words of a false value.
_FALSE_WORDS = frozenset({"false", "unknown"})
# Words an output writes for a negative state, besides the negations.
_NEGATIVE_MARKERS = frozenset(
    {
        *NEGATIONS, *_FALSE_VALUES, "unable", "missing", "absent", "lacks", "lacking", "denied", "refused",
        "notready", "unready", "unknown", "invalid", "unavailable", "unhealthy", "unreachable", "fail", "fails",
        "failed", "failing", "failure", "error", "errors", "exceeded", "unschedulable", "forbidden", "rejected",
    }
)  # fmt: skip
# (positive, negative) forms of one concept; any form of either side by its stem.
_PAIRS = (
    (("healthy",), ("unhealthy",)),
    (
        ("succeeded", "succeed", "success", "successful", "successfully", "passed", "passing"),
        ("failed", "fail", "failure", "unsuccessful", "failing"),
    ),
    # All is well, in everyday words: said only where the evidence shows a good state and no bad one.
    (("fine", "ok", "okay", "green", "nominal", "smoothly", "cleanly", "normally", "flawlessly"), ("degraded",)),
    (("available",), ("unavailable",)),
    (("reachable",), ("unreachable",)),
    (("ready",), ("notready", "unready")),
    (("true",), ("false",)),
    (("enabled",), ("disabled",)),
    (("valid",), ("invalid",)),
    (("resolved",), ("unresolved",)),
    (("scheduled", "schedulable"), ("unschedulable", "unscheduled")),
    (("bound",), ("unbound",)),
    (("mounted",), ("unmounted",)),
    (("allowed", "permitted"), ("denied", "forbidden")),
    (("accepted",), ("rejected", "refused")),
    (("stable",), ("unstable", "flapping")),
    (("intact",), ("exhausted", "depleted", "drained")),
    (("normal",), ("abnormal",)),
    # A failure said to be over ("the BackOff events ceased"): said only where the evidence says it is.
    (("ceased", "subsided", "abated"), ("ongoing", "persisting", "recurring")),
)
# Words that take a stance only against evidence of the other one, and need none of their own: a deploy that
# "landed", "rolled out" or "is live" where the record says it failed; a budget that "remains" or has "plenty left"
# where the log says it is exhausted. ("pods landed on node-7", "the pod remains Pending" assert no success.)
_WEAK = {
    **dict.fromkeys(("landed", "live", "rolledout", "completed"), ("succeeded", True)),
    **dict.fromkeys(("remains", "remaining", "left", "plenty", "spare"), ("intact", True)),
}
_ROLLED_OUT = re.compile(r"\brolled out\b")

# Pairs of what a change did to a thing (kept or removed): checked like the stances above, but ordinary words of an
# answer, never taken out of the neutral lexicon ("the rollout removed the old pods" needs no "removed" bound).
_ACTION_PAIRS = (
    (("kept", "keep", "keeps", "keeping", "preserved", "retained"),
     ("removed", "remove", "removes", "removing", "deleted", "delete", "deletes", "deleting")),
)  # fmt: skip
_TOKEN = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*(?:'t)?|[,;.()!?\[\]:=]|(?<=\s)[-–—](?=\s)")
_QUOTED = re.compile(r"\"[^\"]*\"|`[^`]*`")


@cache
def _concepts() -> dict[str, tuple[str, bool]]:
    """Each polar word: (its concept, whether it is the positive side)."""
    out: dict[str, tuple[str, bool]] = {}
    for positive, negative in (*_PAIRS, *_ACTION_PAIRS):
        concept = positive[0]
        for word in positive:
            out.setdefault(word, (concept, True))
        for word in negative:
            out.setdefault(word, (concept, False))
    return out


# Ways of saying "none of": "restart-free", "free of 502s", "restart count is nil".
_FREE_OF = re.compile(r"\b([a-z0-9]+)-free\b|\bfree of\b")
_IS_NIL = re.compile(r"\b([a-z]+(?: [a-z]+)?) (?:is|was|are|were|=|:) (?:nil|null|none|zero|empty)\b")


# Other ways of saying "not": "failed to get", "no sign of", "stopped restarting", "avoided".
_NOT_SAID = (
    (re.compile(r"\b(?:failed|fails|fail|unable) to\b"), "not"),
    (re.compile(r"\bno (?:sign|trace|indication|evidence|record) of\b"), "no"),
    (re.compile(r"\b(?:stopped|ceased|quit)\b(?= [a-z]+ing\b)"), "no longer"),
    (re.compile(r"\b(?:avoided|escaped)\b"), "not"),
    (re.compile(r"\bwent through\b"), "succeeded"),
    # "keeps restarting", "kept retrying": going on, not keeping a thing.
    (re.compile(r"\b(?:keeps|keep|kept|keeping)\b(?= (?:on )?[a-z]+ing\b)"), "went"),
    (re.compile(r"\b(?:nothing|none of it) (?:went|goes|has gone|had gone|is|was) wrong\b"), "fine"),
)


def said_as_not(text: str) -> str:
    """``text`` with its other ways of saying "not" written as negations: read so in a statement and in its
    evidence alike ("failed to become ready" of a quoted message is the message's own stance)."""
    for pattern, negation in _NOT_SAID:
        text = pattern.sub(negation, text)
    return text


def as_negations(text: str) -> str:
    """``text`` (folded) with its other ways of saying "none" written as negations ("restart-free": "no restart",
    "free of": "no", "restart count is nil": "no restart count", "failed to get": "not get")."""
    text = _ROLLED_OUT.sub("rolledout", said_as_not(text))
    text = _FREE_OF.sub(lambda m: f"no {m.group(1)}" if m.group(1) else "no", text)
    text = _IS_UP.sub(lambda m: f"{m.group(1)} fine", text)
    return _IS_NIL.sub(lambda m: f"no {m.group(1)}", text)


# A URL's words are its path and query ("/health?passing=1"): names, not what the text says.
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,15}://[^\s\"'`<>]*")
_ZERO_OF = re.compile(r"(?<![\w.])0\s*(?:/|of)\s*\d+(?![\w.])")


def negates(word: str) -> bool:
    """A word of a statement that negates ("not", "never", "zero", any "n't" contraction)."""
    return word in NEGATIONS or word.endswith("n't")


@dataclass(frozen=True, slots=True)
class Stances:
    """What a text says of each concept, and whether it holds a negation not attached to a polar word."""

    stances: frozenset[tuple[str, bool]]
    bare_negations: tuple[str, ...]
    negative: bool  # the text writes some negative state (a negation, a false value, a failure word)
    # Stances of the weak words (``_WEAK``): checked against the evidence's other stance only.
    weak: frozenset[tuple[str, bool]] = frozenset()


_PUNCTUATION = frozenset(",;.()!?[]-–—")
# A key joined to its value ("ready: false", "healthy=0"): only a value so joined turns a polar word around.
_JOINS = frozenset(":=")
# What joins a polar word to a value that turns it around ("ready: false", "ready is false").
_VALUE_JOINS = _JOINS | {"is", "was", "are", "were"}
# Words that end a negation's reach: a new clause, a reason or a relative clause begins ("has no errors and is
# healthy", "not found, so it failed").
_SCOPE_ENDS = frozenset(
    {"and", "but", "so", "then", "while", "which", "that", "who", "because", "since", "although", "though", "after"}
)
# How far back a negation reaches a polar word ("neither keycloak container is started or ready").
_NEGATION_REACH = 8


def _window(words: list[str], start: int, stop: int, step: int) -> list[int]:
    """Word indexes from ``start`` towards ``stop`` (exclusive), ending at the first punctuation mark."""
    out = []
    for index in range(start, stop, step):
        if words[index] in _PUNCTUATION:
            break
        out.append(index)
    return out


def _negated_by(words: list[str], index: int, concepts: dict[str, tuple[str, bool]]) -> int | None:
    """The negation that reaches the polar word at ``index``: within ``_NEGATION_REACH`` words before it, in its
    clause, with no other polar word (but one joined by "or"/"nor": "not started or ready") and no word that begins
    another clause between them; a parenthesis is read past."""
    i, reach = index - 1, _NEGATION_REACH
    while i >= 0 and reach > 0:
        word = words[i]
        if word == ")":
            # A parenthesis is read past ("neither of the 2 pods (v1.7.0) is ready").
            depth = 0
            while i >= 0:
                depth += words[i] == ")"
                depth -= words[i] == "("
                if depth == 0:
                    break
                i -= 1
            i -= 1
            continue
        reach -= 1
        if word in _PUNCTUATION or word in _SCOPE_ENDS or word in _JOINS:
            return None
        if negates(word):
            return i
        if word in concepts and words[i + 1] not in ("or", "nor"):
            return None
        i -= 1
    return None


# What a conclusion blames ("X is not the problem"): a denial of it denies no number.
_BLAME_NOUNS = (["problem"], ["cause"], ["culprit"], ["issue"], ["reason"], ["bottleneck"])


def _denies_number(words: list[str], index: int) -> bool:
    """Whether a number or code follows the negation in its clause: a word with a digit within four words
    ("not restarted on worker-2"), a number within six ("nothing at edge-gateway got status=502")."""
    if words[index + 1 : index + 2] in (["the"], ["a"], ["an"]) and words[index + 2 : index + 3] in _BLAME_NOUNS:
        return False  # "isn't the problem: redis-0 is Ready": what is denied is the blame, not what follows
    near = _window(words, index + 1, min(len(words), index + 5), 1)
    far = _window(words, index + 1, min(len(words), index + 7), 1)
    return any(any(ch.isdigit() for ch in words[j]) for j in near) or any(words[j][:1].isdigit() for j in far)


def stances(text: str, *, quotes: bool = True, weak: bool = False) -> Stances:
    """A text's stances; a statement's quoted parts are left out (``quotes=False``: evidence, whose keys are
    quoted JSON)."""
    # A zero count of a total ("0/4 nodes are available", "0 of 3 ready") denies what it counts.
    folded = _ZERO_OF.sub(" none ", _URL.sub(" ", normalize(text)))
    concepts = _concepts()
    words = []
    for token in _TOKEN.findall((folded if quotes else _QUOTED.sub(" ", folded)).replace("’", "'")):
        parts = token.split("-") if "-" in token else [token]
        # A hyphenated stance ("not-ready", "non-healthy") is read as its words; a name ("coupon-gateway") whole.
        # (a compound of a polar word: "not-ready", "non-healthy"; "aaa-no" and "no-op" are names and words)
        stance = any(p in concepts for p in parts)
        words += ["not" if p == "non" else p for p in parts] if stance and len(parts) > 1 else [token]
    found: set[tuple[str, bool]] = set()
    weak_found: set[tuple[str, bool]] = set()
    used: set[int] = set()
    for index, word in enumerate(words):
        known = concepts.get(word)
        if known is None:
            if weak and word in _WEAK:
                concept, positive = _WEAK[word]
                weak_found.add((concept, positive if _negated_by(words, index, concepts) is None else not positive))
            continue
        concept, positive = known
        negation = _negated_by(words, index, concepts)
        # ("Ready condition is False", "ready status: false": a condition's value after its name's noun)
        at = index + 1 if words[index + 1 : index + 2] in (["condition"], ["status"]) else index
        turned = (  # "ready: false", "healthy=0", "Ready: Unknown", "ready false"
            at + 2 < len(words) and words[at + 1] in _VALUE_JOINS and words[at + 2] in _TURNING_VALUES
        ) or (index + 1 < len(words) and words[index + 1] in _FALSE_WORDS)
        if negation is not None or turned:
            positive = not positive
            used.add(negation if negation is not None else at + 2)
        found.add((concept, positive))
    # A negation not attached to a polar word counts when it denies a number or code ("does not return
    # status=502", "never exceeded 80%"): the evidence must write some negative state.
    bare = tuple(w for i, w in enumerate(words) if negates(w) and i not in used and _denies_number(words, i))
    negative = any(w in _NEGATIVE_MARKERS or w.endswith("n't") for w in words)
    return Stances(frozenset(found), tuple(dict.fromkeys(bare)), negative, frozenset(weak_found))


@dataclass(frozen=True, slots=True)
class Polarity:
    conflicts: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def _said(concept: str, positive: bool) -> str:
    pairs = {p[0]: (p[0], n[0]) for p, n in (*_PAIRS, *_ACTION_PAIRS)}
    return pairs[concept][0 if positive else 1]


# Words a record writes for a bad state besides the negative markers: severities, event types, failure reasons.
_BAD_STATE = frozenset(
    {"fatal", "panic", "critical", "warning", "warn", "crash", "crashed", "killed", "oomkilled", "backoff", "evicted",
     "exited", "terminated", "timeout", "timed", "refused", "exception", "errors", "exceeded", "sorry", "cannot",
     "unable", "lost", "expired", "full", "pending", "notfound", "forbidden", "unauthorized", "insufficient"}
)  # fmt: skip
_BAD_WORD = re.compile(r"[a-z]+")


# A bad state inside a word or a code ("ECONNREFUSED", "MongoError", "ErrImagePull", "CrashLoopBackOff").
_BAD_PART = re.compile(r"refused|error|fail|timeout|timedout|exception|denied|invalid|panic|fatal|killed|backoff|crash")
_ERRNO = re.compile(r"\bE[A-Z]{3,}\b")


def writes_bad_state(texts: Iterable[str]) -> bool:
    """Whether records write some bad state: a negative marker or a severity, an event type or a reason of one,
    names split into their words (``BackoffLimitExceeded``: "exceeded"), an errno (``ECONNREFUSED``)."""
    from diagnosis_server.text.language import name_parts

    for text in texts:
        folded = normalize(name_parts(text))
        if set(_BAD_WORD.findall(folded)) & (_NEGATIVE_MARKERS | _BAD_STATE):
            return True
        if _ERRNO.search(text) or _BAD_PART.search(folded):
            return True
    return False


def _bare_good(text: str) -> bool:
    """A value that is one word of a good state alone ("Ready", "Available"): the name of a condition, whose status
    (a value of its own) says whether it holds; it takes no stance by itself."""
    word = normalize(text).strip()
    if word.startswith("type:"):
        return True  # a condition's or event's type names what its status or reason says of it
    known = _concepts().get(word)
    return known is not None and known[1]


def _split_names(text: str) -> str:
    """A field's name read as its words ("readyReplicas: 3" is "ready replicas: 3", "NotReady" is "not ready")."""
    from diagnosis_server.text.language import name_parts

    text = _URL.sub(" ", text)
    return name_parts(text) if any(c.isupper() for c in text) else text


# A CamelCase value of an API's enums ("OrderedReady", "MinimumReplicasAvailable"): one word, no stance, unless it
# opens with a negation ("NotReady", "Unschedulable" is one word already).
_ENUM_VALUE = re.compile(r"\b(?!Not[A-Z])[A-Z][a-z]+(?:[A-Z][a-z]+)+\b")


def _enum_values(record: str) -> str:
    return _ENUM_VALUE.sub(lambda m: m.group(0).lower(), record)


def _no_restarts(evidence: Iterable[str]) -> bool:
    """A bound restart count of zero (``restartCount: 0``)."""
    for text in evidence:
        match = _FIELD.match(text.strip())
        if match is not None and "restart" in match.group(1).lower() and match.group(2).strip() == "0":
            return True
    return False


def _all_good(stances: frozenset[tuple[str, bool]]) -> bool:
    """The evidence says some good state and no bad one."""
    return any(positive and concept in _STATES for concept, positive in stances) and not any(
        not positive and concept in _STATES for concept, positive in stances
    )


def polarity(
    statement: str, evidence: Iterable[str], records: Iterable[str] = (), grounds: Iterable[str] = ()
) -> Polarity:
    """The statement's stances and negations that its evidence contradicts or does not hold (``records``: the
    whole records its evidence stands in, where a bad state it describes may be written; ``grounds``: states other
    verified evidence shows, which may hold a stance a conclusion takes but never deny one)."""
    evidence = list(evidence)
    claimed = stances(as_negations(normalize(statement)), quotes=False, weak=True)
    if not claimed.stances and not claimed.bare_negations and not claimed.weak:
        return Polarity(conflicts=(*denied_values(statement, evidence), *_errors_denied(statement, evidence)))
    held = [stances(said_as_not(normalize(_split_names(text)))) for text in evidence if text and not _bare_good(text)]
    evidence_stances = frozenset().union(*(h.stances for h in held)) if held else frozenset()
    conflicts: list[str] = []
    missing: list[str] = []
    records = list(records)
    grounded = frozenset().union(
        *(stances(said_as_not(normalize(_split_names(_enum_values(g))))).stances for g in grounds)
    )
    in_records = (
        frozenset().union(*(stances(said_as_not(normalize(_split_names(_enum_values(r))))).stances for r in records))
        if records
        else frozenset()
    )
    for concept, positive in sorted(claimed.stances):
        if (concept, positive) in evidence_stances:
            continue
        said = _said(concept, positive)
        if (concept, not positive) in evidence_stances:
            conflicts.append(f"{said} (evidence: {_said(concept, not positive)})")
        elif (concept, positive) in in_records | grounded:
            continue  # the record the value stands in says it (an event's reason beside the message bound)
        elif concept == "healthy" and positive and ("ready", True) in evidence_stances | in_records | grounded:
            continue  # a pod running with its containers ready is healthy by Kubernetes' own account
        elif concept == "fine" and positive and _all_good(evidence_stances or (in_records | grounded)):
            continue  # "went fine" of a deploy that succeeded, "is up" of a pod that is ready
        elif concept == "stable" and positive and _no_restarts(evidence):
            continue  # a pod that has not restarted is stable
        elif (positive and concept in _STATES) or (concept, True) in in_records:
            # A stance the evidence takes neither way: a good state ("succeeded", "ready", "accepted") is said
            # only where the evidence says it; a bad one never where its record says the good one ("failed" of an
            # event that reads "successfully issued").
            missing.append(said)
    for concept, positive in sorted(claimed.weak - claimed.stances):
        if (concept, not positive) in claimed.stances:
            continue  # "the rollout completed, and its new pods fail": the failure is another thing's
        if (concept, not positive) in evidence_stances and (concept, positive) not in evidence_stances:
            conflicts.append(f"{_said(concept, positive)} (evidence: {_said(concept, not positive)})")
    if claimed.bare_negations and not any(h.negative for h in held):
        missing.extend(claimed.bare_negations)
    conflicts.extend(denied_values(statement, evidence))
    conflicts.extend(_errors_denied(statement, evidence))
    return Polarity(tuple(conflicts), tuple(missing))


# A statement that there were no errors ("reached it without errors", "error-free", "no failures").
_NO_ERRORS = re.compile(
    r"\b(?:without|no|zero|free of) (?:any |a single )?(?:errors?|failures?|5xx)\b|\b(?:error|failure)[- ]free\b"
)
# An error its bound text writes: an HTTP 5xx status, or an error word that is no zero count ("errors: 0").
_ERROR_WRITTEN = re.compile(
    r"\b(?:status|code)[=: ]+5\d\d\b|\b(?:errors?|exception|fatal|panic|failed|refused|timed out)\b(?!\s*[:=]\s*0\b)",
    re.IGNORECASE,
)


def _errors_denied(statement: str, evidence: Iterable[str]) -> list[str]:
    """ "without errors" of a call whose bound text writes one ("status=502", "connection refused")."""
    said = _QUOTED.sub(" ", normalize(statement))
    denial = _NO_ERRORS.search(said)
    if denial is None:
        return []
    for text in evidence:
        written = _ERROR_WRITTEN.search(text)
        if written is not None:
            return [f"{denial.group(0)} (evidence: {written.group(0)})"]
    return []


# A bound field as the guard reads it: its name and its value ("restartCount: 4", "reason: OOMKilled").
_FIELD = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*): (.{1,80})$")
_COUNT = re.compile(r"^-?\d+(?:\.\d+)?$")
# A name stays one word ("no search-ui pod" denies no "search").
_DENIAL_TOKEN = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*(?:'t)?|[^\sa-z0-9]")
_ARTICLES = frozenset({"a", "an", "the", "any", "been", "be"})
_DENIAL_SKIPS = frozenset({"longer", "yet", "ever", "once", "even"})
_SINCE = frozenset({"since", "after", "last", "past", "recently", "today"})
_CLAUSE_ENDS = frozenset({",", ";", ".", ")", "!", "?", "and", "but"})
_NAME_WORDS = re.compile(r"[a-z]+")


def _field_words(name: str) -> frozenset[str]:
    from diagnosis_server.text.language import name_parts, stem

    return frozenset(stem(w) for w in _NAME_WORDS.findall(name_parts(name).lower()))


# The last word of a field that counts things: ``restartCount``, ``errors_total``, ``failed``, ``replicas``. A number
# under another name (``containerPort``, ``exitCode``, ``memory``) measures or names; "no container" denies no port.
_COUNTING_WORDS = frozenset({"count", "total", "number", "num", "sum"})


def _counts(name: str) -> bool:
    from diagnosis_server.text.language import name_parts

    words = _NAME_WORDS.findall(name_parts(name).lower())
    if not words:
        return False
    last = words[-1]
    return last in _COUNTING_WORDS or (len(last) > 3 and last.endswith("s") and not last.endswith("ss"))


def denied_values(statement: str, evidence: Iterable[str]) -> tuple[str, ...]:
    """What the statement denies that a bound field states: a negated value ("never OOMKilled" where the field is
    ``reason: OOMKilled``) or a zero count ("no restarts", "without errors") of what a field counts above zero."""
    from diagnosis_server.text.language import stem

    fields = [m.groups() for text in evidence if (m := _FIELD.match(text.strip()))]
    if not fields:
        return ()
    words = _DENIAL_TOKEN.findall(as_negations(_QUOTED.sub(" ", normalize(statement)).replace("’", "'")))
    out: list[str] = []
    for index, word in enumerate(words):
        # A bound value written as a flag that is off: "OOMKilled=false", "OOMKilled: no" of ``reason: OOMKilled``
        # (the flag's value ends its clause: "wiki-postgres: no warnings" is no flag; a condition's type written
        # with its false status, "PodScheduled=False", is what a false status says).
        if (
            index + 2 < len(words)
            and words[index + 1] in _JOINS
            and words[index + 2] in _FALSE_VALUES
            and (index + 3 == len(words) or words[index + 3] in _CLAUSE_ENDS)
            and any(normalize(value) == word for _, value in fields)
            and not any(normalize(value) in _TURNING_VALUES for _, value in fields)
        ):
            out.append(f"{word}{words[index + 1]}{words[index + 2]} (evidence: {word})")
        if not negates(word):
            continue
        # What is denied: the word right after the negation (past an article, "been", "longer"), in the same clause.
        after = [w for w in words[index + 1 : index + 3] if w not in _ARTICLES and w not in _DENIAL_SKIPS]
        # (a denial bounded in time, "has not restarted since 10:02", is of a while the count does not cover)
        bounded = any(w in _SINCE for w in words[index + 1 : index + 8])
        for target in after[:1]:
            if len(target) < 3 or target in _concepts() or target in NEGATIONS or not target.isalnum():
                continue
            for name, value in fields:
                folded = normalize(value)
                if _COUNT.match(value.strip()):
                    counted = _counts(name) and stem(target) in _field_words(name) and not bounded
                    if counted and float(value) > 0:
                        out.append(f"{word} {target} (evidence: {name}={value.strip()})")
                elif folded == target and not any(w in _NEGATIVE_MARKERS for w in _TOKEN.findall(folded)):
                    out.append(f"{word} {target} (evidence: {name}={value.strip()})")
    return tuple(dict.fromkeys(out))


def polar_words() -> frozenset[str]:
    """Every word whose polarity is checked (never granted by a vocabulary)."""
    actions = {w for pair in _ACTION_PAIRS for side in pair for w in side}
    return frozenset(_concepts()) - actions | NEGATIONS
