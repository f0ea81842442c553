"""Graphics items of the cluster canvas: nodes and the link being drawn, and the colours and pens
they share (links are drawn by one layer item, see links.py). Items never change the graph; they
report what the user did and the scene turns it into commands."""

from __future__ import annotations

from contextlib import contextmanager

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from gpudesk.ui import theme

NODE_W, NODE_H = 200.0, 66.0
LOD_DETAIL = 0.3  # below this scale nodes and links are drawn without text
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
    pinned = False  # while an export draws in the print colours (see printing)

    @classmethod
    def refresh(cls) -> bool:
        """Follow the application palette; True when the colours changed."""
        if cls.pinned:
            return False
        table = theme.colours()
        if table is cls.table:
            return False
        cls._use(table)
        return True

    @classmethod
    def _use(cls, table: dict[str, str]) -> None:
        cls.table = table
        cls.colours = {name: QColor(value) for name, value in table.items()}
        cls.generation += 1

    @classmethod
    @contextmanager
    def printing(cls):
        """Draw in the print variant (dark ink on white paper) whatever the screen shows: exported
        drawings go into documents, not onto this screen."""
        saved = cls.table, cls.colours
        cls._use(theme.variant_table(theme.PRINT))
        cls.pinned = True
        try:
            yield
        finally:
            cls.pinned = False
            cls.table, cls.colours = saved
            cls.generation += 1

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


def link_font() -> QFont:
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
_NODE_FLAGS = _Flag.ItemIsMovable | _Flag.ItemIsSelectable
_NO_CONTENTS = _Flag.ItemHasNoContents
_NODE_FLAGS_HIDDEN = _NODE_FLAGS | _NO_CONTENTS
_DEVICE_CACHE = QGraphicsItem.CacheMode.DeviceCoordinateCache


def label_width(label: str) -> float:
    """Width of a link's label box (text and padding), measured once per distinct label."""
    width = _LABEL_WIDTHS.get(label)
    if width is None:
        width = _LABEL_WIDTHS[label] = QFontMetricsF(link_font()).horizontalAdvance(label) + 10 if label else 0.0
    return width


def snapped(x: float, y: float) -> tuple[float, float]:
    return round(x / GRID) * GRID, round(y / GRID) * GRID


class NodeItem(QGraphicsItem):
    """A node: a group of identical machines, a cloud instance type or a switch. A plain
    QGraphicsItem, not a QGraphicsObject: PySide6 makes a QGraphicsObject ten times slower, which
    at 10,000 nodes was most of a second.

    It has no itemChange override either: Qt calls itemChange six times for each item it adds,
    and a Python override made adding 10,480 nodes three times slower. Moves are followed where
    they happen instead: `setPos` (commands, scripts) and the mouse drag (`mouseMoveEvent`) snap
    to the grid and tell the scene, which moves the node's links."""

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
        self.snap = True
        if pos is not None:
            QGraphicsItem.setPos(self, pos)  # as placed: no snapping, no links to move yet
        self.setFlags(_NODE_FLAGS_HIDDEN if hidden else _NODE_FLAGS)
        # drawn once into a pixmap at the view's scale: a repaint while panning is a copy
        self.setCacheMode(_DEVICE_CACHE)
        self.setAcceptHoverEvents(True)
        # above the links (z -1) and the overview (z -2) at Qt's default z of 0: setZValue here
        # would be two more calls into Python per item

    def setPos(self, *args) -> None:  # noqa: N802 - QGraphicsItem's name: Python callers come here
        """Move the item (snapped to the grid when snapping is on) and its links with it."""
        pos = QPointF(*args) if len(args) == 2 else QPointF(args[0])
        scene = self.scene()
        if self.snap and scene is not None:
            pos = QPointF(*snapped(pos.x(), pos.y()))
        if pos != self.pos():
            QGraphicsItem.setPos(self, pos)
            if scene is not None:
                scene.node_moved(self)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        """Qt moves every selected node with the mouse; each then snaps and its links follow."""
        super().mouseMoveEvent(event)
        scene = self.scene()
        if scene is None:
            return
        moved = [i for i in scene.selectedItems() if isinstance(i, NodeItem)]
        if not self.isSelected():
            moved.append(self)
        for item in moved:
            if item.snap:
                x, y = snapped(item.x(), item.y())
                if (x, y) != (item.x(), item.y()):
                    QGraphicsItem.setPos(item, x, y)
            scene.node_moved(item)

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
