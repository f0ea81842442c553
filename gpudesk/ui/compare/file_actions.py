"""Open, save and export for the compare view: the file dialogs and messages around the core's
scenario files, the PDF and CSV writers, and the clipboard."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMessageBox

from gpudesk.core.scenario import ScenarioError, save_scenario
from gpudesk.ui.compare.presenter import table_text
from gpudesk.ui.widgets.clipboard import set_clipboard


class CompareFileActions:
    """Mixed into CompareView: uses its `comparison`, `path`, `scenario()`, `question`,
    `load_path()`, `maybe_close()`, `_set_modified()` and `status_message`."""

    def open_file(self) -> None:
        if not self.maybe_close():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", str(self._folder()), "gpudesk scenarios (*.json)")
        if path:
            self.load_path(path)

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self._write(self.path)

    def save_as(self) -> bool:
        suggested = self._folder() / ((self.question.text().strip() or "comparison")[:60].replace("/", "-") + ".json")
        path, _ = QFileDialog.getSaveFileName(self, "Save scenario", str(suggested), "gpudesk scenarios (*.json)")
        if not path:
            return False
        return self._write(Path(path))

    def _write(self, path: Path) -> bool:
        try:
            save_scenario(self.scenario(), path)
        except (ScenarioError, OSError) as exc:
            QMessageBox.warning(self, "Not saved", f"{path}: {exc}")
            return False
        self.path = path
        self._set_modified(False)
        self.status_message.emit(f"Saved {path.name}")
        return True

    def export_pdf(self, path: str | None = None) -> Path | None:
        if self.comparison is None:
            return None
        from gpudesk.core.settings import load_settings

        settings = load_settings()
        if path is None:
            suggested = self._folder() / "comparison.pdf"
            path, _ = QFileDialog.getSaveFileName(self, "Export PDF report", str(suggested), "PDF (*.pdf)")
            if not path:
                return None
        from gpudesk.ui.render.pdf import render_comparison_pdf

        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            written = render_comparison_pdf(self.comparison, path, settings.author, settings.organisation, settings.page_size)
        except OSError as exc:
            QMessageBox.warning(self, "PDF not written", f"{path}: {exc}")
            return None
        finally:
            QGuiApplication.restoreOverrideCursor()
        from gpudesk.core.report.history import try_record_comparison

        problem = try_record_comparison(self.comparison, written, page_size=settings.page_size)
        self.status_message.emit(f"Wrote {written}" + (f"; not added to Reports: {problem}" if problem else ""))
        return written

    def export_csv(self, path: str | None = None) -> Path | None:
        if self.comparison is None:
            return None
        from gpudesk.core.compare import comparison_csv
        from gpudesk.core.fileio import atomic_write_text

        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export CSV", str(self._folder() / "comparison.csv"), "CSV (*.csv)")
            if not path:
                return None
        try:
            atomic_write_text(path, comparison_csv(self.comparison))
        except OSError as exc:
            QMessageBox.warning(self, "CSV not written", f"{path}: {exc}")
            return None
        self.status_message.emit(f"Wrote {path}")
        return Path(path)

    def copy_table(self) -> None:
        if self.comparison is None:
            return
        text, html = table_text(self.comparison)
        mime = QMimeData()
        mime.setText(text)
        mime.setHtml(html)
        set_clipboard(mime)
        self.status_message.emit("Copied the comparison table")

    def maybe_close(self) -> bool:
        if not self._modified:
            return True
        answer = QMessageBox.question(
            self, "Unsaved comparison", "The comparison has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def _folder(self) -> Path:
        return self.path.parent if self.path else Path.home()
