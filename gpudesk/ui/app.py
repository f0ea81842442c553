"""The QApplication: style, palette, icons, logging, and the window's start-up."""

from __future__ import annotations

import logging
import os
import sys

from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtGui import QColor, QIcon, QPalette
from PySide6.QtWidgets import QApplication

from gpudesk import APP_DISPLAY_NAME, APP_NAME, ORG_DOMAIN, ORG_NAME, __version__
from gpudesk.core import paths
from gpudesk.core.logs import setup_logging
from gpudesk.ui.state import settings_store

log = logging.getLogger(__name__)

ACCENT = "#2f6fde"


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
    app.setWindowIcon(app_icon())
    from gpudesk.ui.widgets.clipboard import release_clipboard

    app.aboutToQuit.connect(release_clipboard)
    return app


def apply_style(app: QApplication) -> None:
    """Fusion with a calm light palette: the same look on every platform and in screenshots."""
    app.setStyle("Fusion")
    pal = QPalette()
    pal.setColor(QPalette.ColorRole.Window, QColor("#f4f5f7"))
    pal.setColor(QPalette.ColorRole.WindowText, QColor("#1d2330"))
    pal.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.AlternateBase, QColor("#f6f8fb"))
    pal.setColor(QPalette.ColorRole.Text, QColor("#1d2330"))
    pal.setColor(QPalette.ColorRole.Button, QColor("#fbfbfc"))
    pal.setColor(QPalette.ColorRole.ButtonText, QColor("#1d2330"))
    pal.setColor(QPalette.ColorRole.Highlight, QColor(ACCENT))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.ToolTipBase, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.ToolTipText, QColor("#1d2330"))
    pal.setColor(QPalette.ColorRole.Link, QColor(ACCENT))
    pal.setColor(QPalette.ColorRole.PlaceholderText, QColor("#8a93a3"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#a0a6b0"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#a0a6b0"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor("#a0a6b0"))
    app.setPalette(pal)
    font = app.font()
    if font.pointSizeF() < 9.5:
        font.setPointSizeF(9.5)
        app.setFont(font)
    app.setStyleSheet(STYLESHEET)


STYLESHEET = f"""
QListWidget#navigation {{
    background: #1f2633; color: #d7dce6; border: none; outline: none; padding-top: 8px;
    font-size: 10.5pt;
}}
QListWidget#navigation::item {{ padding: 10px 14px; border-left: 3px solid transparent; }}
QListWidget#navigation::item:hover {{ background: #2a3344; }}
QListWidget#navigation::item:selected {{
    background: #2d3a52; color: #ffffff; border-left: 3px solid {ACCENT};
}}
QLabel#navTitle {{ background: #1f2633; color: #ffffff; font-size: 13pt; font-weight: 600; padding: 14px 16px 6px 16px; }}
QLabel#navSubtitle {{ background: #1f2633; color: #8a93a3; padding: 0 16px 10px 16px; font-size: 8.5pt; }}
QLabel#pageTitle {{ font-size: 14pt; font-weight: 600; color: #1d2330; }}
QLabel#pageSubtitle {{ color: #5b6475; }}
QLabel#errorLabel {{ color: #b3261e; }}
QLabel#hint {{ color: #5b6475; }}
QTableView {{ gridline-color: #e3e6eb; selection-background-color: {ACCENT}; }}
QHeaderView::section {{
    background: #eef1f5; border: none; border-right: 1px solid #dde1e7; border-bottom: 1px solid #d3d8df;
    padding: 5px 6px; font-weight: 600; color: #2b3342;
}}
QTabBar::tab {{ padding: 6px 14px; }}
QTextBrowser {{ border: 1px solid #dde1e7; background: #ffffff; }}
QStatusBar {{ color: #5b6475; }}
"""


def run_app(quit_after_startup: bool = False, database_url: str | None = None) -> int:
    if quit_after_startup and not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("DISPLAY") \
            and sys.platform.startswith("linux") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
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

        window.catalogueReady.connect(lambda: QTimer.singleShot(0, lambda: leave(0)))
        window.catalogueFailed.connect(lambda _msg: leave(1))
    window.show()
    window.start()
    return app.exec()


__all__ = ["make_application", "run_app", "settings_store", "setup_logging", "Qt"]
