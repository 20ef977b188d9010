"""Human views of evaluation results: a terminal table with a summary line, and an HTML report."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from diagnosis_server.evaluation import CaseResult
from diagnosis_server.graph.spec import GRAPH

_BY_LABEL = {node.label: node for node in GRAPH.nodes}
_ABBREVIATIONS = {node.label: node.abbreviation for node in GRAPH.nodes}
# The route's legend: the letters of the nodes that are not fallbacks.
_LEGEND = "route: " + ", ".join(f"{node.abbreviation} {node.title}" for node in GRAPH.nodes if not node.fallback)
_COLUMNS = ("case", "route", "ceiling", "model", "effective", "status", "result")


def _text(value: object) -> str:
    return "-" if value is None else str(value)


def _route(report: Mapping[str, object]) -> list[str]:
    route = report.get("route")
    return [str(node) for node in route] if isinstance(route, list) else []


def _row(result: CaseResult) -> tuple[str, ...]:
    report = result.report
    return (
        result.case_id,
        ">".join(_ABBREVIATIONS.get(node, node) for node in _route(report)),
        _text(report.get("verdict_ceiling")),
        _text(report.get("model_verdict")),
        _text(report.get("effective_verdict")),
        _text(report.get("status")),
        "pass" if result.expect_ok else "FAIL",
    )


def summary_line(results: Sequence[CaseResult]) -> str:
    failed = sum(1 for r in results if not r.expect_ok)
    return f"{len(results) - failed} passed, {failed} failed"


def table(results: Sequence[CaseResult]) -> str:
    """One row per case (route abbreviated: P E G B V C, PRE/POST fallbacks), mismatches under failing rows."""
    rows = [_COLUMNS, *(_row(r) for r in results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows[:1]]
    lines.append("  ".join("-" * w for w in widths))
    for result, row in zip(results, rows[1:], strict=True):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        lines.extend(f"    mismatch: {m}" for m in result.mismatches)
    lines.append(_LEGEND)
    lines.append(summary_line(results))
    return "\n".join(lines)


_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 6px 8px; text-align: left; vertical-align: top; }
tr.fail td { background: #fdecea; }
tr.fail td.result, .mismatch { color: #b00020; font-weight: 600; }
.route { white-space: nowrap; }
.node { display: inline-block; padding: 1px 6px; border-radius: 10px; background: #e8eef7; margin: 1px 0; }
.node.fallback { background: #fff3cd; }
.arrow { color: #888; margin: 0 2px; }
.summary { font-size: 16px; margin: 1em 0; }
"""


def _route_html(route: list[str]) -> str:
    parts = []
    for node in route:
        spec = _BY_LABEL.get(node)
        kind = "node fallback" if spec is not None and spec.fallback else "node"
        parts.append(f'<span class="{kind}">{html.escape(node)}</span>')
    return '<span class="arrow">&rarr;</span>'.join(parts)


def html_report(results: Sequence[CaseResult], *, title: str = "diagnosis eval") -> str:
    """A self-contained page: one row per case, the route drawn as a line of nodes, mismatches in red."""
    rows = []
    for result in results:
        report = result.report
        cells = _row(result)
        mismatches = "".join(f'<div class="mismatch">{html.escape(m)}</div>' for m in result.mismatches)
        rows.append(
            f'<tr class="{"ok" if result.expect_ok else "fail"}">'
            f"<td>{html.escape(cells[0])}{mismatches}</td>"
            f'<td class="route">{_route_html(_route(report))}</td>'
            + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells[2:6])
            + f'<td class="result">{cells[6]}</td></tr>'
        )
    head = "".join(f"<th>{html.escape(c)}</th>" for c in _COLUMNS)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        f'<p class="summary">{html.escape(summary_line(results))}</p>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></body></html>\n"
    )
