"""The catalogue view through its models and public methods (pytest-qt)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from gpudesk.core.catalogue import Catalogue
from gpudesk.core.catalogue.fields import KIND_LABELS
from gpudesk.ui.catalogue.dialogs import EntryDialog, QuoteDialog
from gpudesk.ui.catalogue.view import CatalogueView
from gpudesk.ui.models.table import ROW_ROLE, SORT_ROLE

from ..conftest import DATA


@pytest.fixture
def view(qtbot, catalogue):
    widget = CatalogueView()
    qtbot.addWidget(widget)
    with qtbot.waitSignal(widget.populated, timeout=5000):
        widget.set_catalogue(catalogue)
    return widget


def test_the_table_model_is_a_proper_item_model(view, qtmodeltester):
    qtmodeltester.check(view.model)
    qtmodeltester.check(view.proxy)


def test_vendor_filter_search_and_memory_filter(view):
    total = len(view.visible_rows())
    view.group_combo.setCurrentIndex(view.group_combo.findData("AMD"))
    rows = view.visible_rows()
    assert rows and len(rows) < total and all(r["vendor"] == "AMD" for r in rows)
    view.group_combo.setCurrentIndex(0)
    view.search.setText("h100")
    rows = view.visible_rows()
    assert rows and all("h100" in r["id"] for r in rows)
    view.search.clear()
    view.memory_spin.setValue(100)
    rows = view.visible_rows()
    assert rows and all(r["memory_gb"] >= 100 for r in rows)
    view.memory_spin.setValue(0)
    view.year_spin.setValue(2024)
    assert all(r["year"] >= 2024 for r in view.visible_rows())
    assert "of" in view.count_label.text()


def test_columns_with_units_sort_as_numbers_and_empty_cells_last(view):
    column = view.model.column_index("memory_gb")
    view.table.sortByColumn(column, Qt.SortOrder.AscendingOrder)
    values = [r["memory_gb"] for r in view.visible_rows()]
    known = [v for v in values if v is not None]
    assert known == sorted(known)
    assert 4.0 in known and 128.0 in known and known.index(16.0) < known.index(128.0)  # not "128" < "16"
    assert all(v is None for v in values[len(known):])
    view.table.sortByColumn(column, Qt.SortOrder.DescendingOrder)
    values = [r["memory_gb"] for r in view.visible_rows()]
    known = [v for v in values if v is not None]
    assert known == sorted(known, reverse=True) and values[: len(known)] == known


def test_detail_shows_each_figure_with_its_source_link_and_date(view):
    assert view.select_id("h100-sxm5-80gb")
    html = view.detail.toHtml()
    assert "H100 SXM5 80GB" in html
    assert "Datasheet" in html and "href=" in html and "https://" in html
    assert "989.4" in html and "2023" in html


def test_a_derived_figure_shows_its_formula_and_the_sources_of_its_inputs(view):
    assert view.select_id("rtx-4090-laptop")
    html = view.detail.toHtml()
    # NVIDIA prints no TFLOPS for the laptop part: 76 SMs x 512 FLOP per clock x 2,040 MHz
    assert "79.38" in html and "derived: sms 76" in html and "boost clock mhz 2,040" in html
    assert "Ada GPU Architecture" in html  # the whitepaper behind the FLOP per clock, in the numbered sources


def test_price_history_chart_follows_the_selection(view):
    view.set_kind("cloud")
    assert view.select_id("gcp-a3-highgpu-8g")
    chart = view.price_chart
    assert chart.isVisibleTo(view) and chart.series_shown["spot"] >= 10 and "on_demand" in chart.series_shown
    assert "Price history, 2024-05" in chart.title.text()
    view.set_kind("accelerators")
    assert view.select_id("h100-sxm5-80gb")  # reported prices over 2023-2024
    assert chart.isVisibleTo(view) and sum(chart.series_shown.values()) >= 3
    assert view.select_id("a10g")  # no price at all: nothing to draw
    assert not chart.isVisibleTo(view)


def test_a_price_dated_by_year_alone_is_drawn_mid_year_in_date_order(qtbot):
    from gpudesk.ui.catalogue.price_chart import PriceChart, timestamp

    chart = PriceChart()
    qtbot.addWidget(chart)
    # "2024" sorts before "2024-05" as text, but sits at 1 July, after May: the line runs in time order
    chart.show_history({"reported_deal": [("2024", 40.0), ("2024-05", 70.0), ("2025-01-02", 30.0)]}, "USD")
    xs, ys = chart.plot.listDataItems()[0].getData()
    assert list(xs) == sorted(xs) and list(ys) == [70.0, 40.0, 30.0]
    assert xs[1] == timestamp("2024-07-01")


def test_kinds_switch_tables(view):
    order = ["accelerators", "systems", "models", "cloud", "prices", "cost_factors", "regions", "interconnects", "sources"]
    assert [view.tabs.tabText(i).split(" (")[0] for i in range(view.tabs.count())] == [KIND_LABELS[k] for k in order]
    for kind in order[1:]:
        view.set_kind(kind)
        assert view.model.rowCount() > 0, kind
        assert view.tabs.currentIndex() == order.index(kind)


def test_a_quote_added_survives_a_restart(qtbot, catalogue, gpudesk_home):
    dialog = QuoteDialog(catalogue, "h100-sxm5-80gb")
    qtbot.addWidget(dialog)
    dialog.price.setText("28,900")
    dialog.supplier.setText("Acme <GPU> & Co")
    dialog.accept()
    assert dialog.result() == QDialog.DialogCode.Accepted
    quote_id = dialog.result_record["id"]
    catalogue.close()

    reopened = Catalogue.open(None, DATA)
    try:
        quote = reopened.get("prices", quote_id)
        assert quote and quote["usd"] == 28900 and quote["origin"] == "user_added"
        widget = CatalogueView()
        qtbot.addWidget(widget)
        widget.set_catalogue(reopened)
        widget.set_kind("prices")
        assert any(r["id"] == quote_id for r in widget.visible_rows())
        assert widget.select_id(quote_id)
        assert "Acme &lt;GPU&gt; &amp; Co" in widget.detail.toHtml()
    finally:
        reopened.close()


def test_a_bad_value_is_refused_with_a_message(qtbot, catalogue):
    before = len(catalogue.items("accelerators"))
    dialog = EntryDialog(catalogue, "accelerators")
    qtbot.addWidget(dialog)
    dialog.editors["id"].editor.setText("my-gpu")
    dialog.editors["name"].editor.setText("My GPU")
    dialog.editors["vendor"].editor.setText("Lab")
    dialog.editors["memory_gb"].editor.setText("lots")
    dialog.editors["tdp_w"].editor.setText("-5")
    dialog.accept()
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.editors["memory_gb"].error.isVisibleTo(dialog)
    assert "number" in dialog.editors["memory_gb"].error.text()
    assert "at least" in dialog.editors["tdp_w"].error.text()
    assert "Nothing was saved" in dialog.message.text()
    assert len(catalogue.items("accelerators")) == before

    dialog.editors["memory_gb"].editor.setText("32")
    dialog.editors["tdp_w"].editor.setText("250")
    dialog.accept()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert catalogue.get("accelerators", "my-gpu")["origin"] == "user_added"


def test_copy_puts_a_table_on_the_clipboard(view):
    from PySide6.QtGui import QGuiApplication

    view.select_id("a100-sxm4-80gb")
    view.copy_selection()
    text = QGuiApplication.clipboard().text()
    lines = text.strip().splitlines()
    # the columns as shown: the buyer's figures first, the hidden ID left out
    assert lines[0].startswith("Name\tMemory (GB)\tBandwidth (GB/s)\t")
    assert "A100 SXM4 80GB" in lines[1] and "a100-sxm4-80gb" not in lines[1]


def test_accelerators_lead_with_the_numbers_a_buyer_chooses_by(view):
    assert view.visible_columns() == ["name", "memory_gb", "mem_bandwidth_gbs", "bf16_tflops", "fp8_tflops", "tdp_w",
                                      "latest_price_usd", "latest_price_date", "vendor", "device_class", "year"]
    headers = [view.model.columns()[view.model.column_index(k)].header for k in view.visible_columns()]
    assert "(GB)" in headers[1] and "(GB/s)" in headers[2] and "(TFLOPS)" in headers[3] and "(W)" in headers[5]
    view.search.setText("a100-sxm4-80gb")  # the hidden ID is still searched
    assert [r["id"] for r in view.visible_rows()] == ["a100-sxm4-80gb"]
    assert "latest_price_usd" not in view.visible_rows()[0]  # records stay as stored


def test_the_latest_price_column_sorts_as_numbers_with_empty_cells_last(view, catalogue):
    column = view.model.column_index("latest_price_usd")
    view.table.sortByColumn(column, Qt.SortOrder.DescendingOrder)
    prices = [view.proxy.index(r, column).data(SORT_ROLE) for r in range(view.proxy.rowCount())]
    known = [p for p in prices if p is not None]
    assert known and known == sorted(known, reverse=True)
    assert prices[:len(known)] == known  # no price: at the bottom
    row = next(r for r in range(view.proxy.rowCount()) if view.proxy.index(r, column).data(SORT_ROLE) is not None)
    record = view.proxy.index(row, 0).data(ROW_ROLE)
    assert record["latest_price_usd"] == catalogue.latest_price(record["id"])["usd"]


def test_systems_show_accelerator_count_memory_power_and_price(view):
    view.set_kind("systems")
    assert view.visible_columns()[:7] == ["name", "accelerator", "accelerator_count", "system_memory_gb",
                                          "system_power_w", "latest_price_usd", "latest_price_date"]
    assert "id" not in view.visible_columns()


def test_column_choice_and_order_are_remembered(qtbot, catalogue, view):
    header = view.table.horizontalHeader()
    view.set_column_visible("architecture", True)
    header.moveSection(header.visualIndex(view.model.column_index("tdp_w")), 1)
    view.set_kind("systems")
    view.set_kind("accelerators")  # the kind's layout survives a round trip through another
    assert view.visible_columns()[:2] == ["name", "tdp_w"] and "architecture" in view.visible_columns()
    states = view.header_states()
    other = CatalogueView()  # and a new view (the next start) restores it from the settings
    qtbot.addWidget(other)
    other.set_header_states(states)
    with qtbot.waitSignal(other.populated, timeout=5000):
        other.set_catalogue(catalogue)
    assert other.visible_columns() == view.visible_columns()
    other.reset_columns()
    assert other.visible_columns()[:2] == ["name", "memory_gb"] and "architecture" not in other.visible_columns()


def _cell(view, item_id: str, key: str, role=Qt.ItemDataRole.DisplayRole):
    row = next(i for i, r in enumerate(view.model.rows()) if r["id"] == item_id)
    return view.model.index(row, view.model.column_index(key)).data(role)


def test_a_blank_cell_says_whether_the_figure_does_not_apply_is_not_published_or_is_unknown(view):
    tip = Qt.ItemDataRole.ToolTipRole
    # FP8 on Ampere: no Ampere device in the catalogue has an FP8 rate, while the A100's 16-bit ones are published
    assert _cell(view, "a100-sxm4-80gb", "fp8_tflops") == "n/a"
    assert _cell(view, "a100-sxm4-80gb", "fp8_tflops", tip).startswith("Not applicable: no NVIDIA Ampere device")
    # Apple publishes no GPU BF16 rate and no TDP: the entry's notes say so
    apple = next(r for r in view.model.rows() if r.get("vendor") == "Apple" and r.get("bf16_tflops") is None)
    assert _cell(view, apple["id"], "bf16_tflops") == "—"
    assert _cell(view, apple["id"], "bf16_tflops", tip).startswith("Not published. From the entry's notes: ")
    assert "Apple publishes neither" in _cell(view, apple["id"], "tdp_w", tip)
    # the H100 has its FP8 rate: the figure and its source
    assert _cell(view, "h100-sxm5-80gb", "fp8_tflops") not in ("", "—", "n/a")
    # nothing known about why: unknown, said as such
    unknown = next(r for r in view.model.rows() if r.get("tdp_w") is None and "tdp_w" not in (r.get("notes") or ""))
    assert _cell(view, unknown["id"], "tdp_w") == "—"
    assert _cell(view, unknown["id"], "tdp_w", tip).startswith("Unknown: no TDP figure in the documents read")
    # a single-accelerator system has nothing inside to link
    view.set_kind("systems")
    assert _cell(view, "jetson-nano-devkit", "intra_link") == "n/a"
    assert view.select_id("jetson-nano-devkit")
    assert "nothing inside the machine to link" in view.detail.toPlainText()


def test_each_price_says_what_exactly_it_prices(view):
    """The Jetson Nano module has two list prices, $129 and $199: each shows what it prices, and the
    one a comparison uses is marked."""
    tip = _cell(view, "jetson-nano", "latest_price_usd", Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("list price $199, 2026-07-06")
    assert "What it prices: Jetson Nano production module, volume suggested price at 1KU+" in tip
    assert view.select_id("jetson-nano")
    text = view.detail.toPlainText()
    assert "$199 · used by comparisons" in text and "$129" in text and "$129 · used" not in text
    assert "from the 2026-07-06 capture (+54%" in text and "in the 2026-05-13 and 06-22 FAQ captures" in text
    view.set_kind("systems")
    assert view.select_id("jetson-nano-devkit")
    assert "Jetson Nano Developer Kit (4 GB) launch price." in view.detail.toPlainText()


def test_a_wide_window_gives_its_spare_width_to_names_and_a_narrow_one_takes_it_back(view, qtbot):
    from gpudesk.ui.catalogue.columns import FIT_MAXIMUM
    from gpudesk.ui.models.table import natural_widths

    header, name = view.table.horizontalHeader(), view.model.column_index("name")
    needed = natural_widths(view.table, view.model, columns=[name])[0]
    assert needed > FIT_MAXIMUM  # "Apple M1 Ultra (20-core CPU, 64-core GPU)" is cut at the fitted width
    view.resize(1900, 900)
    view.show()
    qtbot.waitExposed(view)
    assert header.sectionSize(name) == needed  # whole names: the widest one fits
    assert header.length() <= view.table.viewport().width()  # and no horizontal scrolling for it
    view.resize(1100, 700)
    qtbot.waitUntil(lambda: header.sectionSize(name) == FIT_MAXIMUM, timeout=2000)


def test_a_narrow_detail_panel_keeps_words_and_prices_whole_and_names_each_offers_region(view, qtbot):
    """At the smallest panel a 1,100-pixel window leaves, the sourced figures do not break inside a word
    ("datacent|er"), a long cloud instance name wraps instead of squeezing its price to one character a
    line, nothing scrolls sideways, and offers of one instance in several regions say which is which."""
    view.resize(820, 700)
    view.show()
    qtbot.waitExposed(view)
    assert view.select_id("a10")
    detail = view.detail
    assert detail.width() <= 310  # the panel at its minimum
    qtbot.waitUntil(lambda: detail.document().idealWidth() <= detail.viewport().width(), timeout=2000)
    assert detail.horizontalScrollBar().maximum() == 0
    lines = {}
    block = detail.document().begin()
    while block.isValid():
        text = block.text()
        if text in ("datacenter", "31.2 TFLOPS") or text.endswith("/GPU-h"):
            lines[text] = block.layout().lineCount()
        block = block.next()
    assert lines.get("datacenter") == 1 and lines.get("31.2 TFLOPS") == 1, lines
    assert lines and all(n == 1 for t, n in lines.items() if t.endswith("/GPU-h")), lines
    assert {"eastus", "eastus2", "westus3"} <= {line.strip() for line in detail.toPlainText().splitlines()}


def test_the_detail_page_keeps_its_width_whatever_the_record_length(view, qtbot):
    """A scroll bar that came only with a long record would narrow the page after its first layout
    and lay the whole record out again (a tenth of the populated window's start-up): the page is as
    wide for a three-line source as for an accelerator's fifty figures."""
    view.resize(1100, 700)
    view.show()
    qtbot.waitExposed(view)
    widths = []
    for kind, item in (("sources", None), ("accelerators", "h100-sxm5-80gb"), ("sources", None)):
        view.set_kind(kind)
        if item:
            assert view.select_id(item)
            assert view.detail.document().size().height() > view.detail.viewport().height()  # it scrolls
        widths.append((view.detail.viewport().width(), view.detail.document().textWidth()))
    assert len(set(widths)) == 1, widths
