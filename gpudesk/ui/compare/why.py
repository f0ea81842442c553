"""The compare view's "Why" tab: what the recommendation rests on. A tornado chart (pyqtgraph) of the
deciding outcome with each uncertain input moved alone across its range, the probability that each
configuration wins, and each input's crossover in words. A click on a bar opens that input for
editing; the view applies the new value to the scenario and compares again. The figures come from
`gpudesk.core.defend` through the comparison; nothing is computed here."""

from __future__ import annotations

from html import escape

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QTextBrowser, QVBoxLayout, QWidget

from gpudesk.core.defend import ROWS, value_text
from gpudesk.ui import theme

SHOWN = 10  # the inputs with the largest effect
SERIES_USED = 6


class WhyPanel(QWidget):
    row_chosen = Signal(str)  # the outcome to decide by
    input_clicked = Signal(object)  # a defend.Input: open it for editing

    def __init__(self, parent=None):
        super().__init__(parent)
        self.why = None
        self.bars_shown: list = []
        pg.setConfigOptions(**theme.pyqtgraph_options())
        self.decide = QComboBox()
        self.decide.setObjectName("whyDecideBy")
        for key, (label, _unit, _fmt) in ROWS.items():
            self.decide.addItem(label, key)
        self.decide.setToolTip("The outcome the recommendation rests on (saved with the scenario)")
        self.decide.activated.connect(lambda _i: self.row_chosen.emit(self.decide.currentData()))
        self.odds = QLabel("")
        self.odds.setObjectName("whyOdds")
        self.odds.setWordWrap(True)
        self.odds.setTextFormat(Qt.TextFormat.RichText)
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("whyTornado")
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.showGrid(x=True, alpha=0.25)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.items: list = []
        self.details = QTextBrowser()
        self.details.setObjectName("whyDetails")
        self._lay_out()

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        top.addWidget(QLabel("Decide by"))
        top.addWidget(self.decide)
        top.addWidget(self.odds, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.plot)
        split.addWidget(self.details)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(split, 1)

    def set_comparison(self, comparison) -> None:
        self.why = comparison.why
        for item in self.items:
            self.plot.removeItem(item)
        self.items.clear()
        if self.why is None:
            message = comparison.why_error or "Fewer than two configurations can run this workload: nothing to weigh."
            self.odds.setText(escape(message))
            self.details.setHtml(f"<p>{escape(message)}</p>")
            self.plot.setTitle("")
            return
        why = self.why
        self.decide.setCurrentIndex(max(0, self.decide.findData(why.row)))
        self.odds.setText(odds_html(why))
        self._draw(why)
        self.details.setHtml(details_html(why, theme.hex("muted")))

    def _draw(self, why) -> None:
        shown = list(reversed(why.bars[:SHOWN]))  # the largest effect at the top
        self.bars_shown = shown
        n = len(why.names)
        height = 0.8 / max(1, n)
        for c in range(n):
            x0, x1, ys = [], [], []
            for i, bar in enumerate(shown):
                lo, hi = sorted((bar.at_low[c], bar.at_high[c]))
                x0.append(lo)
                x1.append(hi)
                ys.append(i + (c - (n - 1) / 2) * height)
            widths = [max(b - a, 1e-12) for a, b in zip(x0, x1)]
            item = pg.BarGraphItem(x0=x0, y=ys, width=widths, height=height * 0.9,
                                   brush=theme.series(c % SERIES_USED), pen=pg.mkPen(None))
            self.plot.addItem(item)
            self.items.append(item)
            line = pg.InfiniteLine(pos=why.likely[c], angle=90,
                                   pen=pg.mkPen(theme.series(c % SERIES_USED), width=1, style=Qt.PenStyle.DashLine))
            self.plot.addItem(line)
            self.items.append(line)
        axis = self.plot.getAxis("left")
        axis.setTicks([[(i, _short(b.input.label)) for i, b in enumerate(shown)]])
        self.plot.setLabel("bottom", f"{why.label} ({why.unit}) with each input at the ends of its range")
        self.plot.setYRange(len(shown) - max(len(shown), 6) - 0.4, len(shown) - 0.4)  # few inputs: thin bars, top
        self.plot.setTitle(f"What moves {why.label.lower()}: dashed lines are the likely values; click a bar to edit "
                           "that input", size="9pt")

    def _clicked(self, event) -> None:
        if not self.bars_shown:
            return
        point = self.plot.plotItem.vb.mapSceneToView(event.scenePos())
        index = int(round(point.y()))
        if 0 <= index < len(self.bars_shown):
            self.input_clicked.emit(self.bars_shown[index].input)


def _short(label: str, width: int = 34) -> str:
    return label if len(label) <= width else label[:width - 1] + "…"


def odds_html(why) -> str:
    """Each configuration in its bars' colour (the chart's key) with how often it wins."""
    order = sorted(range(len(why.names)), key=lambda i: -why.probabilities[i])
    parts = [f"<span style='color:{theme.series(i % SERIES_USED).name()}'>■</span> <b>{escape(why.names[i])}</b> "
             f"{why.probabilities[i]:.0%}" for i in order]
    return (f"Lowest {escape(why.label.lower())} in {why.draws:,} draws of the uncertain inputs: " + " · ".join(parts))


def details_html(why, muted: str) -> str:
    _label, _unit, fmt = ROWS[why.row]
    rows = []
    for bar in why.bars:
        inp = bar.input
        x = bar.crossover
        where = ("no value in range changes it" if x is None else
                 f"<b>{escape(why.names[x.winner])}</b> wins past {escape(x.text)}")
        span = ", ".join(f"{escape(why.names[c])} {fmt(min(bar.at_low[c], bar.at_high[c]))}–"
                         f"{fmt(max(bar.at_low[c], bar.at_high[c]))}" for c in inp.configs)
        rows.append(f"<tr><td>{escape(inp.label)}</td><td>{escape(_range_text(inp))}</td><td>{where}</td>"
                    f"<td style='color:{muted}'>{span}</td></tr>")
    return (f"<p><b>{escape(why.sentence)}</b></p>"
            "<table cellspacing='0' cellpadding='3'><tr><th align='left'>Input</th><th align='left'>Range</th>"
            "<th align='left'>Crossover</th><th align='left'>Moves</th></tr>" + "".join(rows) + "</table>"
            + "".join(f"<p style='color:{muted}'>{escape(a)}</p>" for a in why.assumptions))


def _range_text(inp) -> str:
    return f"{value_text(inp, inp.low)} – {value_text(inp, inp.high)}"
