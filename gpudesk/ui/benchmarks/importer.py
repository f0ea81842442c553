"""Importing benchmark files from the window: a preview (a dry run: what would be stored, with the
problems of each file and record), then the import, both on a worker thread with progress and
Cancel. A cancelled or failed file changes nothing (gpudesk.core.benchmarks.store)."""

from __future__ import annotations

import os
import time

from PySide6.QtCore import QThread, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from gpudesk.ui import theme

SEVERITY_COLOURS = {"error": "error", "warning": "warning", "question": "accent_ink", "info": "muted"}  # theme names
SEVERITY_MARKS = {"error": "✖", "warning": "⚠", "question": "?", "info": "·"}
STATUS_COLOURS = {"imported": "success", "failed": "error", "cancelled": "warning"}  # theme names


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 1e5 else f"{n / 1e3:,.0f} kB"


class ImportWorker(QThread):
    """Runs store.import_files off the UI thread; progress is throttled to a few reports a second."""

    progressed = Signal(int, str, int, int)  # file index, file name, characters read, file size
    done = Signal(object)  # ImportReport
    crashed = Signal(str)

    def __init__(self, catalogue, paths: list[str], dry_run: bool, parent=None):
        super().__init__(parent)
        self.catalogue = catalogue
        self.paths = list(paths)
        self.dry_run = dry_run
        self._cancel = False
        self._last = 0.0

    def cancel(self) -> None:
        self._cancel = True

    def _progress(self, index: int, name: str, done: int, total: int) -> bool:
        now = time.monotonic()
        if now - self._last > 0.08 or done == 0 or done >= total:
            self._last = now
            self.progressed.emit(index, name, done, total)
        return not self._cancel

    def run(self) -> None:
        from gpudesk.core.benchmarks.store import import_files

        try:
            report = import_files(self.catalogue, self.paths, dry_run=self.dry_run, progress=self._progress)
        except Exception as exc:  # reported in the dialog; the store rolled the file back
            self.crashed.emit(f"{type(exc).__name__}: {exc}")
            return
        self.done.emit(report)


class ImportDialog(QDialog):
    """Preview, then import. `imported(report)` is emitted after a real import."""

    imported = Signal(object)

    def __init__(self, catalogue, paths: list[str], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Import benchmark results")
        self.resize(1180, 620)
        self.catalogue = catalogue
        self.paths = [str(p) for p in paths]
        self.sizes = []
        for p in self.paths:
            try:
                self.sizes.append(os.stat(p).st_size)
            except OSError:
                self.sizes.append(0)
        self.worker: ImportWorker | None = None
        self.preview = None
        self.report = None

        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("hint")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["File / problem", "Where", "What"])
        self.tree.setColumnWidth(0, 470)
        self.tree.setColumnWidth(1, 160)
        self.tree.setWordWrap(True)
        self.tree.setUniformRowHeights(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(lambda *_: self.cancel())
        self.buttons = QDialogButtonBox()
        self.import_button = self.buttons.addButton("Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.clicked.connect(lambda *_: self.start_import())
        self.import_button.setEnabled(False)
        self.close_button = self.buttons.addButton("Close", QDialogButtonBox.ButtonRole.RejectRole)
        self.close_button.clicked.connect(lambda *_: self.reject())
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addLayout(row)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.buttons)
        self.start_preview()

    # ------------------------------------------------------------------ running
    def _run(self, dry_run: bool) -> None:
        self.import_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.worker = ImportWorker(self.catalogue, self.paths, dry_run, self)
        self.worker.progressed.connect(self._progressed)
        self.worker.done.connect(self._preview_done if dry_run else self._import_done)
        self.worker.crashed.connect(self._crashed)
        self.worker.start()

    def start_preview(self) -> None:
        n = len(self.paths)
        self.heading.setText(f"<b>Checking {n} file{'s' if n != 1 else ''}</b> ({_mb(sum(self.sizes))}): nothing is "
                             "stored until you press Import.")
        self._run(dry_run=True)

    def start_import(self) -> None:
        self.heading.setText("<b>Importing</b>: each file is stored whole or not at all.")
        self._run(dry_run=False)

    def cancel(self) -> None:
        if self.worker is not None and self.worker.isRunning():
            self.worker.cancel()
            self.progress_label.setText("Cancelling: the file being read will be rolled back…")
            self.cancel_button.setEnabled(False)

    def wait(self, timeout_ms: int = 60000) -> bool:
        """For tests and scripts: block until the running step finished and its result is shown."""
        from PySide6.QtWidgets import QApplication

        ok = self.worker is None or self.worker.wait(timeout_ms)
        QApplication.processEvents()
        return ok

    def _progressed(self, index: int, name: str, done: int, total: int) -> None:
        before = sum(self.sizes[:index])
        overall = sum(self.sizes) or 1
        self.progress.setValue(int(1000 * min(1.0, (before + min(done, total)) / overall)))
        self.progress_label.setText(f"File {index + 1} of {len(self.paths)}: {name}, {_mb(min(done, total))} of "
                                    f"{_mb(total)} read")

    def _crashed(self, message: str) -> None:
        self.progress.hide()
        self.cancel_button.hide()
        self.heading.setText(f"<b style='color:{theme.hex('error')}'>The import stopped</b>: {message}. Nothing from the file "
                             "being read was stored.")

    def _finish_progress(self) -> None:
        self.progress.setValue(1000)
        self.progress.hide()
        self.cancel_button.hide()
        self.progress_label.setText("")

    def _preview_done(self, report) -> None:
        self.preview = report
        self._finish_progress()
        self._show(report)
        new = sum(f.stored for f in report.files)
        ok_files = [f for f in report.files if f.status == "imported"]
        failed = [f for f in report.files if f.status == "failed"]
        cancelled = [f for f in report.files if f.status == "cancelled"]
        bits = [f"<b>{new:,} new measurement{'s' if new != 1 else ''}</b> in {len(ok_files)} file(s) would be stored"]
        if failed:
            bits.append(f"<span style='color:{theme.hex('error')}'>{len(failed)} file(s) cannot be imported</span> (see why below)")
        if cancelled:
            bits.append(f"{len(cancelled)} file(s) not checked (cancelled)")
        self.heading.setText("; ".join(bits) + ".")
        self.import_button.setText(f"Import {new:,} measurement{'s' if new != 1 else ''}")
        self.import_button.setEnabled(new > 0 and not cancelled)

    def _import_done(self, report) -> None:
        self.report = report
        self._finish_progress()
        self._show(report)
        stored = sum(f.stored for f in report.files)
        questions = sum(f.unresolved for f in report.files)
        self.heading.setText(f"<b>Stored {stored:,} measurement{'s' if stored != 1 else ''}</b>"
                             + (f"; {questions:,} wait for your answer (which hardware or model ran them) in the "
                                "Questions tab" if questions else "") + ".")
        self.import_button.hide()
        self.close_button.setText("Done")
        self.imported.emit(report)

    # ------------------------------------------------------------------ the tree
    def _show(self, report) -> None:
        self.tree.clear()
        for f in report.files:
            status = f.status
            from gpudesk.core.benchmarks.detect import describe

            top = QTreeWidgetItem([f.name, describe(f.format) if f.format else "unknown format", f.summary()])
            top.setToolTip(1, f.detected_by or "")
            top.setToolTip(2, f.summary())
            top.setForeground(2, QBrush(theme.colour(STATUS_COLOURS.get(status, "ink"))))
            top.setToolTip(0, f.file)
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            for hw in f.hardware_list():
                acc = hw.get("accelerator_id")
                what = (f"{hw.get('count') or '?'} × {acc}" if acc else "unknown hardware") + \
                       f" ({hw.get('confidence')}{': ' + hw['reason'] if hw.get('reason') else ''})"
                child = QTreeWidgetItem([f"hardware: {hw.get('hardware_text') or '(not named in the file)'}", "", what])
                child.setToolTip(2, what)
                top.addChild(child)
            if f.metrics:
                metrics = ", ".join(f"{k} ×{v}" for k, v in sorted(f.metrics.items()))
                child = QTreeWidgetItem(["metrics", "", metrics])
                child.setToolTip(2, metrics)
                top.addChild(child)
            for p in f.problems:
                child = QTreeWidgetItem([f"{SEVERITY_MARKS.get(p.severity, '·')} {p.severity}", p.place, p.message])
                colour = QBrush(theme.colour(SEVERITY_COLOURS.get(p.severity, "ink")))
                child.setForeground(0, colour)
                child.setToolTip(2, p.message)
                top.addChild(child)
            self.tree.addTopLevelItem(top)
            top.setExpanded(status != "imported" or len(report.files) <= 3)
        self.tree.resizeColumnToContents(0)
        self.tree.setColumnWidth(0, min(self.tree.columnWidth(0), 520))
        self.tree.resizeColumnToContents(1)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self.worker is not None and self.worker.isRunning():
            self.worker.cancel()
            self.worker.wait(30000)
        super().closeEvent(event)

    def reject(self) -> None:
        if self.worker is not None and self.worker.isRunning():
            self.worker.cancel()
            self.worker.wait(30000)
        super().reject()
