"""The Reports view: every procurement PDF written from the compare view, the cluster canvas or
`gpudesk compare --pdf`, with the question it answered, its recommendation and the catalogue it
used. Open a PDF or its folder, reopen the scenario behind it, write it again with today's
catalogue, or make a report straight from a scenario file."""

from __future__ import annotations

import logging
from datetime import date
from html import escape
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpudesk.ui import theme
from gpudesk.ui.models.table import ROW_ROLE, RowSortProxy, fit_columns
from gpudesk.ui.report.panels import ReportActions, reports_model, reports_table, when_text

log = logging.getLogger(__name__)


class ReportsView(QWidget):
    open_requested = Signal(str, str)  # page key, scenario path
    status_message = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.records = []
        self.history_error = ""

        title = QLabel("Reports")
        title.setObjectName("pageTitle")
        self.subtitle = QLabel("Procurement PDFs you have written, with the question, the recommendation and the "
                               "catalogue behind each.")
        self.subtitle.setObjectName("pageSubtitle")
        self.error = QLabel()
        self.error.setObjectName("errorLabel")
        self.error.setWordWrap(True)
        self.error.hide()

        self.detail = QTextBrowser()
        self.detail.setOpenExternalLinks(False)
        self.detail.setOpenLinks(False)
        self.detail.anchorClicked.connect(lambda url: QDesktopServices.openUrl(url))
        self.actions_bar = self._make_actions()

        left = self._make_list()
        self.splitter = QSplitter()
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.addWidget(title)
        layout.addWidget(self.subtitle)
        layout.addWidget(self.error)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.actions_bar)
        self.refresh()

    def _make_list(self) -> QWidget:
        """The search and 'New report' row over the table of reports (or the hint while there are none)."""
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search questions, configurations, files…")
        self.search.setClearButtonEnabled(True)
        self.new_button = QPushButton("New report from scenario…")
        self.new_button.setToolTip("Choose a scenario file (.json) and write its comparison as a PDF")
        self.new_button.clicked.connect(lambda *_: self.new_from_scenario())
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.new_button)

        self.model = reports_model()
        self.proxy = RowSortProxy(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)
        self.search.textChanged.connect(self.proxy.setFilterFixedString)
        self.table = reports_table(self.proxy)
        self.table.doubleClicked.connect(lambda _i: self.open_pdf())
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(top)
        left_layout.addWidget(self.table, 1)
        self.empty = QLabel("No reports yet. Export a PDF from <b>Compare</b> or <b>Cluster</b>, run "
                            "<code>gpudesk compare SCENARIO.json --pdf OUT.pdf</code>, or make one here from a "
                            "scenario file.")
        self.empty.setWordWrap(True)
        self.empty.setObjectName("hint")
        left_layout.addWidget(self.empty)
        return left

    def _make_actions(self) -> ReportActions:
        bar = ReportActions()
        self.open_button, self.folder_button, self.reopen_button = bar.open_button, bar.folder_button, bar.reopen_button
        self.again_button, self.forget_button = bar.again_button, bar.forget_button
        self.open_button.clicked.connect(lambda *_: self.open_pdf())
        self.folder_button.clicked.connect(lambda *_: self.show_folder())
        self.reopen_button.clicked.connect(lambda *_: self.open_scenario())
        self.again_button.clicked.connect(lambda *_: self.write_again())
        self.forget_button.clicked.connect(lambda *_: self.forget())
        return bar

    # ------------------------------------------------------------------ data
    def set_catalogue(self, catalogue) -> None:
        self.catalogue = catalogue
        self._selection_changed()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.refresh()  # reports written elsewhere (another view, the CLI) since the last look

    def refresh(self) -> None:
        from gpudesk.core.report.history import HistoryError, history_path, load_history

        selected = self.selected()
        try:
            self.records = load_history()
            self.history_error = ""
        except HistoryError as exc:
            self.records = []
            self.history_error = str(exc)
        self.error.setText(f"The list of reports cannot be read: {escape(self.history_error, quote=False)}<br>Fix or remove "
                           f"{escape(str(history_path()))}; nothing is written to it until then."
                           if self.history_error else "")
        self.error.setVisible(bool(self.history_error))
        rows = []
        for r in self.records:
            row = r.to_json()
            row["exists"] = r.exists()
            row["file_state"] = Path(r.path).name if row["exists"] else f"{Path(r.path).name} (missing)"
            row["options_text"] = ", ".join(r.options)
            row["kind"] = "Cluster" if r.kind == "cluster" else ("Compare" if r.origin == "app" else "Command line")
            row["record"] = r
            rows.append(row)
        self.model.set_rows(rows)
        fit_columns(self.table, self.model, maximum=300)
        self.empty.setVisible(not rows and not self.history_error)
        self.new_button.setEnabled(not self.history_error)
        if selected is not None:
            self.select(selected.id)
        elif rows:
            self.table.selectRow(0)
        self._selection_changed()

    def selected(self):
        if self.table.selectionModel() is None:
            return None
        rows = self.table.selectionModel().selectedRows()
        return rows[0].data(ROW_ROLE)["record"] if rows else None

    def select(self, record_id: str) -> bool:
        for r in range(self.proxy.rowCount()):
            if self.proxy.index(r, 0).data(ROW_ROLE)["id"] == record_id:
                self.table.selectRow(r)
                return True
        return False

    def _selection_changed(self, *_args) -> None:
        record = self.selected()
        for b in (self.open_button, self.folder_button):
            b.setEnabled(record is not None and record.exists())
        self.reopen_button.setEnabled(record is not None and bool(record.scenario_path)
                                      and Path(record.scenario_path).is_file())
        self.again_button.setEnabled(record is not None and bool(record.scenario_path) and self.catalogue is not None
                                     and not getattr(self.catalogue, "read_only", False))
        self.again_button.setToolTip("Build the comparison again from its scenario with the current catalogue and "
                                     "write a new PDF" + (" (the cluster drawing is added when you export from the "
                                                          "Cluster view)" if record and record.kind == "cluster" else ""))
        self.forget_button.setEnabled(record is not None and not self.history_error)
        self.detail.setHtml(self._detail_html(record))

    def _detail_html(self, r) -> str:
        if r is None:
            return f"<p style='color:{theme.hex('muted')}'>Select a report to see what it answered.</p>"
        current = getattr(self.catalogue, "version", "")
        stale = (f"<p style='color:{theme.hex('warning')}'>Written with catalogue {escape(r.catalogue_version)}; the catalogue is "
                 f"now {escape(current)}. Write it again to use today's figures and prices.</p>"
                 if current and current != r.catalogue_version else "")
        missing = "" if r.exists() else f"<p style='color:{theme.hex('error')}'>The PDF is no longer at this path.</p>"
        options = "".join(f"<li>{escape(o)}</li>" for o in r.options)
        link = QUrl.fromLocalFile(r.path).toString()
        return (
            f"<h3 style='margin-bottom:2px'>{escape(r.question or r.title)}</h3>"
            f"<p style='color:{theme.hex('muted')};margin-top:0'>{escape(r.title)} · written {escape(when_text(r.created))} · "
            f"catalogue {escape(r.catalogue_version)} · {escape(r.page_size)}</p>{stale}{missing}"
            + (f"<p><b>Recommendation.</b> {escape(r.recommendation)}</p>" if r.recommendation else "")
            + (f"<p><b>Configurations</b></p><ul>{options}</ul>" if options else "")
            + f"<p><b>File</b><br><a href='{escape(link)}'>{escape(r.path)}</a></p>"
            + (f"<p><b>Scenario</b><br>{escape(r.scenario_path)}</p>" if r.scenario_path else "")
        )

    # ------------------------------------------------------------------ actions
    def open_pdf(self) -> None:
        record = self.selected()
        if record is not None and record.exists():
            QDesktopServices.openUrl(QUrl.fromLocalFile(record.path))

    def show_folder(self) -> None:
        record = self.selected()
        if record is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(record.path).parent)))

    def open_scenario(self) -> None:
        record = self.selected()
        if record is not None and record.scenario_path:
            self.open_requested.emit("cluster" if record.kind == "cluster" else "compare", record.scenario_path)

    def forget(self, confirm: bool = True) -> None:
        from gpudesk.core.report.history import HistoryError, forget_report

        record = self.selected()
        if record is None:
            return
        if confirm and QMessageBox.question(
                self, "Remove from the list",
                f"Remove '{record.question or Path(record.path).name}' from the list of reports? The PDF file "
                "itself is kept.") != QMessageBox.StandardButton.Yes:
            return
        try:
            forget_report(record.id)
        except (HistoryError, OSError) as exc:
            QMessageBox.warning(self, "Not removed", str(exc))
        self.refresh()

    def write_again(self, path: str | None = None) -> Path | None:
        record = self.selected()
        if record is None or not record.scenario_path:
            return None
        from gpudesk.core.scenario import ScenarioError, load_scenario

        try:
            scenario = load_scenario(record.scenario_path)
        except ScenarioError as exc:
            QMessageBox.warning(self, "Cannot write the report again", str(exc))
            return None
        if path is None:
            old = Path(record.path)
            suggested = old.with_name(f"{old.stem.split(' (')[0]} ({date.today().isoformat()}).pdf")
            path, _ = QFileDialog.getSaveFileName(self, "Write the report again", str(suggested), "PDF (*.pdf)")
            if not path:
                return None
        kind = record.kind
        return self._write(scenario, path, kind, record.title)

    def new_from_scenario(self, scenario_path: str | None = None, pdf_path: str | None = None) -> Path | None:
        from gpudesk.core.scenario import ScenarioError, load_scenario

        if scenario_path is None:
            scenario_path, _ = QFileDialog.getOpenFileName(self, "Scenario to report on", str(Path.home()),
                                                           "Scenarios (*.json)")
            if not scenario_path:
                return None
        try:
            scenario = load_scenario(scenario_path)
        except ScenarioError as exc:
            QMessageBox.warning(self, "Cannot read the scenario", str(exc))
            return None
        if pdf_path is None:
            suggested = Path(scenario_path).with_suffix(".pdf")
            pdf_path, _ = QFileDialog.getSaveFileName(self, "Write the report", str(suggested), "PDF (*.pdf)")
            if not pdf_path:
                return None
        return self._write(scenario, pdf_path, "comparison", "Compute procurement comparison")

    def _write(self, scenario, pdf_path: str, kind: str, title: str) -> Path | None:
        if self.catalogue is None or getattr(self.catalogue, "read_only", False):
            return None
        from gpudesk.core.compare import build_comparison
        from gpudesk.core.report.content import comparison_report
        from gpudesk.core.report.history import HistoryError, record_comparison
        from gpudesk.core.resolve import ResolveError
        from gpudesk.core.settings import load_settings
        from gpudesk.ui.render.pdf import render_report_pdf

        settings = load_settings()
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            comparison = build_comparison(scenario, self.catalogue, settings)
            report = comparison_report(comparison, settings.author, settings.organisation)
            report.title = title
            written = render_report_pdf(report, pdf_path, settings.page_size)
        except ResolveError as exc:
            QGuiApplication.restoreOverrideCursor()
            QMessageBox.warning(self, "Cannot build the comparison", str(exc))
            return None
        except OSError as exc:
            QGuiApplication.restoreOverrideCursor()
            QMessageBox.warning(self, "PDF not written", f"{pdf_path}: {exc}")
            return None
        QGuiApplication.restoreOverrideCursor()
        try:
            record = record_comparison(comparison, written, title=title, kind=kind, page_size=settings.page_size)
        except (HistoryError, OSError) as exc:
            self.status_message.emit(f"Wrote {written}; not added to the list: {exc}")
            return written
        self.status_message.emit(f"Wrote {written}")
        self.refresh()
        self.select(record.id)  # the new entry, selected
        return written
