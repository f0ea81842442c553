"""The Benchmarks view: import the result files people already have (open or drop them), see
what was stored with its problems, compare each measurement with gpudesk's estimate (a table
with the error per row and a measured-against-estimated chart), flag measurements that cannot
be true, answer which hardware or model ran a file, and let the measurements calibrate the
estimates, with the error before and after."""

from __future__ import annotations

import logging
import math
from html import escape
from pathlib import Path

from PySide6.QtCore import Qt, QThread, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
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
    QSplitter,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpudesk.core.format import duration, format_number, si
from gpudesk.ui import theme
from gpudesk.ui.models.table import ROW_ROLE, SORT_ROLE, Column, RowSortProxy, RowTableModel, fit_columns

log = logging.getLogger(__name__)

COMPARE_LIMIT = 5000  # measurements compared with estimates at once (the newest first)
RESULT_SUFFIXES = (".json", ".jsonl", ".txt", ".log", ".out", ".csv", ".md")
KIND_WORDS = {"train": "training", "infer_decode": "generation", "infer_prefill": "prompt processing"}
# what each stored metric is called on screen (its unit is shown with the value, never in the name)
METRIC_LABELS = {
    "prefill_tokens_per_s": "Prompt processing speed",
    "decode_tokens_per_s_per_user": "Generation speed per user",
    "decode_tokens_per_s_aggregate": "Generation speed, all users",
    "prompt_and_generation_tokens_per_s": "Prompt + generation speed (blended)",
    "output_tokens_per_s": "Output token throughput",
    "output_tokens_per_s_per_user": "Output tokens per user (with wait)",
    "output_tokens_per_s_per_gpu": "Output token throughput per GPU",
    "input_tokens_per_s": "Input token throughput",
    "total_tokens_per_s": "Total token throughput (in + out)",
    "request_throughput": "Request throughput",
    "request_goodput": "Request goodput",
    "samples_per_s": "Inference samples/queries",
    "train_samples_per_s": "Training throughput",
    "ttft_s": "TTFT",
    "tpot_s": "TPOT",
    "itl_s": "ITL",
    "e2e_latency_s": "Request latency",
    "latency_s": "Query latency",
    "batch_latency_s": "Batch latency",
    "time_to_train_s": "Time to train",
    "busbw_gbs": "Bus bandwidth",
    "algbw_gbs": "Algorithm bandwidth",
    "avg_busbw_gbs": "Average bus bandwidth",
    "collective_time_s": "Collective time",
}
STATISTIC_WORDS = {"mean": "mean", "median": "median", "p50": "median", "avg": "mean"}
ERROR_HEADER = "Estimate vs measured\n(+ = estimate higher)"
ERROR_TIP = ("(estimated − measured) ÷ measured, from the estimate's likely value: +20% means the estimate is 20% "
             "higher than the measurement, −20% that it is 20% lower")


def metric_label(metric: str, statistic: str = "") -> str:
    """'ttft_s', 'median' -> 'TTFT (median)'; an unknown metric keeps its stored name."""
    name = METRIC_LABELS.get(metric, metric.replace("_", " "))
    stat = STATISTIC_WORDS.get(statistic, statistic) if statistic else ""
    return f"{name} ({stat})" if stat else name


def tool_words(fmt: str | None) -> str:
    """What a file was taken for, in words ('llama.cpp llama-bench Markdown table')."""
    from gpudesk.core.benchmarks.detect import describe

    return describe(fmt) if fmt else "unknown"


def _value(v: float | None, unit: str) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if unit == "s":
        if v < 1e-3:
            return f"{v * 1e6:.3g} µs"
        return duration(v)
    return f"{si(v, digits=3)} {unit}".replace("  ", " ")


def _pct(e: float | None) -> str:
    return "" if e is None else f"{e * 100:+.0f}%"


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

        self.tabs = QTabWidget()
        self.tabs.addTab(self._measurements_tab(), "Measurements")
        self.tabs.addTab(self._chart_tab(), "Measured vs estimated")
        self.questions = QuestionsPanel()
        self.questions.answered.connect(self.refresh)
        self.tabs.addTab(self.questions, "Questions")
        self.tabs.addTab(self._imports_tab(), "Imported files")
        self.status = QLabel()
        self.status.setObjectName("hint")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.addWidget(title)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.status)
        self._set_enabled(False)

    # ------------------------------------------------------------------ tabs
    def _measurements_tab(self) -> QWidget:
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search files, hardware, models, metrics…")
        self.search.setClearButtonEnabled(True)
        self.filter_hardware = QComboBox()
        self.filter_metric = QComboBox()
        self.filter_file = QComboBox()
        self.only_flagged = QCheckBox("Flagged only")
        self.only_flagged.setToolTip("Measurements above what the hardware can physically do, or otherwise implausible")
        for combo in (self.filter_hardware, self.filter_metric, self.filter_file):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(18)
            combo.currentIndexChanged.connect(self._apply_filters)
        self.search.setMinimumWidth(220)
        self.search.textChanged.connect(self._apply_filters)
        self.only_flagged.toggled.connect(self._apply_filters)
        filters = QHBoxLayout()
        filters.addWidget(self.search, 1)
        filters.addWidget(self.filter_hardware)
        filters.addWidget(self.filter_metric)
        filters.addWidget(self.filter_file)
        filters.addWidget(self.only_flagged)

        self.model = _TipTableModel([
            Column("metric", "Metric", text=lambda r: r["metric_text"], tooltip=lambda r: r["metric_tip"]),
            Column("measured", "Measured", numeric=True, text=lambda r: r["measured_text"]),
            Column("estimated", "Estimated (low–high)", numeric=True, text=lambda r: r["estimated_text"]),
            Column("error", ERROR_HEADER, numeric=True, fmt=_pct, tooltip=lambda r: ERROR_TIP),
            Column("hardware", "Hardware"),
            Column("model_name", "Model"),
            Column("tool", "Taken for", tooltip=lambda r: r["tool_tip"]),
            Column("source_file", "File"),
            Column("flag", "Flag"),
        ], {"error": ERROR_TIP, "tool": "The tool gpudesk took the file for, judged from its content",
            "metric": "What was measured, and which statistic of it (mean, median, p99 ...)"})
        self.model.row_style = self._row_style
        self.proxy = _MeasurementFilter(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.detail = QTextBrowser()
        split = QSplitter()
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setSizes([1000, 330])
        self.empty = QLabel("No measurements yet. <b>Import files…</b> or drop result files on this window: "
                            "llama-bench JSON/JSONL/CSV or its Markdown table, vLLM and SGLang benchmark results, "
                            "trtllm-bench reports and console summaries, GuideLLM and GenAI-Perf/AIPerf JSON, Ollama "
                            "--verbose output, MLPerf logs, nccl-tests output, Lambda's benchmark tables, or gpudesk's "
                            "own schema (resources/schema/benchmark.schema.json).")
        self.empty.setWordWrap(True)
        self.empty.setObjectName("hint")
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addLayout(filters)
        layout.addWidget(self.empty)
        layout.addWidget(split, 1)
        return page

    def _chart_tab(self) -> QWidget:
        from gpudesk.ui.benchmarks.chart import MeasuredVsEstimated

        self.chart = MeasuredVsEstimated()
        self.show_calibrated = QCheckBox("Show the calibrated estimates (hollow points: the default estimate)")
        self.show_calibrated.setChecked(True)
        self.show_calibrated.toggled.connect(self._update_chart)
        self.use_calibration = QCheckBox("Use my measurements to calibrate the estimates in Compare, Cluster and "
                                         "the command line")
        self.use_calibration.toggled.connect(self._calibration_switched)
        self.calibration_text = QLabel()
        self.calibration_text.setWordWrap(True)
        self.calibration_text.setTextFormat(Qt.TextFormat.RichText)
        self.factors = RowTableModel([
            Column("accelerator", "Accelerator"),
            Column("kind", "Work"),
            Column("factor", "Factor", numeric=True, fmt=lambda v: f"×{v:.2f}"),
            Column("measurements", "Measurements", numeric=True),
        ])
        self.factors_table = QTableView()
        self.factors_table.setModel(self.factors)
        self.factors_table.verticalHeader().hide()
        self.factors_table.horizontalHeader().setStretchLastSection(True)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        heading = QLabel("<b>Calibration</b>")
        side_layout.addWidget(heading)
        side_layout.addWidget(self.use_calibration)
        side_layout.addWidget(self.calibration_text)
        side_layout.addWidget(self.factors_table, 2)
        side_layout.addWidget(QLabel("<b>Error of the default estimates</b>, by accelerator and metric"))
        self.summary = RowTableModel([
            Column("accelerator", "Accelerator"),
            Column("metric", "Metric", text=lambda r: metric_label(r["metric"])),
            Column("measurements", "n", numeric=True),
            Column("median_error", "Median estimate vs measured", numeric=True, fmt=_pct),
            Column("spread", "10–90%", numeric=True, text=lambda r: f"{_pct(r['p10_error'])} to {_pct(r['p90_error'])}"),
            Column("inside_share", "In range", numeric=True, fmt=lambda v: f"{v:.0%}"),
        ])
        self.summary_table = QTableView()
        self.summary_table.setModel(self.summary)
        self.summary_table.verticalHeader().hide()
        self.summary_table.horizontalHeader().setStretchLastSection(True)
        side_layout.addWidget(self.summary_table, 3)
        note = QLabel("A factor is the median of measured ÷ estimated speed over your confirmed, plausible, "
                      "typical-value measurements of that accelerator and kind of work; the estimates show how many "
                      "measurements back it.")
        note.setWordWrap(True)
        note.setObjectName("hint")
        side_layout.addWidget(note)
        split = QSplitter()
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.chart, 1)
        left_layout.addWidget(self.show_calibrated)
        split.addWidget(left)
        split.addWidget(side)
        split.setStretchFactor(0, 5)
        split.setStretchFactor(1, 4)
        split.setSizes([760, 620])
        return split

    def _imports_tab(self) -> QWidget:
        self.imports_model = RowTableModel([
            Column("imported_at", "Imported", fmt=lambda v: (v or "")[:16].replace("T", " ")),
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
        self.delete_import_button.clicked.connect(lambda *_: self.delete_import())
        page = QWidget()
        layout = QVBoxLayout(page)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.imports_table)
        split.addWidget(self.import_detail)
        layout.addWidget(split, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.delete_import_button)
        layout.addLayout(row)
        return page

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
        self._fill_table({})
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
        if "error" in results:
            self.status.setText(f"Could not compare with the estimates: {results['error']}")
        else:
            versus = {v.measurement.id: v for v in results["versus"]}
            self._fill_table(versus)
            self._fill_calibration(results)
            self._fill_summary(results.get("summary") or [])
            self._update_chart()
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

    # ------------------------------------------------------------------ the measurements table
    def _fill_table(self, versus: dict) -> None:
        accelerators = self.catalogue.index("accelerators") if self.catalogue else {}
        rows = []
        for m in self.measurements:
            v = versus.get(m.id)
            acc = accelerators.get(m.accelerator_id or "", {})
            if m.cpu_only:
                hardware = "CPU only"
            elif m.accelerator_id:
                hardware = f"{m.accelerator_count or 1} × {acc.get('name', m.accelerator_id)}"
                if m.match_confidence != "exact":
                    hardware += " (guess)"
            else:
                hardware = f"? {m.hardware_text or 'not named'}"
            wl = m.workload or {}
            est = v.estimated if v is not None else None
            flag = ""
            if v is not None and v.implausible:
                flag = "implausible: " + v.implausible[0]
            elif v is not None and not v.comparable:
                flag = "not compared: " + v.reason
            elif v is not None and not v.inside:
                flag = "outside the estimate's range"
            fmt = getattr(self, "_import_formats", {}).get(m.import_id) or m.format
            rows.append({
                "id": m.id, "m": m, "v": v,
                "source_file": m.source_file, "format": m.format, "hardware": hardware,
                "tool": tool_words(fmt), "tool_tip": f"{tool_words(fmt)} ({fmt})",
                "model_name": str(wl.get("model") or wl.get("model_type") or ""),
                "metric": m.metric, "metric_text": metric_label(m.metric, m.statistic),
                "metric_tip": f"{m.metric}, {m.statistic}" + (f" ± {_value(m.stddev, m.unit)}" if m.stddev else ""),
                "measured": m.value, "measured_text": _value(m.value, m.unit),
                "estimated": est.likely if est else None,
                "estimated_text": (f"{_value(est.likely, m.unit)} ({_value(est.low, m.unit)} – {_value(est.high, m.unit)})"
                                   if est else ""),
                "error": v.error if (v is not None and v.comparable) else None,
                "flag": flag, "flagged": bool(v is not None and v.implausible),
                "accelerator_id": m.accelerator_id or "", "search": " ".join(
                    str(x) for x in (m.source_file, hardware, m.metric, metric_label(m.metric, m.statistic), m.format,
                                     tool_words(fmt), wl.get("model"), wl.get("model_type"))),
            })
        # flagged first, then what compares with an estimate, then the rest (the header sorts otherwise)
        rows.sort(key=lambda r: (not r["flagged"], r["error"] is None, r["source_file"], r["metric"]))
        self.model.set_rows(rows)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.proxy.sort(-1)
        self._fill_filters(rows)
        fit_columns(self.table, self.model, maximum=230)
        self._apply_filters()
        if self.proxy.rowCount():
            self.table.selectRow(0)

    def _row_style(self, row: dict) -> dict:
        if row.get("flagged"):
            return {"color": theme.hex("error"), "tooltip": row["flag"]}
        if row.get("flag", "").startswith("not compared"):
            return {"color": theme.hex("dimmed"), "tooltip": row["flag"]}
        return {}

    def _fill_filters(self, rows: list[dict]) -> None:
        def fill(combo: QComboBox, label: str, values):
            current = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(label, "")
            for value, text in values:
                combo.addItem(text, value)
            index = combo.findData(current)
            combo.setCurrentIndex(max(0, index))
            combo.blockSignals(False)

        hardware = sorted({(r["hardware"], r["hardware"]) for r in rows})
        fill(self.filter_hardware, "All hardware", hardware)
        fill(self.filter_metric, "All metrics", sorted({(r["m"].metric, metric_label(r["m"].metric)) for r in rows},
                                                       key=lambda vt: vt[1]))
        fill(self.filter_file, "All files", sorted({(r["source_file"], r["source_file"]) for r in rows}))

    def _apply_filters(self, *_args) -> None:
        self.proxy.set_filters(self.search.text(), self.filter_hardware.currentData() or "",
                               self.filter_metric.currentData() or "", self.filter_file.currentData() or "",
                               self.only_flagged.isChecked())

    def selected_rows(self) -> list[dict]:
        return [i.data(ROW_ROLE) for i in self.table.selectionModel().selectedRows()]

    def _selection_changed(self, *_args) -> None:
        rows = self.selected_rows()
        self.delete_button.setEnabled(bool(rows))
        self.detail.setHtml(_detail_html(rows[0], self.catalogue) if rows else "")

    # ------------------------------------------------------------------ chart and calibration
    def _chart_rows(self, calibrated: bool) -> tuple[list[dict], dict | None]:
        versus = self.results.get("versus") or []
        after = self.results.get("calibrated") or {}
        rows, before = [], {}
        for v in versus:
            if not v.comparable or v.estimated is None:
                continue
            m = v.measurement
            est = after.get(m.id, v.estimated) if calibrated else v.estimated
            if calibrated and m.id in after:
                before[m.id] = v.estimated.likely
            label = (f"{m.source_file}\n{metric_label(m.metric, m.statistic)}: measured {_value(m.value, m.unit)}, estimated "
                     f"{_value(est.likely, m.unit)} ({_value(est.low, m.unit)} – {_value(est.high, m.unit)})")
            if v.implausible:
                label += "\nflagged: " + "; ".join(v.implausible)
            rows.append({"id": m.id, "measured": m.value, "low": est.low, "likely": est.likely, "high": est.high,
                         "kind": v.kind, "implausible": bool(v.implausible), "label": label})
        return rows, (before if calibrated else None)

    def _update_chart(self, *_args) -> None:
        calibrated = self.show_calibrated.isChecked() and bool(self.results.get("calibrated"))
        rows, before = self._chart_rows(calibrated)
        self.chart.set_points(rows, before)

    def _fill_calibration(self, results: dict) -> None:
        cals = results.get("calibrations") or ()
        names = self.catalogue.index("accelerators")
        self.factors.set_rows([{"accelerator": names.get(c.device_id, {}).get("name", c.device_id),
                                "kind": KIND_WORDS.get(c.kind, c.kind), "factor": c.factor,
                                "measurements": c.measurements} for c in cals])
        fit_columns(self.factors_table, self.factors, maximum=200)
        stats = results.get("stats") or {}
        n = stats.get("measurements", 0)
        if not n:
            self.calibration_text.setText("No measurement can calibrate yet: calibration uses measurements whose "
                                          "hardware is confirmed, that are plausible, and that compare with an "
                                          "estimate (generation, prompt processing or training speed).")
            return
        lines = [f"Median error of the estimates on {n:,} measurement(s): <b>{stats['before'] * 100:.0f}%</b> with the "
                 f"default model, <b>{stats['after'] * 100:.0f}%</b> calibrated."]
        for kind, s in (results.get("by_kind") or {}).items():
            if s.get("measurements"):
                lines.append(f"{KIND_WORDS.get(kind, kind)}: {s['before'] * 100:.0f}% → {s['after'] * 100:.0f}% "
                             f"({s['measurements']})")
        on = self.use_calibration.isChecked()
        lines.append("Estimates elsewhere use these factors." if on else
                     f"<span style='color:{theme.hex('warning')}'>Calibration is off: estimates elsewhere use the default model.</span>")
        self.calibration_text.setText("<br>".join(lines))

    def _fill_summary(self, rows: list[dict]) -> None:
        names = self.catalogue.index("accelerators")
        for r in rows:
            r["accelerator"] = names.get(r["accelerator_id"] or "", {}).get("name", r["accelerator_id"] or "?")
            r["spread"] = r["p90_error"] - r["p10_error"]
        self.summary.set_rows(rows)
        fit_columns(self.summary_table, self.summary, maximum=170)

    def _calibration_switched(self, on: bool) -> None:
        from gpudesk.core.settings import SettingsError, load_settings, save_settings

        try:
            settings = load_settings()
            settings.calibration_enabled = bool(on)
            save_settings(settings)
        except (SettingsError, OSError) as exc:
            QMessageBox.warning(self, "Setting not saved", str(exc))
            return
        self.status_message.emit("Calibration " + ("on: estimates use your measurements" if on else
                                                   "off: estimates use the default model"))
        if self.results:
            self._fill_calibration(self.results)

    # ------------------------------------------------------------------ questions and imports
    def _fill_model_questions(self, versus) -> None:
        models: dict[str, dict] = {}
        lengths: dict[str, dict] = {}
        for v in versus:
            if v.comparable:
                continue
            m = v.measurement
            if m.workload.get("language_model") is False:
                continue  # named non-language models (image, speech ...): gpudesk estimates none of them
            if "parameter count is not known" in v.reason:
                # remembered for the next files of this model's signature (or of this import)
                key = m.hardware_key if m.hardware_key else f"import:{m.import_id}"
                q = models.setdefault(key, {"key": key, "title": m.source_file, "measurements": 0,
                                            "reason": "the file does not name the model that ran"})
                q["measurements"] += 1
            elif "prompt length is not known" in v.reason or "generated tokens per request" in v.reason:
                key = f"import:{m.import_id}"  # lengths belong to one run, not to the hardware
                q = lengths.setdefault(key, {"key": key, "title": m.source_file, "measurements": 0,
                                             "reason": "the file does not say how long the prompts and answers were"})
                q["measurements"] += 1
        self.questions.set_questions(self.catalogue, self._hardware_questions, list(models.values()),
                                     list(lengths.values()))
        n = self.questions.count
        self.tabs.setTabText(2, f"Questions ({n})" if n else "Questions")

    def _fill_imports(self, rows: list[dict]) -> None:
        self._import_formats = {r.get("id"): r.get("format") for r in rows}
        for r in rows:
            r["problem_count"] = len(r.get("problems") or [])
            r["tool"] = tool_words(r.get("format"))
        self.imports_model.set_rows(rows)
        fit_columns(self.imports_table, self.imports_model, maximum=520)
        self._import_selected()

    def _selected_import(self) -> dict | None:
        rows = self.imports_table.selectionModel().selectedRows()
        return rows[0].data(ROW_ROLE) if rows else None

    def _import_selected(self, *_args) -> None:
        imp = self._selected_import()
        self.delete_import_button.setEnabled(imp is not None)
        if imp is None:
            self.import_detail.setHtml(f"<p style='color:{theme.hex('muted')}'>Select an imported file to see its problems.</p>")
            return
        problems = "".join(
            f"<li><span style='color:{theme.hex(_SEVERITY.get(p.get('severity'), 'ink'))}'>{escape(p.get('severity', ''))}</span>"
            f" {escape(p.get('place') or '')}: {escape(p.get('message') or '')}</li>" for p in imp.get("problems") or [])
        self.import_detail.setHtml(
            f"<b>{escape(imp['source_file'])}</b> (taken for {escape(tool_words(imp['format']))}), imported "
            f"{escape((imp['imported_at'] or '')[:16].replace('T', ' '))}: read {imp['read']:,}, stored {imp['stored']:,}, "
            f"{imp['duplicates']:,} already stored." + (f"<ul>{problems}</ul>" if problems else "<p>No problems.</p>"))

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

        imp = self._selected_import()
        if imp is None:
            return 0
        if confirm and QMessageBox.question(
                self, "Delete import", f"Delete the {imp['stored']:,} measurement(s) imported from "
                f"{imp['source_file']}?") != QMessageBox.StandardButton.Yes:
            return 0
        n = delete_measurements(self.catalogue, import_id=imp["id"])
        self.refresh()
        return n


_SEVERITY = {"error": "error", "warning": "warning", "question": "accent_ink", "info": "muted"}  # theme names


class _TipTableModel(RowTableModel):
    """A row table whose column headers carry a tooltip (what a column means, the sign of a %)."""

    def __init__(self, columns: list[Column], header_tips: dict[str, str], parent=None):
        super().__init__(columns, parent)
        self._header_tips = header_tips

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if (role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal
                and 0 <= section < len(self.columns())):
            return self._header_tips.get(self.columns()[section].key)
        return super().headerData(section, orientation, role)


class _MeasurementFilter(RowSortProxy):
    def __init__(self, parent=None):
        super().__init__(parent)
        self._text, self._hardware, self._metric, self._file, self._flagged = "", "", "", "", False

    def set_filters(self, text: str, hardware: str, metric: str, file: str, flagged: bool) -> None:
        self.change_filter(_text=text.lower().strip(), _hardware=hardware, _metric=metric, _file=file,
                           _flagged=flagged)

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:  # noqa: N802 - Qt override
        row = self.sourceModel().row(source_row)
        if self._hardware and row["hardware"] != self._hardware:
            return False
        if self._metric and row["m"].metric != self._metric:
            return False
        if self._file and row["source_file"] != self._file:
            return False
        if self._flagged and not row["flagged"]:
            return False
        return not self._text or self._text in row["search"].lower()


def _detail_html(row: dict, catalogue) -> str:
    m, v = row["m"], row["v"]
    wl = {k: val for k, val in (m.workload or {}).items() if val not in (None, "", {})}
    cond = {k: val for k, val in (m.conditions or {}).items() if val not in (None, "", {})}

    def shown(key: str, val) -> str:
        if isinstance(val, bool) or not isinstance(val, int | float):
            return str(val)
        if key in ("params", "active_params"):
            return f"{val / 1e9:,.3g} billion"
        if key.endswith("_bytes"):
            return f"{val / 1e9:,.3g} GB"
        return format_number(val, key)

    def table(d: dict) -> str:
        return "".join(f"<tr><td style='color:{theme.hex('muted')};padding-right:8px'>{escape(str(k))}</td>"
                       f"<td>{escape(shown(str(k), val))}</td></tr>" for k, val in d.items())

    parts = [f"<h3 style='margin-bottom:2px'>{escape(row['metric_text'])}: {escape(row['measured_text'])}</h3>",
             f"<p style='color:{theme.hex('muted')};margin-top:0'>{escape(m.source_file)} · taken for {escape(row['tool'])} · "
             f"{escape(m.statistic)}" + (f" ± {escape(_value(m.stddev, m.unit))}" if m.stddev else "") + "</p>"]
    if v is not None and v.implausible:
        parts.append(f"<p style='color:{theme.hex('error')}'><b>Flagged.</b> " + escape("; ".join(v.implausible)) + "</p>")
    if v is not None and v.comparable:
        parts.append(f"<p><b>Estimated</b> {escape(row['estimated_text'])}; estimate vs measured {escape(_pct(v.error))}"
                     + (" (inside the range)" if v.inside else " (outside the range)") + f". {escape(v.reason)}</p>")
    elif v is not None:
        parts.append(f"<p style='color:{theme.hex('muted')}'><b>Not compared</b>: {escape(v.reason)}.</p>")
    parts.append(f"<p><b>Hardware</b> {escape(row['hardware'])}" +
                 (f"<br><span style='color:{theme.hex('muted')}'>{escape(m.match_reason)}</span>" if m.match_reason else "") + "</p>")
    if wl:
        parts.append(f"<p><b>Workload</b></p><table>{table(wl)}</table>")
    if cond:
        parts.append(f"<p><b>Conditions</b></p><table>{table(cond)}</table>")
    if v is not None and v.notes:
        parts.append("<p><b>Notes</b></p><ul>" + "".join(f"<li>{escape(n)}</li>" for n in v.notes) + "</ul>")
    return "".join(parts)
