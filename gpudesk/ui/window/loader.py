"""Opens the catalogue off the UI thread: first the stored snapshot, then the full catalogue."""

from __future__ import annotations

import logging
import sqlite3
import threading

from PySide6.QtCore import QThread, Signal

from gpudesk.core import paths

log = logging.getLogger("gpudesk.ui.main_window")  # the logger its records always named


class CatalogueLoader(QThread):
    """Opens (creating or upgrading) the catalogue database off the UI thread."""

    previewed = Signal(object)  # the stored catalogue, read-only, before the full open
    loaded = Signal(object)
    failed = Signal(str)
    damaged = Signal(object)  # a DamagedDatabaseError: the database file needs repair

    def __init__(self, database_url: str | None, parent=None):
        super().__init__(parent)
        self.database_url = database_url
        self.preview_shown = threading.Event()

    def run(self) -> None:
        # First the catalogue as stored (stdlib sqlite3, a few ms), so the window is populated at
        # once; then the full catalogue (SQLAlchemy, migrations, bundle sync), which replaces it.
        if not self.database_url:
            try:
                from gpudesk.core.catalogue.reading import read_snapshot
                from gpudesk.core.settings import load_settings

                if not load_settings().database_url:
                    snapshot = read_snapshot(paths.database_path())
                    if snapshot is not None:
                        self.previewed.emit(snapshot)
                        # let the UI thread show it before this thread's imports take the GIL
                        self.preview_shown.wait(2.0)
            except Exception:  # the full open below reports real problems
                log.exception("start-up snapshot failed")
        from gpudesk.core.catalogue.backup import DamagedDatabaseError  # standard library only

        try:
            from gpudesk.core.catalogue import open_catalogue
            from gpudesk.core.catalogue.fields import KINDS

            catalogue = open_catalogue(self.database_url)
            for kind in KINDS:
                catalogue.items(kind)  # warm the cache here, not on the UI thread
            self._daily_backup(catalogue)
            self.loaded.emit(catalogue)
        except DamagedDatabaseError as exc:
            log.error("%s", exc)
            self.damaged.emit(exc)
        except Exception as exc:  # shown to the user; details in the log
            log.exception("cannot open the catalogue")
            self.failed.emit(f"{type(exc).__name__}: {exc}")

    @staticmethod
    def _daily_backup(catalogue) -> None:
        """A backup a day while the app is used (core.catalogue.backup keeps the newest few)."""
        from gpudesk.core.catalogue import backup, db

        database = db.sqlite_file(catalogue.engine)
        if database is None:
            return
        try:
            backup.backup_if_due(database)
        except (OSError, backup.BackupError, sqlite3.Error) as exc:  # the app works on; the log says why
            log.warning("the daily backup of %s failed: %s", database, exc)
