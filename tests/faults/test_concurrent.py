"""Two programs writing to one data folder at once: both imports land, nothing is lost or stored
twice; a program kept waiting past the lock timeout is told that the database is busy (exit 6),
in one line, and changes nothing; reading goes on while another program writes (WAL)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from gpudesk.cli import EXIT_LOCKED

from ._util import NCCL, ROOT, SGLANG, env_for, imported_files, integrity, no_traceback, run_gpudesk

HOLD_S = 4.0  # the lock is held while both programs start, so that both wait for it


def _start(home: Path, *args, **env) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gpudesk", *(str(a) for a in args)], env=env_for(home, **env),
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _holding_the_write_lock(db: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # what a program in the middle of a write holds
    return holder


def _reference_counts(home_with) -> dict[str, tuple[int, int]]:
    home = home_with()
    result = run_gpudesk(home, "import", NCCL, SGLANG)
    assert result.returncode == 0, result.stderr
    return imported_files(home / "gpudesk.sqlite3")


def test_two_imports_at_once_both_land_once(home_with):
    expected = _reference_counts(home_with)
    home = home_with()
    db = home / "gpudesk.sqlite3"
    holder = _holding_the_write_lock(db)
    try:
        procs = [_start(home, "import", NCCL), _start(home, "import", SGLANG)]
        time.sleep(HOLD_S)
    finally:
        holder.execute("COMMIT")
        holder.close()
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    for code, _out, err in results:
        assert code == 0 and "Traceback" not in err, err
    assert "stored 187" in results[0][1] and "stored 35" in results[1][1]
    assert imported_files(db) == expected
    assert integrity(db) == ["ok"]


def test_the_same_file_imported_twice_at_once_is_stored_once(home_with):
    expected = {NCCL.name: _reference_counts(home_with)[NCCL.name]}
    home = home_with()
    db = home / "gpudesk.sqlite3"
    before = imported_files(db)
    holder = _holding_the_write_lock(db)
    try:
        procs = [_start(home, "import", NCCL), _start(home, "import", NCCL)]
        time.sleep(HOLD_S)
    finally:
        holder.execute("COMMIT")
        holder.close()
    results = sorted((p.wait(timeout=120), *p.communicate()) for p in procs)
    assert [code for code, _, _ in results] == [0, 0], results
    outs = sorted(out for _, out, _ in results)
    assert sum("stored 187" in o for o in outs) == 1
    assert sum("already imported" in o for o in outs) == 1  # the other says so, in words
    assert imported_files(db) == before | expected
    (count,) = sqlite3.connect(db).execute("SELECT count(*) FROM bench_measurements").fetchone()
    assert count == sum(present for _, present in (before | expected).values())  # no figure twice


def test_a_lock_held_past_the_timeout_says_busy_and_changes_nothing(home_with):
    home = home_with()
    db = home / "gpudesk.sqlite3"
    before = imported_files(db)
    holder = _holding_the_write_lock(db)
    try:
        reading = run_gpudesk(home, "catalogue", "show", "h100-sxm5-80gb")  # readers do not wait (WAL)
        assert reading.returncode == 0 and "h100-sxm5-80gb" in reading.stdout, reading.stderr
        waited = run_gpudesk(home, "import", NCCL, env=env_for(home, GPUDESK_LOCK_TIMEOUT_S="0.5"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert waited.returncode == EXIT_LOCKED, waited.stderr
    err = waited.stderr
    assert err.count("\n") == 1 and str(db) in err and "busy" in err and "locked" in err and no_traceback(waited)
    assert imported_files(db) == before
    assert integrity(db) == ["ok"]
