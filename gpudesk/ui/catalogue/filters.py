"""The catalogue's filter bar (search, two value filters, form factor, memory and year floors, own
entries only) and the proxy that applies the chosen criteria to one kind's rows."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QHBoxLayout, QLineEdit, QSpinBox, QWidget

from gpudesk.ui.models.table import RowSortProxy

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
    "cost_factors": {"group": ("component", "Component")},
    "regions": {"group": ("country", "Country"), "year": "grid_year"},
    "interconnects": {"group": ("family", "Family"), "year": "year"},
    "sources": {"group": ("publisher", "Publisher"), "class": ("kind", "Kind")},
}

PLURALS = {"Class": "classes", "Family": "families", "Country": "countries", "Form factor": "form factors"}

SEARCH_KEYS = ("id", "name", "vendor", "family", "architecture", "form_factor", "memory_type", "provider",
               "instance_type", "accelerator", "item", "country", "title", "publisher", "generation")


class CatalogueProxy(RowSortProxy):
    """Search and filters over the rows of one kind; empty cells sort last in both orders."""

    def __init__(self, parent=None):
        super().__init__(parent)
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
        return row_matches(self, self.sourceModel().row(source_row))


def row_matches(criteria, row: dict) -> bool:
    """Whether `row` passes every criterion held by `criteria` (a CatalogueProxy's attributes)."""
    for criterion in (criteria.group, criteria.klass, criteria.form):
        if criterion and criterion[1] and str(row.get(criterion[0]) or "") != criterion[1]:
            return False
    for floor in (criteria.memory_min, criteria.year_min):
        if floor and floor[1] > 0:
            value = row.get(floor[0])
            if value is None or value < floor[1]:
                return False
    if criteria.mine_only and row.get("origin") == "bundled":
        return False
    if criteria.words:
        haystack = " ".join(str(row.get(k) or "") for k in SEARCH_KEYS).lower()
        if not all(w in haystack for w in criteria.words):
            return False
    return True


class FilterBar(QWidget):
    """The row of filters above the table; `changed` fires whenever one of them changes."""

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search names, vendors, architectures…  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(240)
        self.group_combo = self._combo("groupFilter", 130)
        self.class_combo = self._combo("classFilter", 120)
        self.form_combo = self._combo("formFilter", 130)
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
        for signal in (self.search.textChanged, *(c.currentIndexChanged for c in self.combos()),
                       self.memory_spin.valueChanged, self.year_spin.valueChanged, self.mine.toggled):
            signal.connect(lambda *_: self.changed.emit())

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.search, 2)
        for w in (*self.combos(), self.memory_spin, self.year_spin, self.mine):
            layout.addWidget(w)
        layout.addStretch(0)

    @staticmethod
    def _combo(name: str, width: int) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        combo.setMinimumWidth(width)
        # as wide as its minimum whatever it holds when first shown (its list opens wide enough for the
        # longest value); the search field takes the room left
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(8)
        return combo

    def combos(self) -> tuple[QComboBox, QComboBox, QComboBox]:
        return self.group_combo, self.class_combo, self.form_combo

    def setup(self, kind: str, rows: list[dict]) -> None:
        """The filters that apply to `kind`, each combo offering the values its field takes in `rows`."""
        spec = FILTERS[kind]
        for combo, key in zip(self.combos(), ("group", "class", "form")):
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

    def criteria(self, kind: str, within: QWidget) -> dict:
        """The chosen criteria, as CatalogueProxy.set_criteria takes them (combos hidden in `within` ignored)."""
        spec = FILTERS[kind]

        def combo_value(combo):
            return (combo.property("field"), combo.currentData()) if combo.isVisibleTo(within) and combo.currentData() else None

        year = self.year_spin.value()
        return dict(
            kind=kind,
            words=[w for w in self.search.text().lower().split() if w],
            group=combo_value(self.group_combo),
            klass=combo_value(self.class_combo),
            form=combo_value(self.form_combo),
            memory_min=(spec["memory"], self.memory_spin.value()) if "memory" in spec else None,
            year_min=(spec["year"], year if year > 1999 else 0) if "year" in spec else None,
            mine_only=self.mine.isChecked(),
        )
