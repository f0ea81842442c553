"""`gpudesk --self-test`: check an installation offscreen, one named step at a time.

Run it right after freezing and again from the installed copy. It prints one line per check
(`ok   catalogue: ...` or `FAIL catalogue: ...`), writes the same as `self-test.json` into the
GPUDESK_HOME folder (a frozen Windows build has no console), and returns 0 when every check
passed, else 1. A run that hangs (a modal dialog, a dead lock) ends after TIMEOUT_S with 1.

Qt runs offscreen unless QT_QPA_PLATFORM is already set. Without GPUDESK_HOME the run uses a
temporary home, so the user's database, settings and logs are never touched; that folder is
removed afterwards except for its self-test.json. With GPUDESK_HOME set, that folder is used.

More checks: decorate a function of the `SelfTest` context with `@register("name")`, in this
module or in one imported at its end. Checks run in the order they were registered; each
returns a one-line detail for its `ok` line, or raises `CheckFailed` (any other exception fails
it too, with the traceback in the JSON report). The context offers `t.app()` (the QApplication),
`t.catalogue()`, `t.window` (the loaded MainWindow, after the "main window" check), `t.scratch`
(a temporary folder for files) and `t.dialogs` (message boxes the window tried to open). E.g.:

    @register("compare pdf")
    def check_compare_pdf(t: SelfTest) -> str:
        path = t.scratch / "compare.pdf"
        ...  # render it
        _require(path.read_bytes().startswith(b"%PDF"), f"{path} is not a PDF")
        return f"{path.stat().st_size:,} bytes"
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpudesk import APP_NAME, __version__

REPORT_NAME = "self-test.json"
EXAMPLE_SCENARIO = ("examples", "nanochat-d20-8xh100.json")
MIN_ACCELERATORS = 45
TIMEOUT_S = 180.0


class CheckFailed(Exception):
    """A check's expected failure; the message is the whole explanation."""


@dataclass(frozen=True)
class Check:
    name: str
    func: Callable[[SelfTest], str | None]


CHECKS: list[Check] = []


def register(name: str) -> Callable[[Callable[[SelfTest], str | None]], Callable[[SelfTest], str | None]]:
    """Append the decorated function to CHECKS under `name`."""

    def decorate(func):
        if any(c.name == name for c in CHECKS):
            raise ValueError(f"a self-test check named '{name}' is already registered")
        CHECKS.append(Check(name, func))
        return func

    return decorate


@dataclass
class SelfTest:
    """What the checks share: the home folder, a scratch folder, and objects built once."""

    home: Path
    scratch: Path
    _app: object = field(default=None, repr=False)
    _catalogue: object = field(default=None, repr=False)
    _catalogue_failed: bool = False
    window: object = field(default=None, repr=False)
    dialogs: list[str] = field(default_factory=list)
    _restore: list = field(default_factory=list, repr=False)

    def app(self):
        """The QApplication, made the way the app makes it (style, palette, icon)."""
        if self._app is None:
            from gpudesk.ui.app import make_application

            self._app = make_application()
        return self._app

    def catalogue(self):
        """The catalogue, opened once; after a failure, later checks fail without retrying."""
        if self._catalogue is None:
            if self._catalogue_failed:
                raise CheckFailed("no catalogue (see the catalogue check)")
            from gpudesk.core.catalogue import open_catalogue

            self._catalogue_failed = True
            self._catalogue = open_catalogue()
            self._catalogue_failed = False
        return self._catalogue

    def record_dialogs(self) -> None:
        """Record static QMessageBox calls in `dialogs` instead of opening them: offscreen, a modal
        box would wait for a click forever."""
        if self._restore:
            return
        from PySide6.QtWidgets import QMessageBox

        for name, answer in (("critical", QMessageBox.StandardButton.Ok), ("warning", QMessageBox.StandardButton.Ok),
                             ("information", QMessageBox.StandardButton.Ok),
                             ("question", QMessageBox.StandardButton.No)):
            original = QMessageBox.__dict__[name]

            def record(*args, _name=name, _answer=answer, **kwargs):
                texts = [a for a in args if isinstance(a, str)]
                self.dialogs.append(f"{_name}: {' / '.join(texts)}".replace("\n", " "))
                return _answer

            setattr(QMessageBox, name, staticmethod(record))
            self._restore.append((QMessageBox, name, original))

    def close(self) -> None:
        for owner, name, original in reversed(self._restore):
            setattr(owner, name, original)
        self._restore.clear()
        window = self.window
        if window is not None:
            loader = getattr(window, "_loader", None)
            if loader is not None:
                loader.wait(10000)
            window.hide()  # not close(): that would save window state into a real GPUDESK_HOME
            if getattr(window, "catalogue", None) is not None:
                window.catalogue.close()
            window.deleteLater()
            self.window = None
        if self._catalogue is not None:
            self._catalogue.close()
            self._catalogue = None
        if self._app is not None:
            self._app.processEvents()


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


# ---------------------------------------------------------------------------------------- checks
@register("bundled files")
def check_bundled_files(t: SelfTest) -> str:
    from gpudesk.core import paths
    from gpudesk.core.catalogue import db

    data, resources = paths.bundled_data_dir(), paths.resources_dir()
    _require(data.is_dir(), f"data folder not found at {data}")
    _require((data / "catalogue.toml").is_file(), f"{data} has no catalogue.toml")
    _require(resources.is_dir(), f"resources folder not found at {resources}")
    for parts in (("icons", "gpudesk.svg"), EXAMPLE_SCENARIO):
        _require(resources.joinpath(*parts).is_file(), f"{resources} has no {'/'.join(parts)}")
    migrations = db.MIGRATIONS_DIR
    _require((migrations / "env.py").is_file(), f"Alembic migrations not found at {migrations}")
    _require(any((migrations / "versions").glob("*.py")), f"{migrations}/versions has no migration")
    how = "frozen" if paths.is_frozen() else "from source"
    return f"{how}, data and resources in {data.parent}"


@register("catalogue")
def check_catalogue(t: SelfTest) -> str:
    from gpudesk.core import paths

    cat = t.catalogue()
    count = len(cat.items("accelerators"))
    _require(count >= MIN_ACCELERATORS, f"{count} accelerators, expected at least {MIN_ACCELERATORS}")
    _require(bool(cat.version), "the catalogue has no version")
    where = str(cat.engine.url)
    if cat.engine.url.get_backend_name() == "sqlite":
        _require(Path(cat.engine.url.database).resolve().is_relative_to(paths.data_dir().resolve()),
                 f"the database {where} is not in the data folder {paths.data_dir()}")
    return f"{count} accelerators, version {cat.version}"


@register("team driver")
def check_team_driver(t: SelfTest) -> str:
    """The PostgreSQL driver and the keyring library are in the installation (gpudesk[team])."""
    import psycopg
    from sqlalchemy import create_engine

    from gpudesk.core.catalogue import team

    engine = create_engine("postgresql+psycopg://user@127.0.0.1:5432/gpudesk")  # nothing connects
    dialect = engine.dialect.driver
    engine.dispose()
    keyring_ok, keyring_name = team.keyring_status()
    keyring_text = keyring_name if keyring_ok else "no system keyring here (the environment variable works)"
    if "not installed" in keyring_name:
        raise CheckFailed(keyring_name)
    return f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__} libpq {psycopg.pq.version()}), dialect {dialect}; " \
           f"keyring: {keyring_text}"


@register("estimate")
def check_estimate(t: SelfTest) -> str:
    from gpudesk.core import paths
    from gpudesk.core.resolve import estimate_scenario
    from gpudesk.core.scenario import load_scenario

    path = paths.resource(*EXAMPLE_SCENARIO)
    scenario = load_scenario(path)
    result = estimate_scenario(scenario, t.catalogue())
    _require(result.feasible, f"{path.name} is not feasible: {'; '.join(result.reason_texts())}")
    hours = f", {result.time_s.likely / 3600:.1f} h to train" if result.time_s is not None else ""
    return f"{path.name}: feasible on {result.devices} devices{hours}"


@register("benchmark import")
def check_benchmark_import(t: SelfTest) -> str:
    """The schema example imports, compares with an estimate and summarises (pandas in the bundle)."""
    from gpudesk.core import paths
    from gpudesk.core.benchmarks.store import import_files, stored_measurements
    from gpudesk.core.benchmarks.summary import error_summary
    from gpudesk.core.benchmarks.versus import compare_all

    example = paths.resource("schema", "benchmark.example.json")
    catalogue = t.catalogue()
    report = import_files(catalogue, [example])
    _require(report.ok and report.files[0].stored > 0, f"{example.name} did not import: {report.format_text()}")
    versus = compare_all(catalogue, stored_measurements(catalogue))
    summary = error_summary(versus)
    _require(bool(summary), "no measurement of the example compared with an estimate")
    from gpudesk.core.benchmarks import reader

    fast = getattr(reader._line_loads, "__module__", "") == "orjson"  # JSON Lines read fast (orjson in the bundle)
    _require(fast, "orjson is missing: JSON Lines files are read with the slower standard library")
    return f"{report.files[0].stored} measurements of {example.name} stored; {len(summary)} compared group(s); " \
           "JSON Lines read with orjson"


@register("main window")
def check_main_window(t: SelfTest) -> str:
    app = t.app()
    from PySide6.QtCore import QElapsedTimer

    from gpudesk.ui.main_window import MainWindow

    t.record_dialogs()
    window = MainWindow()
    t.window = window
    failed: list[str] = []
    ready: list[bool] = []
    window.catalogueReady.connect(lambda: ready.append(True))
    window.catalogueFailed.connect(failed.append)
    window.show()
    window.start()
    loaded = window.wait_loaded(60000)
    _require(not failed, f"the catalogue failed to open: {failed[0] if failed else ''}")
    _require(loaded, "the catalogue did not load within 60 s")
    clock = QElapsedTimer()
    clock.start()
    while not ready and clock.elapsed() < 20000:
        app.processEvents()
        time.sleep(0.005)
    _require(not t.dialogs, f"a message box opened: {t.dialogs[0] if t.dialogs else ''}")
    _require(bool(ready), "the catalogue view was not populated within 20 s")
    model = getattr(window.catalogue_view, "model", None)
    rows = model.rowCount() if model is not None else None
    _require(rows is None or rows >= MIN_ACCELERATORS, f"the catalogue view shows {rows} rows")
    return f"window shown, catalogue view populated ({rows} rows), platform {app.platformName()}"


@register("pages")
def check_pages(t: SelfTest) -> str:
    from gpudesk.ui.main_window import PAGES

    window = t.window
    _require(window is not None and window.catalogue is not None, "no loaded main window (see the main window check)")
    app = t.app()
    opened = []
    for key, _label, _icon in PAGES:
        boxes = len(t.dialogs)
        window.page(key)  # builds the view here, so that its exception (if any) is the one reported
        page = window.show_page(key)
        app.processEvents()
        _require(page is not None and page.isVisibleTo(window), f"the {key} page is not shown")
        _require(window.current_page_key() == key, f"asked for {key}, {window.current_page_key()} is shown")
        if len(t.dialogs) > boxes:
            raise CheckFailed(f"opening the {key} page opened a message box: {t.dialogs[-1]}")
        opened.append(key)
    window.show_page(PAGES[0][0])
    return f"{len(opened)} pages opened: {', '.join(opened)}"


@register("chart")
def check_chart(t: SelfTest) -> str:
    t.app()
    import pyqtgraph as pg
    from PySide6.QtGui import QImage

    from gpudesk.ui import theme  # the app's own colours, so the self-test draws what the app draws

    pg.setConfigOptions(**theme.pyqtgraph_options())
    plot = pg.PlotWidget(title="self-test")
    try:
        plot.plot([1, 2, 3, 4, 5], [3, 1, 4, 1, 5], pen=pg.mkPen(theme.series(0), width=2), symbol="o")
        plot.addItem(pg.BarGraphItem(x=[1, 2, 3], height=[2, 3, 1], width=0.5, brush=theme.series(1)))
        plot.resize(640, 400)
        t.app().processEvents()
        path = t.scratch / "chart.png"
        _require(plot.grab().save(str(path)), f"cannot save {path}")
        size = path.stat().st_size if path.exists() else 0
        _require(size > 0, f"{path} is empty")
        image = QImage(str(path))
        _require(not image.isNull(), f"{path} cannot be read back")
        _require(len({image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}) > 1,
                 "the chart is one flat colour")
    finally:
        plot.deleteLater()
    return f"pyqtgraph {pg.__version__}, {image.width()}x{image.height()} PNG, {size:,} bytes"


@register("pdf")
def check_pdf(t: SelfTest) -> str:
    t.app()
    from PySide6.QtCore import QMarginsF, QRectF, Qt
    from PySide6.QtGui import QFont, QPageLayout, QPageSize, QPainter, QPdfWriter, QPen

    path = t.scratch / "self-test.pdf"
    writer = QPdfWriter(str(path))
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(15, 15, 15, 15), QPageLayout.Unit.Millimeter))
    writer.setResolution(300)
    writer.setTitle(f"{APP_NAME} self-test")
    painter = QPainter()
    _require(painter.begin(writer), f"cannot paint on {path}")
    try:
        dpi = writer.resolution()
        width = writer.width()
        title = QFont("Sans Serif")
        title.setPointSizeF(18)
        title.setBold(True)
        painter.setFont(title)
        painter.drawText(QRectF(0, 0, width, dpi * 0.5), Qt.AlignmentFlag.AlignLeft, f"{APP_NAME} {__version__} self-test")
        body = QFont("Sans Serif")
        body.setPointSizeF(10)
        painter.setFont(body)
        painter.setPen(QPen(Qt.GlobalColor.black, 2))
        rows = [("check", "result"), ("catalogue", "ok"), ("chart", "ok"), ("pdf", "this page")]
        row_h, col_w, top = dpi * 0.3, width / 2, dpi * 0.8
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                cell = QRectF(c * col_w, top + r * row_h, col_w, row_h)
                painter.drawRect(cell)
                painter.drawText(cell.adjusted(dpi * 0.05, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, text)
    finally:
        painter.end()
    data = path.read_bytes() if path.exists() else b""
    _require(data.startswith(b"%PDF"), f"{path} is not a PDF ({len(data)} bytes)")
    return f"{len(data):,} bytes, starts with {data[:8].decode('ascii', 'replace').strip()}"


# ---------------------------------------------------------------------------------------- running
def _report_head(home: Path, temporary: bool, results: list[dict]) -> dict:
    """What the self-test report says of the installation, before any check has run."""
    from gpudesk.core import paths

    return {
        "app": APP_NAME,
        "version": __version__,
        "ok": False,
        "failed": [],
        "duration_s": None,
        "frozen": paths.is_frozen(),
        "executable": sys.executable,
        "python": platform.python_version(),
        "platform": sys.platform,
        "qt_platform": os.environ.get("QT_QPA_PLATFORM", ""),
        "home": str(home),
        "home_temporary": temporary,
        "bundled_data_dir": str(paths.bundled_data_dir()),
        "resources_dir": str(paths.resources_dir()),
        "checks": results,
    }


def run_self_test(checks: list[Check] | None = None, timeout_s: float = TIMEOUT_S) -> int:
    """Run every check (CHECKS by default); 0 when all passed, 1 otherwise.

    A run that takes longer than `timeout_s` (a hung check) is ended with status 1, its report
    naming the check that hung."""
    started = time.perf_counter()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from gpudesk.core import paths

    given_home = os.environ.get(paths.HOME_ENV, "").strip()
    temporary = not given_home
    home = Path(tempfile.mkdtemp(prefix=f"{APP_NAME}-self-test-")) if temporary else Path(given_home).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get(paths.HOME_ENV)
    os.environ[paths.HOME_ENV] = str(home)
    scratch = Path(tempfile.mkdtemp(prefix=f"{APP_NAME}-self-test-files-"))
    context = SelfTest(home=home, scratch=scratch)
    results: list[dict] = []
    report = _report_head(home, temporary, results)
    running: list[str] = []

    def hung() -> None:  # on the watchdog thread: report, then end the process
        name = running[-1] if running else "start-up"
        results.append({"name": name, "ok": False, "detail": f"did not finish within {timeout_s:.0f} s",
                        "duration_s": None})
        _say(f"FAIL {name}: did not finish within {timeout_s:.0f} s")
        _finish(report, started, home, temporary)
        os._exit(1)

    watchdog = threading.Timer(timeout_s, hung)
    watchdog.daemon = True
    watchdog.start()
    _say(f"{APP_NAME} {__version__} self-test ({'frozen' if paths.is_frozen() else 'from source'}, "
         f"Python {platform.python_version()}, {sys.platform}, QT_QPA_PLATFORM={os.environ['QT_QPA_PLATFORM']})")
    _say(f"home {home}{' (temporary)' if temporary else ''}")
    try:
        for check in (CHECKS if checks is None else checks):
            running.append(check.name)
            results.append(_run_one(check, context))
    finally:
        running.append("clean-up")
        try:
            context.close()
        except Exception as exc:  # a failure to clean up must not hide the results
            _say(f"(clean-up: {type(exc).__name__}: {exc})")
        shutil.rmtree(scratch, ignore_errors=True)
        watchdog.cancel()
        if previous is None:
            os.environ.pop(paths.HOME_ENV, None)
        else:
            os.environ[paths.HOME_ENV] = previous
    return _finish(report, started, home, temporary)


def _finish(report: dict, started: float, home: Path, temporary: bool) -> int:
    """Print the summary and write self-test.json into the home folder; the exit status."""
    results = report["checks"]
    failed = [r["name"] for r in results if not r["ok"]]
    elapsed = time.perf_counter() - started
    report.update(ok=not failed, failed=failed, duration_s=round(elapsed, 3))
    if failed:
        _say(f"self-test FAILED in {elapsed:.2f} s: {len(failed)} of {len(results)} checks failed ({', '.join(failed)})")
    else:
        _say(f"self-test passed: {len(results)} checks in {elapsed:.2f} s")
    report_path = home / REPORT_NAME
    try:
        if temporary:
            _empty_folder(home)
        report_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        _say(f"report {report_path}")
    except OSError as exc:
        _say(f"cannot write the report {report_path}: {exc}")
    return 1 if failed else 0


def _run_one(check: Check, context: SelfTest) -> dict:
    t0 = time.perf_counter()
    try:
        detail = check.func(context) or ""
        ok, error = True, None
    except CheckFailed as exc:
        detail, ok, error = str(exc), False, None
    except Exception as exc:
        detail, ok, error = f"{type(exc).__name__}: {exc}", False, traceback.format_exc()
    detail = " ".join(str(detail).split())  # one line per check
    seconds = time.perf_counter() - t0
    _say(f"{'ok  ' if ok else 'FAIL'} {check.name}: {detail}" + (f"  [{seconds:.2f} s]" if seconds >= 0.05 else ""))
    if error:
        _say(error.rstrip(), stream=sys.stderr)
    result = {"name": check.name, "ok": ok, "detail": detail, "duration_s": round(seconds, 3)}
    if error:
        result["traceback"] = error
    return result


def _empty_folder(folder: Path) -> None:
    """Remove what the checks left in a temporary home (database, logs, settings)."""
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            try:
                child.unlink()
            except OSError:
                pass  # e.g. a database still open on Windows; the OS temp cleaner gets it


def _say(line: str, stream=None) -> None:
    stream = stream if stream is not None else sys.stdout
    if stream is None:  # a windowed Windows build has no console
        return
    try:
        print(line, file=stream, flush=True)
    except (OSError, ValueError):
        pass
