"""What the main window remembers between runs: its geometry and page, the catalogue's splitter and
columns per kind (restored when the catalogue view is built), the compare view's splitter."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QTimer
from PySide6.QtGui import QGuiApplication

from gpudesk.ui.state import settings_store

PREFERRED = (1320, 820)  # the first window's size where the screen has room for it
FRAME_ALLOWANCE = (16, 48)  # what a window manager's frame and title bar may add around the window


def first_size(available) -> tuple[int, int]:
    """The first window's size on a screen whose available geometry (without panels and docks) is
    `available` (a QRect, or None offscreen): the preferred size, shrunk to leave room for the frame."""
    if available is None or available.isEmpty():
        return PREFERRED
    return (min(PREFERRED[0], available.width() - FRAME_ALLOWANCE[0]),
            min(PREFERRED[1], available.height() - FRAME_ALLOWANCE[1]))


def fits(rect, available) -> bool:
    """Whether a restored frame still lies within the screen's available geometry."""
    return available is None or available.isEmpty() or available.contains(rect)


def restore_state(window, pages) -> None:
    store = settings_store()
    geometry = store.value("window/geometry")
    screen = window.screen() or QGuiApplication.primaryScreen()
    # the offscreen platform's screen is a fixed 800x600 stand-in, not a screen anyone looks at
    real = screen is not None and QGuiApplication.platformName() != "offscreen"
    available = screen.availableGeometry() if real else None
    restored = isinstance(geometry, QByteArray) and not geometry.isEmpty() and window.restoreGeometry(geometry)
    if not restored or not fits(window.frameGeometry(), available) and not window.isMaximized():
        window.resize(*first_size(available))  # the last size no longer fits this screen (or there is none)
        if available is not None and not available.isEmpty():
            frame = window.frameGeometry()
            frame.moveCenter(available.center())
            window.move(frame.topLeft())
    page = str(store.value("window/page", "catalogue"))
    keys = [p[0] for p in pages]
    # views other than the catalogue are built on first show: open them after the window is up
    if page in keys and page != "catalogue":
        window.nav.setCurrentRow(0)
        QTimer.singleShot(0, lambda: window.nav.setCurrentRow(keys.index(page)))
    else:
        window.nav.setCurrentRow(0)


def restore_catalogue(view) -> None:
    """The catalogue view's splitter and its columns per kind, as last left (applied when the view is
    built, after the window's first frame)."""
    store = settings_store()
    splitter = store.value("catalogue/splitter")
    if isinstance(splitter, QByteArray) and not splitter.isEmpty():
        view.splitter.restoreState(splitter)
    columns = {}
    store.beginGroup("catalogue-columns")
    for kind in store.childGroups():
        keys, state = store.value(f"{kind}/keys"), store.value(f"{kind}/state")
        if isinstance(keys, str) and isinstance(state, QByteArray) and not state.isEmpty():
            columns[kind] = (keys, state)
    store.endGroup()
    view.set_header_states(columns)


def save_state(window) -> None:
    store = settings_store()
    store.setValue("window/geometry", window.saveGeometry())
    store.setValue("window/page", window.current_page_key())
    store.setValue("catalogue/splitter", window.catalogue_view.splitter.saveState())
    for kind, (keys, state) in window.catalogue_view.header_states().items():
        store.setValue(f"catalogue-columns/{kind}/keys", keys)
        store.setValue(f"catalogue-columns/{kind}/state", state)
    compare = window.pages.get("compare")
    if compare is not None and hasattr(compare, "splitter"):
        store.setValue("compare/splitter", compare.splitter.saveState())
    store.sync()
