"""The benchmark report: goals checked against the figures, the table, and var/bench/latest.json."""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.profiling import ProfileSummary, format_profile

Results = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Goal:
    name: str
    section: str
    # How the figure is read from the results (None: the section did not produce it).
    read: Callable[[Results], float | None]
    compare: str  # "<=", "<" or ">="
    target: float
    unit: str = ""
    # Measured only where its dependency is (a PostgreSQL server): absent, it is reported as not measured.
    optional: bool = False

    @property
    def text(self) -> str:
        return f"{self.compare} {self.target:g}{self.unit}"

    def met(self, value: float | None) -> bool:
        if value is None or math.isnan(value):
            return False
        test = {"<=": operator.le, "<": operator.lt, ">=": operator.ge}[self.compare]
        return bool(test(value, self.target))


def _number(key: str) -> Callable[[Results], float | None]:
    def read(results: Results) -> float | None:
        value = results.get(key)
        return float(value) if isinstance(value, int | float) else None

    return read


def _lowest(key: str) -> Callable[[Results], float | None]:
    def read(results: Results) -> float | None:
        values = results.get(key)
        if not isinstance(values, dict) or not values:
            return None
        return float(min(values.values()))

    return read


def _largest_size(key: str) -> Callable[[Results], float | None]:
    def read(results: Results) -> float | None:
        values = results.get(key)
        if not isinstance(values, dict) or not values:
            return None
        return float(values[max(values, key=int)])

    return read


GOALS = (
    # Issue 14's pinned ratios (each against a baseline measured in the same run; the median of the rounds).
    Goal("diagnose_cpu_vs_floor_c16", "endtoend", _number("diagnose_cpu_vs_floor_c16"), "<=", 1.25),
    Goal("store_cpu_vs_raw_sqlite", "store", _number("store_cpu_vs_raw_sqlite"), "<=", 2.0),
    Goal("scripted_vs_langgraph_sqlite", "peer", _number("scripted_vs_langgraph_sqlite"), ">=", 1.5),
    Goal("heuristic_vs_langgraph_sqlite", "peer", _number("heuristic_vs_langgraph_sqlite"), ">=", 1.0),
    Goal("watch_p99_vs_noop", "fanout", _number("watch_p99_vs_noop"), "<=", 1.5),
    # Issue 34: concurrent tool calls, and the peer doing the same work as ours.
    Goal("live_wall_vs_sum_of_calls", "live", _number("live_wall_vs_sum_of_calls"), "<=", 0.35),
    Goal("samework_vs_langgraph_sqlite", "samework", _number("samework_vs_langgraph_sqlite"), ">=", 1.5),
    Goal("gatekeeper_vs_floor", "gatekeeper", _number("gatekeeper_vs_floor"), ">=", 0.5),
    # Issues 33 and 34: health checks and run-cap refusals while the cap's runs compute over hostile lines.
    Goal(
        "health_p99_ms_while_runs_compute",
        "responsive",
        _number("health_p99_ms_while_runs_compute"),
        "<",
        1000,
        " ms",
    ),
    Goal(
        "run_cap_refusal_p90_ms_under_load",
        "responsive",
        _number("run_cap_refusal_p90_ms_under_load"),
        "<=",
        100,
        " ms",
    ),
    Goal(
        "watch_cross_replica_p99_ms",
        "crossreplica",
        _number("watch_cross_replica_p99_ms"),
        "<",
        50,
        " ms",
        optional=True,
    ),
    # Issue 13's bench item: the heuristic run on a large input, and its analyzers' growth with the input.
    Goal("heuristic_large_cpu_ms_per_run", "largepack", _number("heuristic_large_cpu_ms_per_run"), "<", 50, " ms"),
    # Linear: the analyzers' cost per unit of input at 4x within 1.5x of their cost per unit at 1x.
    Goal(
        "heuristic_large_analyzer_growth",
        "largepack",
        _number("heuristic_large_analyzer_growth_at_largest"),
        "<=",
        1.5,
    ),
    # Earlier issues' goals, still reported.
    Goal("engine_vs_langgraph", "engine", _number("engine_vs_langgraph"), "<=", 0.01),
    Goal("gatekeeper_bindings_per_s", "gatekeeper", _lowest("gatekeeper_bindings_per_s"), ">=", 100_000, "/s"),
    # Linear: the cost of one binding at 1,000 bindings is within 1.5x of its cost at 10.
    Goal("gatekeeper_growth_at_1000", "gatekeeper", _largest_size("gatekeeper_growth_vs_10"), "<=", 1.5),
    Goal("watch_p99_ms", "fanout", _number("watch_p99_ms"), "<", 50, " ms"),
    Goal("watch_rss_mb", "fanout", _number("watch_rss_mb"), "<", 300, " MB"),
    Goal("heuristic_cpu_ms_per_run", "heuristic", _number("heuristic_cpu_ms_per_run"), "<", 20, " ms"),
)

# The pinned keys: (key, what ours is, ours' key, the baseline's name, the baseline's key, unit).
PINNED = (
    (
        "diagnose_cpu_vs_floor_c16",
        "server CPU per Diagnose, c16",
        "diagnose_server_cpu_ms_per_run_c16",
        "floor: run with no store + raw sqlite3 rows + no-op stream",
        "diagnose_floor_ms_c16",
        "ms",
    ),
    (
        "store_cpu_vs_raw_sqlite",
        "store CPU per run (SQLite)",
        "store_cpu_ms_per_run",
        "raw sqlite3 loop, same rows",
        "raw_sqlite_cpu_ms_per_run",
        "ms",
    ),
    (
        "scripted_vs_langgraph_sqlite",
        "scripted + SQLite store, runs/s",
        "scripted_sqlite_runs_per_s",
        "LangGraph + SqliteSaver (checkpoint per node)",
        "langgraph_sqlite_runs_per_s",
        "/s",
    ),
    (
        "heuristic_vs_langgraph_sqlite",
        "heuristic + SQLite store, runs/s",
        "heuristic_sqlite_runs_per_s",
        "LangGraph + SqliteSaver (checkpoint per node)",
        "langgraph_sqlite_runs_per_s",
        "/s",
    ),
    (
        "scripted_vs_langgraph_sqlite_per_tool_call",
        "scripted + SQLite store, runs/s",
        "scripted_sqlite_runs_per_s",
        "LangGraph + SqliteSaver (checkpoint per tool call)",
        "langgraph_sqlite_per_tool_call_runs_per_s",
        "/s",
    ),
    (
        "heuristic_vs_langgraph_sqlite_per_tool_call",
        "heuristic + SQLite store, runs/s",
        "heuristic_sqlite_runs_per_s",
        "LangGraph + SqliteSaver (checkpoint per tool call)",
        "langgraph_sqlite_per_tool_call_runs_per_s",
        "/s",
    ),
    (
        "samework_vs_langgraph_sqlite",
        "heuristic run, our engine + SQLite store, runs/s",
        "samework_ours_runs_per_s",
        "LangGraph + AsyncSqliteSaver, nodes calling our node functions",
        "samework_langgraph_runs_per_s",
        "/s",
    ),
    (
        "live_wall_vs_sum_of_calls",
        "heuristic run's wall time, live tools answering after 50 ms",
        "live_wall_ms",
        "the sum of its calls' latencies",
        "live_sum_of_calls_ms",
        "ms",
    ),
    (
        "watch_p99_vs_noop",
        "WatchRun p99 delivery, 1,000 subscribers",
        "watch_p99_ms",
        "no-op gRPC broadcast p99",
        "noop_watch_p99_ms",
        "ms",
    ),
    (
        "gatekeeper_vs_floor",
        "Gatekeeper bindings/s, 1,000 bindings",
        "gatekeeper_bindings_at_floor_size",
        "pure-Python lookups on the protobuf values",
        "gatekeeper_floor_bindings_per_s",
        "/s",
    ),
    (
        "watch_cross_replica_p99_ms",
        "cross-replica WatchRun p99 (PostgreSQL NOTIFY)",
        "watch_cross_replica_p99_ms",
        "polling fallback interval",
        "watch_cross_replica_poll_interval_ms",
        "ms",
    ),
)


def pinned(results: Results, goals: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every pinned key with ours, its same-run baseline, the rounds' ratios and their spread."""
    out: dict[str, dict[str, Any]] = {}
    for key, ours_what, ours_key, base_what, base_key, unit in PINNED:
        rounds = results.get(f"{key}_rounds")
        rounds = list(rounds) if isinstance(rounds, list) else []
        goal = goals.get(key, {})
        out[key] = {
            "value": results.get(key),
            "goal": goal.get("goal"),
            "met": goal.get("met"),
            "ours": {"what": ours_what, "value": results.get(ours_key), "unit": unit},
            "baseline": {"what": base_what, "value": results.get(base_key), "unit": unit},
            "rounds": rounds,
            "spread": [min(rounds), max(rounds)] if rounds else None,
        }
        if key not in results and results.get("watch_cross_replica_skipped") and key.startswith("watch_cross"):
            out[key]["skipped"] = results["watch_cross_replica_skipped"]
    return out


def check_goals(results: Results) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for goal in GOALS:
        value = goal.read(results)
        if value is None and goal.optional:
            continue  # not measured here (no PostgreSQL server): neither met nor missed
        out[goal.name] = {"section": goal.section, "goal": goal.text, "measured": value, "met": goal.met(value)}
    return out


# ------------------------------------------------------------------------------------------ table


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def rows(results: Results) -> list[tuple[str, str, str, str, str]]:
    """(section, figure, ours, baseline, ratio) for every figure that has a baseline."""
    r = results.get
    out: list[tuple[str, str, str, str, str]] = []
    if "engine_vs_langgraph" in results:
        out.append(
            (
                "engine",
                "per-run overhead, no-op nodes",
                f"{_fmt(r('engine_run_us'))} us",
                f"LangGraph {_fmt(r('langgraph_run_us'))} us",
                _fmt(r("engine_vs_langgraph")),
            )
        )
    for c in ("c1", "c16"):
        if f"diagnose_vs_noop_{c}" in results:
            out.append(
                (
                    f"end to end {c}",
                    f"Diagnose runs/s ({_fmt(r('diagnose_messages_per_stream'))} msgs)",
                    f"{_fmt(r(f'diagnose_runs_per_s_{c}'))}/s",
                    f"no-op stream {_fmt(r(f'noop_streams_per_s_{c}'))}/s",
                    _fmt(r(f"diagnose_vs_noop_{c}")),
                )
            )
            out.append(
                (
                    f"end to end {c}",
                    "server CPU per stream",
                    f"{_fmt(r(f'diagnose_server_cpu_ms_per_run_{c}'))} ms",
                    f"no-op {_fmt(r(f'noop_server_cpu_ms_per_stream_{c}'))} ms",
                    "",
                )
            )
    rates = r("gatekeeper_bindings_per_s") or {}
    growth = r("gatekeeper_growth_vs_10") or {}
    for size, rate in rates.items():
        out.append(
            (
                "gatekeeper",
                f"checked bindings/s, {int(size):,} bindings",
                f"{_fmt(rate)}/s",
                "cost/binding vs 10",
                _fmt(growth.get(size)),
            )
        )
    if "watch_p99_ms" in results:
        n = _fmt(r("watch_subscribers"))
        for q in ("p50", "p99"):
            ours, noop = r(f"watch_{q}_ms"), r(f"noop_watch_{q}_ms")
            ratio = ours / noop if isinstance(ours, float) and isinstance(noop, float) and noop > 0 else None
            out.append(
                (
                    "fan-out",
                    f"{q} delivery delay, {n} WatchRun",
                    f"{_fmt(ours)} ms",
                    f"no-op broadcast {_fmt(noop)} ms",
                    _fmt(ratio),
                )
            )
        rss, noop_rss = r("watch_rss_mb"), r("noop_watch_rss_mb")
        ratio = rss / noop_rss if isinstance(rss, float) and isinstance(noop_rss, float) and noop_rss > 0 else None
        out.append(("fan-out", "server RSS", f"{_fmt(rss)} MB", f"no-op {_fmt(noop_rss)} MB", _fmt(ratio)))
    for scale, run_ms in (r("heuristic_large_cpu_ms_by_scale") or {}).items():
        analyzers = (r("heuristic_large_analyzer_ms_by_scale") or {}).get(scale)
        growth = (r("heuristic_large_analyzer_growth_per_unit") or {}).get(scale)
        out.append(
            (
                "large pack",
                f"heuristic run CPU, {scale}x (200 pods, 5,000 events, 20,000 lines at 1x)",
                f"{_fmt(run_ms)} ms",
                f"analyzers {_fmt(analyzers)} ms",
                f"per unit vs 1x {_fmt(growth)}",
            )
        )
    if "health_p99_ms_while_runs_compute" in results:
        n = _fmt(r("responsive_concurrent_runs"))
        out.append(
            (
                "responsive",
                f"health check p50/p99/max while {n} runs compute over 12 KB bait lines",
                f"{_fmt(r('health_p50_ms_while_runs_compute'))}/{_fmt(r('health_p99_ms_while_runs_compute'))}/"
                f"{_fmt(r('health_max_ms_while_runs_compute'))} ms",
                f"idle p50/p99 {_fmt(r('health_p50_ms_idle'))}/{_fmt(r('health_p99_ms_idle'))} ms",
                "",
            )
        )
        out.append(
            (
                "responsive",
                f"run-cap refusal p50/p90/max ({_fmt(r('run_cap_refusals_under_load'))} refusals)",
                f"{_fmt(r('run_cap_refusal_p50_ms_under_load'))}/{_fmt(r('run_cap_refusal_p90_ms_under_load'))}/"
                f"{_fmt(r('run_cap_refusal_max_ms_under_load'))} ms",
                f"idle health p50 {_fmt(r('health_p50_ms_idle'))} ms",
                "",
            )
        )
    if "store_cpu_ms_per_run" in results:
        out.append(
            (
                "store",
                f"transactions per run: {r('store_writes_per_run')} writes, {r('store_reads_per_run')} reads",
                f"{_fmt(r('store_cpu_ms_per_run'))} ms",
                f"raw sqlite3 {_fmt(r('raw_sqlite_cpu_ms_per_run'))} ms",
                _fmt(r("store_cpu_vs_raw_sqlite")),
            )
        )
    if "langgraph_checkpoint_bytes_per_run" in results:
        out.append(
            (
                "peer",
                "LangGraph checkpoint bytes per run (node / tool call)",
                "",
                f"{_fmt(r('langgraph_checkpoint_bytes_per_run'))} / "
                f"{_fmt(r('langgraph_per_tool_call_checkpoint_bytes_per_run'))}",
                "",
            )
        )
    if "heuristic_cpu_ms_per_run" in results:
        base = f"engine no-op {_fmt(r('engine_noop_cpu_ms_per_run'))} ms"
        out.append(
            (
                "heuristic",
                "CPU per run, SQLite store",
                f"{_fmt(r('heuristic_cpu_ms_per_run'))} ms",
                base,
                _fmt(r("heuristic_vs_engine_noop"), 4),
            )
        )
        out.append(
            (
                "heuristic",
                "CPU per run, no-op store",
                f"{_fmt(r('heuristic_cpu_ms_per_run_no_store'))} ms",
                base,
                _fmt(r("heuristic_no_store_vs_engine_noop"), 4),
            )
        )
    return out


def _table(header: tuple[str, ...], body: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    line = "  ".join("-" * width for width in widths)
    render = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in body]
    return ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(), line, *render]


def pinned_rows(results: Results, goals: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, ...]]:
    """(key, ours, the peer or floor, ratio, spread over rounds, goal) of every pinned key measured."""
    body: list[tuple[str, ...]] = []
    for key, item in pinned(results, goals).items():
        if item["value"] is None:
            if "skipped" in item:
                body.append((key, "-", "-", "not measured", "", f"(no PostgreSQL: {str(item['skipped'])[:60]})"))
            continue
        ours, base = item["ours"], item["baseline"]
        spread = item["spread"]
        goal = f"{item['goal']} {'met' if item['met'] else 'MISSED'}" if item["goal"] else ""
        body.append(
            (
                key,
                f"{ours['what']}: {_fmt(ours['value'])}{' ' + ours['unit'] if ours['unit'] == 'ms' else ours['unit']}",
                f"{base['what']}: {_fmt(base['value'])}{' ' + base['unit'] if base['unit'] == 'ms' else base['unit']}",
                _fmt(item["value"]),
                f"{_fmt(spread[0])}-{_fmt(spread[1])} ({len(item['rounds'])})" if spread else "",
                goal,
            )
        )
    return body


def render(results: Results, goals: Mapping[str, Mapping[str, Any]], errors: Mapping[str, str]) -> str:
    out = _table(
        ("pinned key", "ours", "peer / floor (same run)", "ratio", "rounds min-max (n)", "goal"),
        pinned_rows(results, goals),
    )
    out.append("")
    out += _table(("section", "figure", "ours", "baseline (same run)", "ratio"), rows(results))
    out.append("")
    goal_rows = [
        (name, str(goal["goal"]), _fmt(goal["measured"]), "met" if goal["met"] else "MISSED")
        for name, goal in goals.items()
    ]
    out += _table(("goal", "target", "measured", ""), goal_rows)
    for section, error in errors.items():
        out.append(f"\nsection {section} FAILED: {error}")
    for name, goal in goals.items():
        summary: ProfileSummary | None = goal.get("profile")
        if not goal["met"] and summary is not None:
            out.append(f"\nMISSED {name} ({goal['goal']}, measured {_fmt(goal['measured'])}): where the time goes")
            out.append(format_profile(summary))
    return "\n".join(out)


def write_json(path: Path, document: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(document, indent=2, sort_keys=False, allow_nan=False, default=_plain) + "\n")
    tmp.replace(path)


def _plain(value: object) -> object:
    raise TypeError(f"not JSON: {type(value).__name__}")


def finite(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by None (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value
