"""Graphics items of the cluster canvas: nodes, links and the link being drawn. Items never change
the graph; they report what the user did and the scene turns it into commands."""

from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject, QStyleOptionGraphicsItem

from gpudesk.ui import theme

NODE_W, NODE_H = 200.0, 66.0
LOD_DETAIL = 0.3  # below this scale nodes and links are drawn without text
LABELLED_LINKS = 150  # above this many links, only selected links show their label
PORT_R = 6.0
GRID = 20.0
# colours are gpudesk.ui.theme names: the canvas follows the light or dark palette
KIND_COLOURS = {"system": "kind_system", "accelerator": "kind_accelerator", "cloud": "kind_cloud", "switch": "kind_switch"}
FAMILY_STYLES = {
    "nvlink": ("link_nvlink", Qt.PenStyle.SolidLine, 3.0),
    "infiniband": ("link_infiniband", Qt.PenStyle.SolidLine, 2.2),
    "ethernet": ("link_ethernet", Qt.PenStyle.DashLine, 2.0),
    "pcie": ("link_pcie", Qt.PenStyle.DotLine, 2.0),
}
OTHER_LINK = ("link_other", Qt.PenStyle.SolidLine, 2.0)


class Ink:
    """The theme's colours as QColors, looked up once per palette: items paint thousands of times
    per frame and read these instead of asking the theme. `generation` changes with the palette,
    so that items that keep pens know to make new ones."""

    table: dict[str, str] = {}
    colours: dict[str, QColor] = {}
    generation = 0

    @classmethod
    def refresh(cls) -> bool:
        """Follow the application palette; True when the colours changed."""
        table = theme.colours()
        if table is cls.table:
            return False
        cls.table = table
        cls.colours = {name: QColor(value) for name, value in table.items()}
        cls.generation += 1
        return True

    @classmethod
    def get(cls, name: str) -> QColor:
        if not cls.colours:
            cls.refresh()
        return cls.colours[name]

    @classmethod
    def hex(cls, name: str) -> str:
        if not cls.table:
            cls.refresh()
        return cls.table[name]


def kind_colour(kind: str) -> str:
    return KIND_COLOURS.get(kind, "kind_switch")


def family_style(family: str) -> tuple:
    return FAMILY_STYLES.get(family, OTHER_LINK)


def _link_font() -> QFont:
    if not _LINK_FONTS:
        _LINK_FONTS.append(_font(7.5))
    return _LINK_FONTS[0]


def _font(size: float, bold: bool = False) -> QFont:
    f = QFont()
    f.setPointSizeF(size)
    f.setBold(bold)
    return f


_LINK_FONTS: list[QFont] = []  # made on first use: a QFont needs the application
_LABEL_WIDTHS: dict[str, float] = {}  # a fat tree has 60,000 links and a handful of labels
_Flag = QGraphicsItem.GraphicsItemFlag
# flags as plain values, combined once: PySide6's enum arithmetic costs microseconds per item
_NODE_FLAGS = _Flag.ItemIsMovable | _Flag.ItemIsSelectable | _Flag.ItemSendsGeometryChanges
_LINK_FLAGS = _Flag.ItemIsSelectable | _Flag.ItemUsesExtendedStyleOption
_NO_CONTENTS = _Flag.ItemHasNoContents
_NODE_FLAGS_HIDDEN = _NODE_FLAGS | _NO_CONTENTS
_LINK_FLAGS_HIDDEN = _LINK_FLAGS | _NO_CONTENTS
_POSITION_CHANGE = QGraphicsItem.GraphicsItemChange.ItemPositionChange
_POSITION_CHANGED = QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged
_DEVICE_CACHE = QGraphicsItem.CacheMode.DeviceCoordinateCache


def label_width(label: str) -> float:
    """Width of a link's label box (text and padding), measured once per distinct label."""
    width = _LABEL_WIDTHS.get(label)
    if width is None:
        width = _LABEL_WIDTHS[label] = QFontMetricsF(_link_font()).horizontalAdvance(label) + 10 if label else 0.0
    return width


def clip_line(line: QLineF, rect: QRectF) -> QLineF | None:
    """The part of `line` inside `rect` (Liang-Barsky), or None when it misses the rect."""
    ax, ay, dx, dy = line.x1(), line.y1(), line.dx(), line.dy()
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, ax - rect.left()), (dx, rect.right() - ax), (-dy, ay - rect.top()), (dy, rect.bottom() - ay)):
        if p == 0:
            if q < 0:
                return None
            continue
        r = q / p
        if p < 0:
            if r > t1:
                return None
            t0 = max(t0, r)
        else:
            if r < t0:
                return None
            t1 = min(t1, r)
    if t0 == 0.0 and t1 == 1.0:
        return line
    return QLineF(ax + t0 * dx, ay + t0 * dy, ax + t1 * dx, ay + t1 * dy)


class NodeItem(QGraphicsObject):
    """A node: a group of identical machines, a cloud instance type or a switch."""

    def __init__(self, node_id: str, pos: QPointF | None = None, hidden: bool = False, parent=None):
        """`hidden`: made while the overview draws the cluster (the item paints nothing until the
        view zooms back in)."""
        super().__init__(parent)
        self.node_id = node_id
        self.kind = "system"
        self.title = ""
        self.caption = ""
        self.count = 1
        self.problem = ""
        self.links: list[LinkItem] = []
        self.snap = True
        if pos is not None:
            self.setPos(pos)  # before ItemSendsGeometryChanges: no snapping or link updates yet
        self.setFlags(_NODE_FLAGS_HIDDEN if hidden else _NODE_FLAGS)
        # drawn once into a pixmap at the view's scale: a repaint while panning is a copy
        self.setCacheMode(_DEVICE_CACHE)
        self.setAcceptHoverEvents(True)
        self.setZValue(2)

    def set_content(self, kind: str, title: str, caption: str, count: int) -> None:
        self.kind, self.title, self.caption, self.count = kind, title, caption, count
        self.update()

    def set_problem(self, text: str) -> None:
        if text != self.problem:
            self.problem = text
            self.setToolTip(text)
            self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(-4, -4, NODE_W + 8 + PORT_R, NODE_H + 8)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addRoundedRect(QRectF(0, 0, NODE_W + PORT_R, NODE_H), 8, 8)
        return path

    def port_rect(self) -> QRectF:
        return QRectF(NODE_W - PORT_R, NODE_H / 2 - PORT_R, 2 * PORT_R, 2 * PORT_R)

    def centre(self) -> QPointF:
        return self.pos() + QPointF(NODE_W / 2, NODE_H / 2)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        ink = Ink.get
        colour = ink(kind_colour(self.kind))
        rect = QRectF(0, 0, NODE_W, NODE_H)
        selected = self.isSelected()
        border = ink("problem") if self.problem else ink("node_selected" if selected else "node_border")
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(border, 2.4 if (selected or self.problem) else 1.0))
        painter.setBrush(QBrush(ink("node_fill" if self.kind != "switch" else "switch_fill")))
        painter.drawRoundedRect(rect, 8, 8)
        stripe = QPainterPath()
        stripe.addRoundedRect(QRectF(0, 0, 8, NODE_H), 4, 4)
        painter.fillPath(stripe, colour)
        painter.setPen(ink("node_ink"))
        painter.setFont(_font(9.5, True))
        fm = QFontMetricsF(painter.font())
        right = NODE_W - (52 if self.count > 1 else 12)
        painter.drawText(QPointF(16, 22), fm.elidedText(self.title, Qt.TextElideMode.ElideRight, right - 16))
        painter.setFont(_font(8))
        painter.setPen(ink("node_muted"))
        fm = QFontMetricsF(painter.font())
        painter.drawText(QPointF(16, 42), fm.elidedText(self.caption, Qt.TextElideMode.ElideRight, NODE_W - 28))
        kind_label = {"system": "machine", "accelerator": "node", "cloud": "cloud instance", "switch": "switch"}.get(self.kind, "")
        painter.drawText(QPointF(16, 58), f"{self.count:,} {kind_label}s" if self.count > 1 else kind_label)
        if self.count > 1:
            badge = QRectF(NODE_W - 48, 8, 40, 18)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(badge, 9, 9)
            painter.setPen(ink("on_accent"))
            painter.setFont(_font(8, True))
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, f"×{self.count:,}" if self.count < 10000 else "×10k+")
        if self.problem:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(ink("problem"))
            painter.drawEllipse(QPointF(NODE_W - 14, NODE_H - 14), 8, 8)
            painter.setPen(ink("on_accent"))
            painter.setFont(_font(9, True))
            painter.drawText(QRectF(NODE_W - 22, NODE_H - 22, 16, 16), Qt.AlignmentFlag.AlignCenter, "!")
        painter.setPen(QPen(ink("node_fill"), 1.5))
        painter.setBrush(colour)
        painter.drawEllipse(self.port_rect())

    def itemChange(self, change, value):
        if change == _POSITION_CHANGE and self.snap and self.scene() is not None:
            p = value
            return QPointF(round(p.x() / GRID) * GRID, round(p.y() / GRID) * GRID)
        if change == _POSITION_CHANGED:
            for link in self.links:
                link.adjust()
            scene = self.scene()
            if scene is not None and scene.overview.isVisible():
                scene.overview.node_moved(self)
        return super().itemChange(change, value)


class LinkItem(QGraphicsItem):
    """A link between two nodes. A large cluster has thousands of them, most crossing the view, so
    what paint() needs (pens, the label's box, the bounding rect) is worked out when the link
    changes, not on every repaint."""

    def __init__(self, link_id: str, source: NodeItem, target: NodeItem, hidden: bool = False):
        super().__init__()
        self.link_id = link_id
        self.source, self.target = source, target
        source.links.append(self)
        target.links.append(self)
        self.family = "ethernet"
        self.label = ""
        self.problem = ""
        self.line = QLineF()
        self._rect = QRectF()
        self._label_w = 0.0
        self._pens: tuple[QPen, QPen, QPen] | None = None
        self._pens_generation = 0
        self.setFlags(_LINK_FLAGS_HIDDEN if hidden else _LINK_FLAGS)
        self.setZValue(1)
        self.adjust()

    def detach(self) -> None:
        for node in (self.source, self.target):
            if self in node.links:
                node.links.remove(self)

    def set_content(self, family: str, label: str) -> None:
        self.family, self.label = family, label
        self._label_w = label_width(label)
        self._pens = None
        self.update()

    def set_problem(self, text: str) -> None:
        if text != self.problem:
            self.problem = text
            self.setToolTip(text or self.label)
            self._pens = None
            self.update()

    def adjust(self) -> None:
        self.prepareGeometryChange()
        self.line = QLineF(self.source.centre(), self.target.centre())
        self._rect = QRectF(self.line.p1(), self.line.p2()).normalized().adjusted(-60, -14, 60, 14)

    def boundingRect(self) -> QRectF:
        return self._rect

    def shape(self) -> QPainterPath:
        path = QPainterPath(self.line.p1())
        path.lineTo(self.line.p2())
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        return stroker.createStroke(path)

    def _make_pens(self) -> tuple[QPen, QPen, QPen]:
        colour, style, width = family_style(self.family)
        colour = Ink.get("problem" if self.problem else colour)
        normal = QPen(colour, width, style, Qt.PenCapStyle.RoundCap)
        selected = QPen(colour, width + 2, style, Qt.PenCapStyle.RoundCap)
        thin = QPen(colour, 0)  # cosmetic, for the zoomed-out overview
        return normal, selected, thin

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self._pens is None or self._pens_generation != Ink.generation:
            self._pens = self._make_pens()
            self._pens_generation = Ink.generation
        normal, selected, thin = self._pens
        scene = self.scene()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, not (scene is not None and scene.fast))
        if option.levelOfDetailFromTransform(painter.worldTransform()) < LOD_DETAIL:
            painter.setPen(selected if self.isSelected() else thin)
            painter.drawLine(self.line)
            return
        painter.setPen(selected if self.isSelected() else normal)
        # the rasteriser strokes the whole line before clipping: clip it to what is exposed first
        # (a long antialiased link then costs what its visible part costs)
        visible = clip_line(self.line, option.exposedRect.adjusted(-8, -8, 8, 8))
        if visible is not None:
            painter.drawLine(visible)
        # labels on every link of a big fat tree would bury the drawing: then only the selected ones
        many = scene is not None and len(scene.link_items) > LABELLED_LINKS
        if self._label_w and self.line.length() > 120 and (not many or self.isSelected()):
            mid = self.line.center()
            box = QRectF(mid.x() - self._label_w / 2, mid.y() - 9, self._label_w, 18)
            if not box.intersects(option.exposedRect):
                return
            painter.setPen(QPen(normal.color(), 1))
            painter.setBrush(Ink.get("node_fill"))
            painter.drawRoundedRect(box, 9, 9)
            painter.setPen(Ink.get("node_ink"))
            painter.setFont(_link_font())
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, self.label)


class PendingLinkItem(QGraphicsItem):
    """The rubber line while the user drags a new link from a node's port."""

    def __init__(self, start: QPointF):
        super().__init__()
        self.line = QLineF(start, start)
        self.setZValue(3)

    def set_end(self, end: QPointF) -> None:
        self.prepareGeometryChange()
        self.line.setP2(end)

    def boundingRect(self) -> QRectF:
        return QRectF(self.line.p1(), self.line.p2()).normalized().adjusted(-4, -4, 4, 4)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(Ink.get("accent"), 2, Qt.PenStyle.DashLine))
        painter.drawLine(self.line)


class OverviewItem(QGraphicsItem):
    """The whole cluster drawn in a few hundred calls when zoomed far out. Node and link items stay
    in the scene for selection and hit tests but paint nothing (ItemHasNoContents).

    Level of detail: nodes that fall in one cell of a grid sized to the view's scale are drawn as
    one box (a rack, a row of switches), and links are bundled — each link's ends are snapped to a
    grid whose cell grows with the link's length on screen (a 1,000-pixel link may be off by a few
    pixels, a 20-pixel one by none), and links whose snapped ends coincide are drawn once, thicker
    the more they carry. A 10,000-machine fat tree (61,200 links) draws as a few hundred lines.

    The positions live in numpy arrays indexed by node, rebuilt when nodes or links come or go;
    a dragged node updates its own row, and the bundles of each zoom level are computed once."""

    BOX_PX = 12.0  # nodes closer than this on screen are drawn as one box
    SNAP_FRACTION = 1 / 12  # a link's ends snap to cells of about this share of its length on screen

    def __init__(self, scene):
        super().__init__()
        self._scene = scene
        self._structure = None  # node ids, positions and styles; link ends (rows) and styles
        self._styles_valid = False
        self._drawn: dict[tuple, tuple] = {}  # (cell level) -> what paint() draws there
        self._rect = QRectF()
        self.setZValue(0.5)
        self.setVisible(False)

    # -------------------------------------------------------------- following the scene
    def invalidate(self) -> None:
        """Selection, problems or a link's kind changed: recolour (positions are kept)."""
        if self._styles_valid or self._drawn:  # nothing drawn yet (or the scene is being torn down)
            self._styles_valid = False
            self._drawn.clear()
            self.update()

    def forget(self) -> None:
        """Nodes or links came or went: the arrays are rebuilt when next drawn."""
        if self._structure is None and not self._drawn:
            return
        self._structure = None
        self._styles_valid = False
        self._drawn.clear()
        self.update()

    def refresh(self) -> None:
        """Rebuild the arrays and the extent now."""
        self.forget()
        self._build_structure(update_rect=True)

    def node_moved(self, item) -> None:
        """A node was dragged: only its row changes; the bundles are recomputed on the next paint."""
        st = self._structure
        if st is None:
            return
        row = st["row"].get(item.node_id)
        if row is not None:
            st["xy"][row] = (item.x(), item.y())
            self._drawn.clear()
            self.update()

    def boundingRect(self) -> QRectF:
        return self._rect

    def _build_structure(self, update_rect: bool = False) -> None:
        import numpy as np

        nodes = self._scene.node_items
        ids = list(nodes)
        row = {node_id: i for i, node_id in enumerate(ids)}
        items = list(nodes.values())
        xy = np.array([(item.x(), item.y()) for item in items], dtype=float).reshape(-1, 2)
        links = list(self._scene.link_items.values())
        ends = np.array([(row[link.source.node_id], row[link.target.node_id]) for link in links],
                        dtype=np.int64).reshape(-1, 2)
        # each node's and link's style by its kind (one pass); selection and problems recolour a few
        styles: dict[tuple[str, bool], int] = {}
        base_nodes = np.array([styles.setdefault((Ink.hex(kind_colour(item.kind)), False), len(styles))
                               for item in items], dtype=np.int64)
        base_links = np.array([styles.setdefault((Ink.hex(family_style(link.family)[0]), False), len(styles))
                               for link in links], dtype=np.int64)
        self._structure = {"ids": ids, "row": row, "items": items, "xy": xy, "links": links, "ends": ends,
                           "base_styles": styles, "base_node_style": base_nodes, "base_link_style": base_links,
                           "node_style": base_nodes, "link_style": base_links, "styles": list(styles)}
        if not update_rect:
            return
        self.prepareGeometryChange()
        if len(xy):
            low, high = xy.min(axis=0), xy.max(axis=0)
            self._rect = QRectF(low[0] - 20, low[1] - 20, high[0] - low[0] + NODE_W + 40, high[1] - low[1] + NODE_H + 40)
        else:
            self._rect = QRectF()

    def _build_styles(self) -> None:
        """A style is (colour, selected); each node and link gets the index of its style."""
        import numpy as np

        st = self._structure
        styles = dict(st["base_styles"])

        def style(colour: str, selected: bool) -> int:
            return styles.setdefault((colour, selected), len(styles))

        node_style = np.array(st["base_node_style"])
        link_style = np.array(st["base_link_style"])
        link_row = None
        for item in self._scene.selectedItems() + [i for i in self._problem_items()]:
            colour = Ink.hex("problem") if item.problem else None
            if isinstance(item, NodeItem):
                r = st["row"].get(item.node_id)
                if r is not None:
                    node_style[r] = style(colour or Ink.hex(kind_colour(item.kind)), item.isSelected())
            elif isinstance(item, LinkItem):
                if link_row is None:
                    link_row = {link.link_id: i for i, link in enumerate(st["links"])}
                r = link_row.get(item.link_id)
                if r is not None:
                    link_style[r] = style(colour or Ink.hex(family_style(item.family)[0]), item.isSelected())
        st["node_style"], st["link_style"] = node_style, link_style
        st["styles"] = list(styles)
        self._styles_valid = True

    def _problem_items(self):
        scene = self._scene
        for item_id in getattr(scene, "_problems", {}):
            item = scene.node_items.get(item_id) or scene.link_items.get(item_id)
            if item is not None and item.problem:
                yield item

    # -------------------------------------------------------------- level of detail
    def _level_for(self, scale: float) -> int:
        """Cells double in size every zoom step of 2x: the drawing is cached per level."""
        import math

        return math.floor(math.log2(max(self.BOX_PX / max(scale, 1e-6), 1.0)))

    def _bundles(self, level: int) -> tuple:
        import numpy as np

        st = self._structure
        cell = float(2 ** level)  # scene units: about BOX_PX on screen at this level
        xy = st["xy"]
        centres = xy + (NODE_W / 2, NODE_H / 2)
        # nodes: one box per (cell, style), spanning the nodes in it
        boxes: list[tuple[int, list[QRectF]]] = []
        if len(xy):
            cells = np.floor(centres / cell).astype(np.int64)
            keys = np.column_stack([cells, st["node_style"]])
            _, group = np.unique(keys, axis=0, return_inverse=True)
            group = group.ravel()
            n_groups = int(group.max()) + 1
            low = np.full((n_groups, 2), np.inf)
            high = np.full((n_groups, 2), -np.inf)
            np.minimum.at(low, group, xy)
            np.maximum.at(high, group, xy + (NODE_W, NODE_H))
            style_of = np.zeros(n_groups, dtype=np.int64)
            style_of[group] = st["node_style"]
            by_style: dict[int, list[QRectF]] = {}
            for g in range(n_groups):
                by_style.setdefault(int(style_of[g]), []).append(
                    QRectF(low[g, 0], low[g, 1], high[g, 0] - low[g, 0], high[g, 1] - low[g, 1]))
            boxes = list(by_style.items())
        # links: ends snapped to cells that grow with the link's length; equal ones drawn once
        lines: list[tuple[int, float, list[QLineF]]] = []
        ends = st["ends"]
        if len(ends):
            a, b = centres[ends[:, 0]], centres[ends[:, 1]]
            length = np.hypot(*(b - a).T)
            snap_level = np.maximum(np.floor(np.log2(np.maximum(length * self.SNAP_FRACTION, cell))), level)
            snap = np.exp2(snap_level)[:, None]
            qa, qb = np.floor(a / snap), np.floor(b / snap)
            keys = np.column_stack([snap_level, qa, qb, st["link_style"]])
            _, group, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
            group = group.ravel()
            n_groups = len(counts)
            # each bundle runs between the mean ends of the links it carries
            sums = np.zeros((n_groups, 4))
            np.add.at(sums, group, np.column_stack([a, b]))
            mean = sums / counts[:, None]
            style_of = np.zeros(n_groups, dtype=np.int64)
            style_of[group] = st["link_style"]
            width_class = np.minimum(np.floor(np.log10(counts)), 3).astype(np.int64)  # 1, 10, 100, 1000+
            same = (np.abs(mean[:, 0] - mean[:, 2]) < cell / 2) & (np.abs(mean[:, 1] - mean[:, 3]) < cell / 2)
            by_pen: dict[tuple[int, int], list[QLineF]] = {}
            for g in np.flatnonzero(~same):
                by_pen.setdefault((int(style_of[g]), int(width_class[g])), []).append(
                    QLineF(mean[g, 0], mean[g, 1], mean[g, 2], mean[g, 3]))
            lines = [(style, 1.0 + 1.2 * width, group_lines) for (style, width), group_lines in by_pen.items()]
        return boxes, lines

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self._structure is None:
            self._build_structure()
        if not self._styles_valid:
            self._build_styles()
        level = self._level_for(painter.worldTransform().m11())
        drawn = self._drawn.get(level)
        if drawn is None:
            drawn = self._drawn[level] = self._bundles(level)
        boxes, lines = drawn
        styles = self._structure["styles"]
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        for style, width, group_lines in lines:
            colour, selected = styles[style]
            pen = QPen(QColor(colour), width + (2 if selected else 0))
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawLines(group_lines)
        for style, rects in boxes:
            colour, selected = styles[style]
            painter.setPen(QPen(Ink.get("node_selected"), 3) if selected else Qt.PenStyle.NoPen)
            painter.setBrush(QColor(colour))
            painter.drawRects(rects)

    def drawn_counts(self, scale: float) -> tuple[int, int]:
        """(boxes, lines) the overview draws at this scale: for tests and the benchmark."""
        if self._structure is None:
            self._build_structure()
        if not self._styles_valid:
            self._build_styles()
        level = self._level_for(scale)
        drawn = self._drawn.get(level)
        if drawn is None:
            drawn = self._drawn[level] = self._bundles(level)
        boxes, lines = drawn
        return sum(len(r) for _s, r in boxes), sum(len(ls) for _s, _w, ls in lines)
