"""Fault check (not a test): damage and kill a real gpudesk database many times, and count.

    python tests/bench/fault_check.py [--trials N] [--kill-points N] [--seed S] [--kinds K,K...]

Builds one database with the bundled catalogue and a user's rows (entries, an edited bundled row,
quotes, imported measurements, remembered answers), then runs each fault kind:

damage (a copy of the file, a backup made before the damage):
  truncate      the file cut at a random byte
  scribble      random bytes over 1-8 random places
  user-page     random bytes over one whole page that holds user rows
  interior-page random bytes over an interior (non-leaf) b-tree page of a table holding user rows
  header        the 100-byte file header overwritten
  Each: `gpudesk catalogue list` (a one-line message and exit 5 expected, or exit 0 when the
  damage missed every page in use), `gpudesk repair`, then `gpudesk repair --from-backup newest`.

kill (SIGKILL of a real process, tests/faults/driver.py, at steps spread over the whole run):
  kill-import   `gpudesk import` of three real benchmark logs: each file all or nothing
  kill-upgrade  opening with a newer bundled catalogue: wholly old or wholly new
  kill-save     saving a scenario file: the old or the new bytes, never a mix
  Each kill is followed by a normal run that must finish the job.

commands: every CLI command (catalogue list/show/export/import, estimate, compare, import, backups,
  repair) against a truncated database, a destroyed header, a database another program holds
  locked, a read-only data folder and a full disk (the last two on a tmpfs in a private mount
  namespace: root only); each must answer in one line with the fault's exit status (or 1/9 for a
  failure of its own), never a traceback; `repair` may succeed, and so may listing the backups
  (it reads only the backups folder).

Printed per kind: trials; failures (a broken promise: a damaged file opened without a message, a
message not on one line or with the wrong exit status, a repaired file that fails
PRAGMA integrity_check, a partial import, a mixed catalogue, a partial scenario file); crashes
(a Python traceback reaching the user, or exit status 10 'unexpected'); rows lost (rebuild): user
rows that were readable in the damaged file by any salvage reader (tests/faults/salvage.py:
lookups, scans, `sqlite3 .recover`) but not in the repaired database; rows lost (restore): user
rows of the backup not in the database restored from it; unreadable: user rows that no reader
could get from the damaged file (lost to the damage itself, counted apart); wrong: user rows in the
rebuilt file equal to no row of the sound file (a damaged row taken for a sound one). For kills,
rows lost counts the user's earlier rows missing after the kill.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.faults import salvage  # noqa: E402
from tests.faults._util import (  # noqa: E402
    IMPORT_FILES,
    imported_files,
    integrity,
    kill_points,
    killed,
    query,
    run_driver,
    steps_of,
)

DAMAGE_KINDS = ("truncate", "scribble", "user-page", "interior-page", "header")
KILL_KINDS = ("kill-import", "kill-upgrade", "kill-save")
SWEEP_KINDS = ("commands",)
PAGE = 4096


@dataclass
class Tally:
    trials: int = 0
    detected: int = 0
    failures: int = 0
    crashes: int = 0
    readable: int = 0
    lost_rebuild: int = 0
    lost_restore: int = 0
    unreadable: int = 0
    wrong: int = 0
    notes: list[str] = field(default_factory=list)

    def fail(self, trial: int, what: str) -> None:
        self.failures += 1
        self.notes.append(f"trial {trial}: {what}")


# ============================================================================ the database
def build(folder: Path) -> Path:
    os.environ["GPUDESK_HOME"] = str(folder)
    from gpudesk.core.benchmarks.store import import_files
    from gpudesk.core.catalogue import Catalogue

    cat = Catalogue.open(None, ROOT / "data")
    for i in range(8):
        cat.add_item("accelerators", {"id": f"lab-{i}", "name": f"Lab {i}", "vendor": "Lab", "memory_gb": str(8 + i)},
                     source={"title": f"Lab sheet {i}"})
    for i, item in enumerate(("h100-sxm5-80gb", "a100-sxm4-80gb", "rtx-4090")):
        cat.add_price_quote(item, str(10000 + i), when="2026-10-01", supplier=f"Vendor {i}")
    cat.update_item("accelerators", "rtx-4090", {"tdp_w": "400"}, source={"title": "Our power limit"})
    bench = ROOT / "tests" / "data" / "bench"
    import_files(cat, sorted(p for p in bench.rglob("*.json*") if p.is_file())[:6], gpu="h100-sxm5-80gb", count=1)
    import_files(cat, sorted(p for p in bench.rglob("*.txt") if p.is_file() and p not in IMPORT_FILES))
    cat.close()
    db = folder / "gpudesk.sqlite3"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db


def pages_of(db: Path, leaf: bool) -> list[int]:
    """Pages (1-based) of the tables that hold user rows: leaves, or interior b-tree pages."""
    from gpudesk.core.catalogue.repair import USER_TABLES

    names = tuple(t for t, _ in USER_TABLES)
    conn = sqlite3.connect(db)
    try:
        kinds = ("leaf",) if leaf else ("internal",)
        return [r[0] for r in conn.execute(
            f"SELECT pageno FROM dbstat WHERE name IN ({', '.join('?' * len(names))}) AND pagetype IN "  # noqa: S608
            f"({', '.join('?' * len(kinds))})", (*names, *kinds))]
    finally:
        conn.close()


def damage(path: Path, kind: str, rng: random.Random, leaves: list[int], interiors: list[int]) -> str:
    data = bytearray(path.read_bytes())
    size = len(data)
    if kind == "truncate":
        at = rng.randrange(100, size)
        del data[at:]
        what = f"cut at byte {at} of {size}"
    elif kind == "scribble":
        spots = rng.randint(1, 8)
        for _ in range(spots):
            at = rng.randrange(0, size - 64)
            length = rng.randint(8, 1024)
            data[at:at + length] = rng.randbytes(len(data[at:at + length]))
        what = f"random bytes over {spots} places"
    elif kind in ("user-page", "interior-page"):
        pool = leaves if kind == "user-page" else interiors
        page = rng.choice(pool)
        start = (page - 1) * PAGE
        data[start:start + PAGE] = rng.randbytes(PAGE)
        what = f"random bytes over page {page}"
    else:
        data[0:100] = rng.randbytes(100)
        what = "header overwritten"
    path.write_bytes(bytes(data))
    return what


def cli(*argv: str) -> tuple[int, str]:
    """gpudesk's command line in this process: its exit status and what it printed on stderr
    (an exception escaping main counts as a traceback reaching the user)."""
    from gpudesk.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(list(argv))
        except BaseException as exc:  # noqa: BLE001 - what the user would have seen
            import traceback

            return -1, "Traceback (most recent call last):\n" + "".join(traceback.format_exception(exc))
    return code, err.getvalue()


def crashed(code: int, err: str) -> bool:
    from gpudesk.cli import EXIT_UNEXPECTED

    return code in (-1, EXIT_UNEXPECTED) or "Traceback" in err


def damage_trials(kind: str, trials: int, rng: random.Random, template: Path, work: Path,
                  use_recover: bool) -> Tally:
    from gpudesk.cli import EXIT_DAMAGED, EXIT_OK
    from gpudesk.core.catalogue import backup

    tally = Tally()
    expected = salvage.user_rows_by_rowid(template)
    schema = salvage.schema_of(template)
    originals = {t: set(rows.values()) for t, rows in expected.items()}
    leaves, interiors = pages_of(template, True), pages_of(template, False)
    for trial in range(trials):
        home = work / f"{kind}-{trial}"
        home.mkdir()
        os.environ["GPUDESK_HOME"] = str(home)
        db = home / "gpudesk.sqlite3"
        shutil.copy(template, db)
        backup.make_backup(db, "manual")
        what = damage(db, kind, rng, leaves, interiors)
        tally.trials += 1
        readable = salvage.readable(db, expected, use_recover, schema)
        tally.readable += salvage.total(readable)
        tally.unreadable += salvage.total(expected) - salvage.total(readable)
        code, err = cli("catalogue", "list")
        if crashed(code, err):
            tally.crashes += 1
            tally.notes.append(f"trial {trial} ({what}): crash on open: {err.strip().splitlines()[-1]}")
            continue
        if code == EXIT_OK:
            lost = salvage.missing(readable, salvage.present(db, expected))
            if lost:
                tally.fail(trial, f"({what}) opened without a message, but {lost} readable user rows are not there")
            tally.lost_rebuild += lost
        elif code != EXIT_DAMAGED or err.count("\n") != 1 or str(db) not in err:
            tally.fail(trial, f"({what}) exit {code}: {err.strip()[:200]}")
            continue
        else:
            tally.detected += 1
            code, err = cli("repair")
            if crashed(code, err):
                tally.crashes += 1
                tally.notes.append(f"trial {trial} ({what}): crash in repair: {err.strip().splitlines()[-1]}")
                continue
            if code != EXIT_OK or integrity(db) != ["ok"]:
                tally.fail(trial, f"({what}) repair exit {code}: {err.strip()[:200]}")
                continue
            lost = salvage.missing(readable, salvage.present(db, expected))
            tally.lost_rebuild += lost
            wrong = sum(len(set(rows.values()) - originals.get(t, set()))
                        for t, rows in salvage.user_rows_by_rowid(db).items())
            tally.wrong += wrong
            if wrong:
                tally.notes.append(f"trial {trial} ({what}): {wrong} user rows in the rebuilt file differ from "
                                   "every row of the sound file")
            if lost:
                tally.notes.append(f"trial {trial} ({what}): rebuild lost {lost} of {salvage.total(readable)} "
                                   "readable user rows")
        code, err = cli("repair", "--from-backup", "newest")
        if crashed(code, err):
            tally.crashes += 1
            tally.notes.append(f"trial {trial} ({what}): crash in restore: {err.strip().splitlines()[-1]}")
            continue
        if code != EXIT_OK or integrity(db) != ["ok"]:
            tally.fail(trial, f"({what}) restore exit {code}: {err.strip()[:200]}")
            continue
        tally.lost_restore += salvage.missing(expected, salvage.present(db, expected))
    return tally


# ============================================================================ kills
def kill_trials(kind: str, points: int, template: Path, work: Path) -> Tally:
    tally = Tally()
    expected = salvage.user_rows_by_rowid(template)

    def fresh(name: str) -> Path:
        home = work / name
        home.mkdir()
        shutil.copy(template, home / "gpudesk.sqlite3")
        return home

    if kind == "kill-import":
        reference = fresh(f"{kind}-reference")
        total = steps_of(run_driver(reference, "cli", "import", *IMPORT_FILES))
        done = imported_files(reference / "gpudesk.sqlite3")
        before = imported_files(template)
        args: tuple = ("cli", "import", *IMPORT_FILES)
    elif kind == "kill-upgrade":
        data = work / "newer-data"
        shutil.copytree(ROOT / "data", data)
        toml = data / "catalogue.toml"
        toml.write_text(toml.read_text().replace('version = "', 'version = "2099.', 1))
        path = data / "accelerators" / "nvidia-datacenter.toml"
        path.write_text(path.read_text().replace("tdp_w = 250\n", "tdp_w = 251\n", 1))
        reference = fresh(f"{kind}-reference")
        total = steps_of(run_driver(reference, "upgrade", data))
        old_meta = dict(query(template, "SELECT key, value FROM catalogue_meta"))
        new_meta = dict(query(reference / "gpudesk.sqlite3", "SELECT key, value FROM catalogue_meta"))
        args = ("upgrade", data)
    else:
        return save_kills(points, work)

    for trial, step in enumerate(kill_points(total, points)):
        home = fresh(f"{kind}-{trial}")
        db = home / "gpudesk.sqlite3"
        result = run_driver(home, *args, kill_at=step)
        tally.trials += 1
        if "Traceback" in result.stderr:
            tally.crashes += 1
            tally.notes.append(f"step {step}: {result.stderr.strip().splitlines()[-1]}")
        if not killed(result):
            tally.fail(trial, f"step {step}: not killed (exit {result.returncode})")
            continue
        if integrity(db) != ["ok"]:
            tally.fail(trial, f"step {step}: integrity_check failed")
            continue
        if kind == "kill-import":
            found = imported_files(db)
            names = [p.name for p in IMPORT_FILES]
            landed = [n for n in names if n in found]
            if landed != names[:len(landed)] or any(found[n] != done[n] for n in landed) or \
                    {k: v for k, v in found.items() if k not in names} != before:
                tally.fail(trial, f"step {step}: a partial import {found}")
        else:
            meta = dict(query(db, "SELECT key, value FROM catalogue_meta"))
            p100 = query(db, "SELECT tdp_w FROM accelerators WHERE id = 'p100-pcie-16gb'")[0][0]
            if (meta.get("fingerprint"), p100) not in ((old_meta["fingerprint"], 250), (new_meta["fingerprint"], 251)):
                tally.fail(trial, f"step {step}: a mixed catalogue ({meta.get('version')}, p100 {p100} W)")
        tally.lost_rebuild += salvage.missing(expected, salvage.present(db, expected))
        again = run_driver(home, *args)
        if again.returncode != 0 or "Traceback" in again.stderr:
            tally.crashes += "Traceback" in again.stderr
            tally.fail(trial, f"step {step}: the next run failed: {again.stderr.strip()[-200:]}")
        elif kind == "kill-import" and imported_files(db) != done:
            tally.fail(trial, f"step {step}: the next run did not finish the import")
    return tally


def save_kills(points: int, work: Path) -> Tally:
    """Kills at the four points of an atomic write, then after random delays in a save loop."""
    import subprocess

    from gpudesk.core.scenario import load_scenario, save_scenario
    from tests.faults._util import DRIVER, env_for

    tally = Tally()
    examples = ROOT / "resources" / "examples"
    old, new = examples / "a100-vs-rtx4090-laptop.json", examples / "llama3-70b-serving-20-users.json"
    texts = []
    for i, path in enumerate((old, new)):
        out = work / f"reference-{i}.json"
        save_scenario(load_scenario(path), out)
        texts.append(out.read_bytes())
    target = work / "plan.json"
    for trial, point in enumerate(("before-write", "mid-write", "after-fsync", "after-replace")):
        target.write_bytes(texts[0])
        result = run_driver(work, "save", target, new, point)
        tally.trials += 1
        if not killed(result) or target.read_bytes() != texts[point == "after-replace"]:
            tally.fail(trial, f"kill {point}: the file holds {len(target.read_bytes())} bytes")
    rng = random.Random(points)
    for trial in range(points):
        proc = subprocess.Popen([sys.executable, str(DRIVER), "--ready", "save-loop", str(target), str(old), str(new)],
                                env=env_for(work), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        proc.stdout.readline()
        time.sleep(rng.uniform(0.01, 0.5))
        proc.kill()
        _, err = proc.communicate(timeout=30)
        tally.trials += 1
        tally.crashes += "Traceback" in err
        if target.read_bytes() not in texts:
            tally.fail(trial, f"delay kill: a partial file of {len(target.read_bytes())} bytes")
    return tally


# ============================================================================ every command, every fault
COMMAND_FAULTS = ("damaged-truncated", "damaged-header", "locked", "read-only", "disk-full")


def command_sweep(template: Path, work: Path) -> Tally:
    """Every CLI command against each fault, in a real process: a crash is a traceback on stderr
    or exit 10; a failure is a message not on one line, or a fault's exit status not given."""
    import shlex
    import subprocess

    from gpudesk.cli import EXIT_DAMAGED, EXIT_DISK_FULL, EXIT_LOCKED, EXIT_NOT_WRITABLE
    from tests.faults._util import COMPARE_SCENARIO, NCCL, env_for, run_gpudesk

    tally = Tally()
    examples = ROOT / "resources" / "examples"
    bundle = work / "bundle.zip"
    sound = work / "sound"
    sound.mkdir()
    shutil.copy(template, sound / "gpudesk.sqlite3")
    assert run_gpudesk(sound, "catalogue", "export", bundle).returncode == 0
    commands = [["catalogue", "list"], ["catalogue", "show", "h100-sxm5-80gb"], ["catalogue", "export", "OUT/b.zip"],
                ["catalogue", "import", bundle, "--dry-run"], ["estimate", examples / "nanochat-d20-8xh100.json"],
                ["compare", COMPARE_SCENARIO, "--csv", "OUT/t.csv"], ["import", NCCL], ["backups"],
                ["backups", "--now"], ["repair", "--from-backup", "newest"], ["repair"]]
    expected_code = {"damaged-truncated": EXIT_DAMAGED, "damaged-header": EXIT_DAMAGED, "locked": EXIT_LOCKED,
                     "read-only": EXIT_NOT_WRITABLE, "disk-full": EXIT_DISK_FULL}
    can_mount = shutil.which("unshare") and subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "true"], capture_output=True).returncode == 0
    for fault in COMMAND_FAULTS:
        if fault in ("read-only", "disk-full") and not can_mount:
            print(f"  commands/{fault}: skipped (no private mount namespace)")
            continue
        for trial, argv in enumerate(commands):
            home = work / f"{fault}-{trial}"
            home.mkdir()
            db = home / "gpudesk.sqlite3"
            shutil.copy(template, db)
            if fault.startswith("damaged"):
                data = bytearray(db.read_bytes())
                data = data[: len(data) // 2] if fault == "damaged-truncated" else bytes(100) + data[100:]
                db.write_bytes(bytes(data))
            args = [str(a).replace("OUT/", f"{home}/") for a in argv]
            holder = None
            if fault == "locked":
                holder = sqlite3.connect(db, isolation_level=None)
                holder.execute("PRAGMA locking_mode=EXCLUSIVE")
                holder.execute("BEGIN EXCLUSIVE")
                holder.execute("UPDATE catalogue_meta SET value = value WHERE key = 'version'")
            try:
                if fault in ("read-only", "disk-full"):
                    mnt = home / "mnt"
                    q = shlex.quote
                    script = [f"mkdir -p {q(str(mnt))}", f"mount -t tmpfs -o size=4096k tmpfs {q(str(mnt))}",
                              f"cp {q(str(db))} {q(str(mnt))}/"]
                    if fault == "read-only":
                        script.append(f"mount -o remount,ro {q(str(mnt))}")
                    else:
                        script += [f"dd if=/dev/zero of={q(str(mnt))}/filler bs=4k 2>/dev/null",
                                   f"truncate -s -16K {q(str(mnt))}/filler"]
                    args = [a.replace(f"{home}/", f"{mnt}/") for a in args]
                    script.append(f"GPUDESK_HOME={q(str(mnt))} {q(sys.executable)} -m gpudesk "
                                  + " ".join(q(a) for a in args))
                    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                             "\n".join(script)], capture_output=True, text=True, cwd=ROOT, timeout=300)
                else:
                    result = run_gpudesk(home, *args, env=env_for(home, GPUDESK_LOCK_TIMEOUT_S="0.3"), timeout=60)
            except subprocess.TimeoutExpired:
                tally.trials += 1
                tally.fail(trial, f"{fault}: gpudesk {' '.join(map(str, argv))}: still running after 60 s")
                continue
            finally:
                if holder is not None:
                    holder.rollback()
                    holder.close()
            tally.trials += 1
            code, err = result.returncode, result.stderr
            if crashed(code, err):
                tally.crashes += 1
                tally.notes.append(f"{fault}: gpudesk {' '.join(map(str, argv))}: exit {code}: {err.strip()[-300:]}")
            elif code != 0 and (err.count("\n") != 1 or code not in (expected_code[fault], 1, 9)):
                tally.fail(trial, f"{fault}: gpudesk {' '.join(map(str, argv))}: exit {code}: {err.strip()[:300]}")
            elif code == 0 and argv[0] != "repair" and argv != ["backups"] and fault != "locked":
                tally.fail(trial, f"{fault}: gpudesk {' '.join(map(str, argv))}: exit 0 despite the fault")
            else:
                tally.notes.append(f"{fault}: gpudesk {' '.join(map(str, argv))}: exit {code}: {err.strip()[:160]}")
    return tally


# ============================================================================ main
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30, help="damage trials per kind (default 30)")
    parser.add_argument("--kill-points", type=int, default=16, help="kill points per kill kind (default 16)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--kinds", default=",".join(DAMAGE_KINDS + KILL_KINDS + SWEEP_KINDS))
    parser.add_argument("--no-recover", action="store_true", help="do not use `sqlite3 .recover` as a reader")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each failure, crash and loss")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    use_recover = not args.no_recover and shutil.which("sqlite3") is not None
    use_recover = use_recover and salvage.recover_works()
    print("readers: rowid lookups, table scans, page-by-page read"
          + (", sqlite3 .recover" if use_recover else " (no sqlite3 shell with a working .recover)"))
    rng = random.Random(args.seed)
    header = f"{'kind':<14}{'trials':>7}{'detected':>9}{'failures':>9}{'crashes':>8}{'readable':>9}" \
             f"{'lost(rebuild)':>14}{'lost(restore)':>14}{'unreadable':>11}{'wrong':>6}"
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpudesk-faults-") as tmp:
        template = build(Path(tmp) / "template")
        print(f"user rows per database: {salvage.total(salvage.user_rows_by_rowid(template))}")
        for kind in args.kinds.split(","):
            work = Path(tmp) / kind
            work.mkdir()
            started = time.perf_counter()
            if kind in DAMAGE_KINDS:
                tally = damage_trials(kind, args.trials, rng, template, work, use_recover)
            elif kind in KILL_KINDS:
                tally = kill_trials(kind, args.kill_points, template, work)
            elif kind in SWEEP_KINDS:
                tally = command_sweep(template, work)
            else:
                parser.error(f"unknown kind {kind}")
            rows.append((kind, tally))
            print(f"  {kind}: {tally.trials} trials in {time.perf_counter() - started:.0f} s", flush=True)
            if args.verbose:
                for note in tally.notes:
                    print(f"    {note}")
    print(header)
    for kind, t in rows:
        dash = "-" if kind in KILL_KINDS + SWEEP_KINDS else None
        print(f"{kind:<14}{t.trials:>7}{dash or t.detected:>9}{t.failures:>9}{t.crashes:>8}{dash or t.readable:>9}"
              f"{t.lost_rebuild:>14}{dash or t.lost_restore:>14}{dash or t.unreadable:>11}{dash or t.wrong:>6}")
    bad = sum(t.failures + t.crashes + t.lost_rebuild + t.lost_restore + t.wrong for _, t in rows)
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
