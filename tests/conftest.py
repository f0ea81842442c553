"""Test set-up: every test gets its own GPUDESK_HOME, offscreen Qt, and a fresh copy of a
catalogue database built once per session from data/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HYPOTHESIS_PROFILE", "ci")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
TEST_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def gpudesk_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("GPUDESK_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def _release_clipboard():
    """What a test put on the clipboard is released as the app would before quitting (Qt would
    otherwise delete it after the interpreter stopped, and crash)."""
    yield
    import sys

    if "gpudesk.ui.widgets.clipboard" in sys.modules:
        sys.modules["gpudesk.ui.widgets.clipboard"].release_clipboard()


@pytest.fixture(autouse=True)
def _collect_qt_garbage_on_the_gui_thread(request):
    """Widgets a Qt test left in reference cycles are collected here, on the GUI thread. Left to
    chance, Python's collector may run on a worker thread of the next test (the window's catalogue
    loader) and destroy them there, which Qt reports as "Timers cannot be started from another
    thread"."""
    yield
    if "qtbot" in request.fixturenames:
        import gc

        gc.collect()


@pytest.fixture(scope="session")
def catalogue_template(tmp_path_factory):
    """A catalogue database built from data/ once; tests get copies."""
    folder = tmp_path_factory.mktemp("catalogue-template")
    from gpudesk.core.catalogue import Catalogue

    cat = Catalogue.open(f"sqlite:///{folder / 'gpudesk.sqlite3'}", DATA)
    cat.close()
    return folder / "gpudesk.sqlite3"


@pytest.fixture
def catalogue(catalogue_template, gpudesk_home):
    """The bundled catalogue in this test's GPUDESK_HOME (a copy of the session's database)."""
    target = gpudesk_home / "gpudesk.sqlite3"
    shutil.copy(catalogue_template, target)
    from gpudesk.core.catalogue import Catalogue

    cat = Catalogue.open(None, DATA)
    yield cat
    cat.close()
