"""Charts and figures in the PDF: vector charts at the content width with an optional caption, and
SVG (drawn as vectors) or PNG figures scaled to fit."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSizeF, Qt
from PySide6.QtGui import QPen

from gpudesk.core.report.content import Figure, Paragraph
from gpudesk.ui.render.charts import MUTED, draw_chart
from gpudesk.ui.render.pdf_page import MARGIN_TOP, RULE, PageCursor, font
from gpudesk.ui.render.pdf_text import TextBlocks


class FigurePlacer:
    """Places charts and figures at the cursor; captions of figures go through the text blocks."""

    def __init__(self, cursor: PageCursor, text: TextBlocks):
        self.c = cursor
        self.text = text
        self._keep = None

    def chart(self, block, height: float = 235.0) -> None:
        c = self.c
        caption_h = c.text_height(block.caption, c.content_w, font(7.5, italic=True)) if block.caption else 0
        c.ensure(height + caption_h + 10)
        rect = QRectF(c.left, c.y, c.content_w, height)
        c.op(lambda p, rect=rect, block=block: draw_chart(p, rect, block))
        c.y += height + 4
        if block.caption:
            y = c.y
            c.op(lambda p, y=y, text=block.caption: (p.setFont(font(7.5, italic=True)), p.setPen(MUTED),
                                                    p.drawText(QRectF(c.left, y, c.content_w, caption_h + 2),
                                                               int(Qt.TextFlag.TextWordWrap), text)))
            c.y += caption_h + 8
        c.y += 10

    def figure(self, block: Figure) -> None:
        """An SVG drawn as vectors (or a PNG), scaled to the content width, at most half a page tall."""
        c = self.c
        path = block.path
        renderer, size = _load(path)
        scale = min(c.content_w / max(size.width(), 1), (c.bottom - MARGIN_TOP) * 0.55 / max(size.height(), 1))
        w, h = size.width() * scale, size.height() * scale
        c.ensure(h + 24)
        rect = QRectF(c.left + (c.content_w - w) / 2, c.y, w, h)

        def draw(p, rect=rect, renderer=renderer, path=path):
            p.setPen(QPen(RULE, 0.6))
            p.drawRect(rect.adjusted(-2, -2, 2, 2))
            if renderer is not None:
                renderer.render(p, rect)
            else:
                from PySide6.QtGui import QImage

                p.drawImage(rect, QImage(path))

        c.op(draw)
        c.y += h + 8
        if block.caption:
            self.text.paragraph(Paragraph(block.caption, "note"))
        self._keep = renderer  # the renderer must outlive the drawing


def _load(path: str):
    """(an SVG renderer or None for a bitmap, the natural size); a file that cannot be read is 4 by 3."""
    if path.lower().endswith(".svg"):
        from PySide6.QtSvg import QSvgRenderer

        renderer = QSvgRenderer(path)
        return renderer, renderer.viewBoxF().size() if renderer.isValid() else QSizeF(4, 3)
    from PySide6.QtGui import QImage

    image = QImage(path)
    return None, QSizeF(image.width(), image.height()) if not image.isNull() else QSizeF(4, 3)
