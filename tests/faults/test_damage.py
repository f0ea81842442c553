"""A database truncated at many points, or with random bytes written into it: every command says
so in one line (exit 5, the file named, `gpudesk repair` suggested, no traceback), and
`gpudesk repair` keeps every user row that any salvage reader (tests/faults/salvage.py) can still
read whole, and adds none that is not one of them. With a backup, `repair --from-backup newest`
brings back every row of the backup."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from gpudesk.cli import EXIT_DAMAGED, EXIT_OK, main
from gpudesk.core.catalogue import backup

from . import salvage
from ._util import integrity

PAGE = 4096


def truncate(data: bytearray, fraction: float, rng: random.Random) -> bytearray:
    return data[: max(100, int(len(data) * fraction) + rng.randrange(-300, 300))]


def scribble(data: bytearray, _fraction: float, rng: random.Random) -> bytearray:
    for _ in range(rng.randint(2, 6)):
        at = rng.randrange(100, len(data) - 1100)
        data[at: at + 1024] = rng.randbytes(1024)
    return data


def header(data: bytearray, _fraction: float, rng: random.Random) -> bytearray:
    data[:100] = rng.randbytes(100)
    return data


def interior(data: bytearray, _fraction: float, rng: random.Random, pages=()) -> bytearray:
    page = rng.choice(pages)
    data[(page - 1) * PAGE: page * PAGE] = rng.randbytes(PAGE)
    return data


DAMAGE = ([("truncate", f) for f in (0.05, 0.33, 0.5, 0.71, 0.9, 0.99)] + [("scribble", s) for s in (1, 2, 3)]
          + [("header", 0), ("interior", 0)])


@pytest.fixture(scope="module")
def sound(user_template):
    expected = salvage.user_rows_by_rowid(user_template)
    assert salvage.total(expected) > 20 and len(expected["bench_measurements"]) > 0
    conn = sqlite3.connect(user_template)
    names = tuple(expected)
    interiors = [r[0] for r in conn.execute(
        f"SELECT pageno FROM dbstat WHERE pagetype = 'internal' AND name IN ({', '.join('?' * len(names))})", names)]
    conn.close()
    return expected, salvage.schema_of(user_template), interiors


@pytest.mark.parametrize(("kind", "arg"), DAMAGE)
def test_damage_gets_one_line_and_repair_keeps_every_readable_user_row(sound, user_template, gpudesk_home, capsys,
                                                                        kind, arg):
    expected, schema, interiors = sound
    db = gpudesk_home / "gpudesk.sqlite3"
    shutil.copy(user_template, db)
    made = backup.make_backup(db, "manual")
    rng = random.Random(f"{kind}-{arg}")
    data = bytearray(db.read_bytes())
    damaged = (interior(data, arg, rng, interiors) if kind == "interior"
               else {"truncate": truncate, "scribble": scribble, "header": header}[kind](data, arg, rng))
    db.write_bytes(bytes(damaged))
    readable = salvage.readable(db, expected, schema=schema)

    code = main(["catalogue", "list", "--kind", "accelerators"])
    err = capsys.readouterr().err
    assert code == EXIT_DAMAGED, err
    assert err.count("\n") == 1 and str(db) in err and "gpudesk repair" in err and "Traceback" not in err

    code = main(["repair"])
    out, err = capsys.readouterr()
    assert code == EXIT_OK and "Traceback" not in err, err
    assert integrity(db) == ["ok"]
    assert next(Path(db.parent).glob("gpudesk.sqlite3.damaged-*")).read_bytes() == bytes(damaged)  # kept
    kept = salvage.present(db, expected)
    assert salvage.missing(readable, kept) == 0, out
    if kind in ("header", "interior"):  # every leaf page is intact: every row comes back
        assert kept == expected, out
    rebuilt = salvage.user_rows_by_rowid(db)
    for table, rows in rebuilt.items():  # nothing made up: every user row is one of the sound file's
        assert set(rows.values()) <= set(expected[table].values()), table

    code = main(["repair", "--from-backup", "newest"])
    capsys.readouterr()
    assert code == EXIT_OK
    assert salvage.present(db, expected) == expected
    assert made.exists()


def test_the_page_reader_reads_a_sound_file_as_sqlite_does(user_template):
    """Every row of every table, the bundled catalogue's long texts (overflow pages) included."""
    from gpudesk.core.catalogue import pagescan

    conn = sqlite3.connect(user_template)
    schema = pagescan.tables_of(conn)
    by_sqlite = {t: {r[0]: tuple(r[1:]) for r in conn.execute(f"SELECT rowid, * FROM {t}")} for t in schema}  # noqa: S608
    conn.close()
    found = pagescan.scan(user_template, schema)
    assert found.orphan_pages == 0 and found.page_size == PAGE
    for table in schema:
        assert found.rows[table] == by_sqlite[table], table
    assert sum(map(len, by_sqlite.values())) > 800


def test_the_page_reader_reads_what_is_still_in_the_wal(user_template, tmp_path):
    """Rows committed to the -wal but not yet copied into the file are read as SQLite reads them."""
    from gpudesk.core.catalogue import pagescan

    db = tmp_path / "gpudesk.sqlite3"
    shutil.copy(user_template, db)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE accelerators SET name = 'Renamed in the WAL' WHERE id = 'my-npu'")
    writer.commit()
    writer.execute("UPDATE accelerators SET name = 'Never committed' WHERE id = 'lab-tpu'")  # left open
    copy = tmp_path / "copy.sqlite3"
    shutil.copyfile(db, copy)
    shutil.copyfile(f"{db}-wal", f"{copy}-wal")
    writer.rollback()
    writer.close()
    assert copy.read_bytes().count(b"Renamed in the WAL") == 0  # only in the -wal
    schema = {"accelerators": pagescan.tables_of(sqlite3.connect(user_template))["accelerators"]}
    names = {row[3] for row in pagescan.scan(copy, schema).rows["accelerators"].values()}
    assert "Renamed in the WAL" in names and "MY-NPU" not in names and "Never committed" not in names


def test_repair_in_a_real_process_prints_its_report_and_nothing_on_stderr(user_template, tmp_path):
    from ._util import run_gpudesk

    home = tmp_path / "home-real"
    home.mkdir()
    data = bytearray(user_template.read_bytes())
    data[:100] = bytes(100)
    (home / "gpudesk.sqlite3").write_bytes(bytes(data))
    result = run_gpudesk(home, "repair")
    assert result.returncode == EXIT_OK and result.stderr == ""
    assert "its pages were read one by one" in result.stdout and "Your rows salvaged:" in result.stdout
