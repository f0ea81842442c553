"""The Benchmarks view with pytest-qt: preview and import with progress and cancel, the stored
table with filters and flags, measured against estimated, answering which hardware and model
ran a file, calibration before and after, deleting, and files dropped on the window."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QSpinBox

from gpudesk.core.benchmarks.store import count_measurements
from gpudesk.ui.benchmarks.view import BenchmarksView

from ..conftest import ROOT
from .conftest import open_main_window

BENCH = ROOT / "tests" / "data" / "bench"
LLAMA_4080 = BENCH / "llama-bench" / "llamacpp-README_RTX4080_CUDA_build5163_array.json"
SGLANG = BENCH / "sglang" / "datacrunch_H200_llama70b_offline_Infinity.jsonl"
ALL_FAILED = BENCH / "vllm" / "er0080_bench-serve_all-failed.json"


@pytest.fixture
def view(qtbot, catalogue):
    widget = BenchmarksView()
    qtbot.addWidget(widget)
    widget.resize(1400, 850)
    widget.set_catalogue(catalogue)
    widget.show()
    qtbot.waitExposed(widget)
    widget.wait()
    return widget


def _import(view, paths):
    dialog = view.import_files([str(p) for p in paths], modal=False)
    assert dialog.wait()
    return dialog


def test_preview_stores_nothing_then_import_stores_and_the_table_shows_it(view, catalogue):
    dialog = _import(view, [LLAMA_4080, ALL_FAILED])
    assert count_measurements(catalogue) == 0  # the preview is a dry run
    assert "2 new measurements" in dialog.heading.text() and "cannot be imported" in dialog.heading.text()
    failed = dialog.tree.topLevelItem(1)
    assert "not imported" in failed.text(2)
    assert any("every request failed" in failed.child(i).text(2) for i in range(failed.childCount()))
    assert dialog.import_button.isEnabled()
    dialog.start_import()
    assert dialog.wait()
    assert count_measurements(catalogue) == 2
    dialog.accept()
    view.wait()
    rows = view.model.rows()
    assert {r["metric"] for r in rows} == {"prefill_tokens_per_s", "decode_tokens_per_s_per_user"}
    decode = next(r for r in rows if r["metric"] == "decode_tokens_per_s_per_user")
    assert decode["hardware"] == "1 × GeForce RTX 4080" or "RTX 4080" in decode["hardware"]
    assert decode["estimated"] is not None and decode["error"] is not None
    assert decode["measured_text"].endswith("tokens/s")
    assert view.chart.shown == 2


def test_cancel_during_the_import_rolls_the_file_back(view, catalogue, tmp_path):
    record = json.loads(LLAMA_4080.read_text())[0]
    big = tmp_path / "big.jsonl"
    with big.open("w") as handle:
        for i in range(40000):
            handle.write(json.dumps(dict(record, n_depth=i)) + "\n")
    dialog = view.import_files([str(big)], modal=False)
    dialog.cancel()  # while the preview reads
    assert dialog.wait()
    assert "cancelled" in dialog.tree.topLevelItem(0).text(2) or "not checked" in dialog.heading.text()
    assert not dialog.import_button.isEnabled()
    assert count_measurements(catalogue) == 0


def test_questions_answer_hardware_then_model_and_the_measurements_compare(view, catalogue):
    dialog = _import(view, [SGLANG])
    dialog.start_import()
    dialog.wait()
    dialog.accept()
    view.wait()
    assert view.questions.count == 1 and "Questions (1)" == view.tabs.tabText(2)
    before = [r for r in view.model.rows() if r["error"] is not None]
    assert not before
    box = view.questions.inner_layout.itemAt(0).widget()
    combo = box.findChild(QComboBox, "accelerator")
    combo.setCurrentIndex(combo.findData("h200-sxm-141gb"))
    box.findChild(QSpinBox, "count").setValue(8)
    _answer_button(box).click()
    view.wait()
    # the hardware is settled; the file does not name the model: that is asked next
    assert all("H200" in r["hardware"] for r in view.model.rows())
    assert view.questions.count == 1
    box = view.questions.inner_layout.itemAt(0).widget()
    params = box.findChild(QLineEdit, "params")
    params.setText("seventy")
    _answer_button(box).click()
    assert "not a parameter count" in box.findChild(QLabel, "errorLabel").text()
    params.setText("70")
    precision = box.findChild(QComboBox, "precision")
    precision.setCurrentIndex(precision.findData("fp8"))
    _answer_button(box).click()
    view.wait()
    assert view.questions.count == 0
    assert any(r["error"] is not None for r in view.model.rows())


def _answer_button(box) -> QPushButton:
    return next(b for b in box.findChildren(QPushButton) if b.text() == "Answer")


def test_an_impossible_measurement_is_flagged_with_the_reason(view, tmp_path):
    doc = json.loads((ROOT / "resources" / "schema" / "benchmark.example.json").read_text())
    doc["measurements"] = [dict(doc["measurements"][1], value=5000.0)]  # 5,000 tokens/s for one user on a 4090
    path = tmp_path / "impossible.json"
    path.write_text(json.dumps(doc))
    dialog = _import(view, [path])
    dialog.start_import()
    dialog.wait()
    dialog.accept()
    view.wait()
    (row,) = view.model.rows()
    assert row["flagged"] and "physically possible" in row["flag"]
    view.only_flagged.setChecked(True)
    assert view.proxy.rowCount() == 1
    assert "Flagged" in view.detail.toHtml()


def test_calibration_moves_the_estimates_toward_the_measurements(view, catalogue):
    from gpudesk.core.settings import load_settings

    dialog = _import(view, [LLAMA_4080])
    dialog.start_import()
    dialog.wait()
    dialog.accept()
    view.wait()
    stats = view.results["stats"]
    assert stats["measurements"] == 2 and stats["after"] < stats["before"]
    assert view.factors.rowCount() == 2
    assert "calibrated" in view.calibration_text.text()
    assert view.chart.before.data.size == 2  # hollow points at the default estimate, joined to the calibrated
    view.use_calibration.setChecked(False)
    assert load_settings().calibration_enabled is False
    view.use_calibration.setChecked(True)
    assert load_settings().calibration_enabled is True


def test_filters_export_and_delete(view, catalogue, tmp_path):
    dialog = _import(view, [LLAMA_4080, BENCH / "trtllm-bench" / "masahiro_RTX4070Ti_report.json"])
    dialog.start_import()
    dialog.wait()
    dialog.accept()
    view.wait()
    total = view.proxy.rowCount()
    view.filter_file.setCurrentIndex(view.filter_file.findData(LLAMA_4080.name))
    assert view.proxy.rowCount() == 2
    out = view.export(str(tmp_path / "out.json"))
    doc = json.loads(out.read_text())
    assert doc["gpudesk_benchmark"] == 1 and len(doc["measurements"]) == 2
    view.filter_file.setCurrentIndex(0)
    assert view.proxy.rowCount() == total
    view.table.selectRow(0)
    assert view.delete_selected(confirm=False) == 1
    view.wait()
    assert count_measurements(catalogue) == total - 1
    view.tabs.setCurrentIndex(3)
    view.imports_table.selectRow(0)
    deleted = view.delete_import(confirm=False)
    view.wait()
    assert deleted > 0 and count_measurements(catalogue) == total - 1 - deleted


def test_files_dropped_on_the_window_open_the_import(qtbot, catalogue, monkeypatch):
    win = open_main_window(qtbot)
    opened = []
    monkeypatch.setattr(BenchmarksView, "import_files", lambda self, paths, modal=True: opened.append(paths))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(LLAMA_4080))])
    event = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    win.dropEvent(event)
    assert opened == [[str(LLAMA_4080)]]
    assert win.current_page_key() == "benchmarks"


def test_error_summary_and_csv_with_the_estimates(view, tmp_path):
    import csv

    dialog = _import(view, [LLAMA_4080, BENCH / "trtllm-bench" / "masahiro_RTX4070Ti_report.json"])
    dialog.start_import()
    dialog.wait()
    dialog.accept()
    view.wait()
    summary = view.summary.rows()
    assert summary and {r["accelerator"] for r in summary} >= {"GeForce RTX 4080", "GeForce RTX 4070 Ti"}
    decode = next(r for r in summary if r["metric"] == "decode_tokens_per_s_per_user" and "4080" in r["accelerator"])
    row = next(r for r in view.model.rows() if r["metric"] == "decode_tokens_per_s_per_user" and "4080" in r["hardware"])
    assert decode["measurements"] == 1 and decode["median_error"] == pytest.approx(row["error"])
    out = view.export(str(tmp_path / "table.csv"))
    with out.open() as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == view.proxy.rowCount()
    compared = [t for t in table if t["compared"] == "True"]
    assert compared and all(float(t["estimated_low"]) <= float(t["estimated_likely"]) <= float(t["estimated_high"])
                            for t in compared)
    assert any(t["why_not_compared"] for t in table if t["compared"] == "False")


def test_mlperf_lengths_are_asked_and_make_the_results_comparable(view):
    mlperf = sorted((BENCH / "mlperf-inference").iterdir())
    dialog = _import(view, mlperf)
    dialog.start_import()
    dialog.wait()
    dialog.accept()
    view.wait()
    throughput = next(r for r in view.model.rows() if r["metric"] == "output_tokens_per_s")
    assert throughput["error"] is None and "generated tokens" in throughput["flag"]
    boxes = [view.questions.inner_layout.itemAt(i).widget() for i in range(view.questions.inner_layout.count())]
    box = next(b for b in boxes if b.findChild(QSpinBox, "gen_tokens") is not None)
    _answer_button(box).click()
    assert "both the prompt and the output" in box.findChild(QLabel, "errorLabel").text()
    box.findChild(QSpinBox, "prompt_tokens").setValue(1024)  # illustrative lengths
    box.findChild(QSpinBox, "gen_tokens").setValue(256)
    _answer_button(box).click()
    view.wait()
    throughput = next(r for r in view.model.rows() if r["metric"] == "output_tokens_per_s")
    assert throughput["error"] is not None


def _shown(view, column_header: str) -> list[str]:
    headers = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(view.model.columnCount())]
    col = headers.index(column_header)
    return [view.proxy.index(r, col).data() for r in range(view.proxy.rowCount())]


def test_metric_labels_units_error_sign_and_the_tool_each_file_was_taken_for(view, tmp_path):
    """Issue 11: what the table says - human metric names with the statistic, a unit that matches the
    value, an error column whose sign is defined, and the tool each file was taken for."""
    from gpudesk.ui.benchmarks.view import ERROR_HEADER, metric_label

    files = [LLAMA_4080, BENCH / "llama-bench" / "llamacpp-README_5a32f10_prefilled-context_markdown.txt",
             BENCH / "guidellm" / "guidellm-tests_benchmarks_stripped_synchronous.json",
             BENCH / "ollama" / "ollama-issue1806_mistral_run-verbose.txt"]
    dialog = _import(view, files)
    tools = [dialog.tree.topLevelItem(i).text(1) for i in range(dialog.tree.topLevelItemCount())]
    assert tools == ["llama.cpp llama-bench", "llama.cpp llama-bench Markdown table", "GuideLLM benchmarks JSON",
                     "Ollama --verbose output"]
    dialog.start_import()
    assert dialog.wait()
    dialog.accept()
    view.wait()
    headers = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(view.model.columnCount())]
    assert "Error" not in headers and ERROR_HEADER in headers and "+ = estimate higher" in ERROR_HEADER
    tip = view.model.headerData(headers.index(ERROR_HEADER), Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "+20% means the estimate is 20% higher" in tip
    metrics, measured = _shown(view, "Metric"), _shown(view, "Measured")
    assert not any("_s" in m.split(" ")[0] for m in metrics)  # no stored keys (ttft_s, e2e_latency_s) on screen
    shown = dict(zip(metrics, measured, strict=True))
    assert shown["TTFT (median)"] == "16.4 ms" and shown["TTFT (mean)"] == "16.8 ms"
    assert shown["Request latency (p99)"] == "689 ms"
    assert shown["Request throughput (mean)"].endswith("requests/s")
    assert metric_label("e2e_latency_s", "median") == "Request latency (median)"
    taken = dict(zip(_shown(view, "File"), _shown(view, "Taken for"), strict=True))
    assert taken["llamacpp-README_5a32f10_prefilled-context_markdown.txt"] == "llama.cpp llama-bench Markdown table"
    assert taken["llamacpp-README_RTX4080_CUDA_build5163_array.json"] == "llama.cpp llama-bench"
    assert taken["ollama-issue1806_mistral_run-verbose.txt"] == "Ollama --verbose output"
    # with an estimate, the sign of the error is that of estimate - measured
    row = next(r for r in view.model.rows() if r["error"] is not None)
    v = row["v"]
    assert (row["error"] > 0) == (v.estimated.likely > row["measured"])
    imported = {view.imports_model.rows()[i]["source_file"]: view.imports_model.rows()[i]["tool"]
                for i in range(len(view.imports_model.rows()))}
    assert imported["guidellm-tests_benchmarks_stripped_synchronous.json"] == "GuideLLM benchmarks JSON"
    view.tabs.setCurrentIndex(0)
    view.table.selectRow(0)
    assert "taken for" in view.detail.toPlainText()
    view.grab().save("/tmp/h1_bench.png")
    view.table.horizontalScrollBar().setValue(view.table.horizontalScrollBar().maximum())
    view.grab().save("/tmp/h1_bench_right.png")
