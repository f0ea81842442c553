"""Helpers of the fault tests: running the driver (or gpudesk) as a real subprocess, killing it,
and reading a database file afterwards with plain sqlite3 (never through gpudesk, which would
finish an interrupted upgrade and hide what the kill left)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "driver.py"
DATA = ROOT / "data"
BENCH = ROOT / "tests" / "data" / "bench"

# real benchmark logs of tests/data/bench (see its PROVENANCE.md), imported in one command
NCCL = BENCH / "nccl-tests" / "lessizzmore_2node_16xH100-80GB_all_reduce_perf_stdout.txt"
RCCL = BENCH / "nccl-tests" / "rccl-tests_PR2078+PR2075_two-tests-in-turn_ASSEMBLED.txt"
SGLANG = BENCH / "sglang" / "datacrunch_H200_llama70b_offline_Infinity.jsonl"
IMPORT_FILES = (NCCL, SGLANG, RCCL)


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, GPUDESK_HOME=str(home), QT_QPA_PLATFORM="offscreen", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONWARNINGS", None)
    env.update(extra)
    return env


def run_driver(home: Path, *args: object, kill_at: int | None = None, timeout: float = 120,
               env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the driver; with kill_at it kills itself (SIGKILL) at that step."""
    cmd = [sys.executable, str(DRIVER)]
    if kill_at:
        cmd += ["--kill-at", str(kill_at)]
    cmd += [str(a) for a in args]
    return subprocess.run(cmd, env=env or env_for(home), capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def run_gpudesk(home: Path, *args: object, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpudesk", *(str(a) for a in args)], env=env or env_for(home),
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def steps_of(result: subprocess.CompletedProcess) -> int:
    """The steps a run without --kill-at counted (its last stderr line)."""
    assert result.returncode == 0, result.stderr
    return int(result.stderr.strip().splitlines()[-1].removeprefix("steps="))


def kill_points(total: int, n: int) -> list[int]:
    """n kill steps spread over 1..total, the first and the last included."""
    return sorted({max(1, round(1 + (total - 1) * i / (n - 1))) for i in range(n)})


def killed(result: subprocess.CompletedProcess) -> bool:
    return result.returncode == -signal.SIGKILL


def integrity(path: Path) -> list[str]:
    """PRAGMA integrity_check of the database (its -wal replayed as SQLite does on open)."""
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()


def query(path: Path, sql: str, *params) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def imported_files(path: Path) -> dict[str, tuple[int, int]]:
    """{file name: (stored in bench_imports, measurements present)} of every import."""
    rows = query(path, "SELECT i.source_file, i.stored, (SELECT count(*) FROM bench_measurements m "
                       "JOIN bench_setups s ON s.id = m.setup_id WHERE s.import_id = i.id) FROM bench_imports i")
    out: dict[str, tuple[int, int]] = {}
    for name, stored, present in rows:
        assert name not in out, f"{name} imported twice"
        out[name] = (stored, present)
    return out


def user_rows(path: Path) -> dict[str, set]:
    """The user's rows of the catalogue, whole, by table."""
    from gpudesk.core.catalogue.backup import CATALOGUE_TABLES

    return {t: set(query(path, f"SELECT * FROM {t} WHERE origin != 'bundled'")) for t in CATALOGUE_TABLES}  # noqa: S608


def no_traceback(result: subprocess.CompletedProcess) -> bool:
    return "Traceback" not in result.stderr and "Traceback" not in result.stdout

# a real scenario with configurations to compare (resources/examples), for `compare --csv`
COMPARE_SCENARIO = ROOT / "resources" / "examples" / "a100-vs-rtx4090-laptop.json"
