"""Vector charts drawn with QPainter, for the PDF report and for SVG/PNG export. Each function
draws one chart from a report block into a rectangle, in points."""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen

from gpudesk.core.report.content import BarChart, CurveChart, LineChart, ScatterChart, TornadoChart
from gpudesk.ui import theme

# The print variant of the theme: these charts go on white paper whatever the screen shows.
INK = theme.print_colour("chart_ink")
MUTED = theme.print_colour("chart_muted")
GRID = theme.print_colour("chart_grid")
AXIS = theme.print_colour("chart_whisker")
PAPER = theme.print_colour("paper")


def color(i: int) -> QColor:
    return theme.print_series(i)


def font(size: float, bold: bool = False) -> QFont:
    f = QFont(theme.PRINT_FONT)
    f.setPointSizeF(size)
    f.setBold(bold)
    if hasattr(f, "setFeature"):  # no ligatures: the PDF's text must search as typed
        f.setFeature(QFont.Tag("liga"), 0)
    return f


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round ticks from at or below `lo` to at or above `hi` (so the axis holds every value), about
    `count` steps of 1, 2, 2.5 or 5 times a power of ten."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    start = math.floor(lo / step) * step
    ticks = []
    value = start
    while (not ticks or ticks[-1] < hi - step * 1e-9) and len(ticks) < 50:
        ticks.append(round(value, 10))
        value += step
    return ticks


def crowded(positions: list[tuple[float, float]], near_x: float = 0.2, near_y: float = 0.25) -> bool:
    """Whether two points lie within `near_x` and `near_y` of the plot's span of each other (the span
    taken from 0 to the largest value, as the chart draws it): the name written above one would overlap
    the other point or its name (a name stands about a sixth of a small chart's height above its point)."""
    span_x = max((x for x, _y in positions), default=0.0) or 1.0
    span_y = max((y for _x, y in positions), default=0.0) or 1.0
    return any(abs(a[0] - b[0]) < near_x * span_x and abs(a[1] - b[1]) < near_y * span_y
               for i, a in enumerate(positions) for b in positions[i + 1:])

def short(value: float) -> str:
    a = abs(value)
    if a >= 1e9:
        return f"{value / 1e9:.3g}G"
    if a >= 1e6:
        return f"{value / 1e6:.3g}M"
    if a >= 1e3:
        return f"{value / 1e3:.3g}k"
    if a >= 1 or a == 0:
        return f"{value:.3g}"
    return f"{value:.2g}"


def _title(p: QPainter, rect: QRectF, title: str) -> float:
    p.setFont(font(9.5, True))
    p.setPen(INK)
    p.drawText(QRectF(rect.left(), rect.top(), rect.width(), 16), Qt.AlignmentFlag.AlignLeft, title)
    return rect.top() + 20


def _legend(p: QPainter, left: float, top: float, width: float, entries: list[tuple[str, QColor, str]]) -> float:
    """Legend entries laid out in rows; returns the height used."""
    p.setFont(font(7))
    fm = QFontMetricsF(p.font(), p.device())
    x, y = left, top
    for name, col, style in entries:
        w = fm.horizontalAdvance(name) + 22
        if x + w > left + width and x > left:
            x = left
            y += 12
        if style == "line":
            p.setPen(QPen(col, 1.6, Qt.PenStyle.DashLine if name.startswith("Renting") else Qt.PenStyle.SolidLine))
            p.drawLine(QPointF(x, y + 5), QPointF(x + 14, y + 5))
        else:
            p.fillRect(QRectF(x, y + 1, 10, 8), col)
        p.setPen(INK)
        p.drawText(QPointF(x + 17, y + 8.5), name)
        x += w + 6
    return y - top + 12


def _nothing(p: QPainter, rect: QRectF, top: float, text: str) -> None:
    """A chart with nothing to compare: the reason in a sentence, where the plot would be."""
    p.setFont(font(8.5))
    p.setPen(MUTED)
    box = QRectF(rect.left() + 12, top + 8, rect.width() - 24, max(24.0, rect.bottom() - top - 16))
    p.drawText(box, int(Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap), text)


NOTHING = "Nothing to compare: fewer than two configurations have figures for this chart."


def draw_bar_chart(p: QPainter, rect: QRectF, chart: BarChart) -> None:
    top = _title(p, rect, chart.title)
    if len(chart.series) < 2 or not chart.categories:
        _nothing(p, rect, top, NOTHING if len(chart.series) < 2 else "Nothing to compare: no metric has figures.")
        return
    legend_h = _legend(p, rect.left(), top, rect.width(),
                       [(name, color(i), "box") for i, (name, _v) in enumerate(chart.series)])
    plot = QRectF(rect.left() + 34, top + legend_h + 6, rect.width() - 40, rect.bottom() - top - legend_h - 46)
    p.setFont(font(7))
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = plot.bottom() - tick * plot.height()
        p.setPen(QPen(GRID, 0.6))
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        p.setPen(MUTED)
        p.drawText(QRectF(rect.left(), y - 6, 30, 12), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"{tick:g}")
    groups = len(chart.categories)
    n = max(1, len(chart.series))
    group_w = plot.width() / max(groups, 1)
    bar_w = min(18.0, group_w * 0.8 / n)
    for gi, category in enumerate(chart.categories):
        gx = plot.left() + gi * group_w + (group_w - bar_w * n) / 2
        for si, (_name, values) in enumerate(chart.series):
            value = max(0.0, min(1.0, values[gi] if gi < len(values) else 0.0))
            h = value * plot.height()
            p.fillRect(QRectF(gx + si * bar_w, plot.bottom() - h, bar_w * 0.9, h), color(si))
        p.setPen(INK)
        p.drawText(QRectF(plot.left() + gi * group_w + 1, plot.bottom() + 3, group_w - 2, 26),
                   Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap, category)
    p.setPen(QPen(AXIS, 0.8))
    p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))


def _axes(p: QPainter, plot: QRectF, xs: tuple[float, float], ys: tuple[float, float], x_label: str, y_label: str,
          log_x: bool = False) -> tuple:
    p.setFont(font(7))
    xticks = nice_ticks(*xs)
    yticks = nice_ticks(*ys)
    x0, x1 = xticks[0], xticks[-1]
    y0, y1 = yticks[0], yticks[-1]

    def fx(v):
        return plot.left() + (v - x0) / ((x1 - x0) or 1) * plot.width()

    def fy(v):
        return plot.bottom() - (v - y0) / ((y1 - y0) or 1) * plot.height()

    for t in yticks:
        p.setPen(QPen(GRID, 0.6))
        p.drawLine(QPointF(plot.left(), fy(t)), QPointF(plot.right(), fy(t)))
        p.setPen(MUTED)
        p.drawText(QRectF(plot.left() - 46, fy(t) - 6, 42, 12), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, short(t))
    for t in xticks:
        p.setPen(QPen(GRID, 0.6))
        p.drawLine(QPointF(fx(t), plot.top()), QPointF(fx(t), plot.bottom()))
        p.setPen(MUTED)
        p.drawText(QRectF(fx(t) - 25, plot.bottom() + 2, 50, 12), Qt.AlignmentFlag.AlignHCenter, short(t))
    p.setPen(QPen(AXIS, 0.8))
    p.drawRect(plot)
    p.setPen(INK)
    p.drawText(QRectF(plot.left(), plot.bottom() + 14, plot.width(), 12), Qt.AlignmentFlag.AlignHCenter, x_label)
    p.save()
    p.translate(plot.left() - 50, plot.center().y())
    p.rotate(-90)
    p.drawText(QRectF(-plot.height() / 2, -10, plot.height(), 12), Qt.AlignmentFlag.AlignHCenter, y_label)
    p.restore()
    return fx, fy


def draw_scatter_chart(p: QPainter, rect: QRectF, chart: ScatterChart) -> None:
    top = _title(p, rect, chart.title)
    if not chart.points:
        _nothing(p, rect, top, chart.caption or "Nothing to compare: no configuration has both figures.")
        return
    # points too close to name beside each other are named in a key above the plot instead
    keyed = crowded([(x, y) for _l, x, y in chart.points])
    key_h = _legend(p, rect.left(), top, rect.width(), [(label, color(i), "box") for i, (label, _x, _y)
                                                          in enumerate(chart.points)]) + 4 if keyed else 0.0
    plot = QRectF(rect.left() + 62, top + key_h + 4, rect.width() - 80, rect.bottom() - top - key_h - 36)
    xs = [x for _l, x, _y in chart.points] or [0.0, 1.0]
    ys = [y for _l, _x, y in chart.points] or [0.0, 1.0]
    fx, fy = _axes(p, plot, (0.0, max(xs) * 1.15), (0.0, max(ys) * 1.15), chart.x_label, chart.y_label)
    p.setFont(font(7))
    fm = QFontMetricsF(p.font(), p.device())
    for i, (label, x, y) in enumerate(chart.points):
        p.setPen(QPen(PAPER, 0.8))
        p.setBrush(QBrush(color(i)))
        p.drawEllipse(QPointF(fx(x), fy(y)), 4.2, 4.2)
        if keyed:
            continue
        p.setPen(INK)
        width = fm.horizontalAdvance(label)
        left = fx(x) + 6 if fx(x) + 6 + width <= rect.right() else fx(x) - 6 - width
        p.drawText(QPointF(left, fy(y) - 5), label)
    p.setBrush(Qt.BrushStyle.NoBrush)


def draw_line_chart(p: QPainter, rect: QRectF, chart: LineChart) -> None:
    top = _title(p, rect, chart.title)
    if not chart.series or not chart.xs:
        _nothing(p, rect, top, chart.caption or "Nothing to draw: no series.")
        return
    legend_h = _legend(p, rect.left(), top, rect.width(), [(name, color(i), "line") for i, (name, _ys, _k) in enumerate(chart.series)])
    plot = QRectF(rect.left() + 62, top + legend_h + 4, rect.width() - 80, rect.bottom() - top - legend_h - 34)
    all_y = [v for _n, ys, _k in chart.series for v in ys] or [0.0, 1.0]
    fx, fy = _axes(p, plot, (min(chart.xs), max(chart.xs)), (0.0, max(all_y) * 1.05), chart.x_label, chart.y_label)
    p.save()
    p.setClipRect(plot)
    for i, (_name, ys, kind) in enumerate(chart.series):
        path = QPainterPath()
        for j, (x, y) in enumerate(zip(chart.xs, ys)):
            if j == 0:
                path.moveTo(fx(x), fy(y))
            else:
                path.lineTo(fx(x), fy(y))
        p.setPen(QPen(color(i), 1.6, Qt.PenStyle.DashLine if kind == "rent" else Qt.PenStyle.SolidLine))
        p.drawPath(path)
    p.restore()
    p.setFont(font(7))
    metrics = p.fontMetrics()
    shown = [(label, fx(x), fy(y)) for label, x, y in chart.markers if plot.contains(QPointF(fx(x), fy(y)))]
    boxes = marker_boxes([(px, py, metrics.horizontalAdvance(label), metrics.height()) for label, px, py in shown], plot)
    for (label, px, py), box in zip(shown, boxes):
        p.setPen(QPen(INK, 1.0))
        p.setBrush(QBrush(PAPER))
        p.drawEllipse(QPointF(px, py), 3.5, 3.5)
        p.setBrush(Qt.BrushStyle.NoBrush)
        if box.top() > py + 2 + metrics.height():  # moved down past another name: a leader back to its point
            p.setPen(QPen(INK, 0.5))
            p.drawLine(QPointF(px, py + 3.5), QPointF(box.left() + 2, box.top()))
            p.setPen(QPen(INK, 1.0))
        p.fillRect(box.adjusted(-1, 0, 1, 0), PAPER)  # the name reads over the lines it sits on
        p.drawText(box, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop), label)


def marker_boxes(anchors: list[tuple[float, float, float, float]], plot: QRectF) -> list[QRectF]:
    """Where each point's name goes: just below and right of its point (left of it where the name would
    leave the plot), moved down a line at a time until it covers no name placed before it, so that two
    break-even points close together keep both names readable. `anchors` holds (x, y, width, height)."""
    placed: list[QRectF] = []
    for px, py, width, height in anchors:
        left = px + 6 if px + 6 + width <= plot.right() else max(plot.left(), px - 6 - width)
        box = QRectF(left, py + 2, width, height)
        while any(box.intersects(other) for other in placed) and box.bottom() + height <= plot.bottom():
            box.translate(0, height)
        placed.append(box)
    return placed


def draw_curve_chart(p: QPainter, rect: QRectF, chart: CurveChart) -> None:
    top = _title(p, rect, chart.title)
    if not chart.series:
        _nothing(p, rect, top, chart.caption or "Nothing to draw: no series.")
        return
    legend_h = _legend(p, rect.left(), top, rect.width(), [(name, color(i), "line") for i, (name, _x, _y) in enumerate(chart.series)])
    plot = QRectF(rect.left() + 62, top + legend_h + 4, rect.width() - 80, rect.bottom() - top - legend_h - 34)
    all_x = [v for _n, xs, _ys in chart.series for v in xs] or [0.0, 1.0]
    all_y = [v for _n, _xs, ys in chart.series for v in ys] or [0.0, 1.0]
    fx, fy = _axes(p, plot, (0.0, max(all_x) * 1.05), (0.0, max(all_y) * 1.05), chart.x_label, chart.y_label)
    p.save()
    p.setClipRect(plot)
    for i, (_name, xs, ys) in enumerate(chart.series):
        path = QPainterPath()
        for j, (x, y) in enumerate(zip(xs, ys)):
            if j == 0:
                path.moveTo(fx(x), fy(y))
            else:
                path.lineTo(fx(x), fy(y))
        p.setPen(QPen(color(i), 1.6))
        p.setBrush(Qt.BrushStyle.NoBrush)  # a curve, not a filled shape
        p.drawPath(path)
        p.setBrush(QBrush(color(i)))
        for x, y in zip(xs, ys):
            p.drawEllipse(QPointF(fx(x), fy(y)), 1.6, 1.6)
    p.restore()
    names = [name for name, _x, _y in chart.series]
    for label, x, y in chart.markers:
        i = names.index(label) if label in names else 0
        p.setPen(QPen(INK, 1.0))
        p.setBrush(QBrush(color(i)))
        p.drawEllipse(QPointF(fx(x), fy(y)), 4.0, 4.0)
    p.setBrush(Qt.BrushStyle.NoBrush)


def draw_tornado_chart(p: QPainter, rect: QRectF, chart: TornadoChart) -> None:
    top = _title(p, rect, chart.title)
    if not chart.inputs or len(chart.series) < 2:
        _nothing(p, rect, top, NOTHING)
        return
    legend_h = _legend(p, rect.left(), top, rect.width(), [(name, color(i), "box") for i, (name, _v, _l) in
                                                           enumerate(chart.series)])
    label_w = min(170.0, rect.width() * 0.32)
    plot = QRectF(rect.left() + label_w, top + legend_h + 6, rect.width() - label_w - 8,
                  rect.bottom() - top - legend_h - 40)
    values = [v for _n, ends, likely in chart.series for pair in ends for v in (*pair, likely) if math.isfinite(v)]
    ticks = nice_ticks(min(values), max(values))
    x0, x1 = ticks[0], ticks[-1]

    def fx(v: float) -> float:
        return plot.left() + (v - x0) / ((x1 - x0) or 1.0) * plot.width()

    p.setFont(font(7))
    for t in ticks:
        p.setPen(QPen(GRID, 0.6))
        p.drawLine(QPointF(fx(t), plot.top()), QPointF(fx(t), plot.bottom()))
        p.setPen(MUTED)
        p.drawText(QRectF(fx(t) - 30, plot.bottom() + 2, 60, 12), Qt.AlignmentFlag.AlignHCenter, short(t))
    row_h = plot.height() / len(chart.inputs)
    n = len(chart.series)
    bar_h = min(8.0, row_h * 0.8 / n)
    for r, label in enumerate(chart.inputs):
        y = plot.top() + r * row_h + (row_h - bar_h * n) / 2
        p.setPen(INK)
        p.drawText(QRectF(rect.left(), plot.top() + r * row_h, label_w - 6, row_h),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, label)
        for si, (_name, ends, _likely) in enumerate(chart.series):
            lo, hi = sorted(ends[r])
            if not (math.isfinite(lo) and math.isfinite(hi)):
                continue
            if hi - lo > 1e-12 * max(1.0, abs(hi)):
                p.fillRect(QRectF(fx(lo), y + si * bar_h, max(1.0, fx(hi) - fx(lo)), bar_h * 0.85), color(si))
    for si, (_name, _ends, likely) in enumerate(chart.series):
        if math.isfinite(likely):
            p.setPen(QPen(color(si), 1.0, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(fx(likely), plot.top()), QPointF(fx(likely), plot.bottom()))
    p.setPen(MUTED)
    p.drawText(QRectF(plot.left(), plot.bottom() + 14, plot.width(), 12), Qt.AlignmentFlag.AlignHCenter, chart.x_label)


def draw_chart(p: QPainter, rect: QRectF, chart) -> None:
    if isinstance(chart, TornadoChart):
        draw_tornado_chart(p, rect, chart)
    elif isinstance(chart, BarChart):
        draw_bar_chart(p, rect, chart)
    elif isinstance(chart, ScatterChart):
        draw_scatter_chart(p, rect, chart)
    elif isinstance(chart, LineChart):
        draw_line_chart(p, rect, chart)
    elif isinstance(chart, CurveChart):
        draw_curve_chart(p, rect, chart)
