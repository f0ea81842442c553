"""One configuration of a comparison, as the editor shows it: a name, what it is (an accelerator,
a system or a cloud offering) and how many."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
)

from gpudesk.core.scenario import ClusterEntry, Option


class ConfigRow(QFrame):
    """One configuration: a name, what it is (accelerator, system or cloud offering) and how many."""

    changed = Signal()
    remove_requested = Signal(object)

    def __init__(self, choices: list[tuple[str, str, str]], option: Option | None = None, parent=None):
        super().__init__(parent)
        self.setObjectName("configRow")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._entry = ClusterEntry()
        self._extra: dict = {}
        self.name = QLineEdit()
        self.name.setObjectName("configName")
        self.name.setPlaceholderText("Name")
        self.item = QComboBox()
        self.item.setObjectName("configItem")
        self.item.setEditable(True)
        self.item.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.item.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.item.setMinimumContentsLength(12)
        for kind, item_id, label in choices:
            self.item.addItem(label, f"{kind}:{item_id}")  # strings: findData() cannot match tuples
        completer = QCompleter(self.item.model(), self.item)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.item.setCompleter(completer)
        # an editable combo's line edit keeps its cursor at the end of a new text, which scrolls a
        # long name's front out of sight ("etson Nano Developer Kit"): show the start instead
        self.item.currentIndexChanged.connect(lambda *_: self._show_item_start())
        self.count = QSpinBox()
        self.count.setObjectName("configCount")
        self.count.setRange(1, 1024)
        self.count.setToolTip("Accelerators per node (systems and cloud instances set this themselves)")
        self.nodes = QSpinBox()
        self.nodes.setObjectName("configNodes")
        self.nodes.setRange(1, 100000)
        self.nodes.setToolTip("Nodes, units or cloud instances")
        for spin in (self.count, self.nodes):  # room for five digits; the panel stays narrow
            spin.setMaximumWidth(84)
        self.remove = QToolButton()
        self.remove.setText("✕")
        self.remove.setToolTip("Remove this configuration")
        self.remove.clicked.connect(lambda: self.remove_requested.emit(self))
        self._lay_out()
        self._generated = ""
        if option is not None:
            self.set_option(option)
        self.name.textChanged.connect(lambda *_: self.changed.emit())
        self.item.currentIndexChanged.connect(self._item_changed)
        self.count.valueChanged.connect(lambda *_: self._counts_changed())
        self.nodes.valueChanged.connect(lambda *_: self._counts_changed())
        self._update_labels()

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.name, 1)
        top.addWidget(self.remove)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(0, 0, 0, 0)
        self.count_label = QLabel("per node")
        self.nodes_label = QLabel("× nodes")
        for w in (self.count, self.count_label, self.nodes, self.nodes_label):
            bottom.addWidget(w)
        bottom.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.item)
        layout.addLayout(bottom)

    def generated_name(self) -> str:
        """The name gpudesk gives this configuration: '8 × H100 SXM5 80GB', '2 × NVIDIA DGX H100'."""
        selected = self.selection()
        if selected is None:
            return ""
        kind = selected[0]
        label = self.item.currentText()
        for suffix in (" (system)", " (cloud)", " (accelerator)"):
            label = label.removesuffix(suffix)
        total = self.nodes.value() * (self.count.value() if kind == "accelerator" else 1)
        return f"{total:,} × {label}"

    def _follow_name(self) -> None:
        """A generated name follows the hardware and counts; a name the user typed is kept."""
        if self.name.text().strip() == self._generated:
            self.name.blockSignals(True)
            self.name.setText(self.generated_name())
            self.name.blockSignals(False)
        self._generated = self.generated_name()

    def _counts_changed(self) -> None:
        self._follow_name()
        self.changed.emit()

    def set_option(self, option: Option) -> None:
        entry = option.cluster[0] if option.cluster else ClusterEntry()
        self._entry = entry
        self._extra = {"finance": option.finance, "notes": option.notes, "rest": option.cluster[1:]}
        self.name.setText(option.name)
        if entry.cloud:
            self.item.setCurrentIndex(max(0, self.item.findData(f"cloud:{entry.cloud}")))
        else:
            i = self.item.findData(f"system:{entry.item}")
            self.item.setCurrentIndex(i if i >= 0 else max(0, self.item.findData(f"accelerator:{entry.item}")))
        self.count.setValue(entry.per_node or 1)
        self.nodes.setValue(entry.instances if entry.cloud else entry.nodes)
        self._update_labels()
        self._show_item_start()
        self._generated = self.generated_name()

    def set_price(self, capex_usd_per_node: float | None = None, usd_per_hour: float | None = None) -> None:
        """The configuration's own price (from the Why tab), replacing the catalogue's."""
        from dataclasses import replace

        if capex_usd_per_node is not None:
            self._entry = replace(self._entry, capex_usd_per_node=capex_usd_per_node)
        if usd_per_hour is not None:
            self._entry = replace(self._entry, usd_per_hour=usd_per_hour)
        self.changed.emit()

    def _show_item_start(self) -> None:
        self.item.setToolTip(self.item.currentText())
        if self.item.lineEdit() is not None and not self.item.lineEdit().hasFocus():
            self.item.lineEdit().setCursorPosition(0)
        self.name.setToolTip(self.name.text())
        if not self.name.hasFocus():
            self.name.setCursorPosition(0)

    def _item_changed(self) -> None:
        # a different item: keep counts, drop figures that belonged to the old one
        self._entry = ClusterEntry(label=self._entry.label)
        self._update_labels()
        self._follow_name()
        self.changed.emit()

    def selection(self) -> tuple[str, str] | None:
        data = self.item.currentData()
        if not data:
            return None
        kind, _, item_id = data.partition(":")
        return kind, item_id

    def _update_labels(self) -> None:
        kind = (self.selection() or ("accelerator", ""))[0]
        cloud = kind == "cloud"
        system = kind == "system"
        self.count.setEnabled(not cloud and not system)
        self.count_label.setEnabled(not cloud and not system)
        self.nodes_label.setText("× instances" if cloud else ("× units" if system else "× nodes"))

    def option(self) -> Option | None:
        selected = self.selection()
        if selected is None:
            return None
        kind, item_id = selected
        e = self._entry
        if kind == "cloud":
            entry = ClusterEntry(cloud=item_id, instances=self.nodes.value(), usd_per_hour=e.usd_per_hour,
                                 overrides=dict(e.overrides), label=e.label)
        else:
            entry = ClusterEntry(item=item_id, per_node=None if kind == "system" else self.count.value(),
                                 nodes=self.nodes.value(), intra=e.intra, inter=e.inter, nic_count=e.nic_count,
                                 capex_usd_per_node=e.capex_usd_per_node, node_overhead_w=e.node_overhead_w,
                                 system_power_w=e.system_power_w, overrides=dict(e.overrides), label=e.label)
        name = self.name.text().strip() or self.item.currentText()
        return Option(name, [entry] + list(self._extra.get("rest", [])), dict(self._extra.get("finance") or {}),
                      self._extra.get("notes", ""))
