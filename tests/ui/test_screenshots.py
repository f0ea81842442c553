"""Screenshots of every view at the window sizes people use — 1280×720, 1366×768, 1920×1080, and
3840×2160 at 200% scaling — rendered offscreen, saved as PNGs (to GPUDESK_SCREENSHOT_DIR when it is
set, else a temporary folder) and checked: the window's minimum size fits 1280×720, the compare
table shows four configurations at 1366×768 without a horizontal scroll bar, and no label or
button of the cluster view is cut off.

Each scaling runs in its own process (Qt reads QT_SCALE_FACTOR when the application starts):

    python tests/ui/test_screenshots.py OUT_DIR [--scale 2] [--sizes 1920x1080]

writes the PNGs and a report.json that the test reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VIEWS = ("catalogue", "compare", "cluster", "benchmarks", "reports")
SIZES_1X = ((1280, 720), (1366, 768), (1920, 1080))
SIZE_2X = (1920, 1080)  # logical size of a 3840×2160 screen at 200%
FOUR_CONFIGURATIONS = ROOT / "resources" / "examples" / "a100-vs-jetson-nanos.json"


# ----------------------------------------------------------------------------- in the child process
def _cut_widgets(view) -> list[dict]:
    """Visible labels and buttons whose text needs more width than they have (cut or elided).
    Word-wrapped labels reflow, and labels inside a scroll area's viewport can scroll: neither counts."""
    from PySide6.QtWidgets import QAbstractButton, QLabel

    out = []
    for widget in view.findChildren(QLabel) + view.findChildren(QAbstractButton):
        if not widget.isVisibleTo(view) or not widget.text().strip() or widget.width() <= 1:
            continue
        if isinstance(widget, QLabel) and (widget.wordWrap() or widget.textFormat() == 1 and "<" in widget.text()):
            continue
        needed = widget.sizeHint().width()
        if needed > widget.width() + 1:
            out.append({"class": type(widget).__name__, "name": widget.objectName(), "text": widget.text()[:80],
                        "needed": needed, "width": widget.width()})
    return out


def _toolbars_overflow(view) -> list[str]:
    """Toolbars whose actions do not all fit (Qt then hides some behind a » button)."""
    from PySide6.QtWidgets import QToolBar, QToolButton

    out = []
    for bar in view.findChildren(QToolBar):
        if not bar.isVisibleTo(view):
            continue
        extension = [b for b in bar.findChildren(QToolButton) if b.objectName() == "qt_toolbar_ext_button"]
        if extension and extension[0].isVisible():
            out.append(bar.objectName() or "toolbar")
    return out


def _buyer_columns(view) -> dict:
    """How far the accelerators' buyer columns (name to price date) reach, and the table's width."""
    from gpudesk.ui.catalogue.columns import DEFAULT_COLUMNS

    header = view.table.horizontalHeader()
    keys = DEFAULT_COLUMNS["accelerators"][:DEFAULT_COLUMNS["accelerators"].index("latest_price_date") + 1]
    right = max(header.sectionViewportPosition(view.model.column_index(k)) + header.sectionSize(
        view.model.column_index(k)) for k in keys)
    return {"kind": view.kind, "right": right, "viewport": view.table.viewport().width(),
            "scrolled": view.table.horizontalScrollBar().value()}


def render(out: Path, sizes: list[tuple[int, int]]) -> dict:
    from PySide6.QtWidgets import QApplication

    from gpudesk.ui.app import make_application
    from gpudesk.ui.main_window import MainWindow

    make_application()
    win = MainWindow()
    win.show()
    win.start()
    if not win.wait_loaded(60000):
        raise SystemExit("the catalogue did not open")
    ratio = win.devicePixelRatioF()
    compare = win.page("compare")
    compare.load_path(FOUR_CONFIGURATIONS, as_preset=True)
    compare.add_configuration()
    compare.refresh()
    cluster = win.page("cluster")
    cluster.ask_recover = lambda when: False
    report: dict = {"device_pixel_ratio": ratio, "minimum": [win.minimumSize().width(), win.minimumSize().height()],
                    "minimum_hint": [win.minimumSizeHint().width(), win.minimumSizeHint().height()], "shots": []}
    for width, height in sizes:
        win.resize(width, height)
        for key in VIEWS:
            view = win.show_page(key)
            for _ in range(3):
                QApplication.processEvents()
            if key == "cluster":
                cluster.canvas.fit()
                cluster.update_estimate()
                QApplication.processEvents()
            name = f"{key}-{round(width * ratio)}x{round(height * ratio)}.png"
            pixmap = win.grab()
            pixmap.save(str(out / name), "PNG")
            shot = {"view": key, "size": [width, height], "file": name,
                    "window": [win.width(), win.height()], "pixels": [pixmap.width(), pixmap.height()],
                    "cut": _cut_widgets(view), "toolbar_overflow": _toolbars_overflow(view)}
            if key == "catalogue":
                shot["catalogue"] = _buyer_columns(view)
                shot["sidebar_width"] = win.sidebar.width()
            if key == "compare":
                table = compare.table
                shot["compare"] = {"columns": compare.model.columnCount(),
                                   "horizontal_scroll": table.horizontalScrollBar().isVisible()
                                   or table.horizontalScrollBar().maximum() > 0}
            report["shots"].append(shot)
    (out / f"report-{ratio:g}x.json").write_text(json.dumps(report, indent=1))
    return report


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES_1X))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    render(args.out, sizes)
    os._exit(0)  # skip the teardown of a window with live worker threads


# ----------------------------------------------------------------------------- the test
def _run(out: Path, scale: int, sizes, env_home: Path) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", GPUDESK_HOME=str(env_home), QT_SCALE_FACTOR=str(scale))
    proc = subprocess.run([sys.executable, __file__, str(out), "--sizes", ",".join(f"{w}x{h}" for w, h in sizes)],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((out / f"report-{scale:g}x.json").read_text())


def test_every_view_at_every_size(catalogue, gpudesk_home, tmp_path):
    out = Path(os.environ.get("GPUDESK_SCREENSHOT_DIR") or tmp_path / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    one = _run(out, 1, SIZES_1X, gpudesk_home)
    two = _run(out, 2, [SIZE_2X], gpudesk_home)
    assert two["device_pixel_ratio"] == 2

    # every view at every size, saved at the screen's resolution
    shots = one["shots"] + two["shots"]
    expected = {f"{v}-{w}x{h}.png" for v in VIEWS for w, h in [*SIZES_1X, (3840, 2160)]}
    assert {s["file"] for s in shots} == expected
    for shot in shots:
        assert (out / shot["file"]).stat().st_size > 10_000, shot["file"]  # a drawn window, not a blank one
    for shot in two["shots"]:
        assert shot["pixels"] == [3840, 2160]

    # the window can be made as small as a 1280×720 screen, and is, at that size
    for report in (one, two):
        assert report["minimum"][0] <= 1280 and report["minimum"][1] <= 720
        assert report["minimum_hint"][0] <= 1280 and report["minimum_hint"][1] <= 720
    for shot in one["shots"]:
        assert shot["window"] == shot["size"], shot

    # four configurations fit the compare table at 1366×768 (and larger) with no sideways scrolling
    for shot in shots:
        if shot["view"] == "compare" and shot["size"][0] >= 1366:
            assert shot["compare"]["columns"] == 6
            assert not shot["compare"]["horizontal_scroll"], shot["file"]

    # the catalogue's buyer columns (memory, bandwidth, peaks, TDP, price and its date) are all in
    # sight at every size, the navigation a rail of icons below 1500 pixels
    for shot in shots:
        if shot["view"] == "catalogue":
            columns = shot["catalogue"]
            assert columns["kind"] == "accelerators" and columns["scrolled"] == 0
            assert columns["right"] <= columns["viewport"], (shot["file"], columns)
            assert shot["sidebar_width"] == (56 if shot["size"][0] < 1500 else 190), shot["file"]

    # the cluster view: no label or button is cut off, and its toolbar needs no overflow menu
    for shot in shots:
        if shot["view"] == "cluster":
            assert shot["cut"] == [], (shot["file"], shot["cut"])
            assert shot["toolbar_overflow"] == [], shot["file"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
