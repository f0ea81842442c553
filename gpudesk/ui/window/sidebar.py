"""The window's left column: the app's name and tagline over the navigation list, narrowed to a
rail of icons (each with its name as a tooltip) when the window is too narrow to spare it."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QListWidget, QVBoxLayout, QWidget

from gpudesk import APP_DISPLAY_NAME

WIDE_PX = 190
RAIL_PX = 56
ITEM_HEIGHT_PX = 40
# below this window width the column is a rail: at 1280 or 1366 pixels the views need its 134 pixels
# (the catalogue's buyer columns, four compared configurations)
COMPACT_BELOW_PX = 1500
_LABEL = Qt.ItemDataRole.UserRole + 1  # an item's name, kept while the rail hides it


class Sidebar(QWidget):
    def __init__(self, nav: QListWidget, parent=None):
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.nav = nav
        self.compact = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.brand = QLabel(APP_DISPLAY_NAME)
        self.brand.setObjectName("navTitle")
        self.tagline = QLabel("choose AI compute,\ndefend the choice")
        self.tagline.setObjectName("navSubtitle")
        layout.addWidget(self.brand)
        layout.addWidget(self.tagline)
        layout.addWidget(nav, 1)
        nav.setFixedWidth(WIDE_PX)

    def fit_window(self, window_width: int) -> None:
        """Wide column or rail, for a window this wide."""
        self.set_compact(window_width < COMPACT_BELOW_PX)

    def set_compact(self, compact: bool) -> None:
        if compact == self.compact:
            return
        self.compact = compact
        self.brand.setVisible(not compact)
        self.tagline.setVisible(not compact)
        self.nav.setFixedWidth(RAIL_PX if compact else WIDE_PX)
        for row in range(self.nav.count()):
            item = self.nav.item(row)
            if item.data(_LABEL) is None:
                item.setData(_LABEL, item.text())
            label = item.data(_LABEL)
            item.setText("" if compact else label)
            item.setToolTip(label if compact else "")
            item.setSizeHint(QSize(RAIL_PX - 4 if compact else WIDE_PX - 10, ITEM_HEIGHT_PX))
