"""Smoke tests of `make bench`: each section's measure function runs at tiny sizes and returns its figures.

Figures are not judged here (the machine decides them); only that they are produced, are numbers where
numbers are due, and that the report reads them into goals. LangGraph is a bench-only dependency: its
part is skipped when it is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import pytest

from bench import capture, crossreplica, endtoend, engine, fanout, gatekeeper, heuristic, largepack, peer, store
from bench.__main__ import main as bench_main
from bench.profiling import format_profile
from bench.report import GOALS, PINNED, check_goals, finite, pinned, render, write_json
from bench.timing import percentile

HAS_LANGGRAPH = importlib.util.find_spec("langgraph") is not None


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and value > 0 and math.isfinite(value)


@pytest.mark.skipif(not HAS_LANGGRAPH, reason="langgraph (the bench extra) is not installed")
async def test_engine_measure_compares_with_langgraph() -> None:
    figures = await engine.measure(ops=5, langgraph_ops=2, repeats=1)
    assert set(figures) == {"engine_run_us", "langgraph_run_us", "engine_vs_langgraph"}
    assert all(_positive(value) for value in figures.values())
    assert figures["engine_vs_langgraph"] == pytest.approx(figures["engine_run_us"] / figures["langgraph_run_us"])


async def test_engine_no_op_run_without_langgraph() -> None:
    seconds = await engine.measure_ours(ops=5, repeats=1)
    assert _positive(seconds)
    summary = await engine.profile(ops=3)
    assert summary["top"] and "graph engine" in summary["what"]
    assert "profile:" in format_profile(summary)


def test_gatekeeper_measure_checks_every_size() -> None:
    """The generated outputs pass the Gatekeeper (R-GK-5) at every size measured."""
    figures: dict[str, Any] = gatekeeper.measure(sizes=(10, 20), bindings_per_round=20, rounds=1)
    assert set(figures["gatekeeper_bindings_per_s"]) == {"10", "20"}
    assert _positive(figures["gatekeeper_vs_floor"]) and _positive(figures["gatekeeper_floor_bindings_per_s"])
    assert figures["gatekeeper_growth_vs_10"]["10"] == 1.0
    assert all(_positive(rate) for rate in figures["gatekeeper_bindings_per_s"].values())
    summary = gatekeeper.profile(size=10, ops=1)
    assert any("gatekeeper" in line["function"] for line in summary["top"])
    assert any(area.startswith("diagnosis_server.") for area in summary["by_area"])


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile([3.0], 99) == 3.0
    assert math.isnan(percentile([], 50))


async def test_heuristic_measure_with_and_without_store() -> None:
    figures = await heuristic.measure(runs=1, repeats=1)
    assert set(figures) >= {
        "heuristic_cpu_ms_per_run",
        "heuristic_cpu_ms_per_run_no_store",
        "engine_noop_cpu_ms_per_run",
    }
    assert all(_positive(value) for value in figures.values())


async def test_endtoend_measure_against_the_noop_stream(tmp_path: Path) -> None:
    figures = await endtoend.measure(
        workdir=tmp_path, concurrencies=(1, 2), diagnose_s=0.05, noop_s=0.05, rounds=1, samples=1, floor_runs=1
    )
    keys = ("diagnose_vs_noop_c1", "diagnose_vs_noop_c2", "diagnose_runs_per_s_c2", "diagnose_cpu_vs_floor_c2")
    for key in (*keys, "noop_streams_per_s_c1", "diagnose_floor_ms_c2"):
        assert _positive(figures[key]), key
    # A Diagnose stream is started + one event a node attempt + the run.
    messages = figures["diagnose_messages_per_stream"]
    assert isinstance(messages, float) and messages >= 3


async def test_fanout_measure_delivers_every_event_live(tmp_path: Path) -> None:
    figures = await fanout.measure(workdir=tmp_path, subscribers=3, agent_sleep_ms=0, rounds=1)
    for key in ("watch_p50_ms", "watch_p99_ms", "noop_watch_p99_ms", "watch_p99_vs_noop"):
        assert _positive(figures[key]), key
    assert figures["watch_p99_vs_noop_rounds"] and all(_positive(v) for v in figures["watch_p99_vs_noop_rounds"])  # type: ignore[attr-defined]
    events = figures["watch_events_per_subscriber"]
    assert isinstance(events, float) and events >= 3
    assert figures["watch_rss_mb"] is None or _positive(figures["watch_rss_mb"])


async def test_store_measure_replays_the_captured_run_against_the_raw_floor() -> None:
    captured = await capture.capture()
    assert captured.replies and captured.invocations and captured.final is not None
    figures = await store.measure(captured, runs=1, rounds=2)
    assert _positive(figures["store_cpu_vs_raw_sqlite"]) and len(figures["store_cpu_vs_raw_sqlite_rounds"]) == 2
    assert figures["store_writes_per_run"] >= 3 + len(captured.invocations)
    summary = await store.profile(captured, runs=1)
    assert summary["top"]


@pytest.mark.skipif(not HAS_LANGGRAPH, reason="langgraph (the bench extra) is not installed")
async def test_peer_measure_against_langgraph_with_sqlite_saver() -> None:
    captured = await capture.capture()
    figures = await peer.measure(captured, runs=1, peer_runs=1, rounds=1)
    for key in ("scripted_vs_langgraph_sqlite", "heuristic_vs_langgraph_sqlite", "langgraph_sqlite_runs_per_s"):
        assert _positive(figures[key]), key
    assert _positive(figures["heuristic_vs_langgraph_sqlite_per_tool_call"])
    assert figures["langgraph_per_tool_call_checkpoint_bytes_per_run"] > figures["langgraph_checkpoint_bytes_per_run"]


@pytest.mark.skipif(not HAS_LANGGRAPH, reason="langgraph (the bench extra) is not installed")
async def test_samework_peer_runs_our_nodes_under_langgraph_and_checkpoints_them(tmp_path: Path) -> None:
    from bench import samework
    from diagnosis_server.store import MemoryStore

    figures = await samework.measure(runs=1, rounds=1)
    assert _positive(figures["samework_vs_langgraph_sqlite"])
    assert _positive(figures["samework_langgraph_runs_per_s"]) and _positive(figures["samework_ours_runs_per_s"])
    # The peer's checkpoints hold what our nodes wrote: the Executor's invocations and the final run record.
    peer = samework.SameWorkPeer(capture.orchestrator(MemoryStore(owner="bench-test")))
    await peer.open(tmp_path / "peer.db")
    try:
        await peer.run_once()
        state = await peer.graph.aget_state({"configurable": {"thread_id": "thread-1"}})
    finally:
        await peer.close()
    outputs = state.values["outputs"]
    assert set(outputs) == {"planner", "executor", "gatekeeper", "verified_input_builder", "verifier", "composer"}
    assert outputs["executor"]["invocations"] and outputs["composer"]["run"]


async def test_live_measure_runs_calls_together_against_one_at_a_time() -> None:
    from bench import live

    # The same run over the pack's own tools: every call it makes, the live run makes through its upstream.
    calls = len((await capture.capture()).invocations)
    assert calls >= 30  # enough calls in flight together for the ratio to mean something
    figures = await live.measure(rounds=1)
    # Each call takes at least 50 ms: one at a time the wall is about their sum; together, well under it.
    assert figures["live_tool_calls_per_run"] == calls
    assert figures["live_sequential_wall_vs_sum_of_calls"] >= 0.95
    assert figures["live_wall_vs_sum_of_calls"] < 0.6
    assert figures["live_sum_of_calls_ms"] >= calls * 50


async def test_largepack_is_a_valid_pack_the_heuristic_run_answers() -> None:
    pack = largepack.large_pack(1)
    assert len(pack.kubernetes.pods) == 200 and len(pack.kubernetes.events) == 5000 and len(pack.logs) == 20_000
    figures = await largepack.measure(runs=1, scales=(1, 2))
    assert _positive(figures["heuristic_large_cpu_ms_per_run"])
    assert set(figures["heuristic_large_analyzer_ms_by_scale"]) == {"1", "2"}
    assert _positive(figures["heuristic_large_analyzer_growth_at_largest"])


async def test_crossreplica_without_postgres_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable() -> Any:
        raise crossreplica.NoPostgres("no initdb here")

    monkeypatch.delenv("DIAGNOSIS_TEST_POSTGRES_URL", raising=False)
    monkeypatch.setattr(crossreplica, "_helper", unavailable)
    figures = await crossreplica.measure(workdir=tmp_path)
    assert figures == {"watch_cross_replica_skipped": "no initdb here"}
    goals = check_goals(figures)
    assert "watch_cross_replica_p99_ms" not in goals  # not measured: neither met nor missed
    assert pinned(figures, goals)["watch_cross_replica_p99_ms"]["skipped"] == "no initdb here"


def test_noop_messages_keep_the_shape_of_a_stream() -> None:
    recorded = [b"started", b"e1", b"e2", b"run"]
    assert endtoend.noop_messages(recorded, 4) == recorded
    assert endtoend.noop_messages(recorded, 6) == [b"started", b"e1", b"e2", b"e1", b"e2", b"run"]
    assert endtoend.noop_messages(recorded, 2) == [b"started", b"run"]


def test_goals_report_missed_and_met(tmp_path: Path) -> None:
    results = {
        "engine_vs_langgraph": 0.005,
        "engine_run_us": 20.0,
        "langgraph_run_us": 4000.0,
        "store_cpu_vs_raw_sqlite": 1.8,
        "store_cpu_vs_raw_sqlite_rounds": [1.7, 1.8, 2.3],
        "store_cpu_ms_per_run": 3.6,
        "raw_sqlite_cpu_ms_per_run": 2.0,
        "diagnose_cpu_vs_floor_c16": 1.6,
        "gatekeeper_bindings_per_s": {"10": 120_000, "1000": 90_000},
        "gatekeeper_growth_vs_10": {"10": 1.0, "1000": 1.2},
        "watch_p99_ms": float("nan"),
        "watch_cross_replica_p99_ms": 20.0,
    }
    goals = check_goals(results)
    assert set(goals) == {goal.name for goal in GOALS}
    assert goals["engine_vs_langgraph"]["met"] is True
    assert goals["store_cpu_vs_raw_sqlite"]["met"] is True
    assert goals["diagnose_cpu_vs_floor_c16"]["met"] is False
    assert goals["gatekeeper_bindings_per_s"]["measured"] == 90_000  # the slowest size decides
    assert goals["gatekeeper_growth_at_1000"]["met"] is True
    assert goals["watch_p99_ms"]["met"] is False  # NaN is never a pass
    assert goals["heuristic_cpu_ms_per_run"]["measured"] is None
    table = pinned(results, goals)
    assert set(table) == {key for key, *_ in PINNED}
    assert table["store_cpu_vs_raw_sqlite"]["spread"] == [1.7, 2.3]
    assert table["store_cpu_vs_raw_sqlite"]["baseline"]["value"] == 2.0
    text = render(results, goals, {})
    assert "MISSED" in text and "met" in text and "LangGraph" in text and "raw sqlite3" in text
    path = tmp_path / "out" / "latest.json"
    write_json(path, finite({**results, "goals": goals, "pinned": table}))
    document = json.loads(path.read_text())
    assert document["watch_p99_ms"] is None
    assert document["goals"]["diagnose_cpu_vs_floor_c16"]["met"] is False


def test_main_refuses_an_unknown_section(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench_main(["--only", "nonsense"])
    assert "unknown section" in capsys.readouterr().err
