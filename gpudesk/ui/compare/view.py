"""The compare view: a workload, two to six configurations, the table with a winner per row, the
charts, the recommendation; saved and opened as scenario files, exported as PDF and CSV.

The view assembles its panels (the toolbar, the editor with its workload, configurations and site
panels, the results) and wires them; what it holds and decides is the presenter's, and the
workload rules are gpudesk.core.workload's, the same the CLI and scenario files go through.

Every edit restarts a short single-shot timer; when it fires the scenario is rebuilt from the
editor and compared again (a six-way comparison takes a few milliseconds).
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QMessageBox, QSplitter, QVBoxLayout, QWidget

from gpudesk.core.scenario import Option, ScenarioError, load_scenario
from gpudesk.ui.compare.config_row import ConfigRow
from gpudesk.ui.compare.editor_panel import EditorPanel
from gpudesk.ui.compare.file_actions import CompareFileActions
from gpudesk.ui.compare.presenter import (  # noqa: F401 (names kept importable from the view)
    DEFAULT_SUBTITLE,
    KIND_LABELS,
    MAX_OPTIONS,
    ComparePresenter,
    editor_extra,
    editor_values,
    example_scenarios,
    hardware_choices,
    workload_from_editor,
)
from gpudesk.ui.compare.results_panel import ResultsPanel
from gpudesk.ui.compare.toolbar import CompareToolbar

log = logging.getLogger(__name__)

# the panels' widgets, reachable from the view by their old names
_ALIASES = {
    "editor": ("question",),
    "workload_panel": ("kind", "params", "tokens", "seq_len", "precision", "prompt", "output", "concurrency"),
    "site_panel": ("region", "pue", "rent", "pricing", "utilization", "lifetime", "as_of_on", "as_of", "embodied"),
    "configs": ("add_button",),
    "toolbar": ("preset", "open_button", "save_button", "pdf_button", "csv_button", "copy_button"),
    "results": ("model", "table", "heading", "recommendation", "details", "tabs", "charts_holder"),
}


class CompareView(CompareFileActions, QWidget):
    status_message = Signal(str)
    modified_changed = Signal(bool)
    open_requested = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.comparison = None
        self.path: Path | None = None
        self.presenter = ComparePresenter()
        self._modified = False
        self._loading = False
        self._workload_extra: dict = {}  # the workload's fields the editor does not show
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(120)
        self.timer.timeout.connect(self.refresh)
        self.toolbar = CompareToolbar()
        self.editor = EditorPanel()
        self.workload_panel = self.editor.workload
        self.workload_preset = self.workload_panel.preset
        self.site_panel = self.editor.site
        self.configs = self.editor.configs
        self.configs_box = self.configs
        self.results = ResultsPanel()
        for owner, names in _ALIASES.items():
            for name in names:
                setattr(self, name, getattr(getattr(self, owner), name))
        self._lay_out()
        self._connect()
        self.setEnabled(False)

    def _lay_out(self) -> None:
        title = QLabel("Compare")
        title.setObjectName("pageTitle")
        self.subtitle = QLabel(DEFAULT_SUBTITLE)
        self.subtitle.setObjectName("pageSubtitle")
        self.subtitle.setWordWrap(True)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.toolbar)
        rl.addWidget(self.results, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("compareSplitter")  # its position is remembered by the main window
        splitter.addWidget(self.editor)
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

    def _connect(self) -> None:
        tb = self.toolbar
        tb.example_chosen.connect(self._preset_chosen)
        tb.open_clicked.connect(self.open_file)
        tb.save_clicked.connect(self.save_as)
        tb.pdf_clicked.connect(self.export_pdf)
        tb.csv_clicked.connect(self.export_csv)
        tb.copy_clicked.connect(self.copy_table)
        self.question.textChanged.connect(self._question_changed)
        for panel in (self.workload_panel, self.site_panel, self.configs):
            panel.edited.connect(self._edited)
        self.configs.message.connect(self.status_message.emit)
        self.workload_panel.preset_chosen.connect(self._workload_preset_chosen)
        self.results.why_ready.append(self._connect_why)

    def _connect_why(self, why) -> None:
        why.row_chosen.connect(self.decide_by)
        why.input_clicked.connect(self.edit_input)

    def decide_by(self, row: str) -> None:
        """Rest the recommendation on another outcome; saved with the scenario."""
        base = self.presenter.base if self.presenter.base is not None else {}
        self.presenter.base = base
        base["uncertainty"] = {**(base.get("uncertainty") or {}), "decide_by": row}
        self._set_modified(True)
        self.refresh()

    def edit_input(self, inp) -> None:
        """Open an input of the Why tab for editing; the comparison updates with the new value."""
        from gpudesk.ui.compare.why_edit import edit_input

        if edit_input(self, inp):
            self._set_modified(True)
            self.refresh()

    # ------------------------------------------------------------------ the panels' state
    @property
    def charts(self):
        return self.results.charts

    @property
    def rows(self) -> list[ConfigRow]:
        return self.configs.rows

    # ------------------------------------------------------------------ public API
    def set_catalogue(self, catalogue) -> None:
        self.catalogue = catalogue
        self.configs.choices = hardware_choices(catalogue)
        self.site_panel.set_catalogue(catalogue)
        self.workload_panel.set_presets(catalogue.presets())
        examples = example_scenarios()
        self.toolbar.set_examples(examples)
        self.setEnabled(True)
        if examples and self.comparison is None:
            self.load_path(examples[0][1], as_preset=True)

    def load_path(self, path, as_preset: bool = False) -> bool:
        try:
            scenario = load_scenario(path)
        except ScenarioError as exc:
            QMessageBox.warning(self, "Cannot open scenario", str(exc))
            return False
        from gpudesk.core.resolve import missing_entries

        missing = missing_entries(scenario, self.catalogue) if self.catalogue is not None else []
        if missing:  # shown with something else in their place, they would be compared wrongly
            QMessageBox.warning(self, "Cannot open scenario", f"{Path(path).name}:\n" + "\n".join(missing))
            return False
        if as_preset:  # the picker names the question opened, when it is one of its own
            self.presenter.preset_index = self.toolbar.example_index(path)
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
        self.presenter.begin_load(scenario, as_preset)
        try:
            opened = self.presenter.opened_workload(scenario, self.catalogue)
            if opened.problems:
                self.status_message.emit("; ".join(opened.problems))
            self.workload_panel.show_preset(opened.preset, quiet=False)
            self._show_workload(opened.workload)
            self.editor.show_question((scenario.report or {}).get("question") or scenario.name)
            self.site_panel.load(scenario.site, scenario.finance)
            self.configs.replace(scenario.options())
            self.subtitle.setText(scenario.description or DEFAULT_SUBTITLE)
        finally:
            self._loading = False
        self.refresh()

    def add_configuration(self, option: Option | None = None, refresh: bool = True) -> ConfigRow | None:
        return self.configs.add(option, refresh)

    def remove_configuration(self, index: int) -> None:
        self.configs.remove(self.rows[index])

    def workload(self) -> dict:
        """The workload the editor holds, through the shared workload rules."""
        return workload_from_editor(self.workload_panel.values(), self._workload_extra, self.catalogue).workload

    def scenario(self):
        """The editor's state as a scenario (also what Save writes)."""
        return self.presenter.scenario(self.question.text(), self.workload(),
                                       [o.to_dict() for o in self.configs.options()],
                                       self.site_panel.site(), self.site_panel.finance())

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
            self.results.show_problem(f"Cannot compare yet: {exc}")
            return
        self.comparison = comparison
        self.results.show_comparison(comparison)
        n = len(comparison.results)
        self.pdf_button.setEnabled(n >= 1)
        self.status_message.emit(f"Compared {n} configuration{'s' if n != 1 else ''}")

    def settings_changed(self) -> None:
        self.refresh()

    def new_file(self) -> None:
        if not self.maybe_close():
            return
        examples = example_scenarios()
        if examples:
            self.load_path(examples[0][1], as_preset=True)

    def is_modified(self) -> bool:
        return self._modified

    def document_title(self) -> str:
        return self.path.name if self.path else ""

    def generated_question(self) -> str:
        from gpudesk.core.compare import generated_question, workload_model_name

        workload = self.workload()
        names = [o.name for o in self.configs.options()]
        return generated_question(workload, names, workload_model_name(workload, self.catalogue))

    # ------------------------------------------------------------------ internals
    def _calibrations(self):
        from gpudesk.core.benchmarks.calibration import active_calibrations

        return active_calibrations(self.catalogue)

    def _edited(self, *_args) -> None:
        if self._loading:
            return
        self._set_modified(True)
        self.timer.start()

    def _set_modified(self, value: bool) -> None:
        if value != self._modified:
            self._modified = value
            self.modified_changed.emit(value)

    def _show_workload(self, w: dict) -> None:
        self.workload_panel.set_values(editor_values(w))
        self._workload_extra = editor_extra(w)

    def _workload_preset_chosen(self, preset_id: str) -> None:
        from gpudesk.core.workload import find_preset

        preset = find_preset(self.catalogue, preset_id)
        if preset is None:
            return
        self._show_workload(dict(preset.get("workload", {})))
        self._edited()

    def _preset_chosen(self, index: int) -> None:
        """The picker shows the question picked until the comparison is edited away from it."""
        path = self.preset.itemData(index)
        if path and self.maybe_close() and self.load_path(path, as_preset=True):
            self.presenter.preset_index = index
        index = self.presenter.preset_index
        self.preset.setCurrentIndex(index if index < self.preset.count() else 0)

    def _question_changed(self, text: str) -> None:
        self.presenter.question_typed(text)
        self.question.setToolTip(text)
        self._edited()

    def _follow_question(self) -> None:
        """Keep the title, the picker, the subtitle and the workload preset true to what the
        editor holds now."""
        workload = self.workload()
        doc = {"workload": workload, "compare": [o.to_dict() for o in self.configs.options()]}
        decision = self.presenter.follow(doc, self.question.text(), self.generated_question())
        if decision.question is not None:
            self.editor.show_question(decision.question)
        self.toolbar.show_example(decision.preset_index)
        if decision.subtitle is not None:
            self.subtitle.setText(decision.subtitle)
        self._follow_workload_preset(workload)

    def _follow_workload_preset(self, workload: dict) -> None:
        """The workload preset stays named while the model and task are the preset's."""
        from gpudesk.core.compare import _same
        from gpudesk.core.workload import find_preset

        preset_id = self.workload_preset.currentData()
        if not preset_id or self.catalogue is None:
            return
        preset = find_preset(self.catalogue, preset_id)
        w = (preset or {}).get("workload", {})
        if preset is None or w.get("kind") != workload.get("kind") or not _same(w.get("params"), workload.get("params")):
            self.workload_panel.show_preset("", quiet=True)
