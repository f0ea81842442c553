"""The canvas's links, all drawn by one graphics item. A 10,000-machine fat tree has 61,200 links;
one QGraphicsItem each made adding it take seconds and every repaint walk them all. Here each link
is a row of numpy arrays (its ends, its kind, whether it has a problem or is selected): a repaint
cuts the rows to the exposed rectangle and draws each kind with one drawLines call, and a click
finds its link by distance over the rows. The graph stays the single truth: rows follow its events
through the scene."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from gpudesk.ui.canvas import segments as seg
from gpudesk.ui.canvas.items import FAMILY_STYLES, NODE_H, NODE_W, OTHER_LINK, Ink, label_width, link_font

LABELLED_LINKS = 150  # above this many links, only selected links show their label
FAMILIES = (*FAMILY_STYLES, "other")
_FAMILY_INDEX = {family: i for i, family in enumerate(FAMILIES)}
MARGIN = 60.0  # room around the links' ends for a label and a thick pen


class LinkItem:
    """One link as the layer draws it: not a QGraphicsItem, a handle on its row."""

    __slots__ = ("link_id", "source", "target", "family", "label", "problem", "row", "_layer")

    def __init__(self, link_id: str, source, target, layer: LinkLayerItem):
        self.link_id = link_id
        self.source, self.target = source, target  # NodeItems
        self.family, self.label, self.problem = "ethernet", "", ""
        self.row = -1
        self._layer = layer

    @property
    def line(self) -> QLineF:
        return QLineF(self.source.centre(), self.target.centre())

    def toolTip(self) -> str:  # noqa: N802 - the name QGraphicsItem gives it
        return self.problem or self.label

    def isSelected(self) -> bool:  # noqa: N802
        return self.row >= 0 and bool(self._layer.selected[self.row])

    def setSelected(self, on: bool) -> None:  # noqa: N802
        self._layer.select([self], on)


class LinkLayerItem(QGraphicsItem):
    """Every link of the scene. Rows are appended as links come and marked dead as they go;
    dead rows are dropped in one pass (`compact`) when they pile up or before the overview reads
    the arrays. `segments` holds each row's line (centre to centre) and is updated row by row when
    a node moves."""

    def __init__(self):
        super().__init__()
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # the scene hit-tests links itself
        self.setZValue(-1)  # under the nodes (z 0)
        self.fast = False  # no antialiasing while the user pans or zooms a large cluster
        self._pens: dict[tuple, QPen] = {}
        self._pens_generation = -1
        self.clear()

    # -------------------------------------------------------------- rows
    def clear(self) -> None:
        self.prepareGeometryChange()
        self._rect = QRectF()
        self.node_row: dict[str, int] = {}
        self.node_ids: list[str | None] = []
        self.xy = np.zeros((0, 2))  # nodes' top-left corners, by node row
        self.records: list[LinkItem | None] = []
        self.ends = np.zeros((0, 2), dtype=np.int64)  # node rows
        self.segments = np.zeros((0, 4))
        self.family = np.zeros(0, dtype=np.int8)
        self.problem = np.zeros(0, dtype=bool)
        self.selected = np.zeros(0, dtype=bool)
        self.alive = np.zeros(0, dtype=bool)
        self._node_links: dict[str, set[LinkItem]] = {}
        self.dead = 0

    @property
    def count(self) -> int:
        return len(self.records) - self.dead

    def add_nodes(self, items) -> None:
        if not items:
            return
        start = len(self.node_ids)
        for i, item in enumerate(items):
            self.node_row[item.node_id] = start + i
            self.node_ids.append(item.node_id)
            self._node_links.setdefault(item.node_id, set())
        xy = np.array([(item.x(), item.y()) for item in items], dtype=float).reshape(-1, 2)
        self.xy = np.concatenate([self.xy, xy])

    def remove_node(self, node_id: str) -> None:
        row = self.node_row.pop(node_id, None)
        if row is not None:
            self.node_ids[row] = None
            self._node_links.pop(node_id, None)

    def add_links(self, records: list[LinkItem]) -> None:
        if not records:
            return
        start = len(self.records)
        row = self.node_row
        ends = np.array([(row[r.source.node_id], row[r.target.node_id]) for r in records],
                        dtype=np.int64).reshape(-1, 2)
        for i, record in enumerate(records):
            record.row = start + i
            self._node_links[record.source.node_id].add(record)
            self._node_links[record.target.node_id].add(record)
        centres = self.xy + (NODE_W / 2, NODE_H / 2)
        lines = np.hstack([centres[ends[:, 0]], centres[ends[:, 1]]])
        families = np.array([_FAMILY_INDEX.get(r.family, len(FAMILIES) - 1) for r in records], dtype=np.int8)
        n = len(records)
        self.records.extend(records)
        self.ends = np.concatenate([self.ends, ends])
        self.segments = np.concatenate([self.segments, lines])
        self.family = np.concatenate([self.family, families])
        self.problem = np.concatenate([self.problem, np.array([bool(r.problem) for r in records])])
        self.selected = np.concatenate([self.selected, np.zeros(n, dtype=bool)])
        self.alive = np.concatenate([self.alive, np.ones(n, dtype=bool)])
        self._grow(lines)

    def remove_links(self, records) -> bool:
        """Drop the links' rows, repainting their area once; True when any was selected."""
        rows = []
        no_links: set = set()
        for record in records:
            if record.row < 0:
                continue
            rows.append(record.row)
            self.records[record.row] = None
            record.row = -1
            for node_id in (record.source.node_id, record.target.node_id):
                self._node_links.get(node_id, no_links).discard(record)
        if not rows:
            return False
        gone = np.array(rows, dtype=np.int64)
        was_selected = bool(self.selected[gone].any())
        self.alive[gone] = self.selected[gone] = False
        self.dead += len(rows)
        self.update(self._rows_rect(gone))
        return was_selected

    def finish_edit(self) -> None:
        """Links came or went: compact when half the rows are dead, and fit the extent to what is left."""
        if self.dead and self.dead * 2 >= len(self.records):
            self.compact()
        self._fit_rect()

    def compact(self) -> None:
        """Drop dead link rows and removed node rows, renumbering what is left."""
        keep_nodes = np.array([node_id is not None for node_id in self.node_ids], dtype=bool)
        new_row = np.cumsum(keep_nodes) - 1
        self.node_ids = [node_id for node_id in self.node_ids if node_id is not None]
        self.node_row = {node_id: i for i, node_id in enumerate(self.node_ids)}
        self.xy = self.xy[keep_nodes]
        keep = self.alive
        self.records = [r for r in self.records if r is not None]
        for i, record in enumerate(self.records):
            record.row = i
        self.ends = new_row[self.ends[keep]].reshape(-1, 2)
        self.segments, self.family = self.segments[keep], self.family[keep]
        self.problem, self.selected = self.problem[keep], self.selected[keep]
        self.alive = np.ones(len(self.records), dtype=bool)
        self.dead = 0

    def set_family(self, record: LinkItem, family: str) -> None:
        record.family = family
        if record.row >= 0:
            self.family[record.row] = _FAMILY_INDEX.get(family, len(FAMILIES) - 1)
            self.update(self._rows_rect(np.array([record.row])))

    def set_problem(self, record: LinkItem, text: str) -> None:
        record.problem = text
        if record.row >= 0:
            self.problem[record.row] = bool(text)
            self.update(self._rows_rect(np.array([record.row])))

    def node_moved(self, item) -> None:
        """A node moved: its row and the lines of its links follow, and only their area repaints."""
        row = self.node_row.get(item.node_id)
        if row is None:
            return
        self.xy[row] = (item.x(), item.y())
        links = self._node_links.get(item.node_id)
        if not links:
            return
        rows = np.fromiter((r.row for r in links), dtype=np.int64, count=len(links))
        before = self._rows_rect(rows)
        centres = self.xy + (NODE_W / 2, NODE_H / 2)
        ends = self.ends[rows]
        self.segments[rows] = np.hstack([centres[ends[:, 0]], centres[ends[:, 1]]])
        self._grow(self.segments[rows])
        self.update(before.united(self._rows_rect(rows)))

    # -------------------------------------------------------------- selection
    def selected_records(self) -> list[LinkItem]:
        return [self.records[row] for row in np.flatnonzero(self.selected)]

    def select(self, records, on: bool = True) -> bool:
        """Select or deselect links; True when anything changed."""
        rows = np.array([r.row for r in records if r.row >= 0], dtype=np.int64)
        if not len(rows) or bool(np.all(self.selected[rows] == on)):
            return False
        self.selected[rows] = on
        self.update(self._rows_rect(rows))
        return True

    def select_rows(self, rows: np.ndarray) -> bool:
        """Exactly these rows selected (a rubber band); True when anything changed."""
        wanted = np.zeros(len(self.selected), dtype=bool)
        wanted[rows] = True
        wanted &= self.alive
        changed = np.flatnonzero(wanted != self.selected)
        if not len(changed):
            return False
        self.selected = wanted
        self.update(self._rows_rect(changed))
        return True

    def clear_selection(self) -> bool:
        rows = np.flatnonzero(self.selected)
        if not len(rows):
            return False
        self.selected[:] = False
        self.update(self._rows_rect(rows))
        return True

    # -------------------------------------------------------------- hit tests
    def link_at(self, pos: QPointF, tolerance: float) -> LinkItem | None:
        """The link nearest `pos` within `tolerance` scene units, or None."""
        x, y = pos.x(), pos.y()
        near = np.flatnonzero(self.alive & seg.in_box(self.segments, x - tolerance, y - tolerance,
                                                      x + tolerance, y + tolerance))
        if not len(near):
            return None
        dist = seg.distances(self.segments[near], x, y)
        best = int(np.argmin(dist))
        return self.records[near[best]] if dist[best] <= tolerance else None

    def rows_in(self, rect: QRectF) -> np.ndarray:
        """Rows of the links that cross `rect`."""
        near = np.flatnonzero(self.alive & seg.in_box(self.segments, rect.left(), rect.top(),
                                                      rect.right(), rect.bottom()))
        rows, _parts = seg.clip(self.segments[near], rect)
        return near[rows]

    # -------------------------------------------------------------- extent
    def _rows_rect(self, rows: np.ndarray) -> QRectF:
        return _lines_rect(self.segments[rows])

    def _grow(self, lines: np.ndarray) -> None:
        rect = self._rect.united(_lines_rect(lines))
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect

    def _fit_rect(self) -> None:
        rect = self._rows_rect(np.flatnonzero(self.alive))
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return self._rect

    # -------------------------------------------------------------- drawing
    def _pen(self, family: int, problem: bool, selected: bool, thin: bool) -> QPen:
        if self._pens_generation != Ink.generation:
            self._pens.clear()
            self._pens_generation = Ink.generation
        key = (family, problem, selected, thin)
        pen = self._pens.get(key)
        if pen is None:
            colour, style, width = FAMILY_STYLES.get(FAMILIES[family], OTHER_LINK)
            colour = Ink.get("problem" if problem else colour)
            if thin:  # far out: one pixel (the overview draws most of these)
                pen = QPen(colour, 3 if selected else 0)
                pen.setCosmetic(True)
            else:
                pen = QPen(colour, width + (2 if selected else 0), style, Qt.PenCapStyle.RoundCap)
            self._pens[key] = pen
        return pen

    def paint(self, painter: QPainter, option, widget=None) -> None:
        exposed = option.exposedRect if not option.exposedRect.isEmpty() else self._rect
        visible = np.flatnonzero(self.alive & seg.in_box(self.segments, exposed.left() - 8, exposed.top() - 8,
                                                         exposed.right() + 8, exposed.bottom() + 8))
        if not len(visible):
            return
        rows, parts = seg.clip(self.segments[visible], exposed.adjusted(-8, -8, 8, 8))
        rows = visible[rows]
        thin = option.levelOfDetailFromTransform(painter.worldTransform()) < 0.3
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, not self.fast)
        # one drawLines per pen: kind x problem x selected, selected ones last (on top)
        codes = (self.family[rows].astype(np.int64) * 4 + self.problem[rows] * 2 + self.selected[rows])
        for code in sorted(np.unique(codes).tolist(), key=lambda c: (c & 1, c)):
            painter.setPen(self._pen(code // 4, bool(code & 2), bool(code & 1), thin))
            seg.draw_lines(painter, parts[codes == code])
        if not thin:
            self._paint_labels(painter, rows, exposed)

    def _paint_labels(self, painter: QPainter, rows: np.ndarray, exposed: QRectF) -> None:
        # labels on every link of a big fat tree would bury the drawing: then only the selected ones
        if self.count > LABELLED_LINKS:
            rows = rows[self.selected[rows]]
        lines = self.segments[rows]
        long_enough = np.hypot(lines[:, 2] - lines[:, 0], lines[:, 3] - lines[:, 1]) > 120
        painter.setFont(link_font())
        for row in rows[long_enough]:
            record = self.records[row]
            width = label_width(record.label)
            if not width:
                continue
            x1, y1, x2, y2 = self.segments[row]
            box = QRectF((x1 + x2) / 2 - width / 2, (y1 + y2) / 2 - 9, width, 18)
            if not box.intersects(exposed):
                continue
            painter.setPen(QPen(self._pen(int(self.family[row]), bool(self.problem[row]), False, False).color(), 1))
            painter.setBrush(Ink.get("node_fill"))
            painter.drawRoundedRect(box, 9, 9)
            painter.setPen(Ink.get("node_ink"))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, record.label)


def _lines_rect(lines: np.ndarray) -> QRectF:
    if not len(lines):
        return QRectF()
    xs, ys = lines[:, 0::2], lines[:, 1::2]
    left, top = float(xs.min()), float(ys.min())
    return QRectF(left, top, float(xs.max()) - left, float(ys.max()) - top).adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
