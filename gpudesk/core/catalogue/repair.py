"""Repairing a damaged database: rebuild the catalogue from the bundled data beside it, copy back,
row by row, what can still be read of the user's own rows (through SQLite, and where SQLite
cannot reach them, page by page: pagescan.py), then put the new file in place and keep the
damaged one aside, untouched.

A row that cannot be read is skipped and counted; the report says what was salvaged and what was
lost. The other way back, restoring a backup, is backup.restore_backup.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gpudesk.core import paths
from gpudesk.core.catalogue import backup, pagescan
from gpudesk.core.catalogue.backup import CATALOGUE_TABLES

log = logging.getLogger(__name__)

PROBE_LIMIT = 2_000_000  # rowids looked up one by one in a table whose scan broke
IMPORTED_META = "imported_bundle"  # exchange.IMPORTED_META, without importing SQLAlchemy here

# (table, what makes a row the user's): the rows a rebuild from the bundled data cannot give back
USER_TABLES: tuple[tuple[str, str | None], ...] = (
    *((t, "origin != 'bundled'") for t in CATALOGUE_TABLES),
    ("workload_presets", "origin != 'bundled'"),
    ("bench_imports", None),
    ("bench_setups", None),
    ("bench_measurements", None),
    ("bench_answers", None),
)


@dataclass
class RepairReport:
    """What a rebuild salvaged from the damaged file (rows per table) and what it lost."""

    database: Path
    aside: Path | None
    salvaged: dict[str, int] = field(default_factory=dict)
    lost: dict[str, int] = field(default_factory=dict)  # rows seen but unreadable, or refused
    incomplete: list[str] = field(default_factory=list)  # tables that could not be scanned to the end
    unreadable: str = ""  # why nothing at all could be read, if so

    @property
    def salvaged_total(self) -> int:
        return sum(self.salvaged.values())

    @property
    def lost_total(self) -> int:
        return sum(self.lost.values())

    def to_json(self) -> dict:
        return {"database": str(self.database), "damaged_file": str(self.aside) if self.aside else None,
                "salvaged": self.salvaged, "lost": self.lost, "incomplete_tables": self.incomplete,
                "unreadable": self.unreadable or None}

    def format_text(self) -> str:
        lines = [f"Rebuilt {self.database} from the bundled catalogue."]
        if self.aside:
            lines.append(f"The damaged file is kept, untouched, as {self.aside}.")
        if self.unreadable and not self.salvaged_total:
            lines.append(f"None of your rows could be read from it: {self.unreadable}.")
        else:
            if self.unreadable:
                lines.append(f"SQLite could not read it ({self.unreadable}); its pages were read one by one.")
            kept = ", ".join(f"{n} {t}" for t, n in self.salvaged.items() if n) or "none"
            lines.append(f"Your rows salvaged: {kept}.")
            if self.lost_total:
                lines.append("Rows that could not be read and are lost: "
                             + ", ".join(f"{n} {t}" for t, n in self.lost.items() if n) + ".")
            if self.incomplete:
                lines.append("These tables could not be read to the end; rows past the damage may be lost "
                             "without being counted: " + ", ".join(self.incomplete) + ".")
        return "\n".join(lines)


def rebuild(database: Path | None = None, data_dir: Path | None = None) -> RepairReport:
    """Build a fresh database from the bundled catalogue, copy the user's readable rows from the
    (damaged) one into it, then put it in place; the damaged file is kept aside, renamed. The new
    file is built in a folder beside the database and moved in only when it is complete, so a
    failure on the way (a full disk, a kill) leaves the damaged file where it was and nothing else.
    The caller closes its connections first."""
    from gpudesk.core.catalogue.service import Catalogue

    database = Path(database) if database else paths.database_path()
    report = RepairReport(database, None)
    _remove_stale_staging(database)
    staging = Path(tempfile.mkdtemp(prefix=f".{database.stem}-repair-", dir=database.parent))
    try:
        staged = staging / database.name
        Catalogue.open(f"sqlite:///{staged}", data_dir).close()
        imported = None
        if database.exists():
            with tempfile.TemporaryDirectory(prefix="gpudesk-repair-") as work:
                # read a copy, so that the damaged file and its -wal stay exactly as they were
                copy = Path(work) / "damaged.sqlite3"
                shutil.copyfile(database, copy)
                side = database.with_name(database.name + "-wal")
                if side.exists():
                    shutil.copyfile(side, copy.with_name(copy.name + "-wal"))
                imported = _salvage(copy, staged, report)
        _settle(staged)
        report.aside = backup.set_aside(database, "damaged")
        os.replace(staged, database)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if imported:
        catalogue = Catalogue.open(f"sqlite:///{database}", data_dir)
        try:
            catalogue.sync_if_needed(force=True)  # the imported catalogue's kept files, when they are there
        finally:
            catalogue.close()
    log.info("repaired %s: salvaged %s, lost %s, incomplete %s", database, report.salvaged, report.lost,
                report.incomplete)
    return report


def _remove_stale_staging(database: Path) -> None:
    """Folders a repair that was killed left beside the database (an hour old: not one running)."""
    import time

    for folder in database.parent.glob(f".{database.stem}-repair-*"):
        try:
            if folder.is_dir() and time.time() - folder.stat().st_mtime > 3600:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def _settle(path: Path) -> None:
    """Fold the -wal of a closed database into the file and flush it: one file, ready to move."""
    conn = sqlite3.connect(path, timeout=backup.lock_timeout_s())
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")  # drops the -wal and -shm; the next open sets WAL again
    finally:
        conn.close()
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _salvage(source: Path, target: Path, report: RepairReport) -> str | None:
    """Copy the user's rows from `source` to `target`; returns the imported-bundle meta, if read.

    SQLite's own reads come first (a scan of each table, then lookups by rowid past a damaged
    page); then the file is read page by page (pagescan), which finds the rows on leaf pages that
    no path from the table's root reaches any more. Where both read a rowid, SQLite's row wins."""
    dst = sqlite3.connect(target, timeout=backup.lock_timeout_s())
    src = None
    try:
        schema = pagescan.tables_of(dst)
        src, tables = _open_damaged(source, report)
        if src is not None:
            try:
                schema = {**schema, **pagescan.tables_of(src)}  # the damaged file's own column order
            except sqlite3.DatabaseError:
                pass
        pages: list[pagescan.ScanResult] = []

        def page_rows(table: str) -> dict[int, tuple]:
            if not pages:
                try:
                    pages.append(pagescan.scan(source, {t: schema[t] for t, _ in USER_TABLES if t in schema}))
                except (OSError, MemoryError) as exc:
                    log.warning("the pages of %s could not be read: %s", source, exc)
                    pages.append(pagescan.ScanResult())
            return pages[0].rows.get(table, {})

        dst_columns = {t: [c.name for c in table.columns] for t, table in pagescan.tables_of(dst).items()}
        for table, user_rows in USER_TABLES:
            if table in dst_columns and table in schema:
                columns = [c.name for c in schema[table].columns]
                convert = _OldMeasurements(dst) if table == "bench_measurements" and "setup_id" not in columns \
                    else None  # the damaged file predates migration 0005: each row's setup gets its own row
                _salvage_table(dst, src if table in tables else None, table, user_rows, columns,
                               columns if convert else dst_columns[table], page_rows, report, convert)
        imported = _imported_meta(src, tables) if src is not None else None
        if imported:
            dst.execute("INSERT OR REPLACE INTO catalogue_meta (key, value) VALUES (?, ?)", (IMPORTED_META, imported))
        dst.commit()
    finally:
        dst.close()
        if src is not None:
            src.close()
    return imported


def _salvage_table(dst, src, table: str, user_rows, columns: list[str], dst_columns: list[str], page_rows,
                   report: RepairReport, convert=None) -> None:
    """One table's user rows: SQLite's reads of the damaged file first, then its pages."""
    wanted = [c for c in columns if c in dst_columns]
    rows: dict[int, tuple] = {}  # rowid -> values of `wanted`
    failed: list[int] = []
    complete = False
    if src is not None:
        complete, failed = _read_rows(src, table, user_rows, wanted, rows, page_rows)
    if not complete:
        report.incomplete.append(table)
    # the pages too, even after a scan that ended without an error: in a damaged file a
    # broken pointer can lead a scan past leaf pages without SQLite noticing
    index = {c: i for i, c in enumerate(columns)}
    for rowid, values in page_rows(table).items():
        if rowid in rows or not _is_users(values, index, user_rows):
            continue
        rows[rowid] = tuple(values[index[c]] for c in wanted)
    lost = sum(1 for rowid in failed if rowid not in rows)
    insert = f"INSERT OR REPLACE INTO {table} ({', '.join(wanted)}) VALUES ({', '.join('?' * len(wanted))})"  # noqa: S608
    salvaged = 0
    for rowid in sorted(rows):
        try:
            if convert is not None:
                convert(dict(zip(wanted, rows[rowid], strict=True)))
            else:
                dst.execute(insert, rows[rowid])
            salvaged += 1
        except sqlite3.Error as exc:  # refused by the new schema (a value of the wrong kind)
            log.info("%s row %s not salvaged: %s", table, rowid, exc)
            lost += 1
    report.salvaged[table] = salvaged
    report.lost[table] = lost


class _OldMeasurements:
    """Writes measurement rows of the one-table layout that migration 0005 split: what a row shared
    with others of its import (hardware, workload, conditions) becomes a bench_setups row, once."""

    SETUP = ("import_id", "format", "hardware_text", "hardware_key", "accelerator_id", "accelerator_count",
             "match_confidence", "match_reason", "cpu_only", "workload", "conditions")
    ROW = ("id", "content_hash", "metric", "statistic", "value", "unit", "stddev", "record_index")

    def __init__(self, dst: sqlite3.Connection):
        self.dst = dst
        self.setups: dict[tuple, int] = {}

    def __call__(self, row: dict) -> None:
        key = tuple(row.get(c) for c in self.SETUP)
        setup_id = self.setups.get(key)
        if setup_id is None:
            cursor = self.dst.execute(f"INSERT INTO bench_setups ({', '.join(self.SETUP)}) "  # noqa: S608
                                      f"VALUES ({', '.join('?' * len(self.SETUP))})", key)
            setup_id = self.setups[key] = cursor.lastrowid
        self.dst.execute(f"INSERT OR REPLACE INTO bench_measurements ({', '.join(self.ROW)}, setup_id, workload, "  # noqa: S608
                         f"conditions) VALUES ({', '.join('?' * len(self.ROW))}, ?, '{{}}', '{{}}')",
                         (*(row.get(c) for c in self.ROW), setup_id))


def _open_damaged(source: Path, report: RepairReport) -> tuple[sqlite3.Connection | None, set[str]]:
    try:
        src = sqlite3.connect(source)
        return src, {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        report.unreadable = str(exc)  # SQLite cannot read the schema: only the pages are left
        return None, set()


def _read_rows(src: sqlite3.Connection, table: str, user_rows: str | None, wanted: list[str],
               rows: dict[int, tuple], page_rows) -> tuple[bool, list[int]]:
    """SQLite's reads of the user's rows of `table` into `rows`; (whether it read the whole
    table, the rowids it saw but could not read)."""
    rowids, complete = _rowids(src, table, user_rows, lambda: max(page_rows(table), default=0))
    select = f"SELECT {', '.join(wanted)} FROM {table} WHERE rowid = ?"  # noqa: S608 - fixed names
    failed = []
    for rowid in rowids:
        try:
            row = src.execute(select, (rowid,)).fetchone()
            if row is None:
                raise sqlite3.DatabaseError("row vanished")
            rows[rowid] = tuple(row)
        except sqlite3.Error as exc:
            log.info("%s row %s not read: %s", table, rowid, exc)
            failed.append(rowid)
    return complete, failed


def _is_users(values: tuple, index: dict[str, int], user_rows: str | None) -> bool:
    if user_rows is None:
        return True
    origin = values[index["origin"]] if "origin" in index and index["origin"] < len(values) else None
    return origin is not None and origin != "bundled"


def _imported_meta(src: sqlite3.Connection, tables: set[str]) -> str | None:
    if "catalogue_meta" not in tables:
        return None
    try:
        row = src.execute("SELECT value FROM catalogue_meta WHERE key = ?", (IMPORTED_META,)).fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row and row[0] else None


def _rowids(conn: sqlite3.Connection, table: str, user_rows: str | None, pages_upper) -> tuple[list[int], bool]:
    """The rowids of the user's rows in `table`, and whether every row could be looked at.

    A full scan stops at the first damaged page; then each rowid up to the largest (as SQLite or
    the page scan, `pages_upper()`, knows it) is looked up on its own (one path down the b-tree),
    which reaches the rows on every page still sound."""
    where = f" AND ({user_rows})" if user_rows else ""
    try:
        found = [r[0] for r in conn.execute(f"SELECT rowid FROM {table} NOT INDEXED WHERE 1{where} ORDER BY rowid")]  # noqa: S608
        return found, True
    except sqlite3.DatabaseError:
        pass
    upper = 0
    for query in (f"SELECT max(rowid) FROM {table}", f"SELECT rowid FROM {table} NOT INDEXED ORDER BY rowid DESC"):  # noqa: S608
        try:
            for (rowid,) in conn.execute(query):
                upper = max(upper, rowid or 0)
                break
        except sqlite3.DatabaseError:
            continue
    upper = max(upper, pages_upper())
    found = []
    probe = f"SELECT rowid FROM {table} WHERE rowid = ?{where}"  # noqa: S608 - fixed names
    for rowid in range(1, min(upper, PROBE_LIMIT) + 1):
        try:
            if conn.execute(probe, (rowid,)).fetchone() is not None:
                found.append(rowid)
        except sqlite3.DatabaseError:
            continue  # on a damaged page: neither found nor known to be the user's
    return found, False
