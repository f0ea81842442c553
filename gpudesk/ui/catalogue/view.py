"""The catalogue view: a table per kind with search, filters, numeric sorting, a sourced detail
panel, and the user's own entries and quotes. A thin widget that assembles its panels (filters.py,
panels.py) and delegates columns and header memory to columns.py."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMenu, QMessageBox, QTabBar, QVBoxLayout, QWidget

from gpudesk.core.catalogue import EditError
from gpudesk.core.catalogue.fields import KIND_LABELS, KIND_NOUNS
from gpudesk.ui.catalogue.columns import HeaderMemory, KindColumns, record, row_style
from gpudesk.ui.catalogue.detail import detail_html
from gpudesk.ui.catalogue.filters import FILTERS, CatalogueProxy, FilterBar
from gpudesk.ui.catalogue.panels import ActionBar, SidePanel, catalogue_table, table_and_side, table_mime
from gpudesk.ui.models.table import ROW_ROLE, RowTableModel
from gpudesk.ui.widgets.clipboard import set_clipboard

# Cloud price history and embodied carbon get tabs once the bundled catalogue holds figures for them.
KIND_ORDER = ("accelerators", "systems", "models", "cloud", "prices", "cost_factors", "regions", "interconnects",
              "sources")


class CatalogueView(QWidget):
    populated = Signal()
    message = Signal(str)  # for the status bar

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.kind = "accelerators"
        self._sort: dict[str, tuple[int, Qt.SortOrder]] = {}
        self._kind_columns = KindColumns(self)

        title = QLabel("Catalogue")
        title.setObjectName("pageTitle")
        self.subtitle = QLabel("Loading the catalogue…")
        self.subtitle.setObjectName("pageSubtitle")
        self.tabs = _kind_tabs()
        self.tabs.currentChanged.connect(lambda i: self.set_kind(KIND_ORDER[i]))

        self.filter_bar = FilterBar()
        self.filter_bar.changed.connect(self._apply_filters)
        bar = self.filter_bar
        self.search, self.group_combo, self.class_combo = bar.search, bar.group_combo, bar.class_combo
        self.form_combo, self.memory_spin, self.year_spin, self.mine = \
            bar.form_combo, bar.memory_spin, bar.year_spin, bar.mine
        self.action_bar = self._make_action_bar()
        self._make_table()

        self.side = SidePanel()
        self.detail, self.price_chart = self.side.detail, self.side.price_chart
        self.splitter = table_and_side(self.table, self.side)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 10)
        layout.setSpacing(8)
        head = QVBoxLayout()
        head.setSpacing(0)
        head.addWidget(title)
        head.addWidget(self.subtitle)
        layout.addLayout(head)
        layout.addWidget(self.tabs)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.action_bar)
        self._set_enabled(False)

    def _make_action_bar(self) -> ActionBar:
        bar = ActionBar()
        self.add_button, self.edit_button = bar.add_button, bar.edit_button
        self.delete_button, self.quote_button, self.count_label = bar.delete_button, bar.quote_button, bar.count_label
        self.add_button.clicked.connect(lambda *_: self.add_entry())
        self.edit_button.clicked.connect(lambda *_: self.edit_entry())
        self.delete_button.clicked.connect(lambda *_: self.delete_entry())
        self.quote_button.clicked.connect(lambda *_: self.add_quote())
        return bar

    def _make_table(self) -> None:
        self.model = RowTableModel()
        self.model.row_style = row_style
        self.proxy = CatalogueProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = catalogue_table(self.proxy)
        self._header = HeaderMemory(self.table, self.model)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.table.doubleClicked.connect(lambda _i: self.edit_entry())
        header = self.table.horizontalHeader()
        header.sortIndicatorChanged.connect(lambda col, order: self._sort.__setitem__(self.kind, (col, order)))
        header.customContextMenuRequested.connect(
            lambda pos: self._header.menu(self, pos, self.set_column_visible, self.reset_columns))
        self.copy_action = _action(self.table, "Copy", QKeySequence.StandardKey.Copy, self.copy_selection)
        self.reload_action = _action(self, "Reload", QKeySequence.StandardKey.Refresh, self.reload)  # others' edits

    # --------------------------------------------------------------- public API
    def set_catalogue(self, catalogue) -> None:
        previous = self.catalogue
        if previous is not None and getattr(previous, "read_only", False) and previous.version == catalogue.version \
                and all(previous.items(k) == catalogue.items(k) for k in KIND_ORDER):
            # the full catalogue after the start-up snapshot, with the same records: keep the table
            # as it is (its rows are equal), only let editing in
            self.catalogue = catalogue
            self._update_buttons()
            self.populated.emit()
            return
        self.catalogue = catalogue
        counts = {k: catalogue.count(k) for k in KIND_ORDER}
        self.subtitle.setText(
            f"Catalogue {catalogue.version} · {counts['accelerators']} accelerators, {counts['systems']} systems, "
            f"{counts['cloud']} cloud offerings, {counts['regions']} grid regions · every figure with its source and date"
        )
        self._set_enabled(True)
        self.set_kind(self.kind, force=True)
        self.populated.emit()

    def set_kind(self, kind: str, force: bool = False) -> None:
        if kind == self.kind and not force:
            return
        self.kind = kind
        index = KIND_ORDER.index(kind)
        if self.tabs.currentIndex() != index:
            self.tabs.blockSignals(True)
            self.tabs.setCurrentIndex(index)
            self.tabs.blockSignals(False)
        if self.catalogue is None:
            return
        self._reload_rows()
        self._setup_filters()
        self._apply_filters()
        col, order = self._sort.get(kind, (0, Qt.SortOrder.AscendingOrder))
        self.table.sortByColumn(col, order)
        self.quote_button.setVisible(kind in ("accelerators", "systems", "prices"))
        self.add_button.setText(f"Add {KIND_NOUNS[kind]}…")
        if self.proxy.rowCount() > 0:
            self.table.selectRow(0)
        else:
            self.detail.setHtml(detail_html(self.catalogue, kind, None))

    def visible_rows(self) -> list[dict]:
        return [record(self.proxy.index(r, 0).data(ROW_ROLE)) for r in range(self.proxy.rowCount())]

    def selected_rows(self) -> list[dict]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [record(self.proxy.index(r, 0).data(ROW_ROLE)) for r in rows]

    def visible_columns(self) -> list[str]:
        """The keys of the columns shown, in the order shown."""
        return self._header.visible_columns()

    def set_column_visible(self, key: str, visible: bool) -> None:
        self.table.horizontalHeader().setSectionHidden(self.model.column_index(key), not visible)
        self._header.spare.spend()
        self._header.remember()

    def reset_columns(self) -> None:
        self._header.states.pop(self.kind, None)
        self._header.default(self.kind)

    def header_states(self) -> dict[str, tuple[str, QByteArray]]:
        """Per kind, the column keys (comma-joined) and the header's state, for the settings store."""
        self._header.remember()
        return {kind: (",".join(keys), state) for kind, (keys, state) in self._header.states.items()}

    def set_header_states(self, states: dict[str, tuple[str, QByteArray]]) -> None:
        for kind, (keys, state) in states.items():
            self._header.states[kind] = (tuple(keys.split(",")), state)
        if self.catalogue is not None and self._header.kind == self.kind:
            self._header.apply(self.kind)

    def select_id(self, item_id: str) -> bool:
        for r in range(self.proxy.rowCount()):
            if self.proxy.index(r, 0).data(ROW_ROLE)["id"] == item_id:
                self.table.selectRow(r)
                self.table.scrollTo(self.proxy.index(r, 0))
                return True
        return False

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def blank(self, row: dict, name: str, label: str = ""):
        """Why this row's `name` is blank (a Blank), or None; remembered until the rows reload."""
        return self._kind_columns.blank(row, name, label)

    # --------------------------------------------------------------- internals
    def _set_enabled(self, enabled: bool) -> None:
        for w in (self.tabs, self.search, self.add_button, self.quote_button, self.table):
            w.setEnabled(enabled)
        self._update_buttons()

    def _reload_rows(self) -> None:
        selected = [r["id"] for r in self.selected_rows()] if self.table.selectionModel() else []
        self._header.remember()
        self.model.set_columns_and_rows(self._kind_columns.columns(), self._kind_columns.rows())
        self._header.apply(self.kind)
        if selected:
            self.select_id(selected[0])

    def _setup_filters(self) -> None:
        self.filter_bar.setup(self.kind, self.catalogue.items(self.kind))

    def _apply_filters(self) -> None:
        self.proxy.set_criteria(**self.filter_bar.criteria(self.kind, self))
        total = self.model.rowCount()
        shown = self.proxy.rowCount()
        noun = KIND_LABELS[self.kind].lower()
        self.count_label.setText(f"{shown} of {total} {noun}" if shown != total else f"{total} {noun}")

    def _selection_changed(self, *_args) -> None:
        rows = self.selected_rows()
        record = rows[0] if rows else None
        if self.catalogue is not None:
            self.detail.setHtml(detail_html(self.catalogue, self.kind, record))
            history = self.catalogue.price_history(self.kind, record["id"]) if record else {}
            self.price_chart.show_history(history, "USD per hour" if self.kind == "cloud" else "USD")
        self._update_buttons()

    def _update_buttons(self) -> None:
        rows = self.selected_rows() if self.table.selectionModel() else []
        one = len(rows) == 1
        # the start-up snapshot is read-only: editing waits for the full catalogue (a moment later)
        enabled = self.catalogue is not None and not getattr(self.catalogue, "read_only", False)
        self.add_button.setEnabled(enabled)
        self.quote_button.setEnabled(enabled)
        self.edit_button.setEnabled(enabled and one)
        self.delete_button.setEnabled(enabled and one and rows[0].get("origin") == "user_added")
        self.delete_button.setToolTip("Only your own entries can be deleted" if one and rows[0].get("origin") != "user_added" else "")

    def _context_menu(self, pos) -> None:
        rows = self.selected_rows()
        menu = QMenu(self)
        menu.addAction(self.copy_action)
        if len(rows) == 1 and not getattr(self.catalogue, "read_only", False):
            menu.addAction("Edit…", self.edit_entry)
            if rows[0].get("origin") == "user_added":
                menu.addAction("Delete", self.delete_entry)
            if rows[0].get("origin") == "user_edited":
                menu.addAction("Revert to the bundled figures", self.revert_entry)
            if self.kind in ("accelerators", "systems"):
                menu.addAction("Add price quote…", self.add_quote)
        menu.exec(self.table.viewport().mapToGlobal(pos))

    # --------------------------------------------------------------- actions
    def copy_selection(self) -> None:
        # the columns as shown (their order, without the hidden ones), with the computed prices
        chosen = sorted({i.row() for i in self.table.selectionModel().selectedRows()}) or range(self.proxy.rowCount())
        rows = [self.proxy.index(r, 0).data(ROW_ROLE) for r in chosen]
        by_key = {c.key: c for c in self.model.columns()}
        mime = table_mime([by_key[k] for k in self.visible_columns()], rows)
        set_clipboard(mime)
        self.message.emit(f"Copied {len(rows)} row(s) as a table")

    def add_entry(self) -> None:
        from gpudesk.ui.catalogue.dialogs import EntryDialog

        dialog = EntryDialog(self.catalogue, self.kind, None, self)
        if dialog.exec() and dialog.result_record:
            self._after_edit(dialog.result_record["id"], f"Added {KIND_NOUNS[self.kind]} {dialog.result_record['id']}")

    def edit_entry(self) -> None:
        rows = self.selected_rows()
        if len(rows) != 1:
            return
        from gpudesk.ui.catalogue.dialogs import EntryDialog

        dialog = EntryDialog(self.catalogue, self.kind, rows[0], self)
        if dialog.exec() and dialog.result_record:
            self._after_edit(rows[0]["id"], f"Saved {KIND_NOUNS[self.kind]} {rows[0]['id']}")

    def delete_entry(self) -> None:
        rows = self.selected_rows()
        if len(rows) != 1:
            return
        record = rows[0]
        answer = QMessageBox.question(self, "Delete entry", f"Delete your {KIND_NOUNS[self.kind]} '{record['id']}'?")
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            self.catalogue.delete_item(self.kind, record["id"], expected_version=record.get("version"))
        except EditError as exc:
            QMessageBox.warning(self, "Not deleted", str(exc))
            return
        self._after_edit(None, f"Deleted {KIND_NOUNS[self.kind]} {record['id']}")

    def revert_entry(self) -> None:
        rows = self.selected_rows()
        if len(rows) == 1:
            try:
                self.catalogue.revert_item(self.kind, rows[0]["id"])
            except EditError as exc:
                QMessageBox.warning(self, "Not reverted", str(exc))
                return
            self._after_edit(rows[0]["id"], f"Reverted {rows[0]['id']} to the bundled figures")

    def add_quote(self) -> None:
        rows = self.selected_rows()
        item = rows[0]["id"] if rows and self.kind in ("accelerators", "systems") else (
            rows[0]["item"] if rows and self.kind == "prices" else None)
        from gpudesk.ui.catalogue.dialogs import QuoteDialog

        dialog = QuoteDialog(self.catalogue, item, self)
        if dialog.exec() and dialog.result_record:
            self._after_edit(rows[0]["id"] if rows else None,
                             f"Added a quote of ${dialog.result_record['usd']:,.0f} for {dialog.result_record['item']}")

    def reload(self) -> None:
        """Read the catalogue again from its database (others' quotes and edits on a shared server)."""
        if hasattr(self.catalogue, "refresh"):
            self.catalogue.refresh()
            self._after_edit(None, "Reloaded the catalogue from its database")

    def _after_edit(self, select_id: str | None, message: str) -> None:
        self._reload_rows()
        self._setup_filters()
        self._apply_filters()
        if select_id:
            self.select_id(select_id)
        self._selection_changed()
        self.message.emit(message)


def _kind_tabs() -> QTabBar:
    tabs = QTabBar()
    tabs.setObjectName("kindTabs")
    tabs.setDrawBase(False)
    tabs.setExpanding(False)
    for kind in KIND_ORDER:
        tabs.addTab(KIND_LABELS[kind])
    return tabs


def _action(owner, text: str, key, slot) -> QAction:
    """A keyboard action of `owner` and the widgets inside it."""
    action = QAction(text, owner)
    action.setShortcut(key)
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.triggered.connect(lambda *_: slot())
    owner.addAction(action)
    return action


__all__ = ["CatalogueView", "CatalogueProxy", "FILTERS", "KIND_ORDER"]
