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
    seen, waiting, read = [], [], []
    win.catalogue_view.populated.connect(lambda: seen.append((type(win.catalogue_view.catalogue),
                                                              win.catalogue_view.add_button.isEnabled())))
    win.catalogue_view.populated.connect(lambda: read.append(getattr(win.catalogue_view.catalogue, "kinds_read", None)))
    # the loader reads on (the rest of the snapshot, SQLAlchemy) only once the snapshot's table is up
    win.catalogue_view.populated.connect(lambda: waiting.append(not win._loader.preview_shown.is_set()))
    with qtbot.waitSignal(win.catalogueReady, timeout=20000):
        win.show()
        win.start()
    assert seen[0] == (Snapshot, False) and waiting[0]
    # the first screen reads four of the eleven kinds (not the 1,035 cloud prices): the table, its
    # price column, and the first row's detail with its sources and cloud offers
    assert read[0] == {"accelerators", "prices", "sources", "cloud"}
    assert win.catalogue_view.model.rowCount() >= 45
    assert win.wait_loaded()
    assert seen[-1][0] is not Snapshot and seen[-1][1] is True
    assert win.catalogue.version in win.catalogue_status.text()


def test_the_first_frame_comes_before_the_catalogue_view_is_built(qtbot, catalogue):
    """The window paints its frame (sidebar, menus, an empty page) first; the catalogue's view, with
    its table models and field lists, is built right after, once start() runs, and is then filled."""
    import subprocess
    import sys

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    assert win._catalogue_view is None and win.current_view() is None
    assert not win.act_save.isEnabled()
    win.grab()  # the first frame, with the catalogue's page still empty
    assert win._catalogue_view is None
    with qtbot.waitSignal(win.catalogueReady, timeout=20000):
        win.start()
    assert win.current_view() is win.catalogue_view and win.catalogue_view.model.rowCount() >= 45
    assert win.stack.currentWidget().layout().itemAt(0).widget() is win.catalogue_view
    # importing the window does not import the catalogue view's modules
    code = "import sys, gpudesk.ui.main_window; print('gpudesk.ui.catalogue.view' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


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


def test_snapshot_reads_a_kind_when_first_asked_and_the_rest_on_request(catalogue, tmp_path, caplog):
    """The window's first table needs one kind: the snapshot counts every kind at once, reads the
    accelerators, and reads any other kind when first asked for; read_all() reads them all, so that
    nothing depends on the file afterwards. A kind it cannot read is empty and logged, never raised
    (the full catalogue, opening meanwhile, reports real problems)."""
    import shutil
    import sqlite3

    from gpudesk.core import paths
    from gpudesk.core.catalogue.fields import KINDS
    from gpudesk.core.catalogue.reading import read_snapshot

    for kind in KINDS:
        assert read_snapshot(paths.database_path()).count(kind) == len(catalogue.items(kind)), kind

    copy = tmp_path / "copy.sqlite3"
    shutil.copy(paths.database_path(), copy)
    lazy = read_snapshot(copy)
    assert lazy.items("sources") == catalogue.items("sources")  # read now, from the file
    copy.unlink()
    assert lazy.items("accelerators") == catalogue.items("accelerators")  # read with the snapshot
    assert lazy.items("sources") == catalogue.items("sources")  # kept
    assert lazy.count("systems") == len(catalogue.items("systems"))  # counted with the snapshot
    with caplog.at_level("WARNING", logger="gpudesk.core.catalogue.reading"):
        assert lazy.items("systems") == []
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert said == [f"the start-up snapshot could not read systems from {copy}: unable to open database file"]
    with pytest.raises(KeyError, match="unknown catalogue kind 'gpus'"):
        lazy.count("gpus")
    presets = lazy.presets()
    presets[0]["name"] = "changed"
    presets[0].setdefault("cluster", []).append("changed")
    assert lazy.presets() == catalogue.presets()  # a copy each time, not the snapshot's own

    # a kind read after the file changed is counted as read, so the counts match the tables shown
    shutil.copy(paths.database_path(), copy)
    changed = read_snapshot(copy)
    with sqlite3.connect(copy) as conn:
        conn.execute("DELETE FROM systems WHERE id = (SELECT MIN(id) FROM systems)")
    assert changed.count("systems") == len(catalogue.items("systems"))  # as counted when opened
    shown = changed.items("systems")  # read now, from the changed file
    assert changed.count("systems") == len(shown) == len(catalogue.items("systems")) - 1
    conn.close()

    shutil.copy(paths.database_path(), copy)
    whole = read_snapshot(copy)
    whole.read_all()
    copy.unlink()
    for kind in KINDS:
        assert whole.items(kind) == catalogue.items(kind), kind


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
    from gpudesk.ui.state import settings_store

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


def test_help_menu_has_guide_shortcuts_folders_and_about(window, monkeypatch):
    from PySide6.QtGui import QDesktopServices, QKeySequence
    from PySide6.QtWidgets import QDialog

    from gpudesk.core import paths
    from gpudesk.ui.widgets.help import HelpDialog, guide_html, shortcut_rows

    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    texts = [a.text().replace("&", "") for a in help_menu.actions() if a.text()]
    assert texts[:4] == ["Guide", "Keyboard Shortcuts", "Open Data Folder", "Open Log"]
    assert window.act_guide.shortcut() == QKeySequence(QKeySequence.StandardKey.HelpContents)  # F1
    # the guide walks through the seeds' three questions, naming the presets to open
    guide = guide_html()
    for preset in ("Jetson Nanos", "RTX 4090 Laptop", "DGX Spark", "Time to train", "Cost per run"):
        assert preset in guide
    shown = []
    monkeypatch.setattr(QDialog, "exec", lambda self: shown.append(self) or 0)
    window.act_guide.trigger()
    window.act_shortcuts.trigger()
    assert [type(d) for d in shown] == [HelpDialog, HelpDialog]
    assert "DGX Spark" in shown[0].browser.toPlainText()
    assert ("Find", QKeySequence(QKeySequence.StandardKey.Find).toString(QKeySequence.SequenceFormat.NativeText)) \
        in shortcut_rows([a for m in window.menuBar().actions() for a in m.menu().actions()])
    assert "Guide" in shown[1].browser.toPlainText()
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    window.act_data_folder.trigger()
    window.act_log.trigger()
    assert opened[0] == str(paths.data_dir())
    assert opened[1] in (str(paths.log_dir()), str(paths.log_dir() / "gpudesk.log"))


def test_about_gives_the_catalogue_release_date(window, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    shown = {}
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.update(text=text))
    window.show_about()
    assert window.catalogue.released and f"released {window.catalogue.released}" in shown["text"]


def test_catalogue_columns_and_compare_splitter_are_remembered(qtbot, window, catalogue):
    from gpudesk.ui.state import settings_store

    window.catalogue_view.set_column_visible("architecture", True)
    compare = window.show_page("compare")
    compare.splitter.setSizes([420, 900])
    left = compare.splitter.sizes()[0]
    window.save_state()
    assert not settings_store().value("compare/splitter").isEmpty()
    again = MainWindow()
    qtbot.addWidget(again)
    again.resize(window.size())
    with qtbot.waitSignal(again.catalogueReady, timeout=20000):
        again.show()
        again.start()
    assert "architecture" in again.catalogue_view.visible_columns()
    restored = again.show_page("compare").splitter
    qtbot.wait(20)
    assert abs(restored.sizes()[0] - left) <= 40, (restored.sizes(), left)


def test_dropped_files_open_as_scenarios_or_as_results(tmp_path):
    from gpudesk.ui.window import drop

    scenario = tmp_path / "q.json"
    scenario.write_text('{"gpudesk_scenario": 1, "name": "q"}')
    drawn = tmp_path / "c.json"
    drawn.write_text('{"gpudesk_scenario": 1, "name": "c", "canvas": {"nodes": []}}')
    result = tmp_path / "r.json"
    result.write_text('{"results": []}')
    assert drop.is_scenario(str(scenario)) and not drop.is_scenario(str(result))
    assert not drop.is_scenario(str(tmp_path / "missing.json"))

    class Page:
        def __init__(self):
            self.opened, self.imported = [], []

        def open_path(self, path):
            self.opened.append(path)

        def import_files(self, paths):
            self.imported.extend(paths)

    class Window:
        def __init__(self):
            self.pages = {"compare": Page(), "cluster": Page(), "benchmarks": Page()}

        def show_page(self, key):
            return self.pages[key]

    w = Window()
    drop.open_dropped(w, [str(scenario), str(drawn), str(result)])
    assert w.pages["compare"].opened == [str(scenario)]
    assert w.pages["cluster"].opened == [str(drawn)]
    assert w.pages["benchmarks"].imported == [str(result)]


def test_every_page_fits_a_1280_pixel_screen_and_compares_toolbar_stays_side_by_side(window, qtbot):
    """No page asks for more width than a 1280-pixel laptop screen gives a framed window (Compare's
    question picker alone asked for 320 pixels and took the window to 1,297), and at the narrowest the
    window may be, Compare's picker and buttons sit side by side rather than over one another."""
    from gpudesk.ui.window.state import FRAME_ALLOWANCE

    for key, *_ in PAGES:
        window.show_page(key)
        qtbot.wait(10)
    widest = window.minimumSizeHint().width()
    assert widest + FRAME_ALLOWANCE[0] <= 1280, widest
    window.show_page("compare")
    window.resize(widest, 720)
    bar = window.show_page("compare").toolbar
    row = (bar.preset, bar.open_button, bar.save_button, bar.pdf_button, bar.csv_button, bar.copy_button)

    def side_by_side():
        return all(a.geometry().right() < b.geometry().left() for a, b in zip(row, row[1:]))

    qtbot.waitUntil(side_by_side, timeout=2000)
    assert bar.preset.width() >= 120
    # the toolbar never sets the window's width: the picker gives way (it asked 862 pixels in all)
    assert bar.minimumSizeHint().width() <= 700, bar.minimumSizeHint().width()


def test_a_catalogue_that_cannot_open_says_why_and_where_the_log_is(qtbot, monkeypatch, catalogue):
    from PySide6.QtWidgets import QMessageBox

    from gpudesk.core import paths

    said = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: said.append((parent, title, text)))
    win = MainWindow()
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.catalogueFailed) as failed:
        win._catalogue_failed("OperationalError: unable to open database file")
    assert failed.args == ["OperationalError: unable to open database file"]
    assert win.catalogue_status.text() == "Catalogue unavailable"
    (parent, title, text), = said
    assert parent is win and title == "Cannot open the catalogue"
    assert "OperationalError: unable to open database file" in text and str(paths.log_dir() / "gpudesk.log") in text
