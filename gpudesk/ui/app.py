"""The QApplication: style, palette, icons, logging, and the window's start-up."""

from __future__ import annotations

import logging
import os
import sys

from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from gpudesk import APP_DISPLAY_NAME, APP_NAME, ORG_DOMAIN, ORG_NAME, __version__
from gpudesk.core import paths
from gpudesk.core.logs import setup_logging
from gpudesk.ui import theme
from gpudesk.ui.state import settings_store

log = logging.getLogger(__name__)


def app_icon() -> QIcon:
    icon = QIcon()
    for size in (16, 32, 48, 64, 128, 256):
        png = paths.resource("icons", f"gpudesk-{size}.png")
        if png.exists():
            icon.addFile(str(png))
    svg = paths.resource("icons", "gpudesk.svg")
    if icon.isNull() and svg.exists():
        icon.addFile(str(svg))
    return icon


def make_application(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if app is not None:
        return app  # type: ignore[return-value]
    QCoreApplication.setOrganizationName(ORG_NAME)
    QCoreApplication.setOrganizationDomain(ORG_DOMAIN)
    QCoreApplication.setApplicationName(APP_NAME)
    QCoreApplication.setApplicationVersion(__version__)
    app = QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationDisplayName(APP_DISPLAY_NAME)
    apply_style(app)
    _follow_system_scheme(app)
    app.setWindowIcon(app_icon())
    from gpudesk.ui.widgets.clipboard import release_clipboard

    app.aboutToQuit.connect(release_clipboard)
    return app


def apply_style(app: QApplication, mode: str | None = None) -> None:
    """Fusion with gpudesk's calm palette, light or dark (see gpudesk.ui.theme): the same look on
    every platform and in screenshots. `mode` is "light", "dark" or "system" (GPUDESK_THEME, by
    default "system": dark when the desktop asks for dark, light otherwise)."""
    app.setStyle("Fusion")
    app.setPalette(theme.make_palette(theme.chosen_variant(app, mode)))
    font = app.font()
    if font.pointSizeF() < theme.SIZES["base_min"]:
        font.setPointSizeF(theme.SIZES["base_min"])
        app.setFont(font)
    app.setStyleSheet(theme.css())


def _follow_system_scheme(app: QApplication) -> None:
    """With GPUDESK_THEME=system, switch palette and style sheet when the desktop switches between
    light and dark (views pick the new colours up the next time they draw their content)."""
    hints = app.styleHints()
    if theme.preferred_mode() == "system" and hasattr(hints, "colorSchemeChanged"):
        hints.colorSchemeChanged.connect(lambda _scheme: apply_style(app))


def run_app(quit_after_startup: bool = False, database_url: str | None = None,
            quit_after_first_frame: bool = False) -> int:
    quit_after_startup = quit_after_startup or quit_after_first_frame
    if quit_after_startup and not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("DISPLAY") \
            and sys.platform.startswith("linux") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from gpudesk.ui.platform_check import check_platform

    problem = check_platform()
    if problem:  # Qt would print its own line and abort: say what is missing and how to install it
        print(problem, file=sys.stderr)
        return 1
    setup_logging()
    app = make_application()
    from gpudesk.ui.main_window import MainWindow

    window = MainWindow(database_url=database_url)
    if quit_after_startup:
        def leave(code: int) -> None:
            # Measuring start-up: leave as soon as the populated window has been painted, without
            # waiting for the background open to finish (SQLite rolls back anything half-written).
            window.repaint()
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

        if quit_after_first_frame:  # the first frame: whatever the window shows before the catalogue
            QTimer.singleShot(0, lambda: leave(0))
        else:
            window.catalogueReady.connect(lambda: QTimer.singleShot(0, lambda: leave(0)))
        window.catalogueFailed.connect(lambda _msg: leave(1))
    window.show()
    # the shell is painted first; then the catalogue opens on its worker thread, whose reads and
    # imports would otherwise share the interpreter with the first frame
    QTimer.singleShot(0, window.start)
    return app.exec()


__all__ = ["make_application", "run_app", "settings_store", "setup_logging", "Qt"]
