"""The canvas scene: follows the cluster graph's events (node → item map, link → row of the link
layer), and reports the user's gestures — a finished drag, a link drawn between two nodes — as
signals for commands."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QTimer, Signal
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from gpudesk.core.cluster.model import ClusterGraph, Link, Node
from gpudesk.ui.canvas.gestures import SceneGestures
from gpudesk.ui.canvas.items import GRID, NODE_H, NODE_W, Ink, NodeItem
from gpudesk.ui.canvas.links import LinkItem, LinkLayerItem
from gpudesk.ui.canvas.overview import OverviewItem


class ClusterScene(SceneGestures, QGraphicsScene):
    nodes_moved = Signal(object)  # {node id: ((old x, old y), (new x, new y))}
    link_requested = Signal(str, str)  # source node id, target node id

    def __init__(self, graph: ClusterGraph, describe, parent=None):
        """`describe(node)` -> (title, caption); `link_info(link)` -> (family, label) is set by the view."""
        super().__init__(parent)
        self.graph = graph
        self.describe = describe
        self.link_info = lambda link: ("ethernet", link.kind)
        self.node_items: dict[str, NodeItem] = {}
        self.link_items: dict[str, LinkItem] = {}  # handles on the link layer's rows
        self._pending = None
        self._pending_source: str | None = None
        self._press_positions: dict[str, tuple[float, float]] = {}
        self.snap = True
        self.links = LinkLayerItem()
        self.overview = OverviewItem(self)
        self._refresh_pending = False
        # a batch edit (see ClusterGraph.batch) queues the items it adds and makes them at its end
        self._queued_nodes: dict[str, Node] = {}
        self._queued_links: dict[str, Link] = {}
        self._links_removed = False  # links went during a batch: the layer settles at its end
        self._selected_link_removed = False
        self._problems: dict[str, str] = {}  # what set_problems last marked
        graph.subscribe_batch(self._batch)
        self.selectionChanged.connect(self.overview.invalidate)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self.setSceneRect(QRectF(-2000, -2000, 6000, 4000))
        for event, handler in (("node_added", self._node_added), ("node_removed", self._node_removed),
                               ("node_changed", self._node_changed), ("link_added", self._link_added),
                               ("link_removed", self._link_removed), ("link_changed", self._link_changed),
                               ("reset", self.rebuild), ("items_added", self._items_added),
                               ("items_removed", self._items_removed)):
            graph.subscribe(event, handler)
        self.rebuild()

    @property
    def fast(self) -> bool:
        """Links without antialiasing while the user pans or zooms a large cluster."""
        return self.links.fast

    @fast.setter
    def fast(self, on: bool) -> None:
        self.links.fast = on

    # ------------------------------------------------------------------ following the graph
    def rebuild(self) -> None:
        overview_on = self.overview.isVisible()
        for layer in (self.overview, self.links):
            if layer.scene() is self:
                self.removeItem(layer)
        self.clear()
        self.links.clear()
        self.addItem(self.overview)
        self.addItem(self.links)
        self.overview.setVisible(False)
        self.links.setVisible(True)
        self.overview.forget()
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
        self.links.setVisible(not on)
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
        if begins:
            return
        if self._queued_nodes or self._queued_links:
            self._add_queued()
        if self._links_removed:
            self._links_settle()

    def _add_queued(self) -> None:
        """The items a batch edit added, made in one pass: node items, then every link as a row of
        the link layer in one append; the scene rect grows once and the overview is refreshed once."""
        nodes, links = list(self._queued_nodes.values()), list(self._queued_links.values())
        self._queued_nodes, self._queued_links = {}, {}
        hidden = self.overview.isVisible()
        self.links.add_nodes([self._make_node_item(node, hidden) for node in nodes])
        labels: dict[tuple[str, int], tuple[str, str]] = {}  # a fat tree repeats a few kinds of link
        records = []
        for link in links:
            key = (link.kind, link.count)
            info = labels.get(key)
            if info is None:
                info = labels[key] = self.link_info(link)
            record = self._make_link_record(link, info)
            if record is not None:
                records.append(record)
        self.links.add_links(records)
        if nodes:
            xs = [n.x for n in nodes]
            ys = [n.y for n in nodes]
            self._grow_rect(rect=QRectF(min(xs), min(ys), max(xs) - min(xs) + NODE_W, max(ys) - min(ys) + NODE_H))
        if nodes or records:
            self._structure_changed()
        self.overview.invalidate()

    def _items_added(self, nodes: list[Node], links: list[Link]) -> None:
        """Many items in one step (see ClusterGraph.add_items): made together, as a batch edit's."""
        self._queued_nodes.update((node.id, node) for node in nodes)
        self._queued_links.update((link.id, link) for link in links)
        if not self.graph.in_batch:
            self._add_queued()

    def _items_removed(self, nodes: list[Node], links: list[Link]) -> None:
        self._drop_links(links)
        for node in nodes:
            self._node_removed(node)
        if self._links_removed and not self.graph.in_batch:
            self._links_settle()

    def _node_added(self, node: Node) -> None:
        if self.graph.in_batch:
            self._queued_nodes[node.id] = node
            return
        item = self._make_node_item(node, self.overview.isVisible())
        self.links.add_nodes([item])
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
            self.links.remove_node(node.id)
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

    def node_moved(self, item: NodeItem) -> None:
        """A node item moved (dragged, or following a command): its links follow."""
        self.links.node_moved(item)
        if self.overview.isVisible():
            self.overview.node_moved(item)

    def _link_added(self, link: Link) -> None:
        if self.graph.in_batch:
            self._queued_links[link.id] = link
            return
        record = self._make_link_record(link, self.link_info(link))
        if record is not None:
            self.links.add_links([record])
        self._structure_changed()

    def _make_link_record(self, link: Link, info: tuple[str, str]) -> LinkItem | None:
        source, target = self.node_items.get(link.source), self.node_items.get(link.target)
        if source is None or target is None:
            return None
        record = LinkItem(link.id, source, target, self.links)
        record.family, record.label = info
        self.link_items[link.id] = record
        return record

    def _link_removed(self, link: Link) -> None:
        self._drop_links([link])
        if self._links_removed and not self.graph.in_batch:
            self._links_settle()

    def _drop_links(self, links: list[Link]) -> None:
        """The links' rows go, in one pass and one repaint; the layer settles once, after the whole edit."""
        records = []
        for link in links:
            if self._queued_links.pop(link.id, None) is not None:
                continue
            record = self.link_items.pop(link.id, None)
            if record is not None:
                records.append(record)
        if records:
            self._selected_link_removed |= self.links.remove_links(records)
            self._links_removed = True

    def _links_settle(self) -> None:
        """After links went: the layer compacts and fits its extent, once per edit."""
        self._links_removed = False
        self.links.finish_edit()
        self._structure_changed()
        if self._selected_link_removed:
            self._selected_link_removed = False
            self.links_selection_changed()

    def _link_changed(self, link: Link, changed: tuple) -> None:
        record = self.link_items.get(link.id)
        if record is not None:
            family, record.label = self.link_info(link)
            self.links.set_family(record, family)
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
            node = self.node_items.get(item_id)
            if node is not None:
                node.set_problem(text)
                changed = True
            elif item_id in self.link_items:
                self.links.set_problem(self.link_items[item_id], text)
                changed = True
        self._problems = dict(problems)
        if changed:
            self.overview.invalidate()

    def problem_nodes(self) -> list[NodeItem]:
        return [self.node_items[i] for i in self._problems if i in self.node_items]

    # ------------------------------------------------------------------ selection (nodes: Qt's; links: the layer's)
    def selected_ids(self) -> tuple[list[str], list[str]]:
        nodes = [i.node_id for i in self.selectedItems() if isinstance(i, NodeItem)]
        links = [record.link_id for record in self.links.selected_records()]
        return nodes, links

    def select_ids(self, node_ids=(), link_ids=()) -> None:
        self.clearSelection()
        for node_id in node_ids:
            if node_id in self.node_items:
                self.node_items[node_id].setSelected(True)
        records = [self.link_items[i] for i in link_ids if i in self.link_items]
        if self.links.select(records):
            self.links_selection_changed()

    # ------------------------------------------------------------------ drawing
    def recolour(self) -> None:
        for item in self.node_items.values():
            item.update()  # node items keep a cached picture
        self.overview.forget()
        self.update()

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802 - Qt override
        if Ink.refresh():  # the palette changed (light to dark): items drawn in the old colours go
            self.recolour()
        painter.fillRect(rect, Ink.get("canvas_fill"))
        if not self.views() or self.views()[0].transform().m11() >= 0.35:  # far out a grid of dots is noise
            _draw_grid(painter, rect)


def _draw_grid(painter: QPainter, rect: QRectF) -> None:
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
