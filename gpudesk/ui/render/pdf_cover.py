"""The PDF's cover page: the title band, the question, the facts (date, author, catalogue...), the
recommendation in a shaded box, and the highlights "at a glance"."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt

from gpudesk import APP_DISPLAY_NAME
from gpudesk.core.report.content import Paragraph, Report
from gpudesk.ui.render.charts import INK, MUTED
from gpudesk.ui.render.pdf_page import (
    ACCENT,
    BAND_FILL,
    BAND_INK,
    BAND_SUBTITLE,
    CALLOUT_FILL,
    PageCursor,
    draw_on_paper,
    font,
)
from gpudesk.ui.render.pdf_text import TextBlocks

BAND_H = 118.0


class CoverPlacer:
    """Lays out the cover of `report` on the cursor's current (first) page."""

    def __init__(self, cursor: PageCursor, text: TextBlocks, report: Report):
        self.c, self.text, self.report = cursor, text, report

    def place(self) -> None:
        self._band()
        self._question()
        self.text.paragraph(Paragraph(self.report.subtitle, "lead"))
        self.c.y += 6
        self._facts()
        self.c.y += 16
        self._recommendation()
        if self.report.highlights:
            self._highlights()

    def _band(self) -> None:
        c, rep = self.c, self.report

        def draw_band(p):
            p.fillRect(QRectF(0, 0, c.width, BAND_H), BAND_FILL)
            p.fillRect(QRectF(0, BAND_H, c.width, 3), ACCENT)
            p.setPen(BAND_INK)
            p.setFont(font(20, True))
            p.drawText(QPointF(c.left, 58), APP_DISPLAY_NAME)
            p.setFont(font(10))
            p.setPen(BAND_SUBTITLE)
            p.drawText(QPointF(c.left, 80), rep.title)
            p.drawText(QRectF(c.left, 48, c.content_w, 40), int(Qt.AlignmentFlag.AlignRight), rep.date)

        c.op(draw_band)
        c.y = BAND_H + 40

    def _question(self) -> None:
        c, question = self.c, self.report.question
        title_font = font(19, True)
        h = c.text_height(question, c.content_w, title_font)
        c.op(lambda p, y=c.y, h=h: (p.setFont(title_font), p.setPen(INK),
                                    p.drawText(QRectF(c.left, y, c.content_w, h + 4), int(Qt.TextFlag.TextWordWrap), question)))
        c.y += h + 12

    def _facts(self) -> None:
        c, rep = self.c, self.report
        facts = [("Date", rep.date), ("Prepared by", rep.author or "—"), ("Organisation", rep.organisation or "—"),
                 ("Catalogue version", rep.catalogue_version), ("Prices as of", rep.prices_as_of or rep.date),
                 ("Tool", f"{APP_DISPLAY_NAME} {rep.app_version}")]
        for label, value in facts:
            c.op(lambda p, y=c.y, label=label, value=value: (
                p.setFont(font(8.5)), p.setPen(MUTED), p.drawText(QPointF(c.left, y + 10), label),
                p.setFont(font(8.5, True)), p.setPen(INK),
                p.drawText(QRectF(c.left + 120, y, c.content_w - 120, 14), int(Qt.AlignmentFlag.AlignLeft), value)))
            c.y += 15

    def _recommendation(self) -> None:
        """The recommendation in a shaded box with an accent bar."""
        c = self.c
        body = c.document(self.report.recommendation, c.content_w - 24, font(9.5))
        bh = body.size().height()

        def draw_box(p, y=c.y, bh=bh, body=body):
            p.fillRect(QRectF(c.left, y, c.content_w, bh + 42), CALLOUT_FILL)
            p.fillRect(QRectF(c.left, y, 3, bh + 42), ACCENT)
            p.setFont(font(10.5, True))
            p.setPen(INK)
            p.drawText(QPointF(c.left + 12, y + 20), "Recommendation")
            p.save()
            p.translate(c.left + 12, y + 30)
            draw_on_paper(p, body)
            p.restore()

        c.op(draw_box)
        c.y += bh + 58

    def _highlights(self) -> None:
        c = self.c
        c.op(lambda p, y=c.y: (p.setFont(font(10.5, True)), p.setPen(INK), p.drawText(QPointF(c.left, y + 12), "At a glance")))
        c.y += 22
        for label, value in self.report.highlights:
            hv = c.text_height(value, c.content_w - 190, font(8.5, True))
            c.op(lambda p, y=c.y, label=label, value=value, hv=hv: (
                p.setFont(font(8.5)), p.setPen(MUTED),
                p.drawText(QRectF(c.left, y, 185, hv + 2), int(Qt.TextFlag.TextWordWrap), label),
                p.setFont(font(8.5, True)), p.setPen(INK),
                p.drawText(QRectF(c.left + 190, y, c.content_w - 190, hv + 2), int(Qt.TextFlag.TextWordWrap), value)))
            c.y += max(hv, 12) + 6
