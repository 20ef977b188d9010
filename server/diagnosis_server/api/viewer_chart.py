"""A Prometheus range result drawn as a small SVG line chart, its bound samples marked (no script)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape

from diagnosis_server.conversions import JsonValue

WIDTH, HEIGHT, PAD = 480, 120, 6
_SAMPLE = re.compile(r"^/data/result/(\d+)/values/(\d+)(?:/\d)?$")


def _series(output: JsonValue) -> list[list[tuple[float, float]]]:
    if not isinstance(output, dict):
        return []
    data = output.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix":
        return []
    result = data.get("result")
    if not isinstance(result, list):
        return []
    found: list[list[tuple[float, float]]] = []
    for item in result:
        values = item.get("values") if isinstance(item, dict) else None
        points: list[tuple[float, float]] = []
        for pair in values if isinstance(values, list) else []:
            try:
                points.append((float(pair[0]), float(pair[1])))  # type: ignore[index, arg-type]
            except (TypeError, ValueError, IndexError, KeyError):
                points.append((float("nan"), float("nan")))
        found.append(points)
    return found


def range_chart(output: JsonValue, marks: Mapping[str, Sequence[str]]) -> str:
    """The chart's SVG, or "" when the output is not a Prometheus matrix with numbers."""
    series = _series(output)
    finite = [(t, v) for points in series for t, v in points if t == t and v == v]
    if not finite:
        return ""
    t0, t1 = min(t for t, _ in finite), max(t for t, _ in finite)
    v0, v1 = min(v for _, v in finite), max(v for _, v in finite)

    def x(t: float) -> float:
        return PAD + (WIDTH - 2 * PAD) * ((t - t0) / (t1 - t0) if t1 > t0 else 0.5)

    def y(v: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * ((v - v0) / (v1 - v0) if v1 > v0 else 0.5)

    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        'xmlns="http://www.w3.org/2000/svg">'
    ]
    for points in series:
        line = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in points if t == t and v == v)
        parts.append(f'<polyline class="series" fill="none" points="{line}"/>')
    for pointer, claims in marks.items():
        match = _SAMPLE.match(pointer)
        if match is None:
            continue
        index, sample = int(match.group(1)), int(match.group(2))
        if index < len(series) and sample < len(series[index]):
            t, v = series[index][sample]
            if t == t and v == v:
                parts.append(
                    f'<circle class="bound" cx="{x(t):.1f}" cy="{y(v):.1f}" r="4" data-pointer="{escape(pointer)}">'
                    f"<title>{escape(pointer)} ({escape(', '.join(claims))})</title></circle>"
                )
    parts.append("</svg>")
    return "".join(parts)
