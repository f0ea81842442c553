"""The compare view: a workload, two to six configurations, the table with a winner per row, the
charts, the recommendation; saved and opened as scenario files, exported as PDF and CSV.

Every edit restarts a short single-shot timer; when it fires the scenario is rebuilt from the
editor and compared again (a six-way comparison takes a few milliseconds).
"""

from __future__ import annotations

import json
import logging
from html import escape
from pathlib import Path

from PySide6.QtCore import QDate, QMimeData, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QCompleter,
    QDateEdit,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gpudesk.core import paths
from gpudesk.core.scenario import ClusterEntry, Option, ScenarioError, load_scenario, parse_scenario, save_scenario
from gpudesk.ui.compare.model import CompareTableModel
from gpudesk.ui.widgets.clipboard import set_clipboard

log = logging.getLogger(__name__)

MAX_OPTIONS = 6
DEFAULT_SUBTITLE = "Two to six configurations for one workload; a winner per row."
KIND_LABELS = {"train": "Train from scratch", "finetune": "Fine-tune", "infer": "Serve (inference)"}


def example_scenarios() -> list[tuple[str, Path]]:
    """The shipped example comparisons (the seeds' questions), by name."""
    out = []
    folder = paths.resource("examples")
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            scenario = load_scenario(path)
        except ScenarioError:
            continue
        if scenario.compare:
            out.append((scenario.name or path.stem, path))
    return out


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
        self._generated = ""
        if option is not None:
            self.set_option(option)
        self.name.textChanged.connect(lambda *_: self.changed.emit())
        self.item.currentIndexChanged.connect(self._item_changed)
        self.count.valueChanged.connect(lambda *_: self._counts_changed())
        self.nodes.valueChanged.connect(lambda *_: self._counts_changed())
        self._update_labels()

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


class CompareView(QWidget):
    status_message = Signal(str)
    modified_changed = Signal(bool)
    open_requested = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.comparison = None
        self.path: Path | None = None
        self._modified = False
        self._loading = False
        self._base: dict = {}  # the scenario document's fields the editor does not show
        # The title: a question the user typed is kept; one gpudesk wrote (a preset's, or generated
        # from the workload and configurations) follows the comparison once it is edited away from
        # what was opened (`_opened`: the workload and configurations as opened).
        self._question_auto = True
        self._setting_question = False
        self._from_preset = False
        self._preset_index = 0
        self._opened: str | None = None
        self.rows: list[ConfigRow] = []
        self._choices: list[tuple[str, str, str]] = []
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(120)
        self.timer.timeout.connect(self.refresh)

        title = QLabel("Compare")
        title.setObjectName("pageTitle")
        self.subtitle = QLabel(DEFAULT_SUBTITLE)
        self.subtitle.setObjectName("pageSubtitle")
        self.subtitle.setWordWrap(True)

        self.preset = QComboBox()
        self.preset.setObjectName("comparePreset")
        self.preset.setMinimumWidth(320)
        self.preset.activated.connect(self._preset_chosen)
        buttons = QHBoxLayout()
        buttons.addWidget(QLabel("Question:"))
        buttons.addWidget(self.preset, 1)
        self.open_button = QPushButton("Open…")
        self.save_button = QPushButton("Save…")
        self.pdf_button = QPushButton("Export PDF…")
        self.pdf_button.setObjectName("exportPdf")
        self.csv_button = QPushButton("Export CSV…")
        self.copy_button = QPushButton("Copy table")
        self.open_button.clicked.connect(lambda *_: self.open_file())
        self.save_button.clicked.connect(lambda *_: self.save_as())
        self.pdf_button.clicked.connect(lambda *_: self.export_pdf())
        self.csv_button.clicked.connect(lambda *_: self.export_csv())
        self.copy_button.clicked.connect(lambda *_: self.copy_table())
        for b in (self.open_button, self.save_button, self.pdf_button, self.csv_button, self.copy_button):
            buttons.addWidget(b)

        # ---------------------------------------------------------------- the editor
        self.question = QLineEdit()
        self.question.setObjectName("question")
        self.question.setPlaceholderText("The question the report answers")
        self.workload_preset = QComboBox()
        self.workload_preset.setObjectName("workloadPreset")
        self.kind = QComboBox()
        self.kind.setObjectName("workloadKind")
        for key, label in KIND_LABELS.items():
            self.kind.addItem(label, key)
        self.params = QDoubleSpinBox()
        self.params.setObjectName("params")
        self.params.setRange(0.001, 100000)
        self.params.setDecimals(3)
        self.params.setSuffix(" B params")
        self.tokens = QDoubleSpinBox()
        self.tokens.setObjectName("tokens")
        self.tokens.setRange(0.0, 1e8)
        self.tokens.setDecimals(3)
        self.tokens.setSuffix(" B tokens")
        self.seq_len = QSpinBox()
        self.seq_len.setRange(1, 10_000_000)
        self.seq_len.setSuffix(" tokens")
        self.precision = QComboBox()
        self.precision.setObjectName("precision")
        for p in ("bf16", "fp16", "fp8", "fp32", "tf32", "int8", "q8", "q4", "fp4"):
            self.precision.addItem(p.upper(), p)
        self.prompt = QSpinBox()
        self.prompt.setRange(0, 10_000_000)
        self.output = QSpinBox()
        self.output.setRange(1, 10_000_000)
        self.concurrency = QSpinBox()
        self.concurrency.setObjectName("concurrency")
        self.concurrency.setRange(1, 100000)
        self.region = QComboBox()
        self.region.setObjectName("region")
        self.pue = QDoubleSpinBox()
        self.pue.setRange(1.0, 3.0)
        self.pue.setSingleStep(0.05)
        self.rent = QComboBox()
        self.rent.setObjectName("rent")
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

        work_box = QGroupBox("Workload")
        wf = QFormLayout(work_box)
        wf.addRow("Preset", self.workload_preset)
        wf.addRow("Task", self.kind)
        wf.addRow("Model size", self.params)
        self.tokens_label = QLabel("Training data")
        wf.addRow(self.tokens_label, self.tokens)
        wf.addRow("Context", self.seq_len)
        wf.addRow("Precision", self.precision)
        self.prompt_label, self.output_label, self.users_label = QLabel("Prompt"), QLabel("Answer"), QLabel("Users")
        wf.addRow(self.prompt_label, self.prompt)
        wf.addRow(self.output_label, self.output)
        wf.addRow(self.users_label, self.concurrency)
        site_box = QGroupBox("Site and money")
        sf = QFormLayout(site_box)
        sf.addRow("Grid region", self.region)
        sf.addRow("PUE", self.pue)
        sf.addRow("Rent instead", self.rent)
        sf.addRow("Utilisation", self.utilization)
        sf.addRow("Lifetime", self.lifetime)
        as_of_row = QHBoxLayout()
        as_of_row.setContentsMargins(0, 0, 0, 0)
        as_of_row.addWidget(self.as_of_on)
        as_of_row.addWidget(self.as_of, 1)
        sf.addRow("Prices as of", as_of_row)
        sf.addRow(self.embodied)  # the whole row: its text is too long to sit beside a label
        self.configs_box = QGroupBox("Configurations (2 to 6)")
        self.configs_layout = QVBoxLayout(self.configs_box)
        self.configs_layout.setSpacing(6)
        self.add_button = QPushButton("Add configuration")
        self.add_button.setObjectName("addConfiguration")
        self.add_button.clicked.connect(lambda: self.add_configuration())
        self.configs_layout.addWidget(self.add_button)

        editor = QWidget()
        el = QVBoxLayout(editor)
        el.setContentsMargins(0, 0, 6, 0)
        q = QLabel("Question")
        q.setObjectName("hint")
        el.addWidget(q)
        el.addWidget(self.question)
        el.addWidget(work_box)
        el.addWidget(self.configs_box)
        el.addWidget(site_box)
        el.addStretch(1)
        for combo in (self.workload_preset, self.kind, self.precision, self.region, self.rent):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
            combo.currentIndexChanged.connect(lambda _i, c=combo: c.setToolTip(c.currentText()))
        for spin in (self.params, self.tokens, self.seq_len, self.prompt, self.output, self.concurrency, self.pue,
                     self.utilization, self.lifetime):
            spin.setMinimumWidth(0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(editor)
        # never narrower than the editor's own minimum, so that nothing in it is cut off at the right
        scroll.setMinimumWidth(editor.minimumSizeHint().width() + scroll.verticalScrollBar().sizeHint().width())
        scroll.setMaximumWidth(560)
        scroll.setFrameShape(QFrame.Shape.NoFrame)

        # ---------------------------------------------------------------- results
        self.model = CompareTableModel(self)
        self.table = QTableView()
        self.table.setObjectName("compareTable")
        self.table.setModel(self.model)
        self.table.setWordWrap(True)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        # the configurations share the width: up to four fit 1366×768 and six 1920×1080 without
        # scrolling; names too long for a column elide in the middle (the header's tooltip has it all)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header.setMinimumSectionSize(60)
        # elide with the header's bold font (the style sheet's bold is not what QHeaderView measures with)
        bold = header.font()
        bold.setBold(True)
        header.setFont(bold)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        # the question the comparison answers, as the PDF's title shows it
        self.heading = QLabel("")
        self.heading.setObjectName("compareTitle")
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.heading.setStyleSheet("font-size: 11pt; font-weight: 600; color: #1d2330; padding: 2px 0 0 0;")
        self.recommendation = QTextBrowser()
        self.recommendation.setObjectName("recommendation")
        self.recommendation.setMaximumHeight(170)
        self.details = QTextBrowser()
        self.details.setObjectName("compareDetails")
        self.details.setOpenExternalLinks(True)
        self.charts = None  # built on first show of the Charts tab (pyqtgraph loads there)
        self.charts_holder = QWidget()
        QVBoxLayout(self.charts_holder).setContentsMargins(0, 0, 0, 0)

        table_page = QSplitter(Qt.Orientation.Vertical)
        table_page.addWidget(self.table)
        table_page.addWidget(self.recommendation)
        table_page.setStretchFactor(0, 4)
        table_page.setStretchFactor(1, 1)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("compareTabs")
        self.tabs.addTab(table_page, "Table")
        self.tabs.addTab(self.charts_holder, "Charts")
        self.tabs.addTab(self.details, "Assumptions and sources")
        self.tabs.currentChanged.connect(self._tab_changed)

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addLayout(buttons)
        rl.addWidget(self.heading)
        rl.addWidget(self.tabs, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("compareSplitter")  # its position is remembered by the main window
        splitter.addWidget(scroll)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([340, 1000])
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 10)
        layout.setSpacing(8)
        head = QVBoxLayout()
        head.setSpacing(0)
        head.addWidget(title)
        head.addWidget(self.subtitle)
        layout.addLayout(head)
        layout.addWidget(splitter, 1)

        self.question.textChanged.connect(self._question_changed)
        for w in (self.kind, self.precision, self.region, self.rent):
            w.currentIndexChanged.connect(self._edited)
        for w in (self.as_of_on, self.embodied):
            w.toggled.connect(self._edited)
        self.as_of.dateChanged.connect(self._edited)
        for w in (self.params, self.tokens, self.pue, self.lifetime, self.seq_len, self.prompt, self.output,
                  self.concurrency, self.utilization):
            w.valueChanged.connect(self._edited)
        self.kind.currentIndexChanged.connect(self._update_kind)
        self.workload_preset.activated.connect(self._workload_preset_chosen)
        self.setEnabled(False)

    # ------------------------------------------------------------------ public API
    def set_catalogue(self, catalogue) -> None:
        self.catalogue = catalogue
        self._choices = (
            [("system", r["id"], f"{r['name']} (system)") for r in catalogue.items("systems")]
            + [("accelerator", r["id"], r["name"]) for r in catalogue.items("accelerators")]
            + [("cloud", r["id"], f"{r['provider']} {r['instance_type']} ({r.get('accelerator_count') or 1} × "
                f"{r['accelerator']}, ${r['usd_per_hour']:,.2f}/h)") for r in catalogue.items("cloud")]
        )
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
        self.workload_preset.blockSignals(True)
        self.workload_preset.clear()
        self.workload_preset.addItem("Your own workload", "")
        for p in catalogue.presets():
            self.workload_preset.addItem(p["name"], p["id"])
        self.workload_preset.blockSignals(False)
        self.preset.clear()
        self.preset.addItem("Choose a question…", None)
        for name, path in example_scenarios():
            self.preset.addItem(name, str(path))
        self.setEnabled(True)
        examples = example_scenarios()
        if examples and self.comparison is None:
            self.load_path(examples[0][1], as_preset=True)

    def load_path(self, path, as_preset: bool = False) -> bool:
        try:
            scenario = load_scenario(path)
        except ScenarioError as exc:
            QMessageBox.warning(self, "Cannot open scenario", str(exc))
            return False
        if as_preset:  # the picker names the question opened, when it is one of its own
            target = Path(path).resolve()
            self._preset_index = next((i for i in range(1, self.preset.count())
                                       if Path(self.preset.itemData(i)).resolve() == target), 0)
        self.load_scenario(scenario, as_preset=as_preset)
        self.path = None if as_preset else Path(path)
        self._set_modified(False)
        self.status_message.emit(f"Opened {Path(path).name}")
        return True

    def open_path(self, path, as_copy: bool = False) -> bool:
        """Open a scenario file; `as_copy` opens it untitled (a report's saved scenario, say)."""
        return self.load_path(path, as_preset=as_copy)

    def load_scenario(self, scenario, as_preset: bool = False) -> None:
        """Fill the editor from a scenario (a single cluster becomes one configuration). A preset's
        question and description describe the preset: they give way to a generated title and the
        general subtitle once the workload or a configuration is edited."""
        self._loading = True
        self._from_preset = as_preset
        self._opened = None  # taken by the first refresh, from the editor's own reading of the file
        self._question_auto = as_preset
        if not as_preset:
            self._preset_index = 0
        try:
            self._base = scenario.to_dict()
            w = dict(scenario.workload)
            preset_id = w.get("preset", "")
            if preset_id:
                preset = next((p for p in self.catalogue.presets() if p["id"] == preset_id), None)
                if preset:
                    w = {**preset.get("workload", {}), **{k: v for k, v in w.items() if k != "preset"}}
            self._set_combo(self.workload_preset, preset_id)
            self._set_workload(w)
            self._set_question((scenario.report or {}).get("question") or scenario.name)
            site, fin = scenario.site, scenario.finance
            self._set_combo(self.region, site.get("region", "us-avg"))
            self.pue.setValue(site.get("pue", 1.2))
            self._set_combo(self.rent, fin.get("rent", ""))
            self.utilization.setValue(int(round(fin.get("utilization", 0.6) * 100)))
            self.lifetime.setValue(fin.get("lifetime_years", 4.0))
            self.as_of_on.setChecked(bool(fin.get("as_of")))
            self.as_of.setDate(QDate.fromString(fin["as_of"], "yyyy-MM-dd") if fin.get("as_of") else QDate.currentDate())
            self.embodied.setChecked(fin.get("embodied", True))
            for row in list(self.rows):
                self._remove_row(row, refresh=False)
            for option in scenario.options():
                self.add_configuration(option, refresh=False)
            self.subtitle.setText(scenario.description or DEFAULT_SUBTITLE)
        finally:
            self._loading = False
        self._update_kind()
        self.refresh()

    def add_configuration(self, option: Option | None = None, refresh: bool = True) -> ConfigRow | None:
        if len(self.rows) >= MAX_OPTIONS:
            self.status_message.emit(f"A comparison holds at most {MAX_OPTIONS} configurations")
            return None
        if option is None:
            option = Option(f"Option {len(self.rows) + 1}", [ClusterEntry(item="h100-sxm5-80gb", per_node=8)])
        row = ConfigRow(self._choices, option)
        row.changed.connect(self._edited)
        row.remove_requested.connect(self._remove_row)
        self.configs_layout.insertWidget(self.configs_layout.count() - 1, row)
        self.rows.append(row)
        self._update_row_buttons()
        if refresh:
            self._edited()
        return row

    def remove_configuration(self, index: int) -> None:
        self._remove_row(self.rows[index])

    def scenario(self):
        """The editor's state as a scenario (also what Save writes)."""
        doc = dict(self._base) if self._base else {"gpudesk_scenario": 1}
        doc["gpudesk_scenario"] = 1
        doc["name"] = self.question.text().strip() or "Comparison"
        doc["workload"] = self._workload()
        doc.pop("cluster", None)
        doc["compare"] = [o.to_dict() for o in (r.option() for r in self.rows) if o is not None]
        if self._from_preset and self._opened is not None and self._signature(doc) != self._opened:
            doc.pop("description", None)  # the preset's description no longer describes this comparison
        site = dict(doc.get("site") or {})
        site.update({"region": self.region.currentData() or "us-avg", "pue": round(self.pue.value(), 3)})
        doc["site"] = site
        fin = dict(doc.get("finance") or {})
        fin.update({"utilization": self.utilization.value() / 100.0, "lifetime_years": round(self.lifetime.value(), 2)})
        if self.rent.currentData():
            fin["rent"] = self.rent.currentData()
        else:
            fin.pop("rent", None)
        if self.as_of_on.isChecked():
            fin["as_of"] = self.as_of.date().toString("yyyy-MM-dd")
        else:
            fin.pop("as_of", None)
        if self.embodied.isChecked():
            fin.pop("embodied", None)
        else:
            fin["embodied"] = False
        doc["finance"] = fin
        report = dict(doc.get("report") or {})
        report["question"] = self.question.text().strip() or "Which configuration?"
        doc["report"] = report
        return parse_scenario(json.loads(json.dumps(doc)), "the compare view")

    def refresh(self) -> None:
        if self.catalogue is None or self._loading:
            return
        from gpudesk.core.compare import build_comparison
        from gpudesk.core.resolve import ResolveError
        from gpudesk.core.settings import load_settings

        self.timer.stop()
        self._follow_question()
        try:
            scenario = self.scenario()
            comparison = build_comparison(scenario, self.catalogue, load_settings(), self._calibrations())
        except (ScenarioError, ResolveError) as exc:
            self.recommendation.setPlainText(f"Cannot compare yet: {exc}")
            return
        self.comparison = comparison
        self.heading.setText(comparison.question)
        self.heading.setToolTip("The question this comparison answers: the PDF report's title")
        self.model.set_comparison(comparison)
        self._fit_table()
        self.recommendation.setHtml(
            "<p style='font-size:10.5pt'><b>Recommendation.</b> " + escape(comparison.recommendation) + "</p>")
        self.details.setHtml(_details_html(comparison))
        if self.charts is not None:
            self.charts.set_comparison(comparison)
        n = len(comparison.results)
        self.pdf_button.setEnabled(n >= 1)
        self.status_message.emit(f"Compared {n} configuration{'s' if n != 1 else ''}")

    def settings_changed(self) -> None:
        self.refresh()

    # ------------------------------------------------------------------ files
    def new_file(self) -> None:
        if not self.maybe_close():
            return
        examples = example_scenarios()
        if examples:
            self.load_path(examples[0][1], as_preset=True)

    def open_file(self) -> None:
        if not self.maybe_close():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", str(self._folder()), "gpudesk scenarios (*.json)")
        if path:
            self.load_path(path)

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self._write(self.path)

    def save_as(self) -> bool:
        suggested = self._folder() / ((self.question.text().strip() or "comparison")[:60].replace("/", "-") + ".json")
        path, _ = QFileDialog.getSaveFileName(self, "Save scenario", str(suggested), "gpudesk scenarios (*.json)")
        if not path:
            return False
        return self._write(Path(path))

    def _write(self, path: Path) -> bool:
        try:
            save_scenario(self.scenario(), path)
        except (ScenarioError, OSError) as exc:
            QMessageBox.warning(self, "Not saved", f"{path}: {exc}")
            return False
        self.path = path
        self._set_modified(False)
        self.status_message.emit(f"Saved {path.name}")
        return True

    def export_pdf(self, path: str | None = None) -> Path | None:
        if self.comparison is None:
            return None
        from gpudesk.core.settings import load_settings

        settings = load_settings()
        if path is None:
            suggested = self._folder() / "comparison.pdf"
            path, _ = QFileDialog.getSaveFileName(self, "Export PDF report", str(suggested), "PDF (*.pdf)")
            if not path:
                return None
        from gpudesk.ui.render.pdf import render_comparison_pdf

        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            written = render_comparison_pdf(self.comparison, path, settings.author, settings.organisation, settings.page_size)
        except OSError as exc:
            QMessageBox.warning(self, "PDF not written", f"{path}: {exc}")
            return None
        finally:
            QGuiApplication.restoreOverrideCursor()
        from gpudesk.core.report.history import try_record_comparison

        problem = try_record_comparison(self.comparison, written, page_size=settings.page_size)
        self.status_message.emit(f"Wrote {written}" + (f"; not added to Reports: {problem}" if problem else ""))
        return written

    def export_csv(self, path: str | None = None) -> Path | None:
        if self.comparison is None:
            return None
        from gpudesk.core.compare import comparison_csv
        from gpudesk.core.fileio import atomic_write_text

        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export CSV", str(self._folder() / "comparison.csv"), "CSV (*.csv)")
            if not path:
                return None
        try:
            atomic_write_text(path, comparison_csv(self.comparison))
        except OSError as exc:
            QMessageBox.warning(self, "CSV not written", f"{path}: {exc}")
            return None
        self.status_message.emit(f"Wrote {path}")
        return Path(path)

    def copy_table(self) -> None:
        if self.comparison is None:
            return
        comp = self.comparison
        header = ["Metric", "Better"] + comp.names
        lines = ["\t".join(header)]
        rows_html = ["<tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"]
        for row in comp.rows:
            cells = [row.label + (f" ({row.unit})" if row.unit else ""), row.better or ""]
            cells += [("★ " if i in row.winners else "") + c.text.replace("\n", " ") for i, c in enumerate(row.cells)]
            lines.append("\t".join(cells))
            rows_html.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
        mime = QMimeData()
        mime.setText("\n".join(lines) + "\n")
        mime.setHtml("<table>" + "".join(rows_html) + "</table>")
        set_clipboard(mime)
        self.status_message.emit("Copied the comparison table")

    def is_modified(self) -> bool:
        return self._modified

    def document_title(self) -> str:
        return self.path.name if self.path else ""

    def maybe_close(self) -> bool:
        if not self._modified:
            return True
        answer = QMessageBox.question(
            self, "Unsaved comparison", "The comparison has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    # ------------------------------------------------------------------ internals
    def _calibrations(self):
        from gpudesk.core.benchmarks.calibration import active_calibrations

        return active_calibrations(self.catalogue)

    def _folder(self) -> Path:
        return self.path.parent if self.path else Path.home()

    def _edited(self, *_args) -> None:
        if self._loading:
            return
        self._set_modified(True)
        self.timer.start()

    def _set_modified(self, value: bool) -> None:
        if value != self._modified:
            self._modified = value
            self.modified_changed.emit(value)

    def _remove_row(self, row: ConfigRow, refresh: bool = True) -> None:
        if row not in self.rows:
            return
        self.rows.remove(row)
        row.setParent(None)
        row.deleteLater()
        self._update_row_buttons()
        if refresh:
            self._edited()

    def _update_row_buttons(self) -> None:
        self.add_button.setEnabled(len(self.rows) < MAX_OPTIONS)
        for row in self.rows:
            row.remove.setEnabled(len(self.rows) > 1)

    def _set_combo(self, combo: QComboBox, value) -> None:
        i = combo.findData(value)
        combo.setCurrentIndex(max(0, i))

    def _set_workload(self, w: dict) -> None:
        self._set_combo(self.kind, w.get("kind", "train"))
        self.params.setValue(float(w.get("params", 1e9)) / 1e9)
        self.tokens.setValue(float(w.get("tokens") or 0.0) / 1e9)
        self.seq_len.setValue(int(w.get("seq_len", 2048)))
        self._set_combo(self.precision, w.get("precision", "fp16" if w.get("kind") == "infer" else "bf16"))
        self.prompt.setValue(int(w.get("prompt_tokens", 1024)))
        self.output.setValue(int(w.get("output_tokens", 512)))
        self.concurrency.setValue(int(w.get("concurrency", 1)))
        self._workload_extra = {k: v for k, v in w.items() if k not in (
            "kind", "params", "tokens", "seq_len", "precision", "prompt_tokens", "output_tokens", "concurrency", "preset")}

    def _workload(self) -> dict:
        kind = self.kind.currentData()
        w = dict(getattr(self, "_workload_extra", {}))
        w.update({"kind": kind, "params": self.params.value() * 1e9, "seq_len": self.seq_len.value(),
                  "precision": self.precision.currentData()})
        if kind == "infer":
            for key in ("tokens", "global_batch_tokens", "sharding", "method"):
                w.pop(key, None)
            w.update({"prompt_tokens": self.prompt.value(), "output_tokens": self.output.value(),
                      "concurrency": self.concurrency.value()})
        else:
            if self.tokens.value() > 0:
                w["tokens"] = self.tokens.value() * 1e9
            for key in ("prompt_tokens", "output_tokens", "concurrency"):
                w.pop(key, None)
            if kind == "train" and w.get("method") not in (None, "full"):
                w.pop("method")
            if kind == "finetune":
                w.setdefault("method", "lora")
            if w.get("precision") in ("int8", "q8", "q4", "fp4"):
                w["precision"] = "bf16"
        # a layout that no longer matches the model's width is dropped rather than refused
        if w.get("layers") and w.get("d_model") and 12.0 * w["layers"] * w["d_model"] ** 2 > 3.0 * w["params"]:
            for key in ("layers", "d_model", "heads", "kv_heads", "vocab"):
                w.pop(key, None)
        return w

    def _update_kind(self) -> None:
        infer = self.kind.currentData() == "infer"
        for w in (self.prompt, self.output, self.concurrency, self.prompt_label, self.output_label, self.users_label):
            w.setVisible(infer)
        for w in (self.tokens, self.tokens_label):
            w.setVisible(not infer)

    def _workload_preset_chosen(self) -> None:
        preset_id = self.workload_preset.currentData()
        if not preset_id:
            return
        preset = next((p for p in self.catalogue.presets() if p["id"] == preset_id), None)
        if preset is None:
            return
        self._loading = True
        try:
            self._set_workload(dict(preset.get("workload", {})))
        finally:
            self._loading = False
        self._update_kind()
        self._edited()

    def _preset_chosen(self, index: int) -> None:
        """The picker shows the question picked until the comparison is edited away from it."""
        path = self.preset.itemData(index)
        if path and self.maybe_close() and self.load_path(path, as_preset=True):
            self._preset_index = index
        self.preset.setCurrentIndex(self._preset_index if self._preset_index < self.preset.count() else 0)

    # ------------------------------------------------------------------ the title
    def _set_question(self, text: str) -> None:
        self._setting_question = True
        try:
            self.question.setText(text)
        finally:
            self._setting_question = False
        self.question.setToolTip(text)
        if not self.question.hasFocus():
            self.question.setCursorPosition(0)

    def _question_changed(self, text: str) -> None:
        if self._setting_question:
            return
        # typed by the user: kept from now on; emptied: gpudesk writes it again
        self._question_auto = not text.strip()
        self.question.setToolTip(text)
        self._edited()

    @staticmethod
    def _signature(doc: dict) -> str:
        """The part of a comparison its question is about: the workload and the configurations."""
        return json.dumps([doc.get("workload"), doc.get("compare")], sort_keys=True, default=str)

    def generated_question(self) -> str:
        from gpudesk.core.compare import generated_question, workload_model_name

        workload = self._workload()
        names = [o.name for o in (r.option() for r in self.rows) if o is not None]
        return generated_question(workload, names, workload_model_name(workload, self.catalogue))

    def _follow_question(self) -> None:
        """Keep the title, the picker, the subtitle and the workload preset true to what the
        editor holds now."""
        doc = {"workload": self._workload(),
               "compare": [o.to_dict() for o in (r.option() for r in self.rows) if o is not None]}
        signature = self._signature(doc)
        if self._opened is None:
            self._opened = signature
            if not self._from_preset:  # a saved file: its title is the user's unless gpudesk wrote it
                self._question_auto = self.question.text().strip() in ("", self.generated_question())
        as_opened = signature == self._opened
        if self._question_auto or not self.question.text().strip():
            report = self._base.get("report") or {}
            text = (report.get("question") or self._base.get("name") or "") if (self._from_preset and as_opened) else ""
            text = text or self.generated_question()
            if text != self.question.text():
                self._set_question(text)
        wanted = self._preset_index if (self._from_preset and as_opened) else 0
        if self.preset.currentIndex() != wanted and wanted < self.preset.count():
            self.preset.setCurrentIndex(wanted)
        if self._from_preset and not as_opened:
            self.subtitle.setText(DEFAULT_SUBTITLE)
        elif self._from_preset:
            self.subtitle.setText(self._base.get("description") or DEFAULT_SUBTITLE)
        self._follow_workload_preset(doc["workload"])

    def _follow_workload_preset(self, workload: dict) -> None:
        """The workload preset stays named while the model and task are the preset's."""
        preset_id = self.workload_preset.currentData()
        if not preset_id or self.catalogue is None:
            return
        preset = next((p for p in self.catalogue.presets() if p["id"] == preset_id), None)
        w = (preset or {}).get("workload", {})
        from gpudesk.core.compare import _same

        if preset is None or w.get("kind") != workload.get("kind") or not _same(w.get("params"), workload.get("params")):
            self.workload_preset.blockSignals(True)
            self.workload_preset.setCurrentIndex(0)
            self.workload_preset.blockSignals(False)

    def _fit_table(self) -> None:
        """Metric and direction take what they need (the metric up to a third of the width); the
        configurations stretch over the rest."""
        header = self.table.horizontalHeader()
        if self.model.columnCount() < 2:
            return
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Fixed)
        for c in range(2, self.model.columnCount()):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.Stretch)
        width = self.table.viewport().width()
        metric = self.table.sizeHintForColumn(0) + 12
        header.resizeSection(0, max(150, min(metric, 280, width // 4)))
        header.resizeSection(1, max(56, header.sectionSizeHint(1)))
        self.table.resizeRowsToContents()

    def _tab_changed(self, index: int) -> None:
        if self.tabs.widget(index) is self.charts_holder and self.charts is None:
            from gpudesk.ui.compare.charts import CompareCharts

            self.charts = CompareCharts()
            self.charts_holder.layout().addWidget(self.charts)
            if self.comparison is not None:
                self.charts.set_comparison(self.comparison)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.comparison is not None:
            self._fit_table()


def _details_html(comp) -> str:
    parts = ["<h3>Assumptions</h3><ul>"]
    parts += [f"<li>{escape(a)}</li>" for a in comp.assumptions]
    parts.append("</ul><h3>Notes</h3><ul>")
    for r in comp.results:
        for note in (r.estimate.note_texts() if r.estimate else []) + ([r.error] if r.error else []):
            parts.append(f"<li><b>{escape(r.name)}:</b> {escape(note)}</li>")
    parts.append("</ul><h3>Sources</h3><ol>")
    for s in comp.sources:
        url = escape(s.get("url") or "", quote=True)
        parts.append(f"<li><a href='{url}'>{escape(s['title'])}</a> — {escape(s.get('publisher') or '')}, "
                     f"{escape(s.get('date') or 'undated')}<br><span style='color:#5b6475'>"
                     f"{escape('; '.join(s.get('figures') or []))}</span></li>")
    parts.append("</ol>")
    return "".join(parts)
