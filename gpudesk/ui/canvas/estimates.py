"""The Cluster view's live estimates: an edit schedules one; the UI thread resolves the drawn
cluster against the catalogue, a worker thread runs the estimate, and the result is shown on the
canvas (problems) and in the estimates panel. A mixin of ClusterView: it reads the view's graph,
analysis, catalogue, scene, panel and `base` scenario document."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, QTimer

from gpudesk.core.cluster.convert import machine_count, scenario_with_canvas
from gpudesk.core.scenario import Option, ScenarioError, parse_scenario

ESTIMATE_DELAY_MS = 60  # an edit waits this long for the next before it is estimated


@dataclass
class _EstimateJob:
    """One estimate of the drawn cluster: what the UI thread resolved, for the worker to compute."""

    problems: list = field(default_factory=list)
    machines: list = field(default_factory=list)  # the machine nodes the estimate counts
    unlinked: list = field(default_factory=list)  # machine nodes left out: no link to the rest
    context: dict = field(default_factory=dict)  # the site's PUE and the systems' rated power, for the panel
    option: Option | None = None
    resolved: object = None
    error: str = ""


def _compute_estimate(job: _EstimateJob):
    """(estimate, cost curves, error text): pure computation, safe off the UI thread."""
    if job.resolved is None:
        return None, {}, job.error
    from gpudesk.core.compare import OptionResult, cost_curves
    from gpudesk.core.estimate.engine import estimate

    try:
        est = estimate(job.resolved.inputs)
    except ValueError as exc:
        return None, {}, f"Cannot estimate: {exc}"
    est.assumptions[:0] = job.resolved.assumptions
    return est, cost_curves([OptionResult("This cluster", job.option, est, job.resolved.inputs)]), ""


def _rated_power(inputs) -> list[tuple[str, int, float]]:
    """(label, machines, rated watts) of each catalogued system that is owned, not rented."""
    rated: dict[str, list] = {}
    for g in inputs.groups:
        if g.system_power_w and g.cloud is None:
            entry = rated.setdefault(g.label or g.device.name, [0, g.system_power_w])
            entry[0] += g.nodes
    return [(label, n, watts) for label, (n, watts) in rated.items()]


class EstimateScheduling:
    """Schedules, runs and shows the estimate of the drawn cluster for ClusterView."""

    def _setup_estimates(self) -> None:
        self.estimate = None
        self.estimate_context: dict = {}  # the PUE and rated system power the estimate rests on
        self.problems = []
        self.last_update_ms = 0.0
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(ESTIMATE_DELAY_MS)
        self.timer.timeout.connect(self.update_estimate_async)
        self._generation = 0
        self._estimating = False
        self._pending = False
        self._estimate_ready.connect(self._on_estimate_ready, Qt.ConnectionType.QueuedConnection)

    def schedule(self) -> None:
        self.timer.start()

    def current_scenario(self, with_canvas: bool = True):
        if with_canvas:
            return scenario_with_canvas(self.graph, self.catalogue, self.base)
        doc = {k: v for k, v in self.base.items() if k not in ("cluster", "compare", "canvas")}
        doc["gpudesk_scenario"] = 1
        doc["cluster"] = [e.to_dict() for e in self.analysis.entries()]
        return parse_scenario(doc, "the cluster canvas")

    def update_estimate(self) -> None:
        """Estimate the drawn cluster now, on this thread; problems are shown on the canvas."""
        self._generation += 1  # a worker's estimate still running is older than this one
        start = time.perf_counter()
        job = self._prepare_estimate()
        self._apply_estimate(job, _compute_estimate(job), start)

    def update_estimate_async(self) -> None:
        """What an edit triggers: the problems and the panel follow at once; the estimate itself runs
        on a worker thread (a new plan search on thousands of GPUs takes tens of milliseconds), and
        an edit made meanwhile supersedes it."""
        if self._estimating:
            # one estimate at a time: edits made meanwhile are estimated together once it is done
            self._pending = True
            return
        start = time.perf_counter()
        job = self._prepare_estimate()
        if job.resolved is None:
            self._apply_estimate(job, (None, {}, job.error), start)
            return
        self._generation += 1
        generation = self._generation
        self.panel.status.setText("Updating the estimate…")
        self._estimating = True

        def work() -> None:
            result = _compute_estimate(job)
            try:
                self._estimate_ready.emit((generation, job, result, start))
            except RuntimeError:  # the view was closed while this ran
                pass

        threading.Thread(target=work, name="gpudesk-canvas-estimate", daemon=True).start()

    def _on_estimate_ready(self, payload) -> None:
        generation, job, result, start = payload
        self._estimating = False
        if self._pending:  # the drawing changed while this ran: its result is already stale
            self._pending = False
            self.update_estimate_async()
        elif generation == self._generation:
            self._apply_estimate(job, result, start)

    def _prepare_estimate(self) -> _EstimateJob:
        """What must run on the UI thread: the graph's problems and the scenario resolved against
        the catalogue."""
        job = _EstimateJob()
        if self.catalogue is None:
            return job
        job.problems = self.analysis.problems()
        job.unlinked = self.analysis.unlinked()
        left_out = {n.id for n in job.unlinked}
        job.machines = [n for n in self.graph.nodes.values() if n.kind != "switch" and n.id not in left_out]
        if job.machines:
            self._resolve(job)
        return job

    def _resolve(self, job: _EstimateJob) -> None:
        """The drawn cluster's scenario resolved against the catalogue, into `job` (or why not)."""
        from gpudesk.core.benchmarks.calibration import active_calibrations
        from gpudesk.core.resolve import ResolveError, resolve_option
        from gpudesk.core.settings import load_settings

        try:
            scenario = self.current_scenario(with_canvas=False)
            job.option = Option(scenario.name or "cluster", scenario.cluster)
            settings = load_settings()
            job.resolved = resolve_option(scenario, job.option, self.catalogue, "cluster", settings,
                                          active_calibrations(self.catalogue, settings))
            job.context = {"pue": job.resolved.inputs.site.pue, "rated": _rated_power(job.resolved.inputs),
                           "inputs": job.resolved.inputs}
        except (ScenarioError, ResolveError, ValueError) as exc:
            job.error = f"Cannot estimate: {exc}"

    def _apply_estimate(self, job: _EstimateJob, result, start: float) -> None:
        if self.catalogue is None:
            return
        est, curves, error = result
        messages: dict[str, list[str]] = {}
        for p in job.problems:
            messages.setdefault(p.target, []).append(p.message)
        if est is not None and not est.memory.fits:
            reason = str(est.reasons[0]) if est.reasons else "the workload does not fit"
            for node in job.machines:
                messages.setdefault(node.id, []).append(reason)
        self.estimate = est
        self.problems = job.problems
        self.scene.set_problems({k: "\n".join(v) for k, v in messages.items()})
        self.last_update_ms = (time.perf_counter() - start) * 1000
        self.estimate_context = job.context
        self.panel.show_estimate(est, self.last_update_ms, job.context)
        self.panel.show_unlinked(machine_count(job.unlinked), [n.label or n.item for n in job.unlinked],
                                 self.graph.count_unlinked)
        if error:
            self.panel.status.setText(error)
        if est is None and not job.machines:
            self.panel.status.setText("Add a machine from the palette to see estimates.")
        if job.problems:
            self.panel.status.setText(self.panel.status.text() + f"  {len(job.problems)} problem(s) marked on the canvas.")
        self.panel.show_cost_curve(curves)

    # ------------------------------------------------------------------ the workload and the rent
    def _workload_chosen(self, preset_id: str) -> None:
        if preset_id:
            self.base["workload"] = {"preset": preset_id, "kind": next(
                (p.get("workload", {}).get("kind", "train") for p in self.catalogue.presets() if p["id"] == preset_id), "train")}
            self._mark_base_changed()

    def _rent_chosen(self, offer_id: str) -> None:
        finance = dict(self.base.get("finance") or {})
        if offer_id:
            finance["rent"] = offer_id
        else:
            finance.pop("rent", None)
        self.base["finance"] = finance
        self._mark_base_changed()

    def _mark_base_changed(self) -> None:
        # the workload and finance are part of the document but not of the graph's undo history
        self.undo_stack.resetClean()
        self.modified_changed.emit(True)
        self.schedule()

    def _sync_panel_choices(self) -> None:
        w = self.base.get("workload", {})
        label = "" if w.get("preset") else f"From file: {w.get('kind', 'train')} {float(w.get('params', 0)) / 1e9:.3g}B"
        self.panel.select(w.get("preset"), (self.base.get("finance") or {}).get("rent"), label)
