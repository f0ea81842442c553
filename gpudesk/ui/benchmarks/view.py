"""The Benchmarks view (placeholder until its issue lands)."""

from __future__ import annotations

from PySide6.QtCore import Signal

from gpudesk.ui.widgets.notyet import NotYetPage


class BenchmarksView(NotYetPage):
    open_requested = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__("Benchmarks", "Import the benchmark JSON your tools already write, compare it with the estimates, and calibrate them.", parent)
