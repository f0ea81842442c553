"""The Benchmarks view's "Measured vs estimated" tab: the chart, the calibration factors and
whether the estimates elsewhere use them, and the error of the default estimates."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QLabel, QMessageBox, QSplitter, QTableView, QVBoxLayout, QWidget

from gpudesk.ui import theme
from gpudesk.ui.benchmarks.chart import MeasuredVsEstimated
from gpudesk.ui.benchmarks.words import KIND_WORDS, metric_label, pct, value_text
from gpudesk.ui.models.table import Column, RowTableModel, fit_columns


class VersusPanel(QWidget):
    """Measured against estimated, and the calibration the measurements give."""

    status_message = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.results: dict = {}
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
        self.summary = RowTableModel([
            Column("accelerator", "Accelerator"),
            Column("metric", "Metric", text=lambda r: metric_label(r["metric"])),
            Column("measurements", "n", numeric=True),
            Column("median_error", "Median estimate vs measured", numeric=True, fmt=pct),
            Column("spread", "10–90%", numeric=True, text=lambda r: f"{pct(r['p10_error'])} to {pct(r['p90_error'])}"),
            Column("inside_share", "In range", numeric=True, fmt=lambda v: f"{v:.0%}"),
        ])
        self.summary_table = QTableView()
        self.summary_table.setModel(self.summary)
        self.summary_table.verticalHeader().hide()
        self.summary_table.horizontalHeader().setStretchLastSection(True)
        side = self._side()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
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
        layout.addWidget(split)

    def _side(self) -> QWidget:
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        heading = QLabel("<b>Calibration</b>")
        side_layout.addWidget(heading)
        side_layout.addWidget(self.use_calibration)
        side_layout.addWidget(self.calibration_text)
        side_layout.addWidget(self.factors_table, 2)
        side_layout.addWidget(QLabel("<b>Error of the default estimates</b>, by accelerator and metric"))
        side_layout.addWidget(self.summary_table, 3)
        note = QLabel("A factor is the median of measured ÷ estimated speed over your confirmed, plausible, "
                      "typical-value measurements of that accelerator and kind of work; the estimates show how many "
                      "measurements back it.")
        note.setWordWrap(True)
        note.setObjectName("hint")
        side_layout.addWidget(note)
        return side

    def set_results(self, catalogue, results: dict) -> None:
        """Show a comparison's results (CompareWorker's): chart, factors and error summary."""
        self.catalogue = catalogue
        self.results = results
        self._fill_calibration(results)
        self._fill_summary(results.get("summary") or [])
        self._update_chart()

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
            label = (f"{m.source_file}\n{metric_label(m.metric, m.statistic)}: measured {value_text(m.value, m.unit)}, estimated "
                     f"{value_text(est.likely, m.unit)} ({value_text(est.low, m.unit)} – {value_text(est.high, m.unit)})")
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
