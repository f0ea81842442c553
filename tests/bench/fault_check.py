"""Fault check (not a test): damage a real gpudesk database N times and see what survives.

    python tests/bench/fault_check.py [TRIALS] [--seed N]

Builds one database with the bundled catalogue and a user's rows (entries, an edited bundled row,
quotes, imported measurements), then for each trial damages a copy - truncation at a random
point, or random bytes written over random pages - and opens it as gpudesk does. Printed: trials,
detections (open refused it as damaged), undetected (opened fine: the damage missed every page in
use, checked by reading the user's rows back), crashes (any other exception, in the open or the
repair), and the user rows lost by `repair` (of those that existed).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PAGE = 4096


def user_keys(path: Path) -> set[tuple[str, object]]:
    from gpudesk.core.catalogue.backup import CATALOGUE_TABLES

    conn = sqlite3.connect(path)
    try:
        keys = {(t, r[0]) for t in CATALOGUE_TABLES for r in conn.execute(f"SELECT id FROM {t} WHERE origin != 'bundled'")}
        keys |= {("bench_measurements", r[0]) for r in conn.execute("SELECT id FROM bench_measurements")}
        keys |= {("bench_answers", r[0]) for r in conn.execute("SELECT key FROM bench_answers")}
        return keys
    finally:
        conn.close()


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
    cat.close()
    return folder / "gpudesk.sqlite3"


def damage(path: Path, rng: random.Random) -> str:
    size = path.stat().st_size
    if rng.random() < 0.4:
        at = rng.randrange(100, size)
        with open(path, "r+b") as handle:
            handle.truncate(at)
        return f"truncated at {at}"
    data = bytearray(path.read_bytes())
    pages = rng.randint(1, 8)
    for _ in range(pages):
        at = rng.randrange(0, size - 64)
        length = rng.randint(8, 1024)
        data[at:at + length] = rng.randbytes(len(data[at:at + length]))
    path.write_bytes(bytes(data))
    return f"random bytes over {pages} places"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trials", nargs="?", type=int, default=50)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    import logging

    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="gpudesk-faults-") as tmp:
        template = build(Path(tmp) / "template")
        expected = user_keys(template)
        from gpudesk.core.catalogue import Catalogue
        from gpudesk.core.catalogue.backup import DamagedDatabaseError
        from gpudesk.core.catalogue.repair import rebuild

        totals = {"trials": 0, "detections": 0, "undetected": 0, "crashes": 0, "rows_lost": 0}
        for trial in range(args.trials):
            home = Path(tmp) / f"trial-{trial}"
            home.mkdir()
            os.environ["GPUDESK_HOME"] = str(home)
            db = home / "gpudesk.sqlite3"
            shutil.copy(template, db)
            what = damage(db, rng)
            totals["trials"] += 1
            try:
                try:
                    Catalogue.open(None, ROOT / "data").close()
                    totals["undetected"] += 1
                    lost = len(expected - user_keys(db))
                except DamagedDatabaseError:
                    totals["detections"] += 1
                    rebuild(db, ROOT / "data")
                    Catalogue.open(None, ROOT / "data").close()  # the repaired file opens
                    lost = len(expected - user_keys(db))
            except Exception as exc:  # noqa: BLE001 - counting them is the point
                totals["crashes"] += 1
                print(f"  trial {trial} ({what}): crash {type(exc).__name__}: {exc}")
                continue
            totals["rows_lost"] += lost
            if lost:
                print(f"  trial {trial} ({what}): {lost} of {len(expected)} user rows lost")
        print(f"user rows per database: {len(expected)}")
        print(" ".join(f"{k}={v}" for k, v in totals.items()))
    return 0 if totals["crashes"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
