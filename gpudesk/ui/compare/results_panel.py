"""The right side of the compare view below the toolbar: the question the comparison answers,
the table with the recommendation, the charts (built on first show) and the assumptions and
sources."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpudesk.ui import theme
from gpudesk.ui.compare.model import CompareTableModel
from gpudesk.ui.compare.presenter import details_html


class ResultsPanel(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.comparison = None
        self.model = CompareTableModel(self)
        self.table = self._make_table()
        # the question the comparison answers, as the PDF's title shows it
        self.heading = QLabel("")
        self.heading.setObjectName("compareTitle")
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.heading.setStyleSheet(f"font-size: 11pt; font-weight: 600; color: {theme.hex('ink')}; "
                                   "padding: 2px 0 0 0;")
        self.recommendation = QTextBrowser()
        self.recommendation.setObjectName("recommendation")
        self.recommendation.setMaximumHeight(170)
        self.details = QTextBrowser()
        self.details.setObjectName("compareDetails")
        self.details.setOpenExternalLinks(True)
        self.charts = None  # built on first show of the Charts tab (pyqtgraph loads there)
        self.charts_holder = QWidget()
        QVBoxLayout(self.charts_holder).setContentsMargins(0, 0, 0, 0)
        self.why = None  # built on first show of the Why tab
        self.why_holder = QWidget()
        QVBoxLayout(self.why_holder).setContentsMargins(0, 0, 0, 0)
        self.why_ready = []  # callbacks to connect the Why panel's signals once it exists
        table_page = QSplitter(Qt.Orientation.Vertical)
        table_page.addWidget(self.table)
        table_page.addWidget(self.recommendation)
        table_page.setStretchFactor(0, 4)
        table_page.setStretchFactor(1, 1)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("compareTabs")
        self.tabs.addTab(table_page, "Table")
        self.tabs.addTab(self.charts_holder, "Charts")
        self.tabs.addTab(self.why_holder, "Why")
        self.tabs.setTabToolTip(2, "What the recommendation rests on: what moves it, what would change it, how "
                                   "likely it is to hold")
        self.tabs.addTab(self.details, "Assumptions and sources")
        self.tabs.currentChanged.connect(self._tab_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.tabs, 1)

    def _make_table(self) -> QTableView:
        table = QTableView()
        table.setObjectName("compareTable")
        table.setModel(self.model)
        table.setWordWrap(True)
        table.verticalHeader().setVisible(False)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        # the configurations share the width: up to four fit 1366×768 and six 1920×1080 without
        # scrolling; names too long for a column elide in the middle (the header's tooltip has it all)
        header = table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header.setMinimumSectionSize(60)
        # elide with the header's bold font (the style sheet's bold is not what QHeaderView measures with)
        bold = header.font()
        bold.setBold(True)
        header.setFont(bold)
        table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        return table

    def show_comparison(self, comparison) -> None:
        self.comparison = comparison
        self.heading.setText(comparison.question)
        self.heading.setToolTip("The question this comparison answers: the PDF report's title")
        self.model.set_comparison(comparison)
        self.fit_table()
        self.recommendation.setHtml(
            "<p style='font-size:10.5pt'><b>Recommendation.</b> " + escape(comparison.recommendation) + "</p>")
        self.details.setHtml(details_html(comparison, theme.hex("muted")))
        if self.charts is not None:
            self.charts.set_comparison(comparison)
        if self.why is not None:
            self.why.set_comparison(comparison)

    def show_problem(self, text: str) -> None:
        self.recommendation.setPlainText(text)

    def fit_table(self) -> None:
        """Metric and direction take what they need (the metric up to a third of the width); the
        configurations stretch over the rest."""
        header = self.table.horizontalHeader()
        if self.model.columnCount() < 2:
            return
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Fixed)
        for c in range(2, self.model.columnCount()):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.Stretch)
        width = self.table.viewport().width()
        metric = self.table.sizeHintForColumn(0) + 12
        header.resizeSection(0, max(150, min(metric, 280, width // 4)))
        header.resizeSection(1, max(56, header.sectionSizeHint(1)))
        self.table.resizeRowsToContents()

    def ensure_why(self):
        """The Why panel, built the first time it is wanted."""
        if self.why is None:
            from gpudesk.ui.compare.why import WhyPanel

            self.why = WhyPanel()
            self.why_holder.layout().addWidget(self.why)
            for connect in self.why_ready:
                connect(self.why)
            if self.comparison is not None:
                self.why.set_comparison(self.comparison)
        return self.why

    def _tab_changed(self, index: int) -> None:
        if self.tabs.widget(index) is self.why_holder:
            self.ensure_why()
        if self.tabs.widget(index) is self.charts_holder and self.charts is None:
            from gpudesk.ui.compare.charts import CompareCharts

            self.charts = CompareCharts()
            self.charts_holder.layout().addWidget(self.charts)
            if self.comparison is not None:
                self.charts.set_comparison(self.comparison)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.comparison is not None:
            self.fit_table()
