"""Editing an input of the Why tab in place: its value (the electricity price, the PUE, the
utilisation, the years of use, the grid intensity, a configuration's purchase or cloud price) and
its range. A value goes where the scenario keeps it (the site and money panel, the scenario's site
section, the configuration's own price); a range goes to the scenario's `uncertainty` section. A
range the analysis refuses is named in the dialog and nothing changes."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDialog, QDoubleSpinBox, QFormLayout, QLabel, QVBoxLayout

from gpudesk.core.defend import ABSOLUTE, DISTRIBUTIONS, check_uncertainty, value_text
from gpudesk.ui.widgets.forms import add_message_and_buttons

# (decimals, step, largest) of each input's spin boxes, in its own units
SPINS = {"electricity": (3, 0.01, 5.0), "pue": (2, 0.05, 3.0), "grid": (0, 10, 2000), "utilisation": (2, 0.05, 1.0),
         "years": (1, 0.5, 30), "purchase_price": (0, 1000, 1e9), "cloud_price": (2, 0.5, 1e6),
         "efficiency": (2, 0.05, 10), "model_error": (2, 0.05, 10)}


class InputDialog(QDialog):
    """The value of one input and, for the inputs a scenario can range, its low, high and distribution."""

    def __init__(self, inp, uncertainty: dict, parent=None):
        super().__init__(parent)
        self.inp = inp
        self.setWindowTitle(f"Edit: {inp.label}")
        self.setMinimumWidth(420)
        self.kind = inp.kind
        decimals, step, top = SPINS.get(inp.kind, (2, 0.1, 1e9))
        self.value = self._spin(decimals, step, top, inp.base)
        self.low = self._spin(decimals, step, top, inp.low * inp.base)
        self.high = self._spin(decimals, step, top, inp.high * inp.base)
        self.distribution = QComboBox()
        self.distribution.addItems(list(DISTRIBUTIONS))
        own = uncertainty.get(inp.kind) or {}
        self.distribution.setCurrentText(own.get("distribution", inp.distribution))
        layout = QVBoxLayout(self)
        note = QLabel(f"Now {value_text(inp, 1.0)}; range {value_text(inp, inp.low)} – {value_text(inp, inp.high)}.")
        note.setWordWrap(True)
        layout.addWidget(note)
        form = QFormLayout()
        editable = inp.editable
        if editable:
            form.addRow("Value", self.value)
        if inp.kind in ABSOLUTE:
            form.addRow("Low", self.low)
            form.addRow("High", self.high)
            form.addRow("Distribution", self.distribution)
        if not editable:
            form.addRow(QLabel("The engine sets this range from its own estimate and measured error, or the price is "
                               "the rented alternative's: not an input to edit here."))
        layout.addLayout(form)
        self.message = add_message_and_buttons(self, layout)

    @staticmethod
    def _spin(decimals: int, step: float, top: float, value: float) -> QDoubleSpinBox:
        spin = QDoubleSpinBox()
        spin.setDecimals(decimals)
        spin.setSingleStep(step)
        spin.setRange(-top, top)  # a negative value is refused with a message, not clamped away
        spin.setGroupSeparatorShown(True)
        spin.setValue(value)
        return spin

    def range_spec(self) -> dict | None:
        if self.kind not in ABSOLUTE:
            return None
        return {"low": round(self.low.value(), 6), "high": round(self.high.value(), 6),
                "distribution": self.distribution.currentText()}

    def accept(self) -> None:
        if not self.inp.editable:
            super().reject()
            return
        problems = []
        if self.value.value() <= 0:
            problems.append(f"{self.inp.label}: a value of zero or less cannot be used ({self.value.value():g})")
        spec = self.range_spec()
        if spec is not None:
            problems += check_uncertainty({self.kind: spec})
            if not problems and not spec["low"] <= self.value.value() <= spec["high"]:
                problems.append(f"uncertainty.{self.kind}: the value {self.value.value():g} lies outside low "
                                f"{spec['low']:g} – high {spec['high']:g}")
        if problems:
            self.message.setText("Not changed: " + "; ".join(problems))
            self.message.show()
            return
        super().accept()


def edit_input(view, inp, dialog: InputDialog | None = None) -> bool:
    """Ask for the input's new value and range and put them in the scenario; True when changed."""
    base = view.presenter.base
    dialog = dialog or InputDialog(inp, base.get("uncertainty") or {}, view)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return False
    apply_input(view, inp, dialog.value.value(), dialog.range_spec())
    return True


def apply_input(view, inp, value: float, spec: dict | None) -> None:
    base = view.presenter.base
    panel = view.site_panel
    if spec is not None:
        base["uncertainty"] = {**(base.get("uncertainty") or {}), inp.kind: spec}
    if inp.kind == "pue":
        panel.pue.setValue(value)
    elif inp.kind == "utilisation":
        panel.utilization.setValue(int(round(value * 100)))
    elif inp.kind == "years":
        panel.lifetime.setValue(value)
    elif inp.kind in ("electricity", "grid"):
        section, name = ABSOLUTE[inp.kind]
        base[section] = {**(base.get(section) or {}), name: value}
    elif inp.kind in ("purchase_price", "cloud_price"):
        _set_price(view, inp, value)


def _set_price(view, inp, value: float) -> None:
    """A configuration's own price: per node for a purchase, per instance-hour for a rental."""
    why = view.comparison.why
    name = why.names[inp.configs[0]]
    row = next((r for r in view.rows if r.option() is not None and r.option().name == name), None)
    result = next((r for r in view.comparison.results if r.name == name), None)
    if row is None or result is None:
        return
    entry = row.option().cluster[0]
    if inp.kind == "purchase_price":
        # a scenario's node price includes its host: keep the hosts the catalogue's price left out
        hosts = (result.estimate.cost.capex_parts or {}).get("hosts", 0.0)
        row.set_price(capex_usd_per_node=(value + hosts) / max(1, entry.nodes))
    else:
        row.set_price(usd_per_hour=value / max(1, entry.instances))
