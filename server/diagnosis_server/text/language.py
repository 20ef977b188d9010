"""What a statement's wording says about it: conclusions, instructions, and words its evidence must ground.

Every check reads the one comparison form of ``normalization.normalize``, so a variant spelling (fullwidth,
homoglyphs, zero-width characters, markdown emphasis, extra spaces) reads the same.

- ``causal_phrases``: causal or conclusive language (root cause, caused, because, due to, led to, resulted
  in, which is why, therefore, broke, and their kin; hedges such as "likely"; "no incident"). A statement
  holding one concludes: it is never a direct observation, at most a reasonable inference.
- ``instructions``: the clauses of a statement that instruct its reader (a clause that begins with a verb in its
  base form and states nothing in a finite verb: "roll back now", "page the database owner"; "please ..."). An
  instruction is never a fact.
- ``reads_as_instruction``: text in a tool output that addresses the diagnosis instead of describing the
  system ("ignore previous instructions", "you are now ...", "the root cause is ..."). Such text is never
  evidence for a claim.
- ``ungrounded_words``: the content words of a statement that neither its evidence, the question nor the
  neutral operational vocabulary (``vocabulary.txt``) holds: what a statement says beyond its evidence.
"""

from __future__ import annotations

import importlib.resources
import itertools
import re
from collections.abc import Iterable
from functools import cache, lru_cache

import regex
import snowballstemmer

from diagnosis_server.text.alternation import anchored_alternation
from diagnosis_server.text.instruction_languages import reads_as_foreign_instruction, without_accents
from diagnosis_server.text.names import name_forms
from diagnosis_server.text.normalize import capital_skeleton, invisible_as_space, normalize, strip_invisible
from diagnosis_server.text.quotes import QUOTED

_CAUSAL = re.compile(
    r"\b(?:"
    r"root[ -]?causes?|caus(?:e|es|ed|ing)|because|due to|owing to|thanks to"
    r"|le(?:d|ads?|ading) to|result(?:s|ed|ing)? in|as a (?:result|consequence)|in consequence"
    r"|which (?:is|was) why|that(?:'s| is| was) why|this is why|therefore|thus|hence|consequently|accordingly"
    r"|broke|breaks|breaking|broken|brought down|took down|takes down|taking down|knocked out"
    r"|trigger(?:s|ed|ing)?|responsible for|explain(?:s|ed|ing)?|driven by|stem(?:s|med|ming)? from"
    r"|(?:comes?|came|coming|boils?|boiled|boiling) down to|attributable to"
    r"|culprits?|to blame|blamed?|at fault|(?:is|are|was|were) (?:the )?(?:fault|problem|issue)"
    r"|prov(?:e|es|ed|en|ing)|which means|fault of"
    r"|(?<!terminated )(?<!waiting )(?<!status )(?<!last )(?:the )?(?:reason|origin|source) (?:for|why|behind|is|was)"
    r"|(?:this|which|that|it) (?:means|meant|shows|showed|indicates|proves|proved|confirms|implies)"
    r"|indicat(?:es|ing)|suggest(?:s|ing)|impl(?:ies|ying)|likely|unlikely|probably|presumably|apparently"
    r"|appears? to|seems? to|must have|so that|no incident|no (?:failure|fault|problem|issue|outage)s?"
    r")\b"
)
_COMMA_SO = re.compile(r",\s*so\b")
_QUOTED = QUOTED

_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|skip)\b.{0,40}?\b(?:previous|prior|above|earlier|all|any|your|the"
    r"|these|those|other)\b.{0,40}?\b(?:instructions?|prompts?|rules|guidelines|directions|directives|context"
    r"|messages?|evidence|checks?)\b"
    r"|\b(?:you are|you're|act as|pretend to be|pretend you are|role ?play as|from now on you)\b.{0,30}?"
    r"\b(?:ai|assistant|model|agent|llm|chatbot|bot|system|verifier|composer|executor|planner|gatekeeper)\b"
    r"|\b(?:system|assistant|developer) ?(?:prompt|message|instruction|override)s?\b"
    r"|<\|?(?:im_?start|im_?end|system|endoftext|user|assistant)\|?>|\[/?inst\]|(?<!#)#{2,} ?(?:instruction|system)"
    r"|\b(?:new|updated|additional|hidden|secret) instructions?\b"
    r"|\b(?:tell|inform|notify) the (?:user|operator|reader|customer)\b"
    r"|\b(?:you must|you should|you will|you have to|you need to|do not|don't|never) (?:mention|report|include"
    r"|say|tell|reveal|verify|check|flag|show|list|output)\b"
    r"|\b(?:classify|mark|treat|label|report) (?:this|it|the claims?|all claims?|every claim|them)\b.{0,30}?"
    r"\b(?:as|direct|confirmed|verified|pass|true)\b"
    r"|\b(?:verdict|classification|answer) (?:is|should be|must be|=|:) ?(?:pass|direct|confirmed)\b"
    r"|\bthe (?:real |actual |true )?root cause (?:is|was)\b|\b(?:real|actual|true) cause (?:is|was)\b"
    r"|\b(?:is|was) the (?:real |actual |true )?root cause\b"
    r"|\bnote (?:to|for) (?:the |any )?(?:diagnos\w*|assistant|ai|llm|chatbot|verifier|composer|planner|gatekeeper"
    r"|reviewer|investigator|responder)\b"
    r"|(?:^|[.;!?] )(?:assistant|chatgpt|gpt|claude|llm) ?:"
    r"|\b(?:respond|reply|answer) (?:only |exactly )?with\b"
)

_WORD = re.compile(r"[a-z]+")
_STEMMER = snowballstemmer.stemmer("english")


def causal_phrases(statement: str) -> tuple[str, ...]:
    """The causal or conclusive phrases of a statement, outside its quoted parts (quotes are evidence)."""
    text = _QUOTED.sub(" ", normalize(statement))
    found = [match.group(0) for match in _CAUSAL.finditer(text)]
    found += [match.group(0).strip() for match in _COMMA_SO.finditer(text)]
    return tuple(dict.fromkeys(found))


def concludes(statement: str) -> bool:
    return bool(causal_phrases(statement))


_NOTHING_FOUND = ("no incident", "no failure", "no fault", "no problem", "no issue", "no outage")


def finds_nothing(statement: str) -> bool:
    """A conclusion that nothing is wrong ("no incident found"), not a cause."""
    phrases = causal_phrases(statement)
    return bool(phrases) and all(p.startswith(_NOTHING_FOUND) for p in phrases)


# (Normalization drops "_" as emphasis: "<|im_start|>" is compared as "<|imstart|>".)
# Every alternative of _INSTRUCTION begins with, or must contain, one of these literals: a text holding none of
# them cannot match, and most tool output values hold none (the Gatekeeper asks about every bound value).
INSTRUCTION_LITERALS = (
    "ignore", "disregard", "forget", "override", "bypass", "skip", "you", "act as", "pretend", "role",
    "from now on", "system", "assistant", "developer", "<", "[", "##", "instruction", "tell", "inform", "notify",
    "do not", "don't", "never", "classify", "mark", "treat", "label", "report", "verdict", "classification",
    "answer", "cause", "respond", "reply", "note", "gpt", "claude", "llm",
)  # fmt: skip


_ANY_INSTRUCTION_LITERAL = anchored_alternation(INSTRUCTION_LITERALS)


def holds_instruction_literal(folded: str) -> bool:
    """``any(literal in folded for literal in INSTRUCTION_LITERALS)``, exactly: the prefilter of
    ``reads_as_instruction``, in one search (faster than a search per literal, at any length measured)."""
    return _ANY_INSTRUCTION_LITERAL.search(folded) is not None


# Digits and signs written for the letters they look like, in a word that also holds letters ("1gn0re").
_LEET = str.maketrans("0134578@$", "oieastbas")
_LEET_WORD = re.compile(r"\b(?=[a-z]*[0-9@$])(?=[0-9@$]*[a-z])[a-z0-9@$]+\b")


def leet_spelt(folded: str) -> str:
    """``folded`` with each word that mixes letters and digits read as letters ("1gn0re" is "ignore")."""
    if not _LEET_WORD.search(folded):
        return folded
    return _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), folded)


# A word spelt one letter at a time, the letters set apart by one space or one dot ("i g n o r e", "i.g.n.o.r.e"):
# three letters or more, each a single letter (words are set apart by more spaces, or a space between dotted runs).
_SPELT_LETTERS = re.compile(r"(?<![^\W\d_])[^\W\d_](?:(?: [^\W\d_](?![^\W\d_])){2,}|(?:\.[^\W\d_](?![^\W\d_])){2,})")


def letters_spelt(text: str) -> str:
    """``text`` with each word spelt one letter at a time read as the word ("i g n o r e   a l l" is "ignore all")."""
    return _SPELT_LETTERS.sub(lambda m: m.group(0).replace(" ", "").replace(".", ""), text)


def instruction_readings(text: str) -> list[str]:
    """The comparison forms ``reads_as_instruction`` reads ``text`` in: as normalized; with digits for letters
    ("1gn0re"); without accents ("ïgnörë"); with words spelt letter by letter joined ("i g n o r e"); with
    homoglyphs read before case-folding ("ΙGΝΟRΕ", Lisu "ꓲ"); with an invisible character between words read as
    a space ("ignore\u200dall"). Each further reading only when it differs from the first."""
    folded = normalize(text)
    readings = [folded]
    if (spelt := leet_spelt(folded)) != folded:
        readings.append(spelt)
    if not folded.isascii():
        readings.append(without_accents(folded))
    if not text.isascii():
        readings.append(normalize(capital_skeleton(text)))
        if strip_invisible(text) != text:
            readings.append(normalize(invisible_as_space(text)))
    if _SPELT_LETTERS.search(text):
        readings.append(normalize(letters_spelt(text)))
    return list(dict.fromkeys(readings))


def reads_as_instruction(text: str) -> bool:
    """Whether text (a tool output's value) addresses the diagnosis instead of describing the system: in
    English (in any of its ``instruction_readings``) or in another language. R-GK-5."""
    if any(holds_instruction_literal(f) and _INSTRUCTION.search(f) is not None for f in instruction_readings(text)):
        return True
    return reads_as_foreign_instruction(text)


def instruction_pattern() -> re.Pattern[str]:
    """The whole pattern (for the test that its literals cover every alternative)."""
    return _INSTRUCTION


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The English Snowball stem: ``restarts``, ``restarted``, ``restarting`` -> ``restart``; ``refusals`` and
    ``refused`` -> ``refus``. Cached: the words of statements and evidence repeat."""
    return str(_STEMMER.stemWord(word))


@cache
def vocabulary_words() -> tuple[str, ...]:
    """The neutral operational vocabulary (``vocabulary.txt``), as written."""
    text = importlib.resources.files("diagnosis_server.text").joinpath("vocabulary.txt").read_text("utf-8")
    return tuple(w.lower() for line in text.splitlines() if not line.startswith("#") for w in line.split())


@cache
def vocabulary() -> frozenset[str]:
    """Stems of the neutral operational vocabulary: words a statement may use without evidence holding them."""
    return frozenset(stem(w) for w in vocabulary_words())


def _stems(texts: Iterable[str]) -> frozenset[str]:
    return _stems_of(tuple(texts))


@lru_cache(maxsize=64)
def _stems_of(texts: tuple[str, ...]) -> frozenset[str]:
    """Cached by the whole tuple: a guard asks about many words against the same grounding texts. A name's
    parts are words too (``init_container_image`` grounds "init", ``nodeSelector`` grounds "selector")."""
    return frozenset(stem(word) for text in texts for word in _WORD.findall(normalize(name_parts(text))))


@lru_cache(maxsize=64)
def _compacts_of(texts: tuple[str, ...]) -> str:
    return "\x00".join(normalize(t).replace(" ", "") for t in texts)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NAME_SEPARATORS = re.compile(r"[_./:-]+")


def name_parts(text: str) -> str:
    """``text`` with its names also split into their words: ``init_container_image`` and ``nodeSelector`` are
    followed by ``init container image`` and ``node Selector`` (the whole name stays as written)."""
    if not any(c in text for c in "_./:-") and not _CAMEL.search(text):
        return text
    return f"{text} {split_names(text)}"


def split_names(text: str) -> str:
    """``text`` with its names split into their words in place (``restartCount: 4`` is ``restart Count  4``)."""
    return _CAMEL.sub(" ", _NAME_SEPARATORS.sub(" ", text))


# Words of certainty, scope or intensity: a statement says them only when its evidence does (R-V-2). (The scope
# words "all" and "every" are read apart, ``scope_words``: a list the claim bound whole may show them.)
INTENSITY_WORDS = frozenset(
    {
        "always", "completely", "entirely", "totally", "definitely", "certainly", "clearly",
        "obviously", "undoubtedly", "absolutely", "fully", "everything", "everywhere", "everyone", "permanently",
        "constantly", "continuously", "guaranteed", "proven", "surely", "solely", "exclusively",
    }
)  # fmt: skip
# The commonest English words: function words and the commonest verbs, adjectives and nouns, of which English
# compounds are made ("crash-loop", "read-only"); a name is not ("ledger-writer").
_CORE_SIZE = 3_000
# An ordinary English word is one written at least once in a million words (``wordfreq``'s Zipf scale, 3.0): words
# people write ("earliest", "unrelated", "rescheduled"), not the rare names of things ("memcached", "errno").
_ORDINARY_ZIPF = 3.0


# Stems an intensity adverb shares with ordinary words of operations ("completely": a Job "completed", a rollout
# "failed to complete"; "continuously": a pod "continues" to restart): the words are ordinary, the adverbs are not
# (``INTENSITY_WORDS`` is still checked word by word).
_ORDINARY_STEMS = frozenset({"complet", "continu"})


@cache
def core_lexicon() -> frozenset[str]:
    """Stems of the neutral operational vocabulary and the commonest English words; never a polar or intensity
    word."""
    from wordfreq import top_n_list  # imported here: its word lists load in about half a second

    from diagnosis_server.text.polarity import polar_words

    excluded = {stem(w) for w in (*polar_words(), *INTENSITY_WORDS)} - _ORDINARY_STEMS
    english = (w for w in top_n_list("en", _CORE_SIZE) if w.isascii() and w.isalpha())
    return frozenset(stem(w) for w in (*vocabulary_words(), *english)) - excluded


@cache
def lexicon() -> frozenset[str]:
    """Stems of the neutral lexicon: the neutral operational vocabulary and every ordinary English word
    (``wordfreq``'s English list down to ``_ORDINARY_ZIPF``); never a word of another script. Its polar, scope and
    intensity words are still judged as such (``ungrounded_words``, ``text.polarity``)."""
    from lemminflect import getAllLemmas
    from wordfreq import iter_wordlist, zipf_frequency

    core = core_lexicon()
    english: list[str] = []
    for word in iter_wordlist("en"):
        if zipf_frequency(word, "en") < _ORDINARY_ZIPF:
            break
        if not (word.isascii() and word.isalpha()) or stem(word) in core:
            continue
        # Beyond the commonest words, a word that can only be a noun names a thing ("coupon", "payments"): the
        # evidence must hold it. One a verb, an adjective or an adverb can be ("rescheduled", "unrelated",
        # "afterwards", "citing") is how people write.
        if set(getAllLemmas(word)) - {"NOUN", "PROPN"}:
            english.append(word)
    from diagnosis_server.text.polarity import polar_words

    excluded = {stem(w) for w in (*polar_words(), *INTENSITY_WORDS)} - _ORDINARY_STEMS
    return core | (frozenset(stem(w) for w in (*vocabulary_words(), *english)) - excluded)


@cache
def _polar_stems() -> frozenset[str]:
    from diagnosis_server.text.polarity import polar_words

    return frozenset(stem(w) for w in polar_words())


_LETTER_NAME = re.compile(
    r"(?:REGIONAL INDICATOR SYMBOL LETTER|(?:NEGATIVE )?(?:SQUARED|CIRCLED) LATIN (?:CAPITAL |SMALL )?LETTER"
    r"|PARENTHESIZED LATIN (?:CAPITAL |SMALL )?LETTER|LATIN LETTER SMALL CAPITAL|MODIFIER LETTER (?:CAPITAL |SMALL )"
    r"|(?:MATHEMATICAL|FULLWIDTH|TAG) [A-Z -]*?(?:LATIN )?(?:CAPITAL |SMALL )?(?:LETTER )?) ([A-Z])$"
)


@cache
def _letter_like_table() -> dict[int, str]:
    """Symbols that spell a Latin letter (regional indicators, squared, circled and negative squared letters,
    small capitals, modifier and tag letters) as that small letter."""
    import unicodedata

    table: dict[int, str] = {}
    for start, end in ((0x0250, 0x0300), (0x1D00, 0x1DC0), (0x2100, 0x2200), (0x2460, 0x2500), (0xA720, 0xA800),
                       (0x1F100, 0x1F200), (0xE0000, 0xE0080)):  # fmt: skip
        for code in range(start, end):
            match = _LETTER_NAME.match(unicodedata.name(chr(code), ""))
            if match:
                table[code] = match.group(1).lower()
    # Braille cells spell letters too (grade 1: "⠗⠕⠇⠇" is "roll"); a cell of no letter is still no separator.
    for code in range(0x2800, 0x2900):
        table[code] = _BRAILLE_LETTERS.get(code, "x")
    return table


_BRAILLE_LETTERS = {0x2800 + dots: letter for letter, dots in zip(
    "abcdefghijklmnopqrstuvwxyz",
    (0x01, 0x03, 0x09, 0x19, 0x11, 0x0B, 0x1B, 0x13, 0x0A, 0x1A, 0x05, 0x07, 0x0D, 0x1D, 0x15, 0x0F, 0x1F, 0x17,
     0x0E, 0x1E, 0x25, 0x27, 0x3A, 0x2D, 0x3D, 0x35),
    strict=True,
)}  # fmt: skip


def letter_like(text: str) -> str:
    """``text`` with every letter-like symbol written as the Latin letter it spells."""
    return text.translate(_letter_like_table()) if not text.isascii() else text


def _script_words(statement: str) -> list[tuple[str, bool]]:
    """The words of a statement (outside quotes), in any script: (its comparison form, whether it is written in
    plain ASCII letters). A run of letters, marks and digits of another script (a CJK or Thai phrase has no
    spaces) is one word; letter-like symbols are read as the letters they spell, and never as plain ASCII."""
    import unicodedata

    # Read before NFKC: a squared or fullwidth letter is not a plain one, whatever it folds to.
    raw = strip_invisible(_QUOTED_RAW.sub(" ", unicodedata.normalize("NFC", statement)))
    out: list[tuple[str, bool]] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            word = "".join(current).rstrip("'")
            # A compatibility form of Latin letters (fullwidth, mathematical) reads as the letters it folds to; a
            # letter-like symbol without one (regional indicators, small capitals) and another script never do.
            plain = unicodedata.normalize("NFKC", word).isascii() and not any(ord(ch) in table for ch in word)
            word = unicodedata.normalize("NFKC", word) if plain else word
            if plain and "'" in word:
                word = _contraction(word)
            folded = normalize(letter_like(word))
            for part in _WORD.findall(folded) if plain else [folded.replace(" ", "")]:
                out.append((part, plain))
            current.clear()

    table = _letter_like_table()
    for char in raw:
        category = unicodedata.category(char)
        if char in "'’" and current and current[-1].isascii() and current[-1].isalpha():
            current.append("'")  # a contraction or a possessive, never a quotation mark
            continue
        if char.isascii():
            if char.isalpha() or (char == "_" and current):  # a snake_case name stays one word
                current.append(char)
                continue
            flush()
        elif (
            category[0] in "LMN"
            or ord(char) in table
            or _LETTERISH.match(char)
            or _alnum_form(char)
            or (category == "Cn" and _ASSIGNED.match(char))  # newer than the names: read, never a separator
        ):
            if current and current[-1].isascii():
                flush()
            current.append(char)
        elif _PICTOGRAPH.match(char):
            # A pictograph says something ("🆘", a rebus): a word of its own, grounded only where the evidence holds it.
            flush()
            out.append((char, False))
        else:
            flush()
    flush()
    return out


# Letters, marks and digits by the newest Unicode tables (the ``regex`` package's; ``unicodedata`` is older and
# reads a letter of a newer script as unassigned), and pictographs.
_LETTERISH = regex.compile(r"[\p{L}\p{M}\p{N}]")
_ASSIGNED = regex.compile(r"[^\p{Cn}\p{Cs}\p{Co}]")
_PICTOGRAPH = regex.compile(r"[\p{Extended_Pictographic}\U0001F100-\U0001F1FF]")


def _alnum_form(char: str) -> bool:
    import unicodedata

    return unicodedata.normalize("NFKC", char).isalnum()


_CONTRACTED = re.compile(r"(?i)n't$|'(?:s|re|ll|ve|d|m)$")


def _contraction(word: str) -> str:
    """A word without its possessive or contracted ending; a negated verb (``didn't``) as ``not``."""
    if word.lower().endswith("n't"):
        return "not"
    return _CONTRACTED.sub("", word)


_QUOTED_RAW = QUOTED


def _concluding_words(statement: str) -> frozenset[str]:
    """The words of the statement's clauses that conclude (causal or conclusive language) or instruct."""
    text = _QUOTED.sub(" ", normalize(letter_like(statement)))
    out: set[str] = set()
    for clause in _CLAUSE_BREAK.split(text):
        if causal_phrases(clause) or instructions(clause):
            out.update(_WORD.findall(clause))
    return frozenset(out)


def _concluding_words_explained(statement: str) -> frozenset[str]:
    """The words of a conclusion outside its cause side: what it explains."""
    if not causal_phrases(statement):
        return frozenset()
    text = _QUOTED.sub(" ", normalize(letter_like(statement)))
    return frozenset(_WORD.findall(text)) - frozenset(_WORD.findall(cause_side(statement)))


def _compatibility_form(word: str) -> bool:
    """A word written in compatibility letters (fullwidth, mathematical): not the plain letters it folds to."""
    import unicodedata

    return not word.isascii() and unicodedata.normalize("NFKC", word).isascii()


# Words that say a statement holds of every item of a set, or at every time: said only when the evidence says them
# or (for a set) shows every item (``verification.derivability``). "never" is a negation too (``text.polarity``).
SCOPE_WORDS = frozenset({"all", "every", "never"})
SET_SCOPE_WORDS = frozenset({"all", "every"})


# "every" before a span of time says how often ("every 10 seconds", "every few minutes"), not of which items.
_FREQUENCY = re.compile(
    r"\bevery (?:~|about |around |roughly )?(?:[\d.]+(?:\s?[-–]\s?[\d.]+)?|few|other|couple of|single)?\s?"
    r"(?:ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|days?|weeks?)\b"
)
# "never" before a state ("never became ready", "never got past"): a negation, judged as one (text.polarity).
_NEVER_STATE = re.compile(
    r"\bnever (?:\w+ ){0,2}?(?:ready|started|starts|start|became|become|becomes|got|gets|get|reached|reaches|passed|"
    r"opened|opens|open|succeeded|succeeds|completed|completes|arrived|came|comes|produced|issued|created|runs|ran|"
    r"run|scheduled|attached|mounted|pulled|finished|finishes|listens|listened|answered|answers|recovered)\b"
)


def scope_words(statement: str) -> tuple[str, ...]:
    """The scope words ("all 3 pods", "every container", "never fails") of a statement, outside its quoted
    parts (a hyphenated word's parts too: "never-failing"); never "every" of a frequency ("every 10 seconds")."""
    text = _NEVER_STATE.sub(" ", _FREQUENCY.sub(" ", _QUOTED_RAW.sub(" ", normalize(statement))))
    return tuple(dict.fromkeys(w for w in _WORD.findall(text) if w in SCOPE_WORDS))


def ungrounded_words(statement: str, grounding: Iterable[str], *, question: Iterable[str] = ()) -> tuple[str, ...]:
    """The statement's words (outside quotes) that nothing grounds, in any script.

    A plain ASCII word (3 letters or more) is grounded by a ``grounding`` text (its evidence), by the neutral
    lexicon (``lexicon``), or by the ``question``; a word of another script or of letter-like symbols only by a
    grounding text that holds it (the lexicon is English and grants nothing to another script). A word written
    in compatibility letters (fullwidth, mathematical) is no plain word: only its evidence grounds it. The
    question is the user's hypothesis: it grounds a plain word of an observation, never a word of a clause that
    concludes or instructs, nor one of another script (whose conclusions cannot be read).
    """
    texts, asked = tuple(grounding), tuple(question)
    grounded, neutral, polar = _stems(texts), lexicon(), _polar_stems()
    forms = name_forms(texts)
    from_question = _stems(asked) if asked else frozenset()
    if asked:
        # Two words of the question joined ("logged out": "logouts", "sign up": "signups").
        words = [stem(w) for text in asked for w in _WORD.findall(normalize(text))]
        from_question = from_question | {a + b for a, b in itertools.pairwise(words)}
    # The question grounds what a conclusion explains, never what it blames ("the payments release broke checkout",
    # asked "did the payments release break checkout?": the cause side needs the evidence).
    concluding = frozenset(_WORD.findall(cause_side(statement))) if asked and causal_phrases(statement) else frozenset()
    concluding = concluding | (
        _concluding_words(statement) - _concluding_words_explained(statement) if asked else frozenset()
    )
    compat = {
        part
        for word in _RAW_WORD.findall(statement)
        if _compatibility_form(word)
        for part in _WORD.findall(normalize(word))
    }
    out: list[str] = []
    things, core = _things_named(statement), core_lexicon()
    summed = bool(_TOTAL_OF_NUMBER.search(normalize(statement)))
    # A field's name written in camelCase ("concurrencyPolicy") whose every word the evidence holds: the
    # words written as one ("concurrency policy is Forbid").
    camel = {
        word.lower()
        for word in _CAMEL_WORD.findall(statement)
        if all(stem(p.lower()) in grounded for p in _CAMEL_PART.findall(word))
    }
    for word, plain in _script_words(statement):
        if plain and stem(word) in polar:
            continue  # a negation or an antonym: the evidence must hold its polarity (text.polarity)
        if plain and word == "total" and summed:
            continue  # "23 restarts in total": a sum, whose number is a fact checked as one
        if plain and word in camel:
            continue
        if plain and word in compat:
            # (a causal word so written is read as one: the statement concludes)
            if stem(word) not in grounded and not causal_phrases(word):
                out.append(word)
        elif plain:
            key = stem(word)
            asked_grounds = key in from_question and word not in concluding
            # (a word past the commonest ones, used as a noun, names a thing: "during the nightly batch")
            ordinary = key in neutral and word not in INTENSITY_WORDS and (word not in things or key in core)
            ordinary = ordinary or (word not in things and _closed_compound(word, core | grounded))
            if len(word) >= 3 and key not in grounded and not ordinary and not asked_grounds and word not in forms:
                out.append(word)  # (a name's words joined, "sqlstate" of sql_state_code, are its evidence's)
        elif word and (not word.isascii() or stem(word) not in grounded) and word not in _compacts_of(texts):
            out.append(word)
    return tuple(dict.fromkeys(out))


_RAW_WORD = re.compile(r"[^\W\d_]+")
_CAMEL_WORD = re.compile(r"\b[a-z]{2,}(?:[A-Z][a-z]{2,})+\b")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+")
# "total" of a number ("23 restarts in total", "a total of 23", "total: 23"): a sum, not the intensity of "totally".
_TOTAL_OF_NUMBER = re.compile(r"\d[\d,.]*(?:\s+[a-z][\w-]*){0,3}\s+in total\b|\btotal(?: of)?\s*[:=]?\s*~?\d")


def _closed_compound(word: str, known: frozenset[str]) -> bool:
    """A known word and a particle written as one, a phrasal verb or its noun ("outgrows", "logouts", "rollbacks"):
    no more than the two words written apart. Two nouns written as one are a name as often ("storefront")."""
    if len(word) < 6 or not word.isalpha():
        return False
    for i in range(2, len(word) - 1):
        head, tail = word[:i], word[i:]
        if head in _PARTICLES and len(tail) >= 3 and stem(tail) in known:
            return True
        if tail.rstrip("s") in _PARTICLES and len(head) >= 3 and stem(head) in known:
            return True
    return False


# The particles of English phrasal verbs and of the nouns made of them.
_PARTICLES = frozenset({"out", "over", "under", "up", "down", "back", "in", "off", "on", "fore", "after", "by"})


_DETERMINERS = frozenset({"the", "a", "an", "its", "their", "this", "that", "these", "those", "our", "his", "her"})


def _things_named(statement: str) -> frozenset[str]:
    """The words a statement uses as nouns: one right after a determiner, or after a determiner and one word
    ("the batch", "the nightly batch"), that can be a noun."""
    from lemminflect import getAllLemmas

    words = _WORD.findall(_QUOTED.sub(" ", normalize(statement)))
    out = set()
    for i, word in enumerate(words):
        after = (i >= 1 and words[i - 1] in _DETERMINERS) or (
            i >= 2 and words[i - 2] in _DETERMINERS and words[i - 1] not in _DETERMINERS
        )
        if after and word not in _DETERMINERS and "NOUN" in getAllLemmas(word):
            out.add(word)
    return frozenset(out)


def specific_words(statement: str, evidence: Iterable[str]) -> tuple[str, ...]:
    """The statement's words (outside quotes) that its evidence holds and the neutral vocabulary does not:
    the specific things it names ("redis" in "the redis refusals ...")."""
    held = _stems(evidence)
    text = _QUOTED.sub(" ", normalize(statement))
    out = [w for w in _WORD.findall(text) if len(w) >= 3 and stem(w) in held and stem(w) not in vocabulary()]
    return tuple(dict.fromkeys(out))


def stance_compound(word: str) -> bool:
    """A hyphenated English word of scope or intensity (``never-failing``, ``always-on``, ``all-clear``): words to
    ground, not a name (every part an English word, one of them a scope or intensity word; ``non-zero`` is none)."""
    from diagnosis_server.text.polarity import polar_words

    parts = _WORD.findall(normalize(word.replace("-", " ")))
    scoped = SCOPE_WORDS | INTENSITY_WORDS
    known = core_lexicon() | vocabulary() | {stem(w) for w in polar_words()}
    return any(p in scoped for p in parts) and all(p in scoped or stem(p) in known for p in parts)


# The parts a name ends or begins with (``orders-api``, ``ledger-db``, ``payment-service``): a hyphenated word holding
# one is a name, whatever its other parts.
NAME_PARTS = frozenset(
    {"api", "apis", "db", "dbs", "svc", "srv", "sql", "service", "services", "server", "servers", "gateway", "gw",
     "worker", "workers", "web", "app", "apps", "proxy", "cache", "queue", "job", "jobs", "cron", "controller",
     "operator", "agent", "exporter", "frontend", "backend", "ui", "admin", "auth", "pg", "mysql", "mongo",
     "redis", "kafka", "broker", "router", "scheduler", "consumer", "producer", "manager", "engine", "bot", "cli",
     "daemon", "node", "nodes", "pool", "cluster", "master", "replica", "primary", "secondary", "v1", "v2"}
)  # fmt: skip


def english_compound(word: str) -> bool:
    """A hyphenated English word of operations (``crash-looping``, ``back-off``, ``read-only``, ``non-zero``,
    ``never-failing``), not a name: every part a word of the neutral operational vocabulary, a polar or scope word or
    a compound's function part, none a part names are made of (``orders-api``, ``ledger-db``), no digit. Two common
    English words make a name as often as a word (``feature-store``, ``ledger-writer``): only the vocabulary's
    words of operations make a compound of words."""
    if any(ch.isdigit() for ch in word):
        return False
    parts = word_parts(word)
    if len(parts) < 2 or any(p in _NUMBER_PARTS for p in parts):
        return False  # a number written in words ("two-hundred"): a fact
    from diagnosis_server.text.polarity import polar_words

    known = vocabulary() | {stem(w) for w in polar_words()} | {stem(w) for w in SCOPE_WORDS | INTENSITY_WORDS}
    if len(parts) == 2 and parts[0] in _ENGLISH_PREFIXES:
        # A prefix and one word ("in-cluster", "non-primary", "re-issued"): no name begins so.
        return stem(parts[1]) in known
    if any(p in NAME_PARTS for p in parts):
        return False  # a name ("orders-api", "ledger-db"): a fact
    return all(p in _COMPOUND_FUNCTION_PARTS or stem(p) in known for p in parts)


# The prefixes an English compound begins with, and a name never does.
_ENGLISH_PREFIXES = frozenset({"in", "non", "re", "pre", "co", "un", "over", "under", "multi", "sub", "self", "anti"})


_NUMBER_PARTS = frozenset(
    {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "twenty",
     "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "million"}
)  # fmt: skip
# Function words and prefixes of English compounds ("out-of-memory", "back-off", "re-run", "non-zero").
_COMPOUND_FUNCTION_PARTS = frozenset(
    {"of", "off", "out", "up", "in", "on", "to", "by", "non", "re", "pre", "co", "per", "via", "un", "over", "under"}
)


def ungrounded_compound(word: str) -> tuple[str, ...]:
    """The parts of a hyphenated word (``crash-looping``, ``back-off``) that the neutral vocabulary lacks: an
    English compound is made of its words; a name such as ``checkout-api`` or ``payments-api`` is not (neither the
    English lexicon nor the evidence's separate words make a name)."""
    parts = _WORD.findall(normalize(word.replace("-", " ")))
    return tuple(p for p in parts if stem(p) not in vocabulary())


def held_stems(texts: Iterable[str]) -> frozenset[str]:
    """The stems of the words ``texts`` hold (their names split into words too)."""
    return _stems(texts)


def word_parts(word: str) -> list[str]:
    """The words of a hyphenated word, in the comparison form."""
    return _WORD.findall(normalize(word.replace("-", " ")))


# Where a conclusion's cause stands: after "because" (and its kin), or before "which explains", "is the root cause",
# ", so" (and theirs).
_CAUSE_AFTER = re.compile(
    r"\b(?:because(?: of)?|due to|owing to|caused by|driven by|as a result of|since(?! \d)|root cause(?: of [^:]*?)?"
    r"(?: is| was|:))\s",
)
_CAUSE_BEFORE = re.compile(
    r"\b(?:which|that|this) (?:explains|is why|caused|causes|leads|led)|\bexplains?\b|\bcaused\b|\bcauses\b"
    r"|\ble(?:d|ads) to\b|\bresult(?:s|ed)? in\b|\b(?:is|was|are|were) (?:the |a )?(?:likely |probable |root )*"
    r"(?:cause|culprit)|\bis to blame|\bis at fault|,\s*so\b|\btherefore\b|\bhence\b|\bbroke\b|\btriggered\b"
)


def cause_side(statement: str) -> str:
    """The part of a conclusion that names its cause ("X fails because Y ...": Y; "Y, which explains X": Y; "Root
    cause: Y"), in the comparison form; the whole statement when it has no such word."""
    text = _QUOTED.sub(" ", normalize(statement))
    after = _CAUSE_AFTER.search(text)
    before = _CAUSE_BEFORE.search(text)
    if after is not None and (before is None or after.start() < before.start()):
        return text[after.end() :]
    if before is not None:
        return text[: before.start()]
    return text


_HEDGE = re.compile(
    r"\b(?:likely|probably|possibly|perhaps|presumably|apparently|may|might|could|appears?|seems?|suggests?)\b"
)


def hedged(statement: str) -> bool:
    """Whether a conclusion is stated as a likelihood ("is the likely cause", "may explain"), not as a certainty
    ("is the root cause"): only such a conclusion may rest on facts another claim's evidence holds."""
    return _HEDGE.search(_QUOTED.sub(" ", normalize(statement))) is not None


# Verbs of action an instruction begins with, in their base form (an imperative): the operational ones and the
# commonest English ones of doing, telling and deciding.
_ACTION_VERBS = frozenset(
    {
        "roll", "rollback", "revert", "undo", "restart", "reboot", "redeploy", "deploy", "rerun", "run", "scale",
        "drain", "cordon", "uncordon", "delete", "remove", "kill", "stop", "start", "page", "call", "phone",
        "contact", "notify", "alert", "escalate", "ignore", "disregard", "forget", "skip", "bypass", "override",
        "disable", "enable", "turn", "shut", "switch", "increase", "raise", "lower", "reduce", "bump", "set",
        "change", "apply", "patch", "fix", "upgrade", "downgrade", "rotate", "flush", "purge", "clear", "reset",
        "retry", "block", "unblock", "evict", "terminate", "investigate", "check", "look", "open", "file",
        "create", "add", "update", "edit", "replace", "move", "migrate", "failover", "promote", "pause",
        "resume", "suspend", "halt", "abort", "cancel", "approve", "merge", "push", "ship", "trust", "blame",
        "assume", "treat", "mark", "report", "tell", "ask", "wait", "go", "make", "take", "let", "do", "use",
        "try", "keep", "hold", "freeze", "unfreeze", "wipe", "drop", "truncate", "grant", "revoke",
        "allow", "deny", "send", "email", "message", "wake", "get", "give", "put", "mute", "silence", "ack",
        "acknowledge", "close", "resolve", "trigger", "fire", "consider", "note", "remember", "see", "read",
    }
)  # fmt: skip
# Words that state something in a finite verb (a clause holding one is a statement, not an imperative:
# "restart count is 4", "page faults rose"), besides a past form in "-ed".
_FINITE = frozenset(
    {
        "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "does", "did", "will", "would",
        "can", "could", "shall", "may", "might", "took", "went", "got", "ran", "rose", "fell", "began", "became",
        "came", "made", "said", "saw", "grew", "hit", "kept", "left", "lost", "stayed", "shows", "reached",
        "returns", "gets", "stays", "remains", "fails", "runs", "holds", "keeps", "reports", "logs",
    }
)  # fmt: skip
# What ends a clause: sentence punctuation, a comma, a dash, and a coordinating "and"/"then".
# (a symbol set between spaces joins two clauses too: " / ", " -> ", " → ", " • ", " | ", " + ")
_CLAUSE_BREAK = re.compile(
    r"[.;:!?,()\[\]]+(?:\s|$)|\s[-–—]+\s|\b(?:and|then|so|but)\b|[。；！？，、…]"
    r"|\s(?:/|->|=>|→|⇒|⟶|➜|➔|•|·|▪|\||\+|&)\s"
)
# A verb of action in its base form that the clause urges done now, wherever in the clause it stands ("... from
# ledger-svc roll back payments now"): an instruction, not a report.
_URGED = re.compile(
    r"(?=\b([a-z]+)\b(?:\s+[\w.-]+){0,4}?\s+"
    r"(?:now(?! and (?:then|again))|immediately|asap|right away|at once|urgently)\b)"
)
_NOT_IMPERATIVE_BEFORE = frozenset(
    {"to", "will", "would", "can", "could", "should", "must", "may", "might", "shall", "did", "does", "do", "not",
     "i", "we", "you", "they", "he", "she", "it", "who", "which", "that"}
)  # fmt: skip
_SOLICITS = re.compile(r"\b(?:please|pls|kindly|let'?s|(?:you|we) (?:should|must|need to|have to|ought to))\b")


def instructions(statement: str) -> tuple[str, ...]:
    """The clauses of ``statement`` (outside its quotes) that instruct the reader: a clause that begins with a verb
    of action in its base form (a plain word, not a part of a name such as ``report-builder``) and holds no finite
    verb ("roll back now", "ignore the other evidence"), or one that solicits an action ("please ...", "you
    should ..."). Read in the comparison form: a fullwidth or mathematical "ｒｏｌｌ ｂａｃｋ" is "roll back"."""
    text = _QUOTED.sub(" ", normalize(letter_like(statement)))
    out: list[str] = []
    for clause in _CLAUSE_BREAK.split(text):
        words = _WORD.findall(clause)
        if not words:
            continue
        said = " ".join(re.findall(r"[a-z0-9]+", clause))
        if _SOLICITS.search(clause):
            out.append(said)
            continue
        if (urged := _urged(clause)) is not None:
            out.append(urged)
            continue
        first, rest = words[0], words[1:]
        leading = clause.split()[0] if clause.split() else ""
        if first not in _ACTION_VERBS or not re.fullmatch(r"[a-z]+", leading):
            continue
        if any(_finite(w) for w in rest):
            continue
        if rest and rest[0] in _NOUN_FOLLOWERS:
            continue  # "run with a period of 10 s", "message for database accounts": a noun, not a verb
        if first == "do" and rest[:1] == ["not"] and (len(rest) < 2 or rest[1] not in _ACTION_VERBS):
            continue  # "(the containers) ... and do not answer on port 9000": a plural verb, negated
        out.append(said)
    return tuple(dict.fromkeys(out))


def _urged(clause: str) -> str | None:
    """The words from a verb of action urged done now to the end of its clause ("roll back payments now"), or None.
    A verb after a subject, a modal or "to" reports or plans ("the rollout will roll back now")."""
    for match in _URGED.finditer(clause):
        verb = match.group(1)
        before = _WORD.findall(clause[: match.start()])
        # (a plural noun before it is its subject: "the pods restart now")
        subject = bool(before) and (before[-1] in _NOT_IMPERATIVE_BEFORE or _plural(before[-1]))
        if verb in _ACTION_VERBS and not subject:
            return " ".join(re.findall(r"[a-z0-9]+", clause[match.start() :]))
    return None


def _plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


# Prepositions after which a verb of action is a noun ("a run with ...", "the message for ..."); an imperative is
# followed by its object or a particle ("roll back", "restart the pod", "escalate to the DBA").
_NOUN_FOLLOWERS = frozenset(
    {"for", "of", "with", "on", "in", "at", "from", "by", "about", "as", "into", "per", "than", "like", "via", "within"}
)


def _finite(word: str) -> bool:
    """A word that states something in a finite verb: an auxiliary, a past form, a third-person form of a verb."""
    if word in _FINITE or (len(word) > 4 and word.endswith("ed")):
        return True
    return len(word) > 3 and word.endswith("s") and (word[:-1] in _ACTION_VERBS or word[:-1] in _STATIVE_VERBS)


# Verbs a statement about a system says in the third person ("depends on", "points to", "needs ...").
_STATIVE_VERBS = frozenset(
    {
        "depend", "point", "need", "require", "use", "call", "return", "serve", "read", "write", "send", "receive",
        "listen", "connect", "mount", "reference", "contain", "include", "expect", "want", "seem", "appear",
        "time", "crash", "loop", "exit", "log", "emit", "print", "throw", "raise", "report", "say", "show",
    }
)  # fmt: skip


def _reporting_words(statement: str) -> list[str]:
    """The words of ``statement`` outside its instruction clauses and their joiners: what reports them, if any."""
    said = " ".join(re.findall(r"[a-z0-9]+", normalize(letter_like(statement))))
    for clause in sorted(instructions(statement), key=len, reverse=True):
        said = said.replace(clause, " ")
    return [w for w in said.split() if w not in {"and", "then", "so", "but"}]


def quoted_instruction(clause: str, evidence: Iterable[str], *, statement: str = "") -> bool:
    """Whether an instruction ``clause`` (of ``instructions``) stands word for word in the evidence (a log line's
    "retry in 10 seconds", a field named ``restart_count``): the statement quotes its output, it instructs no one.
    A clause that is the whole ``statement`` is reported by nothing ("roll back the release now", restating a log
    line): it instructs the reader whatever wrote it first. R-A-1."""
    words = clause.split()
    if not words:
        return False
    if statement and not _reporting_words(statement):
        return False
    sequence = re.compile(r"(?<![a-z0-9])" + r"[^a-z0-9]+".join(map(re.escape, words)) + r"(?![a-z0-9])")
    name = None
    if len(words) > 1 and words[1].isalpha():
        first, second = map(re.escape, words[:2])
        name = re.compile(rf"(?<![A-Za-z])(?i:{first})(?:[_-](?i:{second})|{second[0].upper()}(?i:{second[1:]}))")
    return any(sequence.search(normalize(text)) or (name is not None and name.search(text)) for text in evidence)
