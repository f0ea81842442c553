"""The shared table model sorts its own rows (gpudesk/ui/models/table.py): numbers as numbers,
text without case, empty cells last in both orders, a stable order for ties; the order survives
new rows, a selection follows its row, and the filtering proxy shows the model's order."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QTableView

from gpudesk.ui.models.table import ROW_ROLE, Column, RowSortProxy, RowTableModel, sorted_positions

ASC, DESC = Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder

ROWS = [
    {"name": "b", "memory": 16.0, "tag": "beta"},
    {"name": "a", "memory": None, "tag": "Alpha"},
    {"name": "c", "memory": 128.0, "tag": ""},
    {"name": "d", "memory": 80, "tag": "alpha"},
    {"name": "e", "memory": 16.0, "tag": None},
    {"name": "f", "memory": "", "tag": "Gamma"},
]


class _Filter(RowSortProxy):
    """Hides one name, as the catalogue's and the measurements' filters hide rows."""

    hidden = "d"

    def filterAcceptsRow(self, source_row, source_parent):  # noqa: N802 - Qt override
        return self.sourceModel().row(source_row)["name"] != self.hidden


@pytest.fixture
def table(qtbot):
    model = RowTableModel([Column("name", "Name"), Column("memory", "Memory\n(GB)", numeric=True),
                           Column("tag", "Tag")])
    model.set_rows(ROWS)
    proxy = _Filter()
    proxy.setSourceModel(model)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(proxy)
    view.setSortingEnabled(True)  # sorts by the header's indicator (first column, descending)
    view.sortByColumn(0, ASC)  # a ... f: the order ties keep below
    return model, proxy, view


def names(proxy) -> list[str]:
    return [proxy.index(r, 0).data(ROW_ROLE)["name"] for r in range(proxy.rowCount())]


def test_numbers_sort_as_numbers_with_empty_cells_last_in_both_orders_and_ties_in_their_order(table):
    model, proxy, view = table
    view.sortByColumn(1, ASC)
    assert [r["name"] for r in model.rows()] == ["b", "e", "d", "c", "a", "f"]  # 16 16 80 128, then empty
    assert names(proxy) == ["b", "e", "c", "a", "f"]  # the proxy filters, keeping the model's order
    view.sortByColumn(1, DESC)
    assert [r["name"] for r in model.rows()] == ["c", "d", "b", "e", "a", "f"]  # ties keep their order


def test_text_sorts_without_case_and_empty_text_last(table):
    model, _proxy, view = table
    view.sortByColumn(2, ASC)
    assert [r["tag"] for r in model.rows()] == ["Alpha", "alpha", "beta", "Gamma", "", None]
    view.sortByColumn(2, DESC)
    assert [r["tag"] for r in model.rows()] == ["Gamma", "beta", "Alpha", "alpha", "", None]


def test_new_rows_come_in_the_chosen_order_and_column_minus_one_keeps_the_order_they_come_in(table):
    model, proxy, view = table
    view.sortByColumn(0, DESC)
    model.set_rows([{"name": "x"}, {"name": "z"}, {"name": "y"}])
    assert names(proxy) == ["z", "y", "x"]
    proxy.sort(-1)
    model.set_rows([{"name": "x"}, {"name": "z"}, {"name": "y"}])
    assert names(proxy) == ["x", "z", "y"]


def test_the_selection_follows_its_row_through_a_sort(table):
    model, proxy, view = table
    view.sortByColumn(0, ASC)
    row_of_c = names(proxy).index("c")
    view.selectionModel().select(proxy.index(row_of_c, 0),
                                 QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
    view.sortByColumn(1, DESC)
    selected = view.selectionModel().selectedRows()
    assert [i.data(ROW_ROLE)["name"] for i in selected] == ["c"]
    assert selected[0].row() == 0  # c has the most memory


def test_sorted_positions_orders_mixed_values_as_the_table_shows_them():
    values = [3, "b", None, 2.5, "A", "", True, 10]
    assert sorted_positions(values) == [6, 3, 0, 7, 4, 1, 2, 5]  # True as 1, numbers, text, then empty
    assert sorted_positions(values, descending=True) == [1, 4, 7, 0, 3, 6, 2, 5]


def test_each_role_gets_what_a_view_shows(qtbot):
    """What the views draw from the shared model: the text, numbers right-aligned and text left,
    the column's tooltip before the row's, the row style's italics and colour, the raw value for
    sorting and the row itself; nothing for an index outside the rows."""
    from PySide6.QtCore import QModelIndex
    from PySide6.QtGui import QBrush, QFont

    from gpudesk.ui.models.table import SORT_ROLE

    model = RowTableModel([
        Column("name", "Name", tooltip=lambda row: f"the {row['name']}" if row["name"] == "b" else None),
        Column("memory", "Memory\n(GB)", numeric=True, decimals=1),
        Column("tag", "Tag", text=lambda row: (row["tag"] or "?").upper()),
    ])
    model.set_rows(ROWS[:2])
    model.row_style = lambda row: {"italic": True, "color": "#123456", "tooltip": "mine"} if row["name"] == "a" else {}
    b, a = model.row(0), model.row(1)
    assert (b["name"], a["name"]) == ("b", "a")
    cell = model.index
    right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    left = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    assert [model.data(cell(0, c)) for c in range(3)] == ["b", "16.0", "BETA"]
    assert [model.data(cell(0, c), Qt.ItemDataRole.TextAlignmentRole) for c in range(3)] == [left, right, left]
    assert [model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.TextAlignmentRole)
            for c in range(3)] == [left, right, left]
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Memory\n(GB)"
    assert model.headerData(1, Qt.Orientation.Vertical) == "2"
    assert model.data(cell(0, 1), SORT_ROLE) == 16.0 and model.data(cell(1, 2), SORT_ROLE) == "Alpha"
    assert model.data(cell(1, 0), ROW_ROLE) is a
    assert model.data(cell(0, 0), Qt.ItemDataRole.ToolTipRole) == "the b"  # the column's own tooltip
    assert model.data(cell(1, 0), Qt.ItemDataRole.ToolTipRole) == "mine"  # else the row style's
    assert model.data(cell(0, 1), Qt.ItemDataRole.ToolTipRole) is None
    font = model.data(cell(1, 2), Qt.ItemDataRole.FontRole)
    brush = model.data(cell(1, 2), Qt.ItemDataRole.ForegroundRole)
    assert isinstance(font, QFont) and font.italic() and isinstance(brush, QBrush)
    assert brush.color().name() == "#123456"
    assert model.data(cell(0, 2), Qt.ItemDataRole.FontRole) is None
    assert model.data(cell(0, 2), Qt.ItemDataRole.ForegroundRole) is None
    assert model.data(QModelIndex()) is None and model.data(cell(0, 0), Qt.ItemDataRole.DecorationRole) is None
    assert model.flags(cell(0, 0)) == Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
    assert model.flags(QModelIndex()) == Qt.ItemFlag.NoItemFlags
