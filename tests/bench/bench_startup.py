"""Benchmark (not a test): cold start of gpudesk to the populated main window, beside a bare
PySide6 window on the same machine. Each run is a fresh process (`gpudesk --quit-after-startup`
exits as soon as the catalogue table is filled); the first run also builds the database from
data/, so it is reported on its own.

    python tests/bench/bench_startup.py [--runs 7] [--instructions]

Also times the first frame (`gpudesk --quit-after-first-frame`): the window as first painted,
before the catalogue has opened.

Prints the median of each and their ratio, in wall time (the budget's figure) and in CPU time (user +
system seconds of the process; where the two differ, it waited for the disk or for other programs,
or ran threads side by side).

A third process is the floor any implementation has to beat: a PySide6 window with the least a
catalogue window needs before it is useful (Fusion style, a 150-row table that asks a Python model
for its cells, four menus and a status bar). What lies between it and gpudesk is gpudesk's own
work: its modules, style sheet, panels, icons and first paint.

`--instructions` also counts the instructions each process runs, once under valgrind (Debian's
`valgrind`; about half a minute each): a figure that stays within about 2% from run to run where
wall and CPU times move by 20% on a busy or virtual machine, so that a change of a few per cent
to start-up can be told from noise. It does not see waiting (disk, the second core), so it
complements the wall time, which is the budget's figure.

Both are measured with Python's bytecode cache on, in a temporary folder (PYTHONPYCACHEPREFIX), as
an installed app has its .pyc files: where PYTHONDONTWRITEBYTECODE is set (as in some CI and
sandbox shells) every start would otherwise compile gpudesk's ~40 modules again, which a user never
pays. `--no-bytecode` measures that case too.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
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


FLOOR = """
import os, sys
from PySide6.QtCore import QAbstractTableModel, Qt, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QTableView
DISPLAY = Qt.ItemDataRole.DisplayRole
class Model(QAbstractTableModel):
    def rowCount(self, parent=None): return 150
    def columnCount(self, parent=None): return 8
    def data(self, index, role=DISPLAY):
        return f"{index.row()}:{index.column()}" if role == DISPLAY else None
app = QApplication(sys.argv)
app.setStyle("Fusion")
w = QMainWindow()
view = QTableView()
view.setModel(Model())
w.setCentralWidget(view)
for title in ("&File", "&Edit", "&View", "&Help"):
    w.menuBar().addMenu(title)
w.statusBar().showMessage("ready")
w.resize(1320, 820)
w.show()
def leave():
    w.repaint()
    os._exit(0)
QTimer.singleShot(0, leave)
sys.exit(app.exec())
"""


def instructions(cmd: list[str], env: dict) -> int:
    """The instructions `cmd` runs, counted by valgrind's callgrind tool (threads included)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd], env=env,
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    found = re.search(r"Collected\s*:\s*(\d+)", proc.stdout)
    if proc.returncode != 0 or found is None:
        raise SystemExit(f"valgrind {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    return int(found.group(1))


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one run of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--instructions", action="store_true",
                        help="also count each process's instructions under valgrind (stable from run to run)")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="honour PYTHONDONTWRITEBYTECODE: compile every module on every start")
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["GPUDESK_HOME"] = tempfile.mkdtemp(prefix="gpudesk-startup-")
    if not args.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="gpudesk-startup-pyc-")
    commands = {"gpudesk": [sys.executable, "-m", "gpudesk", "--quit-after-startup"],
                "first_frame": [sys.executable, "-m", "gpudesk", "--quit-after-first-frame"],
                "bare": [sys.executable, "-c", BARE], "floor": [sys.executable, "-c", FLOOR]}

    first = timed(commands["gpudesk"], env)[0]  # builds the database from data/
    for cmd in commands.values():
        timed(cmd, env)  # warm the file cache, so that every process is measured alike
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.runs):  # interleaved, so that a busy spell of the machine hits all alike
        for name, cmd in commands.items():
            runs[name].append(timed(cmd, env))
    wall = {name: statistics.median(r[0] for r in found) for name, found in runs.items()}
    cpu = {name: statistics.median(r[1] for r in found) for name, found in runs.items()}
    bytecode = "no bytecode cache (every module compiled)" if args.no_bytecode else "bytecode cached"
    print(f"platform: {env['QT_QPA_PLATFORM']}, python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {bytecode}")
    print(f"first start (builds the database from data/): {first * 1000:,.0f} ms")
    labels = {"gpudesk": "gpudesk to populated window", "first_frame": "gpudesk to its first frame",
              "bare": "bare PySide6 window", "floor": "floor window (table, menus, status bar)"}
    for name in ("gpudesk", "first_frame", "bare", "floor"):
        walls = [r[0] for r in runs[name]]
        print(f"{labels[name]}, median of {args.runs}: {wall[name] * 1000:,.0f} ms wall "
              f"(min {min(walls) * 1000:,.0f}, max {max(walls) * 1000:,.0f}), {cpu[name] * 1000:,.0f} ms CPU")
    print(f"ratio: {wall['gpudesk'] / wall['bare']:.2f}x (populated window; budget 2.0)")
    print(f"first_frame_ratio: {wall['first_frame'] / wall['bare']:.2f}x wall, "
          f"{cpu['first_frame'] / cpu['bare']:.2f}x CPU (budget 1.30)")
    print(f"ratio_cpu: {cpu['gpudesk'] / cpu['bare']:.2f}x")
    print(f"floor_ratio: {wall['floor'] / wall['bare']:.2f}x wall, {cpu['floor'] / cpu['bare']:.2f}x CPU")
    print(f"gpudesk_over_floor_ms: {(wall['gpudesk'] - wall['floor']) * 1000:,.0f} wall, "
          f"{(cpu['gpudesk'] - cpu['floor']) * 1000:,.0f} CPU")
    if args.instructions:
        counted = {name: instructions(cmd, env) for name, cmd in commands.items()}
        print("instructions (valgrind): " + ", ".join(f"{name} {n / 1e6:,.0f} M" for name, n in counted.items()))
        print(f"ratio_instructions: {counted['gpudesk'] / counted['bare']:.2f}x, "
              f"first frame {counted['first_frame'] / counted['bare']:.2f}x, floor {counted['floor'] / counted['bare']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
