"""What the main window remembers between runs: its geometry and page, the catalogue's splitter and
columns per kind, the compare view's splitter."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QTimer

from gpudesk.ui.state import settings_store


def restore_state(window, pages) -> None:
    store = settings_store()
    geometry = store.value("window/geometry")
    if isinstance(geometry, QByteArray) and not geometry.isEmpty():
        window.restoreGeometry(geometry)
    else:
        window.resize(1320, 820)
    splitter = store.value("catalogue/splitter")
    if isinstance(splitter, QByteArray) and not splitter.isEmpty():
        window.catalogue_view.splitter.restoreState(splitter)
    columns = {}
    store.beginGroup("catalogue-columns")
    for kind in store.childGroups():
        keys, state = store.value(f"{kind}/keys"), store.value(f"{kind}/state")
        if isinstance(keys, str) and isinstance(state, QByteArray) and not state.isEmpty():
            columns[kind] = (keys, state)
    store.endGroup()
    window.catalogue_view.set_header_states(columns)
    page = str(store.value("window/page", "catalogue"))
    keys = [p[0] for p in pages]
    # views other than the catalogue are built on first show: open them after the window is up
    if page in keys and page != "catalogue":
        window.nav.setCurrentRow(0)
        QTimer.singleShot(0, lambda: window.nav.setCurrentRow(keys.index(page)))
    else:
        window.nav.setCurrentRow(0)


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
