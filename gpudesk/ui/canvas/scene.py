"""The canvas scene: follows the cluster graph's events (node → item map), and reports the user's
gestures — a finished drag, a link drawn between two nodes — as signals for commands."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from gpudesk.core.cluster.model import ClusterGraph, Link, Node
from gpudesk.ui.canvas.items import GRID, NODE_H, NODE_W, Ink, LinkItem, NodeItem, OverviewItem, PendingLinkItem


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
        # a batch edit (see ClusterGraph.batch) queues the items it adds and makes them at its end
        self._queued_nodes: dict[str, Node] = {}
        self._queued_links: dict[str, Link] = {}
        self._problems: dict[str, str] = {}  # what set_problems last marked
        graph.subscribe_batch(self._batch)
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
        self._problems = {}
        self._pending = None
        self._queued_nodes = dict(self.graph.nodes)
        self._queued_links = dict(self.graph.links)
        self._add_queued()
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
        """Nodes or links came or went: the overview forgets its arrays at once (it must never draw
        items that are gone) and recomputes its extent once, after the whole edit."""
        self.overview.forget()
        if self.overview.isVisible() and not self._refresh_pending:
            self._refresh_pending = True
            QTimer.singleShot(0, self._refresh_overview)

    def _refresh_overview(self) -> None:
        self._refresh_pending = False
        if self.overview.isVisible():
            self.overview.refresh()

    def _batch(self, begins: bool) -> None:
        if not begins and (self._queued_nodes or self._queued_links):
            self._add_queued()

    def _add_queued(self) -> None:
        """The items a batch edit added, made in one pass: the scene rect grows once and the
        overview is refreshed once. (Switching the BSP index off while they go in and on again
        afterwards was tried: Qt 6.8 then spends seconds in every repaint of 70,000 items.)"""
        nodes, links = list(self._queued_nodes.values()), list(self._queued_links.values())
        self._queued_nodes, self._queued_links = {}, {}
        hidden = self.overview.isVisible()
        for node in nodes:
            self._make_node_item(node, hidden)
        labels: dict[tuple[str, int], tuple[str, str]] = {}  # a fat tree repeats a few kinds of link
        for link in links:
            key = (link.kind, link.count)
            info = labels.get(key)
            if info is None:
                info = labels[key] = self.link_info(link)
            self._make_link_item(link, info, hidden)
        if nodes:
            xs = [n.x for n in nodes]
            ys = [n.y for n in nodes]
            self._grow_rect(rect=QRectF(min(xs), min(ys), max(xs) - min(xs) + NODE_W, max(ys) - min(ys) + NODE_H))
            self._structure_changed()
        self.overview.invalidate()

    def _node_added(self, node: Node) -> None:
        if self.graph.in_batch:
            self._queued_nodes[node.id] = node
            return
        item = self._make_node_item(node, self.overview.isVisible())
        self._grow_rect(item.sceneBoundingRect())
        self._structure_changed()

    def _make_node_item(self, node: Node, hidden: bool) -> NodeItem:
        item = NodeItem(node.id, QPointF(node.x, node.y), hidden)
        item.snap = self.snap
        title, caption = self.describe(node)
        item.set_content(node.kind, title, caption, node.count)
        self.addItem(item)
        self.node_items[node.id] = item
        return item

    def _node_removed(self, node: Node) -> None:
        if self._queued_nodes.pop(node.id, None) is not None:
            return
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
        if self.graph.in_batch:
            self._queued_links[link.id] = link
            return
        self._make_link_item(link, self.link_info(link), self.overview.isVisible())
        self._structure_changed()

    def _make_link_item(self, link: Link, info: tuple[str, str], hidden: bool) -> LinkItem | None:
        source, target = self.node_items.get(link.source), self.node_items.get(link.target)
        if source is None or target is None:
            return None
        item = LinkItem(link.id, source, target, hidden)
        item.set_content(*info)
        self.addItem(item)
        self.link_items[link.id] = item
        return item

    def _link_removed(self, link: Link) -> None:
        if self._queued_links.pop(link.id, None) is not None:
            return
        item = self.link_items.pop(link.id, None)
        if item is not None:
            item.detach()
            self.removeItem(item)
            self._structure_changed()

    def _link_changed(self, link: Link, changed: tuple) -> None:
        item = self.link_items.get(link.id)
        if item is not None:
            family, label = self.link_info(link)
            item.set_content(family, label)
            self._structure_changed()

    def _grow_rect(self, rect: QRectF | None = None) -> None:
        """Room around the drawing to pan into; grows only (a shrinking scene would jump the view)."""
        rect = self.itemsBoundingRect() if rect is None else rect
        grown = self.sceneRect().united(rect.adjusted(-1500, -1500, 1500, 1500))
        if grown != self.sceneRect():
            self.setSceneRect(grown)

    def set_snap(self, on: bool) -> None:
        self.snap = on
        for item in self.node_items.values():
            item.snap = on

    def set_problems(self, problems: dict[str, str]) -> None:
        """Mark the items with problems; only those whose mark changed are touched (an edit of a
        10,000-node cluster must not visit every item)."""
        changed = False
        for item_id in self._problems.keys() | problems.keys():
            text = problems.get(item_id, "")
            if self._problems.get(item_id, "") == text:
                continue
            item = self.node_items.get(item_id) or self.link_items.get(item_id)
            if item is not None:
                item.set_problem(text)
                changed = True
        self._problems = dict(problems)
        if changed:
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

    def _recolour(self) -> None:
        for item in self.node_items.values():
            item.update()  # node items keep a cached picture
        self.overview.forget()
        self.update()

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        if Ink.refresh():  # the palette changed (light to dark): items drawn in the old colours go
            self._recolour()
        painter.fillRect(rect, Ink.get("canvas_fill"))
        if self.views() and self.views()[0].transform().m11() < 0.35:
            return  # a grid of dots is noise when zoomed far out
        painter.setPen(QPen(Ink.get("canvas_grid"), 1.4))
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
