"""Small SVG charts computed on the server (no JavaScript, no chart library, no CDN).

The functions return geometry; templates/charts.html draws it, so every label is escaped by Jinja.
"""

from __future__ import annotations

from pydantic import BaseModel

from taskcrew.eval.results import SweepReport


class Bar(BaseModel):
    label: str
    shown: str = ""  # the label as drawn (shortened to fit; the full one is the bar's tooltip)
    value: float
    text: str
    x: float
    y: float
    width: float
    height: float


class BarChart(BaseModel):
    title: str
    width: int
    height: int
    bars: list[Bar]
    axis_y: float


class Point(BaseModel):
    label: str
    x: float
    y: float
    text: str
    number: int = 0  # drawn beside the dot; the legend below the chart names it (labels never overlap)
    dy: float = 0.0


class Scatter(BaseModel):
    title: str
    width: int
    height: int
    points: list[Point]
    x_label: str
    y_label: str
    x_max: str
    y_max: str


CHAR_PX = 7.0  # a 12-13 px label character, for the label column's width


def bar_chart(
    title: str, items: list[tuple[str, float, str]], *, width: int = 720, bar_h: int = 22
) -> BarChart:
    """Horizontal bars: (label, value, shown text). The label column is as wide as the longest
    label (up to half the chart); a longer label is shortened in the middle, whole in its tooltip."""
    longest = max((len(label) for label, _, _ in items), default=10)
    left = min(width * 0.5, max(80.0, longest * CHAR_PX + 12))
    room = int((left - 12) / CHAR_PX)
    gap, top = 6, 8.0
    biggest = max((v for _, v, _ in items), default=0.0) or 1.0
    bars = []
    for i, (label, value, text) in enumerate(items):
        w = max(0.0, value) / biggest * (width - left - 90)
        shown = label if len(label) <= room else label[: room // 2 - 1] + "…" + label[-(room - room // 2) :]
        bars.append(
            Bar(
                label=label,
                shown=shown,
                value=value,
                text=text,
                x=left,
                y=top + i * (bar_h + gap),
                width=round(w, 1),
                height=bar_h,
            )
        )
    height = int(top * 2 + len(items) * (bar_h + gap))
    return BarChart(title=title, width=width, height=max(height, 40), bars=bars, axis_y=left)


def scatter(
    title: str, points: list[tuple[str, float, float, str]], x_label: str, y_label: str, *, width: int = 720
) -> Scatter:
    height, pad = 300, 48
    x_max = max((p[1] for p in points), default=0.0) or 1.0
    y_max = max((p[2] for p in points), default=0.0) or 1.0
    out: list[Point] = []
    for number, (label, x, y, text) in enumerate(points, 1):
        px = round(pad + x / x_max * (width - 2 * pad), 1)
        py = round(height - pad - y / y_max * (height - 2 * pad), 1)
        near = sum(1 for p in out if abs(p.x - px) < 24 and abs(p.y - py) < 16)  # numbers stack, not overlap
        out.append(Point(label=label, x=px, y=py, text=text, number=number, dy=-16.0 * near))
    return Scatter(
        title=title,
        width=width,
        height=height,
        points=out,
        x_label=x_label,
        y_label=y_label,
        x_max=f"{x_max:.4g}",
        y_max=f"{y_max:.4g}",
    )


def sweep_charts(report: SweepReport) -> tuple[list[BarChart], Scatter]:
    """pass^k per model (one chart per k), cost and time per case, and pass rate against cost."""
    charts: list[BarChart] = []
    max_k = max((len(t.pass_k) for t in report.totals), default=0)
    for k in range(1, max_k + 1):
        items = []
        for t in report.totals:
            value = next((p.value for p in t.pass_k if p.k == k), None)
            if value is not None:
                items.append((t.model, value, f"{value:.2f}"))
        charts.append(bar_chart(f"pass^{k} per model", items))
    charts.append(
        bar_chart(
            "cost per case (USD, all repeats)",
            [
                (f"{c.model} · {c.case_id}", float(c.cost_usd or 0), f"${float(c.cost_usd or 0):.4f}")
                for c in report.cases
            ],
        )
    )
    charts.append(
        bar_chart(
            "median time per case (s)",
            [
                (f"{c.model} · {c.case_id}", c.median_seconds, f"{c.median_seconds:.1f} s")
                for c in report.cases
            ],
        )
    )
    points = [
        (
            t.model,
            float(t.cost_usd or 0),
            t.success_rate,
            f"{t.model}: {t.success_rate:.0%} at ${float(t.cost_usd or 0):.4f}",
        )
        for t in report.totals
    ]
    return charts, scatter("pass rate against cost", points, "total cost (USD)", "pass rate")
