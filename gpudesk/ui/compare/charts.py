"""The compare view's charts (pyqtgraph): metric scores, value per dollar against per watt, and the
cumulative cost of buying against renting with the crossing point. Curves are created once and
updated with setData."""

from __future__ import annotations

import math
from html import escape as _escape

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gpudesk.ui import theme
from gpudesk.ui.render.charts import crowded
from gpudesk.ui.widgets.plots import SIAxis

SERIES_USED = 6  # the theme's first six series colours, repeating


def _brush(i: int) -> QColor:
    return theme.series(i % SERIES_USED)




class CompareCharts(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.messages: dict = {}  # why each chart has nothing to compare ("" when it has)
        pg.setConfigOptions(**theme.pyqtgraph_options())
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.layout_widget.setObjectName("compareCharts")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.layout_widget)
        title_font = QFont()
        title_font.setPointSizeF(9.5)
        title_font.setBold(True)

        self.scores = self.layout_widget.addPlot(row=0, col=0, colspan=2)
        self.scores.setTitle("Each metric relative to the best (1 = best; taller is better)", size="10pt")
        self.scores.setYRange(0, 1.3)
        self.scores.getAxis("left").setTicks([[(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1.0)]])
        self.scores.showGrid(y=True, alpha=0.25)
        self.scores_legend = self.scores.addLegend(offset=(10, 5), labelTextSize="8pt", colCount=3)
        self.bars: list[pg.BarGraphItem] = []
        self.empty_scores = self._message(self.scores)

        self.value = self.layout_widget.addPlot(row=1, col=0, axisItems={"left": SIAxis("left"), "bottom": SIAxis("bottom")})
        self.value.setTitle("Performance per dollar against per watt", size="10pt")
        self.value.setLabel("bottom", "tokens/s per kW")
        self.value.setLabel("left", "tokens per $")
        self.value.showGrid(x=True, y=True, alpha=0.25)
        self.value_points = pg.ScatterPlotItem(size=11, pen=pg.mkPen(theme.hex("marker_edge")))
        self.value.addItem(self.value_points)
        self.value_labels: list[pg.TextItem] = []
        self.value_key = pg.TextItem("", anchor=(1.0, 1.0))  # names points too close to label, bottom right
        self.value_key.setVisible(False)
        self.value.addItem(self.value_key, ignoreBounds=True)
        self.empty_value = self._message(self.value)

        self.cost = self.layout_widget.addPlot(row=1, col=1, axisItems={"left": SIAxis("left")})
        self.cost.setTitle("Cumulative cost: buying against renting", size="10pt")
        self.cost.setLabel("bottom", "months")
        self.cost.setLabel("left", "$")
        self.cost.showGrid(x=True, y=True, alpha=0.25)
        self.cost_legend = self.cost.addLegend(offset=(10, 5), labelTextSize="8pt")
        self.cost_curves: list[pg.PlotDataItem] = []
        self.crossings = pg.ScatterPlotItem(size=10, symbol="o", brush=pg.mkBrush(theme.hex("chart_fill")),
                                        pen=pg.mkPen(theme.hex("chart_ink"), width=1.5))
        self.cost.addItem(self.crossings)
        self.crossing_labels: list[pg.TextItem] = []
        self.empty_cost = self._message(self.cost)

        self.serving = self.layout_widget.addPlot(row=2, col=0, colspan=2,
                                                  axisItems={"left": SIAxis("left"), "bottom": SIAxis("bottom")})
        self.serving.setTitle("Throughput against interactivity (serving curve)", size="10pt")
        self.serving.setLabel("bottom", "output tokens/s per user")
        self.serving.setLabel("left", "output tokens/s per GPU")
        self.serving.showGrid(x=True, y=True, alpha=0.25)
        self.serving_legend = self.serving.addLegend(offset=(-10, 5), labelTextSize="8pt", colCount=3)
        self.serving_curves: list[pg.PlotDataItem] = []
        self.operating = pg.ScatterPlotItem(size=11, pen=pg.mkPen(theme.hex("marker_edge"), width=1.5))
        self.serving.addItem(self.operating)
        self.serving.setVisible(False)

    @staticmethod
    def _message(plot) -> pg.TextItem:
        """A sentence in the middle of a plot that has nothing to show."""
        item = pg.TextItem("", color=theme.hex("chart_text"), anchor=(0.5, 0.5))
        item.setTextWidth(300)
        item.setZValue(10)
        plot.addItem(item, ignoreBounds=True)
        item.setVisible(False)
        return item

    @staticmethod
    def _show_message(plot, item: pg.TextItem, text: str, grid_x: bool = True) -> None:
        """Show `text` alone in `plot` (axes cleared to 0–1), or hide it when there is none."""
        item.setVisible(bool(text))
        for axis in ("left", "bottom"):
            plot.getAxis(axis).setStyle(showValues=not text, tickLength=0 if text else -5)
        # an empty plot shows its sentence on a clean ground, not on a grid of nothing
        plot.showGrid(x=grid_x and not text, y=not text, alpha=0.25)
        if not text:
            return
        item.setHtml(f"<div style='text-align:center; font-size:10pt'>{_escape(text)}</div>")
        item.setTextWidth(300)
        plot.setXRange(0, 1, padding=0)
        plot.setYRange(0, 1, padding=0)
        item.setPos(0.5, 0.5)

    # ------------------------------------------------------------------ updates
    def set_comparison(self, comp) -> None:
        messages = getattr(comp, "chart_messages", {}) or {}
        self.messages = dict(messages)
        self._set_scores(comp.score_bars if not messages.get("scores") else {})
        self._show_message(self.scores, self.empty_scores, messages.get("scores", ""), grid_x=False)
        self._set_value(comp.value_points if not messages.get("value") else [])
        self._show_message(self.value, self.empty_value, messages.get("value", ""))
        self._set_cost(comp.cost_curves)
        self._show_message(self.cost, self.empty_cost, messages.get("cost", "") if not comp.cost_curves.get("series") else "")
        self._set_serving(getattr(comp, "serving_curves", None) or {})

    def _set_serving(self, curves: dict) -> None:
        """Each option's serving curve (created once, updated with setData) and its operating point;
        the plot shows only for serving workloads."""
        series = curves.get("series", [])
        self.serving.setVisible(bool(series))
        while len(self.serving_curves) < len(series):
            self.serving_curves.append(self.serving.plot([], []))
        self.serving_legend.clear()
        spots = []
        for i, curve in enumerate(self.serving_curves):
            if i < len(series):
                s = series[i]
                curve.setData(s["xs"], s["ys"], pen=pg.mkPen(_brush(i), width=2), symbol="o", symbolSize=4,
                              symbolBrush=_brush(i), symbolPen=None)
                curve.setVisible(True)
                self.serving_legend.addItem(curve, s["name"])
                if s.get("operating"):
                    spots.append({"pos": s["operating"], "brush": _brush(i), "data": s["name"]})
            else:
                curve.setData([], [])
                curve.setVisible(False)
        self.operating.setData(spots)
        if series:
            self.serving.enableAutoRange()

    def _set_scores(self, bars: dict) -> None:
        metrics = bars.get("metrics", [])
        options = bars.get("options", [])
        scores = bars.get("scores", [])
        n = max(1, len(options))
        width = 0.8 / n
        while len(self.bars) < n:
            item = pg.BarGraphItem(x=[], height=[], width=width, brush=_brush(len(self.bars)), pen=pg.mkPen(None))
            self.scores.addItem(item)
            self.bars.append(item)
        self.scores_legend.clear()
        for i, item in enumerate(self.bars):
            if i < len(options):
                xs = [m + (i - (n - 1) / 2) * width for m in range(len(metrics))]
                heights = [scores[m][i] if i < len(scores[m]) else 0 for m in range(len(metrics))]
                item.setOpts(x=xs, height=heights, width=width * 0.92, brush=_brush(i))
                item.setVisible(True)
                self.scores_legend.addItem(item, options[i])
            else:
                item.setOpts(x=[], height=[])
                item.setVisible(False)
        axis = self.scores.getAxis("bottom")
        axis.setTicks([[(m, label) for m, label in enumerate(metrics)]])
        if metrics:
            self.scores.getAxis("left").setTicks([[(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1.0)]])
            self.scores.setXRange(-0.6, max(0.6, len(metrics) - 0.4), padding=0)
            self.scores.setYRange(0, 1.3, padding=0)

    def _set_value(self, points: list[dict]) -> None:
        spots = [{"pos": (p["per_kw"], p["per_dollar"]), "brush": _brush(i), "data": p["name"]} for i, p in enumerate(points)]
        self.value_points.setData(spots)
        for label in self.value_labels:
            self.value.removeItem(label)
        self.value_labels = []
        right = max((p["per_kw"] for p in points), default=0)
        keyed = crowded([(p["per_kw"], p["per_dollar"]) for p in points])
        self.value_key.setVisible(keyed)
        if keyed:  # names beside points this close would overlap: the key names them instead
            self.value_key.setHtml("<div style='font-size:8pt'>" + "<br>".join(
                f"<span style='color:{_brush(i).name()}'>●</span>&nbsp;"
                f"<span style='color:{theme.hex('chart_text')}'>{_escape(p['name'])}</span>"
                for i, p in enumerate(points)) + "</div>")
            self.value_key.setPos(right * 1.22, 0.0)
        for i, p in enumerate([] if keyed else points):  # otherwise each point carries its name
            near_right = p["per_kw"] > 0.6 * right and len(points) > 1
            label = pg.TextItem(p["name"], color=_brush(i), anchor=(1.05, 1.2) if near_right else (-0.05, 1.2))
            label.setPos(p["per_kw"], p["per_dollar"])
            self.value.addItem(label)
            self.value_labels.append(label)
        if spots:
            self.value.setXRange(0, max(s["pos"][0] for s in spots) * 1.25)
            self.value.setYRange(0, max(s["pos"][1] for s in spots) * 1.25)

    def _set_cost(self, curves: dict) -> None:
        series = curves.get("series", [])
        xs = curves.get("months", [])
        while len(self.cost_curves) < len(series):
            self.cost_curves.append(self.cost.plot([], []))
        self.cost_legend.clear()
        # the lines run under the key: a backing of the chart's own colour keeps its names readable
        backing = QColor(theme.hex("chart_fill"))
        backing.setAlpha(225)
        self.cost_legend.setBrush(pg.mkBrush(backing))
        for i, curve in enumerate(self.cost_curves):
            if i < len(series):
                s = series[i]
                style = Qt.PenStyle.DashLine if s["kind"] == "rent" else Qt.PenStyle.SolidLine
                curve.setData(xs, s["ys"], pen=pg.mkPen(_brush(i), width=2, style=style))
                curve.setVisible(True)
                self.cost_legend.addItem(curve, s["name"])
            else:
                curve.setData([], [])
                curve.setVisible(False)
        crossings = curves.get("crossings", [])
        self.crossings.setData([c["month"] for c in crossings], [c["usd"] for c in crossings])
        for label in self.crossing_labels:
            self.cost.removeItem(label)
        self.crossing_labels = []
        for c in crossings:
            label = pg.TextItem(f"break-even: {c['month']:.1f} months", color=theme.hex("chart_ink"),
                                anchor=(-0.05, 1.25))
            label.setPos(c["month"], c["usd"])
            self.cost.addItem(label)
            self.crossing_labels.append(label)
        if series:
            self._cost_headroom(series)

    def _cost_headroom(self, series: list[dict]) -> None:
        """Room above the lines for the key, so that no line runs under it: the key goes in two columns
        past two entries, and the top of the axis rises by the key's share of the plot's height."""
        self.cost_legend.setColumnCount(2 if len(series) > 2 else 1)
        values = [y for s in series for y in s["ys"] if y is not None]
        if not values:
            self.cost.enableAutoRange()
            return
        low, high = min(0.0, min(values)), max(values)
        rows = math.ceil(len(series) / (2 if len(series) > 2 else 1))
        plot_px = self.cost.getViewBox().height() or 160.0
        key = min(0.6, (rows * 18.0 + 12.0) / max(plot_px, 1.0))  # the key's share of the plot's height
        span = (high - low) or max(abs(high), 1.0)
        self.cost.enableAutoRange(axis="x")
        self.cost.setYRange(low, high + span * key / (1.0 - key), padding=0.02)
