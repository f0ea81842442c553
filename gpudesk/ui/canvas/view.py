"""The build-your-cluster view: a palette, the canvas (QGraphicsView over the graph's scene), the
properties of the selection and the live estimates. Every edit is a command on an undo stack; the
window's modified flag is the stack's clean state; unsaved work is autosaved and recovered.

ClusterView is put together from mixins, one module each: the widgets and toolbar (layout), the
edits (editing), the selection and captions (selection), the live estimates (estimates) and the
file actions (files)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QUndoStack
from PySide6.QtWidgets import QGraphicsView, QWidget

from gpudesk.core.cluster.analysis import GraphAnalysis
from gpudesk.core.cluster.convert import make_node, palette_items
from gpudesk.core.cluster.model import ClusterGraph
from gpudesk.ui.canvas.editing import CLIPBOARD_MIME, EditActions, GraphCommand  # noqa: F401 - re-exported
from gpudesk.ui.canvas.estimates import EstimateScheduling, _compute_estimate, _EstimateJob  # noqa: F401 - re-exported
from gpudesk.ui.canvas.files import AUTOSAVE_NAME, MAX_EXPORT_PX, FileActions  # noqa: F401 - re-exported
from gpudesk.ui.canvas.items import LOD_DETAIL, NodeItem
from gpudesk.ui.canvas.layout import ViewLayout
from gpudesk.ui.canvas.links import LinkItem
from gpudesk.ui.canvas.panels import MIME, EstimatesPanel, Palette, PropertiesPanel
from gpudesk.ui.canvas.scene import ClusterScene
from gpudesk.ui.canvas.selection import SelectionWiring

log = logging.getLogger(__name__)

FRAME_MS = 16.7  # one frame at 60 Hz
SETTLE_MS = 180  # full quality again this long after the last pan or zoom
AUTOSAVE_MS = 15000
DEFAULT_BASE = {"gpudesk_scenario": 1, "name": "My cluster", "workload": {"preset": "nanochat-d20", "kind": "train"},
                "site": {}, "finance": {}}


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
        # links are rows of one layer item, not Qt items: the scene selects those the band crosses
        self.rubberBandChanged.connect(scene.band_changed)
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
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._interacting()  # dragging nodes redraws their links on every move
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


class ClusterView(ViewLayout, EditActions, SelectionWiring, EstimateScheduling, FileActions, QWidget):
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
        self._setup_estimates()
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(AUTOSAVE_MS)
        self.autosave_timer.timeout.connect(self.autosave)
        self.autosave_timer.start()
        self._connect_signals()
        self._build_layout()
        self.setEnabled(False)

    def _clean_changed(self, clean: bool) -> None:
        self.modified_changed.emit(not clean)

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

    def closeEvent(self, event) -> None:
        self.autosave_timer.stop()
        super().closeEvent(event)


__all__ = ["ClusterView", "GraphCommand", "NodeItem", "LinkItem"]
