"""The Reports view with pytest-qt: it lists reports written anywhere, writes one again with
today's catalogue, makes one from a scenario file, reopens the scenario, and shows a damaged
list as an error without touching it."""

from __future__ import annotations

import pytest

from gpudesk.cli import main
from gpudesk.core.report.history import history_path, load_history
from gpudesk.ui.report.view import ReportsView

from ..conftest import ROOT

EXAMPLE = ROOT / "resources" / "examples" / "a100-vs-rtx4090-laptop.json"


@pytest.fixture
def view(qtbot, catalogue):
    widget = ReportsView()
    qtbot.addWidget(widget)
    widget.resize(1200, 700)
    widget.set_catalogue(catalogue)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_lists_a_report_written_from_the_command_line(view, tmp_path, capsys):
    assert view.model.rowCount() == 0 and view.empty.isVisibleTo(view)
    pdf = tmp_path / "laptop.pdf"
    assert main(["compare", str(EXAMPLE), "--pdf", str(pdf)]) == 0
    view.refresh()
    assert view.model.rowCount() == 1 and not view.empty.isVisibleTo(view)
    assert view.selected().path == str(pdf.resolve())
    html = view.detail.toHtml()
    assert "Recommendation" in html and "laptop.pdf" in html
    assert view.open_button.isEnabled() and view.again_button.isEnabled()


def test_write_again_and_new_from_scenario(view, tmp_path):
    first = view.new_from_scenario(str(EXAMPLE), str(tmp_path / "first.pdf"))
    assert first is not None and first.read_bytes().startswith(b"%PDF")
    assert view.model.rowCount() == 1
    again = view.write_again(str(tmp_path / "again.pdf"))
    assert again is not None and again.exists()
    assert view.model.rowCount() == 2
    assert view.selected().path == str(again.resolve())


def test_open_scenario_asks_for_the_view_that_wrote_it(view, qtbot, tmp_path):
    view.new_from_scenario(str(EXAMPLE), str(tmp_path / "r.pdf"))
    with qtbot.waitSignal(view.open_requested) as blocker:
        view.open_scenario()
    assert blocker.args[0] == "compare" and blocker.args[1] == load_history()[0].scenario_path


def test_a_missing_pdf_is_marked(view, tmp_path):
    pdf = view.new_from_scenario(str(EXAMPLE), str(tmp_path / "gone.pdf"))
    pdf.unlink()
    view.refresh()
    assert "(missing)" in view.model.rows()[0]["file_state"]
    assert not view.open_button.isEnabled()
    assert "no longer at this path" in view.detail.toHtml()


def test_a_damaged_list_is_shown_and_left_alone(view):
    history_path().write_text('{"reports": 7}', encoding="utf-8")
    view.refresh()
    assert view.error.isVisibleTo(view) and "a list 'reports'" in view.error.text()
    assert not view.new_button.isEnabled()
    assert history_path().read_text(encoding="utf-8") == '{"reports": 7}'


def test_screenshot(view, tmp_path):
    view.new_from_scenario(str(EXAMPLE), str(tmp_path / "a.pdf"))
    view.new_from_scenario(str(ROOT / "resources" / "examples" / "llama3-70b-serving-20-users.json"),
                           str(tmp_path / "b.pdf"))
    assert not view.grab().isNull()
