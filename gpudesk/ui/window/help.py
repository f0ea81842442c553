"""The Help menu's actions: the guide, the keyboard shortcuts, the data folder and log, About."""

from __future__ import annotations

from gpudesk import APP_DISPLAY_NAME, __version__
from gpudesk.core import paths


def show_guide(window) -> None:
    from gpudesk.ui.widgets.help import HelpDialog, guide_html

    HelpDialog(f"{APP_DISPLAY_NAME} guide", guide_html(), window).exec()


def show_shortcuts(window) -> None:
    from gpudesk.ui.widgets.help import HelpDialog, shortcuts_html

    actions = [a for menu_action in window.menuBar().actions() if menu_action.menu()
               for a in menu_action.menu().actions()]
    HelpDialog("Keyboard shortcuts", shortcuts_html(actions), window, size=(420, 480)).exec()


def open_folder(window, folder) -> bool:
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    folder.mkdir(parents=True, exist_ok=True)
    opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))
    if not opened:
        window.statusBar().showMessage(f"Could not open {folder}", 5000)
    return opened


def open_log(window) -> bool:
    """The log file (in the log folder, which opens instead while nothing has been logged)."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    from gpudesk.core.logs import log_path

    path = log_path()
    if not path.is_file():
        return window.open_folder(path.parent)
    opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
    if not opened:
        window.statusBar().showMessage(f"Could not open {path}", 5000)
    return opened


def show_about(window) -> None:
    import platform  # only the About box needs it: not imported at start-up

    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion
    from PySide6.QtWidgets import QMessageBox  # created when first used, not in the first frame

    cat = window.catalogue
    catalogue = f"version {cat.version}, released {cat.released}" if cat else "not loaded"
    sources = len(cat.items("sources")) if cat else 0
    QMessageBox.about(
        window,
        f"About {APP_DISPLAY_NAME}",
        f"<h3>{APP_DISPLAY_NAME} {__version__}</h3>"
        "<p>Choose AI compute and defend the choice: a sourced catalogue, side-by-side comparison, "
        "cluster estimates and procurement reports.</p>"
        f"<p><b>Catalogue:</b> {catalogue}"
        + (f", {sources} cited sources (Catalogue ▸ Sources)" if sources else "") + "<br>"
        f"<b>Database:</b> {window.database_url or paths.database_path()}<br>"
        f"<b>Qt:</b> {qVersion()} · PySide6 {pyside_version} · Python {platform.python_version()}</p>",
    )
