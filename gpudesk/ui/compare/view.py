"""The Compare view (placeholder until its issue lands)."""

from __future__ import annotations

from PySide6.QtCore import Signal

from gpudesk.ui.widgets.notyet import NotYetPage


class CompareView(NotYetPage):
    open_requested = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__("Compare", "Compare two to six configurations for a workload, with a winner per row, charts and a procurement PDF.", parent)
