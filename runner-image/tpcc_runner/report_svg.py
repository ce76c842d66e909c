"""The SVG charts of `tpcc report`'s pages (TPC-C's, the experiments', YCSB's): one palette,
one geometry, axis ticks and number labels, and the Plot that draws them as strings."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

PALETTE = ("#2563eb", "#ea580c", "#16a34a", "#9333ea", "#dc2626", "#0891b2", "#ca8a04")
W, H, LEFT, RIGHT, TOP, BOTTOM = 760, 300, 64, 16, 16, 44


def axis_ticks(lo: float, hi: float, n: int = 5, integer: bool = False) -> list[float]:
    """Round tick values from at or below lo to at or above hi."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if raw <= m * step)
    if integer:
        step = max(1, round(step))
    first = math.floor(lo / step) * step
    return [first + i * step for i in range(math.ceil(round((hi - first) / step, 9)) + 1)]


def num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3g}"


class Plot:
    """Linear axes on a fixed canvas; elements are SVG strings."""

    def __init__(self, xs: list[float], ys: list[float], x_label: str, y_label: str, integer_x: bool = False):
        self.x0, self.x1 = min(xs), max(xs)
        if self.x1 == self.x0:
            self.x0, self.x1 = self.x0 - 1, self.x1 + 1
        ticks = axis_ticks(0, max(ys) * 1.05 if max(ys) > 0 else 1)
        self.y0, self.y1 = ticks[0], ticks[-1]
        self.parts = [
            f'<line class="axis" x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}"/>',
            f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}"/>',
            f'<text class="label" x="{(LEFT + W - RIGHT) / 2}" y="{H - 6}" text-anchor="middle">'
            f"{html.escape(x_label)}</text>",
            f'<text class="label" transform="translate(14 {(TOP + H - BOTTOM) / 2}) rotate(-90)" '
            f'text-anchor="middle">{html.escape(y_label)}</text>',
        ]
        for t in ticks:
            y = self.y(t)
            self.parts.append(
                f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}"/>'
                f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{num(t)}</text>'
            )
        for t in axis_ticks(self.x0, self.x1, 8, integer_x):
            if not self.x0 <= t <= self.x1:
                continue
            self.parts.append(
                f'<text class="tick" x="{self.x(t):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">{num(t)}</text>'
            )

    def x(self, v: float) -> float:
        return LEFT + (v - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT)

    def y(self, v: float) -> float:
        return H - BOTTOM - (v - self.y0) / (self.y1 - self.y0) * (H - TOP - BOTTOM)

    def line(
        self, points: Sequence[tuple[float, float]], color: str, name: str, dots: bool = True, dashed: bool = False
    ) -> None:
        """A series; dashed with square markers for values quoted from elsewhere (a study's), so
        they read apart from ours in the same colour."""
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{self.x(px):.1f},{self.y(py):.1f}" for i, (px, py) in enumerate(points)
        )
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        self.parts.append(
            f'<path class="series" d="{path}" stroke="{color}"{dash}><title>{html.escape(name)}</title></path>'
        )
        if dots:
            self.parts += [self._marker(px, py, color, f"{name}: {num(px)} → {num(py)}", dashed) for px, py in points]

    def _marker(self, px: float, py: float, color: str, title: str, square: bool) -> str:
        x, y, tip = self.x(px), self.y(py), f"<title>{html.escape(title)}</title>"
        if square:
            return (
                f'<rect class="quoted" x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="#fff" '
                f'stroke="{color}" stroke-width="2">{tip}</rect>'
            )
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}">{tip}</circle>'

    def band(self, a: float, b: float, css: str, title: str) -> None:
        a, b = max(a, self.x0), min(b, self.x1)
        if b > a:
            self.parts.append(
                f'<rect class="{css}" x="{self.x(a):.1f}" y="{TOP}" width="{self.x(b) - self.x(a):.1f}" '
                f'height="{H - TOP - BOTTOM}"><title>{html.escape(title)}</title></rect>'
            )

    def vline(self, at: float, css: str, title: str) -> None:
        x = self.x(at)
        self.parts.append(
            f'<line class="{css}" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{H - BOTTOM}">'
            f"<title>{html.escape(title)}</title></line>"
            f'<text class="marker-label" x="{x + 3:.1f}" y="{TOP + 12}">'
            f"{html.escape(title.split(':')[0])}</text>"
        )

    def hline(self, at: float, css: str, title: str) -> None:
        y = self.y(at)
        self.parts.append(
            f'<line class="{css}" x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}">'
            f"<title>{html.escape(title)}</title></line>"
            f'<text class="marker-label" x="{W - RIGHT - 4}" y="{y - 4:.1f}" text-anchor="end">'
            f"{html.escape(title)}</text>"
        )

    def svg(self, chart: str, legend: Sequence[tuple[str, str]] = ()) -> str:
        keys = "".join(f'<span class="key"><i style="background:{c}"></i>{html.escape(n)}</span>' for n, c in legend)
        return (
            f'<figure><svg class="chart" data-chart="{chart}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
            f'role="img">{"".join(self.parts)}</svg>'
            + (f"<figcaption>{keys}</figcaption>" if keys else "")
            + "</figure>"
        )
