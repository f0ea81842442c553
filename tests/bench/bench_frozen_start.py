"""Benchmark (not a test): start of the frozen app to the populated main window, beside the same
from source. Each run is a fresh process (`gpudesk --quit-after-startup` exits once the catalogue
table is filled), offscreen unless QT_QPA_PLATFORM is set; each side has its own GPUDESK_HOME,
whose first run builds the database and is reported on its own. Runs alternate between the two.
The file cache is warm after the first run: these are process starts, not starts after a reboot.

    python tests/bench/bench_frozen_start.py [--bundle dist/gpudesk/gpudesk] [--runs 7]

Build the bundle first (bash packaging/build_linux.sh). Prints the median of each and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    return elapsed


def size_mib(folder: Path) -> float:
    return sum(f.lstat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink()) / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "dist" / "gpudesk" / "gpudesk",
                        help="the frozen executable (default: dist/gpudesk/gpudesk)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter for the source run")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if not args.bundle.is_file():
        raise SystemExit(f"{args.bundle} not found: build it first (bash packaging/build_linux.sh)")
    base = dict(os.environ)
    base.setdefault("QT_QPA_PLATFORM", "offscreen")
    sides = {
        "frozen": ([str(args.bundle), "--quit-after-startup"], tempfile.mkdtemp(prefix="gpudesk-frozen-")),
        "source": ([args.python, "-m", "gpudesk", "--quit-after-startup"], tempfile.mkdtemp(prefix="gpudesk-source-")),
    }
    envs = {name: {**base, "GPUDESK_HOME": home} for name, (_cmd, home) in sides.items()}
    first = {name: timed(cmd, envs[name]) for name, (cmd, _home) in sides.items()}  # build the databases
    samples: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.runs):
        for name, (cmd, _home) in sides.items():
            samples[name].append(timed(cmd, envs[name]))

    print(f"platform: {base['QT_QPA_PLATFORM']}, {os.cpu_count()} CPUs, bundle {args.bundle.parent} "
          f"({size_mib(args.bundle.parent):.0f} MiB)")
    for name in sides:
        runs = samples[name]
        print(f"{name}: first start (builds the database) {first[name] * 1000:,.0f} ms; "
              f"to populated window, median of {args.runs}: {statistics.median(runs) * 1000:,.0f} ms "
              f"(min {min(runs) * 1000:,.0f}, max {max(runs) * 1000:,.0f})")
    ratio = statistics.median(samples["frozen"]) / statistics.median(samples["source"])
    print(f"frozen / source: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
