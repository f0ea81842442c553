"""The compare view with pytest-qt: presets, add and remove a configuration, change the workload,
export, save and open."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.resolve import estimate_option
from gpudesk.core.scenario import load_scenario
from gpudesk.ui.compare.view import CompareView

from ..conftest import ROOT

EXAMPLES = ROOT / "resources" / "examples"


@pytest.fixture
def view(qtbot, catalogue):
    widget = CompareView()
    qtbot.addWidget(widget)
    widget.resize(1400, 900)
    widget.set_catalogue(catalogue)
    widget.load_path(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json", as_preset=True)
    return widget


def test_the_table_model_is_a_proper_item_model(view, qtmodeltester):
    qtmodeltester.check(view.model)


def test_preset_opens_with_winners_and_recommendation(view):
    comp = view.comparison
    assert comp.names == ["8 × H100 rented (Lambda)", "DGX Spark (owned)"]
    row = view.model.row_index("time")
    cell = view.model.index(row, 2).data()
    assert cell.startswith("★ ")  # the rented H100s finish first
    assert "finishes a run fastest" in view.recommendation.toPlainText()


def test_values_agree_with_the_estimate(view, catalogue):
    scenario = view.scenario()
    for i, option in enumerate(scenario.options()):
        est = estimate_option(scenario, option, catalogue, "compare")
        assert view.comparison.row("time").cells[i].value == pytest.approx(est.time_s.likely)


def test_add_and_remove_a_configuration(view, qtbot):
    row = view.add_configuration()
    row.name.setText("4 × A100")
    row.item.setCurrentIndex(row.item.findData("accelerator:a100-sxm4-80gb"))
    row.count.setValue(4)
    qtbot.waitUntil(lambda: len(view.comparison.results) == 3, timeout=3000)
    assert view.comparison.names[-1] == "4 × A100"
    assert view.comparison.results[-1].estimate.devices == 4
    assert view.is_modified()
    view.remove_configuration(0)
    qtbot.waitUntil(lambda: len(view.comparison.results) == 2, timeout=3000)
    assert "8 × H100 rented (Lambda)" not in view.comparison.names


def test_changing_the_workload_updates_the_table(view, qtbot):
    before = view.comparison.row("time").cells[0].value
    view.tokens.setValue(view.tokens.value() * 2)
    qtbot.waitUntil(lambda: view.comparison.row("time").cells[0].value > before * 1.9, timeout=3000)
    view.kind.setCurrentIndex(view.kind.findData("infer"))
    qtbot.waitUntil(lambda: view.comparison.row("decode_user") is not None, timeout=3000)
    assert view.prompt.isVisibleTo(view) and not view.tokens.isVisibleTo(view)


def test_export_pdf_csv_and_copy(view, tmp_path):
    pdf = view.export_pdf(str(tmp_path / "c.pdf"))
    assert pdf.read_bytes().startswith(b"%PDF")
    csv_path = view.export_csv(str(tmp_path / "c.csv"))
    assert "Time to train" in csv_path.read_text()
    view.copy_table()
    from PySide6.QtGui import QGuiApplication

    assert "DGX Spark (owned)" in QGuiApplication.clipboard().text()


def test_save_and_open_round_trip(view, tmp_path, qtbot, catalogue):
    # a figure the user overrides (here the Spark's BF16 peak) must survive the editor
    doc = json.loads((EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json").read_text())
    doc["compare"][1]["cluster"][0]["overrides"] = {"bf16_tflops": 125}
    start = tmp_path / "start.json"
    start.write_text(json.dumps(doc))
    assert view.load_path(start)
    path = tmp_path / "mine.json"
    assert view._write(path)
    assert not view.is_modified()
    again = CompareView()
    qtbot.addWidget(again)
    again.set_catalogue(catalogue)
    assert again.load_path(path)
    assert again.comparison.names == view.comparison.names
    assert again.comparison.row("time").cells[1].value == pytest.approx(view.comparison.row("time").cells[1].value)
    assert load_scenario(path).compare[1].cluster[0].overrides["bf16_tflops"] == 125


def test_charts_show_every_option(view):
    view.tabs.setCurrentIndex(1)
    charts = view.charts
    assert charts is not None
    visible = [b for b in charts.bars if b.isVisible()]
    assert len(visible) == 2
    assert len(charts.value_points.data) == 2
    assert any(c.isVisible() for c in charts.cost_curves)
    assert len(charts.crossings.data) == 1


def test_prices_as_of_a_past_date_and_the_embodied_switch(view, qtbot):
    from PySide6.QtCore import QDate

    capex = view.comparison.row("capex")
    assert capex.cells[1].text.startswith("$")  # today: the DGX Spark has a price
    view.as_of.setDate(QDate(2024, 1, 15))
    view.as_of_on.setChecked(True)
    assert view.scenario().finance["as_of"] == "2024-01-15"
    qtbot.waitUntil(lambda: view.comparison.row("capex").cells[1].text == "no price", timeout=3000)
    assert view.comparison.row("embodied") is not None
    view.embodied.setChecked(False)
    assert view.scenario().finance["embodied"] is False
    qtbot.waitUntil(lambda: view.comparison.row("embodied") is None, timeout=3000)
    view.as_of_on.setChecked(False)
    assert "as_of" not in view.scenario().finance


def test_a_generated_name_follows_the_hardware_and_a_typed_one_is_kept(view, qtbot, catalogue):
    view.load_path(EXAMPLES / "a100-vs-jetson-nanos.json")
    first = view.rows[0]
    assert first.name.text() == "1 × A100 PCIe 40GB"  # the name gpudesk would give it
    first.item.setCurrentIndex(first.item.findData("accelerator:a100-sxm4-80gb"))
    assert first.name.text() == "1 × A100 SXM4 80GB"
    first.count.setValue(8)
    assert first.name.text() == "8 × A100 SXM4 80GB"
    qtbot.waitUntil(lambda: view.comparison.names[0] == "8 × A100 SXM4 80GB", timeout=3000)
    assert "8 × A100 SXM4 80GB" in view.comparison.recommendation
    second = view.rows[1]
    assert second.name.text() == "10 × Jetson Nano (1 GbE)"  # typed by the preset's author: kept
    second.nodes.setValue(20)
    assert second.name.text() == "10 × Jetson Nano (1 GbE)"


@pytest.mark.parametrize("size", [(1366 - 190, 768 - 60), (1280 - 190, 720 - 60)])
def test_four_configurations_fit_a_laptop_screen_without_scrolling_sideways(qtbot, catalogue, size):
    """At 1366×768 (the window less its navigation and menus) four configurations share the table's
    width; long names elide in the middle and the header's tooltip has the full name."""
    from PySide6.QtCore import Qt

    widget = CompareView()
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    widget.set_catalogue(catalogue)
    widget.load_path(EXAMPLES / "a100-vs-jetson-nanos.json", as_preset=True)
    widget.add_configuration()
    widget.refresh()
    qtbot.waitUntil(lambda: widget.model.columnCount() == 6)
    qtbot.wait(50)
    table = widget.table
    assert not table.horizontalScrollBar().isVisible() and table.horizontalScrollBar().maximum() == 0
    assert sum(table.columnWidth(c) for c in range(6)) <= table.viewport().width()
    widths = [table.columnWidth(c) for c in range(2, 6)]
    assert max(widths) - min(widths) <= 2 and min(widths) >= 100  # the configurations share the width
    assert table.horizontalHeader().textElideMode() == Qt.TextElideMode.ElideMiddle
    name = widget.model.headerData(2, Qt.Orientation.Horizontal)
    assert widget.model.headerData(2, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole).startswith(name)
    # the left panel shows the start of a hardware name and is never cut off at the right
    nano = widget.rows[1].item
    assert nano.currentText().startswith("NVIDIA Jetson Nano") and nano.lineEdit().cursorPosition() == 0
    editor = widget.splitter.widget(0)
    assert editor.viewport().width() >= editor.widget().minimumSizeHint().width()
