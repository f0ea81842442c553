"""The price history of the selected catalogue entry: one line per price kind (list, street,
quote…) or, for a cloud offering, per pricing model (on demand, spot, reserved), on a date axis.
pyqtgraph is imported when the first chart is drawn, not when the window opens."""

from __future__ import annotations

from datetime import UTC, date, datetime

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpudesk.ui import theme

# One colour (a gpudesk.ui.theme name) per series, in a fixed order so that "street" looks the same
# on every entry.
SERIES = (
    ("list", "List price", "series0"), ("msrp", "Launch price (MSRP)", "series0"), ("street", "Street price", "series1"),
    ("quote", "Your quotes", "price_quote"), ("reported_deal", "Reported deals", "price_deal"),
    ("on_demand", "On demand", "series0"), ("spot", "Spot", "series1"), ("reserved_1y", "Reserved 1 year", "price_quote"),
    ("reserved_3y", "Reserved 3 years", "price_deal"),
)


def timestamp(text: str) -> float:
    """Seconds since 1970 of a catalogue date (YYYY, YYYY-MM or YYYY-MM-DD), placed mid-period."""
    parts = [int(p) for p in str(text)[:10].split("-")]
    if len(parts) == 1:
        when = date(parts[0], 7, 1)
    elif len(parts) == 2:
        when = date(parts[0], parts[1], 15)
    else:
        when = date(parts[0], parts[1], parts[2])
    return datetime(when.year, when.month, when.day, tzinfo=UTC).timestamp()


class PriceChart(QWidget):
    """Shows `price_history` of one entry; hides itself when the entry has fewer than two dated prices."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("priceChart")
        self.plot = None
        self.title = QLabel("")
        self.title.setObjectName("hint")
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 4, 0, 0)
        self.layout_.addWidget(self.title)
        self.series_shown: dict[str, int] = {}
        self.setMinimumHeight(170)
        self.hide()

    def show_history(self, history: dict[str, list[tuple[str, float]]], unit: str) -> None:
        points = sum(len(v) for v in history.values())
        self.series_shown = {}
        if points < 2:
            self.hide()
            return
        if self.plot is None:
            import pyqtgraph as pg

            from gpudesk.ui.widgets.plots import SIAxis

            pg.setConfigOptions(**theme.pyqtgraph_options())
            self.plot = pg.PlotWidget(axisItems={"bottom": pg.DateAxisItem(orientation="bottom"),
                                                 "left": SIAxis("left")})
            self.plot.setObjectName("priceHistoryPlot")
            self.plot.showGrid(x=True, y=True, alpha=0.25)
            # top right: prices mostly fall over time, so the newest corner's top is the emptiest
            self.legend = self.plot.addLegend(offset=(-8, 5), labelTextSize="8pt")
            self.layout_.addWidget(self.plot, 1)
        import pyqtgraph as pg

        self.plot.clear()
        self.legend.clear()
        for key, label, name in SERIES:
            values = history.get(key)
            if not values:
                continue
            colour = theme.hex(name)
            placed = sorted((timestamp(d), v) for d, v in values)  # a year's figure sits mid-year, after its May
            xs = [x for x, _ in placed]
            ys = [v for _, v in placed]
            self.plot.plot(xs, ys, pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=6,
                           symbolBrush=pg.mkBrush(colour), symbolPen=None, name=label, stepMode=None)
            self.series_shown[key] = len(values)
        self.plot.setLabel("left", unit)
        first = min(d for v in history.values() for d, _ in v)
        last = max(d for v in history.values() for d, _ in v)
        self.title.setText(f"Price history, {first[:7]} to {last[:7]} ({points} dated prices)")
        self.show()
