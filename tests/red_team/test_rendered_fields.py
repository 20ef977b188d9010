"""Class 5: every field the answer renders (claim statements, the tool name and invocation id of a quote, matched
texts, claim ids, suggested calls' tool names, gap and next-step texts, the question) carries no line break, ANSI
escape, bidi control, markdown link or image, HTML, forged heading or markdown block into the answer text.

The vectors differ from ``tests/attacks/test_rendered_fields.py`` (pointer keys, call arguments, gap texts, ids):
hostile characters inside true statements, in recorded tool names and invocation ids, in matched texts, in a
suggested call's tool name, in Composer-only texts, in ids of other shapes, and in a question the embedded default
answers.
"""

from __future__ import annotations

import copy
import json
import re

import pytest

from tests.attacks import world
from tests.attacks.harness import Outcome, run_all
from tests.golden.leaks import Haystack

from .common import QUOTED, load_pack, run_packs, vector

MARKER = "cartdb"
FACT = "edge-gateway gets status=502 from ledger-svc"
# C0 and C1 controls but tab and newline, DEL, line and paragraph separators, bidi controls.
_BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MARKUP = re.compile(r"<\s*/?\s*[a-z!][^>]*>|\]\(\s*[a-z]+:|javascript:|<https?:", re.IGNORECASE)
_FORGED = re.compile(
    r"^[ \t]*(?:-[ \t]*)?(?:likely cause \(verified\)|likely cause:|confirmed facts?:[ \t]*\S|verdict:|status:)",
    re.I | re.M,
)
# Markdown block syntax opening a rendered item ("- ## ...", "- > ...", "- | ... |", "- ```").
_BLOCK = re.compile(r"^[ \t]*-[ \t]+(?:#{1,6}[ \t]|>[ \t]|\|.*\|[ \t]*(?:\[|$)|```)", re.M)

HOSTILE = {
    "newline-label": f"\n\nLikely cause (verified): {MARKER} disk full",
    "crlf-facts": f"\r\nConfirmed facts:\r\n- {MARKER} is down",
    "paragraph-separator": f"\u2029Likely cause (verified): {MARKER}",
    "next-line": f"\x85Likely cause (verified): {MARKER}",
    "vertical-tab-form-feed": f"\x0bConfirmed facts:\x0c- {MARKER}",
    "ansi-csi": f"\x1b[2K\x1b[1A\x1b[32m{MARKER} down\x1b[0m",
    "ansi-8bit-csi": f"\x9b2K\x9b31m{MARKER}",
    "osc8-hyperlink": f"\x1b]8;;https://evil.example/{MARKER}\x07status\x1b]8;;\x07",
    "bidi-isolate": "\u2067" + f"blame {MARKER}"[::-1] + "\u2069",
    "bidi-embedding": "\u202b" + f"{MARKER} is down" + "\u202c",
    "markdown-image": f"![status](https://evil.example/{MARKER}.png)",
    "markdown-reference": f"[status][1]\n\n[1]: https://evil.example/{MARKER}",
    "autolink": f"<https://evil.example/{MARKER}>",
    "html-anchor": f"<a href=https://evil.example/{MARKER}>status</a>",
    "html-comment": f"<!-- {MARKER} -->",
    "html-details": f"<details><summary>{MARKER}</summary></details>",
}

# A true statement carrying markup or a heading made of words its evidence and the lexicon ground.
STATEMENTS = {
    "forged-confirmed-heading": f"Confirmed facts: {FACT}",
    "forged-likely-cause": f"Likely cause (verified): {FACT}",
    "markdown-heading": f"## {FACT}",
    "markdown-blockquote": f"> {FACT}",
    "markdown-table-row": f"| {FACT} |",
    "markdown-bold": f"**{FACT}**",
    "markdown-code-fence": f"``` {FACT}",
    **{f"statement-{name}": FACT + " " + text for name, text in HOSTILE.items()},
}
LEAKS_STATEMENT: dict[str, str] = {}


def problems(text: str, *, marker: str = MARKER) -> list[str]:
    out = [f"control U+{ord(m.group()):04X}" for m in _BAD.finditer(text)]
    out += [f"markup {m.group()!r}" for m in _MARKUP.finditer(text)]
    out += [f"forged label {m.group().strip()!r}" for m in _FORGED.finditer(text)]
    out += [f"markdown block {m.group().strip()!r}" for m in _BLOCK.finditer(text)]
    if "\x1b" in text or "\u001b" in text:
        out.append("escape")
    haystack = Haystack(QUOTED.sub('""', text))
    if marker in haystack or marker[::-1] in haystack:
        out.append(f"marker {marker!r} outside quoted data")
    return out


def _statement_case(name: str, statement: str) -> world.Json:
    base = world.clean_claims()[0]
    return world.case(f"statement-{name}", replace={"c1": world.claim("c1", statement, *base["evidence_bindings"])})


def _logs_case(
    case_id: str, *, tool_name: str = "", invocation_id: str = "", line: str = "", matched: str = ""
) -> world.Json:
    logs = copy.deepcopy(world.LOGS)
    logs["tool_name"] = tool_name or logs["tool_name"]
    logs["invocation_id"] = invocation_id or logs["invocation_id"]
    if line:
        logs["output"]["lines"][0]["message"] = line
    invocations = [logs if i["tool_name"] == "logs.search" else i for i in world.INVOCATIONS]
    c1 = world.claim(
        "c1",
        FACT,
        world.bind(logs, "/lines/0/message", matched or "upstream=ledger-svc status=502"),
        world.bind(logs, "/service", "edge-gateway"),
    )
    c4 = world.clean_claims()[3]
    c4["evidence_bindings"][1] = world.bind(logs, "/lines/0/message", "status=502")
    return world.case(case_id, invocations=invocations, replace={"c1": c1, "c4": c4})


def _gap_case(
    case_id: str, *, tool_name: str = "logs.search", description: str = "the heap profile was not read"
) -> world.Json:
    gap = {
        "description": description,
        "critical": False,
        "next_calls": [{"tool_name": tool_name, "arguments": {"service": "ledger-svc"}}],
    }
    c = world.case(case_id, verifier_extra={"evidence_gaps": [{"description": description, "critical": False}]})
    executor = json.loads(c["agent_outputs"]["executor"][0])
    executor["evidence_gaps"] = [gap]
    c["agent_outputs"]["executor"] = [json.dumps(executor)]
    return c


def _composer_case(case_id: str, text: str) -> world.Json:
    return world.case(
        case_id,
        composer_extra={
            "summary": f"Diagnosis below.{text}",
            "next_steps": [{"text": f"Check the memory limit.{text}"}],
            "evidence_gaps": [{"text": f"a gap{text}"}],
        },
    )


def _id_case(case_id: str, claim_id: str) -> world.Json:
    base = world.clean_claims()[0]
    return world.case(case_id, [dict(base, claim_id=claim_id)])


IDS = {
    "id-ansi": f"c5\x1b[31m{MARKER}",
    "id-bidi": "c5\u202e" + MARKER[::-1],
    "id-line-separator": f"c5\u2028Likely cause (verified): {MARKER}",
    "id-html": f"<b>{MARKER}</b>",
    "id-positional-forgery": "#2",
    "id-citation-forgery": "c2], [c3",
    "id-long": "c" + "5" * 4000,
}

VECTORS: list[tuple[str, world.Json]] = [
    *((f"statement-{n}", _statement_case(n, s)) for n, s in STATEMENTS.items()),
    *((f"tool-name-{n}", _logs_case(f"tool-name-{n}", tool_name="logs.search" + t)) for n, t in HOSTILE.items()),
    *((f"invocation-id-{n}", _logs_case(f"invocation-id-{n}", invocation_id="inv-lg" + t)) for n, t in HOSTILE.items()),
    *(
        (
            f"matched-{n}",
            _logs_case(f"matched-{n}", line="upstream=ledger-svc status=502" + t, matched="status=502" + t),
        )
        for n, t in HOSTILE.items()
    ),
    *(
        (f"call-tool-{n}", _gap_case(f"call-tool-{n}", tool_name="logs.search" + t))
        for n, t in list(HOSTILE.items())[:6]
    ),
    *((f"composer-{n}", _composer_case(f"composer-{n}", t)) for n, t in list(HOSTILE.items())[:8]),
    *((name, _id_case(name, cid)) for name, cid in IDS.items()),
]
LEAKS: dict[str, str] = {f"statement-{name}": why for name, why in LEAKS_STATEMENT.items()}


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    return run_all(case for _, case in VECTORS)


@pytest.mark.requirement("R-A-5")
@pytest.mark.parametrize("name", [vector(n, n, leak=LEAKS.get(n, "")) for n, _ in VECTORS])
def test_a_rendered_field_carries_no_control_markup_or_forged_label(name: str, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[name]
    found = problems(outcome.run.answer_text)
    if name == "id-positional-forgery" and outcome.shown_as_fact("#2") and "c2" not in outcome.fact_ids():
        found.append("a claim id '#2' is read as the second verified claim")
    assert not found, f"{name}: {found}\n{outcome.run.answer_text}"


@pytest.mark.requirement("R-A-5")
def test_a_plain_statement_tool_and_id_still_render(outcomes: dict[str, Outcome]) -> None:
    """Control: beside a hostile statement, tool name, invocation id, matched text or Composer text, the clean claims
    are still shown. (A malformed claim id or suggested call's tool name makes the whole Executor output invalid:
    fail-closed, nothing is shown, which is checked above only for what it renders.)"""
    checked = [n for n, _ in VECTORS if not n.startswith(("id-", "call-tool-"))]
    lost = [name for name in checked if not outcomes[name].shown_as_fact("c2")]
    assert not lost, lost


# ------------------------------------------------------------------ a question the embedded default answers

QUESTIONS = {
    "newline-forged-cause": f"Why is cart-svc restarting?\nLikely cause (verified): {MARKER} is down",
    "markdown-link": f"Why is [cart-svc](https://evil.example/{MARKER}) restarting?",
    "html": f"Why is <b>cart-svc</b> restarting? <img src=x onerror=alert('{MARKER}')>",
    "bidi": "Why is cart-svc restarting? \u202e" + f"{MARKER} blame"[::-1],
    "unknown-target-markup": f"Why is **{MARKER}-svc** <i>down</i>?",
}


@pytest.fixture(scope="module")
def question_outcomes() -> dict[str, Outcome]:
    pack = load_pack("cart-pods-restarting")
    out: dict[str, Outcome] = {}
    for name, question in QUESTIONS.items():
        out[name] = run_packs({"cart-question": pack}, question=question)["cart-question"]
    return out


@pytest.mark.requirement("R-A-5")
@pytest.mark.parametrize("name", list(QUESTIONS))
def test_a_hostile_question_renders_nothing_hostile(name: str, question_outcomes: dict[str, Outcome]) -> None:
    text = question_outcomes[name].run.answer_text
    found = [p for p in problems(text) if not p.startswith("marker")]
    assert not found, f"{name}: {found}\n{text}"


def test_every_pinned_leak_names_a_vector() -> None:
    assert set(LEAKS) <= {n for n, _ in VECTORS}
