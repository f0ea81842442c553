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


def new_cluster_view(qtbot, catalogue):
    """A cluster canvas view at a desktop size on the given catalogue, never asking to recover an
    autosave."""
    from gpudesk.ui.canvas.view import ClusterView

    widget = ClusterView()
    widget.ask_recover = lambda when: False
    qtbot.addWidget(widget)
    widget.resize(1400, 900)
    widget.set_catalogue(catalogue)
    return widget
