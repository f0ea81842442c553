"""Backups of the SQLite database, the check for a damaged file, and the two ways back from one.

- make_backup: a consistent copy made with SQLite's online backup API (other connections may be
  open), kept in backups/ beside the database; the newest KEEP are kept, the oldest pruned.
  Catalogue.open makes one before a migration and before a catalogue upgrade; the app makes one a
  day (backup_if_due).
- check_database: PRAGMA quick_check; a damaged file raises DamagedDatabaseError.
- restore_backup: the chosen backup replaces the database; the current file is kept aside,
  renamed, never deleted.
- rebuild (gpudesk.core.catalogue.repair) moves a damaged file aside and salvages its user rows.

Only the standard library here: the CLI and the window import this module to report a damaged
database without paying for SQLAlchemy.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from gpudesk.core import paths

log = logging.getLogger(__name__)

BACKUP_FOLDER = "backups"
KEEP = 5
LOCK_TIMEOUT_S = 30.0  # how long a connection (here and in db.make_engine) waits for another program's lock
LOCK_TIMEOUT_ENV = "GPUDESK_LOCK_TIMEOUT_S"
DAILY = timedelta(days=1)
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's companions of a database file
_NAME = re.compile(r"^(?P<stem>.+)-(?P<stamp>\d{8}-\d{6}(?:-\d+)?)-(?P<reason>[a-z-]+)\.sqlite3$")
_STAMP = "%Y%m%d-%H%M%S"

# the catalogue tables that hold user rows beside the bundled ones (reading.TABLE_NAMES' values)
CATALOGUE_TABLES = ("sources", "accelerators", "systems", "cloud_offerings", "price_observations", "grid_regions",
                    "interconnects", "cloud_price_history", "embodied_carbon", "models")


class DamagedDatabaseError(Exception):
    """The database file cannot be read as a database: `path` and SQLite's `detail`."""

    def __init__(self, path: Path, detail: str):
        self.path = Path(path)
        self.detail = detail
        super().__init__(f"the database {self.path} is damaged ({detail})")


class BackupError(Exception):
    """A backup could not be made, found or restored; the message names the file and the problem."""


@dataclass(frozen=True)
class BackupInfo:
    """One backup file and what it holds (counts are None where the file could not be read)."""

    name: str
    path: Path
    created: datetime
    reason: str
    size_bytes: int
    user_rows: int | None
    quotes: int | None
    measurements: int | None

    @property
    def readable(self) -> bool:
        return self.user_rows is not None

    def describe(self) -> str:
        when = self.created.strftime("%Y-%m-%d %H:%M:%S")
        if not self.readable:
            return f"{when}  {self.reason}: cannot be read"
        return (f"{when}  {self.reason}: {self.user_rows} of your own entries, {self.quotes} quotes, "
                f"{self.measurements} measurements")

    def to_json(self) -> dict:
        return {"name": self.name, "path": str(self.path), "created": self.created.isoformat(timespec="seconds"),
                "reason": self.reason, "size_bytes": self.size_bytes, "user_rows": self.user_rows,
                "quotes": self.quotes, "measurements": self.measurements}


@dataclass(frozen=True)
class RestoreResult:
    backup: BackupInfo
    database: Path
    aside: Path | None  # where the replaced database was kept; None when there was none

    def format_text(self) -> str:
        kept = f"; the previous file is kept as {self.aside}" if self.aside else ""
        return f"Restored {self.database} from the backup {self.backup.name} ({self.backup.describe()}){kept}."


def lock_timeout_s() -> float:
    """LOCK_TIMEOUT_S, or the seconds in GPUDESK_LOCK_TIMEOUT_S (a script that must not wait long)."""
    value = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    try:
        return max(0.0, float(value)) if value else LOCK_TIMEOUT_S
    except ValueError:
        log.warning("%s=%r is not a number of seconds; waiting %s s for a lock", LOCK_TIMEOUT_ENV, value, LOCK_TIMEOUT_S)
        return LOCK_TIMEOUT_S


# ============================================================================ making backups
def backups_dir(database: Path | None = None) -> Path:
    """backups/ beside the database (for the default database: in the data folder)."""
    database = Path(database) if database else paths.database_path()
    return database.parent / BACKUP_FOLDER


def make_backup(database: Path | None = None, reason: str = "manual", keep: int = KEEP,
                now: datetime | None = None) -> Path | None:
    """Copy the database into backups/ with the online backup API; prune to the newest `keep`.
    Returns the backup's path, or None when there is no database file yet."""
    database = Path(database) if database else paths.database_path()
    if not database.is_file() or database.stat().st_size == 0:
        return None
    folder = backups_dir(database)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = (now or datetime.now()).strftime(_STAMP)
    target = folder / f"{database.stem}-{stamp}-{reason}.sqlite3"
    n = 2
    while target.exists():
        target = folder / f"{database.stem}-{stamp}-{n}-{reason}.sqlite3"
        n += 1
    partial = target.with_name(f".{target.name}.tmp")
    try:
        _copy(sqlite3.connect(database, timeout=lock_timeout_s()), partial, self_contained=True)
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    log.info("backed up %s to %s", database, target)
    prune(database, keep)
    return target


STALE_PARTIAL = timedelta(hours=1)  # a partial copy this old was left by a program that was killed


def prune(database: Path, keep: int = KEEP) -> list[Path]:
    """Delete all but the newest `keep` backups of `database`, and partial copies a killed program
    left behind; returns the deleted files."""
    removed = []
    for info in list_backups(database, with_counts=False)[keep:]:
        with contextlib.suppress(OSError):
            info.path.unlink()
            removed.append(info.path)
    cutoff = (datetime.now() - STALE_PARTIAL).timestamp()
    for partial in backups_dir(database).glob(f".{database.stem}-*.sqlite3.tmp"):
        with contextlib.suppress(OSError):
            if partial.stat().st_mtime < cutoff:
                partial.unlink()
                removed.append(partial)
    return removed


def backup_if_due(database: Path | None = None, now: datetime | None = None) -> Path | None:
    """The daily backup: made when the newest backup is a day old or there is none."""
    database = Path(database) if database else paths.database_path()
    now = now or datetime.now()
    newest = list_backups(database, with_counts=False)
    if newest and now - newest[0].created < DAILY:
        return None
    return make_backup(database, "daily", now=now)


# ============================================================================ reading backups
def list_backups(database: Path | None = None, with_counts: bool = True) -> list[BackupInfo]:
    """The backups of `database`, newest first, each with its date and what it holds."""
    database = Path(database) if database else paths.database_path()
    folder = backups_dir(database)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.iterdir():
        match = _NAME.match(path.name)
        if not match or match["stem"] != database.stem or not path.is_file():
            continue
        stamp = match["stamp"]
        try:
            created = datetime.strptime(stamp[:15], _STAMP)
        except ValueError:
            continue
        counts = _counts(path) if with_counts else {}
        found.append(BackupInfo(path.name, path, created, match["reason"], path.stat().st_size,
                                counts.get("user_rows"), counts.get("quotes"), counts.get("measurements")))
    found.sort(key=lambda b: (b.created, b.name), reverse=True)
    return found


def find_backup(name: str, database: Path | None = None) -> BackupInfo:
    for info in list_backups(database):
        if info.name == name or info.path == Path(name):
            return info
    raise BackupError(f"{backups_dir(database) / name}: there is no such backup "
                      f"(list them with `gpudesk backups`)")


def newest_good_backup(database: Path | None = None) -> BackupInfo | None:
    """The newest backup that passes SQLite's check, or None."""
    for info in list_backups(database):
        if info.readable and check_file(info.path) is None:
            return info
    return None


def _counts(path: Path) -> dict[str, int]:
    """User rows, quotes and measurements in a database file; {} when it cannot be read."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return {}
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        user_rows = sum(conn.execute(f"SELECT count(*) FROM {t} WHERE origin != 'bundled'").fetchone()[0]  # noqa: S608 - fixed names
                        for t in CATALOGUE_TABLES if t in tables)
        quotes = (conn.execute("SELECT count(*) FROM price_observations WHERE kind = 'quote'").fetchone()[0]
                  if "price_observations" in tables else 0)
        measurements = (conn.execute("SELECT count(*) FROM bench_measurements").fetchone()[0]
                        if "bench_measurements" in tables else 0)
        return {"user_rows": user_rows, "quotes": quotes, "measurements": measurements}
    except sqlite3.Error as exc:
        log.info("cannot count the rows of %s: %s", path, exc)
        return {}
    finally:
        conn.close()


# ============================================================================ checking
def check_file(path: Path) -> str | None:
    """SQLite's PRAGMA quick_check of the file at `path`: None when it is sound, else the problem."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return None  # nothing yet: opening creates it
    try:
        conn = sqlite3.connect(path, timeout=lock_timeout_s())
    except sqlite3.Error as exc:
        return str(exc)
    try:
        rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.OperationalError as exc:
        if not_damage(exc):
            raise  # the disk or another program, not the file: the caller reports these as they are
        return _one_line(str(exc))
    except sqlite3.DatabaseError as exc:
        return _one_line(str(exc))
    finally:
        conn.close()
    return None if rows == ["ok"] else _one_line("; ".join(str(r) for r in rows))


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.replace("***", "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_database(path: Path | None = None) -> None:
    """Raise DamagedDatabaseError when the database file at `path` is damaged."""
    path = Path(path) if path else paths.database_path()
    problem = check_file(path)
    if problem:
        raise DamagedDatabaseError(path, problem)


def not_damage(exc: BaseException) -> bool:
    """Whether an sqlite3 error is about the disk, the folder or another program (locked, read-only,
    full, an I/O error), not about what the file holds: a repair would not help."""
    text = str(getattr(exc, "orig", None) or exc).lower()
    return any(words in text for words in ("locked", "busy", "unable to open", "readonly", "read-only",
                                            "disk i/o", "disk is full"))


def is_damage(exc: BaseException) -> bool:
    """Whether an sqlite3 (or SQLAlchemy-wrapped) error says the file is not a sound database."""
    orig = getattr(exc, "orig", None) or exc
    if not isinstance(orig, sqlite3.DatabaseError):
        return False
    text = str(orig).lower()
    return any(words in text for words in ("malformed", "not a database", "file is encrypted", "corrupt",
                                            "could not decode"))


def undecodable_text(path: Path) -> str | None:
    """The first text in the database that is not UTF-8 (bytes changed inside a row, which
    PRAGMA quick_check does not look at), as 'table: problem'; None when all of it reads."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return None
    conn = sqlite3.connect(path, timeout=lock_timeout_s())
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            try:
                for _row in conn.execute(f'SELECT * FROM "{table}"'):  # noqa: S608 - the file's own names
                    pass
            except sqlite3.OperationalError as exc:
                if "decode" in str(exc).lower():
                    return _one_line(f"{table}: {exc}")
                raise
        return None
    finally:
        conn.close()


# ============================================================================ restoring
def set_aside(database: Path, label: str, now: datetime | None = None) -> Path | None:
    """Rename the database (and its -wal, -shm) to `<name>.<label>-YYYYMMDD-HHMMSS`, untouched."""
    database = Path(database)
    if not database.exists():
        return None
    stamp = (now or datetime.now()).strftime(_STAMP)
    aside = database.with_name(f"{database.name}.{label}-{stamp}")
    n = 2
    while aside.exists():
        aside = database.with_name(f"{database.name}.{label}-{stamp}-{n}")
        n += 1
    os.replace(database, aside)
    for suffix in SIDE_FILES:
        side = database.with_name(database.name + suffix)
        if side.exists():
            os.replace(side, aside.with_name(aside.name + suffix))
    log.info("moved %s aside to %s", database, aside)  # the caller reports it; the CLI prints no log
    return aside


def restore_backup(name: str, database: Path | None = None) -> RestoreResult:
    """Put the backup `name` in place of the database; the current file is kept aside, renamed.
    The caller closes its connections first."""
    database = Path(database) if database else paths.database_path()
    info = find_backup(name, database)
    problem = check_file(info.path)
    if problem or not info.readable:
        raise BackupError(f"{info.path}: this backup is damaged too ({problem or 'cannot be read'}); choose another")
    staged = database.with_name(f".{database.name}.restore.tmp")
    try:
        _copy(sqlite3.connect(f"file:{info.path}?mode=ro&immutable=1", uri=True), staged)
        if database.exists() and check_file(database) is None:
            _checkpoint(database)  # the aside copy then holds everything in one file
        aside = set_aside(database, "before-restore")
        os.replace(staged, database)
    except BaseException:
        with contextlib.suppress(OSError):
            staged.unlink()
        raise
    log.info("restored %s from %s", database, info.path)
    return RestoreResult(info, database, aside)


def _copy(source: sqlite3.Connection, target: Path, self_contained: bool = False) -> None:
    """A consistent copy of an open database into `target` with the online backup API, flushed to
    disk; `self_contained` leaves no -wal file beside it. Closes `source`."""
    deadline = time.monotonic() + lock_timeout_s()

    def waiting(status: int, _remaining: int, _total: int) -> None:
        # the backup API retries a locked database for ever: give up as a connection does
        if status in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) and time.monotonic() > deadline:
            raise sqlite3.OperationalError("database is locked")

    try:
        copy = sqlite3.connect(target)
        try:
            source.backup(copy, progress=waiting, sleep=0.05)
            if self_contained:
                copy.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.OperationalError as exc:
            if "full" in str(exc).lower():  # the copy's disk, not the database: name the copy's folder
                raise OSError(errno.ENOSPC, "No space left on device", str(target.parent)) from exc
            raise
        finally:
            copy.close()
    finally:
        source.close()
    with open(target, "rb+") as handle:
        os.fsync(handle.fileno())


def _checkpoint(database: Path) -> None:
    with contextlib.suppress(sqlite3.Error):
        conn = sqlite3.connect(database, timeout=5)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
