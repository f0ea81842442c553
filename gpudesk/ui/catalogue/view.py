"""The catalogue view: a table per kind with search, filters, numeric sorting, a sourced detail
panel, and the user's own entries and quotes."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QByteArray, QMimeData, QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QFont, QFontMetrics, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabBar,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpudesk.core.catalogue import EditError
from gpudesk.core.catalogue.blanks import why_blank
from gpudesk.core.catalogue.fields import KIND_LABELS, KIND_NOUNS, KINDS, PRICE_KIND_WORDS
from gpudesk.ui import theme
from gpudesk.ui.catalogue.detail import detail_html
from gpudesk.ui.catalogue.price_chart import PriceChart
from gpudesk.ui.models.table import ROW_ROLE, SORT_ROLE, Column, RowSortProxy, RowTableModel, fit_columns, format_value
from gpudesk.ui.widgets.clipboard import set_clipboard

# Cloud price history and embodied carbon get tabs once the bundled catalogue holds figures for them.
KIND_ORDER = ("accelerators", "systems", "models", "cloud", "prices", "regions", "interconnects", "sources")

# Per kind: the field behind the first and second filter combo, and which range filters apply.
FILTERS = {
    "accelerators": {"group": ("vendor", "Vendor"), "class": ("device_class", "Class"), "form": "form_factor",
                     "memory": "memory_gb", "year": "year"},
    "systems": {"group": ("vendor", "Vendor"), "class": ("kind", "Kind")},
    "cloud": {"group": ("provider", "Provider"), "class": ("accelerator", "Accelerator")},
    "prices": {"group": ("kind", "Kind"), "class": ("item", "Item")},
    "models": {"group": ("developer", "Developer"), "class": ("attention", "Attention")},
    "cloud_prices": {"group": ("pricing", "Pricing"), "class": ("offering", "Offering")},
    "embodied": {"group": ("boundary", "Boundary"), "class": ("scope", "Covers")},
    "regions": {"group": ("country", "Country"), "year": "grid_year"},
    "interconnects": {"group": ("family", "Family"), "year": "year"},
    "sources": {"group": ("publisher", "Publisher"), "class": ("kind", "Kind")},
}

PLURALS = {"Class": "classes", "Family": "families", "Country": "countries", "Form factor": "form factors"}

# The columns a buyer chooses by lead the table; every other column stays one right-click away on
# the header. Kinds not listed show all their columns but the ID (the detail panel shows it).
DEFAULT_COLUMNS = {
    "accelerators": ("name", "memory_gb", "mem_bandwidth_gbs", "bf16_tflops", "fp8_tflops", "tdp_w",
                     "latest_price_usd", "latest_price_date", "vendor", "device_class", "year"),
    "systems": ("name", "accelerator", "accelerator_count", "system_memory_gb", "system_power_w",
                "latest_price_usd", "latest_price_date", "vendor", "kind"),
}
# Headers the view words more precisely than the field's label (the catalogue's peaks are dense).
# Two lines (name, unit) keep the numeric columns narrow enough for the buyer's figures to fit a laptop.
HEADERS = {"memory_gb": "Memory\n(GB)", "mem_bandwidth_gbs": "Bandwidth\n(GB/s)",
           "bf16_tflops": "BF16 dense\n(TFLOPS)", "fp8_tflops": "FP8 dense\n(TFLOPS)", "tdp_w": "TDP\n(W)",
           "accelerator_count": "Count", "system_memory_gb": "Memory\n(GB)", "system_power_w": "Power\n(W)"}
# Computed per row from the price list (not stored): the price a comparison would use, and its date.
PRICE_KEYS = ("latest_price_usd", "latest_price_date")

SEARCH_KEYS = ("id", "name", "vendor", "family", "architecture", "form_factor", "memory_type", "provider",
               "instance_type", "accelerator", "item", "country", "title", "publisher", "generation")


class CatalogueProxy(RowSortProxy):
    """Search and filters over the rows of one kind; empty cells sort last in both orders."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.kind = "accelerators"
        self.words: list[str] = []
        self.group: tuple[str, str] | None = None  # (field, value)
        self.klass: tuple[str, str] | None = None
        self.form: tuple[str, str] | None = None
        self.memory_min: tuple[str, float] | None = None
        self.year_min: tuple[str, int] | None = None
        self.mine_only = False

    def set_criteria(self, **criteria) -> None:
        self.change_filter(**criteria)

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex) -> bool:
        row = self.sourceModel().row(source_row)
        for criterion in (self.group, self.klass, self.form):
            if criterion and criterion[1] and str(row.get(criterion[0]) or "") != criterion[1]:
                return False
        if self.memory_min and self.memory_min[1] > 0:
            mem = row.get(self.memory_min[0])
            if mem is None or mem < self.memory_min[1]:
                return False
        if self.year_min and self.year_min[1] > 0:
            year = row.get(self.year_min[0])
            if year is None or year < self.year_min[1]:
                return False
        if self.mine_only and row.get("origin") == "bundled":
            return False
        if self.words:
            haystack = " ".join(str(row.get(k) or "") for k in SEARCH_KEYS).lower()
            if not all(w in haystack for w in self.words):
                return False
        return True



class CatalogueView(QWidget):
    populated = Signal()
    message = Signal(str)  # for the status bar

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.kind = "accelerators"
        self._sort: dict[str, tuple[int, Qt.SortOrder]] = {}
        # per kind: the column keys and the header's saved state (order, widths, hidden columns)
        self._header_states: dict[str, tuple[tuple[str, ...], QByteArray]] = {}
        self._header_kind: str | None = None  # the kind whose columns the header shows now
        self._blanks: dict = {}  # (kind, id, field) -> why the cell is blank

        title = QLabel("Catalogue")
        title.setObjectName("pageTitle")
        self.subtitle = QLabel("Loading the catalogue…")
        self.subtitle.setObjectName("pageSubtitle")

        self.tabs = QTabBar()
        self.tabs.setObjectName("kindTabs")
        self.tabs.setDrawBase(False)
        self.tabs.setExpanding(False)
        for kind in KIND_ORDER:
            self.tabs.addTab(KIND_LABELS[kind])
        self.tabs.currentChanged.connect(lambda i: self.set_kind(KIND_ORDER[i]))

        self.search = QLineEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search names, vendors, architectures…  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(240)
        self.search.textChanged.connect(self._apply_filters)
        self.group_combo = QComboBox()
        self.group_combo.setObjectName("groupFilter")
        self.group_combo.setMinimumWidth(130)
        self.class_combo = QComboBox()
        self.class_combo.setObjectName("classFilter")
        self.class_combo.setMinimumWidth(120)
        self.form_combo = QComboBox()
        self.form_combo.setObjectName("formFilter")
        self.form_combo.setMinimumWidth(130)
        self.memory_spin = QDoubleSpinBox()
        self.memory_spin.setObjectName("memoryFilter")
        self.memory_spin.setRange(0, 100000)
        self.memory_spin.setDecimals(0)
        self.memory_spin.setSuffix(" GB")
        self.memory_spin.setPrefix("≥ ")
        self.memory_spin.setSpecialValueText("any memory")
        self.memory_spin.setSingleStep(8)
        self.year_spin = QSpinBox()
        self.year_spin.setObjectName("yearFilter")
        self.year_spin.setRange(1999, 2040)
        self.year_spin.setSpecialValueText("any year")
        self.year_spin.setPrefix("since ")
        self.year_spin.setValue(1999)
        self.mine = QCheckBox("Mine only")
        for combo in (self.group_combo, self.class_combo, self.form_combo):
            combo.currentIndexChanged.connect(self._apply_filters)
        self.memory_spin.valueChanged.connect(self._apply_filters)
        self.year_spin.valueChanged.connect(self._apply_filters)
        self.mine.toggled.connect(self._apply_filters)

        filters = QHBoxLayout()
        filters.setSpacing(6)
        filters.addWidget(self.search, 2)
        for w in (self.group_combo, self.class_combo, self.form_combo, self.memory_spin, self.year_spin, self.mine):
            filters.addWidget(w)
        filters.addStretch(0)

        self.add_button = QPushButton("Add…")
        self.add_button.setObjectName("addButton")
        self.edit_button = QPushButton("Edit…")
        self.delete_button = QPushButton("Delete")
        self.quote_button = QPushButton("Add quote…")
        self.quote_button.setObjectName("quoteButton")
        self.add_button.clicked.connect(lambda *_: self.add_entry())
        self.edit_button.clicked.connect(lambda *_: self.edit_entry())
        self.delete_button.clicked.connect(lambda *_: self.delete_entry())
        self.quote_button.clicked.connect(lambda *_: self.add_quote())
        self.count_label = QLabel("")
        self.count_label.setObjectName("hint")
        actions = QHBoxLayout()
        actions.addWidget(self.count_label)
        actions.addStretch(1)
        for b in (self.add_button, self.edit_button, self.delete_button, self.quote_button):
            actions.addWidget(b)

        self.model = RowTableModel()
        self.model.row_style = _row_style
        self.proxy = CatalogueProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setObjectName("catalogueTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(26)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.table.doubleClicked.connect(lambda _i: self.edit_entry())
        self.table.horizontalHeader().sortIndicatorChanged.connect(
            lambda col, order: self._sort.__setitem__(self.kind, (col, order)))
        header = self.table.horizontalHeader()
        header.setSectionsMovable(True)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._header_menu)
        header.setToolTip("Drag a header to reorder; right-click to choose the columns")

        self.copy_action = QAction("Copy", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.copy_action.triggered.connect(lambda *_: self.copy_selection())
        self.table.addAction(self.copy_action)

        self.detail = QTextBrowser()
        self.detail.setObjectName("detail")
        self.detail.setOpenExternalLinks(True)
        self.detail.setMinimumWidth(280)

        self.price_chart = PriceChart()
        self.side = QSplitter(Qt.Orientation.Vertical)
        self.side.setObjectName("catalogueSide")
        self.side.addWidget(self.detail)
        self.side.addWidget(self.price_chart)
        self.side.setStretchFactor(0, 3)
        self.side.setStretchFactor(1, 2)
        self.side.setSizes([520, 280])
        self.side.setChildrenCollapsible(False)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("catalogueSplitter")
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.side)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([860, 320])
        self.splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 10)
        layout.setSpacing(8)
        head = QVBoxLayout()
        head.setSpacing(0)
        head.addWidget(title)
        head.addWidget(self.subtitle)
        layout.addLayout(head)
        layout.addWidget(self.tabs)
        layout.addLayout(filters)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(actions)
        self._set_enabled(False)

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
        counts = {k: len(catalogue.items(k)) for k in KIND_ORDER}
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
        return [_record(self.proxy.index(r, 0).data(ROW_ROLE)) for r in range(self.proxy.rowCount())]

    def selected_rows(self) -> list[dict]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [_record(self.proxy.index(r, 0).data(ROW_ROLE)) for r in rows]

    def visible_columns(self) -> list[str]:
        """The keys of the columns shown, in the order shown."""
        header = self.table.horizontalHeader()
        cols = self.model.columns()
        logical = [header.logicalIndex(v) for v in range(header.count())]
        return [cols[i].key for i in logical if not header.isSectionHidden(i)]

    def set_column_visible(self, key: str, visible: bool) -> None:
        self.table.horizontalHeader().setSectionHidden(self.model.column_index(key), not visible)
        self._remember_header()

    def reset_columns(self) -> None:
        self._header_states.pop(self.kind, None)
        self._default_header()

    def header_states(self) -> dict[str, tuple[str, QByteArray]]:
        """Per kind, the column keys (comma-joined) and the header's state, for the settings store."""
        self._remember_header()
        return {kind: (",".join(keys), state) for kind, (keys, state) in self._header_states.items()}

    def set_header_states(self, states: dict[str, tuple[str, QByteArray]]) -> None:
        for kind, (keys, state) in states.items():
            self._header_states[kind] = (tuple(keys.split(",")), state)
        if self.catalogue is not None and self._header_kind == self.kind:
            self._apply_header()

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

    # --------------------------------------------------------------- internals
    def _set_enabled(self, enabled: bool) -> None:
        for w in (self.tabs, self.search, self.add_button, self.quote_button, self.table):
            w.setEnabled(enabled)
        self._update_buttons()

    def _columns(self) -> list[Column]:
        cols = []
        self._blanks = {}
        for spec in KINDS[self.kind]:
            if not spec.column:
                continue
            tooltip = text = None
            if spec.figure or (spec.type == "ref" and spec.ref == "interconnects"):
                # a blank figure says why: not applicable ("n/a"), not published or unknown ("—")
                tooltip = self._source_tooltip(spec.name, spec.label)
                text = self._cell_text(spec)
            cols.append(Column(spec.name, HEADERS.get(spec.name, spec.header()), numeric=spec.numeric, tooltip=tooltip,
                               text=text))
        if self.kind in DEFAULT_COLUMNS:
            cols.append(Column("latest_price_usd", "Price\n($)", numeric=True, decimals=0, tooltip=_price_tooltip))
            cols.append(Column("latest_price_date", "Price\ndate", tooltip=_price_tooltip))
            order = {key: i for i, key in enumerate(DEFAULT_COLUMNS[self.kind])}
            cols.sort(key=lambda c: order.get(c.key, len(order)))  # stable: the rest keep the fields' order
        return cols

    def _rows(self) -> list[dict]:
        rows = self.catalogue.items(self.kind)
        if self.kind not in DEFAULT_COLUMNS:
            return rows
        out = []
        for row in rows:
            price = self.catalogue.latest_price(row["id"])
            out.append({**row, "latest_price_usd": price["usd"] if price else None,
                        "latest_price_date": price.get("date") if price else None,
                        "latest_price_kind": price["kind"] if price else None,
                        "latest_price_notes": price.get("notes") if price else None})
        return out

    def _remember_header(self) -> None:
        if self._header_kind is None or self.model.columnCount() == 0:
            return
        keys = tuple(c.key for c in self.model.columns())
        self._header_states[self._header_kind] = (keys, self.table.horizontalHeader().saveState())

    def _apply_header(self) -> None:
        """The remembered order, widths and hidden columns of this kind's table, else the defaults."""
        header = self.table.horizontalHeader()
        keys = tuple(c.key for c in self.model.columns())
        saved = self._header_states.get(self.kind)
        self._header_kind = self.kind
        if saved and saved[0] == keys and header.restoreState(saved[1]):
            return
        self._default_header()

    def _default_header(self) -> None:
        header = self.table.horizontalHeader()
        for visual in range(header.count()):  # the model's order, undoing any moves
            logical = header.logicalIndex(visual)
            if logical != visual:
                header.moveSection(header.visualIndex(visual), visual)
        shown = DEFAULT_COLUMNS.get(self.kind)
        for i, col in enumerate(self.model.columns()):
            header.setSectionHidden(i, col.key == "id" or (shown is not None and col.key not in shown))
        self._fit_columns()

    def _header_menu(self, pos) -> None:
        header = self.table.horizontalHeader()
        menu = QMenu(self)
        for i, col in enumerate(self.model.columns()):
            action = menu.addAction(col.header)
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(i))
            action.toggled.connect(lambda on, key=col.key: self.set_column_visible(key, on))
        menu.addSeparator()
        menu.addAction("Default columns", self.reset_columns)
        menu.exec(header.mapToGlobal(pos))

    def blank(self, row: dict, name: str, label: str = ""):
        """Why this row's `name` is blank (a Blank), or None; remembered until the rows reload."""
        if self.catalogue is None or (row.get(name) is not None and row.get(name) != ""):
            return None
        key = (self.kind, row.get("id"), name)
        if key not in self._blanks:
            self._blanks[key] = why_blank(self.catalogue, self.kind, _record(row), name, label)
        return self._blanks[key]

    def _cell_text(self, spec):
        def text(row: dict) -> str:
            blank = self.blank(row, spec.name, spec.label)
            if blank is not None:
                return blank.short
            return format_value(row.get(spec.name), field=spec.name)
        return text

    def _source_tooltip(self, name: str, label: str = ""):
        def tip(row: dict) -> str | None:
            if self.catalogue is None:
                return None
            blank = self.blank(row, name, label)
            if blank is not None:
                return blank.text
            if row.get(name) is None:
                return None
            src = self.catalogue.figure_source(self.kind, row, name)
            if src and src.get("derived"):
                titles = "; ".join(dict.fromkeys(i["title"] for i in src["derived"]["input_sources"]))
                return f"{src['derived']['formula']}\ninputs from: {titles}"
            return f"{src['title']} ({src['date'] or 'undated'})" if src else None
        return tip

    def _reload_rows(self) -> None:
        selected = [r["id"] for r in self.selected_rows()] if self.table.selectionModel() else []
        self._remember_header()
        self.model.set_columns_and_rows(self._columns(), self._rows())
        self._apply_header()
        if selected:
            self.select_id(selected[0])

    def _setup_filters(self) -> None:
        spec = FILTERS[self.kind]
        rows = self.catalogue.items(self.kind)
        for combo, key in ((self.group_combo, "group"), (self.class_combo, "class"), (self.form_combo, "form")):
            conf = spec.get(key)
            combo.blockSignals(True)
            combo.clear()
            if conf:
                field, title = conf if isinstance(conf, tuple) else (conf, "Form factor")
                combo.addItem(f"All {PLURALS.get(title, title.lower() + 's')}", "")
                for value in sorted({str(r.get(field)) for r in rows if r.get(field)}, key=str.lower):
                    combo.addItem(value, value)
                combo.setProperty("field", field)
                combo.setVisible(True)
            else:
                combo.setVisible(False)
            combo.blockSignals(False)
        self.memory_spin.setVisible("memory" in spec)
        self.year_spin.setVisible("year" in spec)

    def _apply_filters(self) -> None:
        spec = FILTERS[self.kind]

        def combo_value(combo):
            return (combo.property("field"), combo.currentData()) if combo.isVisibleTo(self) and combo.currentData() else None

        self.proxy.set_criteria(
            kind=self.kind,
            words=[w for w in self.search.text().lower().split() if w],
            group=combo_value(self.group_combo),
            klass=combo_value(self.class_combo),
            form=combo_value(self.form_combo),
            memory_min=(spec["memory"], self.memory_spin.value()) if "memory" in spec else None,
            year_min=(spec["year"], self.year_spin.value() if self.year_spin.value() > 1999 else 0) if "year" in spec else None,
            mine_only=self.mine.isChecked(),
        )
        total = self.model.rowCount()
        shown = self.proxy.rowCount()
        noun = KIND_LABELS[self.kind].lower()
        self.count_label.setText(f"{shown} of {total} {noun}" if shown != total else f"{total} {noun}")

    def _fit_columns(self) -> None:
        fit_columns(self.table, self.model, maximum=230)
        # fit_columns measures a two-line header as one line: measure its longest line instead
        font = QFont(self.table.horizontalHeader().font())
        font.setBold(True)  # the style sheet's header font
        metrics = QFontMetrics(font)
        for i, col in enumerate(self.model.columns()):
            if "\n" in col.header:
                head = max(metrics.horizontalAdvance(line) for line in col.header.split("\n")) + 30
                texts = {col.display(row.get(col.key)) for row in self.model.rows()[:400]}
                cells = max((self.table.fontMetrics().horizontalAdvance(t) for t in texts), default=0) + 22
                self.table.horizontalHeader().resizeSection(i, max(60, head, cells))

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
        cols = [by_key[k] for k in self.visible_columns()]
        heads = [c.header.replace("\n", " ") for c in cols]  # two-line headers on one line
        lines = ["\t".join(heads)]
        html_rows = ["<tr>" + "".join(f"<th>{escape(h)}</th>" for h in heads) + "</tr>"]
        for row in rows:
            cells = [c.display(row.get(c.key)) for c in cols]
            lines.append("\t".join(cells))
            html_rows.append("<tr>" + "".join(f"<td>{escape(x)}</td>" for x in cells) + "</tr>")
        mime = QMimeData()
        mime.setText("\n".join(lines) + "\n")
        mime.setHtml("<table>" + "".join(html_rows) + "</table>")
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
            self.catalogue.delete_item(self.kind, record["id"])
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

    def _after_edit(self, select_id: str | None, message: str) -> None:
        self._reload_rows()
        self._setup_filters()
        self._apply_filters()
        if select_id:
            self.select_id(select_id)
        self._selection_changed()
        self.message.emit(message)


def _record(row: dict) -> dict:
    """A catalogue record as stored: the row without the view's computed price columns."""
    if "latest_price_usd" not in row:
        return row
    return {k: v for k, v in row.items() if k not in (*PRICE_KEYS, "latest_price_kind", "latest_price_notes")}


def _price_tooltip(row: dict) -> str | None:
    if row.get("latest_price_usd") is None:
        return "No price in the catalogue: add a quote (right-click)"
    kind = PRICE_KIND_WORDS.get(row["latest_price_kind"], f"{row['latest_price_kind']} price")
    tip = f"{kind} ${row['latest_price_usd']:,.0f}, {row.get('latest_price_date') or 'undated'}"
    if row.get("latest_price_notes"):
        tip += f"\nWhat it prices: {row['latest_price_notes']}"
    return tip + "\nThe price a comparison uses (the newest quote, else list or MSRP, else street)."


def _row_style(row: dict) -> dict:
    origin = row.get("origin")
    if origin == "user_added":
        return {"color": theme.hex("user_entry"), "tooltip": "Your entry"}
    if origin == "user_edited":
        return {"color": theme.hex("caution"), "tooltip": "Edited by you: kept when the catalogue updates"}
    return {}


__all__ = ["CatalogueView", "CatalogueProxy"]
