"""Measured against estimated (pyqtgraph): one point per measurement at (estimate, measurement) on
log-log axes, the estimate's low-high range as a horizontal error bar, the diagonal where they
agree, and, when calibration is shown, each point's move from the default estimate to the
calibrated one."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gpudesk.core.format import si
from gpudesk.ui import theme

KIND_COLOURS = {  # gpudesk.ui.theme names
    "infer_decode": "series0",
    "infer_prefill": "series1",
    "train": "series2",
    None: "series3",
}
KIND_LABELS = {"infer_decode": "generation (decode)", "infer_prefill": "prompt processing (prefill)",
               "train": "training", None: "serving and other"}
IMPLAUSIBLE = "problem"  # theme name


class LogSIAxis(pg.AxisItem):
    """An axis over log10 values, labelled with the values themselves (1k, 20M, 0.5)."""

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's naming
        return [tick_label(10 ** v) for v in values]


def tick_label(v: float) -> str:
    """1 k, 20 M for large values; 100, 5, 0.5, 0.001 below a thousand (never 1e+02)."""
    if v >= 1000:
        return si(v, digits=2)
    if v >= 1:
        return f"{v:.3g}" if v < 10 else f"{v:.0f}"
    return f"{v:.2g}" if v >= 1e-3 else f"{v:.1e}"


def _log(v: float) -> float:
    return math.log10(v) if v and v > 0 else float("nan")


class MeasuredVsEstimated(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        pg.setConfigOptions(**theme.pyqtgraph_options())
        self.plot_widget = pg.PlotWidget(axisItems={"bottom": LogSIAxis("bottom"), "left": LogSIAxis("left")})
        self.plot_widget.setObjectName("measuredVsEstimated")
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setLabel("bottom", "estimated: likely value, bar = low–high range (each point in its metric's unit)")
        self.plot.setLabel("left", "measured (same unit as the estimate)")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.setTitle("Measured against estimated (log scales; on the line = estimate exact)", size="10pt")
        self.legend = self.plot.addLegend(offset=(10, 8), labelTextSize="8pt")
        self.diagonal = pg.InfiniteLine(pos=(0, 0), angle=45, pen=pg.mkPen(theme.hex("chart_ink"), width=1))
        self.band_hi = pg.InfiniteLine(pos=(0, math.log10(2)), angle=45,
                                       pen=pg.mkPen(theme.hex("chart_guide"), width=1, style=Qt.PenStyle.DashLine))
        self.band_lo = pg.InfiniteLine(pos=(0, -math.log10(2)), angle=45,
                                       pen=pg.mkPen(theme.hex("chart_guide"), width=1, style=Qt.PenStyle.DashLine))
        for line in (self.diagonal, self.band_hi, self.band_lo):
            self.plot.addItem(line, ignoreBounds=True)
        self.errors = pg.ErrorBarItem(x=np.array([]), y=np.array([]), left=np.array([]), right=np.array([]),
                                      beam=0.02, pen=pg.mkPen(theme.hex("chart_whisker"), width=1.2))
        self.plot.addItem(self.errors)
        self.moves = pg.PlotDataItem(pen=pg.mkPen(theme.hex("chart_whisker"), width=1, style=Qt.PenStyle.DotLine), connect="pairs")
        self.plot.addItem(self.moves)
        self.before = pg.ScatterPlotItem(size=8, pen=pg.mkPen(theme.hex("chart_whisker"), width=1.2),
                                      brush=pg.mkBrush(None))
        self.plot.addItem(self.before)
        self.points: dict[object, pg.ScatterPlotItem] = {}
        self.flagged = pg.ScatterPlotItem(size=11, symbol="x", pen=pg.mkPen(theme.hex(IMPLAUSIBLE), width=2),
                                          brush=pg.mkBrush(theme.hex(IMPLAUSIBLE)), name="implausible (flagged)", hoverable=True,
                                          tip=self._tip)
        self.plot.addItem(self.flagged)
        self.empty = pg.TextItem("", color=theme.hex("chart_muted"), anchor=(0.5, 0.5))
        self.plot.addItem(self.empty, ignoreBounds=True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot_widget)
        self.shown = 0

    @staticmethod
    def _tip(x, y, data):
        return data or ""

    def set_points(self, rows: list[dict], before: dict | None = None) -> None:
        """rows: {measured, low, likely, high, kind, implausible, label}; `before`: id -> likely of
        the uncalibrated estimate, drawn as hollow points joined to the calibrated ones."""
        groups: dict[object, list[dict]] = {}
        flagged = []
        xs, ys, left, right = [], [], [], []
        move_x, move_y, before_spots = [], [], []
        for r in rows:
            x, y = _log(r["likely"]), _log(r["measured"])
            if math.isnan(x) or math.isnan(y):
                continue
            xs.append(x)
            ys.append(y)
            left.append(max(0.0, x - _log(r["low"])) if r["low"] > 0 else 0.0)
            right.append(max(0.0, _log(r["high"]) - x))
            spot = {"pos": (x, y), "data": r["label"]}
            (flagged if r["implausible"] else groups.setdefault(r["kind"], [])).append(spot)
            if before is not None and r.get("id") in before:
                bx = _log(before[r["id"]])
                if not math.isnan(bx):
                    move_x += [bx, x]
                    move_y += [y, y]
                    before_spots.append({"pos": (bx, y), "data": "before calibration: " + r["label"]})
        self.errors.setData(x=np.array(xs), y=np.array(ys), left=np.array(left), right=np.array(right))
        self.moves.setData(np.array(move_x), np.array(move_y))
        self.before.setData(before_spots)
        for key, item in list(self.points.items()):
            if key not in groups:
                self.plot.removeItem(item)
                self.legend.removeItem(item)
                del self.points[key]
        for key, spots in groups.items():
            item = self.points.get(key)
            if item is None:
                colour = theme.colour(KIND_COLOURS.get(key, KIND_COLOURS[None]))
                item = pg.ScatterPlotItem(size=9, pen=pg.mkPen(theme.hex("marker_edge"), width=0.8), brush=pg.mkBrush(colour),
                                          name=KIND_LABELS.get(key, str(key)), hoverable=True, tip=self._tip)
                self.plot.addItem(item)
                self.points[key] = item
            item.setData(spots)
        self.flagged.setData(flagged)
        self.shown = len(xs)
        if xs:
            self.empty.setText("")
            lo, hi = min(min(xs), min(ys)), max(max(xs), max(ys))
            pad = max(0.3, (hi - lo) * 0.08)
            self.plot.setXRange(lo - pad, hi + pad)
            self.plot.setYRange(lo - pad, hi + pad)
        else:
            self.empty.setText("No measurement can be compared with an estimate yet:\nimport results, and answer "
                               "which hardware and model ran them.")
            self.empty.setPos(0.5, 0.5)
            self.plot.setXRange(0, 1)
            self.plot.setYRange(0, 1)
