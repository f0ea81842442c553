"""Every enabled button and action of every view, clicked as a user clicks it.

Each control is triggered through its signal (QAbstractButton.click(), QAction.trigger()), so a
slot wired to clicked(bool) or triggered(bool) gets what a user's click sends. File dialogs are
answered with a file in the test's folder, message boxes with "No" (and recorded), modal dialogs are
cancelled. The test fails on any exception in a slot, any Qt warning (pytest-qt's qt_log_level_fail),
and any control that deletes or forgets without asking first. New controls are covered without new
code: they are found by walking the widgets.
"""

from __future__ import annotations

import json

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QCheckBox, QDialog, QFileDialog, QMessageBox, QRadioButton

from gpudesk.ui.main_window import PAGES

from ..conftest import ROOT, TEST_DATA
from .conftest import open_main_window

EXAMPLES = ROOT / "resources" / "examples"
# Actions that end the session or leave the window: clicking them would end the test, not check it.
LEAVE = ("quit", "exit", "close window")
DESTRUCTIVE = ("delete", "remove", "forget")


class Answers:
    """What the dialogs were asked, and what they answered."""

    def __init__(self, folder):
        self.folder = folder
        self.questions: list[str] = []
        self.saved: list[str] = []

    def save(self, _parent=None, _caption="", directory="", _filter="", *args, **kwargs):
        name = str(directory).rsplit("/", 1)[-1] or "out"
        path = self.folder / f"{len(self.saved)}-{name}"
        self.saved.append(str(path))
        return str(path), ""

    def question(self, _parent, title, text, *args, **kwargs):
        self.questions.append(f"{title}: {text}")
        return QMessageBox.StandardButton.No


@pytest.fixture
def answers(monkeypatch, tmp_path):
    out = tmp_path / "saved"
    out.mkdir()
    a = Answers(out)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", a.save)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args, **kw: ("", ""))
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *args, **kw: ([], ""))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *args, **kw: "")
    monkeypatch.setattr(QMessageBox, "question", a.question)
    for name in ("warning", "information", "critical"):
        monkeypatch.setattr(QMessageBox, name, lambda *args, **kw: QMessageBox.StandardButton.Ok)
    monkeypatch.setattr(QMessageBox, "about", lambda *args, **kw: None)
    monkeypatch.setattr(QMessageBox, "aboutQt", lambda *args, **kw: None)
    monkeypatch.setattr(QDialog, "exec", lambda self: QDialog.DialogCode.Rejected)
    from PySide6.QtGui import QDesktopServices

    monkeypatch.setattr(QDesktopServices, "openUrl", lambda *args, **kw: True)
    return a


@pytest.fixture
def window(qtbot, catalogue, answers, tmp_path):
    # something in every view to act on: an entry of the user's, imported measurements, a report
    from gpudesk.core.benchmarks.store import import_files

    catalogue.add_item("accelerators", {"id": "my-card", "name": "My card", "vendor": "Acme", "memory_gb": 16.0})
    import_files(catalogue, [TEST_DATA / "bench" / "llama-bench" / "llamacpp-README_RTX4080_CUDA_build5163_array.json"])
    win = open_main_window(qtbot)
    compare = win.show_page("compare")
    compare.load_path(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json", as_preset=True)
    assert compare.export_pdf(str(tmp_path / "first.pdf"))  # the Reports view then lists one report
    return win


def controls(page, window):
    buttons = [b for b in page.findChildren(QAbstractButton)
               if b.isVisibleTo(window) and b.isEnabled() and not isinstance(b, (QCheckBox, QRadioButton))
               and b.text().strip()]
    # pyqtgraph's own context-menu actions only work from a context-menu event: not ours to test
    actions = [a for a in page.findChildren(QAction) if a.isEnabled() and a.text().strip()
               and not type(a.parent()).__module__.startswith("pyqtgraph")]
    return buttons, actions


def select_something(page) -> None:
    """Select the first row of the view's main table (so that Edit, Delete and the like are enabled)."""
    from PySide6.QtWidgets import QAbstractItemView

    for table in page.findChildren(QAbstractItemView):
        model = table.model()
        if table.isVisible() and model is not None and model.rowCount() > 0 and table.selectionModel():
            table.selectRow(0) if hasattr(table, "selectRow") else table.setCurrentIndex(model.index(0, 0))
            return


@pytest.mark.parametrize("key", [k for k, _label, _icon in PAGES])
def test_every_button_and_action_of_a_view_works_as_clicked(window, answers, qtbot, key):
    page = window.show_page(key)
    qtbot.wait(50)
    if key == "catalogue":
        assert page.select_id("my-card")
    else:
        select_something(page)
    buttons, actions = controls(page, window)
    assert buttons or actions, key
    clicked = []
    for control in buttons + actions:
        text = control.text().replace("&", "").strip().lower()
        if any(word in text for word in LEAVE) or not control.isEnabled():
            continue
        asked = len(answers.questions)
        stack = getattr(page, "undo_stack", None)
        undoable = stack.count() if stack is not None else None
        with qtbot.captureExceptions() as errors:
            control.click() if isinstance(control, QAbstractButton) else control.trigger()
            qtbot.wait(10)
        assert not errors, (key, text, [str(e[1]) for e in errors])
        if any(word in text for word in DESTRUCTIVE):
            # a delete asks first, unless it is an edit the user can undo (the canvas)
            undone = stack is not None and stack.count() >= undoable
            assert len(answers.questions) > asked or undone, f"{key}: '{text}' deleted without asking"
        clicked.append(text)
        if window.current_view() is not page:  # a control that opens another view: come back
            window.show_page(key)
            select_something(page) if key != "catalogue" else page.select_id("my-card")
    assert clicked, key


def test_compare_export_buttons_write_files(window, answers, qtbot):
    """The failure that started this test: Export PDF… called export_pdf(False) and wrote nothing."""
    page = window.show_page("compare")
    page.pdf_button.click()
    page.csv_button.click()
    written = [p for p in answers.saved if p.endswith((".pdf", ".csv"))]
    assert len(written) == 2
    from pathlib import Path

    assert Path(written[0]).read_bytes().startswith(b"%PDF")
    assert "Time to train" in Path(written[1]).read_text()


def test_the_user_entry_survives_a_refused_delete(window, answers):
    page = window.show_page("catalogue")
    assert page.select_id("my-card")
    page.delete_button.click()
    assert answers.questions and "my-card" in answers.questions[-1]
    assert window.catalogue.get("accelerators", "my-card") is not None
    assert json.dumps(window.catalogue.get("accelerators", "my-card"), default=str)
