"""A latency with no failure anywhere, through the whole graph: the slow workload's dependencies are read down the
topology and the deepest slow one is the likely cause; with an error anywhere, or nothing slow below, it is not
(issue: answer what real systems show; R-V-4)."""

from __future__ import annotations

from diagnosis.v1 import run_pb2
from tests.agents.heuristic._graph_runs import run_pack
from tests.incidents.corpus.kit import Pack

FLAT, RISEN = [120.0] * 20, [120.0] * 8 + [2400.0, 2600.0, 2500.0, 2700.0] * 3


def _pack(name: str, *, db: list[float], errors: bool = False) -> Pack:
    p = Pack(
        name,
        title="Catalog pages slow",
        description="web calls search-api, which reads search-db.",
        question="Why are catalog pages slow? There are no errors.",
        start="2025-06-02T10:00:00Z",
        minutes=20,
    )
    p.service("web", "http", namespace="shop", depends_on=["search-api", "fonts-cdn"])
    p.service("search-api", "http", namespace="shop", depends_on=["search-db"])
    p.service("search-db", "database", namespace="shop")
    p.service("fonts-cdn", "external")
    p.metric("http_request_duration_p99_ms", "web", "ms", RISEN)
    p.metric("http_requests_error_rate", "web", "ratio", [0.3 if errors and i > 8 else 0.001 for i in range(20)])
    p.metric("query_latency_p99_ms", "search-db", "ms", db)
    for minute in range(1, 20, 3):
        p.log(minute, "search-api", "INFO", f"search ok hits=12 q=sku-{minute}")
    p.truth(kind="slow_queries", service="search-db", summary="search-db's queries slowed; its callers follow.")
    return p


def test_the_deepest_slow_dependency_is_the_likely_cause() -> None:
    run, calls = run_pack(_pack("slow-chain", db=RISEN))
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    cause = run.answer.summary
    assert cause.startswith("Likely cause") and "search-db" in cause and "latency" in cause, run.answer_text
    read = {(c.tool_name, c.arguments["service"]) for c in calls if "service" in c.arguments}
    # read two hops down; the external service is described, never read
    assert ("topology.dependencies", "search-db") in read and ("metrics.query", "search-db") in read
    assert ("logs.search", "fonts-cdn") not in read


def test_no_slow_dependency_or_an_error_rate_names_no_dependency() -> None:
    flat, _ = run_pack(_pack("slow-alone", db=FLAT))
    assert "search-db" not in flat.answer.summary
    failing, _ = run_pack(_pack("slow-and-failing", db=RISEN, errors=True))
    assert "search-db" not in failing.answer.summary, failing.answer.summary
