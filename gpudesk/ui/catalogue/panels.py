"""The catalogue view's panels: the table, the side panel (sourced detail over the price chart) and
the action bar (row count, add, edit, delete, quote)."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QMimeData, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QWidget,
)

from gpudesk.ui.catalogue.price_chart import PriceChart


def catalogue_table(model) -> QTableView:
    """The rows table: sortable, multi-row selection, movable columns, a right-click menu on rows and header."""
    table = QTableView()
    table.setObjectName("catalogueTable")
    table.setModel(model)
    table.setSortingEnabled(True)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.setAlternatingRowColors(True)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(26)
    header = table.horizontalHeader()
    header.setStretchLastSection(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    header.setSectionsMovable(True)
    header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    header.setToolTip("Drag a header to reorder; right-click to choose the columns")
    return table


def table_and_side(table: QTableView, side: QWidget) -> QSplitter:
    """The table on the left, three quarters of the width; the side panel on the right."""
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.setObjectName("catalogueSplitter")
    splitter.addWidget(table)
    splitter.addWidget(side)
    splitter.setStretchFactor(0, 3)
    splitter.setStretchFactor(1, 1)
    splitter.setSizes([880, 300])  # at 1280 pixels the buyer columns fit beside the detail
    splitter.setChildrenCollapsible(False)
    return splitter


class SidePanel(QSplitter):
    """The selected row's sourced figures over its price history."""

    def __init__(self, parent=None):
        super().__init__(Qt.Orientation.Vertical, parent)
        self.setObjectName("catalogueSide")
        self.detail = QTextBrowser()
        self.detail.setObjectName("detail")
        self.detail.setOpenExternalLinks(True)
        self.detail.setMinimumWidth(300)  # a label, a value such as "datacenter" or "31.2 TFLOPS" whole, and its source
        # A record's figures are longer than the panel. A scroll bar that appears only after the
        # first layout narrows the page and lays the whole document out a second time (about a
        # tenth of the populated window's start-up, in instructions).
        self.detail.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.price_chart = PriceChart()
        self.addWidget(self.detail)
        self.addWidget(self.price_chart)
        self.setStretchFactor(0, 3)
        self.setStretchFactor(1, 2)
        self.setSizes([520, 280])
        self.setChildrenCollapsible(False)


class ActionBar(QWidget):
    """The row count on the left; add, edit, delete and add-quote buttons on the right."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.add_button = QPushButton("Add…")
        self.add_button.setObjectName("addButton")
        self.edit_button = QPushButton("Edit…")
        self.delete_button = QPushButton("Delete")
        self.quote_button = QPushButton("Add quote…")
        self.quote_button.setObjectName("quoteButton")
        self.count_label = QLabel("")
        self.count_label.setObjectName("hint")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)  # the view's spacing, as when this row was a layout inside the view's
        layout.addWidget(self.count_label)
        layout.addStretch(1)
        for b in (self.add_button, self.edit_button, self.delete_button, self.quote_button):
            layout.addWidget(b)


def table_mime(cols, rows: list[dict]) -> QMimeData:
    """`rows` under `cols` (Columns) as tab-separated text and as an HTML table, for the clipboard."""
    heads = [c.header.replace("\n", " ") for c in cols]  # two-line headers on one line
    lines = ["\t".join(heads)]
    html_rows = ["<tr>" + "".join(f"<th>{escape(h)}</th>" for h in heads) + "</tr>"]
    for row in rows:
        cells = [c.display(row.get(c.key)) for c in cols]
        lines.append("\t".join(cells))
        html_rows.append("<tr>" + "".join(f"<td>{escape(x)}</td>" for x in cells) + "</tr>")
    mime = QMimeData()
    mime.setText("\n".join(lines) + "\n")
    mime.setHtml("<table>" + "".join(html_rows) + "</table>")
    return mime
