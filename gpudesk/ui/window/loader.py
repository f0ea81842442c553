"""Opens the catalogue off the UI thread: first the stored snapshot, then the full catalogue."""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QThread, QTimer, Signal

from gpudesk.core import paths

log = logging.getLogger("gpudesk.ui.main_window")  # the logger its records always named


class CatalogueLoader(QThread):
    """Opens (creating or upgrading) the catalogue database off the UI thread."""

    previewed = Signal(object)  # the stored catalogue, read-only, before the full open
    loaded = Signal(object)
    failed = Signal(str)
    damaged = Signal(object)  # a DamagedDatabaseError: the database file needs repair
    unreachable = Signal(object)  # a team.ServerUnreachable: the team catalogue's server cannot be reached

    def __init__(self, database_url: str | None, parent=None, read_only_copy_of: str | None = None):
        super().__init__(parent)
        self.database_url = database_url
        self.read_only_copy_of = read_only_copy_of  # opening the local copy of this team catalogue
        self.preview_shown = threading.Event()

    def run(self) -> None:
        # First the catalogue as stored (stdlib sqlite3, a few ms; the kinds the window shows first
        # are read when it asks for them), so the window is populated at once; then the full
        # catalogue (SQLAlchemy, migrations, bundle sync), which replaces it.
        if not self.database_url:
            snapshot = _read_snapshot()
            if snapshot is not None:
                self.previewed.emit(snapshot)
                # let the UI thread show it before this thread's reads and imports take the GIL
                self.preview_shown.wait(2.0)
                snapshot.read_all()  # the other kinds, before the full open may rewrite the file
        from gpudesk.core.catalogue.backup import DamagedDatabaseError  # standard library only
        from gpudesk.core.catalogue.team import ServerUnreachable  # light: no driver, no SQLAlchemy

        try:
            from gpudesk.core.catalogue import open_catalogue
            from gpudesk.core.catalogue.fields import KINDS

            catalogue = open_catalogue(self.database_url)
            if self.read_only_copy_of:
                catalogue.read_only = True
                catalogue.offline_from = self.read_only_copy_of
            for kind in KINDS:
                catalogue.items(kind)  # warm the cache here, not on the UI thread
            self._daily_backup(catalogue)
            self.loaded.emit(catalogue)
            self._team_copy(catalogue)
        except DamagedDatabaseError as exc:
            log.error("%s", exc)
            self.damaged.emit(exc)
        except ServerUnreachable as exc:
            log.warning("%s", exc)
            self.unreachable.emit(exc)
        except Exception as exc:  # shown to the user; details in the log
            log.exception("cannot open the catalogue")
            self.failed.emit(f"{type(exc).__name__}: {exc}")

    def go_on_after_paint(self) -> None:
        """Let the loader go on (the rest of the snapshot, then the full catalogue) once the table
        showing the snapshot has been painted: until then the window has the interpreter to itself."""
        QTimer.singleShot(0, self.preview_shown.set)

    def _team_copy(self, catalogue) -> None:
        """After a team catalogue opened: refresh its local copy, which opens read-only when the
        server is away (a failure is logged; the app works on)."""
        url = self.database_url or _settings_url()
        if self.read_only_copy_of or not url or url.startswith("sqlite"):
            return
        from gpudesk.core.catalogue import team

        try:
            team.save_local_copy(catalogue.engine, url)
        except Exception:  # noqa: BLE001 - the copy is a convenience; the log says why it failed
            log.exception("the local copy of the team catalogue could not be written")

    @staticmethod
    def _daily_backup(catalogue) -> None:
        """A backup a day while the app is used (core.catalogue.backup keeps the newest few)."""
        import sqlite3  # here, not at the top: the window's first frame does not need it

        from gpudesk.core.catalogue import backup, db

        database = db.sqlite_file(catalogue.engine)
        if database is None or getattr(catalogue, "read_only", False):
            return
        try:
            backup.backup_if_due(database)
        except (OSError, backup.BackupError, sqlite3.Error) as exc:  # the app works on; the log says why
            log.warning("the daily backup of %s failed: %s", database, exc)


def _read_snapshot():
    """The stored catalogue (None when there is none yet, or a team catalogue is set)."""
    try:
        from gpudesk.core.catalogue.reading import read_snapshot
        from gpudesk.core.settings import load_settings

        if not load_settings().database_url:
            return read_snapshot(paths.database_path())
    except Exception:  # the full open reports real problems
        log.exception("start-up snapshot failed")
    return None


def _settings_url() -> str:
    from gpudesk.core.settings import load_settings

    return load_settings().database_url
