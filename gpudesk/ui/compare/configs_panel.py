"""The configurations being compared: two to six rows and the button that adds one."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGroupBox, QPushButton, QVBoxLayout

from gpudesk.core.scenario import ClusterEntry, Option
from gpudesk.ui.compare.config_row import ConfigRow
from gpudesk.ui.compare.presenter import MAX_OPTIONS


class ConfigurationsPanel(QGroupBox):
    edited = Signal()
    message = Signal(str)

    def __init__(self, parent=None):
        super().__init__(f"Configurations (2 to {MAX_OPTIONS})", parent)
        self.rows: list[ConfigRow] = []
        self.choices: list[tuple[str, str, str]] = []
        self.rows_layout = QVBoxLayout(self)
        self.rows_layout.setSpacing(6)
        self.add_button = QPushButton("Add configuration")
        self.add_button.setObjectName("addConfiguration")
        self.add_button.clicked.connect(lambda: self.add())
        self.rows_layout.addWidget(self.add_button)

    def add(self, option: Option | None = None, refresh: bool = True) -> ConfigRow | None:
        if len(self.rows) >= MAX_OPTIONS:
            self.message.emit(f"A comparison holds at most {MAX_OPTIONS} configurations")
            return None
        if option is None:
            option = Option(f"Option {len(self.rows) + 1}", [ClusterEntry(item="h100-sxm5-80gb", per_node=8)])
        row = ConfigRow(self.choices, option)
        row.changed.connect(lambda: self.edited.emit())
        row.remove_requested.connect(self.remove)
        self.rows_layout.insertWidget(self.rows_layout.count() - 1, row)
        self.rows.append(row)
        self._update_buttons()
        if refresh:
            self.edited.emit()
        return row

    def remove(self, row: ConfigRow, refresh: bool = True) -> None:
        if row not in self.rows:
            return
        self.rows.remove(row)
        row.setParent(None)
        row.deleteLater()
        self._update_buttons()
        if refresh:
            self.edited.emit()

    def replace(self, options: list[Option]) -> None:
        """Show these configurations instead (no edit is reported)."""
        for row in list(self.rows):
            self.remove(row, refresh=False)
        for option in options:
            self.add(option, refresh=False)

    def options(self) -> list[Option]:
        return [o for o in (r.option() for r in self.rows) if o is not None]

    def _update_buttons(self) -> None:
        self.add_button.setEnabled(len(self.rows) < MAX_OPTIONS)
        for row in self.rows:
            row.remove.setEnabled(len(self.rows) > 1)
