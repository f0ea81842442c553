"""The Benchmarks view: import the result files people already have (open or drop them), see
what was stored with its problems, compare each measurement with gpudesk's estimate (a table
with the error per row and a measured-against-estimated chart), flag measurements that cannot
be true, answer which hardware or model ran a file, and let the measurements calibrate the
estimates, with the error before and after."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Qt, QThread, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpudesk.ui.benchmarks.imports_panel import ImportsPanel
from gpudesk.ui.benchmarks.measurements import MeasurementsPanel
from gpudesk.ui.benchmarks.versus_panel import VersusPanel
from gpudesk.ui.benchmarks.words import (  # noqa: F401 - re-exported: the names this module always had
    ERROR_HEADER,
    ERROR_TIP,
    KIND_WORDS,
    METRIC_LABELS,
    STATISTIC_WORDS,
    metric_label,
    tool_words,
)
from gpudesk.ui.models.table import ROW_ROLE

log = logging.getLogger(__name__)

COMPARE_LIMIT = 5000  # measurements compared with estimates at once (the newest first)
RESULT_SUFFIXES = (".json", ".jsonl", ".txt", ".log", ".out", ".csv", ".md")


# Workers still running: kept alive here, not by the view, so that closing the view (or the window)
# while one runs does not destroy a running QThread, which would abort the process.
_RUNNING: set[QThread] = set()


class CompareWorker(QThread):
    """Measurements against estimates, and the calibration, off the UI thread."""

    done = Signal(object)

    def __init__(self, catalogue, measurements, parent=None):
        super().__init__(None)  # not owned by the view: see _RUNNING
        self.catalogue = catalogue
        self.measurements = list(measurements)
        _RUNNING.add(self)
        self.finished.connect(lambda: _RUNNING.discard(self))

    def run(self) -> None:
        from gpudesk.core.benchmarks import calibration
        from gpudesk.core.benchmarks.versus import EstimateCache, compare

        try:
            cache = EstimateCache()
            versus = [compare(self.catalogue, m, (), cache) for m in self.measurements]
            cals = calibration.current_calibrations(self.catalogue)
            calibrated = {}
            if cals:
                for v in versus:
                    if v.comparable and v.kind in calibration.KINDS:
                        after = compare(self.catalogue, v.measurement, cals, cache)
                        if after.estimated is not None:
                            calibrated[v.measurement.id] = after.estimated
            usable = [v for v in versus if calibration.usable(v)]
            rows = calibration.error_before_after(self.catalogue, [v.measurement for v in usable], cals)
            stats = calibration.median_abs_errors(rows)
            by_kind = {k: calibration.median_abs_errors([r for r in rows if r.kind == k]) for k in calibration.KINDS}
            from gpudesk.core.benchmarks.summary import error_summary

            summary = error_summary(versus)
            self.done.emit({"versus": versus, "calibrations": cals, "calibrated": calibrated, "stats": stats,
                            "by_kind": by_kind, "summary": summary})
        except Exception as exc:  # shown in the view; the stored data is untouched
            log.exception("comparing measurements failed")
            self.done.emit({"error": f"{type(exc).__name__}: {exc}"})


class QuestionsPanel(QWidget):
    """What only the user can answer: which accelerator (and how many) ran a file, which model."""

    answered = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.inner = QWidget()
        self.inner_layout = QVBoxLayout(self.inner)
        self.inner_layout.setAlignment(Qt.AlignmentFlag.AlignTop)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.inner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        self.count = 0

    def set_questions(self, catalogue, hardware: list[dict], models: list[dict], lengths: list[dict] = ()) -> None:
        self.catalogue = catalogue
        while self.inner_layout.count():
            item = self.inner_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.count = len(hardware) + len(models) + len(lengths)
        if not self.count:
            label = QLabel("Nothing to answer: every stored measurement has its hardware and model.")
            label.setObjectName("hint")
            self.inner_layout.addWidget(label)
            return
        accelerators = sorted(catalogue.items("accelerators"), key=lambda a: a["name"])
        for q in hardware:
            self.inner_layout.addWidget(self._hardware_box(q, accelerators))
        for q in models:
            self.inner_layout.addWidget(self._model_box(q))
        for q in lengths:
            self.inner_layout.addWidget(self._lengths_box(q))

    def _hardware_box(self, q: dict, accelerators: list[dict]) -> QGroupBox:
        text = q.get("hardware_text") or "(the file does not name it)"
        box = QGroupBox(f"Which accelerator ran this? — {text}")
        form = QFormLayout(box)
        files = ", ".join(q.get("files") or [])
        reason = (q.get("reason") or "").rstrip(".")
        why = QLabel(f"{q['measurements']:,} measurement(s) from {files or ', '.join(q.get('formats') or [])} "
                     f"({', '.join(q.get('formats') or [])}). {reason[:1].upper() + reason[1:]}.")
        why.setTextFormat(Qt.TextFormat.PlainText)
        why.setWordWrap(True)
        why.setObjectName("hint")
        form.addRow(why)
        combo = QComboBox()
        combo.setObjectName("accelerator")
        combo.setEditable(False)
        combo.addItem("Choose…", "")
        suggested = [c for c in (q.get("candidates") or []) if catalogue_has(accelerators, c)]
        if q.get("guess") and q["guess"] not in suggested:
            suggested.insert(0, q["guess"])
        names = {a["id"]: a["name"] for a in accelerators}
        for acc_id in suggested:
            combo.addItem(f"{names.get(acc_id, acc_id)}  (suggested)", acc_id)
        if suggested:
            combo.insertSeparator(combo.count())
        for a in accelerators:
            combo.addItem(a["name"], a["id"])
        if suggested:
            combo.setCurrentIndex(1)
        count = QSpinBox()
        count.setObjectName("count")
        count.setRange(1, 100000)
        count.setSuffix(" device(s)")
        count.setValue(int(q.get("count") or 1))
        count.setToolTip("How many of them ran it (the file's own figure, when it gives one)")
        button = QPushButton("Answer")
        button.clicked.connect(lambda: self._answer_hardware(q["key"], combo.currentData(), count.value()))
        row = QHBoxLayout()
        row.addWidget(combo, 1)
        row.addWidget(count)
        row.addWidget(button)
        form.addRow("Accelerator", row)
        return box

    def _model_box(self, q: dict) -> QGroupBox:
        box = QGroupBox(f"Which model ran this? — {q['title']}")
        form = QFormLayout(box)
        why = QLabel(f"{q['measurements']:,} measurement(s) cannot be compared with an estimate: {q['reason']}.")
        why.setTextFormat(Qt.TextFormat.PlainText)
        why.setWordWrap(True)
        why.setObjectName("hint")
        form.addRow(why)
        params = QLineEdit()
        params.setObjectName("params")
        params.setPlaceholderText("parameters in billions, e.g. 8 or 70")
        precision = QComboBox()
        precision.setObjectName("precision")
        for p in ("bf16", "fp16", "fp8", "int8", "int4", "fp4"):
            precision.addItem(p.upper(), p)
        button = QPushButton("Answer")
        error = QLabel()
        error.setObjectName("errorLabel")
        button.clicked.connect(lambda: self._answer_model(q["key"], params.text(), precision.currentData(), error))
        row = QHBoxLayout()
        row.addWidget(params, 1)
        row.addWidget(precision)
        row.addWidget(button)
        form.addRow("Model", row)
        form.addRow(error)
        return box

    def _lengths_box(self, q: dict) -> QGroupBox:
        box = QGroupBox(f"How long were the prompts and answers? — {q['title']}")
        form = QFormLayout(box)
        why = QLabel(f"{q['measurements']:,} measurement(s) cannot be compared with an estimate: {q['reason']} "
                     "(MLPerf's are set by the benchmark: see its rules for this model).")
        why.setTextFormat(Qt.TextFormat.PlainText)
        why.setWordWrap(True)
        why.setObjectName("hint")
        form.addRow(why)
        prompt = QSpinBox()
        prompt.setObjectName("prompt_tokens")
        prompt.setRange(0, 10_000_000)
        prompt.setSuffix(" prompt tokens")
        output = QSpinBox()
        output.setObjectName("gen_tokens")
        output.setRange(0, 10_000_000)
        output.setSuffix(" output tokens")
        button = QPushButton("Answer")
        error = QLabel()
        error.setObjectName("errorLabel")
        button.clicked.connect(lambda: self._answer_lengths(q["key"], prompt.value(), output.value(), error))
        row = QHBoxLayout()
        row.addWidget(prompt, 1)
        row.addWidget(output, 1)
        row.addWidget(button)
        form.addRow("Per request", row)
        form.addRow(error)
        return box

    def _answer_lengths(self, key: str, prompt: int, output: int, error: QLabel) -> None:
        from gpudesk.core.benchmarks.store import answer_model

        if prompt <= 0 or output <= 0:
            error.setText("Give both the prompt and the output length, in tokens per request.")
            return
        answer_model(self.catalogue, key, prompt_tokens=prompt, gen_tokens=output)
        self.answered.emit()

    def _answer_hardware(self, key: str, accelerator_id: str, count: int) -> None:
        from gpudesk.core.benchmarks.store import answer_hardware

        if not accelerator_id:
            QMessageBox.information(self, "Choose an accelerator", "Choose the accelerator that ran these measurements.")
            return
        try:
            answer_hardware(self.catalogue, key, accelerator_id, count)
        except ValueError as exc:
            QMessageBox.warning(self, "Answer refused", str(exc))
            return
        self.answered.emit()

    def _answer_model(self, key: str, params_text: str, precision: str, error: QLabel) -> None:
        from gpudesk.core.benchmarks.store import answer_model

        try:
            billions = float(params_text.replace(",", "").strip().rstrip("bB"))
            if not (0 < billions < 100000):
                raise ValueError
        except ValueError:
            error.setText(f"'{params_text}' is not a parameter count in billions (e.g. 8 or 70).")
            return
        try:
            answer_model(self.catalogue, key, params=billions * 1e9, precision=precision)
        except ValueError as exc:
            error.setText(str(exc))
            return
        self.answered.emit()


def catalogue_has(accelerators: list[dict], acc_id: str) -> bool:
    return any(a["id"] == acc_id for a in accelerators)



class BenchmarksView(QWidget):
    """A thin page: the import/export/delete buttons over four panels (measurements, measured vs
    estimated, questions, imported files); the comparison runs on a CompareWorker."""

    open_requested = Signal(str, str)
    status_message = Signal(str)
    refreshed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.measurements = []
        self.results: dict = {}
        self.worker: CompareWorker | None = None
        self._pending_refresh = False
        self.setAcceptDrops(True)

        title = QLabel("Benchmarks")
        title.setObjectName("pageTitle")
        top = self._top_row()
        self.tabs = self._panels()
        self.status = QLabel()
        self.status.setObjectName("hint")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.addWidget(title)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.status)
        self._set_enabled(False)

    def _top_row(self) -> QHBoxLayout:
        self.subtitle = QLabel("Import the results your tools already write (llama-bench, vLLM, SGLang, TensorRT-LLM, "
                               "GuideLLM, GenAI-Perf/AIPerf, Ollama, MLPerf, nccl-tests, Lambda's tables, gpudesk's "
                               "schema): open them or drop them here.")
        self.subtitle.setObjectName("pageSubtitle")
        self.subtitle.setWordWrap(True)
        self.import_button = QPushButton("Import files…")
        self.import_button.clicked.connect(lambda *_: self.choose_files())
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("The measurements shown, in gpudesk's benchmark schema (JSON)")
        self.export_button.clicked.connect(lambda *_: self.export())
        self.delete_button = QPushButton("Delete selected")
        self.delete_button.clicked.connect(lambda *_: self.delete_selected())
        top = QHBoxLayout()
        top.addWidget(self.subtitle, 1)
        top.addWidget(self.import_button)
        top.addWidget(self.export_button)
        top.addWidget(self.delete_button)
        return top

    def _panels(self) -> QTabWidget:
        self.measurements_panel = MeasurementsPanel()
        self.measurements_panel.selection_changed.connect(lambda rows: self.delete_button.setEnabled(bool(rows)))
        self.versus_panel = VersusPanel()
        self.versus_panel.status_message.connect(self.status_message.emit)
        self.questions = QuestionsPanel()
        self.questions.answered.connect(self.refresh)
        self.imports_panel = ImportsPanel()
        self.imports_panel.delete_requested.connect(lambda: self.delete_import())
        tabs = QTabWidget()
        tabs.addTab(self.measurements_panel, "Measurements")
        tabs.addTab(self.versus_panel, "Measured vs estimated")
        tabs.addTab(self.questions, "Questions")
        tabs.addTab(self.imports_panel, "Imported files")
        # the panels' widgets, under the names the view has always had (scripts and tests use them)
        for panel, names in ((self.measurements_panel, _MEASUREMENTS_WIDGETS), (self.versus_panel, _VERSUS_WIDGETS),
                             (self.imports_panel, _IMPORTS_WIDGETS)):
            for name in names:
                setattr(self, name, getattr(panel, name))
        return tabs

    # ------------------------------------------------------------------ data
    def set_catalogue(self, catalogue) -> None:
        if getattr(catalogue, "read_only", False):
            return  # the start-up snapshot: wait for the full catalogue
        self.catalogue = catalogue
        from gpudesk.core.settings import load_settings

        self.use_calibration.blockSignals(True)
        self.use_calibration.setChecked(load_settings().calibration_enabled)
        self.use_calibration.blockSignals(False)
        self._set_enabled(True)
        self.refresh()

    def _set_enabled(self, on: bool) -> None:
        for w in (self.import_button, self.export_button, self.delete_button, self.tabs):
            w.setEnabled(on)

    def refresh(self) -> None:
        """Reload what is stored, then compare it with the estimates on a worker thread."""
        if self.catalogue is None:
            return
        if self.worker is not None and self.worker.isRunning():
            self._pending_refresh = True
            return
        from gpudesk.core.benchmarks.store import count_measurements, imports, open_questions, stored_measurements

        total = count_measurements(self.catalogue)
        self.measurements = stored_measurements(self.catalogue, limit=COMPARE_LIMIT) if total else []
        self.measurements.sort(key=lambda m: -(m.id or 0))
        self.empty.setVisible(total == 0)
        self._fill_imports(imports(self.catalogue))
        self._hardware_questions = open_questions(self.catalogue)
        self.status.setText(f"{total:,} measurement(s) stored" + (
            f"; the newest {COMPARE_LIMIT:,} are shown and compared" if total > COMPARE_LIMIT else "") +
            ("; comparing with the estimates…" if total else ""))
        self.measurements_panel.fill(self.catalogue, self.measurements, {})
        self.worker = CompareWorker(self.catalogue, self.measurements, self)
        self.worker.done.connect(self._compared)
        self.worker.start()

    def wait(self, timeout_ms: int = 60000) -> bool:
        """For tests and scripts: block until the comparison finished and is shown."""
        from PySide6.QtWidgets import QApplication

        while True:
            ok = self.worker is None or self.worker.wait(timeout_ms)
            QApplication.processEvents()
            if not self._pending_refresh and (self.worker is None or not self.worker.isRunning()):
                return ok


    def _compared(self, results: dict) -> None:
        self.results = results
        self.versus_panel.results = results
        if "error" in results:
            self.status.setText(f"Could not compare with the estimates: {results['error']}")
        else:
            versus = {v.measurement.id: v for v in results["versus"]}
            self.measurements_panel.fill(self.catalogue, self.measurements, versus)
            self.versus_panel.set_results(self.catalogue, results)
            self._fill_model_questions(results["versus"])
            compared = sum(1 for v in results["versus"] if v.comparable)
            flagged = sum(1 for v in results["versus"] if v.implausible)
            inside = sum(1 for v in results["versus"] if v.comparable and v.inside)
            self.status.setText(
                f"{len(self.measurements):,} measurement(s) shown; {compared:,} compared with an estimate, "
                f"{inside:,} inside the estimate's range" + (f"; {flagged:,} flagged as implausible" if flagged else ""))
        if self._pending_refresh:
            self._pending_refresh = False
            self.refresh()
            return
        self.refreshed.emit()

    def selected_rows(self) -> list[dict]:
        return self.measurements_panel.selected_rows()

    # ------------------------------------------------------------------ questions and imports
    def _fill_model_questions(self, versus) -> None:
        from gpudesk.core.benchmarks.questions import model_questions

        models, lengths = model_questions(versus)
        self.questions.set_questions(self.catalogue, self._hardware_questions, models, lengths)
        n = self.questions.count
        self.tabs.setTabText(2, f"Questions ({n})" if n else "Questions")

    def _fill_imports(self, rows: list[dict]) -> None:
        self.measurements_panel.import_formats = {r.get("id"): r.get("format") for r in rows}
        self.imports_panel.fill(rows)

    # ------------------------------------------------------------------ actions
    def choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Import benchmark results", str(Path.home()),
                                                "Benchmark results (*.json *.jsonl *.txt *.log *.out *.csv *.md);;"
                                                "All files (*)")
        if paths:
            self.import_files(paths)

    def import_files(self, paths: list[str], modal: bool = True):
        """Preview, then import, in a dialog; returns the dialog (tests drive it)."""
        from gpudesk.ui.benchmarks.importer import ImportDialog

        if self.catalogue is None:
            return None
        dialog = ImportDialog(self.catalogue, [str(p) for p in paths], self)
        dialog.imported.connect(lambda _report: self.refresh())
        if modal:
            dialog.exec()
        else:
            dialog.show()
        return dialog

    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.import_files(paths)

    def export(self, path: str | None = None) -> Path | None:
        import json

        from gpudesk.core.benchmarks.gpudesk_schema import export_measurements
        from gpudesk.core.fileio import atomic_write_text

        rows = [self.proxy.index(r, 0).data(ROW_ROLE) for r in range(self.proxy.rowCount())]
        if not rows:
            return None
        if path is None:
            path, chosen = QFileDialog.getSaveFileName(
                self, "Export measurements", str(Path.home() / "measurements.json"),
                "gpudesk benchmark JSON (*.json);;Table with the estimates, CSV (*.csv)")
            if not path:
                return None
            if chosen.endswith("(*.csv)") and not path.lower().endswith(".csv"):
                path += ".csv"
        try:
            if str(path).lower().endswith(".csv"):
                from gpudesk.core.benchmarks.summary import write_csv
                from gpudesk.core.benchmarks.versus import Versus

                write_csv([r["v"] or Versus(r["m"], False, "not compared yet") for r in rows], path)
            else:
                doc = export_measurements([r["m"] for r in rows], description="exported from gpudesk's Benchmarks view")
                atomic_write_text(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        except OSError as exc:
            QMessageBox.warning(self, "Not exported", f"{path}: {exc}")
            return None
        self.status_message.emit(f"Exported {len(rows):,} measurement(s) to {path}")
        return Path(path)

    def delete_selected(self, confirm: bool = True) -> int:
        from gpudesk.core.benchmarks.store import delete_measurements

        ids = [r["id"] for r in self.selected_rows()]
        if not ids:
            return 0
        if confirm and QMessageBox.question(
                self, "Delete measurements", f"Delete {len(ids):,} measurement(s)? Import their files again to bring "
                "them back.") != QMessageBox.StandardButton.Yes:
            return 0
        n = delete_measurements(self.catalogue, ids=ids)
        self.refresh()
        return n

    def delete_import(self, confirm: bool = True) -> int:
        from gpudesk.core.benchmarks.store import delete_measurements

        imp = self.imports_panel.selected_import()
        if imp is None:
            return 0
        if confirm and QMessageBox.question(
                self, "Delete import", f"Delete the {imp['stored']:,} measurement(s) imported from "
                f"{imp['source_file']}?") != QMessageBox.StandardButton.Yes:
            return 0
        n = delete_measurements(self.catalogue, import_id=imp["id"])
        self.refresh()
        return n



_MEASUREMENTS_WIDGETS = ("search", "filter_hardware", "filter_metric", "filter_file", "only_flagged", "model", "proxy",
                         "table", "detail", "empty")
_VERSUS_WIDGETS = ("chart", "show_calibrated", "use_calibration", "calibration_text", "factors", "factors_table",
                   "summary", "summary_table")
_IMPORTS_WIDGETS = ("imports_model", "imports_table", "import_detail", "delete_import_button")
