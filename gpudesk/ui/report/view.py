"""The Reports view (placeholder until its issue lands)."""

from __future__ import annotations

from PySide6.QtCore import Signal

from gpudesk.ui.widgets.notyet import NotYetPage


class ReportsView(NotYetPage):
    open_requested = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__("Reports", "Procurement PDF reports of comparisons and clusters, dated and sourced.", parent)
