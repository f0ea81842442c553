"""The window's left column: the app's name and tagline over the navigation list."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QListWidget, QVBoxLayout, QWidget

from gpudesk import APP_DISPLAY_NAME


def sidebar(nav: QListWidget) -> QWidget:
    side = QWidget()
    side.setObjectName("sidebar")
    side_layout = QVBoxLayout(side)
    side_layout.setContentsMargins(0, 0, 0, 0)
    side_layout.setSpacing(0)
    brand = QLabel(APP_DISPLAY_NAME)
    brand.setObjectName("navTitle")
    tagline = QLabel("choose AI compute,\ndefend the choice")
    tagline.setObjectName("navSubtitle")
    side_layout.addWidget(brand)
    side_layout.addWidget(tagline)
    side_layout.addWidget(nav, 1)
    return side
