"""One thin, row-backed table model for every table in gpudesk (catalogue, compare, imports).

Rows are plain dicts; columns say how to show a key. The model sorts its own rows (numbers as
numbers, 9 < 24 < 80; text without case; empty cells last in both orders) with one Python sort of
precomputed keys, and keeps that order when its rows are replaced; RowSortProxy passes a view's
sort to it and only filters. (QSortFilterProxyModel's own sort calls a Python lessThan, and that
calls back into the model's data(), for every comparison: 2.7 s for 10,000 rows.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from gpudesk.core.format import format_number

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
ROW_ROLE = Qt.ItemDataRole.UserRole + 2
# looked up once: each Qt.ItemDataRole.X is two attribute lookups through PySide (~0.4 us), and an
# or of two alignment flags ~1.8 us, while a view asks data() about ten times per cell it paints
_DISPLAY, _ALIGNMENT, _TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole, \
    Qt.ItemDataRole.ToolTipRole
_FONT, _FOREGROUND = Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ForegroundRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_SELECTABLE = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

_Index = QModelIndex | QPersistentModelIndex


@dataclass
class Column:
    key: str
    header: str
    numeric: bool = False
    fmt: Callable[[Any], str] | None = None
    tooltip: Callable[[dict], str | None] | None = None
    decimals: int | None = None
    text: Callable[[dict], str] | None = None  # the shown text from the whole row (the value still sorts)

    def display(self, value: Any) -> str:
        if self.fmt is not None:
            return self.fmt(value)
        return format_value(value, self.decimals, self.key)


def format_value(value: Any, decimals: int | None = None, field: str = "") -> str:
    if decimals is not None and isinstance(value, float):
        return f"{value:,.{decimals}f}"
    return format_number(value, field)


class RowTableModel(QAbstractTableModel):
    def __init__(self, columns: list[Column] | None = None, parent=None):
        super().__init__(parent)
        self._columns: list[Column] = list(columns or [])
        self._rows: list[dict] = []
        self._order: tuple[str, bool] | None = None  # (column key, descending) the rows are kept in
        self.row_style: Callable[[dict], dict] | None = None  # -> {"italic": bool, "color": str, "tooltip": str}

    # ------------------------------------------------------------- our API
    def set_columns(self, columns: list[Column]) -> None:
        self.beginResetModel()
        self._columns = list(columns)
        self.endResetModel()

    def set_rows(self, rows: list[dict]) -> None:
        self.beginResetModel()
        self._rows = self._ordered(rows)
        self.endResetModel()

    def set_columns_and_rows(self, columns: list[Column], rows: list[dict]) -> None:
        self.beginResetModel()
        self._columns = list(columns)
        self._rows = self._ordered(rows)
        self.endResetModel()

    def _ordered(self, rows: list[dict]) -> list[dict]:
        if self._order is None:
            return list(rows)
        key, descending = self._order
        return [rows[i] for i in sorted_positions([row.get(key) for row in rows], descending)]

    def rows(self) -> list[dict]:
        return list(self._rows)

    def row(self, index: int) -> dict:
        return self._rows[index]

    def columns(self) -> list[Column]:
        return list(self._columns)

    def column_index(self, key: str) -> int:
        for i, col in enumerate(self._columns):
            if col.key == key:
                return i
        raise KeyError(key)

    # ------------------------------------------------------------- Qt overrides
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: _Index, role: int = _DISPLAY) -> Any:
        row_number = index.row()
        if not index.isValid() or not (0 <= row_number < len(self._rows)):
            return None
        row = self._rows[row_number]
        col = self._columns[index.column()]
        if role == _DISPLAY:
            return col.text(row) if col.text is not None else col.display(row.get(col.key))
        if role == SORT_ROLE:
            return row.get(col.key)
        if role == ROW_ROLE:
            return row
        if role == _ALIGNMENT:
            return _RIGHT if col.numeric else _LEFT
        if role == _TOOLTIP:
            if col.tooltip is not None:
                tip = col.tooltip(row)
                if tip:
                    return tip
            style = self.row_style(row) if self.row_style else {}
            return style.get("tooltip")
        if (role == _FONT or role == _FOREGROUND) and self.row_style:
            style = self.row_style(row)
            if role == _FONT and style.get("italic"):
                font = QFont()
                font.setItalic(True)
                return font
            if role == _FOREGROUND and style.get("color"):
                return QBrush(QColor(style["color"]))
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self._columns):
            col = self._columns[section]
            if role == _DISPLAY:
                return col.header
            if role == _ALIGNMENT:
                return _RIGHT if col.numeric else _LEFT
        if orientation == Qt.Orientation.Vertical and role == _DISPLAY:
            return str(section + 1)
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return _SELECTABLE

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Order the rows by a column's values (column -1: keep the rows as they are, and as they
        come from now on); selections and other persistent indexes follow their rows."""
        if not 0 <= column < len(self._columns):
            self._order = None
            return
        self._order = (self._columns[column].key, order == Qt.SortOrder.DescendingOrder)
        self.layoutAboutToBeChanged.emit()
        key, descending = self._order
        positions = sorted_positions([row.get(key) for row in self._rows], descending)
        self._rows = [self._rows[i] for i in positions]
        moved_to = {old: new for new, old in enumerate(positions)}
        before = self.persistentIndexList()
        self.changePersistentIndexList(before, [self.index(moved_to[i.row()], i.column()) for i in before])
        self.layoutChanged.emit()


def sort_key(value: Any) -> tuple:
    """None and '' sort after everything; numbers numerically; text case-insensitively."""
    if value is None or value == "":
        return (2, 0, "")
    if isinstance(value, bool):
        return (0, int(value), "")
    if isinstance(value, (int, float)):
        return (0, value, "")
    return (1, 0, str(value).lower())


def sorted_positions(values: list, descending: bool = False) -> list[int]:
    """The positions of `values` in sort_key order, empty values last in both orders; equal values
    keep their order (a stable sort, as Qt's)."""
    filled = [i for i, value in enumerate(values) if value is not None and value != ""]
    keys = [sort_key(values[i]) for i in filled]
    ranked = sorted(range(len(filled)), key=keys.__getitem__, reverse=descending)
    empty = [i for i, value in enumerate(values) if value is None or value == ""]
    return [filled[r] for r in ranked] + empty


class RowSortProxy(QSortFilterProxyModel):
    """Filters a RowTableModel; a view's sort is passed to the model (RowTableModel.sort), which
    orders its rows in one pass, so this proxy keeps the model's order."""

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        source = self.sourceModel()
        if source is not None:
            source.sort(column, order)

    def change_filter(self, **attributes) -> None:
        """Set the attributes filterAcceptsRow reads, and filter again."""
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.9 deprecates invalidateFilter()
            self.beginFilterChange()
            for key, value in attributes.items():
                setattr(self, key, value)
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            for key, value in attributes.items():
                setattr(self, key, value)
            self.invalidateFilter()


def fit_columns(view, model: RowTableModel, minimum: int = 60, maximum: int = 260, sample: int = 400) -> list[int]:
    """Size each column to its header and its widest cell (up to `sample` rows), within
    [minimum, maximum] pixels. The same result as QTableView.resizeColumnsToContents for plain
    text cells, measured here from the model's strings in one pass: Qt's version asks the
    model for every role of every cell, which costs a large catalogue a noticeable start-up delay.
    Returns the widths the columns would need without the limits (natural_widths)."""
    header = view.horizontalHeader()
    widths = natural_widths(view, model, sample)
    for i, width in enumerate(widths):
        header.resizeSection(i, min(max(width, minimum), maximum))
    return widths


def natural_widths(view, model: RowTableModel, sample: int = 400, columns: list[int] | None = None) -> list[int]:
    """The width in pixels each column (or each of `columns`) needs for its header and its widest
    cell among the first `sample` rows, with the padding and sort arrow room Qt draws."""
    from PySide6.QtGui import QFontMetrics

    cells = QFontMetrics(view.font())
    header_font = QFont(view.horizontalHeader().font())
    header_font.setBold(True)
    heads = QFontMetrics(header_font)
    rows = model._rows[:sample]
    padding = 2 * view.style().pixelMetric(view.style().PixelMetric.PM_FocusFrameHMargin) + 18
    widths = []
    for i in range(len(model._columns)) if columns is None else columns:
        col = model._columns[i]
        # a header of two lines (name, unit) is as wide as its wider line; room for the sort arrow
        width = max(heads.horizontalAdvance(line) for line in col.header.split("\n")) + 22
        texts = {col.text(row) if col.text is not None else col.display(row.get(col.key)) for row in rows}
        if texts:
            width = max(width, max(cells.horizontalAdvance(t) for t in texts) + padding)
        widths.append(width)
    return widths
