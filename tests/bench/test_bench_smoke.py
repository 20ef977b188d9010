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

from bench import endtoend, engine, fanout, gatekeeper, heuristic
from bench.__main__ import main as bench_main
from bench.profiling import format_profile
from bench.report import GOALS, check_goals, finite, render, write_json
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
    figures = gatekeeper.measure(sizes=(10, 20), bindings_per_round=20, rounds=1)
    assert set(figures["gatekeeper_bindings_per_s"]) == {"10", "20"}
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
        workdir=tmp_path, concurrencies=(1, 2), diagnose_s=0.05, noop_s=0.05, rounds=1, samples=1
    )
    for key in ("diagnose_vs_noop_c1", "diagnose_vs_noop_c2", "diagnose_runs_per_s_c2", "noop_streams_per_s_c1"):
        assert _positive(figures[key]), key
    # A Diagnose stream is started + one event a node attempt + the run.
    messages = figures["diagnose_messages_per_stream"]
    assert isinstance(messages, float) and messages >= 3


async def test_fanout_measure_delivers_every_event_live(tmp_path: Path) -> None:
    figures = await fanout.measure(workdir=tmp_path, subscribers=3, agent_sleep_ms=0, rounds=1)
    for key in ("watch_p50_ms", "watch_p99_ms", "noop_watch_p99_ms", "watch_p99_vs_noop"):
        assert _positive(figures[key]), key
    events = figures["watch_events_per_subscriber"]
    assert isinstance(events, float) and events >= 3
    assert figures["watch_rss_mb"] is None or _positive(figures["watch_rss_mb"])


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
        "diagnose_vs_noop_c16": 0.01,
        "gatekeeper_bindings_per_s": {"10": 120_000, "1000": 90_000},
        "gatekeeper_growth_vs_10": {"10": 1.0, "1000": 1.2},
        "watch_p99_ms": float("nan"),
    }
    goals = check_goals(results)
    assert set(goals) == {goal.name for goal in GOALS}
    assert goals["engine_vs_langgraph"]["met"] is True
    assert goals["diagnose_vs_noop_c16"]["met"] is False
    assert goals["gatekeeper_bindings_per_s"]["measured"] == 90_000  # the slowest size decides
    assert goals["gatekeeper_growth_at_1000"]["met"] is True
    assert goals["watch_p99_ms"]["met"] is False  # NaN is never a pass
    assert goals["heuristic_cpu_ms_per_run"]["measured"] is None
    text = render(results, goals, {})
    assert "MISSED" in text and "met" in text and "LangGraph" in text
    path = tmp_path / "out" / "latest.json"
    write_json(path, finite({**results, "goals": goals}))
    document = json.loads(path.read_text())
    assert document["watch_p99_ms"] is None
    assert document["goals"]["diagnose_vs_noop_c16"]["met"] is False


def test_main_refuses_an_unknown_section(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench_main(["--only", "nonsense"])
    assert "unknown section" in capsys.readouterr().err
