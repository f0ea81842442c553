"""The window on a damaged database: the recovery dialog says what happened, offers the ways back,
and each does what it says (nothing is deleted; quitting changes nothing)."""

from __future__ import annotations

import shutil

from PySide6.QtCore import Qt

from gpudesk.core.catalogue import Catalogue, backup
from gpudesk.ui.main_window import MainWindow

from ..conftest import DATA


def damaged_home(catalogue_template, home, with_backup: bool):
    db = home / "gpudesk.sqlite3"
    shutil.copy(catalogue_template, db)
    cat = Catalogue.open(None, DATA)
    cat.add_item("accelerators", {"id": "my-npu", "name": "My NPU", "vendor": "Lab", "memory_gb": "32"})
    if with_backup:
        cat.backup("manual")
    cat.add_price_quote("h100-sxm5-80gb", "27500", when="2026-10-01", supplier="Acme GPUs")
    cat.close()
    data = bytearray(db.read_bytes())
    data[0:16] = b"not a database!!"
    db.write_bytes(bytes(data))
    return db


def shown_dialog(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.catalogueFailed, timeout=20000):
        win.show()
        win.start()
    qtbot.waitUntil(lambda: win.recovery_dialog is not None and win.recovery_dialog.isVisible())
    return win, win.recovery_dialog


def test_rebuild_keeps_the_users_rows(qtbot, catalogue_template, gpudesk_home):
    db = damaged_home(catalogue_template, gpudesk_home, with_backup=False)
    damaged = db.read_bytes()
    win, dialog = shown_dialog(qtbot)
    assert str(db) in dialog.message.text() and "damaged" in dialog.message.text()
    assert not dialog.restore_button.isEnabled()  # no backup yet
    with qtbot.waitSignal(win.catalogueReady, timeout=30000):
        qtbot.mouseClick(dialog.rebuild_button, Qt.MouseButton.LeftButton)
    assert win.wait_loaded()
    # the header was damaged: SQLite cannot read the file, so its pages were read one by one, and
    # the user's rows came back (the report says how)
    assert "its pages were read one by one" in win.repair_message
    assert win.catalogue.get("accelerators", "my-npu")["name"] == "My NPU"
    assert [q["usd"] for q in win.catalogue.items("prices") if q.get("kind") == "quote"] == [27500]
    (aside,) = gpudesk_home.glob("gpudesk.sqlite3.damaged-*")
    assert aside.read_bytes() == damaged
    assert win.catalogue.get("accelerators", "h100-sxm5-80gb") is not None


def test_restore_the_newest_backup(qtbot, catalogue_template, gpudesk_home):
    damaged_home(catalogue_template, gpudesk_home, with_backup=True)
    win, dialog = shown_dialog(qtbot)
    assert dialog.restore_button.isEnabled() and dialog.newest_backup.reason == "manual"
    with qtbot.waitSignal(win.catalogueReady, timeout=30000):
        qtbot.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)
    assert win.wait_loaded()
    assert win.catalogue.get("accelerators", "my-npu")["name"] == "My NPU"
    assert "Restored" in win.repair_message
    assert list(gpudesk_home.glob("gpudesk.sqlite3.before-restore-*"))


def test_quit_changes_nothing(qtbot, catalogue_template, gpudesk_home):
    db = damaged_home(catalogue_template, gpudesk_home, with_backup=True)
    damaged = db.read_bytes()
    win, dialog = shown_dialog(qtbot)
    qtbot.mouseClick(dialog.quit_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not win.isVisible())
    assert db.read_bytes() == damaged
    assert list(gpudesk_home.glob("gpudesk.sqlite3.*")) == []
    assert len(backup.list_backups()) == 1
