"""The Benchmarks view's "Imported files" tab: each import with what it read, stored and found wrong."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpudesk.ui import theme
from gpudesk.ui.benchmarks.words import SEVERITY, tool_words
from gpudesk.ui.models.table import ROW_ROLE, Column, RowSortProxy, RowTableModel, fit_columns


class ImportsPanel(QWidget):
    """The imported files, the selected one's problems, and a button to delete it."""

    delete_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.imports_model = RowTableModel([
            Column("imported_at", "Imported", fmt=lambda v: (v or "")[:16].replace("T", " ")),
            Column("imported_by", "By"),
            Column("source_file", "File"),
            Column("tool", "Taken for"),
            Column("read", "Read", numeric=True),
            Column("stored", "Stored", numeric=True),
            Column("duplicates", "Duplicates", numeric=True),
            Column("problem_count", "Problems", numeric=True),
        ])
        proxy = RowSortProxy(self)
        proxy.setSourceModel(self.imports_model)
        self.imports_table = QTableView()
        self.imports_table.setModel(proxy)
        self.imports_table.setSortingEnabled(True)
        self.imports_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.imports_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.imports_table.verticalHeader().hide()
        self.imports_table.horizontalHeader().setStretchLastSection(True)
        self.imports_table.selectionModel().selectionChanged.connect(self._import_selected)
        self.import_detail = QTextBrowser()
        self.delete_import_button = QPushButton("Delete this import")
        self.delete_import_button.setToolTip("Remove the file's measurements (import it again to bring them back)")
        self.delete_import_button.clicked.connect(lambda *_: self.delete_requested.emit())
        layout = QVBoxLayout(self)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.imports_table)
        split.addWidget(self.import_detail)
        layout.addWidget(split, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.delete_import_button)
        layout.addLayout(row)

    def fill(self, rows: list[dict]) -> None:
        """Show the stored imports (store.imports' rows)."""
        for r in rows:
            r["problem_count"] = len(r.get("problems") or [])
            r["tool"] = tool_words(r.get("format"))
        self.imports_model.set_rows(rows)
        fit_columns(self.imports_table, self.imports_model, maximum=520)
        self._import_selected()

    def selected_import(self) -> dict | None:
        rows = self.imports_table.selectionModel().selectedRows()
        return rows[0].data(ROW_ROLE) if rows else None

    def _import_selected(self, *_args) -> None:
        imp = self.selected_import()
        self.delete_import_button.setEnabled(imp is not None)
        if imp is None:
            self.import_detail.setHtml(f"<p style='color:{theme.hex('muted')}'>Select an imported file to see its problems.</p>")
            return
        problems = "".join(
            f"<li><span style='color:{theme.hex(SEVERITY.get(p.get('severity'), 'ink'))}'>{escape(p.get('severity', ''))}</span>"
            f" {escape(p.get('place') or '')}: {escape(p.get('message') or '')}</li>" for p in imp.get("problems") or [])
        by = f" by {escape(imp['imported_by'])}" if imp.get("imported_by") else ""
        self.import_detail.setHtml(
            f"<b>{escape(imp['source_file'])}</b> (taken for {escape(tool_words(imp['format']))}), imported "
            f"{escape((imp['imported_at'] or '')[:16].replace('T', ' '))}{by}: read {imp['read']:,}, "
            f"stored {imp['stored']:,}, {imp['duplicates']:,} already stored."
            + (f"<ul>{problems}</ul>" if problems else "<p>No problems.</p>"))

