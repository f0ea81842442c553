"""An honest page for a view that a later release builds: what it will do, and that it is not here yet."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


class NotYetPage(QWidget):
    def __init__(self, title: str, text: str, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        heading = QLabel(title)
        heading.setObjectName("pageTitle")
        body = QLabel(f"<p>{text}</p><p><i>Not yet available in this version.</i></p>")
        body.setWordWrap(True)
        body.setObjectName("pageSubtitle")
        body.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(heading)
        layout.addWidget(body, 1)
