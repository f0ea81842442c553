"""The workload editor: the preset, the task, the model's size, the data or the serving load, the
context and the precision. It shows values and reports edits; which fields a task keeps and
what a workload stands for are the shared workload rules' (gpudesk.core.workload)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QLabel, QSpinBox

from gpudesk.ui.compare.presenter import KIND_LABELS, PRECISION_CHOICES
from gpudesk.ui.widgets.combos import ElidingComboBox


class ExactSpinBox(QDoubleSpinBox):
    """A spin box in billions that gives back the exact value it was set to (561,000,000, not
    0.561 × 1e9 rounded to three decimals) until the user changes what it shows."""

    def __init__(self, scale: float, parent=None):
        super().__init__(parent)
        self.scale = scale
        self._exact: float | None = None

    def set_exact(self, value: float) -> None:
        self.setValue(value / self.scale)
        self._exact = value

    def exact(self) -> float:
        if self._exact is not None and abs(self.value() - round(self._exact / self.scale, self.decimals())) < 1e-12:
            return self._exact
        return self.value() * self.scale


class WorkloadPanel(QGroupBox):
    edited = Signal()
    preset_chosen = Signal(str)  # a workload preset picked by the user

    def __init__(self, parent=None):
        super().__init__("Workload", parent)
        self.preset = ElidingComboBox()
        self.preset.setObjectName("workloadPreset")
        self.kind = QComboBox()
        self.kind.setObjectName("workloadKind")
        for key, label in KIND_LABELS.items():
            self.kind.addItem(label, key)
        self.params = ExactSpinBox(1e9)
        self.params.setObjectName("params")
        self.params.setRange(0.001, 100000)
        self.params.setDecimals(3)
        self.params.setSuffix(" B params")
        self.tokens = ExactSpinBox(1e9)
        self.tokens.setObjectName("tokens")
        self.tokens.setRange(0.0, 1e8)
        self.tokens.setDecimals(3)
        self.tokens.setSuffix(" B tokens")
        self.seq_len = QSpinBox()
        self.seq_len.setRange(1, 10_000_000)
        self.seq_len.setSuffix(" tokens")
        self.precision = QComboBox()
        self.precision.setObjectName("precision")
        for p in PRECISION_CHOICES:
            self.precision.addItem(p.upper(), p)
        self.prompt = QSpinBox()
        self.prompt.setRange(0, 10_000_000)
        self.output = QSpinBox()
        self.output.setRange(1, 10_000_000)
        self.concurrency = QSpinBox()
        self.concurrency.setObjectName("concurrency")
        self.concurrency.setRange(1, 100000)
        self._lay_out()
        for w in (self.kind, self.precision):
            w.currentIndexChanged.connect(self._edited)
        for w in (self.params, self.tokens, self.seq_len, self.prompt, self.output, self.concurrency):
            w.valueChanged.connect(self._edited)
        self.kind.currentIndexChanged.connect(self.update_kind)
        self.preset.activated.connect(lambda *_: self.preset_chosen.emit(self.preset.currentData() or ""))
        self._quiet = False

    def _lay_out(self) -> None:
        form = QFormLayout(self)
        form.addRow("Preset", self.preset)
        form.addRow("Task", self.kind)
        form.addRow("Model size", self.params)
        self.tokens_label = QLabel("Training data")
        form.addRow(self.tokens_label, self.tokens)
        form.addRow("Context", self.seq_len)
        form.addRow("Precision", self.precision)
        self.prompt_label, self.output_label, self.users_label = QLabel("Prompt"), QLabel("Answer"), QLabel("Users")
        form.addRow(self.prompt_label, self.prompt)
        form.addRow(self.output_label, self.output)
        form.addRow(self.users_label, self.concurrency)
        for combo in (self.preset, self.kind, self.precision):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
            combo.currentIndexChanged.connect(lambda _i, c=combo: c.setToolTip(c.currentText()))
        for spin in (self.params, self.tokens, self.seq_len, self.prompt, self.output, self.concurrency):
            spin.setMinimumWidth(0)

    def _edited(self, *_args) -> None:
        if not self._quiet:
            self.edited.emit()

    def set_presets(self, presets: list[dict]) -> None:
        self.preset.blockSignals(True)
        self.preset.clear()
        self.preset.addItem("Your own workload", "")
        for p in presets:
            self.preset.addItem(p["name"], p["id"])
        self.preset.blockSignals(False)

    def show_preset(self, preset_id: str, quiet: bool = False) -> None:
        """Name a workload preset (or none: 'Your own workload'); `quiet` without signals."""
        self.preset.blockSignals(quiet)
        self.preset.setCurrentIndex(max(0, self.preset.findData(preset_id or "")))
        self.preset.blockSignals(False)

    def set_values(self, values: dict) -> None:
        """Show a workload's editor values (presenter.editor_values) without reporting an edit."""
        self._quiet = True
        try:
            self.kind.setCurrentIndex(max(0, self.kind.findData(values["kind"])))
            self.params.set_exact(values["params"])
            self.tokens.set_exact(values["tokens"])
            self.seq_len.setValue(values["seq_len"])
            self.precision.setCurrentIndex(max(0, self.precision.findData(values["precision"])))
            self.prompt.setValue(values["prompt_tokens"])
            self.output.setValue(values["output_tokens"])
            self.concurrency.setValue(values["concurrency"])
        finally:
            self._quiet = False
        self.update_kind()

    def values(self) -> dict:
        return {"kind": self.kind.currentData(), "params": self.params.exact(), "tokens": self.tokens.exact(),
                "seq_len": self.seq_len.value(), "precision": self.precision.currentData(),
                "prompt_tokens": self.prompt.value(), "output_tokens": self.output.value(),
                "concurrency": self.concurrency.value()}

    def update_kind(self) -> None:
        infer = self.kind.currentData() == "infer"
        for w in (self.prompt, self.output, self.concurrency, self.prompt_label, self.output_label, self.users_label):
            w.setVisible(infer)
        for w in (self.tokens, self.tokens_label):
            w.setVisible(not infer)
