"""Data safety on real faults: backups before a migration or a catalogue upgrade and their
restore; damaged files (truncated, random bytes) detected and repaired keeping every readable
user row; one-line CLI messages with distinct exit codes for damaged, locked, read-only and full."""

from __future__ import annotations

import errno
import os
import random
import shutil
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from gpudesk.cli import (
    EXIT_DAMAGED,
    EXIT_DISK_FULL,
    EXIT_LOCKED,
    EXIT_NOT_WRITABLE,
    EXIT_OK,
    EXIT_UNEXPECTED,
    main,
)
from gpudesk.core.catalogue import Catalogue, backup, db
from gpudesk.core.catalogue.backup import DamagedDatabaseError
from gpudesk.core.catalogue.repair import rebuild

from .conftest import DATA
from .test_benchmarks_importers import LLAMA_4080

PAGE = 4096
USER_ENTRIES = ("my-npu", "lab-tpu", "edge-box")


def make_user_rows(cat: Catalogue) -> None:
    """A few entries, quotes, an edit of a bundled row and imported measurements, as a user makes them."""
    from gpudesk.core.benchmarks.store import import_files

    for i, item_id in enumerate(USER_ENTRIES):
        cat.add_item("accelerators", {"id": item_id, "name": item_id.upper(), "vendor": "Lab",
                                      "memory_gb": str(16 * (i + 1))}, source={"title": f"Lab sheet {i}"})
    cat.add_price_quote("h100-sxm5-80gb", "27500", when="2026-10-01", supplier="Acme GPUs")
    cat.add_price_quote("a100-sxm4-80gb", "9000", when="2026-09-01", supplier="Beta")
    cat.update_item("accelerators", "rtx-4090", {"tdp_w": "400"}, source={"title": "Our power limit"})
    assert import_files(cat, [LLAMA_4080]).ok


def user_rows(path: Path) -> dict[str, dict]:
    """Every user row of the database at `path`, by table and key (what a repair must keep)."""
    conn = sqlite3.connect(path)
    try:
        out: dict[str, dict] = {}
        for table in backup.CATALOGUE_TABLES:
            out[table] = {r[0]: r for r in conn.execute(f"SELECT id, * FROM {table} WHERE origin != 'bundled'")}
        out["bench_measurements"] = {r[0]: r for r in conn.execute("SELECT id, * FROM bench_measurements")}
        out["bench_imports"] = {r[0]: r for r in conn.execute("SELECT id, * FROM bench_imports")}
        return out
    finally:
        conn.close()


def counts(path: Path) -> tuple[int, int, int]:
    """(user rows, quotes, measurements) counted here, to check what list_backups reports."""
    rows = user_rows(path)
    user = sum(len(rows[t]) for t in backup.CATALOGUE_TABLES)
    conn = sqlite3.connect(path)
    quotes = conn.execute("SELECT count(*) FROM price_observations WHERE kind = 'quote'").fetchone()[0]
    conn.close()
    return user, quotes, len(rows["bench_measurements"])


def readable_rows(path: Path, expected: dict[str, dict]) -> dict[str, dict]:
    """Which of `expected` a copy of the damaged file at `path` still gives back, row by row."""
    copy = path.with_name("probe-copy.sqlite3")
    shutil.copyfile(path, copy)
    out: dict[str, dict] = {}
    try:
        conn = sqlite3.connect(copy)
        for table, rows in expected.items():
            out[table] = {}
            for key, row in rows.items():
                try:
                    got = conn.execute(f"SELECT id, * FROM {table} WHERE rowid = (SELECT rowid FROM {table} "
                                       f"NOT INDEXED WHERE {'id'} = ?)", (key,)).fetchone()
                except sqlite3.DatabaseError:
                    continue
                if got == row:
                    out[table][key] = row
        conn.close()
    except sqlite3.DatabaseError:
        pass
    finally:
        copy.unlink()
    return out


def filled_database(catalogue_template: Path, folder: Path, imports=()) -> Path:
    """A copy of the bundled catalogue database in `folder` with the user's rows (and `imports`
    imported), built with GPUDESK_HOME pointing there."""
    from gpudesk.core.benchmarks.store import import_files

    target = folder / "gpudesk.sqlite3"
    shutil.copy(catalogue_template, target)
    old = os.environ.get("GPUDESK_HOME")
    os.environ["GPUDESK_HOME"] = str(folder)
    try:
        cat = Catalogue.open(None, DATA)
        make_user_rows(cat)
        if imports:
            assert import_files(cat, list(imports)).ok
        cat.close()
    finally:
        if old is None:
            del os.environ["GPUDESK_HOME"]
        else:
            os.environ["GPUDESK_HOME"] = old
    return target


@pytest.fixture(scope="module")
def filled_template(tmp_path_factory, catalogue_template):
    """A database with the bundled catalogue and the user's rows; tests get copies."""
    return filled_database(catalogue_template, tmp_path_factory.mktemp("filled"))


@pytest.fixture
def filled(filled_template, gpudesk_home) -> Path:
    target = gpudesk_home / "gpudesk.sqlite3"
    shutil.copy(filled_template, target)
    return target


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ============================================================================ backups
def test_a_migration_is_preceded_by_a_backup_of_the_old_schema(gpudesk_home):
    engine = db.make_engine()
    db.migrate(engine, "0002_benchmarks")
    engine.dispose()
    cat = Catalogue.open(None, DATA)
    cat.close()
    (made,) = backup.list_backups()
    assert made.reason == "before-migration" and made.readable
    conn = sqlite3.connect(made.path)
    assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "0002_benchmarks"
    conn.close()
    assert db.current_revision(db.make_engine()) == db.HEAD_REVISION


def test_a_catalogue_upgrade_is_preceded_by_a_backup_holding_the_users_rows(tmp_path, filled):
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    expected = counts(filled)
    assert expected[0] >= len(USER_ENTRIES) + 2 + 1 and expected[1] == 2 and expected[2] > 0
    cat = Catalogue.open(None, data)  # the same catalogue: no upgrade, no backup
    cat.close()
    assert backup.list_backups() == []
    acc = data / "accelerators" / "nvidia-client.toml"
    acc.write_text(acc.read_text().replace("tdp_w = 450", "tdp_w = 451"))
    cat = Catalogue.open(None, data)
    cat.close()
    (made,) = backup.list_backups()
    assert made.reason == "before-catalogue-update"
    assert (made.user_rows, made.quotes, made.measurements) == expected
    assert "2 quotes" in made.describe()


def test_daily_backups_keep_the_newest_five(filled):
    start = datetime(2026, 1, 1, 9, 0, 0)
    assert backup.backup_if_due(filled, now=start) is not None
    assert backup.backup_if_due(filled, now=start + timedelta(hours=5)) is None  # at most daily
    for day in range(1, 8):
        assert backup.backup_if_due(filled, now=start + timedelta(days=day)) is not None
    kept = backup.list_backups(filled)
    assert [b.created for b in kept] == [start + timedelta(days=d) for d in range(7, 2, -1)]
    assert all(b.readable and b.quotes == 2 for b in kept)


def test_restore_puts_the_backup_back_and_keeps_the_current_file_aside(filled, capsys):
    made = backup.make_backup(filled, "manual")
    cat = Catalogue.open(None, DATA)
    cat.add_item("accelerators", {"id": "after-backup", "name": "Later", "vendor": "Lab", "memory_gb": "8"})
    cat.close()
    code, out, err = run_cli(capsys, "repair", "--from-backup", made.name)
    assert code == EXIT_OK, err
    assert "Restored" in out and "before-restore" in out
    cat = Catalogue.open(None, DATA)
    assert cat.get("accelerators", "after-backup") is None
    assert cat.get("accelerators", "my-npu") is not None
    cat.close()
    (aside,) = filled.parent.glob("gpudesk.sqlite3.before-restore-*[0-9]")
    assert "after-backup" in user_rows(aside)["accelerators"]


def test_restoring_an_unknown_or_damaged_backup_changes_nothing(filled, capsys):
    before = filled.read_bytes()
    code, _, err = run_cli(capsys, "repair", "--from-backup", "nope.sqlite3")
    assert code != EXIT_OK and "nope.sqlite3" in err and "no such backup" in err
    made = backup.make_backup(filled, "manual")
    made.write_bytes(made.read_bytes()[: PAGE * 3])
    code, _, err = run_cli(capsys, "repair", "--from-backup", made.name)
    assert code != EXIT_OK and "damaged too" in err
    assert filled.read_bytes() == before


def test_backups_command_lists_date_and_contents(filled, capsys):
    user, quotes, measurements = counts(filled)
    code, out, _ = run_cli(capsys, "backups", "--now")
    assert code == EXIT_OK
    assert f"manual: {user} of your own entries, {quotes} quotes, {measurements} measurements" in out


# ============================================================================ damage
def truncate(path: Path, fraction: float) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(max(100, int(size * fraction) // PAGE * PAGE))


def scribble(path: Path, seed: int, pages: int = 6) -> None:
    rng = random.Random(seed)
    data = bytearray(path.read_bytes())
    for _ in range(pages):
        page = rng.randrange(1, len(data) // PAGE)
        data[page * PAGE: page * PAGE + 512] = rng.randbytes(512)
    path.write_bytes(bytes(data))


FAULTS = [("truncate", f) for f in (0.02, 0.3, 0.6, 0.95)] + [("scribble", s) for s in (1, 2, 3)] + [("header", 0)]


def damage(path: Path, kind: str, arg) -> None:
    if kind == "truncate":
        truncate(path, arg)
    elif kind == "scribble":
        scribble(path, arg)
    else:  # the 100-byte header itself
        data = bytearray(path.read_bytes())
        data[0:16] = b"not a database!!"
        path.write_bytes(bytes(data))


@pytest.mark.parametrize(("kind", "arg"), FAULTS)
def test_damage_is_detected_and_repair_keeps_every_readable_user_row(filled, capsys, kind, arg):
    expected = user_rows(filled)
    damage(filled, kind, arg)
    damaged_bytes = filled.read_bytes()
    readable = readable_rows(filled, expected)

    with pytest.raises(DamagedDatabaseError) as caught:
        Catalogue.open(None, DATA)
    assert caught.value.path == filled

    code, out, err = run_cli(capsys, "catalogue", "list", "--kind", "accelerators")
    assert code == EXIT_DAMAGED
    assert err.count("\n") == 1 and str(filled) in err and "gpudesk repair" in err and "Traceback" not in err

    code, out, err = run_cli(capsys, "repair", "--json")
    assert code == EXIT_OK, err
    (aside,) = filled.parent.glob("gpudesk.sqlite3.damaged-*")
    assert aside.read_bytes() == damaged_bytes  # kept, untouched
    repaired = user_rows(filled)
    for table, rows in readable.items():
        for key, row in rows.items():
            assert repaired[table].get(key) == row, f"{table} {key} was readable but not kept"
    cat = Catalogue.open(None, DATA)  # sound again, with the whole bundled catalogue
    assert cat.get("accelerators", "h100-sxm5-80gb") is not None
    cat.close()
    assert backup.check_file(filled) is None


def test_damage_past_the_users_rows_loses_none_of_them(filled, capsys):
    """Random bytes on pages holding only bundled rows: every user row comes back."""
    expected = user_rows(filled)
    conn = sqlite3.connect(filled)
    conn.execute("PRAGMA journal_mode=DELETE")
    pages = [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = 'cloud_offerings' AND pagetype = 'leaf'")]
    conn.close()
    data = bytearray(filled.read_bytes())
    for page in pages[:3]:
        start = (page - 1) * PAGE
        data[start + 8: start + 400] = random.Random(page).randbytes(392)
    filled.write_bytes(bytes(data))
    assert backup.check_file(filled) is not None
    report = rebuild(filled)
    assert report.lost_total == 0
    assert user_rows(filled) == expected
    measurements = len(expected["bench_measurements"])
    assert report.salvaged["bench_measurements"] == measurements and report.salvaged["price_observations"] == 2
    assert f"{measurements} bench_measurements" in report.format_text()


def test_a_sound_database_is_not_rebuilt(filled, capsys):
    code, out, _ = run_cli(capsys, "repair")
    assert code == EXIT_OK and "nothing to repair" in out
    assert list(filled.parent.glob("*.damaged-*")) == []


# ============================================================================ one-line failures
def test_help_lists_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "exit status:" in out and f"{EXIT_DAMAGED}  the database is damaged" in out
    assert f"{EXIT_DISK_FULL}  the disk is full" in out


def test_a_locked_database_says_so(filled, capsys, monkeypatch):
    monkeypatch.setattr(backup, "LOCK_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(filled)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        code, _, err = run_cli(capsys, "catalogue", "list")
    finally:
        holder.rollback()
        holder.close()
    assert code == EXIT_LOCKED
    assert err.count("\n") == 1 and "locked" in err and str(filled) in err and "Traceback" not in err


def test_a_read_only_data_folder_gives_one_line(capsys, monkeypatch, gpudesk_home):
    real_mkdir = Path.mkdir

    def read_only(self, *args, **kwargs):
        if str(self).startswith(str(gpudesk_home)):
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    code, _, err = run_cli(capsys, "catalogue", "list")
    assert code == EXIT_NOT_WRITABLE
    assert err.count("\n") == 1 and str(gpudesk_home) in err and "read-only" in err and "Traceback" not in err


def test_a_full_disk_gives_one_line_and_leaves_no_partial_backup(filled, capsys, monkeypatch):
    def full(_fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    code, _, err = run_cli(capsys, "backups", "--now")
    assert code == EXIT_DISK_FULL
    assert err.count("\n") == 1 and "disk is full" in err and "Traceback" not in err
    assert list((filled.parent / "backups").iterdir()) == []


def test_an_unexpected_error_is_logged_with_its_trace(filled, capsys, monkeypatch, gpudesk_home):
    import gpudesk.cli as cli

    def broken(_args):
        raise RuntimeError("a bug in the list")

    monkeypatch.setattr(cli, "_catalogue", broken)
    code, _, err = run_cli(capsys, "catalogue", "list")
    assert code == EXIT_UNEXPECTED
    log = gpudesk_home / "logs" / "gpudesk.log"
    assert err.count("\n") == 1 and str(log) in err and "Traceback" not in err
    text = log.read_text()
    assert "Traceback" in text and "a bug in the list" in text


def test_a_backup_of_a_locked_database_gives_up_after_the_lock_timeout(filled, capsys, monkeypatch):
    """SQLite's backup API retries a locked database for ever; the backup gives up like any reader."""
    import time

    monkeypatch.setattr(backup, "LOCK_TIMEOUT_S", 0.3)
    holder = sqlite3.connect(filled)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE catalogue_meta SET value = value WHERE key = 'version'")
    started = time.monotonic()
    try:
        code, _, err = run_cli(capsys, "backups", "--now")
    finally:
        holder.rollback()
        holder.close()
    assert code == EXIT_LOCKED and time.monotonic() - started < 10
    assert err.count("\n") == 1 and "busy" in err and "Traceback" not in err
    assert list((filled.parent / "backups").glob("*")) == []


def test_partial_backups_left_by_a_killed_program_are_pruned_once_stale(filled):
    folder = filled.parent / "backups"
    folder.mkdir()
    stale, fresh = folder / ".gpudesk-20260101-000000-daily.sqlite3.tmp", folder / ".gpudesk-x-daily.sqlite3.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"partial")
    two_hours_ago = (datetime.now() - timedelta(hours=2)).timestamp()
    os.utime(stale, (two_hours_ago, two_hours_ago))
    made = backup.make_backup(filled, "manual")
    assert not stale.exists() and fresh.exists()  # a fresh one may be another program's copy in progress
    assert [b.path for b in backup.list_backups(filled)] == [made]


def test_the_lock_timeout_can_be_set_for_a_script(monkeypatch):
    monkeypatch.setenv(backup.LOCK_TIMEOUT_ENV, "2.5")
    assert backup.lock_timeout_s() == 2.5
    monkeypatch.setenv(backup.LOCK_TIMEOUT_ENV, "soon")
    assert backup.lock_timeout_s() == backup.LOCK_TIMEOUT_S


def test_bytes_changed_inside_a_row_are_reported_and_repaired(filled, capsys):
    """Text that is no longer UTF-8 passes SQLite's quick_check; reading it is what finds it."""
    data = filled.read_bytes()
    assert data.count(b"EDGE-BOX") == 1  # the name of one of the user's entries
    filled.write_bytes(data.replace(b"EDGE-BOX", b"EDGE\xff\xfeOX"))
    code, _, err = run_cli(capsys, "catalogue", "list")
    assert code == EXIT_DAMAGED
    assert err.count("\n") == 1 and str(filled) in err and "gpudesk repair" in err and "Traceback" not in err
    code, out, err = run_cli(capsys, "repair")
    assert code == EXIT_OK and "Rebuilt" in out, err
    assert "1 accelerators" in out  # the damaged row is reported lost ...
    cat = Catalogue.open(None, DATA)
    assert cat.get("accelerators", "edge-box") is None
    assert cat.get("accelerators", "my-npu")["name"] == "MY-NPU"  # ... and the others kept
    cat.close()
