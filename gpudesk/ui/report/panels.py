"""The Reports view's panels: the table of written reports and the row of buttons under it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QPushButton, QTableView, QWidget

from gpudesk.ui import theme
from gpudesk.ui.models.table import Column, RowTableModel


def when_text(text: str) -> str:
    """An ISO timestamp as "YYYY-MM-DD HH:MM"."""
    return text[:16].replace("T", " ") if text else ""


def reports_model() -> RowTableModel:
    """One row per report; a report whose PDF is missing is greyed, with a tooltip saying so."""
    model = RowTableModel([
        Column("created", "Written", fmt=when_text),
        Column("question", "Question"),
        Column("options_text", "Configurations"),
        Column("kind", "From"),
        Column("catalogue_version", "Catalogue"),
        Column("file_state", "File"),
    ])
    model.row_style = lambda r: {"color": theme.hex("faint"), "tooltip": f"{r['path']} is missing"} \
        if not r["exists"] else {"tooltip": r["path"]}
    return model


def reports_table(proxy) -> QTableView:
    """Newest first, one row selected at a time."""
    table = QTableView()
    table.setModel(proxy)
    table.setSortingEnabled(True)
    table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setAlternatingRowColors(True)
    table.verticalHeader().hide()
    table.horizontalHeader().setStretchLastSection(True)
    return table


class ReportActions(QWidget):
    """Open the PDF, show its folder, reopen its scenario, write it again; remove it from the list."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.open_button = QPushButton("Open PDF")
        self.folder_button = QPushButton("Show folder")
        self.reopen_button = QPushButton("Open scenario")
        self.reopen_button.setToolTip("Open the scenario behind this report in the view that wrote it")
        self.again_button = QPushButton("Write again with today's catalogue…")
        self.forget_button = QPushButton("Remove from list")
        self.forget_button.setToolTip("Forget this entry; the PDF file itself is kept")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for b in (self.open_button, self.folder_button, self.reopen_button, self.again_button):
            layout.addWidget(b)
        layout.addStretch(1)
        layout.addWidget(self.forget_button)
