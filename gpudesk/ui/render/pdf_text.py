"""Text blocks of the PDF: section headings, paragraphs, bullet lists and the numbered source list.
User strings are drawn as plain text; the source list's markup escapes every field."""

from __future__ import annotations

import html

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPen

from gpudesk.core.report.content import Bullets, Paragraph, SourceList
from gpudesk.ui.render.charts import INK, MUTED
from gpudesk.ui.render.pdf_page import ACCENT, PageCursor, draw_on_paper, font


class TextBlocks:
    """Places text blocks at the cursor, starting a new page when one does not fit."""

    def __init__(self, cursor: PageCursor):
        self.c = cursor

    def heading(self, text: str, follow: float = 60.0) -> None:
        """A section title with an accent rule; `follow` points of what comes next must fit too."""
        c = self.c
        c.ensure(30 + follow)
        y = c.y + 6
        c.op(lambda p, y=y: (p.setFont(font(13.5, True)), p.setPen(INK),
                             p.drawText(QRectF(c.left, y, c.content_w, 20), int(Qt.AlignmentFlag.AlignLeft), text),
                             p.setPen(QPen(ACCENT, 1.4)),
                             p.drawLine(QPointF(c.left, y + 21), QPointF(c.left + 36, y + 21))))
        c.y = y + 30

    def paragraph(self, block: Paragraph) -> None:
        c = self.c
        size = {"lead": 10.0, "note": 8.0}.get(block.style, 9.0)
        doc = c.document(block.text, c.content_w, font(size, italic=block.style == "note"))
        h = doc.size().height()
        c.ensure(h + 4)
        y = c.y
        colour = MUTED if block.style == "note" else INK

        def draw(p, doc=doc, y=y, colour=colour):
            p.save()
            p.translate(c.left, y)
            ctx = QAbstractTextDocumentLayout.PaintContext()
            ctx.palette.setColor(ctx.palette.ColorRole.Text, colour)
            doc.documentLayout().draw(p, ctx)
            p.restore()

        c.op(draw)
        c.y += h + 7

    def bullets(self, block: Bullets) -> None:
        c = self.c
        body = font(8.0)
        for item in block.items:
            doc = c.document(item, c.content_w - 12, body)
            h = doc.size().height()
            c.ensure(h + 2)
            y = c.y

            def draw(p, doc=doc, y=y):
                p.setFont(font(8.0))
                p.setPen(INK)
                p.drawText(QPointF(c.left + 1, y + 8.5), "•")
                p.save()
                p.translate(c.left + 12, y)
                draw_on_paper(p, doc)
                p.restore()

            c.op(draw)
            c.y += h + 3
        c.y += 4

    def sources(self, block: SourceList) -> None:
        c = self.c
        body = font(7.8)
        for src in block.sources:
            doc = c.document("", c.content_w, body, _source_html(src))
            h = doc.size().height()
            c.ensure(h + 3)
            y = c.y

            def draw(p, doc=doc, y=y):
                p.save()
                p.translate(c.left, y)
                draw_on_paper(p, doc)
                p.restore()

            c.op(draw)
            c.y += h + 6


def _source_html(src: dict) -> str:
    """One numbered source as escaped rich text: title, publisher and date, link, what it was used for."""
    title = html.escape(src.get("title") or "")
    url = src.get("url") or ""
    link = f'<a href="{html.escape(url, quote=True)}">{html.escape(url)}</a>' if url else ""
    meta = ", ".join(html.escape(x) for x in (src.get("publisher") or "", src.get("date") or "undated") if x)
    figures = html.escape("; ".join(src.get("figures") or [])[:600])
    entered = f" {html.escape(src['entered'])}." if src.get("entered") else ""
    return (f"<b>[{src['number']}]</b> {title} — {meta}.{entered}" + (f"<br/>{link}" if link else "")
            + (f'<br/><span style="color:{MUTED.name()}">Used for: {figures}</span>' if figures else ""))
