"""The comparison table as a Qt item model: a row per metric (with section rows), a column per
configuration, winners shaded, ranges in tooltips."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QFont

from gpudesk.ui import theme

_Index = QModelIndex | QPersistentModelIndex


class CompareTableModel(QAbstractTableModel):
    FIXED_COLUMNS = 2  # metric, direction

    def __init__(self, parent=None):
        super().__init__(parent)
        self.comparison = None
        self._lines: list[tuple[str, object]] = []  # ("section", name) | ("row", Row)

    def set_comparison(self, comparison) -> None:
        self.beginResetModel()
        self.comparison = comparison
        self._lines = []
        section = None
        for row in comparison.rows if comparison else []:
            if row.section != section:
                section = row.section
                self._lines.append(("section", section))
            self._lines.append(("row", row))
        self.endResetModel()

    def line(self, index: int):
        return self._lines[index]

    def row_index(self, key: str) -> int:
        for i, (kind, item) in enumerate(self._lines):
            if kind == "row" and item.key == key:
                return i
        raise KeyError(key)

    # Qt overrides ------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._lines)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() or self.comparison is None:
            return 0
        return self.FIXED_COLUMNS + len(self.comparison.results)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or self.comparison is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section == 0:
                return "Metric"
            if section == 1:
                return "Better"
            return self.comparison.results[section - self.FIXED_COLUMNS].name
        if role == Qt.ItemDataRole.ToolTipRole and section >= self.FIXED_COLUMNS:
            result = self.comparison.results[section - self.FIXED_COLUMNS]
            detail = result.hardware or result.error
            tip = result.name + (f"\n{detail}" if detail and detail != result.name else "")
            if result.estimate is not None and not result.estimate.feasible:
                tip += "\n\nCannot run this workload:\n" + "\n".join(result.estimate.reason_texts())
            return tip
        if role == Qt.ItemDataRole.ForegroundRole and section >= self.FIXED_COLUMNS:
            if not self.comparison.results[section - self.FIXED_COLUMNS].ok:
                return QBrush(theme.colour("error"))
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        kind, item = self._lines[index.row()]
        col = index.column()
        if kind == "section":
            return self._section_data(item, col, role)
        if col < self.FIXED_COLUMNS:
            return self._label_data(item, col, role)
        return self._cell_data(item, col - self.FIXED_COLUMNS, role)

    @staticmethod
    def _bold() -> QFont:
        font = QFont()
        font.setBold(True)
        return font

    def _section_data(self, title: str, col: int, role: int):
        if role == Qt.ItemDataRole.DisplayRole and col == 0:
            return title
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(theme.colour("section_fill"))
        if role == Qt.ItemDataRole.FontRole:
            return self._bold()
        return None

    @staticmethod
    def _label_data(row, col: int, role: int):
        """The metric's name (column 0) and its direction (column 1)."""
        if col == 0:
            if role == Qt.ItemDataRole.DisplayRole:
                return row.label + (f" ({row.unit})" if row.unit else "") + (" ≈" if row.remark else "")
            if role == Qt.ItemDataRole.ToolTipRole and row.remark:
                return row.remark[0].upper() + row.remark[1:] + "."
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return {"lower": "lower", "higher": "higher"}.get(row.better or "", "")
        if role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(theme.colour("faint"))
        if role == Qt.ItemDataRole.ToolTipRole and row.better:
            return row.direction_text
        return None

    def _cell_data(self, row, option: int, role: int):
        cell = row.cells[option]
        winner = option in row.winners
        if role == Qt.ItemDataRole.DisplayRole:
            return ("★ " if winner else "") + cell.text
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.BackgroundRole and winner:
            return QBrush(theme.colour("winner_fill"))
        if role == Qt.ItemDataRole.ForegroundRole:
            if winner:
                return QBrush(theme.colour("winner_ink"))
            if not self.comparison.results[option].ok and row.section != "Configuration":
                return QBrush(theme.colour("faint"))
            if row.key == "fits" and cell.value == 0.0:
                return QBrush(theme.colour("error"))
        if role == Qt.ItemDataRole.FontRole and winner:
            return self._bold()
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._cell_tooltip(row, cell, winner)
        return None

    @staticmethod
    def _cell_tooltip(row, cell, winner: bool) -> str:
        parts = [cell.text.replace("\n", " ")]
        if cell.note:
            parts.append(cell.note)
        if cell.low is not None and cell.high is not None and cell.low != cell.high:
            parts.append(f"low {cell.low:,.4g} · likely {cell.value:,.4g} · high {cell.high:,.4g}")
        if row.better:
            parts.append(row.direction_text + (" — winner" if winner else ""))
        if row.remark:
            parts.append(row.remark[0].upper() + row.remark[1:] + ".")
        return "\n".join(parts)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
