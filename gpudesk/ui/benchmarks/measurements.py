"""The Benchmarks view's Measurements tab: the measurements with their estimates, filters, and the
detail of the selected one."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpudesk.core.format import format_number
from gpudesk.ui import theme
from gpudesk.ui.benchmarks.words import ERROR_HEADER, ERROR_TIP, metric_label, pct, tool_words, value_text
from gpudesk.ui.models.table import ROW_ROLE, Column, RowSortProxy, RowTableModel, fit_columns


class MeasurementsPanel(QWidget):
    """The measurements table, its filters and the selected measurement's detail."""

    selection_changed = Signal(list)  # the selected rows

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.import_formats: dict = {}
        filters = self._filters()
        table = self._table()
        self.detail = QTextBrowser()
        split = QSplitter()
        split.addWidget(table)
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
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.empty)
        layout.addWidget(split, 1)

    def _filters(self) -> QHBoxLayout:
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
        return filters

    def _table(self) -> QTableView:
        self.model = _TipTableModel([
            Column("metric", "Metric", text=lambda r: r["metric_text"], tooltip=lambda r: r["metric_tip"]),
            Column("measured", "Measured", numeric=True, text=lambda r: r["measured_text"]),
            Column("estimated", "Estimated (low–high)", numeric=True, text=lambda r: r["estimated_text"]),
            Column("error", ERROR_HEADER, numeric=True, fmt=pct, tooltip=lambda r: ERROR_TIP),
            Column("hardware", "Hardware"),
            Column("model_name", "Model"),
            Column("tool", "Taken for", tooltip=lambda r: r["tool_tip"]),
            Column("source_file", "File"),
            Column("flag", "Flag"),
        ], {"error": ERROR_TIP, "tool": "The tool gpudesk took the file for, judged from its content",
            "metric": "What was measured, and which statistic of it (mean, median, p99 ...)"})
        self.model.row_style = row_style
        self.proxy = _MeasurementFilter(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        return self.table

    def fill(self, catalogue, measurements: list, versus: dict) -> None:
        """Show the measurements, each with its comparison (versus: measurement id -> Versus)."""
        self.catalogue = catalogue
        accelerators = catalogue.index("accelerators") if catalogue else {}
        rows = [measurement_row(m, versus.get(m.id), accelerators, self.import_formats.get(m.import_id) or m.format)
                for m in measurements]
        # flagged first, then what compares with an estimate, then the rest (the header sorts otherwise)
        rows.sort(key=lambda r: (not r["flagged"], r["error"] is None, r["source_file"], r["metric"]))
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.proxy.sort(-1)  # before the rows: the model keeps the order they come in
        self.model.set_rows(rows)
        self._fill_filters(rows)
        fit_columns(self.table, self.model, maximum=230)
        self._apply_filters()
        if self.proxy.rowCount():
            self.table.selectRow(0)

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
        self.detail.setHtml(_detail_html(rows[0], self.catalogue) if rows else "")
        self.selection_changed.emit(rows)


def row_style(row: dict) -> dict:
    if row.get("flagged"):
        return {"color": theme.hex("error"), "tooltip": row["flag"]}
    if row.get("flag", "").startswith("not compared"):
        return {"color": theme.hex("dimmed"), "tooltip": row["flag"]}
    return {}


def hardware_words(m, accelerators: dict) -> str:
    """'2 × H100 SXM (guess)', 'CPU only' or '? what the file said'."""
    if m.cpu_only:
        return "CPU only"
    if m.accelerator_id:
        acc = accelerators.get(m.accelerator_id or "", {})
        hardware = f"{m.accelerator_count or 1} × {acc.get('name', m.accelerator_id)}"
        return hardware + " (guess)" if m.match_confidence != "exact" else hardware
    return f"? {m.hardware_text or 'not named'}"


def flag_words(v) -> str:
    """Why a row stands out: implausible, not compared, or outside the estimate's range."""
    if v is not None and v.implausible:
        return "implausible: " + v.implausible[0]
    if v is not None and not v.comparable:
        return "not compared: " + v.reason
    if v is not None and not v.inside:
        return "outside the estimate's range"
    return ""


def measurement_row(m, v, accelerators: dict, fmt: str) -> dict:
    """One table row: a stored measurement with its comparison (v: a Versus or None) in words."""
    hardware = hardware_words(m, accelerators)
    wl = m.workload or {}
    est = v.estimated if v is not None else None
    return {
        "id": m.id, "m": m, "v": v,
        "source_file": m.source_file, "format": m.format, "hardware": hardware,
        "tool": tool_words(fmt), "tool_tip": f"{tool_words(fmt)} ({fmt})",
        "model_name": str(wl.get("model") or wl.get("model_type") or ""),
        "metric": m.metric, "metric_text": metric_label(m.metric, m.statistic),
        "metric_tip": f"{m.metric}, {m.statistic}" + (f" ± {value_text(m.stddev, m.unit)}" if m.stddev else ""),
        "measured": m.value, "measured_text": value_text(m.value, m.unit),
        "estimated": est.likely if est else None,
        "estimated_text": (f"{value_text(est.likely, m.unit)} ({value_text(est.low, m.unit)} – "
                           f"{value_text(est.high, m.unit)})" if est else ""),
        "error": v.error if (v is not None and v.comparable) else None,
        "flag": flag_words(v), "flagged": bool(v is not None and v.implausible),
        "accelerator_id": m.accelerator_id or "", "search": " ".join(
            str(x) for x in (m.source_file, hardware, m.metric, metric_label(m.metric, m.statistic), m.format,
                             tool_words(fmt), wl.get("model"), wl.get("model_type"))),
    }


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
             f"{escape(m.statistic)}" + (f" ± {escape(value_text(m.stddev, m.unit))}" if m.stddev else "") + "</p>"]
    if v is not None and v.implausible:
        parts.append(f"<p style='color:{theme.hex('error')}'><b>Flagged.</b> " + escape("; ".join(v.implausible)) + "</p>")
    if v is not None and v.comparable:
        parts.append(f"<p><b>Estimated</b> {escape(row['estimated_text'])}; estimate vs measured {escape(pct(v.error))}"
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
