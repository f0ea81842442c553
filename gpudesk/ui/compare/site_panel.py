"""The site and the money: the grid region, PUE, the rented alternative and its cloud price, utilisation, lifetime,
the date whose prices to use, and whether the hardware's embodied CO2 counts."""

from __future__ import annotations

from PySide6.QtCore import QDate, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QSpinBox,
)

from gpudesk.core.estimate.cost import PRICING_ALIASES, PRICING_WORDS
from gpudesk.ui.widgets.combos import ElidingComboBox


class SitePanel(QGroupBox):
    edited = Signal()

    def __init__(self, parent=None):
        super().__init__("Site and money", parent)
        self.region = ElidingComboBox()
        self.region.setObjectName("region")
        self.pue = QDoubleSpinBox()
        self.pue.setRange(1.0, 3.0)
        self.pue.setSingleStep(0.05)
        self.rent = ElidingComboBox()
        self.rent.setObjectName("rent")
        # which cloud price the rented alternative is paid at; break-even rows show every one
        self.pricing = QComboBox()
        self.pricing.setObjectName("pricing")
        for key, words in PRICING_WORDS.items():
            self.pricing.addItem(words[:1].upper() + words[1:], key)
        self.pricing.setToolTip("The cloud price used for renting: on demand, spot, or a 1- or 3-year commitment "
                                "(on demand where the provider publishes no such price)")
        self.utilization = QSpinBox()
        self.utilization.setRange(1, 100)
        self.utilization.setSuffix(" %")
        self.lifetime = QDoubleSpinBox()
        self.lifetime.setRange(0.5, 20)
        self.lifetime.setSuffix(" years")
        # replay the comparison with the prices known on a past date; unchecked means today's
        self.as_of_on = QCheckBox()
        self.as_of_on.setObjectName("asOfOn")
        self.as_of_on.setToolTip("Use the quotes, list, street and cloud prices known on this date")
        self.as_of = QDateEdit()
        self.as_of.setObjectName("asOf")
        self.as_of.setCalendarPopup(True)
        self.as_of.setDisplayFormat("yyyy-MM-dd")
        self.as_of.setDate(QDate.currentDate())
        self.as_of.setEnabled(False)
        self.as_of_on.toggled.connect(self.as_of.setEnabled)
        self.embodied = QCheckBox("Count the CO2 of making the hardware")
        self.embodied.setObjectName("embodied")
        self.embodied.setChecked(True)
        self.embodied.setToolTip("Spread the owned hardware's embodied (manufacturing) CO2 over its lifetime")
        self._lay_out()
        for w in (self.region, self.rent, self.pricing):
            w.currentIndexChanged.connect(lambda *_: self.edited.emit())
        for w in (self.as_of_on, self.embodied):
            w.toggled.connect(lambda *_: self.edited.emit())
        self.as_of.dateChanged.connect(lambda *_: self.edited.emit())
        for w in (self.pue, self.lifetime, self.utilization):
            w.valueChanged.connect(lambda *_: self.edited.emit())

    def _lay_out(self) -> None:
        form = QFormLayout(self)
        form.addRow("Grid region", self.region)
        form.addRow("PUE", self.pue)
        form.addRow("Rent instead", self.rent)
        form.addRow("Cloud price", self.pricing)
        form.addRow("Utilisation", self.utilization)
        form.addRow("Lifetime", self.lifetime)
        as_of_row = QHBoxLayout()
        as_of_row.setContentsMargins(0, 0, 0, 0)
        as_of_row.addWidget(self.as_of_on)
        as_of_row.addWidget(self.as_of, 1)
        form.addRow("Prices as of", as_of_row)
        form.addRow(self.embodied)  # the whole row: its text is too long to sit beside a label
        for combo in (self.region, self.rent):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
            combo.currentIndexChanged.connect(lambda _i, c=combo: c.setToolTip(c.currentText()))
        for spin in (self.pue, self.utilization, self.lifetime):
            spin.setMinimumWidth(0)

    def set_catalogue(self, catalogue) -> None:
        self.region.blockSignals(True)
        self.region.clear()
        for r in sorted(catalogue.items("regions"), key=lambda r: r["name"]):
            self.region.addItem(r["name"], r["id"])
        self.region.blockSignals(False)
        self.rent.blockSignals(True)
        self.rent.clear()
        self.rent.addItem("No rented alternative", "")
        for r in catalogue.items("cloud"):
            self.rent.addItem(f"{r['provider']} {r['instance_type']} (${r['usd_per_hour']:,.2f}/h)", r["id"])
        self.rent.blockSignals(False)

    def load(self, site: dict, finance: dict) -> None:
        """Show a scenario's site and finance (the caller holds the edits back)."""
        self.region.setCurrentIndex(max(0, self.region.findData(site.get("region", "us-avg"))))
        self.pue.setValue(site.get("pue", 1.2))
        self.rent.setCurrentIndex(max(0, self.rent.findData(finance.get("rent", ""))))
        pricing = PRICING_ALIASES.get(finance.get("pricing", "on_demand"), finance.get("pricing", "on_demand"))
        self.pricing.setCurrentIndex(max(0, self.pricing.findData(pricing)))
        self.utilization.setValue(int(round(finance.get("utilization", 0.6) * 100)))
        self.lifetime.setValue(finance.get("lifetime_years", 4.0))
        self.as_of_on.setChecked(bool(finance.get("as_of")))
        self.as_of.setDate(QDate.fromString(finance["as_of"], "yyyy-MM-dd") if finance.get("as_of")
                           else QDate.currentDate())
        self.embodied.setChecked(finance.get("embodied", True))

    def site(self) -> dict:
        return {"region": self.region.currentData() or "us-avg", "pue": round(self.pue.value(), 3)}

    def finance(self) -> dict:
        """The finance fields the panel shows; None for one to leave out of the scenario."""
        return {"utilization": self.utilization.value() / 100.0, "lifetime_years": round(self.lifetime.value(), 2),
                "rent": self.rent.currentData() or None,
                "pricing": None if self.pricing.currentData() == "on_demand" else self.pricing.currentData(),
                "as_of": self.as_of.date().toString("yyyy-MM-dd") if self.as_of_on.isChecked() else None,
                "embodied": None if self.embodied.isChecked() else False}
