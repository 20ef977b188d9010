"""A question made only of invisible characters (fillers, blanks, joiners, selectors, tags, format
characters) is INVALID_ARGUMENT through a real gRPC server, with details; a question with one visible word in any
script, padded with the same characters, is accepted."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import grpc.aio
import pytest
import pytest_asyncio

from diagnosis.v1 import diagnosis_service_pb2 as pb
from tests.support import settings as support_settings
from tests.support.api import Api, api_servers

from .vectors import param

INVISIBLE = {
    "hangul-fillers": "\u3164\u115f\u1160\uffa0",
    "hangul-filler-words": "\u3164 \u3164\u3164 \u3164",
    "braille-blank": "\u2800\u2800\u2800",
    "cgj-variation-selectors": "\u034f\ufe00\ufe0f\u034f\ufe0e",
    "variation-selectors-supplement": "\U000e0100\U000e0101\U000e01ef",
    "tag-characters": "".join(chr(0xE0000 + ord(c)) for c in "why is ledger down"),
    "mongolian-vowel-separator": "\u180e\u180e",
    "bom": "\ufeff\ufeff\ufeff",
    "zero-widths": "\u200b\u200c\u200d\u2060",
    "bidi-marks": "\u200e\u200f\u202a\u202c\u2066\u2069",
    "khmer-inherent-vowels": "\u17b4\u17b5",
    "soft-hyphens-spaces": "\u00ad \u2007\u202f\u3000\u00a0",
    "mongolian-free-selectors": "\u180b\u180c\u180d\u180f",
    "halfwidth-hangul-filler": "\uffa0\uffa0",
    "combining-only": "\u034f\u200d\u034f",
    "interlinear-annotation": "\ufff9\ufffa\ufffb",
    "mixed-everything": "\u3164\u2800\u034f\ufe0f\U000e0041\u180e\ufeff\u200b \t\n",
}
LEAKS: dict[str, str] = {}
VISIBLE = {
    "latin": "why is ledger-svc returning 502s?",
    "hangul": "원장 서비스가 왜 502를 반환합니까?",
    "cjk": "为什么账本服务返回502？",
}


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Api]:
    """One real server for the module, its settings free of the shell's DIAGNOSIS_* variables."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        support_settings.clean_environment(monkeypatch)
        folder = tmp_path_factory.mktemp("invisible")
        async with api_servers(lambda _: folder / "api.db") as factory:
            yield await factory()


async def _diagnose(api: Api, question: str) -> list[pb.DiagnoseResponse]:
    request = pb.DiagnoseRequest(question=question)
    return [m async for m in api.diagnosis.Diagnose(request, timeout=10)]


@pytest.mark.parametrize("question", [param(k, v, leak=LEAKS.get(k, "")) for k, v in INVISIBLE.items()])
async def test_a_question_of_invisible_characters_is_invalid_argument(api: Api, question: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _diagnose(api, question)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value
    assert caught.value.details(), "the status carries details"


@pytest.mark.parametrize("script", list(VISIBLE))
async def test_a_visible_question_padded_with_them_is_accepted(api: Api, script: str) -> None:
    question = INVISIBLE["hangul-fillers"] + VISIBLE[script] + INVISIBLE["cgj-variation-selectors"]
    responses = await _diagnose(api, question)
    assert responses, "the server answered"
