"""The cluster drawn far out as one item: racks as boxes and links bundled, in a few hundred lines."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from gpudesk.ui.canvas import segments as seg
from gpudesk.ui.canvas.items import NODE_H, NODE_W, Ink, NodeItem, family_style, kind_colour
from gpudesk.ui.canvas.links import FAMILIES


class OverviewItem(QGraphicsItem):
    """The whole cluster drawn in a few hundred calls when zoomed far out. Node items stay in the
    scene for selection and hit tests but paint nothing (ItemHasNoContents), and the link layer
    is hidden.

    Level of detail: nodes that fall in one cell of a grid sized to the view's scale are drawn as
    one box (a rack, a row of switches), and links are bundled — each link's ends are snapped to a
    grid whose cell grows with the link's length on screen (a 1,000-pixel link may be off by a few
    pixels, a 20-pixel one by none), and links whose snapped ends coincide are drawn once, thicker
    the more they carry. A 10,000-machine fat tree (61,200 links) draws as a few hundred lines.

    Positions and link ends are the link layer's arrays (links.py), read in place: a dragged node
    changes its row there, and the bundles of each zoom level are computed once. While nodes are
    dragged the bundles leave them and their links out (computed once per drag) and these few are
    drawn as they move; the bundles take them in again once the view settles."""

    BOX_PX = 12.0  # nodes closer than this on screen are drawn as one box
    SNAP_FRACTION = 1 / 12  # a link's ends snap to cells of about this share of its length on screen
    MOVING_MAX = 200  # nodes dragged at once drawn apart from the bundles (beyond, all are bundled anew)

    def __init__(self, scene):
        super().__init__()
        self._scene = scene
        self._structure = None  # the layer's arrays and each node's and link's base style
        self._styles_valid = False
        self._drawn: dict[int, tuple] = {}  # cell level -> what paint() draws there
        self._moving: set[int] = set()  # rows of the nodes being dragged
        self._moving_links = np.zeros(0, dtype=np.int64)  # rows of their links
        self._rect = QRectF()
        self.setZValue(-2)  # under the links and the nodes
        self.setVisible(False)

    # -------------------------------------------------------------- following the scene
    def invalidate(self) -> None:
        """Selection, problems or a link's kind changed: recolour (positions are kept)."""
        if self._styles_valid or self._drawn:  # nothing drawn yet (or the scene is being torn down)
            self._styles_valid = False
            self._drawn.clear()
            self.update()
        self._settle()

    def forget(self) -> None:
        """Nodes or links came or went: the arrays are read again when next drawn."""
        self._settle()  # rows may have been renumbered
        if self._structure is None and not self._drawn:
            return
        self._structure = None
        self._styles_valid = False
        self._drawn.clear()
        self.update()

    def refresh(self) -> None:
        """Read the arrays and the extent now."""
        self.forget()
        self._build_structure(update_rect=True)

    def node_moved(self, item) -> None:
        """A node was dragged: the layer moved its row. A node not yet moving leaves the bundles
        (recomputed without it on the next paint); one already out of them costs nothing. A drag of
        more than MOVING_MAX nodes recomputes the bundles of all instead."""
        row = self._scene.links.node_row.get(item.node_id)
        if row is None or self._structure is None or len(self._moving) >= self.MOVING_MAX:
            self._drawn.clear()
        elif row not in self._moving:
            self._moving.add(row)
            self._moving_links = None  # found on the next paint, once for all the nodes moved meanwhile
            self._drawn.clear()
        self.update()

    def _settle(self) -> None:
        """The drag is over (the view drew at full quality): the moved nodes join the bundles again."""
        if self._moving:
            self._moving.clear()
            self._moving_links = np.zeros(0, dtype=np.int64)
            self._drawn.clear()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return self._rect

    def _build_structure(self, update_rect: bool = False) -> None:
        layer = self._scene.links
        if layer.dead or len(layer.node_row) != len(layer.node_ids):
            layer.compact()
        items = [self._scene.node_items[node_id] for node_id in layer.node_ids]
        # each node's and link's style by its kind (one pass); selection and problems recolour a few
        styles: dict[tuple[str, bool], int] = {}
        by_kind: dict[str, int] = {}
        base_nodes = np.array([by_kind.get(item.kind) if item.kind in by_kind else
                               by_kind.setdefault(item.kind, styles.setdefault(
                                   (Ink.hex(kind_colour(item.kind)), False), len(styles)))
                               for item in items], dtype=np.int64)
        family_style_index = np.array([styles.setdefault((Ink.hex(family_style(f)[0]), False), len(styles))
                                       for f in FAMILIES], dtype=np.int64)
        base_links = family_style_index[layer.family.astype(np.int64)]
        self._structure = {"layer": layer, "items": items, "base_styles": styles,
                           "base_node_style": base_nodes, "base_link_style": base_links,
                           "node_style": base_nodes, "link_style": base_links, "styles": list(styles)}
        if not update_rect:
            return
        self.prepareGeometryChange()
        xy = layer.xy
        if len(xy):
            low, high = xy.min(axis=0), xy.max(axis=0)
            self._rect = QRectF(low[0] - 20, low[1] - 20, high[0] - low[0] + NODE_W + 40, high[1] - low[1] + NODE_H + 40)
        else:
            self._rect = QRectF()

    def _build_styles(self) -> None:
        """A style is (colour, selected); each node and link gets the index of its style."""
        st = self._structure
        layer = st["layer"]
        styles = dict(st["base_styles"])

        def style(colour: str, selected: bool) -> int:
            return styles.setdefault((colour, selected), len(styles))

        node_style = np.array(st["base_node_style"])
        link_style = np.array(st["base_link_style"])
        marked = [i for i in self._scene.selectedItems() if isinstance(i, NodeItem)]
        marked += [i for i in self._scene.problem_nodes() if not i.isSelected()]
        for item in marked:
            r = layer.node_row.get(item.node_id)
            if r is not None:
                colour = Ink.hex("problem") if item.problem else Ink.hex(kind_colour(item.kind))
                node_style[r] = style(colour, item.isSelected())
        for r in np.flatnonzero(layer.problem | layer.selected):
            colour = Ink.hex("problem") if layer.problem[r] else Ink.hex(family_style(FAMILIES[layer.family[r]])[0])
            link_style[r] = style(colour, bool(layer.selected[r]))
        st["node_style"], st["link_style"] = node_style, link_style
        st["styles"] = list(styles)
        self._styles_valid = True

    # -------------------------------------------------------------- level of detail
    def _level_for(self, scale: float) -> int:
        """Cells double in size every zoom step of 2x: the drawing is cached per level."""
        return math.floor(math.log2(max(self.BOX_PX / max(scale, 1e-6), 1.0)))

    def _boxes(self, cell: float, xy: np.ndarray, node_style: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """One box per (cell, style), spanning the nodes in it: [(style, (n, 4) x y w h rows)]."""
        if not len(xy):
            return []
        cells = np.floor((xy + (NODE_W / 2, NODE_H / 2)) / cell).astype(np.int64)
        group, _counts = _groups(np.column_stack([cells, node_style]))
        n_groups = len(_counts)
        low = np.full((n_groups, 2), np.inf)
        high = np.full((n_groups, 2), -np.inf)
        np.minimum.at(low, group, xy)
        np.maximum.at(high, group, xy + (NODE_W, NODE_H))
        style_of = np.zeros(n_groups, dtype=np.int64)
        style_of[group] = node_style
        rects = np.hstack([low, high - low])
        return [(int(s), rects[style_of == s]) for s in np.unique(style_of)]

    def _find_moving_links(self) -> None:
        ends = self._structure["layer"].ends
        moving = np.fromiter(self._moving, dtype=np.int64, count=len(self._moving))
        self._moving_links = np.flatnonzero(np.isin(ends[:, 0], moving) | np.isin(ends[:, 1], moving)) \
            if len(ends) else np.zeros(0, dtype=np.int64)

    def _bundles(self, level: int) -> tuple:
        """(boxes, bundled lines) at this level, of every node and link but those being dragged."""
        st = self._structure
        layer = st["layer"]
        cell = float(2 ** level)  # scene units: about BOX_PX on screen at this level
        xy, node_style = layer.xy, st["node_style"]
        ends, link_style = layer.ends, st["link_style"]
        if self._moving:
            still = np.ones(len(xy), dtype=bool)
            still[list(self._moving)] = False
            xy, node_style = xy[still], node_style[still]
            kept = np.ones(len(ends), dtype=bool)
            kept[self._moving_links] = False
            ends, link_style = ends[kept], link_style[kept]
        boxes = self._boxes(cell, xy, node_style)
        # links: ends snapped to cells that grow with the link's length; equal ones drawn once
        lines: list[tuple[int, float, np.ndarray]] = []
        if len(ends):
            centres = layer.xy + (NODE_W / 2, NODE_H / 2)
            a, b = centres[ends[:, 0]], centres[ends[:, 1]]
            length = np.hypot(*(b - a).T)
            snap_level = np.maximum(np.floor(np.log2(np.maximum(length * self.SNAP_FRACTION, cell))), level)
            snap = np.exp2(snap_level)[:, None]
            keys = np.column_stack([snap_level, np.floor(a / snap), np.floor(b / snap), link_style])
            group, counts = _groups(keys.astype(np.int64))
            # each bundle runs between the mean ends of the links it carries
            sums = np.zeros((len(counts), 4))
            np.add.at(sums, group, np.column_stack([a, b]))
            mean = sums / counts[:, None]
            style_of = np.zeros(len(counts), dtype=np.int64)
            style_of[group] = link_style
            width_class = np.minimum(np.floor(np.log10(counts)), 3).astype(np.int64)  # 1, 10, 100, 1000+
            same = (np.abs(mean[:, 0] - mean[:, 2]) < cell / 2) & (np.abs(mean[:, 1] - mean[:, 3]) < cell / 2)
            pens = style_of * 4 + width_class
            for pen in np.unique(pens[~same]):
                chosen = (pens == pen) & ~same
                lines.append((int(pen // 4), 1.0 + 1.2 * int(pen % 4), mean[chosen]))
        return boxes, lines

    def _drawing(self, scale: float) -> tuple:
        if self._structure is None:
            self._build_structure()
        if not self._styles_valid:
            self._build_styles()
        level = self._level_for(scale)
        if self._moving and self._moving_links is None:
            self._find_moving_links()
        drawn = self._drawn.get(level)
        if drawn is None:
            drawn = self._drawn[level] = self._bundles(level)
        return drawn

    def _dragged(self) -> tuple:
        """(boxes, lines) of the nodes being dragged and their links, where they are now."""
        st = self._structure
        layer = st["layer"]
        rows = np.fromiter(self._moving, dtype=np.int64, count=len(self._moving))
        rects = np.column_stack([layer.xy[rows], np.full((len(rows), 2), (NODE_W, NODE_H))])
        boxes = [(int(s), rects[st["node_style"][rows] == s]) for s in np.unique(st["node_style"][rows])]
        centres = layer.xy + (NODE_W / 2, NODE_H / 2)
        ends = layer.ends[self._moving_links]
        segments = np.hstack([centres[ends[:, 0]], centres[ends[:, 1]]])
        style = st["link_style"][self._moving_links]
        return boxes, [(int(s), 1.0, segments[style == s]) for s in np.unique(style)]

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self._moving and not self._scene.fast:
            self._settle()  # drawn at full quality: the drag has paused or ended
        boxes, lines = self._drawing(painter.worldTransform().m11())
        if self._moving:
            dragged_boxes, dragged_lines = self._dragged()
            boxes, lines = boxes + dragged_boxes, lines + dragged_lines
        styles = self._structure["styles"]
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        for style, width, group_lines in lines:
            colour, selected = styles[style]
            pen = QPen(QColor(colour), width + (2 if selected else 0))
            pen.setCosmetic(True)
            painter.setPen(pen)
            seg.draw_lines(painter, group_lines)
        for style, rects in boxes:
            colour, selected = styles[style]
            painter.setPen(QPen(Ink.get("node_selected"), 3) if selected else Qt.PenStyle.NoPen)
            painter.setBrush(QColor(colour))
            seg.draw_rects(painter, rects)

    def drawn_counts(self, scale: float) -> tuple[int, int]:
        """(boxes, lines) the overview draws at this scale: for tests and the benchmark."""
        boxes, lines = self._drawing(scale)
        return sum(len(r) for _s, r in boxes), sum(len(ls) for _s, _w, ls in lines)


def _groups(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(group of each row, rows in each group) for rows of whole numbers that are equal. The
    columns are packed into one int64 when their ranges allow (always, for a canvas): a 1-D unique
    is twenty times faster than np.unique(axis=0), which a drag recomputes on every move."""
    low = keys.min(axis=0)
    spans = keys.max(axis=0) - low + 1
    if float(np.prod(spans.astype(float))) < 2.0 ** 62:
        packed = np.ravel_multi_index(tuple((keys - low).T), tuple(int(s) for s in spans))
        _, group, counts = np.unique(packed, return_inverse=True, return_counts=True)
    else:
        _, group, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    return group.ravel(), counts
