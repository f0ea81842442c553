"""Graphics items of the cluster canvas: nodes, links and the link being drawn. Items never change
the graph; they report what the user did and the scene turns it into commands."""

from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject, QStyleOptionGraphicsItem

NODE_W, NODE_H = 200.0, 66.0
LOD_DETAIL = 0.3  # below this scale nodes and links are drawn without text
LABELLED_LINKS = 150  # above this many links, only selected links show their label
PORT_R = 6.0
GRID = 20.0
KIND_COLOURS = {"system": "#2f6fde", "accelerator": "#945ecf", "cloud": "#13a4b4", "switch": "#6b7280"}
FAMILY_STYLES = {
    "nvlink": ("#19a979", Qt.PenStyle.SolidLine, 3.0),
    "infiniband": ("#2f6fde", Qt.PenStyle.SolidLine, 2.2),
    "ethernet": ("#e8743b", Qt.PenStyle.DashLine, 2.0),
    "pcie": ("#6b7280", Qt.PenStyle.DotLine, 2.0),
}
PROBLEM = QColor("#c62828")


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
_WHITE = QColor("#ffffff")
_INK = QColor("#1d2330")


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

    def __init__(self, node_id: str, parent=None):
        super().__init__(parent)
        self.node_id = node_id
        self.kind = "system"
        self.title = ""
        self.caption = ""
        self.count = 1
        self.problem = ""
        self.links: list[LinkItem] = []
        self.snap = True
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsMovable | QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
                      | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
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
        colour = QColor(KIND_COLOURS.get(self.kind, "#6b7280"))
        rect = QRectF(0, 0, NODE_W, NODE_H)
        selected = self.isSelected()
        border = PROBLEM if self.problem else (QColor("#1d2330") if selected else QColor("#c9cfd8"))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(border, 2.4 if (selected or self.problem) else 1.0))
        painter.setBrush(QBrush(QColor("#ffffff") if self.kind != "switch" else QColor("#f3f4f6")))
        painter.drawRoundedRect(rect, 8, 8)
        stripe = QPainterPath()
        stripe.addRoundedRect(QRectF(0, 0, 8, NODE_H), 4, 4)
        painter.fillPath(stripe, colour)
        painter.setPen(QColor("#1d2330"))
        painter.setFont(_font(9.5, True))
        fm = QFontMetricsF(painter.font())
        right = NODE_W - (52 if self.count > 1 else 12)
        painter.drawText(QPointF(16, 22), fm.elidedText(self.title, Qt.TextElideMode.ElideRight, right - 16))
        painter.setFont(_font(8))
        painter.setPen(QColor("#5b6475"))
        fm = QFontMetricsF(painter.font())
        painter.drawText(QPointF(16, 42), fm.elidedText(self.caption, Qt.TextElideMode.ElideRight, NODE_W - 28))
        kind_label = {"system": "machine", "accelerator": "node", "cloud": "cloud instance", "switch": "switch"}.get(self.kind, "")
        painter.drawText(QPointF(16, 58), f"{self.count:,} {kind_label}s" if self.count > 1 else kind_label)
        if self.count > 1:
            badge = QRectF(NODE_W - 48, 8, 40, 18)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(badge, 9, 9)
            painter.setPen(QColor("#ffffff"))
            painter.setFont(_font(8, True))
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, f"×{self.count:,}" if self.count < 10000 else "×10k+")
        if self.problem:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(PROBLEM)
            painter.drawEllipse(QPointF(NODE_W - 14, NODE_H - 14), 8, 8)
            painter.setPen(QColor("#ffffff"))
            painter.setFont(_font(9, True))
            painter.drawText(QRectF(NODE_W - 22, NODE_H - 22, 16, 16), Qt.AlignmentFlag.AlignCenter, "!")
        painter.setPen(QPen(QColor("#ffffff"), 1.5))
        painter.setBrush(colour)
        painter.drawEllipse(self.port_rect())

    def itemChange(self, change, value):
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionChange and self.snap and self.scene() is not None:
            p = value
            return QPointF(round(p.x() / GRID) * GRID, round(p.y() / GRID) * GRID)
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            for link in self.links:
                link.adjust()
            scene = self.scene()
            if scene is not None and scene.overview.isVisible():
                scene.overview.invalidate()
        return super().itemChange(change, value)


class LinkItem(QGraphicsItem):
    """A link between two nodes. A large cluster has thousands of them, most crossing the view, so
    what paint() needs (pens, the label's box, the bounding rect) is worked out when the link
    changes, not on every repaint."""

    def __init__(self, link_id: str, source: NodeItem, target: NodeItem):
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
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
                      | QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self.setZValue(1)
        self.adjust()

    def detach(self) -> None:
        for node in (self.source, self.target):
            if self in node.links:
                node.links.remove(self)

    def set_content(self, family: str, label: str) -> None:
        self.family, self.label = family, label
        self._label_w = QFontMetricsF(_link_font()).horizontalAdvance(label) + 10 if label else 0.0
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
        colour, style, width = FAMILY_STYLES.get(self.family, ("#6b7280", Qt.PenStyle.SolidLine, 2.0))
        colour = QColor(PROBLEM if self.problem else colour)
        normal = QPen(colour, width, style, Qt.PenCapStyle.RoundCap)
        selected = QPen(colour, width + 2, style, Qt.PenCapStyle.RoundCap)
        thin = QPen(colour, 0)  # cosmetic, for the zoomed-out overview
        return normal, selected, thin

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self._pens is None:
            self._pens = self._make_pens()
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
            painter.setBrush(_WHITE)
            painter.drawRoundedRect(box, 9, 9)
            painter.setPen(_INK)
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
        painter.setPen(QPen(QColor("#2f6fde"), 2, Qt.PenStyle.DashLine))
        painter.drawLine(self.line)


class OverviewItem(QGraphicsItem):
    """The whole cluster drawn in a few calls when zoomed far out. Node and link items stay in the
    scene for selection and hit tests but paint nothing (ItemHasNoContents); this item draws
    every node as a coloured box and every link as a thin line, grouped by colour, from lists
    rebuilt only when something changed."""

    def __init__(self, scene):
        super().__init__()
        self._scene = scene
        self._groups: tuple[list, list] | None = None
        self._rect = QRectF()
        self.setZValue(0.5)
        self.setVisible(False)

    def invalidate(self) -> None:
        if self._groups is not None:
            self._groups = None
            self.update()

    def refresh(self) -> None:
        """Recompute the extent (call when nodes were added, removed or moved a lot)."""
        self.prepareGeometryChange()
        rect = QRectF()
        for item in self._scene.node_items.values():
            rect = rect.united(item.sceneBoundingRect())
        self._rect = rect.adjusted(-20, -20, 20, 20)
        self.invalidate()

    def boundingRect(self) -> QRectF:
        return self._rect

    def _build(self) -> tuple[list, list]:
        boxes: dict[tuple[str, bool], list[QRectF]] = {}
        for item in self._scene.node_items.values():
            colour = PROBLEM.name() if item.problem else KIND_COLOURS.get(item.kind, "#6b7280")
            boxes.setdefault((colour, item.isSelected()), []).append(QRectF(item.x(), item.y(), NODE_W, NODE_H))
        lines: dict[tuple[str, bool], list[QLineF]] = {}
        for item in self._scene.link_items.values():
            colour = PROBLEM.name() if item.problem else FAMILY_STYLES.get(item.family, ("#6b7280",))[0]
            lines.setdefault((colour, item.isSelected()), []).append(QLineF(item.line))
        node_groups = [(QColor(c), QPen(_INK, 0 if not sel else 3, Qt.PenStyle.SolidLine) if sel else Qt.PenStyle.NoPen, rects)
                       for (c, sel), rects in boxes.items()]
        link_groups = [(QPen(QColor(c), 3 if sel else 0), ls) for (c, sel), ls in lines.items()]
        return node_groups, link_groups

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self._groups is None:
            self._groups = self._build()
        node_groups, link_groups = self._groups
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        for pen, lines in link_groups:
            painter.setPen(pen)
            painter.drawLines(lines)
        for brush, pen, rects in node_groups:
            painter.setPen(pen)
            painter.setBrush(brush)
            painter.drawRects(rects)
