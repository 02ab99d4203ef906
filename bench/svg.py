"""Line charts as SVG files, small enough to write by hand: a logarithmic x axis (the
scale curves grow by decades), a linear y axis from zero, one line per series, a
legend. Nothing to install; any browser or GitHub shows the file."""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

WIDTH, HEIGHT = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 80, 200, 40, 60
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")


def line_chart(
    path: Path,
    title: str,
    x_label: str,
    y_label: str,
    xs: list[float],
    series: dict[str, list[float]],
) -> None:
    """Write a chart of `series` (name -> one y per x; NaN leaves a gap) over `xs`
    (positive, drawn on a log scale) to `path`."""
    x_low, x_high = math.log10(min(xs)), math.log10(max(xs))
    if x_high == x_low:
        x_low, x_high = x_low - 0.5, x_high + 0.5
    finite = [y for ys in series.values() for y in ys if math.isfinite(y)]
    y_step = _step(max(finite, default=1.0) or 1.0)
    y_high = y_step * math.ceil(max(finite, default=1.0) / y_step) or y_step
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + plot_w * (math.log10(x) - x_low) / (x_high - x_low)

    def py(y: float) -> float:
        return TOP + plot_h * (1 - y / y_high)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>',
    ]
    for x in xs:  # a tick at every measured x
        parts.append(
            f'<line x1="{px(x):.1f}" y1="{TOP}" x2="{px(x):.1f}" '
            f'y2="{TOP + plot_h}" stroke="#eee"/>'
        )
        parts.append(
            f'<text x="{px(x):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{_short(x)}</text>'
        )
    ticks = int(round(y_high / y_step))
    for i in range(ticks + 1):
        y = i * y_step
        parts.append(
            f'<line x1="{LEFT}" y1="{py(y):.1f}" x2="{LEFT + plot_w}" '
            f'y2="{py(y):.1f}" stroke="#eee"/>'
        )
        parts.append(
            f'<text x="{LEFT - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{_short(y)}</text>'
        )
    parts += [
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        f'stroke="#444"/>',
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 18}" text-anchor="middle">'
        f"{escape(x_label)}</text>",
        f'<text transform="translate(18 {TOP + plot_h / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>',
    ]
    for index, (name, ys) in enumerate(series.items()):
        colour = COLOURS[index % len(COLOURS)]
        points = [(px(x), py(y)) for x, y in zip(xs, ys, strict=True) if math.isfinite(y)]
        if len(points) > 1:
            line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            parts.append(
                f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
        parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in points]
        legend_y = TOP + 10 + 18 * index
        parts.append(
            f'<rect x="{WIDTH - RIGHT + 12}" y="{legend_y - 8}" width="12" '
            f'height="4" fill="{colour}"/>'
        )
        parts.append(f'<text x="{WIDTH - RIGHT + 30}" y="{legend_y}">{escape(name)}</text>')
    parts.append("</svg>\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))


def _step(high: float) -> float:
    """A round tick step giving 4 to 10 ticks up to `high`."""
    raw = high / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 2.5, 5, 10):
        if raw <= multiple * magnitude:
            return multiple * magnitude
    return 10 * magnitude


def _short(value: float) -> str:
    """1,000 as 1k, 1,000,000 as 1M, 2,500 as 2.5k; others (1,024) as they are."""
    for limit, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= limit and value / limit == round(value / limit, 1):
            return f"{value / limit:g}{suffix}"
    return f"{value:g}"
