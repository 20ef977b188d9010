"""Round 3, class 6: a question of unused code points that show nothing is refused; a new script's question is not.

Why: "only invisible" must mean every code point of Unicode's Default_Ignorable, White_Space, control, format and
filler classes, not a hand list, and the check must not refuse a script it cannot name. The vectors differ from
``test_invisible_questions.py`` and the earlier suites: C0 and C1 controls other than tab, line feed and carriage
return, the spaces U+2000..U+200A not used before, bidi embeddings, overrides and isolates, unassigned and cancel
tags, variation selectors 2 to 14 and the supplement's unassigned tail, musical beam and tie controls, Egyptian
format controls and blanks of Unicode 15, noncharacters, Sutton SignWriting fill modifiers with nothing to sit on,
and mixes of them. Accepted: questions in Javanese, Ol Chiki, Vai, Yi, Lisu, Malayalam, Kannada, Odia, Lao,
Myanmar, Syriac, Thaana, N'Ko, syllabics, Tifinagh, Adlam, emoji, and in scripts of Unicode 15 and 16.
"""

from __future__ import annotations

import grpc
import grpc.aio
import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from tests.support.api import Api

from .common import vector
from .test_invisible_questions import _diagnose

ASYNC = pytest.mark.asyncio(loop_scope="module")

INVISIBLE = {
    "next-line-alone": "\u0085",
    "vertical-tab-and-form-feed": "\x0b\x0c",
    "information-separators": "\x1c\x1d\x1e\x1f",
    "c1-controls": "\x80\x81\x9f",
    "null-and-delete": "\x00\x7f",
    "en-quad-to-six-per-em-spaces": "\u2000\u2001\u2002\u2004\u2005\u2006",
    "thin-and-hair-spaces": "\u2009\u200a\u2009",
    "bidi-embeddings-and-overrides": "\u202b\u202d\u202e\u202c",
    "bidi-rli-and-fsi": "\u2067\u2068\u2069",
    "tag-space-and-cancel": "\U000e0020\U000e007f",
    "unassigned-tags": "\U000e0000\U000e0002\U000e001f",
    "language-tag-alone": "\U000e0001",
    "variation-selectors-2-to-14": "".join(chr(c) for c in range(0xFE01, 0xFE0E)),
    "variation-selector-supplement-tail": "\U000e01f0\U000e0abc",
    "musical-beams-and-ties": "\U0001d175\U0001d176\U0001d177\U0001d178\U0001d179",
    "egyptian-unicode-15-controls": "\U00013439\U0001343a\U0001343f",
    "egyptian-full-and-half-blank": "\U00013441\U00013442",
    "noncharacters": "\ufdd0\ufdef\ufffe\uffff",
    "signwriting-fill-modifiers-alone": "\U0001da9b\U0001da9c\U0001da9f",
    "zero-width-space-between-spaces-at-limit": (" \u200b" * 2000)[:4000],
    "hangul-filler-with-selectors": "\u3164\ufe0f\u3164\U000e0100",
    "braille-blank-with-cgj": "\u2800\u034f\u2800",
    "fillers-and-invisible-operators": "\u115f\u2063\u1160\u206f\uffa0",
    "line-separators-around-filler": "\u2028\u3164\u2029",
    "mongolian-selectors-run": "\u180b\u180c\u180d" * 30,
    "halfwidth-filler-and-ideographic-space": "\uffa0\u3000\uffa0",
    "khitan-filler-and-null-notehead": "\U00016fe4\U0001d159\U00016fe4",
}
LEAKS: dict[str, str] = {}
VISIBLE = {
    "javanese": "ꦥꦸꦤꦥ ledger-svc 502?",
    "ol-chiki": "ᱪᱮᱫᱟᱜ ledger-svc 502?",
    "vai": "ꕉꕜꕮ ledger-svc 502?",
    "yi": "ꀋꉬ ledger-svc 502?",
    "lisu": "ꓪꓬ ledger-svc 502?",
    "malayalam": "ledger-svc എന്തുകൊണ്ട് 502 നൽകുന്നു?",
    "kannada": "ledger-svc ಏಕೆ 502 ನೀಡುತ್ತಿದೆ?",
    "odia": "ledger-svc କାହିଁକି 502 ଦେଉଛି?",
    "lao": "ເປັນຫຍັງ ledger-svc ຕອບ 502?",
    "myanmar": "ledger-svc ဘာကြောင့် 502 ပြန်ပေးသလဲ",
    "syriac": "ܠܡܢܐ ledger-svc 502?",
    "thaana": "ledger-svc 502 ދޭނީ ކީއްވެ؟",
    "nko": "ߡߎ߲߬ ledger-svc 502?",
    "syllabics": "ᓱᒻᒪᑦ ledger-svc 502?",
    "tifinagh": "ⵎⴰⵅ ledger-svc 502?",
    "adlam": "𞤸𞤮𞤲𞤣𞤭 ledger-svc 502?",
    "emoji-only": "🔥❓",
    "single-cjk-ideograph": "為",
    "kawi-only": "\U00011f04\U00011f12\U00011f20",
    "nag-mundari-only": "\U0001e4d0\U0001e4d5\U0001e4d8",
    "garay-only": "\U00010d50\U00010d51\U00010d52",
    "cjk-extension-h-only": "\U00031350\U00031351",
}
# Vectors refused today (a strict xfail each): none (unicodedata2's tables know the scripts added since 14).
REFUSED: dict[str, str] = {}


@ASYNC
@pytest.mark.parametrize("name", [vector(n, n, leak=LEAKS.get(n, "")) for n in INVISIBLE])
async def test_a_question_of_code_points_that_show_nothing_is_invalid_argument(api: Api, name: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _diagnose(api, INVISIBLE[name])
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value
    assert caught.value.details(), "the status carries details"


@ASYNC
@pytest.mark.parametrize("name", [vector(n, n, refused=REFUSED.get(n, "")) for n in VISIBLE])
async def test_an_ordinary_question_in_a_script_not_asked_before_is_accepted(api: Api, name: str) -> None:
    responses = await _diagnose(api, VISIBLE[name])
    assert responses and responses[0].run_id, "the server started a run"


@ASYNC
async def test_none_of_the_refused_questions_creates_a_run(api: Api) -> None:
    before = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=100), timeout=10)
    for question in INVISIBLE.values():
        with pytest.raises(grpc.aio.AioRpcError):
            await _diagnose(api, question)
    after = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=100), timeout=10)
    assert len(after.runs) == len(before.runs)


def test_every_pinned_vector_names_a_vector() -> None:
    assert set(LEAKS) <= set(INVISIBLE)
    assert set(REFUSED) <= set(VISIBLE)
