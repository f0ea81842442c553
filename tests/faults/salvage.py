"""What of a damaged database can still be read, by readers other than gpudesk's repair: the yard
stick for "rows lost". A user row counts as readable when any of these gives it back whole
(every column equal to the row before the damage):

- a lookup by rowid (one path down the table's b-tree);
- a full scan of the table, up to where it breaks;
- a page-by-page read of the file without SQLite (gpudesk.core.catalogue.pagescan, with the
  schema of the sound file), which finds rows on leaf pages no path from the root reaches;
- SQLite's own recovery, `sqlite3 DAMAGED .recover` (the sqlite3 shell, when it has it: Debian's
  3.40 shell lacks the sqlite_dbpage table it needs), which reads every page it can, and puts
  the rows it cannot place in lost_and_found.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

from gpudesk.core.catalogue.repair import USER_TABLES

Rows = dict[str, dict[int, tuple]]  # table -> rowid -> the row's columns, in table order


def _connect(path: Path) -> sqlite3.Connection:
    """A connection that reads text that is not UTF-8 (a damaged row) as unequal, not as an error."""
    conn = sqlite3.connect(path)
    conn.text_factory = lambda raw: raw.decode("utf-8", "surrogateescape")
    return conn


def user_rows_by_rowid(path: Path) -> Rows:
    """The user's rows of a sound database (the tables repair salvages), by rowid."""
    conn = _connect(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        out: Rows = {}
        for table, where in USER_TABLES:
            if table in tables:
                sql = f"SELECT rowid, * FROM {table}" + (f" WHERE {where}" if where else "")  # noqa: S608
                out[table] = {r[0]: tuple(r[1:]) for r in conn.execute(sql)}
        return out
    finally:
        conn.close()


def present(path: Path, expected: Rows) -> Rows:
    """Which of `expected` a sound database holds, whole (any rowid: a rebuild may renumber)."""
    conn = _connect(path)
    try:
        out: Rows = {}
        for table, rows in expected.items():
            have = {tuple(r) for r in conn.execute(f"SELECT * FROM {table}")}  # noqa: S608
            out[table] = {rowid: row for rowid, row in rows.items() if row in have}
        return out
    finally:
        conn.close()


def readable(path: Path, expected: Rows, use_recover: bool = True, schema: dict | None = None) -> Rows:
    """The rows of `expected` that some reader still gets whole from the damaged file at `path`
    (`schema`: schema_of the sound file, for the page reader; without it, no page reader)."""
    out: Rows = {t: {} for t in expected}
    with tempfile.TemporaryDirectory(prefix="salvage-") as work:
        copy = Path(work) / "damaged.sqlite3"
        shutil.copyfile(path, copy)
        wal = Path(f"{path}-wal")
        if wal.exists():
            shutil.copyfile(wal, Path(f"{copy}-wal"))
        _by_lookup_and_scan(copy, expected, out)
        if schema is not None:
            _by_pages(copy, schema, expected, out)
        if use_recover and recover_works():
            _by_recover(copy, Path(work) / "recovered.sqlite3", expected, out)
    return out


def schema_of(path: Path) -> dict:
    """The tables of a sound database, for the page reader."""
    from gpudesk.core.catalogue import pagescan

    conn = sqlite3.connect(path)
    try:
        return pagescan.tables_of(conn)
    finally:
        conn.close()


def _by_pages(copy: Path, schema: dict, expected: Rows, out: Rows) -> None:
    from gpudesk.core.catalogue import pagescan

    found = pagescan.scan(copy, {t: schema[t] for t in expected if t in schema})
    for table, rows in expected.items():
        for rowid, row in found.rows.get(table, {}).items():
            if rows.get(rowid) == row:
                out[table][rowid] = row


_RECOVER: list[bool] = []


def recover_works() -> bool:
    """Whether the sqlite3 shell is installed and its .recover runs (it needs sqlite_dbpage)."""
    if not _RECOVER:
        ok = False
        if shutil.which("sqlite3"):
            with tempfile.TemporaryDirectory() as work:
                db = Path(work) / "probe.sqlite3"
                conn = sqlite3.connect(db)
                conn.execute("CREATE TABLE t (x)")
                conn.execute("INSERT INTO t VALUES (42)")
                conn.commit()
                conn.close()
                try:
                    run = subprocess.run(["sqlite3", str(db), ".recover"], capture_output=True, text=True, timeout=30)
                    ok = run.returncode == 0 and "42" in run.stdout
                except (OSError, subprocess.SubprocessError):
                    ok = False
        _RECOVER.append(ok)
    return _RECOVER[0]


def _by_lookup_and_scan(copy: Path, expected: Rows, out: Rows) -> None:
    try:
        conn = _connect(copy)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError:
        return
    try:
        for table, rows in expected.items():
            for rowid, row in rows.items():
                try:
                    got = conn.execute(f"SELECT * FROM {table} WHERE rowid = ?", (rowid,)).fetchone()  # noqa: S608
                except sqlite3.DatabaseError:
                    continue
                if got is not None and tuple(got) == row:
                    out[table][rowid] = row
            try:
                for got in conn.execute(f"SELECT rowid, * FROM {table} NOT INDEXED"):  # noqa: S608
                    if rows.get(got[0]) == tuple(got[1:]):
                        out[table][got[0]] = rows[got[0]]
            except sqlite3.DatabaseError:
                pass
    finally:
        conn.close()


def _by_recover(copy: Path, target: Path, expected: Rows, out: Rows) -> None:
    try:
        dump = subprocess.run(["sqlite3", str(copy), ".recover"], capture_output=True, timeout=120)
        subprocess.run(["sqlite3", str(target)], input=dump.stdout, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return
    if not target.exists():
        return
    conn = sqlite3.connect(target)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table, rows in expected.items():
            if table in tables:
                try:
                    for got in conn.execute(f"SELECT rowid, * FROM {table}"):  # noqa: S608
                        if rows.get(got[0]) == tuple(got[1:]):
                            out[table][got[0]] = rows[got[0]]
                except sqlite3.DatabaseError:
                    pass
        if "lost_and_found" in tables:  # rows on pages no table reaches: matched by their values
            wanted = {}
            for table, rows in expected.items():
                for rowid, row in rows.items():
                    wanted.setdefault(_loose(row), []).append((table, rowid, row))
            cols = [r[1] for r in conn.execute("PRAGMA table_info(lost_and_found)")]
            values = [c for c in cols if c.startswith("c")]
            for got in conn.execute(f"SELECT id, nfield, {', '.join(values)} FROM lost_and_found"):  # noqa: S608
                fields = tuple(got[2:2 + got[1]])
                for table, rowid, row in wanted.get(_loose(fields), []):
                    if _same_record(fields, row, got[0]):
                        out[table][rowid] = row
    finally:
        conn.close()


def _loose(values: tuple) -> tuple:
    """A key that ignores an INTEGER PRIMARY KEY (stored as NULL in the record, the rowid instead)."""
    return tuple(v for v in values if v is not None and not isinstance(v, int))


def _same_record(fields: tuple, row: tuple, rowid) -> bool:
    if len(fields) != len(row):
        return False
    return all(f == r or (f is None and r == rowid) for f, r in zip(fields, row, strict=True))


def total(rows: Rows) -> int:
    return sum(len(r) for r in rows.values())


def missing(wanted: Rows, got: Rows) -> int:
    return sum(len(set(rows) - set(got.get(t, {}))) for t, rows in wanted.items())
