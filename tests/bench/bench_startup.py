"""Benchmark (not a test): cold start of gpudesk to the populated main window, beside a bare
PySide6 window on the same machine. Each run is a fresh process (`gpudesk --quit-after-startup`
exits as soon as the catalogue table is filled); the first run also builds the database from
data/, so it is reported on its own.

    python tests/bench/bench_startup.py [--runs 7]

Prints the median of each and their ratio.

Both are measured with Python's bytecode cache on, in a temporary folder (PYTHONPYCACHEPREFIX), as
an installed app has its .pyc files: where PYTHONDONTWRITEBYTECODE is set (as in some CI and
sandbox shells) every start would otherwise compile gpudesk's ~40 modules again, which a user never
pays. `--no-bytecode` measures that case too.
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

BARE = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow
app = QApplication(sys.argv)
w = QMainWindow()
w.setCentralWidget(QLabel("hello"))
w.resize(1200, 800)
w.show()
QTimer.singleShot(0, app.quit)
sys.exit(app.exec())
"""


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-bytecode", action="store_true",
                        help="honour PYTHONDONTWRITEBYTECODE: compile every module on every start")
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["GPUDESK_HOME"] = tempfile.mkdtemp(prefix="gpudesk-startup-")
    if not args.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="gpudesk-startup-pyc-")
    app_cmd = [sys.executable, "-m", "gpudesk", "--quit-after-startup"]
    bare_cmd = [sys.executable, "-c", BARE]

    first = timed(app_cmd, env)  # builds the database from data/
    timed(bare_cmd, env)  # warm the file cache for PySide6 too, so both are measured alike
    app, bare = [], []
    for _ in range(args.runs):
        bare.append(timed(bare_cmd, env))
        app.append(timed(app_cmd, env))
    app_median, bare_median = statistics.median(app), statistics.median(bare)
    bytecode = "no bytecode cache (every module compiled)" if args.no_bytecode else "bytecode cached"
    print(f"platform: {env['QT_QPA_PLATFORM']}, python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {bytecode}")
    print(f"first start (builds the database from data/): {first * 1000:,.0f} ms")
    print(f"gpudesk to populated window, median of {args.runs}: {app_median * 1000:,.0f} ms "
          f"(min {min(app) * 1000:,.0f}, max {max(app) * 1000:,.0f})")
    print(f"bare PySide6 window, median of {args.runs}: {bare_median * 1000:,.0f} ms "
          f"(min {min(bare) * 1000:,.0f}, max {max(bare) * 1000:,.0f})")
    print(f"ratio: {app_median / bare_median:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
