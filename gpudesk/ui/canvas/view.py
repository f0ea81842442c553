"""The Cluster view (placeholder until its issue lands)."""

from __future__ import annotations

from PySide6.QtCore import Signal

from gpudesk.ui.widgets.notyet import NotYetPage


class ClusterView(NotYetPage):
    open_requested = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__("Cluster", "Draw a cluster from catalogue items and links and watch throughput, power, CO2, cost and break-even change as you edit.", parent)
