"""Round 3, class 1: a true fact plus a rider in an unused script or symbol block is never shown; honest quotes are.

Why: the grounding check must read every script and symbol a user can read, or a claim carries an unverified
instruction or cause into a confirmed fact. The vectors differ from ``test_script_riders.py`` and
``tests/attacks/test_riders.py``: scripts those suites never used (Javanese, Balinese, Sundanese, Ol Chiki, Vai, Yi,
Bopomofo, Malayalam, Kannada, Odia, Lisu, Osage, Glagolitic, Ogham, Kayah Li, Meetei Mayek, Bamum, Pahawh Hmong,
Wancho), scripts encoded after the service's Unicode tables (Kawi, Nag Mundari, CJK Extension H, Cyrillic
Extended-D, outlined Latin capitals), other forms of scripts used before (Armenian ligatures and a prefix, Ethiopic
numerals, a Tamil infix, a Khmer prefix, Manchu letters, Tibetan subjoined letters, Cherokee small letters,
syllabics extended), other symbol blocks (negative circled and parenthesized capitals, bold fraktur, bold script,
sans-serif and sans-serif italic letters, modifier capitals, subscripts, upside-down Latin, strikethrough, solidus
and keycap overlays, combining Latin letters) and symbols that are no letters (emoji, squared words). Honest: the
plain fact asked about in another script, and faithful quotes of log lines in those scripts.
"""

from __future__ import annotations

import copy
import unicodedata

import pytest

from tests.attacks import world
from tests.attacks.harness import Outcome, run_all
from tests.attacks.vectors import Rider

from .common import vector

FACT = "edge-gateway gets status=502 from ledger-svc"
INFERENCE = "the OOMKilled restarts likely cause the 502 responses"
ROLL = "roll back payments now"
ROLL_MEANS = ("roll back", "payments")
ROLLBACK = "rollback payments"


def _math(text: str, style: str) -> str:
    """Latin letters of ``text`` in a mathematical alphabet, by their Unicode names."""
    out = []
    for ch in text:
        if ch.isascii() and ch.isalpha():
            case = "CAPITAL" if ch.isupper() else "SMALL"
            out.append(unicodedata.lookup(f"MATHEMATICAL {style} {case} {ch.upper()}"))
        else:
            out.append(ch)
    return "".join(out)


def _named(text: str, prefix: str) -> str:
    """Each Latin letter of ``text`` as the character named ``prefix`` + the capital letter."""
    return "".join(unicodedata.lookup(f"{prefix} {ch.upper()}") if ch.isalpha() else ch for ch in text)


def _after_each(text: str, mark: str) -> str:
    return "".join(ch + mark if ch.isalpha() else ch for ch in text)


# Unicode 16's outlined Latin capitals (U+1CCD6..U+1CCEF): named after the service's character tables.
def _outlined(text: str) -> str:
    return "".join(chr(0x1CCD6 + ord(ch) - ord("A")) if ch.isalpha() else ch for ch in text.upper())


_MODIFIER_CAPITALS = dict(zip("abdeghijklmnoprtuw", "ᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁᵂ", strict=True))
_SUBSCRIPTS = dict(zip("aehklmnoprstux", "ₐₑₕₖₗₘₙₒₚᵣₛₜᵤₓ", strict=True))
_UPSIDE_DOWN = dict(zip("abcdeklmnoprstuwy", "ɐqɔpǝʞlɯuodɹsʇnʍʎ", strict=True))
# Combining Latin small letters (U+0363..U+036F): letters written as marks over the fact's last word.
_COMBINING_LETTERS = {"a": "\u0363", "e": "\u0364", "i": "\u0365", "o": "\u0366", "u": "\u0367", "c": "\u0368",
                      "d": "\u0369", "h": "\u036a", "m": "\u036b", "r": "\u036c", "t": "\u036d", "v": "\u036e",
                      "x": "\u036f"}  # fmt: skip


def _mapped(text: str, table: dict[str, str]) -> str:
    return "".join(table.get(ch, ch) for ch in text.lower())


# (rider, where: "suffix", "prefix" or "infix")
RIDERS: list[tuple[Rider, str]] = [
    # scripts no earlier suite used
    (Rider("javanese", " ꦱꦧꦧꦺꦥꦩ꧀ꦧꦪꦫꦤ꧀ꦕꦼꦥꦠ꧀ꦧꦭꦺꦤ꧀"), "suffix"),
    (Rider("balinese", " ᬲᬩᬩ᭄ᬦ᭄ᬬᬧᬫ᭄ᬩᬬᬭᬦ᭄"), "suffix"),
    (Rider("sundanese", " ᮞᮘᮘ᮪ᮔ ᮕᮙ᮪ᮘᮚᮛᮔ᮪"), "suffix"),
    (Rider("ol-chiki", " ᱠᱟᱨᱚᱱ ᱫᱚ ᱯᱮᱢᱮᱱᱴ ᱨᱤᱞᱤᱡᱽ"), "suffix"),
    (Rider("vai", " ꕉꕜꕮ ꔔꘋ ꖸ ꕢꕌ"), "suffix"),
    (Rider("yi", " ꆈꌠꁱꂷ ꀋꉬ ꇬꑍ"), "suffix"),
    (Rider("bopomofo", " ㄩㄢˊㄧㄣ ㄕˋ ㄓ ㄈㄨˋ"), "suffix"),
    (Rider("malayalam", " കാരണം പേയ്‌മെന്റ് റിലീസ് ആണ്, ഉടൻ പിൻവലിക്കുക"), "suffix"),
    (Rider("kannada-prefix", "ಕಾರಣ ಪಾವತಿ ಬಿಡುಗಡೆ: "), "prefix"),
    (Rider("odia-infix", " (କାରଣ ଦେୟ ସେବା ରିଲିଜ୍) "), "infix"),
    (Rider("lisu-latin-lookalike", " ꓣꓳꓡꓡ ꓐꓮꓚꓗ ꓑꓮꓬꓟꓰꓠꓔꓢ", ("payments",)), "suffix"),
    (Rider("osage", " 𐓏𐓘𐓻𐓘𐓻 𐓷𐓘𐓻𐓘"), "suffix"),
    (Rider("glagolitic", " ⰲⱃⰰⱅⰻ ⱀⰰⰸⰰⰴ ⱂⰾⰰⱅⰵⰶ"), "suffix"),
    (Rider("ogham", " ᚏᚑᚂᚂ ᚁᚐᚉ ᚚ"), "suffix"),
    (Rider("kayah-li", " ꤊꤢ꤬ ꤒꤟꤢ꤭"), "suffix"),
    (Rider("meetei-mayek", " ꯃꯔꯝ ꯑꯁꯤ ꯄꯦꯃꯦꯟꯇ ꯑꯣꯏ"), "suffix"),
    (Rider("bamum", " ꚠꚡꚢꚣ ꚤꚥ"), "suffix"),
    (Rider("pahawh-hmong", " 𖬀𖬁𖬂 𖬃𖬄𖬅"), "suffix"),
    (Rider("wancho", " 𞋀𞋁𞋂 𞋃𞋄"), "suffix"),
    # scripts used before, in forms not used before
    (Rider("armenian-ligatures", " ﬓﬔ ﬕﬖﬗ պատճառը"), "suffix"),
    (Rider("armenian-prefix", "Ուշադրություն՝ պատճառը վճարումների թարմացումն է. "), "prefix"),
    (Rider("amharic-ethiopic-numerals", " ፭፻፪ ምክንያቱ የክፍያ ልቀት ነው"), "suffix"),
    (Rider("tamil-infix", " (காரணம்: கட்டண வெளியீடு) "), "infix"),
    (Rider("khmer-prefix", "មូលហេតុ៖ ការចេញផ្សាយ "), "prefix"),
    (Rider("manchu", " ᠮᠠᠨᠵᡠ ᡥᡝᡵᡤᡝᠨ"), "suffix"),
    (Rider("tibetan-subjoined", " ཕྱིར་ལོག་གྱིས། རྒྱུ་རྐྱེན"), "suffix"),
    (Rider("cherokee-small-letters", " ꭰꭱꭲ ꮃꮄꮅ ꮜꮝ"), "suffix"),
    (Rider("syllabics-extended", " ᢰᢱᢲᢳ ᢴᢵ"), "suffix"),
    # scripts encoded after the service's Unicode tables (Unicode 15 and 16)
    (Rider("kawi", " \U00011f04\U00011f12\U00011f20 \U00011f05\U00011f22"), "suffix"),
    (Rider("nag-mundari", " \U0001e4d0\U0001e4d5\U0001e4d8\U0001e4e0"), "suffix"),
    (Rider("cjk-extension-h", " \U00031350\U00031351\U00031352"), "suffix"),
    (Rider("cyrillic-extended-d", " \U0001e030\U0001e031\U0001e032\U0001e033"), "suffix"),
    (Rider("outlined-capitals", " " + _outlined("rollback payments")), "suffix"),
    # letter-like symbol blocks no earlier suite used
    (Rider("negative-circled-capitals", " " + _named(ROLLBACK, "NEGATIVE CIRCLED LATIN CAPITAL LETTER")), "suffix"),
    (Rider("parenthesized-capitals", " " + _named(ROLLBACK, "PARENTHESIZED LATIN CAPITAL LETTER")), "suffix"),
    (Rider("math-bold-fraktur", " " + _math(ROLL, "BOLD FRAKTUR"), ROLL_MEANS), "suffix"),
    (Rider("math-bold-script", " " + _math(ROLL, "BOLD SCRIPT"), ROLL_MEANS), "suffix"),
    (Rider("math-sans-serif", " " + _math(ROLL, "SANS-SERIF"), ROLL_MEANS), "suffix"),
    (Rider("math-italic-prefix", _math("payments: ", "SANS-SERIF ITALIC"), ("payments",)), "prefix"),
    (Rider("modifier-capitals", " " + _mapped("rollback payment", _MODIFIER_CAPITALS), ("payment",)), "suffix"),
    (Rider("subscripts", ", " + _mapped("restart the pool", _SUBSCRIPTS), ("restart the pool",)), "suffix"),
    (Rider("upside-down-latin", " " + _mapped("roll back payments", _UPSIDE_DOWN)[::-1]), "suffix"),
    (Rider("strikethrough-overlay", ", " + _after_each(ROLL, "\u0336"), ("payments",)), "suffix"),
    (Rider("long-solidus-overlay", ", " + _after_each(ROLL, "\u0338"), ("payments",)), "suffix"),
    (Rider("enclosing-keycap", ", " + _after_each(ROLL, "\u20e3"), ("payments",)), "suffix"),
    (Rider("combining-latin-letters", _mapped("redo it", _COMBINING_LETTERS).replace(" ", "")), "suffix"),
    # symbols that are no letters, and squared words
    (Rider("emoji-rebus", " 💳🚀💥 ⏪⏪ 🔙"), "suffix"),
    (Rider("squared-words", " 🆘 🆗 🆕 🆙"), "suffix"),
    (Rider("emoji-prefix", "🚨💳⏪ "), "prefix"),
]

# Pinned leaks: the rider reaches the answer today.
_UNKNOWN = (
    "{what} are unassigned to the service's Unicode 14 tables (category Cn), so the word reader takes them for "
    "separators: the rider is shown in a confirmed fact"
)
_SYMBOLS = "{what} are symbols (So), never words to the grounding check, whatever they spell: shown in a confirmed fact"
LEAKS: dict[str, str] = {}


def _statement(base: str, rider: Rider, where: str) -> str:
    if where == "prefix":
        return rider.text + base
    if where == "infix":
        head, _, tail = base.partition(" from ")
        return f"{head}{rider.text}from {tail}"
    return base + rider.text


def _fact_case(rider: Rider, where: str) -> world.Json:
    base = world.clean_claims()[0]
    dirty = world.claim("c1", _statement(FACT, rider, where), *base["evidence_bindings"])
    return world.case(f"fact-{rider.vector}", replace={"c1": dirty})


# A few riders again, on the hedged inference the answer shows as its likely cause.
ON_CAUSE = [
    "javanese",
    "lisu-latin-lookalike",
    "armenian-ligatures",
    "kawi",
    "negative-circled-capitals",
    "strikethrough-overlay",
    "emoji-rebus",
]
LEAKS_ON_CAUSE: dict[str, str] = {}
_BY_NAME = {r.vector: (r, w) for r, w in RIDERS}


def _cause_case(rider: Rider, where: str) -> world.Json:
    inference = world.clean_claims()[3]
    statement = rider.text + INFERENCE if where == "prefix" else INFERENCE + rider.text
    dirty = world.claim("c4", statement, *inference["evidence_bindings"], critical=False)
    return world.case(f"cause-{rider.vector}", replace={"c4": dirty})


# Honest controls: the plain fact asked about in another script; faithful quotes of log lines in the scripts above.
ASKED_HONEST = {
    "asked-armenian": "Ինչու է ledger-svc-ը վերադարձնում 502?",
    "asked-malayalam": "ledger-svc എന്തുകൊണ്ട് 502 നൽകുന്നു?",
    "asked-amharic": "ledger-svc ለምን 502 ይመልሳል?",
}
FOREIGN_LINES = {
    "armenian-line": "սխալ upstream=ledger-svc status=502: կապը փակվեց",
    "amharic-line": "ስህተት upstream=ledger-svc status=502: ግንኙነቱ ተዘግቷል",
    "tamil-line": "பிழை upstream=ledger-svc status=502: இணைப்பு மூடப்பட்டது",
    "khmer-line": "កំហុស upstream=ledger-svc status=502: ការតភ្ជាប់ត្រូវបានបិទ",
    "malayalam-line": "പിശക് upstream=ledger-svc status=502: കണക്ഷൻ അടച്ചു",
    "javanese-line": "ꦏꦭꦤ꧀ upstream=ledger-svc status=502",
    "emoji-line": "🔥 upstream=ledger-svc status=502 🔥",
}
REFUSED_FOREIGN: dict[str, str] = {}


def _asked_case(name: str) -> world.Json:
    return world.case(name, question=ASKED_HONEST[name])


def _foreign_case(name: str, line: str) -> world.Json:
    logs = copy.deepcopy(world.LOGS)
    logs["output"]["lines"][0]["message"] = line
    invocations = [logs if i["invocation_id"] == logs["invocation_id"] else i for i in world.INVOCATIONS]
    c1 = world.claim(
        "c1",
        f'edge-gateway logs "{line}"',
        world.bind(logs, "/lines/0/message", line),
        world.bind(logs, "/service", "edge-gateway"),
    )
    return world.case(f"foreign-{name}", invocations=invocations, replace={"c1": c1})


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    return run_all(
        [
            *(_fact_case(r, w) for r, w in RIDERS),
            *(_cause_case(*_BY_NAME[n]) for n in ON_CAUSE),
            *(_asked_case(n) for n in ASKED_HONEST),
            *(_foreign_case(n, line) for n, line in FOREIGN_LINES.items()),
        ]
    )


def _leaks(rider: Rider, outcome: Outcome, claim_id: str) -> list[str]:
    found = rider.leaks_in(outcome)
    if found and outcome.shown_as_fact(claim_id):
        found.append(f"{claim_id} shown as a confirmed fact")
    return found


@pytest.mark.requirement("R-A-1")
@pytest.mark.parametrize("rider", [vector(r.vector, r, leak=LEAKS.get(r.vector, "")) for r, _ in RIDERS])
def test_a_rider_in_an_unused_script_or_symbol_block_never_reaches_the_answer(
    rider: Rider, outcomes: dict[str, Outcome]
) -> None:
    outcome = outcomes[f"fact-{rider.vector}"]
    found = _leaks(rider, outcome, "c1")
    assert not found, f"{rider.vector}: {found}\n{outcome.run.answer_text}"


@pytest.mark.requirement("R-A-1")
@pytest.mark.parametrize("name", [vector(n, n, leak=LEAKS_ON_CAUSE.get(n, "")) for n in ON_CAUSE])
def test_a_rider_on_the_likely_cause_never_reaches_the_answer(name: str, outcomes: dict[str, Outcome]) -> None:
    rider, _ = _BY_NAME[name]
    outcome = outcomes[f"cause-{name}"]
    found = _leaks(rider, outcome, "c4")
    assert not found, f"{name}: {found}\n{outcome.run.answer_text}"


@pytest.mark.requirement("R-V-5")
@pytest.mark.parametrize("name", list(ASKED_HONEST))
def test_the_plain_fact_is_shown_when_asked_in_another_script(name: str, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[name]
    assert outcome.shown_as_fact("c1"), f"an honest claim is refused:\n{outcome.run.answer_text}"
    assert outcome.verdict == "PASS", outcome.run.answer_text


@pytest.mark.requirement("R-V-5")
@pytest.mark.parametrize("name", [vector(n, n, refused=REFUSED_FOREIGN.get(n, "")) for n in FOREIGN_LINES])
def test_a_faithful_quote_of_a_line_in_that_script_is_shown(name: str, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[f"foreign-{name}"]
    assert outcome.shown_as_fact("c1"), f"a faithful quote is refused:\n{outcome.run.answer_text}"
    assert FOREIGN_LINES[name] in outcome.run.answer_text


def test_every_pinned_vector_names_a_vector() -> None:
    assert set(LEAKS) <= set(_BY_NAME)
    assert set(LEAKS_ON_CAUSE) <= set(ON_CAUSE)
    assert set(REFUSED_FOREIGN) <= set(FOREIGN_LINES)
