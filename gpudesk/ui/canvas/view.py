"""The build-your-cluster view: a palette, the canvas (QGraphicsView over the graph's scene), the
properties of the selection and the live estimates. Every edit is a command on an undo stack; the
window's modified flag is the stack's clean state; unsaved work is autosaved and recovered."""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QPainter, QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from gpudesk.core.cluster.analysis import GraphAnalysis
from gpudesk.core.cluster.commands import AddItems, Command, MoveNodes, RemoveItems, SetCountUnlinked, SetLink, SetNode
from gpudesk.core.cluster.convert import (
    machine_count,
    make_node,
    node_caption,
    palette_items,
    scenario_with_canvas,
)
from gpudesk.core.cluster.model import ClusterGraph, Link, Node
from gpudesk.core.scenario import Option, ScenarioError, parse_scenario
from gpudesk.ui.canvas.files import AUTOSAVE_NAME, MAX_EXPORT_PX, FileActions  # noqa: F401 - re-exported
from gpudesk.ui.canvas.items import LOD_DETAIL, NODE_H, NODE_W, LinkItem, NodeItem
from gpudesk.ui.canvas.panels import MIME, EstimatesPanel, Palette, PropertiesPanel
from gpudesk.ui.canvas.scene import ClusterScene
from gpudesk.ui.widgets.clipboard import set_clipboard

log = logging.getLogger(__name__)

CLIPBOARD_MIME = "application/x-gpudesk-canvas"
FRAME_MS = 16.7  # one frame at 60 Hz
SETTLE_MS = 180  # full quality again this long after the last pan or zoom
DEFAULT_BASE = {"gpudesk_scenario": 1, "name": "My cluster", "workload": {"preset": "nanochat-d20", "kind": "train"},
                "site": {}, "finance": {}}


class GraphCommand(QUndoCommand):
    """A flat QUndoCommand around a pure-Python command (no parent/child trees: PySide6 crashes on them)."""

    def __init__(self, command: Command, graph: ClusterGraph):
        super().__init__(command.text)
        self.command = command
        self.graph = graph

    def redo(self) -> None:
        with self.graph.batch():  # listeners defer their work to the end of the edit
            self.command.redo(self.graph)

    def undo(self) -> None:
        with self.graph.batch():
            self.command.undo(self.graph)

    def id(self) -> int:
        key = self.command.merge_key()
        return -1 if key is None else (hash(key) & 0x7FFFFFFF)

    def mergeWith(self, other) -> bool:  # noqa: N802 - Qt override
        if not isinstance(other, GraphCommand) or other.command.merge_key() != self.command.merge_key():
            return False
        return self.command.merge(other.command)


class CanvasView(QGraphicsView):
    """Zoom with the wheel, pan with the middle button (or Space + drag), rubber-band selection."""

    dropped = Signal(str, str, QPointF)

    def __init__(self, scene, parent=None):
        super().__init__(scene, parent)
        self.setObjectName("clusterCanvas")
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setOptimizationFlags(QGraphicsView.OptimizationFlag.DontSavePainterState)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setAcceptDrops(True)
        self._panning = None
        self._space = False
        # Interactive quality: when a full-quality frame is slow (thousands of long antialiased
        # links), pans and zooms draw links without antialiasing and the view settles back to full
        # quality once the user pauses.
        self.last_paint_ms = 0.0
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._settled)
        self._detailed = True

    def paintEvent(self, event) -> None:
        start = time.perf_counter()
        self._detail_changed()  # the transform may have changed without zoom() (fitInView, resetTransform)
        super().paintEvent(event)
        self.last_paint_ms = (time.perf_counter() - start) * 1000

    def _interacting(self) -> None:
        scene = self.scene()
        if scene is None:
            return
        if self.last_paint_ms > FRAME_MS:
            scene.fast = True
        if scene.fast:
            self._settle.start()

    def _settled(self) -> None:
        scene = self.scene()
        if scene is not None and scene.fast:
            scene.fast = False
            self.viewport().update()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        self._interacting()
        super().scrollContentsBy(dx, dy)

    def wheelEvent(self, event) -> None:
        factor = 1.15 if event.angleDelta().y() > 0 else 1 / 1.15
        self.zoom(factor)

    def zoom(self, factor: float) -> None:
        scale = self.transform().m11() * factor
        if 0.05 <= scale <= 4.0:
            self._interacting()
            self.scale(factor, factor)
            self._detail_changed()

    def _detail_changed(self) -> None:
        """Far out, the scene draws the cluster as one overview of boxes and lines."""
        detailed = self.transform().m11() >= LOD_DETAIL
        if detailed != self._detailed:
            self._detailed = detailed
            self.scene().set_overview(not detailed)

    def fit(self) -> None:
        rect = self.scene().itemsBoundingRect()
        if rect.isNull():
            rect = QRectF(-200, -150, 400, 300)
        self.fitInView(rect.adjusted(-60, -60, 60, 60), Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.25:
            self.resetTransform()
            self.scale(1.25, 1.25)
            self.centerOn(rect.center())
        self._detail_changed()

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.MiddleButton or (self._space and event.button() == Qt.MouseButton.LeftButton):
            self._panning = event.position()
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._panning is not None:
            delta = event.position() - self._panning
            self._panning = event.position()
            self.horizontalScrollBar().setValue(int(self.horizontalScrollBar().value() - delta.x()))
            self.verticalScrollBar().setValue(int(self.verticalScrollBar().value() - delta.y()))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._panning is not None:
            self._panning = None
            self.unsetCursor()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = True
            self.setCursor(Qt.CursorShape.OpenHandCursor)
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = False
            self.unsetCursor()
        super().keyReleaseEvent(event)

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasFormat(MIME):
            event.acceptProposedAction()

    def dragMoveEvent(self, event) -> None:
        if event.mimeData().hasFormat(MIME):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        data = bytes(event.mimeData().data(MIME)).decode()
        kind, _, item = data.partition(":")
        self.dropped.emit(kind, item, self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()


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


class ClusterView(FileActions, QWidget):
    status_message = Signal(str)
    modified_changed = Signal(bool)
    open_requested = Signal(str, str)
    _estimate_ready = Signal(object)  # emitted from the estimate worker thread

    def __init__(self, parent=None):
        super().__init__(parent)
        self.catalogue = None
        self.graph = ClusterGraph()
        self.analysis = GraphAnalysis(self.graph, None)
        self.base: dict = json.loads(json.dumps(DEFAULT_BASE))
        self.path: Path | None = None
        self.estimate = None
        self.estimate_context: dict = {}  # the PUE and rated system power the estimate rests on
        self.problems = []
        self.last_update_ms = 0.0
        self._session = 0
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self.ask_recover = self._ask_recover  # tests replace it
        self.scene = ClusterScene(self.graph, self._describe)
        self.scene.link_info = self._link_info
        self.canvas = CanvasView(self.scene)
        self.palette = Palette()
        self.properties = PropertiesPanel()
        self.panel = EstimatesPanel()

        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(60)
        self.timer.timeout.connect(self.update_estimate_async)
        self._generation = 0
        self._estimating = False
        self._pending = False
        self._estimate_ready.connect(self._on_estimate_ready, Qt.ConnectionType.QueuedConnection)
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(15000)
        self.autosave_timer.timeout.connect(self.autosave)
        self.autosave_timer.start()

        for event in ClusterGraph.EVENTS:
            self.graph.subscribe(event, self._graph_changed)
        self.graph.subscribe_batch(lambda begins: None if begins else self._graph_changed())
        self.scene.nodes_moved.connect(lambda moves: self.push(MoveNodes(moves)))
        self.scene.link_requested.connect(self.connect_nodes)
        self.scene.selectionChanged.connect(self._selection_changed)
        self.canvas.dropped.connect(lambda kind, item, pos: self.add_item(kind, item, pos))
        self.palette.tree.add_requested.connect(lambda kind, item: self.add_item(kind, item))
        self.properties.node_edited.connect(self._node_edited)
        self.properties.link_edited.connect(self._link_edited)
        self.properties.edit_finished.connect(self._end_session)
        self.panel.workload_chosen.connect(self._workload_chosen)
        self.panel.rent_chosen.connect(self._rent_chosen)
        self.panel.count_unlinked_changed.connect(lambda on: self.push(SetCountUnlinked(on)))

        title = QLabel("Cluster")
        title.setObjectName("pageTitle")
        self.subtitle = QLabel("Draw a cluster from catalogue items; the estimates follow every edit.")
        self.subtitle.setObjectName("pageSubtitle")
        toolbar = self._toolbar()
        panel_scroll = QScrollArea()
        panel_scroll.setWidgetResizable(True)
        panel_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        panel_scroll.setFrameShape(QFrame.Shape.NoFrame)
        panel_scroll.setWidget(self.panel)
        side = QSplitter(Qt.Orientation.Vertical)
        side.addWidget(self.properties)
        side.addWidget(panel_scroll)
        side.setStretchFactor(1, 3)
        side.setSizes([250, 560])
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(self.palette)
        main.addWidget(self.canvas)
        main.addWidget(side)
        main.setStretchFactor(1, 1)
        main.setSizes([230, 760, 370])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 10)
        layout.setSpacing(6)
        head = QHBoxLayout()
        titles = QVBoxLayout()
        titles.setSpacing(0)
        titles.addWidget(title)
        titles.addWidget(self.subtitle)
        head.addLayout(titles, 1)
        layout.addLayout(head)
        layout.addWidget(toolbar)
        layout.addWidget(main, 1)
        self.setEnabled(False)

    # ------------------------------------------------------------------ set-up
    def _clean_changed(self, clean: bool) -> None:
        self.modified_changed.emit(not clean)

    def _toolbar(self) -> QToolBar:
        bar = QToolBar()
        bar.setIconSize(QSize(16, 16))
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)

        def act(text, slot, shortcut=None, tip=""):
            action = QAction(text, self)
            if shortcut is not None:
                action.setShortcut(shortcut)
                action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.setToolTip(tip or text)
            action.triggered.connect(lambda *_: slot())  # never pass `checked` on as an argument
            bar.addAction(action)
            self.addAction(action)
            return action

        self.undo_action = self.undo_stack.createUndoAction(self, "Undo")
        self.redo_action = self.undo_stack.createRedoAction(self, "Redo")
        bar.addAction(self.undo_action)
        bar.addAction(self.redo_action)
        bar.addSeparator()
        act("Delete", self.delete_selection, QKeySequence.StandardKey.Delete, "Delete the selected nodes and links")
        act("Copy", self.copy_selection, QKeySequence.StandardKey.Copy)
        act("Paste", self.paste, QKeySequence.StandardKey.Paste)
        bar.addSeparator()
        act("Fit", self.canvas.fit, QKeySequence("F"), "Fit the cluster in view")
        act("Zoom in", lambda: self.canvas.zoom(1.25), QKeySequence.StandardKey.ZoomIn)
        act("Zoom out", lambda: self.canvas.zoom(0.8), QKeySequence.StandardKey.ZoomOut)
        self.snap_action = act("Snap to grid", lambda: self.scene.set_snap(self.snap_action.isChecked()))
        self.snap_action.setCheckable(True)
        self.snap_action.setChecked(True)
        bar.addSeparator()
        act("Export PNG…", lambda: self.export_image(fmt="png"))
        act("Export SVG…", lambda: self.export_image(fmt="svg"))
        act("PDF report…", self.export_pdf)
        return bar

    def set_catalogue(self, catalogue) -> None:
        self.catalogue = catalogue
        self.analysis.reset(catalogue)
        self.palette.tree.set_items(palette_items(catalogue))
        self.properties.set_links(catalogue.items("interconnects"))
        self.panel.set_choices(catalogue.presets(), catalogue.items("cloud"))
        self.setEnabled(True)
        if not self.check_recovery() and not self.graph.nodes:
            self.load_example()
        self._sync_panel_choices()
        self.schedule()

    def load_example(self) -> None:
        """A first cluster to start from: one DGX H100 (nanochat's 8×H100 node)."""
        self.graph.clear()
        node = make_node(self.graph, self.catalogue, "system", "dgx-h100", 0, 0)
        self.graph.add_node(node)
        self.base = json.loads(json.dumps(DEFAULT_BASE))
        self.base["finance"] = {"rent": "aws-p5.48xlarge"}
        self.undo_stack.clear()
        QTimer.singleShot(0, self.canvas.fit)

    # ------------------------------------------------------------------ editing (all through commands)
    def push(self, command: Command) -> None:
        self.undo_stack.push(GraphCommand(command, self.graph))

    def add_item(self, kind: str, item: str, pos: QPointF | None = None) -> Node:
        if pos is None:
            centre = self.canvas.mapToScene(self.canvas.viewport().rect().center())
            pos = centre + QPointF(len(self.graph.nodes) % 5 * 24, len(self.graph.nodes) % 5 * 24)
        node = make_node(self.graph, self.catalogue, kind, item, pos.x() - NODE_W / 2, pos.y() - NODE_H / 2)
        node.x, node.y = round(node.x / 20) * 20, round(node.y / 20) * 20
        self.push(AddItems([node]))
        self.scene.select_ids([node.id])
        return self.graph.nodes[node.id]

    def connect_nodes(self, source_id: str, target_id: str, kind: str | None = None, count: int | None = None) -> Link | None:
        if any({lk.source, lk.target} == {source_id, target_id} for lk in self.graph.links.values()):
            self.status_message.emit("These nodes are already linked")
            return None
        kind = kind or self._default_link(source_id, target_id)
        link = Link(self.graph.new_id("l"), source_id, target_id, kind, count or self._default_ports(source_id))
        self.push(AddItems([], [link], "Connect"))
        return self.graph.links[link.id]

    def delete_selection(self) -> None:
        nodes, links = self.scene.selected_ids()
        if nodes or links:
            self.push(RemoveItems(nodes, links))

    def copy_selection(self) -> None:
        nodes, _links = self.scene.selected_ids()
        if not nodes:
            return
        chosen = set(nodes)
        data = {"nodes": [self.graph.nodes[i].to_dict() for i in nodes],
                "links": [lk.to_dict() for lk in self.graph.links.values() if lk.source in chosen and lk.target in chosen]}
        mime = QMimeData()
        mime.setData(CLIPBOARD_MIME, json.dumps(data).encode())
        mime.setText(json.dumps(data, indent=1))
        set_clipboard(mime)
        self.status_message.emit(f"Copied {len(nodes)} node(s)")

    def paste(self) -> None:
        mime = QGuiApplication.clipboard().mimeData()
        if mime is None or not mime.hasFormat(CLIPBOARD_MIME):
            return
        try:
            data = json.loads(bytes(mime.data(CLIPBOARD_MIME)).decode())
            scratch = ClusterGraph()
            scratch.load_dict(data)
        except (ValueError, UnicodeDecodeError) as exc:
            self.status_message.emit(f"Nothing to paste: {exc}")
            return
        ids = {}
        nodes = []
        for node in scratch.nodes.values():
            ids[node.id] = self.graph.new_id("n")
            nodes.append(node.copy(id=ids[node.id], x=node.x + 40, y=node.y + 40))
        links = []
        for link in scratch.links.values():
            links.append(Link(self.graph.new_id("l"), ids[link.source], ids[link.target], link.kind, link.count))
        self.push(AddItems(nodes, links, f"Paste {len(nodes)} node(s)"))
        self.scene.select_ids([n.id for n in nodes])

    def set_node(self, node_id: str, values: dict, ongoing: bool = False) -> None:
        node = self.graph.nodes.get(node_id)
        if node is None or all(getattr(node, k) == v for k, v in values.items()):
            return
        self.push(SetNode(node_id, values, session=self._session if ongoing else None, label=node.label))

    def _node_edited(self, node_id: str, values: dict, ongoing: bool) -> None:
        self.set_node(node_id, values, ongoing)

    def _link_edited(self, link_id: str, values: dict, ongoing: bool) -> None:
        link = self.graph.links.get(link_id)
        if link is None or all(getattr(link, k) == v for k, v in values.items()):
            return
        self.push(SetLink(link_id, values, session=self._session if ongoing else None))

    def _end_session(self) -> None:
        self._session += 1

    # ------------------------------------------------------------------ estimates
    def _graph_changed(self, *_args) -> None:
        if self.graph.in_batch:
            return  # once, when the whole edit is done (a pasted fat tree is 70,000 events)
        self.schedule()
        self._refresh_properties()

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
        from gpudesk.core.benchmarks.calibration import active_calibrations
        from gpudesk.core.resolve import ResolveError, resolve_option
        from gpudesk.core.settings import load_settings

        job.problems = self.analysis.problems()
        job.unlinked = self.analysis.unlinked()
        left_out = {n.id for n in job.unlinked}
        job.machines = [n for n in self.graph.nodes.values() if n.kind != "switch" and n.id not in left_out]
        if job.machines:
            try:
                scenario = self.current_scenario(with_canvas=False)
                job.option = Option(scenario.name or "cluster", scenario.cluster)
                settings = load_settings()
                job.resolved = resolve_option(scenario, job.option, self.catalogue, "cluster", settings,
                                              active_calibrations(self.catalogue, settings))
                rated: dict[str, list] = {}
                for g in job.resolved.inputs.groups:
                    if g.system_power_w and g.cloud is None:
                        entry = rated.setdefault(g.label or g.device.name, [0, g.system_power_w])
                        entry[0] += g.nodes
                job.context = {"pue": job.resolved.inputs.site.pue,
                               "rated": [(label, n, watts) for label, (n, watts) in rated.items()]}
            except (ScenarioError, ResolveError, ValueError) as exc:
                job.error = f"Cannot estimate: {exc}"
        return job

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

    # ------------------------------------------------------------------ selection and captions
    def _describe(self, node: Node) -> tuple[str, str]:
        if self.catalogue is None:
            return node.label or node.item, ""
        return node.label or node.item, node_caption(node, self.catalogue)

    def _link_info(self, link: Link) -> tuple[str, str]:
        row = self.catalogue.get("interconnects", link.kind) if self.catalogue else None
        name = (row or {}).get("name", link.kind)
        short = name.split(" (")[0]
        return (row or {}).get("family", "ethernet"), (f"{link.count} × {short}" if link.count > 1 else short)

    def _selection_changed(self) -> None:
        self._refresh_properties()

    def _refresh_properties(self) -> None:
        if self.catalogue is None:
            return
        try:
            nodes, links = self.scene.selected_ids()
        except RuntimeError:  # the scene is being torn down
            return
        if len(nodes) == 1 and not links and nodes[0] in self.graph.nodes:
            node = self.graph.nodes[nodes[0]]
            self.properties.show_node(node, node_caption(node, self.catalogue))
        elif len(links) == 1 and not nodes and links[0] in self.graph.links:
            link = self.graph.links[links[0]]
            a, b = self.graph.nodes[link.source], self.graph.nodes[link.target]
            self.properties.show_link(link, f"{a.label} ↔ {b.label}")
        else:
            self.properties.show_nothing()

    def _default_link(self, source_id: str, target_id: str) -> str:
        a, b = self.graph.nodes[source_id], self.graph.nodes[target_id]
        for node in (a, b):
            if node.kind == "switch":
                return node.item
        nics = [n.nic for n in (a, b) if n.nic]
        if nics:
            rates = {k: (self.catalogue.get("interconnects", k) or {}).get("unidirectional_gbs") or 0 for k in nics}
            return min(nics, key=lambda k: rates[k])
        return "eth-100g"

    def _default_ports(self, node_id: str) -> int:
        node = self.graph.nodes[node_id]
        return node.nic_count or 1

    def closeEvent(self, event) -> None:
        self.autosave_timer.stop()
        super().closeEvent(event)


__all__ = ["ClusterView", "GraphCommand", "NodeItem", "LinkItem"]
