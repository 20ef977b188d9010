"""Full-graph runs over packs written for these tests in the corpus TOML format (``written/*.toml``, read by
``tests/incidents/corpus/reader.py``): the question's words, the hosts a failing line names, the series a symptom
is read from, and the rules that make a finding a cause. Each pack runs through the Orchestrator with the heuristic
provider over the tools the server gives a recorded pack; each test asserts the answer's summary or cause (R-A-2,
R-V-1, R-C-1).
"""

from __future__ import annotations

from pathlib import Path

from diagnosis.v1 import run_pb2
from tests.agents.heuristic._graph_runs import run_pack
from tests.incidents.corpus.reader import read

_TRUTH = """
[truth]
kind = "written_by_a_test"
summary = "not judged: each test asserts its own outcome"
"""


WRITTEN = Path(__file__).parent / "written"


def _pack_text(name: str) -> str:
    return (WRITTEN / f"{name}.toml").read_text(encoding="utf-8")


def _run(tmp_path: Path, name: str, text: str) -> run_pb2.DiagnosisRun:
    path = tmp_path / f"{name}.toml"
    path.write_text(text + _TRUTH, encoding="utf-8")
    run, _ = run_pack(read(path))
    assert run.status == run_pb2.RUN_STATUS_SUCCESS, run.failure_reason
    return run


def test_an_ordinary_hyphenated_word_beside_a_workload_name_part_is_not_answered_as_unknown(tmp_path: Path) -> None:
    """ "member sign-ups": "sign-ups" names no workload and "member" names members-api and members-pg by a part;
    the answer is the database at its connection limit, not "no data about sign-ups"."""
    run = _run(tmp_path, "members-sign-ups", _pack_text("members-sign-ups"))
    assert "no data about" not in run.answer_text, run.answer_text
    assert run.answer.summary.startswith("Likely cause"), run.answer_text
    assert "members-pg" in run.answer.likely_cause.text


def test_an_unknown_hyphenated_name_is_still_answered_as_unknown(tmp_path: Path) -> None:
    """The same data, asked about a workload it does not know (no other word names a known one): no data."""
    asked = "Why is loyalty-ledger rejecting writes?"
    text = _pack_text("members-sign-ups").replace("Why are member sign-ups failing with 500s?", asked)
    run = _run(tmp_path, "members-unknown", text)
    assert "There is no data about loyalty-ledger" in run.answer_text, run.answer_text


def test_a_service_name_of_a_namespace_its_workload_left_is_the_callers_cause(tmp_path: Path) -> None:
    """push-dispatcher resolves ``apns-relay.messaging.svc.cluster.local`` (NXDOMAIN) while apns-relay's pods run
    in messaging-v2: the caller is configured with a name that does not exist, not "apns-relay cannot be resolved"
    (apns-relay's own Service is not shown to be gone)."""
    run = _run(tmp_path, "push-misplaced-service", _pack_text("push-misplaced-service"))
    assert run.answer.summary.startswith("Likely cause"), run.answer_text
    cause = run.answer.likely_cause.text
    assert cause.startswith("push-dispatcher calls a host name that does not exist"), cause
    assert "apns-relay.messaging.svc.cluster.local" in cause
    assert "apns-relay cannot be resolved" not in run.answer_text


def test_an_applications_own_word_lookup_names_no_workload(tmp_path: Path) -> None:
    """ "basket lookup failed: Error 111 connecting to 10.100.7.9:6379": the refused call names an address only;
    no statement makes a workload of the word after "lookup"."""
    run = _run(tmp_path, "basket-session-lookup", _pack_text("basket-session-lookup"))
    assert "basket-api calls fail" in run.answer_text, run.answer_text
    assert "calls to failed" not in run.answer_text, run.answer_text
    assert "failed cannot" not in run.answer_text


def test_a_named_latency_series_is_stated_as_latency_with_its_name_and_unit(tmp_path: Path) -> None:
    """orders-api's calls to fraud-check exceed their deadline while fraud-check's
    ``grpc_server_handling_seconds:p99`` rose: the cause says "latency", the exact series name and the values in
    seconds, as the name states them, and the Verifier keeps it."""
    run = _run(tmp_path, "fraud-check-slow", _pack_text("fraud-check-slow"))
    assert run.answer.summary.startswith("Likely cause"), run.answer_text
    cause = run.answer.likely_cause.text
    assert "fraud-check latency (grpc_server_handling_seconds:p99) rose from 0.11 s to 1.66 s" in cause, cause


def test_a_pool_timeout_and_its_own_pool_series_at_its_size_make_the_pool_the_cause(tmp_path: Path) -> None:
    """HikariCP's "Connection is not available" in invoice-api's log while its own pool series show 8 of 8 active
    and requests waiting; invoice-db is far from its limit: the pool is the likely cause (not only a possible
    direction), and the pool's series are confirmed facts beside it."""
    run = _run(tmp_path, "invoice-api-hikari", _pack_text("invoice-api-hikari"))
    assert run.answer.summary.startswith("Likely cause"), run.answer_text
    cause = run.answer.likely_cause.text
    assert cause.startswith("invoice-api runs out of connections in its connection pool"), cause
    facts = [item.text for item in run.answer.confirmed_facts]
    assert any("hikaricp_connections_active reached 8 against hikaricp_connections_max 8" in f for f in facts), facts


def test_a_data_store_that_cannot_load_its_files_at_start_is_the_crash_loops_cause(tmp_path: Path) -> None:
    """orders-pg crash-loops and its previous log says "invalid checkpoint record" before its startup process
    aborts: the crash loop's stated reason is that it cannot load its files from disk, quoted."""
    run = _run(tmp_path, "orders-pg-checkpoint", _pack_text("orders-pg-checkpoint"))
    assert run.answer.summary.startswith("Likely cause"), run.answer_text
    cause = run.answer.likely_cause.text
    assert cause.startswith("orders-pg cannot load its files from disk"), cause
    assert "checkpoint record" in cause
