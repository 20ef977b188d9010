"""Class 8: a question made only of characters that show nothing is refused INVALID_ARGUMENT (with details) through
a real gRPC server, and creates no run; an ordinary question in any script, or one visible character among
invisible ones, is accepted.

The vectors differ from ``tests/attacks/test_invisible_questions.py`` and ``tests/safety_attacks/...``: single code
points and long runs of each, Default_Ignorable code points that are unassigned (U+2065, U+FFF0, U+E0080), the
deprecated format controls, Egyptian and shorthand format controls, Khitan and other fillers, mixes at the length
limit; accepted: questions in twenty scripts, joiners inside words (Persian ZWNJ, Devanagari ZWJ), emoji sequences.
"""

from __future__ import annotations

import grpc
import grpc.aio
import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from tests.support.api import Api

from .common import vector

ASYNC = pytest.mark.asyncio(loop_scope="module")

_TAGS = "".join(chr(0xE0000 + ord(c)) for c in "is ledger down")
INVISIBLE = {
    "hangul-filler-alone": "\u3164",
    "hangul-choseong-filler-alone": "\u115f",
    "hangul-jungseong-filler-alone": "\u1160",
    "halfwidth-hangul-filler-run": "\uffa0" * 64,
    "braille-blank-alone": "\u2800",
    "braille-blank-lines": "\u2800\n\u2800\t\u2800\r\n\u2800",
    "cgj-alone": "\u034f",
    "variation-selector-16-run": "\ufe0f" * 100,
    "ivs-run": "".join(chr(0xE0100 + i) for i in range(0, 240, 7)),
    "tag-sentence-with-cancel": "\U000e0001" + _TAGS + "\U000e007f",
    "mongolian-vowel-separator-run": "\u180e" * 50,
    "mongolian-free-variation-selector-4": "\u180f\u180f",
    "word-joiner-alone": "\u2060",
    "invisible-math-operators": "\u2061\u2062\u2063\u2064",
    "deprecated-format-controls": "\u206a\u206b\u206c\u206d\u206e\u206f",
    "unassigned-default-ignorable-2065": "\u2065",
    "unassigned-default-ignorable-fff0": "\ufff0\ufff1\ufff8",
    "unassigned-default-ignorable-e0080": "\U000e0080\U000e0fff",
    "egyptian-format-controls": "\U00013430\U00013431\U00013438",
    "shorthand-format-controls": "\U0001bca0\U0001bca1\U0001bca2\U0001bca3",
    "musical-format-controls": "\U0001d173\U0001d174\U0001d17a",
    "arabic-letter-mark-and-alm": "\u061c\u061c",
    "kaithi-number-sign": "\U000110bd",
    "ogham-space-mark": "\u1680\u1680",
    "ideographic-and-figure-spaces": "\u3000\u2007\u205f\u2008",
    "line-and-paragraph-separators": "\u2028\u2029",
    "khmer-inherent-vowels-run": "\u17b4\u17b5" * 20,
    "soft-hyphen-run": "\u00ad" * 30,
    "all-mixed-at-the-limit": ("\u3164\u2800\u034f\ufe0f\U000e0041\u180e\ufeff\u200b\u2060\u115f" * 400)[:4000],
    "zero-width-at-the-limit": "\u200b" * 4000,
    "filler-words-and-newlines": "\u3164\u3164 \u3164\n\u3164\u3164\t\u3164",
    "khitan-small-script-filler": "\U00016fe4\U00016fe4\U00016fe4",
    "khitan-blank-character": "\U00018cff\U00018cff",
    "musical-null-notehead": "\U0001d159\U0001d159",
    "tifinagh-consonant-joiner": "\u2d7f\u2d7f",
}
LEAKS: dict[str, str] = {}
VISIBLE = {
    "thai": "ทำไม ledger-svc ถึงตอบ 502",
    "devanagari-with-zwj": "ledger-svc क्\u200dष 502 क्यों लौटा रहा है?",
    "persian-with-zwnj": "چرا ledger-svc خطای 502 می\u200cدهد؟",
    "hebrew": "למה ledger-svc מחזיר 502?",
    "georgian": "რატომ აბრუნებს ledger-svc 502-ს?",
    "armenian": "Ինչու է ledger-svc-ը վերադարձնում 502",
    "ethiopic": "ledger-svc ለምን 502 ይመልሳል?",
    "cherokee": "ᎦᏙ ᎤᏍᏗ ledger-svc",
    "greek": "Γιατί το ledger-svc επιστρέφει 502;",
    "cyrillic": "Почему ledger-svc отдаёт 502?",
    "tamil": "ledger-svc ஏன் 502 தருகிறது?",
    "sinhala": "ledger-svc 502 ලබා දෙන්නේ ඇයි?",
    "tibetan": "ledger-svc ག་རེ་ཡིན།",
    "mongolian-with-fvs": "ᠶᠠᠭᠤ\u180b ledger-svc",
    "khmer": "ហេតុអ្វី ledger-svc ត្រឡប់ 502?",
    "cjk-ext-b": "𠀋 ledger-svc 502?",
    "emoji-zwj-sequence": "👩\u200d💻 ledger-svc 502?",
    "flag-and-keycap": "🇩🇪 1\ufe0f\u20e3 ledger-svc",
    "one-letter-among-fillers": "\u3164" * 100 + "x" + "\u2800" * 100,
    "combining-mark-on-letter": "e\u0301",
    "hangul-jamo-sequence": "\u1112\u1161\u11ab ledger-svc",
    "ideographic-variation-sequence": "葛\U000e0100 ledger-svc?",
}


async def _diagnose(api: Api, question: str) -> list[pb.DiagnoseResponse]:
    request = pb.DiagnoseRequest(question=question)
    return [m async for m in api.diagnosis.Diagnose(request, timeout=15)]


@ASYNC
@pytest.mark.parametrize("name", [vector(n, n, leak=LEAKS.get(n, "")) for n in INVISIBLE])
async def test_a_question_of_invisible_characters_is_invalid_argument(api: Api, name: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _diagnose(api, INVISIBLE[name])
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value
    assert caught.value.details(), "the status carries details"


@ASYNC
@pytest.mark.parametrize("name", list(VISIBLE))
async def test_an_ordinary_question_in_any_script_is_accepted(api: Api, name: str) -> None:
    responses = await _diagnose(api, VISIBLE[name])
    assert responses and responses[0].run_id, "the server started a run"


@ASYNC
async def test_a_refused_question_creates_no_run(api: Api) -> None:
    before = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=100), timeout=10)
    for question in list(INVISIBLE.values())[:10]:
        with pytest.raises(grpc.aio.AioRpcError):
            await _diagnose(api, question)
    after = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=100), timeout=10)
    assert len(after.runs) == len(before.runs)


def test_every_pinned_leak_names_a_vector() -> None:
    assert set(LEAKS) <= set(INVISIBLE)
