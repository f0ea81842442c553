"""Fixtures shared by the GUI tests."""

from __future__ import annotations


def open_main_window(qtbot):
    """The main window, shown, with its full catalogue loaded (as a user sees it after start-up)."""
    from gpudesk.ui.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.catalogueReady, timeout=20000):
        win.show()
        win.start()
    assert win.wait_loaded()
    return win
