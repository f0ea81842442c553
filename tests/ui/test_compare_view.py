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


def test_a_serving_comparison_draws_each_options_curve_and_operating_point(view, qtbot):
    assert not view.tabs.currentIndex() == 1 or view.charts is None or not view.charts.serving.isVisible()
    view.load_path(EXAMPLES / "llama-70b-fp8-8xh100-mi300x-b200.json", as_preset=True)
    view.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: view.charts is not None and view.charts.serving.isVisible(), timeout=5000)
    charts = view.charts
    series = view.comparison.serving_curves["series"]
    drawn = [c for c in charts.serving_curves if c.isVisible()]
    assert len(drawn) == 3
    for curve, s in zip(drawn, series):
        xs, ys = curve.getData()
        assert list(xs) == pytest.approx(s["xs"]) and list(ys) == pytest.approx(s["ys"])
    assert len(charts.operating.data) == 3
    # back to a training question: the serving plot hides
    view.load_path(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json", as_preset=True)
    qtbot.waitUntil(lambda: not charts.serving.isVisible(), timeout=5000)


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


# ----------------------------------------------------------------------------- the title stays true
def _pick(view, combo, data) -> None:
    """Choose an entry of a combo box as a user does (the `activated` signal follows a click)."""
    index = combo.findData(data)
    assert index >= 0, data
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def _shown_names(view) -> dict:
    """Every place the compare view and its PDF show the configurations' names and the question."""
    from PySide6.QtCore import Qt

    from gpudesk.core.report.content import comparison_report

    view.tabs.setCurrentIndex(1)  # the charts are built on first show
    legend = [label.text for _sample, label in view.charts.scores_legend.items]
    report = comparison_report(view.comparison)
    return {
        "headers": [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(2, view.model.columnCount())],
        "legend": legend,
        "recommendation": view.recommendation.toPlainText(),
        "title": view.question.text(),
        "pdf_title": report.question,
        "pdf_subtitle": report.subtitle,
    }


def test_the_title_follows_every_workload_field_and_configuration_until_the_user_types_one(view, qtbot, tmp_path):
    preset = str((EXAMPLES / "a100-vs-rtx4090-laptop.json").resolve())
    _pick(view, view.preset, preset)
    assert view.preset.currentData() == preset  # the picker shows the question picked
    assert view.question.text() == "A100 or an RTX 4090 Laptop GPU for fine-tuning an 8B model?"
    assert view.subtitle.text().startswith("Seed question: a data-centre A100")

    # the workload's model becomes nanochat d20: the preset's title and description no longer apply
    _pick(view, view.workload_preset, "nanochat-d20")
    view.refresh()
    shown = _shown_names(view)
    title = "1 × A100 PCIe 80GB or RTX 4090 Laptop GPU for training nanochat d20 (561M) from scratch on 11.2B tokens (BF16)?"
    assert shown["title"] == shown["pdf_title"] == view.comparison.question == title
    assert view.preset.currentData() is None and view.preset.currentText() == "Choose a question…"
    assert view.subtitle.text() == "Two to six configurations for one workload; a winner per row."
    assert "description" not in view.scenario().to_dict()  # the preset's description is not the PDF's lead
    assert "0.561B-parameter model on 11.2B tokens in BF16" in shown["pdf_subtitle"]
    pdf = view.export_pdf(str(tmp_path / "t.pdf"))
    from pypdf import PdfReader

    assert PdfReader(str(pdf)).metadata.title == title

    # every workload field: the places that show it follow
    view.tokens.setValue(20.0)
    view.refresh()
    assert "on 20B tokens" in view.question.text() and "on 20B tokens" in _shown_names(view)["pdf_subtitle"]
    view.precision.setCurrentIndex(view.precision.findData("fp16"))
    view.refresh()
    assert view.question.text().endswith("(FP16)?") and view.comparison.row("peak_device").label.endswith("(FP16)")
    before = view.comparison.row("throughput").cells[0].value
    view.seq_len.setValue(4096)
    view.refresh()
    assert view.comparison.row("throughput").cells[0].value != before  # shown only in the figures
    view.params.setValue(1.5)
    view.refresh()
    shown = _shown_names(view)
    assert "training a 1.5B-parameter model from scratch" in shown["title"]  # no longer nanochat d20's size
    assert view.workload_preset.currentData() == ""  # nor its preset
    assert "1.5B-parameter model" in shown["pdf_subtitle"] and shown["pdf_title"] == shown["title"]
    view.kind.setCurrentIndex(view.kind.findData("finetune"))
    view.refresh()
    assert "for fine-tuning a 1.5B-parameter model with LoRA" in view.question.text()
    view.kind.setCurrentIndex(view.kind.findData("infer"))
    view.concurrency.setValue(4)
    view.refresh()
    assert "for serving a 1.5B-parameter model in FP16 to 4 users?" in view.question.text()
    before = view.comparison.row("ttft").cells[0].value
    view.prompt.setValue(view.prompt.value() * 4)
    view.refresh()
    assert view.comparison.row("ttft").cells[0].value > before

    # each configuration's hardware: a generated name follows it, a typed one is kept, and every
    # place that shows the name shows the same
    view.rows[1].name.setText("")  # the preset author's name given up: gpudesk names it
    for i, (item, expected) in enumerate((("accelerator:h100-sxm5-80gb", "1 × H100 SXM5 80GB"),
                                          ("accelerator:l40s", "L40S"))):
        row = view.rows[i]
        row.item.setCurrentIndex(row.item.findData(item))
        view.refresh()
        shown = _shown_names(view)
        assert view.comparison.names[i] == shown["headers"][i] == shown["legend"][i] == expected
        assert expected in shown["recommendation"] and expected in shown["title"] and expected in shown["pdf_title"]
    assert view.question.text().startswith("1 × H100 SXM5 80GB or L40S for serving")

    # a title the user types is kept; emptied, gpudesk writes it again
    view.question.setText("Which card for our chat service?")
    view.concurrency.setValue(8)
    view.refresh()
    assert view.question.text() == view.comparison.question == "Which card for our chat service?"
    view.question.setText("")
    view.refresh()
    assert view.question.text().endswith("to 8 users?") and view.comparison.question == view.question.text()


def test_a_saved_generated_title_keeps_following_and_a_preset_picked_again_is_shown(view, qtbot, tmp_path):
    view.rows[0].item.setCurrentIndex(view.rows[0].item.findData("system:dgx-spark"))
    view.refresh()
    generated = view.question.text()
    assert generated == ("8 × H100 rented (Lambda) or DGX Spark (owned) for training nanochat d20 (561M) from "
                         "scratch on 11.2B tokens (BF16)?")  # the names typed by the preset's author are kept
    path = tmp_path / "mine.json"
    assert view._write(path)
    again = CompareView()
    qtbot.addWidget(again)
    again.set_catalogue(view.catalogue)
    assert again.load_path(path)
    assert again.question.text() == generated and again.preset.currentText() == "Choose a question…"
    again.tokens.setValue(again.tokens.value() * 2)
    again.refresh()
    assert again.question.text() != generated and "22.4B tokens" in again.question.text()
    # picking a question shows it in the picker until the comparison is edited away from it
    preset = str((EXAMPLES / "a100-vs-jetson-nanos.json").resolve())
    again._set_modified(False)
    _pick(again, again.preset, preset)
    assert again.preset.currentData() == preset
    again.refresh()
    assert again.preset.currentData() == preset  # a refresh alone changes nothing
    again.pue.setValue(1.5)
    again.refresh()
    assert again.preset.currentData() == preset  # nor the site: the question is the same
    again.rows[2].nodes.setValue(50)
    again.refresh()
    assert again.preset.currentData() is None


def test_with_one_runnable_configuration_the_charts_say_there_is_nothing_to_compare(view, qtbot):
    view.load_path(EXAMPLES / "llama3-70b-fp16-one-or-two-gpus.json", as_preset=True)
    view.tabs.setCurrentIndex(1)
    charts = view.charts
    assert [r.ok for r in view.comparison.results] == [False, True]
    message = "Only one configuration can run this workload (2 × H100 SXM 80GB): nothing to compare."
    assert charts.empty_scores.isVisible() and charts.empty_scores.textItem.toPlainText() == message
    assert not any(b.isVisible() for b in charts.bars)  # no bars all at 1.0
    assert charts.empty_value.isVisible() and len(charts.value_points.data) == 0
    from gpudesk.core.report.content import BarChart, Paragraph, ScatterChart, comparison_report

    report = comparison_report(view.comparison)
    blocks = next(s for s in report.sections if s.title == "Charts").blocks
    assert not any(isinstance(b, (BarChart, ScatterChart)) for b in blocks)
    assert any(isinstance(b, Paragraph) and message in b.text for b in blocks)
    # two runnable configurations: the bars are back, the sentence gone
    view.load_path(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json", as_preset=True)
    assert not charts.empty_scores.isVisible() and sum(b.isVisible() for b in charts.bars) == 2


def test_an_empty_value_chart_says_why(view, tmp_path):
    doc = json.loads((EXAMPLES / "a100-vs-rtx4090-laptop.json").read_text())
    doc["compare"][0]["name"] = "1 × Radeon PRO W7900"
    doc["compare"][0]["cluster"][0]["item"] = "rtx-pro-5000-blackwell"  # no price found for it in any document read
    path = tmp_path / "no-prices.json"
    path.write_text(json.dumps(doc))
    view.load_path(path, as_preset=True)
    view.tabs.setCurrentIndex(1)
    text = view.charts.empty_value.textItem.toPlainText()
    assert view.charts.empty_value.isVisible() and len(view.charts.value_points.data) == 0
    assert text == ("No configuration has both a cost and a power figure (1 × Radeon PRO W7900 has no price; "
                    "RTX 4090 Laptop GPU has no price): nothing to compare.")
    assert "no purchase price" in view.charts.empty_cost.textItem.toPlainText()


def test_the_purchase_price_row_says_which_price_it_used(view):
    from PySide6.QtCore import Qt

    view.load_path(EXAMPLES / "a100-vs-jetson-nanos.json", as_preset=True)
    capex = view.comparison.row("capex")
    assert capex.cells[1].text == "$990\n(MSRP, 2019-03-18, STALE)"  # more than 12 months old
    tip = view.model.index(view.model.row_index("capex"), 3).data(Qt.ItemDataRole.ToolTipRole)
    assert "NVIDIA Jetson Nano Developer Kit (4 GB): MSRP $99 × 10 (2019-03-18" in tip
    assert "Jetson Nano Developer Kit (4 GB) launch price." in tip
    assert capex.cells[0].note == "Price used: A100 PCIe 40GB: $10,000 per node, given in this comparison"
    assert any("purchase price: NVIDIA Jetson Nano Developer Kit (4 GB): MSRP $99 × 100" in a
               for a in view.comparison.assumptions)


def test_the_cloud_price_choice_moves_break_even_and_is_saved(view, qtbot):
    view.load_path(EXAMPLES / "own-or-rent-8xh100-mi300x-b200.json", as_preset=True)
    qtbot.waitUntil(lambda: view.comparison is not None and view.comparison.row("break_even_reserved_3y") is not None,
                    timeout=10000)
    assert view.pricing.currentData() == "reserved_3y"
    first = view.comparison.results[0].estimate.cost
    three_year = first.break_even_months
    assert three_year == pytest.approx(first.break_even_by_pricing["reserved_3y"][1])
    assert view.comparison.row("capex_parts").cells[0].text.splitlines()[1].startswith("hosts $")
    view.pricing.setCurrentIndex(view.pricing.findData("on_demand"))
    assert "pricing" not in view.scenario().finance  # on demand is the default: not written
    qtbot.waitUntil(lambda: view.comparison.results[0].estimate.cost.break_even_months < three_year, timeout=10000)
    view.pricing.setCurrentIndex(view.pricing.findData("reserved_1y"))
    assert view.scenario().finance["pricing"] == "reserved_1y"


def test_the_why_tab_shows_the_tornado_odds_and_crossovers_and_edits_an_input_in_place(view, qtbot):
    from gpudesk.ui.compare.why_edit import InputDialog, apply_input

    view.load_path(EXAMPLES / "own-or-rent-8xh100-mi300x-b200.json", as_preset=True)
    view.results.tabs.setCurrentIndex(2)
    panel = view.results.why
    assert panel is not None and view.results.tabs.tabText(2) == "Why"
    why = view.comparison.why
    assert len(panel.bars_shown) == min(10, len(why.bars)) and panel.items  # bars and likely lines drawn
    assert f"{why.probabilities[why.winner]:.0%}" in panel.odds.text() and why.names[why.winner] in panel.odds.text()
    assert why.sentence in panel.details.toHtml().replace("&amp;", "&") or "stays ahead" in panel.details.toPlainText()
    # decide by another outcome: saved with the scenario
    view.decide_by("co2")
    assert view.comparison.why.row == "co2" and view.scenario().uncertainty["decide_by"] == "co2"
    assert panel.decide.currentData() == "co2"
    view.decide_by("cost_run")
    electricity = next(b.input for b in view.comparison.why.bars if b.input.kind == "electricity")
    # a range the analysis cannot draw is named in the dialog and nothing changes
    dialog = InputDialog(electricity, {})
    qtbot.addWidget(dialog)
    dialog.low.setValue(0.5)
    dialog.high.setValue(0.1)
    dialog.accept()
    assert dialog.result() != dialog.DialogCode.Accepted and "low 0.5 is above high 0.1" in dialog.message.text()
    dialog.low.setValue(0.0)
    dialog.high.setValue(0.4)
    dialog.accept()
    assert "a price of zero or less cannot be drawn" in dialog.message.text()
    assert "uncertainty" not in view.scenario().to_dict() or "electricity" not in view.scenario().uncertainty
    # a good value and range: the comparison follows, and the scenario keeps both
    before = view.comparison.results[0].estimate.cost.owned_usd_per_run.likely
    apply_input(view, electricity, 0.40, {"low": 0.2, "high": 0.8, "distribution": "log_triangular"})
    view.refresh()
    assert view.scenario().site["electricity_usd_per_kwh"] == 0.40
    assert view.scenario().uncertainty["electricity"] == {"low": 0.2, "high": 0.8, "distribution": "log_triangular"}
    assert view.comparison.results[0].estimate.cost.owned_usd_per_run.likely > before
    bar = next(b for b in view.comparison.why.bars if b.input.kind == "electricity")
    assert bar.input.low * bar.input.base == pytest.approx(0.2) and bar.input.high * bar.input.base == pytest.approx(0.8)
    # a configuration's purchase price, from its bar: the capex follows, hosts kept
    price = next(b.input for b in view.comparison.why.bars if b.input.key == "purchase_price:0")
    apply_input(view, price, 200_000.0, None)
    view.refresh()
    parts = view.comparison.results[0].estimate.cost.capex_parts
    assert parts["hardware"] == pytest.approx(200_000 + 32_010)  # the node price given includes its host


def test_points_too_close_to_name_beside_each_other_are_named_in_a_key(view, qtbot):
    from gpudesk.ui.render.charts import crowded

    assert crowded([(1.5, 2.9), (1.55, 3.0), (0.2, 0.3)])
    assert not crowded([(1.0, 1.0), (0.1, 1.0)])  # same height, far apart sideways
    assert not crowded([(1.0, 1.0), (1.0, 0.5)])  # same place sideways, far apart in height
    assert not crowded([]) and not crowded([(1.0, 1.0)])
    assert crowded([(0.0, 0.0), (0.0, 0.0)])  # nothing to scale by: still the same place
    # 8 × H200, 8 × MI300X and 8 × B200 serving DeepSeek-R1: the H200's name, written above it, covered the
    # MI300X's point 0.16 of the height higher
    assert crowded([(2.6, 3.8), (2.4, 4.7), (3.05, 5.6)])
    # the nanochat question's two points lie far apart: each is named beside it, no key
    view.tabs.setCurrentIndex(1)
    charts = view.charts
    assert len(charts.value_labels) == 2 and not charts.value_key.isVisible()
    # the 70B question's MI300X and B200 points sit close together: a key names all three, no text beside
    view.load_path(EXAMPLES / "llama-70b-fp8-8xh100-mi300x-b200.json", as_preset=True)
    qtbot.waitUntil(lambda: charts.value_key.isVisible(), timeout=10000)
    assert not charts.value_labels and len(charts.value_points.data) == 3
    key = charts.value_key.textItem.toPlainText()
    assert [line.strip("● \xa0") for line in key.splitlines()] == ["8 × H100 SXM", "8 × MI300X", "8 × B200"]


def test_the_cost_key_sits_above_the_lines_not_over_them(view, qtbot):
    # four bought machines: every line starts at month 0 in view, under a two-column key with room above them
    view.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: view.charts is not None, timeout=10000)
    charts = view.charts
    months = [0.0, 12.0, 24.0, 48.0]
    series = [{"name": f"machine {i}", "kind": "buy", "ys": [100_000.0 * (i + 1) + 1_000.0 * m for m in months]}
              for i in range(4)]
    charts._set_cost({"months": months, "series": series, "crossings": []})
    (x0, x1), (y0, y1) = charts.cost.getViewBox().viewRange()
    top = max(max(s["ys"]) for s in series)
    assert x0 <= 0.0 and x1 >= 48.0
    assert y1 > top * 1.1  # headroom for the key above the highest line
    assert charts.cost_legend.columnCount == 2
    # two lines: one column, and still room above them
    charts._set_cost({"months": months, "series": series[:2], "crossings": []})
    assert charts.cost_legend.columnCount == 1
    assert charts.cost.getViewBox().viewRange()[1][1] > max(series[1]["ys"])


def test_names_of_close_break_even_points_are_stacked_not_overprinted(qapp):
    from PySide6.QtCore import QRectF

    from gpudesk.ui.render.charts import marker_boxes

    plot = QRectF(60, 40, 400, 200)
    # two break-even points a few pixels apart: the second name moves down below the first
    boxes = marker_boxes([(200, 100, 150, 10), (206, 104, 150, 10)], plot)
    assert not boxes[0].intersects(boxes[1]) and boxes[1].top() >= boxes[0].bottom()
    assert boxes[0].left() == 206 and boxes[0].top() == 102  # the first sits just below-right of its point
    # a point near the right edge writes its name to its left, inside the plot
    right = marker_boxes([(450, 100, 150, 10)], plot)[0]
    assert right.right() <= 444 and right.left() >= plot.left()
    # points far apart keep their names where they are
    apart = marker_boxes([(100, 60, 80, 10), (300, 180, 80, 10)], plot)
    assert [b.top() for b in apart] == [62, 182]
    # no room left below: the name stays at the bottom rather than leaving the plot
    low = marker_boxes([(200, 232, 100, 10), (200, 232, 100, 10)], plot)
    assert low[1].bottom() <= plot.bottom() + 10


def test_a_scenario_naming_hardware_the_catalogue_lacks_is_refused_by_place(view, tmp_path, monkeypatch):
    """Opened, its configuration would show the first entry of the list in place of the unknown one and be
    compared as that: the file is refused instead, naming the place, and the comparison shown stays."""
    from gpudesk.ui.compare import view as compare_view

    said = []
    monkeypatch.setattr(compare_view.QMessageBox, "warning", lambda _parent, title, text: said.append((title, text)))
    before = list(view.comparison.names)
    doc = json.loads((EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json").read_text())
    doc["compare"][1]["cluster"][0] = {"item": "tpu-v5e-chip-typo", "per_node": 1, "nodes": 256}
    bad = tmp_path / "colleague.json"
    bad.write_text(json.dumps(doc))
    assert not view.load_path(bad)
    assert said and said[0][0] == "Cannot open scenario"
    assert said[0][1].startswith("colleague.json:\ncompare[1].cluster[0].item: 'tpu-v5e-chip-typo' is not an "
                                 "accelerator or system in the catalogue (did you mean")
    assert view.comparison.names == before and view.path is None
    doc["compare"][1]["cluster"][0] = {"cloud": "no-such-offer", "instances": 1}
    bad.write_text(json.dumps(doc))
    assert not view.load_path(bad)
    assert "compare[1].cluster[0].cloud: 'no-such-offer' is not a cloud offering in the catalogue" in said[1][1]
