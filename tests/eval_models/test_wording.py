"""The case writer's own rules: an untruth changes a code or a count, never a time or an address; a retold
quantity is the same quantity; a quote is cut at a clause; a JSON log line is quoted by its error; the cases are
what the writer writes from the packs."""

from __future__ import annotations

import asyncio
import json

import pytest

from diagnosis.v1 import contracts_pb2
from tests.eval_models.harvest import Fact, Leaf
from tests.eval_models.make_cases import CASES_DIR, case_text, make_case
from tests.eval_models.runner import _claim_ids
from tests.eval_models.wording import change_code, clause, json_message, mebibytes, respell


@pytest.mark.parametrize(
    ("text", "changed"),
    [
        ("Readiness probe failed: HTTP probe failed with statuscode: 503", "statuscode: 502"),
        ("request timed out after 30000ms", "after 20000ms"),
        ("0/5 nodes are available: 3 Insufficient cpu", "0/5 nodes are available: 4 Insufficient cpu"),
    ],
)
def test_an_untruth_changes_a_code_or_a_count(text: str, changed: str) -> None:
    result = change_code(text, seed=0)
    assert result is not None and changed in result[0] and result[0] != text


@pytest.mark.parametrize(
    "text",
    [
        "2025-12-15 09:38:39,000 INFO tax.api: ok",
        "dial tcp 10.40.0.15:443: i/o timeout",
        "pod=cart-svc-pbnrd5kngw-ggnwj_shop(df98e762-1e3e-5844)",
        "lookup payment-gateway.payments.svc.cluster.local on 10.96.0.10:53",
    ],
)
def test_an_untruth_never_changes_a_time_an_address_or_an_identifier(text: str) -> None:
    assert change_code(text, seed=0) is None


def test_a_retold_quantity_is_the_same_quantity() -> None:
    assert respell("request timed out after 30000ms") == ("request timed out after 30 s", ["another unit"])
    assert respell("request is 256Mi, limit 2Gi") == ("request is 256 MiB, limit 2 GiB", ["another unit"] * 2)
    assert respell("took 250ms") == ("took 0.25 s", ["another unit"])
    assert mebibytes("2Gi") == "2048 MiB" and mebibytes("384Mi") == "384 MiB" and mebibytes("500m") is None


def test_a_long_quote_is_cut_at_a_clause_never_mid_word() -> None:
    line = "Failed to pull image " + "x" * 60 + ": failed to pull and unpack image " + "y" * 100
    cut = clause(line)
    assert len(cut) <= 160 and line.startswith(cut) and cut.endswith("x")
    assert clause("short line") == "short line"


def test_a_json_log_line_is_quoted_by_its_error() -> None:
    line = json.dumps({"level": "fatal", "msg": "invalid configuration", "error": "required key X missing value"})
    assert json_message(line) == "required key X missing value"
    assert json_message(json.dumps({"level": "info", "msg": "listening"})) == "listening"
    assert json_message("plain text") == ""


def test_an_answer_names_a_claim_by_its_id_or_its_position() -> None:
    item = contracts_pb2.ComposedItem(claim_ids=["#2", "c1", "#9"])
    assert _claim_ids(item, ["c1", "c2"]) == {"c2", "c1", "#9"}


def test_a_fact_reads_its_roles() -> None:
    fact = Fact("event", {"reason": Leaf("inv-0001", "k8s.events", "/events/0/reason", "BackOff")})
    assert fact.has("reason") and not fact.has("message") and fact.text("reason") == "BackOff"


@pytest.mark.parametrize("name", ["cart-pods-restarting", "identity-unknown-authority"])
def test_a_case_file_is_what_the_writer_writes_from_the_pack(name: str) -> None:
    case = asyncio.run(make_case(name))
    assert case is not None
    assert case_text(case) == (CASES_DIR / f"{name}.json").read_text(encoding="utf-8")
