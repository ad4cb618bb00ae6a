"""Small SVG charts drawn on the server: no script, no library, no network.

Every function returns one ``<svg>`` element as a string; every text in it is escaped.
"""

from __future__ import annotations

import html
import math
from typing import Sequence

WIDTH, HEIGHT = 560, 200
LEFT, RIGHT, TOP, BOTTOM = 44, 44, 14, 30
INK, GRID, ACCENT, SECOND = "#333", "#e3e5e8", "#E80978", "#2E86DE"


def _frame(title: str, body: list[str], width: int = WIDTH, height: int = HEIGHT) -> str:
    return (f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{html.escape(title)}"><title>{html.escape(title)}</title>'
            + "".join(body) + "</svg>")


def _text(x: float, y: float, text: str, anchor: str = "middle", size: int = 11,
          color: str = INK) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{color}">{html.escape(text)}</text>')


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def histogram(values: Sequence[float], edges: Sequence[float], title: str, unit: str = "",
              marker: float | None = None, marker_label: str = "") -> str:
    """Counts of ``values`` in the bins ``[edges[k], edges[k+1])`` (the last bin also takes
    everything above), as bars; ``marker`` draws a vertical line at that value (the
    deadline, say)."""
    bins = [0] * (len(edges) - 1)
    for v in values:
        k = len(bins) - 1
        for j in range(len(bins)):
            if v < edges[j + 1]:
                k = max(j, 0)
                break
        bins[k] += 1
    top = _nice_max(max(bins) if bins else 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    bar_w = plot_w / len(bins)
    body = [_grid(top, plot_w, plot_h)]
    for k, count in enumerate(bins):
        h = plot_h * count / top
        x = LEFT + k * bar_w
        label = f"{_number(edges[k])}–{_number(edges[k + 1])}{unit}: {count}"
        body.append(f'<rect x="{x + 1:.1f}" y="{TOP + plot_h - h:.1f}" '
                    f'width="{max(bar_w - 2, 1):.1f}" '
                    f'height="{h:.1f}" fill="{ACCENT}"><title>{html.escape(label)}</title></rect>')
    for k, edge in enumerate(edges):
        if len(edges) <= 12 or k % 2 == 0:
            body.append(_text(LEFT + k * bar_w, HEIGHT - BOTTOM + 14, _number(edge)))
    body.append(_text(WIDTH - RIGHT + 14, HEIGHT - BOTTOM + 14, unit.strip(), "start"))
    if marker is not None and edges[0] <= marker <= edges[-1]:
        k = sum(1 for e in edges[1:-1] if e <= marker)
        within = (marker - edges[k]) / (edges[k + 1] - edges[k])
        x = LEFT + (k + within) * bar_w
        body.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + plot_h}" '
                    f'stroke="#c0392b" stroke-dasharray="4 3"/>')
        body.append(_text(x - 4, TOP + 10, marker_label, "end", 10, "#c0392b"))
    body.append(_text(WIDTH / 2, 11, f"{title} ({len(values)})", size=12))
    return _frame(title, body)


def _grid(top: float, plot_w: float, plot_h: float, right_top: float | None = None,
          right_unit: str = "", bottom: float = 0.0) -> str:
    out = []
    for k in range(5):
        y = TOP + plot_h - plot_h * k / 4
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" '
                   f'stroke="{GRID}"/>')
        out.append(_text(LEFT - 4, y + 4, _number(bottom + (top - bottom) * k / 4), "end", 10))
        if right_top is not None:
            out.append(_text(LEFT + plot_w + 4, y + 4, _number(right_top * k / 4) + right_unit,
                             "start", 10, SECOND))
    return "".join(out)


def _number(x: float) -> str:
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 or abs(x) >= 10 else f"{x:.2g}"


def series(labels: Sequence[str], left: Sequence[float | None], right: Sequence[float | None],
           title: str, left_name: str, right_name: str, left_max: float | None = None,
           left_unit: str = "", left_min: float = 0.0) -> str:
    """Two lines over the same x labels (dates, turns): ``left`` on the left axis (pink,
    from ``left_min``), ``right`` on the right axis (blue, from 0); ``None`` leaves a gap."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    lmax = left_max or _nice_max(max((v for v in left if v is not None), default=1))
    rmax = _nice_max(max((v for v in right if v is not None), default=1))
    body = [_grid(lmax, plot_w, plot_h, rmax, bottom=left_min)]
    n = max(len(labels), 1)

    def x_of(k: int) -> float:
        return LEFT + (plot_w * (k + 0.5) / n)

    for values, low, top, color in ((left, left_min, lmax, ACCENT), (right, 0.0, rmax, SECOND)):
        points, segment = [], []
        for k, v in enumerate(values):
            if v is None:
                if segment:
                    points.append(segment)
                segment = []
                continue
            share = (min(max(v, low), top) - low) / (top - low)
            segment.append((x_of(k), TOP + plot_h - plot_h * share))
        if segment:
            points.append(segment)
        for seg in points:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in seg)
            body.append(f'<polyline points="{path}" fill="none" stroke="{color}" '
                        f'stroke-width="2"/>')
            if len(seg) <= 60:
                body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{color}"/>'
                         for x, y in seg]
    step = max(1, math.ceil(n / 8))
    for k in range(0, len(labels), step):
        body.append(_text(x_of(k), HEIGHT - BOTTOM + 14, labels[k], size=10))
    body.append(_text(LEFT, 11, f"{left_name}{left_unit}", "start", 11, ACCENT))
    body.append(_text(WIDTH - RIGHT, 11, right_name, "end", 11, SECOND))
    body.append(_text(WIDTH / 2, 11, title, size=12))
    return _frame(title, body)


def shares(counts: dict[str, int], title: str) -> str:
    """Horizontal bars: each key's share of the total."""
    total = sum(counts.values()) or 1
    rows = sorted(counts.items(), key=lambda kv: -kv[1])
    height = TOP + 22 * max(len(rows), 1) + 10
    body = [_text(WIDTH / 2, 11, title, size=12)]
    bar_max = WIDTH - 200
    for k, (name, count) in enumerate(rows):
        y = TOP + 6 + 22 * k
        w = bar_max * count / total
        body.append(_text(130, y + 12, name, "end"))
        body.append(f'<rect x="136" y="{y}" width="{max(w, 1):.1f}" height="16" fill="{ACCENT}"/>')
        body.append(_text(140 + w, y + 12, f"{count} ({count / total:.1%})", "start", 10))
    return _frame(title, body, height=height)
