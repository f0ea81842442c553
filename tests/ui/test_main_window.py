"""Smoke tests of the whole window: it shows the populated catalogue, navigates, remembers."""

from __future__ import annotations

import pytest

from gpudesk.ui.main_window import PAGES, MainWindow


@pytest.fixture
def window(qtbot, catalogue):
    win = MainWindow()
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.catalogueReady, timeout=20000):
        win.show()
        win.start()
    return win


def test_window_shows_the_populated_catalogue(window):
    assert window.catalogue is not None
    assert window.catalogue_view.model.rowCount() >= 45
    assert window.catalogue.version in window.catalogue_status.text()


def test_every_view_opens(window):
    for key, _label, _icon in PAGES:
        page = window.show_page(key)
        assert page.isVisibleTo(window), key
        assert window.current_page_key() == key


def test_about_names_app_and_catalogue_versions(window, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from gpudesk import __version__

    shown = {}
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.update(text=text))
    window.show_about()
    assert __version__ in shown["text"] and window.catalogue.version in shown["text"]


def test_window_state_is_remembered(qtbot, window, catalogue):
    # (the offscreen screen clamps restored geometry, so check what it can: page and splitter)
    from gpudesk.ui.app import settings_store

    window.catalogue_view.splitter.setSizes([500, 300])
    sizes = window.catalogue_view.splitter.sizes()
    window.show_page("compare")
    window.save_state()
    assert not settings_store().value("window/geometry").isEmpty()
    again = MainWindow()
    qtbot.addWidget(again)
    qtbot.waitUntil(lambda: again.current_page_key() == "compare", timeout=3000)
    assert not settings_store().value("catalogue/splitter").isEmpty()
    assert sizes
