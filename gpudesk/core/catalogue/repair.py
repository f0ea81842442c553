"""Repairing a damaged database: move it aside untouched, rebuild the catalogue from the bundled
data, and copy back, row by row, what can still be read of the user's own rows.

A row that cannot be read is skipped and counted; the report says what was salvaged and what was
lost. The other way back, restoring a backup, is backup.restore_backup.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gpudesk.core import paths
from gpudesk.core.catalogue import backup
from gpudesk.core.catalogue.backup import CATALOGUE_TABLES

log = logging.getLogger(__name__)

PROBE_LIMIT = 2_000_000  # rowids looked up one by one in a table whose scan broke
IMPORTED_META = "imported_bundle"  # exchange.IMPORTED_META, without importing SQLAlchemy here

# (table, what makes a row the user's): the rows a rebuild from the bundled data cannot give back
USER_TABLES: tuple[tuple[str, str | None], ...] = (
    *((t, "origin != 'bundled'") for t in CATALOGUE_TABLES),
    ("workload_presets", "origin != 'bundled'"),
    ("bench_imports", None),
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
        if self.unreadable:
            lines.append(f"None of your rows could be read from it: {self.unreadable}.")
        else:
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
    """Move the (damaged) database aside, build a fresh one from the bundled catalogue and copy the
    user's readable rows into it. The caller closes its connections first."""
    from gpudesk.core.catalogue.service import Catalogue

    database = Path(database) if database else paths.database_path()
    aside = backup.set_aside(database, "damaged")
    report = RepairReport(database, aside)
    catalogue = Catalogue.open(f"sqlite:///{database}", data_dir)
    catalogue.close()
    if aside is None:
        return report
    with tempfile.TemporaryDirectory(prefix="gpudesk-repair-") as work:
        # work on a copy, so that the damaged file and its -wal stay exactly as they were
        copy = Path(work) / "damaged.sqlite3"
        shutil.copyfile(aside, copy)
        for suffix in ("-wal",):
            side = aside.with_name(aside.name + suffix)
            if side.exists():
                shutil.copyfile(side, copy.with_name(copy.name + suffix))
        imported = _salvage(copy, database, report)
    if imported:
        catalogue = Catalogue.open(f"sqlite:///{database}", data_dir)
        try:
            catalogue.sync_if_needed(force=True)  # the imported catalogue's kept files, when they are there
        finally:
            catalogue.close()
    log.warning("repaired %s: salvaged %s, lost %s, incomplete %s", database, report.salvaged, report.lost,
                report.incomplete)
    return report


def _salvage(source: Path, target: Path, report: RepairReport) -> str | None:
    """Copy the user's rows from `source` to `target`; returns the imported-bundle meta, if read."""
    try:
        src = sqlite3.connect(source)
        tables = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        report.unreadable = str(exc)
        return None
    dst = sqlite3.connect(target, timeout=30)
    imported = None
    try:
        for table, user_rows in USER_TABLES:
            if table not in tables:
                continue
            try:
                columns = [r[1] for r in src.execute(f"PRAGMA table_info({table})")]
            except sqlite3.DatabaseError:
                report.incomplete.append(table)
                continue
            wanted = [c for c in columns if c in {r[1] for r in dst.execute(f"PRAGMA table_info({table})")}]
            rowids, complete = _rowids(src, table, user_rows)
            if not complete:
                report.incomplete.append(table)
            salvaged = lost = 0
            select = f"SELECT {', '.join(wanted)} FROM {table} WHERE rowid = ?"  # noqa: S608 - fixed names
            insert = f"INSERT OR REPLACE INTO {table} ({', '.join(wanted)}) VALUES ({', '.join('?' * len(wanted))})"  # noqa: S608
            for rowid in rowids:
                try:
                    row = src.execute(select, (rowid,)).fetchone()
                    if row is None:
                        raise sqlite3.DatabaseError("row vanished")
                    dst.execute(insert, row)
                    salvaged += 1
                except sqlite3.Error as exc:
                    log.info("%s row %s not salvaged: %s", table, rowid, exc)
                    lost += 1
            report.salvaged[table] = salvaged
            report.lost[table] = lost
        if "catalogue_meta" in tables:
            try:
                row = src.execute("SELECT value FROM catalogue_meta WHERE key = ?", (IMPORTED_META,)).fetchone()
                if row and row[0]:
                    imported = row[0]
                    dst.execute("INSERT OR REPLACE INTO catalogue_meta (key, value) VALUES (?, ?)", (IMPORTED_META, imported))
            except sqlite3.Error:
                pass
        dst.commit()
    finally:
        dst.close()
        src.close()
    return imported


def _rowids(conn: sqlite3.Connection, table: str, user_rows: str | None) -> tuple[list[int], bool]:
    """The rowids of the user's rows in `table`, and whether every row could be looked at.

    A full scan stops at the first damaged page; then each rowid up to the largest is looked up on
    its own (one path down the b-tree), which reaches the rows on every page still sound."""
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
    upper = upper or PROBE_LIMIT
    found = []
    probe = f"SELECT rowid FROM {table} WHERE rowid = ?{where}"  # noqa: S608 - fixed names
    for rowid in range(1, min(upper, PROBE_LIMIT) + 1):
        try:
            if conn.execute(probe, (rowid,)).fetchone() is not None:
                found.append(rowid)
        except sqlite3.DatabaseError:
            continue  # on a damaged page: neither found nor known to be the user's
    return found, False
