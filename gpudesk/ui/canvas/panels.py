"""The canvas's side panels: the palette of catalogue items, the properties of the selection, and
the live estimates (with the cumulative cost of buying against renting)."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpudesk.core.compare import slowest_link_share
from gpudesk.core.format import co2, duration, energy, flops, power, si, span, usd
from gpudesk.core.prices import capex_parts_text, commitments_text
from gpudesk.core.summary import plan_text, step_text
from gpudesk.ui import theme

MIME = "application/x-gpudesk-item"


class PaletteTree(QTreeWidget):
    add_requested = Signal(str, str)  # kind, item

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.setDragEnabled(True)
        self.setRootIsDecorated(True)
        self.setIndentation(12)
        self.setObjectName("palette")
        self.itemDoubleClicked.connect(self._double_clicked)

    def set_items(self, items) -> None:
        self.clear()
        categories: dict[str, QTreeWidgetItem] = {}
        for entry in items:
            parent = categories.get(entry.category)
            if parent is None:
                parent = QTreeWidgetItem([entry.category])
                parent.setFlags(Qt.ItemFlag.ItemIsEnabled)
                font = parent.font(0)
                font.setBold(True)
                parent.setFont(0, font)
                self.addTopLevelItem(parent)
                categories[entry.category] = parent
            child = QTreeWidgetItem([entry.label])
            child.setToolTip(0, f"{entry.label}\n{entry.detail}\nDrag onto the canvas, or double-click to add.")
            child.setData(0, Qt.ItemDataRole.UserRole, f"{entry.kind}:{entry.item}")
            child.setData(0, Qt.ItemDataRole.UserRole + 1, f"{entry.label} {entry.detail}".lower())
            parent.addChild(child)
        for name in ("Servers and systems", "Switches", "Edge devices"):
            if name in categories:
                categories[name].setExpanded(True)

    def filter(self, text: str) -> None:
        words = text.lower().split()
        for i in range(self.topLevelItemCount()):
            parent = self.topLevelItem(i)
            shown = 0
            for j in range(parent.childCount()):
                child = parent.child(j)
                hay = child.data(0, Qt.ItemDataRole.UserRole + 1) or ""
                visible = all(w in hay for w in words)
                child.setHidden(not visible)
                shown += visible
            parent.setHidden(shown == 0)
            if words:
                parent.setExpanded(True)

    def mimeData(self, items):
        mime = QMimeData()
        data = items[0].data(0, Qt.ItemDataRole.UserRole) if items else None
        if data:
            mime.setData(MIME, data.encode())
            mime.setText(data)
        return mime

    def mimeTypes(self):
        return [MIME]

    def _double_clicked(self, item, _column) -> None:
        data = item.data(0, Qt.ItemDataRole.UserRole)
        if data:
            kind, _, item_id = data.partition(":")
            self.add_requested.emit(kind, item_id)


class Palette(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search servers, GPUs, clouds, switches…")
        self.search.setClearButtonEnabled(True)
        self.tree = PaletteTree()
        self.search.textChanged.connect(self.tree.filter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        title = QLabel("Palette")
        title.setObjectName("sectionTitle")
        layout.addWidget(title)
        layout.addWidget(self.search)
        layout.addWidget(self.tree, 1)


class PropertiesPanel(QStackedWidget):
    """Edits of the selection; emits what changed, the view turns it into commands."""

    node_edited = Signal(str, dict, bool)  # node id, values, part of an ongoing spin-box edit
    link_edited = Signal(str, dict, bool)
    edit_finished = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.node_id: str | None = None
        self.link_id: str | None = None
        self._loading = False
        empty = QLabel("Select a node or a link to edit it.\n\nDrag items from the palette; drag from a node's "
                       "round port to another node to link them.")
        empty.setWordWrap(True)
        empty.setObjectName("hint")
        empty.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.addWidget(empty)
        self.addWidget(self._node_page())
        self.addWidget(self._link_page())
        self._connect_edits()

    def _node_fields(self) -> None:
        """The node page's editors, each with its range and what a blank means."""
        self.label = QLineEdit()
        self.label.setObjectName("nodeLabel")
        self.count = QSpinBox()
        self.count.setObjectName("nodeCount")
        self.count.setRange(1, 1_000_000)
        self.count.setToolTip("Identical machines this node stands for (a rack of 32 servers is one node of 32)")
        self.per_node = QSpinBox()
        self.per_node.setObjectName("nodePerNode")
        self.per_node.setRange(1, 1024)
        self.intra = QComboBox()
        self.nic = QComboBox()
        self.nic.setObjectName("nodeNic")
        self.nic_count = QSpinBox()
        self.nic_count.setRange(0, 64)
        self.nic_count.setSpecialValueText("default")
        self.peak = QDoubleSpinBox()
        self.peak.setObjectName("nodePeak")
        self.peak.setRange(0, 1_000_000)
        self.peak.setDecimals(1)
        self.peak.setSuffix(" TFLOPS")
        self.peak.setSpecialValueText("catalogue figure")
        self.peak.setToolTip("Your figure for the accelerator's dense BF16/FP16 peak (a vendor quote or a measurement)")
        self.overhead = QDoubleSpinBox()
        self.overhead.setRange(0, 100000)
        self.overhead.setDecimals(0)
        self.overhead.setSuffix(" W")
        self.overhead.setSpecialValueText("modelled")

    def _node_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.node_title = QLabel()
        self.node_title.setWordWrap(True)
        self.node_title.setObjectName("sectionTitle")
        self._node_fields()
        form.addRow(self.node_title)
        form.addRow("Name", self.label)
        form.addRow("Machines", self.count)
        self.per_node_label = QLabel("Accelerators each")
        form.addRow(self.per_node_label, self.per_node)
        self.intra_label = QLabel("Inside a machine")
        form.addRow(self.intra_label, self.intra)
        form.addRow("Network (NIC)", self.nic)
        form.addRow("NICs each", self.nic_count)
        form.addRow("Host power", self.overhead)
        form.addRow("BF16 peak", self.peak)
        return page

    def _link_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.link_title = QLabel("Link")
        self.link_title.setObjectName("sectionTitle")
        self.link_kind = QComboBox()
        self.link_kind.setObjectName("linkKind")
        self.link_count = QSpinBox()
        self.link_count.setObjectName("linkCount")
        self.link_count.setRange(1, 64)
        self.link_count.setToolTip("Ports or cables per machine on this link")
        form.addRow(self.link_title)
        form.addRow("Type", self.link_kind)
        form.addRow("Ports per machine", self.link_count)
        return page

    def _connect_edits(self) -> None:
        self.label.editingFinished.connect(lambda: self._node({"label": self.label.text().strip()}, False))
        self.count.valueChanged.connect(lambda v: self._node({"count": v}, True))
        self.per_node.valueChanged.connect(lambda v: self._node({"per_node": v}, True))
        self.nic_count.valueChanged.connect(lambda v: self._node({"nic_count": v or None}, True))
        self.overhead.valueChanged.connect(lambda v: self._node({"overhead_w": v or None}, True))
        self.peak.valueChanged.connect(self._peak_changed)
        self.intra.currentIndexChanged.connect(lambda _i: self._node({"intra": self.intra.currentData() or None}, False))
        self.nic.currentIndexChanged.connect(lambda _i: self._node({"nic": self.nic.currentData() or None}, False))
        self.link_kind.currentIndexChanged.connect(lambda _i: self._link({"kind": self.link_kind.currentData()}, False))
        self.link_count.valueChanged.connect(lambda v: self._link({"count": v}, True))
        for spin in (self.count, self.per_node, self.nic_count, self.overhead, self.peak, self.link_count):
            spin.editingFinished.connect(self.edit_finished.emit)

    def set_links(self, interconnects: list[dict]) -> None:
        self._loading = True
        for combo, families, blank in ((self.intra, ("nvlink", "pcie", "infinity_fabric", "ici", "neuronlink", "nvlink-c2c"), "from the hardware"),
                                       (self.nic, ("ethernet", "infiniband"), "none / from the hardware"),
                                       (self.link_kind, None, None)):
            combo.clear()
            if blank:
                combo.addItem(blank, "")
            for row in interconnects:
                if families is None or row.get("family") in families:
                    combo.addItem(row["name"], row["id"])
        self._loading = False

    def show_node(self, node, caption: str) -> None:
        self._loading = True
        self.node_id, self.link_id = node.id, None
        self.node_title.setText(f"<b>{node.label}</b><br><span style='color:{theme.hex('muted')}'>{caption}</span>")
        self.label.setText(node.label)
        self.count.setValue(node.count)
        accelerator = node.kind == "accelerator"
        self.per_node.setValue(node.per_node or 1)
        for w in (self.per_node, self.per_node_label, self.intra, self.intra_label):
            w.setVisible(accelerator)
        self._select(self.intra, node.intra or "")
        self._select(self.nic, node.nic or "")
        self.nic_count.setValue(node.nic_count or 0)
        self.overhead.setValue(node.overhead_w or 0)
        self._overrides = dict(node.overrides)
        self.peak.setValue(node.overrides.get("bf16_tflops") or 0)
        switch = node.kind == "switch"
        for w in (self.nic, self.nic_count, self.overhead, self.count, self.peak):
            w.setEnabled(not switch)
        self.setCurrentIndex(1)
        self._loading = False

    def show_link(self, link, title: str) -> None:
        self._loading = True
        self.node_id, self.link_id = None, link.id
        self.link_title.setText(f"<b>Link</b><br><span style='color:{theme.hex('muted')}'>{title}</span>")
        self._select(self.link_kind, link.kind)
        self.link_count.setValue(link.count)
        self.setCurrentIndex(2)
        self._loading = False

    def show_nothing(self) -> None:
        self.node_id = self.link_id = None
        self.setCurrentIndex(0)

    def _select(self, combo: QComboBox, value) -> None:
        i = combo.findData(value)
        combo.setCurrentIndex(max(0, i))

    def _node(self, values: dict, ongoing: bool) -> None:
        if not self._loading and self.node_id:
            self.node_edited.emit(self.node_id, values, ongoing)

    def _peak_changed(self, value: float) -> None:
        overrides = dict(getattr(self, "_overrides", {}))
        for key in ("bf16_tflops", "fp16_tflops"):
            if value:
                overrides[key] = value
            else:
                overrides.pop(key, None)
        self._overrides = overrides
        self._node({"overrides": overrides}, True)

    def _link(self, values: dict, ongoing: bool) -> None:
        if not self._loading and self.link_id:
            self.link_edited.emit(self.link_id, values, ongoing)


class EstimatesPanel(QFrame):
    """Live figures for the drawn cluster and the chosen workload."""

    workload_chosen = Signal(str)
    rent_chosen = Signal(str)
    count_unlinked_changed = Signal(bool)

    ROWS = (
        ("devices", "Accelerators"),
        ("speed", "Throughput"),
        ("time", "Time to train"),
        ("memory", "Memory fit"),
        ("plan", "Plan"),
        ("link", "Slowest link"),
        ("power", "Power (with PUE)"),
        ("energy", "Energy / CO2 per run"),
        ("year", "Per year"),
        ("capex", "Capex"),
        ("running", "Running cost"),
        ("rent", "Renting instead"),
        ("break_even", "Break-even"),
        ("rests_on", "Rests on"),
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("estimatesPanel")
        self.workload = self._choice("canvasWorkload")
        self.rent = self._choice("canvasRent")
        self.workload.activated.connect(lambda _i: self.workload_chosen.emit(self.workload.currentData() or ""))
        self.rent.activated.connect(lambda _i: self.rent_chosen.emit(self.rent.currentData() or ""))
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self._unlinked_widgets()
        self.values: dict[str, QLabel] = {}
        grid = self._value_grid()
        title = QLabel("Live estimates")
        title.setObjectName("sectionTitle")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        form = QFormLayout()
        form.addRow("Workload", self.workload)
        form.addRow("Rent instead", self.rent)
        layout.addLayout(form)
        layout.addWidget(self.unlinked)
        layout.addWidget(self.count_unlinked)
        layout.addLayout(grid)
        self.chart = None
        self.empty_reason = ""  # why the cost chart has nothing to draw ("" when it has)
        self.chart_holder = QVBoxLayout()
        layout.addLayout(self.chart_holder)
        layout.addWidget(self.status)
        layout.addStretch(1)

    @staticmethod
    def _choice(name: str) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(16)
        return combo

    def _unlinked_widgets(self) -> None:
        """Machines drawn with no link to the rest: left out of the estimate, and said so."""
        self.unlinked = QLabel("")
        self.unlinked.setObjectName("unlinkedMachines")
        self.unlinked.setWordWrap(True)
        self.unlinked.setStyleSheet(f"color:{theme.hex('caution')}")
        self.count_unlinked = QCheckBox("Count them, networked by their own NICs")
        self.count_unlinked.setObjectName("countUnlinked")
        self.count_unlinked.setToolTip("Machines with no drawn link normally cannot take part in the same job; tick to "
                                       "count them anyway, joined by the network their NIC setting names")
        self.count_unlinked.toggled.connect(lambda on: self._loading or self.count_unlinked_changed.emit(on))
        self._loading = False
        self.unlinked.setVisible(False)
        self.count_unlinked.setVisible(False)

    def _value_grid(self) -> QGridLayout:
        """One row per figure: its name and its value (in `self.values`)."""
        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(3)
        for row, (key, label) in enumerate(self.ROWS):
            name = QLabel(label)
            name.setObjectName("hint")
            value = QLabel("—")
            value.setObjectName(f"estimate_{key}")
            value.setWordWrap(True)
            value.setMinimumWidth(10)
            value.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.MinimumExpanding)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(name, row, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(value, row, 1)
            self.values[key] = value
        grid.setColumnStretch(1, 1)
        return grid

    def sizeHint(self) -> QSize:
        return QSize(330, 600)

    def set_choices(self, presets: list[dict], offers: list[dict]) -> None:
        self.workload.clear()
        for p in presets:
            self.workload.addItem(p["name"], p["id"])
        self.rent.clear()
        self.rent.addItem("No rented alternative", "")
        for c in offers:
            self.rent.addItem(f"{c['provider']} {c['instance_type']} (${c['usd_per_hour']:,.2f}/h)", c["id"])

    def select(self, workload_id: str | None, rent_id: str | None, custom_label: str = "") -> None:
        i = self.workload.findData(workload_id or "")
        if i < 0 and custom_label:
            self.workload.insertItem(0, custom_label, "")
            i = 0
        self.workload.setCurrentIndex(max(0, i))
        self.rent.setCurrentIndex(max(0, self.rent.findData(rent_id or "")))

    def show_unlinked(self, machines: int, nodes: list[str], counted: bool) -> None:
        """Say which machines have no link to the rest of the cluster, and whether they count."""
        self._loading = True
        self.count_unlinked.setChecked(counted)
        self._loading = False
        shown = machines > 0 or counted
        self.count_unlinked.setVisible(shown)
        self.unlinked.setVisible(machines > 0)
        if machines > 0:
            names = ", ".join(nodes[:3]) + (f" and {len(nodes) - 3} more" if len(nodes) > 3 else "")
            noun = "machine" if machines == 1 else "machines"
            self.unlinked.setText(f"<b>{machines:,} {noun} not linked: not counted</b> ({names})")
            self.unlinked.setToolTip("Draw a link from a node's port to the cluster (or to a switch) to count them")

    def show_estimate(self, est, elapsed_ms: float, context: dict | None = None) -> None:
        """`context`: what the estimate rests on that it does not carry itself: the site's PUE and
        each catalogued system's rated maximum power (label, machines, watts), and the resolved inputs."""
        if est is None:
            for label in self.values.values():
                label.setText("—")
            return
        self._show_fit(est)
        if est.feasible:
            self._show_performance(est, context or {})
        else:
            reason = str(est.reasons[0]) if est.reasons else "not feasible"
            for key in ("speed", "time", "link", "power", "energy", "year", "running", "rent", "break_even"):
                self.values[key].setText("—")
            self.values["speed"].setText(f"<span style='color:{theme.hex('problem')}'>{reason}</span>")
        self._show_costs(est)
        self._show_rests_on(est, context)
        notes = [str(n) for n in est.notes][:2]
        self.status.setText(f"Updated in {elapsed_ms:,.1f} ms." + ("  " + " ".join(notes) if notes else ""))

    def _show_fit(self, est) -> None:
        """The accelerators, whether the workload fits their memory, and the parallel plan."""
        v = self.values
        v["devices"].setText(f"{est.devices:,}  ·  {flops(est.peak_pflops)} dense {est.precision_used.upper()}")
        m = est.memory
        fit = (f"fits: {m.per_device_gb:,.1f} of {m.capacity_gb:,.1f} GB per device" if m.fits else
               f"<span style='color:{theme.hex('problem')}'><b>does not fit</b>: each device needs {m.per_device_gb:,.1f} GB and "
               f"has {m.capacity_gb:,.1f}"
               + (f"; at least {m.min_devices:,} devices would hold it" if m.min_devices and m.min_devices > est.devices
                  else "") + "</span>")
        v["memory"].setText(fit)
        if est.feasible and est.plan:
            text = plan_text(est).replace("\n", "<br>")
            if est.kind != "infer":
                text += f"<br><span style='color:{theme.hex('muted')}'>" + step_text(est).replace("\n", " · ") + "</span>"
            v["plan"].setText(text)
        else:
            v["plan"].setText("—")

    def _show_performance(self, est, context: dict) -> None:
        """Speed, time, the slowest link, power and energy of a feasible estimate."""
        v = self.values
        if est.kind == "infer":
            v["speed"].setText(f"{est.decode_tokens_per_s_per_user.likely:,.1f} tokens/s per user, "
                               f"{est.tokens_per_s.likely:,.0f} in all")
            v["time"].setText(f"first token {duration(est.ttft_s.likely) if est.ttft_s else 'n/a'}")
        else:
            r = est.tokens_per_s
            v["speed"].setText(f"{si(r.likely, 'tokens/s')}  ({si(r.low)}–{si(r.high)}), MFU {est.mfu.likely:.0%}")
            v["time"].setText(f"{duration(est.time_s.likely)}  ({span(duration, est.time_s.low, est.time_s.high, est.time_s.likely)})"
                              if est.time_s else "set the workload's tokens")
        v["link"].setText(slowest_link_text(est))
        v["power"].setText(power_text(est, context))
        if est.energy_kwh is not None:
            v["energy"].setText(f"{energy(est.energy_kwh.likely)} · {co2(est.co2_kg.likely)}"
                                + (f" + {co2(est.embodied_kg_per_run.likely)} embodied"
                                   if est.embodied_kg_per_run is not None else ""))
        v["year"].setText(f"{energy(est.energy_kwh_per_year)} · {co2(est.co2_kg_per_year)}"
                          + (f" + {co2(est.embodied_kg_per_year)} embodied" if est.embodied_kg_per_year else "")
                          if est.energy_kwh_per_year else "—")

    def _show_costs(self, est) -> None:
        """Capex, running cost, renting instead, and when buying breaks even."""
        v = self.values
        c = est.cost
        parts = capex_parts_text(c) if c.capex_usd is not None else ""
        v["capex"].setText(usd(c.capex_usd) + (f"  ({parts})" if parts and "·" in parts else "")
                           if c.capex_usd is not None else "no price: add a quote in the catalogue")
        v["capex"].setToolTip("\n".join(c.capex_notes))
        run = "round" if est.kind == "infer" else "run"
        if est.feasible and c.owned_marginal_usd_per_run is not None:
            v["running"].setText(f"{usd(c.owned_marginal_usd_per_run.likely)} electricity per {run}"
                                 + (f"; {usd(c.owned_usd_per_year)} a year with capex" if c.owned_usd_per_year else ""))
        elif est.feasible and c.cloud_usd_per_run is not None and not c.capex_usd:
            v["running"].setText(f"{usd(c.cloud_usd_per_run.likely)} per {run} (rented)")
        else:
            v["running"].setText("—")
        v["rent"].setText(f"{usd(c.cloud_usd_per_run.likely)} per {run} on {c.rent_label}" if (est.feasible and c.cloud_usd_per_run and c.rent_label) else "—")
        if c.break_even_runs is not None:
            by_pricing = commitments_text(c)
            v["break_even"].setText(f"<b>{c.break_even_runs:,.0f} {run}s</b>, {c.break_even_months:,.1f} months"
                                    + (f"<br><span style='color:{theme.hex('muted')}'>{by_pricing}</span>"
                                       if by_pricing else ""))
        elif est.feasible and c.capex_usd and c.cloud_usd_per_run:
            v["break_even"].setText("never: renting costs less per run")
        else:
            v["break_even"].setText("—")

    def _show_rests_on(self, est, context: dict | None) -> None:
        """The three inputs that move this cluster's cost per run (or time) most, with the outcome at
        the ends of each one's range."""
        from gpudesk.core.defend import top_inputs

        inputs = (context or {}).get("inputs")
        found = top_inputs(est, inputs) if inputs is not None else []
        money = est is not None and est.cost is not None and (est.cost.owned_usd_per_run or est.cost.cloud_usd_per_run)
        fmt = usd if money else (lambda v: duration(v * 3600))
        self.values["rests_on"].setText("<br>".join(f"{escape(label)}: {fmt(min(lo, hi))} – {fmt(max(lo, hi))}"
                                                    for label, lo, hi in found) or "—")

    def show_cost_curve(self, curves: dict) -> None:
        if self.chart is None:
            import pyqtgraph as pg

            from gpudesk.ui.widgets.plots import SIAxis

            pg.setConfigOptions(**theme.pyqtgraph_options())
            self.chart = pg.PlotWidget(axisItems={"left": SIAxis("left")})
            self.chart.setObjectName("canvasCostChart")
            self.chart.setFixedHeight(190)
            self.chart.setTitle("Cumulative cost: buying against renting", size="9pt")
            self.chart.setLabel("bottom", "months")
            self.chart.showGrid(x=True, y=True, alpha=0.25)
            self.own_curve = self.chart.plot([], [], pen=pg.mkPen(theme.series(0), width=2), name="buy")
            self.rent_curve = self.chart.plot([], [], pen=pg.mkPen(theme.series(1), width=2,
                                                                         style=Qt.PenStyle.DashLine), name="rent")
            self.cross = pg.ScatterPlotItem(size=9, brush=pg.mkBrush(theme.hex("chart_fill")),
                                            pen=pg.mkPen(theme.hex("chart_ink"), width=1.5))
            self.chart.addItem(self.cross)
            self.chart.addLegend(offset=(8, 5), labelTextSize="8pt")
            self.chart_empty = pg.TextItem("", color=theme.hex("chart_text"), anchor=(0.5, 0.5))
            self.chart_empty.setTextWidth(240)
            self.chart.addItem(self.chart_empty, ignoreBounds=True)
            self.chart_holder.addWidget(self.chart)
        own = next((s for s in curves.get("series", []) if s["kind"] == "own"), None)
        rent = next((s for s in curves.get("series", []) if s["kind"] == "rent"), None)
        xs = curves.get("months", [])
        self.own_curve.setData(xs if own else [], own["ys"] if own else [])
        self.rent_curve.setData(xs if rent else [], rent["ys"] if rent else [])
        crossings = curves.get("crossings", [])
        self.cross.setData([c["month"] for c in crossings], [c["usd"] for c in crossings])
        # nothing to draw: say why instead of an empty grid
        # (the rented curve is drawn against the owned one: without a price there is neither)
        missing = (["no purchase price for this cluster (add a quote in the catalogue)"] if own is None else
                   ["no rented alternative (choose one above)"] if rent is None else [])
        self.empty_reason = f"Nothing to draw: {missing[0]}." if missing else ""
        self.chart_empty.setVisible(bool(missing))
        self.chart.showGrid(x=not missing, y=not missing, alpha=0.25)
        for axis in ("left", "bottom"):
            self.chart.getAxis(axis).setStyle(showValues=not missing, tickLength=0 if missing else -5)
        if missing:
            self.chart_empty.setHtml(f"<div style='text-align:center; font-size:9pt'>{escape(self.empty_reason)}</div>")
            self.chart.setXRange(0, 1, padding=0)
            self.chart.setYRange(0, 1, padding=0)
            self.chart_empty.setPos(0.5, 0.5)
        else:
            self.chart.enableAutoRange()


def slowest_link_text(est) -> str:
    """The link that limits the step and its share of the step ('100 Gigabit Ethernet: 7.2% of each
    step'), or why none does."""
    name, share, total = slowest_link_share(est)
    if not name:
        return "—"
    if share < 0.005:
        return f"{name}: under 0.5% of each step (communication hides behind computation)"
    text = f"{name}: {share:.1%} of each step"
    if total - share >= 0.0005:
        text += f" (all communication {total:.1%})"
    return text


def power_text(est, context: dict) -> str:
    """Power with PUE, and where a catalogued system's rating caps it, the IT load against that
    rating: a figure above a system's published maximum always says why."""
    p = est.power_w
    if not p:
        return "unknown: no power figure"
    pue = context.get("pue") or 1.0
    text = f"{power(p.likely)}  ({power(p.low)} – {power(p.high)})"
    rated = context.get("rated") or []
    if pue != 1.0:
        text += f"<br><span style='color:{theme.hex('muted')}'>with PUE {pue:g}: IT load {power(p.likely / pue)} ({power(p.low / pue)} – " \
                f"{power(p.high / pue)})"
        if rated:
            text += "; " + ", ".join(f"{label} rated {power(watts)} at most" + (f" each ({count:,})" if count > 1 else "")
                                     for label, count, watts in rated)
        text += "</span>"
    elif rated:
        text += f"<br><span style='color:{theme.hex('muted')}'>" + ", ".join(
            f"{label}: at most its rated {power(watts)}" + (f" each ({count:,})" if count > 1 else "")
            for label, count, watts in rated) + "</span>"
    return text
