"""The Preferences dialog: site and finance defaults, report author, the team catalogue."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpudesk.core.settings import PAGE_SIZES, SettingsError, load_settings, save_settings
from gpudesk.ui.widgets.forms import add_message_and_buttons

# (settings key, label, suffix, largest value) of the cost-of-ownership figures a user may set
TCO_ROWS = (
    ("host_usd_per_node", "Host server per node", " $", 1e7),
    ("nic_usd", "Scale-out NIC", " $", 1e6),
    ("switch_usd", "Scale-out switch", " $", 1e7),
    ("switch_ports", "Ports per switch", "", 10000),
    ("link_usd", "Switch link (cable and its ends)", " $", 1e6),
    ("facility_usd_per_kw", "Facility capex per kW", " $/kW", 1e6),
)


class PreferencesDialog(QDialog):
    def __init__(self, catalogue=None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.setMinimumWidth(640)
        self.settings = load_settings()
        s = self.settings
        layout = QVBoxLayout(self)

        from gpudesk.ui.widgets.team_settings import TeamCatalogueGroup

        # three pages, so the dialog fits a 1366x768 screen
        self.pages = QTabWidget()
        self.pages.setObjectName("preferencesPages")
        self.pages.addTab(self._page(self._site_group(s, catalogue)), "Site and usage")
        self.pages.addTab(self._page(self._cost_group(s)), "Cost of ownership")
        self.team = TeamCatalogueGroup(s)
        self.pages.addTab(self._page(self._report_group(s), self.team), "Reports and team")
        layout.addWidget(self.pages)
        self.message = add_message_and_buttons(self, layout)

    @staticmethod
    def _page(*groups) -> QWidget:
        page = QWidget()
        column = QVBoxLayout(page)
        for group in groups:
            column.addWidget(group)
        column.addStretch(1)
        return page

    def _site_group(self, s, catalogue) -> QGroupBox:
        """Defaults for new scenarios: grid region, PUE, electricity, utilisation, lifetime, calibration."""
        site = QGroupBox("Defaults for new scenarios")
        form = QFormLayout(site)
        self.region = QComboBox()
        self.region.setObjectName("pref_region")
        regions = catalogue.items("regions") if catalogue is not None else []
        for r in regions:
            self.region.addItem(f"{r['name']} ({r['id']})", r["id"])
        if self.region.findData(s.region) < 0:
            self.region.addItem(s.region, s.region)
        self.region.setCurrentIndex(self.region.findData(s.region))
        self.pue = QDoubleSpinBox()
        self.pue.setRange(1.0, 3.0)
        self.pue.setSingleStep(0.05)
        self.pue.setValue(float(s.pue))
        self.price = QDoubleSpinBox()
        self.price.setObjectName("pref_price")
        self.price.setRange(0.0, 5.0)
        self.price.setDecimals(3)
        self.price.setSingleStep(0.01)
        self.price.setSpecialValueText("the region's price")
        self.price.setSuffix(" $/kWh")
        self.price.setValue(float(s.electricity_usd_per_kwh or 0.0))
        self.utilization = QDoubleSpinBox()
        self.utilization.setRange(1, 100)
        self.utilization.setSuffix(" %")
        self.utilization.setValue(float(s.utilization) * 100)
        self.lifetime = QDoubleSpinBox()
        self.lifetime.setRange(0.5, 20)
        self.lifetime.setSuffix(" years")
        self.lifetime.setValue(float(s.lifetime_years))
        self.calibration = QCheckBox("Use my imported measurements to calibrate estimates")
        self.calibration.setChecked(bool(s.calibration_enabled))
        form.addRow("Grid region", self.region)
        form.addRow("PUE", self.pue)
        form.addRow("Electricity", self.price)
        form.addRow("Utilisation of owned hardware", self.utilization)
        form.addRow("Hardware lifetime", self.lifetime)
        form.addRow(self.calibration)  # spans the form: its text is long
        return site


    def _cost_group(self, s) -> QGroupBox:
        """Your own cost-of-ownership figures; each left at zero uses the catalogue's newest."""
        group = QGroupBox("Cost of ownership (zero: the catalogue's figure)")
        form = QFormLayout(group)
        own = s.tco or {}
        self.tco_fields = {}
        for key, label, suffix, top in TCO_ROWS:
            spin = QDoubleSpinBox()
            spin.setObjectName(f"pref_{key}")
            spin.setRange(0.0, top)
            spin.setDecimals(0)
            spin.setSingleStep(100 if top > 1000 else 1)
            spin.setGroupSeparatorShown(True)
            spin.setSpecialValueText("the catalogue's")
            spin.setSuffix(suffix)
            spin.setValue(float(own.get(key) or 0.0))
            self.tco_fields[key] = spin
            form.addRow(label, spin)
        self.facility = QCheckBox("Count the facility's capex (off: colocation or a room already paid for)")
        self.facility.setObjectName("pref_facility")
        self.facility.setChecked(own.get("facility", True) is not False)
        form.addRow(self.facility)
        return group

    def _report_group(self, s) -> QGroupBox:
        """What the PDF cover says: author, organisation, page size."""
        report = QGroupBox("Reports")
        rform = QFormLayout(report)
        self.author = QLineEdit(s.author)
        self.author.setObjectName("pref_author")
        self.organisation = QLineEdit(s.organisation)
        self.organisation.setObjectName("pref_organisation")
        self.page_size = QComboBox()
        self.page_size.addItems(list(PAGE_SIZES))
        self.page_size.setCurrentText(s.page_size)
        self.author.setToolTip("On the cover of your reports, and recorded with what you add or change in the "
                               "catalogue (empty: your login name)")
        rform.addRow("Your name", self.author)
        rform.addRow("Organisation", self.organisation)
        rform.addRow("Page size", self.page_size)
        return report


    def accept(self) -> None:
        s = self.settings
        s.region = self.region.currentData() or s.region
        s.pue = round(self.pue.value(), 3)
        s.electricity_usd_per_kwh = round(self.price.value(), 4) or None
        s.utilization = round(self.utilization.value() / 100, 4)
        s.lifetime_years = round(self.lifetime.value(), 2)
        s.calibration_enabled = self.calibration.isChecked()
        s.tco = {k: spin.value() for k, spin in self.tco_fields.items() if spin.value() > 0}
        if not self.facility.isChecked():
            s.tco["facility"] = False
        s.author = self.author.text().strip()
        s.organisation = self.organisation.text().strip()
        s.page_size = self.page_size.currentText()
        from gpudesk.core.catalogue.team import TeamError

        try:
            self.team.apply(s)
            save_settings(s)
        except (SettingsError, TeamError) as exc:
            self.message.setText(f"Not saved: {exc}")
            self.message.show()
            return
        super().accept()
