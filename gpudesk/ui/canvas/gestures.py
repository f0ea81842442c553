"""What the user does with the mouse on the cluster canvas: drag nodes (one move reported on
release), draw a link from a node's port, click or rubber-band links (which the link layer, not
Qt, hit-tests), and hover a link for its tooltip. A mixin of ClusterScene."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtWidgets import QToolTip

from gpudesk.ui.canvas.items import NodeItem, PendingLinkItem

HIT_PX = 5.0  # a click this close to a link (on screen) picks it


class SceneGestures:
    """Mouse gestures of ClusterScene; it provides links, node_items, and the signals."""

    def _hit_tolerance(self) -> float:
        views = self.views()
        scale = views[0].transform().m11() if views else 1.0
        return HIT_PX / max(scale, 1e-6)

    def link_at(self, pos: QPointF):
        """The link under `pos` (none where a node is), or None."""
        if self._node_at(pos) is not None:
            return None
        return self.links.link_at(pos, self._hit_tolerance())

    def clearSelection(self) -> None:  # noqa: N802 - Qt's name; Qt's own calls reach only the nodes
        links_changed = self.links.clear_selection()
        super().clearSelection()
        if links_changed:
            self.links_selection_changed()

    def links_selection_changed(self) -> None:
        """The links' selection changed: tell whoever listens to the scene's selectionChanged."""
        self.selectionChanged.emit()

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.button() == Qt.MouseButton.LeftButton:
            pos = event.scenePos()
            item = self._node_at(pos)
            if item is not None and item.port_rect().contains(item.mapFromScene(pos)):
                self.start_link(item.node_id, pos)
                event.accept()
                return
            toggle = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            link = None if item is not None else self.links.link_at(pos, self._hit_tolerance())
            if link is not None:
                self._click_link(link, toggle)
                event.accept()
                return
            if not toggle and (item is None or not item.isSelected()) and self.links.clear_selection():
                self.links_selection_changed()  # Qt clears the nodes' selection itself
            self._press_positions = {i.node_id: (i.x(), i.y()) for i in self.selectedItems()
                                     if isinstance(i, NodeItem)}
            if item is not None:
                self._press_positions[item.node_id] = (item.x(), item.y())
        super().mousePressEvent(event)

    def _click_link(self, link, toggle: bool) -> None:
        """A click on a link selects it alone; with Ctrl it toggles it in the selection."""
        if toggle:
            changed = self.links.select([link], not link.isSelected())
        else:
            changed = self.links.select_rows(np.array([link.row]))
            if self.selectedItems():
                super().clearSelection()  # the nodes (Qt emits selectionChanged)
        if changed:
            self.links_selection_changed()

    def band_changed(self, viewport_rect, from_scene: QPointF, to_scene: QPointF) -> None:
        """The view's rubber band moved: the links it crosses are selected (Qt selects the nodes)."""
        if viewport_rect.isNull():
            return  # the band was released
        rows = self.links.rows_in(QRectF(from_scene, to_scene).normalized())
        if self.links.select_rows(rows):
            self.links_selection_changed()

    def helpEvent(self, event) -> None:  # noqa: N802 - Qt override
        link = self.link_at(event.scenePos())
        if link is not None and link.toolTip():
            QToolTip.showText(event.screenPos(), link.toolTip())
            event.accept()
            return
        super().helpEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self._pending is not None:
            self._pending.set_end(event.scenePos())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt override
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
