"""The catalogue table's columns and rows per kind (with the computed price columns and the reason
behind each blank cell), and the header's remembered order, widths and hidden columns per kind."""

from __future__ import annotations

from PySide6.QtCore import QByteArray
from PySide6.QtWidgets import QMenu, QTableView

from gpudesk.core.catalogue.blanks import why_blank
from gpudesk.core.catalogue.fields import KINDS, PRICE_KIND_WORDS
from gpudesk.ui import theme
from gpudesk.ui.models.spare_width import SpareWidth
from gpudesk.ui.models.table import Column, RowTableModel, fit_columns, format_value

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
FIT_MAXIMUM = 230  # a column's fitted width at most (pixels); the name takes what a wide window spares
# Computed per row from the price list (not stored): the price a comparison would use, and its date.
PRICE_KEYS = ("latest_price_usd", "latest_price_date")


class KindColumns:
    """The columns and rows of the kind the view shows; reads the view's `catalogue` and `kind` when
    called, and remembers why cells are blank until the rows reload."""

    def __init__(self, view):
        self.view = view
        self.blanks: dict = {}  # (kind, id, field) -> why the cell is blank

    def columns(self) -> list[Column]:
        kind = self.view.kind
        cols = []
        self.blanks = {}
        for spec in KINDS[kind]:
            if not spec.column:
                continue
            tooltip = text = None
            if spec.figure or (spec.type == "ref" and spec.ref == "interconnects"):
                # a blank figure says why: not applicable ("n/a"), not published or unknown ("—")
                tooltip = self.source_tooltip(spec.name, spec.label)
                text = self.cell_text(spec)
            cols.append(Column(spec.name, HEADERS.get(spec.name, spec.header()), numeric=spec.numeric, tooltip=tooltip,
                               text=text))
        if kind in DEFAULT_COLUMNS:
            cols.append(Column("latest_price_usd", "Price\n($)", numeric=True, decimals=0, tooltip=price_tooltip))
            cols.append(Column("latest_price_date", "Price\ndate", tooltip=price_tooltip))
            order = {key: i for i, key in enumerate(DEFAULT_COLUMNS[kind])}
            cols.sort(key=lambda c: order.get(c.key, len(order)))  # stable: the rest keep the fields' order
        return cols

    def rows(self) -> list[dict]:
        catalogue, kind = self.view.catalogue, self.view.kind
        rows = catalogue.items(kind)
        if kind not in DEFAULT_COLUMNS:
            return rows
        out = []
        for row in rows:
            price = catalogue.latest_price(row["id"])
            out.append({**row, "latest_price_usd": price["usd"] if price else None,
                        "latest_price_date": price.get("date") if price else None,
                        "latest_price_kind": price["kind"] if price else None,
                        "latest_price_notes": price.get("notes") if price else None})
        return out

    def blank(self, row: dict, name: str, label: str = ""):
        """Why this row's `name` is blank (a Blank), or None; remembered until the rows reload."""
        catalogue, kind = self.view.catalogue, self.view.kind
        if catalogue is None or (row.get(name) is not None and row.get(name) != ""):
            return None
        key = (kind, row.get("id"), name)
        if key not in self.blanks:
            self.blanks[key] = why_blank(catalogue, kind, record(row), name, label)
        return self.blanks[key]

    def cell_text(self, spec):
        def text(row: dict) -> str:
            blank = self.blank(row, spec.name, spec.label)
            if blank is not None:
                return blank.short
            return format_value(row.get(spec.name), field=spec.name)
        return text

    def source_tooltip(self, name: str, label: str = ""):
        def tip(row: dict) -> str | None:
            catalogue = self.view.catalogue
            if catalogue is None:
                return None
            blank = self.blank(row, name, label)
            if blank is not None:
                return blank.text
            if row.get(name) is None:
                return None
            src = catalogue.figure_source(self.view.kind, row, name)
            if src and src.get("derived"):
                titles = "; ".join(dict.fromkeys(i["title"] for i in src["derived"]["input_sources"]))
                return f"{src['derived']['formula']}\ninputs from: {titles}"
            return f"{src['title']} ({src['date'] or 'undated'})" if src else None
        return tip


class HeaderMemory:
    """Per kind, the column keys and the header's saved state (order, widths, hidden columns)."""

    def __init__(self, table: QTableView, model: RowTableModel):
        self.table = table
        self.model = model
        self.states: dict[str, tuple[tuple[str, ...], QByteArray]] = {}
        self.kind: str | None = None  # the kind whose columns the header shows now
        self.spare = SpareWidth(table, model, "name", maximum=FIT_MAXIMUM)

    def visible_columns(self) -> list[str]:
        header = self.table.horizontalHeader()
        cols = self.model.columns()
        logical = [header.logicalIndex(v) for v in range(header.count())]
        return [cols[i].key for i in logical if not header.isSectionHidden(i)]

    def remember(self) -> None:
        if self.kind is None or self.model.columnCount() == 0:
            return
        keys = tuple(c.key for c in self.model.columns())
        self.states[self.kind] = (keys, self.table.horizontalHeader().saveState())

    def apply(self, kind: str) -> None:
        """The remembered order, widths and hidden columns of this kind's table, else the defaults."""
        header = self.table.horizontalHeader()
        keys = tuple(c.key for c in self.model.columns())
        saved = self.states.get(kind)
        self.kind = kind
        if saved and saved[0] == keys and header.restoreState(saved[1]):
            self.spare.refit()
            return
        self.default(kind)

    def default(self, kind: str) -> None:
        header = self.table.horizontalHeader()
        for visual in range(header.count()):  # the model's order, undoing any moves
            logical = header.logicalIndex(visual)
            if logical != visual:
                header.moveSection(header.visualIndex(visual), visual)
        shown = DEFAULT_COLUMNS.get(kind)
        for i, col in enumerate(self.model.columns()):
            header.setSectionHidden(i, col.key == "id" or (shown is not None and col.key not in shown))
        self.fit()

    def fit(self) -> None:
        self.spare.refit(fit_columns(self.table, self.model, maximum=FIT_MAXIMUM))

    def menu(self, parent, pos, set_visible, reset) -> None:
        """The header's right-click menu: a check per column and 'Default columns'."""
        header = self.table.horizontalHeader()
        menu = QMenu(parent)
        for i, col in enumerate(self.model.columns()):
            action = menu.addAction(col.header)
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(i))
            action.toggled.connect(lambda on, key=col.key: set_visible(key, on))
        menu.addSeparator()
        menu.addAction("Default columns", reset)
        menu.exec(header.mapToGlobal(pos))


def record(row: dict) -> dict:
    """A catalogue record as stored: the row without the view's computed price columns."""
    if "latest_price_usd" not in row:
        return row
    return {k: v for k, v in row.items() if k not in (*PRICE_KEYS, "latest_price_kind", "latest_price_notes")}


def price_tooltip(row: dict) -> str | None:
    if row.get("latest_price_usd") is None:
        return "No price in the catalogue: add a quote (right-click)"
    kind = PRICE_KIND_WORDS.get(row["latest_price_kind"], f"{row['latest_price_kind']} price")
    tip = f"{kind} ${row['latest_price_usd']:,.0f}, {row.get('latest_price_date') or 'undated'}"
    if row.get("latest_price_notes"):
        tip += f"\nWhat it prices: {row['latest_price_notes']}"
    return tip + "\nThe price a comparison uses (the newest quote, else list or MSRP, else street)."


def row_style(row: dict) -> dict:
    origin = row.get("origin")
    if origin == "user_added":
        return {"color": theme.hex("user_entry"), "tooltip": "Your entry"}
    if origin == "user_edited":
        return {"color": theme.hex("caution"), "tooltip": "Edited by you: kept when the catalogue updates"}
    return {}
