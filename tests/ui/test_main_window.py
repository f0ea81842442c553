"""Smoke tests of the whole window: it shows the populated catalogue, navigates, remembers."""

from __future__ import annotations

import pytest

from gpudesk.ui.main_window import PAGES, MainWindow

from .conftest import open_main_window


@pytest.fixture
def window(qtbot, catalogue):
    return open_main_window(qtbot)


def test_start_up_shows_the_stored_catalogue_first_then_the_full_one(qtbot, catalogue):
    """With a database on disk, the window is populated from a read-only snapshot (no
    SQLAlchemy on the way), and editing becomes possible when the full catalogue arrives."""
    from gpudesk.core.catalogue.reading import Snapshot

    win = MainWindow()
    qtbot.addWidget(win)
    seen = []
    win.catalogue_view.populated.connect(lambda: seen.append((type(win.catalogue_view.catalogue),
                                                              win.catalogue_view.add_button.isEnabled())))
    with qtbot.waitSignal(win.catalogueReady, timeout=20000):
        win.show()
        win.start()
    assert seen[0] == (Snapshot, False)
    assert win.catalogue_view.model.rowCount() >= 45
    assert win.wait_loaded()
    assert seen[-1][0] is not Snapshot and seen[-1][1] is True
    assert win.catalogue.version in win.catalogue_status.text()


def test_snapshot_reads_the_same_records_as_the_catalogue(catalogue):
    from gpudesk.core import paths
    from gpudesk.core.catalogue.reading import read_snapshot

    snapshot = read_snapshot(paths.database_path())
    assert snapshot is not None and snapshot.read_only and not catalogue.read_only
    for kind in ("accelerators", "systems", "cloud", "prices", "regions", "interconnects", "sources"):
        assert snapshot.items(kind) == catalogue.items(kind), kind
    assert snapshot.version == catalogue.version
    assert snapshot.presets() == catalogue.presets()
    record = catalogue.get("accelerators", "h100-sxm5-80gb")
    assert snapshot.to_json("accelerators", record) == catalogue.to_json("accelerators", record)


def test_no_snapshot_without_a_database(tmp_path):
    from gpudesk.core.catalogue.reading import read_snapshot

    assert read_snapshot(tmp_path / "missing.sqlite3") is None
    (tmp_path / "junk.sqlite3").write_bytes(b"not a database")
    assert read_snapshot(tmp_path / "junk.sqlite3") is None


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


def test_quitting_after_a_copy_does_not_crash(tmp_path):
    """A QMimeData made in Python and left on the clipboard used to be deleted by Qt after the
    interpreter stopped, crashing the app on exit (status 139)."""
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from PySide6.QtCore import QMimeData, QTimer\n"
        "from gpudesk.ui.app import make_application\n"
        "from gpudesk.ui.widgets.clipboard import set_clipboard\n"
        "app = make_application()\n"
        "mime = QMimeData()\n"
        "mime.setText('a\\tb')\n"
        "mime.setData('application/x-gpudesk-canvas', b'{}')\n"
        "set_clipboard(mime)\n"
        "QTimer.singleShot(0, app.quit)\n"
        "app.exec()\n"
        "print(app.clipboard().text() == 'a\\tb')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "True"
