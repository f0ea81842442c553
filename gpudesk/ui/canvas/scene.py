"""The canvas scene: follows the cluster graph's events (node → item map), and reports the user's
gestures — a finished drag, a link drawn between two nodes — as signals for commands."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from gpudesk.core.cluster.model import ClusterGraph, Link, Node
from gpudesk.ui.canvas.items import GRID, LinkItem, NodeItem, OverviewItem, PendingLinkItem


class ClusterScene(QGraphicsScene):
    nodes_moved = Signal(object)  # {node id: ((old x, old y), (new x, new y))}
    link_requested = Signal(str, str)  # source node id, target node id

    def __init__(self, graph: ClusterGraph, describe, parent=None):
        """`describe(node)` -> (title, caption); `link_label(link)` is set by the view."""
        super().__init__(parent)
        self.graph = graph
        self.describe = describe
        self.link_info = lambda link: ("ethernet", link.kind)
        self.node_items: dict[str, NodeItem] = {}
        self.link_items: dict[str, LinkItem] = {}
        self._pending: PendingLinkItem | None = None
        self._pending_source: str | None = None
        self._press_positions: dict[str, tuple[float, float]] = {}
        self.snap = True
        self.fast = False  # links without antialiasing while the user pans or zooms a large cluster
        self.overview = OverviewItem(self)
        self.addItem(self.overview)
        self._refresh_pending = False
        self.selectionChanged.connect(self.overview.invalidate)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self.setSceneRect(QRectF(-2000, -2000, 6000, 4000))
        for event, handler in (("node_added", self._node_added), ("node_removed", self._node_removed),
                               ("node_changed", self._node_changed), ("link_added", self._link_added),
                               ("link_removed", self._link_removed), ("link_changed", self._link_changed),
                               ("reset", self.rebuild)):
            graph.subscribe(event, handler)
        self.rebuild()

    # ------------------------------------------------------------------ following the graph
    def rebuild(self) -> None:
        overview_on = self.overview.isVisible()
        self.removeItem(self.overview)
        self.clear()
        self.addItem(self.overview)
        self.overview.setVisible(False)
        self.node_items.clear()
        self.link_items.clear()
        self._pending = None
        for node in self.graph.nodes.values():
            self._node_added(node)
        for link in self.graph.links.values():
            self._link_added(link)
        self._grow_rect()
        self.set_overview(overview_on)

    def set_overview(self, on: bool) -> None:
        """Far out, draw the cluster as one overview (boxes and lines) instead of item by item."""
        if on == self.overview.isVisible():
            return
        flag = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
        for item in self.node_items.values():
            item.setFlag(flag, on)
        for item in self.link_items.values():
            item.setFlag(flag, on)
        if on:
            self.overview.refresh()
        self.overview.setVisible(on)

    def _structure_changed(self) -> None:
        """Nodes came or went: recompute the overview's extent once, after the whole edit."""
        if self.overview.isVisible() and not self._refresh_pending:
            self._refresh_pending = True
            QTimer.singleShot(0, self._refresh_overview)

    def _refresh_overview(self) -> None:
        self._refresh_pending = False
        if self.overview.isVisible():
            self.overview.refresh()

    def _node_added(self, node: Node) -> None:
        item = NodeItem(node.id)
        if self.overview.isVisible():
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        item.snap = self.snap
        item.setPos(node.x, node.y)
        title, caption = self.describe(node)
        item.set_content(node.kind, title, caption, node.count)
        self.addItem(item)
        self.node_items[node.id] = item
        self._grow_rect(item)
        self._structure_changed()

    def _node_removed(self, node: Node) -> None:
        item = self.node_items.pop(node.id, None)
        if item is not None:
            self.removeItem(item)
            self._structure_changed()

    def _node_changed(self, node: Node, changed: tuple) -> None:
        item = self.node_items.get(node.id)
        if item is None:
            return
        if "x" in changed or "y" in changed:
            if (item.x(), item.y()) != (node.x, node.y):
                item.setPos(node.x, node.y)
        title, caption = self.describe(node)
        item.set_content(node.kind, title, caption, node.count)
        self.overview.invalidate()

    def _link_added(self, link: Link) -> None:
        source, target = self.node_items.get(link.source), self.node_items.get(link.target)
        if source is None or target is None:
            return
        item = LinkItem(link.id, source, target)
        if self.overview.isVisible():
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        family, label = self.link_info(link)
        item.set_content(family, label)
        self.addItem(item)
        self.link_items[link.id] = item
        self.overview.invalidate()

    def _link_removed(self, link: Link) -> None:
        item = self.link_items.pop(link.id, None)
        if item is not None:
            item.detach()
            self.removeItem(item)
            self.overview.invalidate()

    def _link_changed(self, link: Link, changed: tuple) -> None:
        item = self.link_items.get(link.id)
        if item is not None:
            family, label = self.link_info(link)
            item.set_content(family, label)
            self.overview.invalidate()

    def _grow_rect(self, item=None) -> None:
        rect = self.itemsBoundingRect() if item is None else self.sceneRect().united(item.sceneBoundingRect())
        self.setSceneRect(self.sceneRect().united(rect.adjusted(-1500, -1500, 1500, 1500)))

    def set_snap(self, on: bool) -> None:
        self.snap = on
        for item in self.node_items.values():
            item.snap = on

    def set_problems(self, problems: dict[str, str]) -> None:
        for node_id, item in self.node_items.items():
            item.set_problem(problems.get(node_id, ""))
        for link_id, item in self.link_items.items():
            item.set_problem(problems.get(link_id, ""))
        self.overview.invalidate()

    def selected_ids(self) -> tuple[list[str], list[str]]:
        nodes = [i.node_id for i in self.selectedItems() if isinstance(i, NodeItem)]
        links = [i.link_id for i in self.selectedItems() if isinstance(i, LinkItem)]
        return nodes, links

    def select_ids(self, node_ids=(), link_ids=()) -> None:
        self.clearSelection()
        for node_id in node_ids:
            if node_id in self.node_items:
                self.node_items[node_id].setSelected(True)
        for link_id in link_ids:
            if link_id in self.link_items:
                self.link_items[link_id].setSelected(True)

    # ------------------------------------------------------------------ gestures
    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            item = self._node_at(event.scenePos())
            if item is not None and item.port_rect().contains(item.mapFromScene(event.scenePos())):
                self.start_link(item.node_id, event.scenePos())
                event.accept()
                return
            self._press_positions = {i.node_id: (i.x(), i.y()) for i in self.node_items.values()
                                     if i.isSelected() or i is item}
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._pending is not None:
            self._pending.set_end(event.scenePos())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._pending is not None:
            self.finish_link(event.scenePos())
            event.accept()
            return
        super().mouseReleaseEvent(event)
        self._report_moves()

    def start_link(self, source_id: str, at: QPointF) -> None:
        self._pending_source = source_id
        self._pending = PendingLinkItem(self.node_items[source_id].centre())
        self._pending.set_end(at)
        self.addItem(self._pending)

    def finish_link(self, at: QPointF) -> None:
        source = self._pending_source
        self.removeItem(self._pending)
        self._pending = None
        self._pending_source = None
        target = self._node_at(at)
        if target is not None and source is not None and target.node_id != source:
            self.link_requested.emit(source, target.node_id)

    def _report_moves(self) -> None:
        moves = {}
        for node_id, old in self._press_positions.items():
            item = self.node_items.get(node_id)
            if item is not None and (item.x(), item.y()) != old:
                moves[node_id] = (old, (item.x(), item.y()))
        self._press_positions = {}
        if moves:
            self.nodes_moved.emit(moves)

    def _node_at(self, pos: QPointF) -> NodeItem | None:
        for item in self.items(pos):
            if isinstance(item, NodeItem):
                return item
        return None

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        painter.fillRect(rect, QColor("#f7f8fa"))
        if self.views() and self.views()[0].transform().m11() < 0.35:
            return  # a grid of dots is noise when zoomed far out
        painter.setPen(QPen(QColor("#d9dde3"), 1.4))
        step = GRID * 2
        left = int(rect.left() // step) * step
        top = int(rect.top() // step) * step
        x = left
        points = []
        while x < rect.right():
            y = top
            while y < rect.bottom():
                points.append(QPointF(x, y))
                y += step
            x += step
        painter.drawPoints(points)
