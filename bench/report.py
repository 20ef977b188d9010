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
    Goal("engine_vs_langgraph", "engine", _number("engine_vs_langgraph"), "<=", 0.01),
    Goal("diagnose_vs_noop_c16", "endtoend", _number("diagnose_vs_noop_c16"), ">=", 0.4),
    Goal("gatekeeper_bindings_per_s", "gatekeeper", _lowest("gatekeeper_bindings_per_s"), ">=", 100_000, "/s"),
    # Linear: the cost of one binding at 1,000 bindings is within 1.5x of its cost at 10.
    Goal("gatekeeper_growth_at_1000", "gatekeeper", _largest_size("gatekeeper_growth_vs_10"), "<=", 1.5),
    Goal("watch_p99_ms", "fanout", _number("watch_p99_ms"), "<", 50, " ms"),
    Goal("watch_rss_mb", "fanout", _number("watch_rss_mb"), "<", 300, " MB"),
    Goal("heuristic_cpu_ms_per_run", "heuristic", _number("heuristic_cpu_ms_per_run"), "<", 20, " ms"),
)


def check_goals(results: Results) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for goal in GOALS:
        value = goal.read(results)
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


def render(results: Results, goals: Mapping[str, Mapping[str, Any]], errors: Mapping[str, str]) -> str:
    out = _table(("section", "figure", "ours", "baseline (same run)", "ratio"), rows(results))
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
