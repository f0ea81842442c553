"""The comparison table in the PDF: a header band (repeated on every page the table spans), section
bands, alternate row shading, and the winning cells filled and starred."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPen

from gpudesk.core.report.content import Paragraph, Table
from gpudesk.ui.render.charts import INK, MUTED
from gpudesk.ui.render.pdf_page import (
    BAND_FILL,
    BAND_INK,
    ROW_ALT,
    RULE,
    SECTION_FILL,
    WIN_FILL,
    WIN_INK,
    PageCursor,
    font,
)
from gpudesk.ui.render.pdf_text import TextBlocks

PAD = 3.0
SECTION_H = 14.0


class TablePlacer:
    """Lays out one Table at the cursor: the label column, then one equal column per option."""

    def __init__(self, cursor: PageCursor, text: TextBlocks, block: Table):
        self.c, self.text, self.block = cursor, text, block
        n_opts = len(block.columns) - 1
        self.label_w = min(150.0, cursor.content_w * 0.3)
        self.col_w = (cursor.content_w - self.label_w) / max(1, n_opts)
        self.body_font, self.head_font, self.small = font(7.2), font(7.4, True), font(6.2)
        self.header_h = max(cursor.text_height(name, self.col_w - 2 * PAD, self.head_font)
                            for name in block.columns[1:]) + 2 * PAD + 2

    # -- measuring
    def row_height(self, cells: list[str], direction: str) -> float:
        c, label_w = self.c, self.label_w
        h = c.text_height(cells[0], label_w - 2 * PAD, self.body_font)
        if direction:
            h += c.text_height(direction, label_w - 2 * PAD, self.small)
        for text in cells[1:]:
            h = max(h, c.text_height("★ " + text, self.col_w - 2 * PAD, self.body_font))
        return h + 2 * PAD

    def _row_meta(self, r: int) -> tuple[str, str, list[int]]:
        """(section, direction, winners) of row `r`; the lists may be shorter than the rows."""
        b = self.block
        section = b.sections[r] if r < len(b.sections) else ""
        direction = b.directions[r] if r < len(b.directions) else ""
        winners = b.winners[r] if r < len(b.winners) else []
        return section, direction, winners

    # -- placing
    def place(self) -> None:
        c = self.c
        c.ensure(self.header_h + 60)
        self._place_header()
        current_section = None
        for r, cells in enumerate(self.block.rows):
            section, direction, winners = self._row_meta(r)
            h = self.row_height(cells, direction)
            sec_h = SECTION_H if section != current_section and section else 0.0
            if c.y + h + sec_h > c.bottom:
                c.new_page()
                self._place_header()
                current_section = None
                sec_h = SECTION_H if section else 0.0
            if sec_h:
                self._place_section(section)
                current_section = section
            y = c.y
            c.op(lambda p, y=y, h=h, cells=cells, winners=winners, direction=direction, r=r:
                 self.draw_row(p, y, h, cells, winners, direction, r))
            c.y += h
        if self.block.note:
            c.y += 5
            self.text.paragraph(Paragraph(self.block.note, "note"))
        c.y += 6

    def _place_header(self) -> None:
        self.c.op(lambda p, y=self.c.y: self.draw_header(p, y))
        self.c.y += self.header_h

    def _place_section(self, section: str) -> None:
        c = self.c
        c.op(lambda p, y=c.y, section=section: (
            p.fillRect(QRectF(c.left, y, c.content_w, SECTION_H), SECTION_FILL), p.setFont(font(7.4, True)),
            p.setPen(INK), p.drawText(QRectF(c.left + PAD, y, c.content_w, SECTION_H),
                                      int(Qt.AlignmentFlag.AlignVCenter), section)))
        c.y += SECTION_H

    # -- drawing
    def draw_header(self, p, y: float) -> None:
        c, label_w, col_w, header_h = self.c, self.label_w, self.col_w, self.header_h
        p.fillRect(QRectF(c.left, y, c.content_w, header_h), BAND_FILL)
        p.setFont(self.head_font)
        p.setPen(BAND_INK)
        p.drawText(QRectF(c.left + PAD, y + PAD, label_w - 2 * PAD, header_h - 2 * PAD),
                   int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), self.block.columns[0])
        for i, name in enumerate(self.block.columns[1:]):
            x = c.left + label_w + i * col_w
            p.drawText(QRectF(x + PAD, y + PAD, col_w - 2 * PAD, header_h - 2 * PAD),
                       int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter), name)

    def draw_row(self, p, y: float, h: float, cells: list[str], winners: list[int], direction: str, r: int) -> None:
        c, label_w, col_w = self.c, self.label_w, self.col_w
        if r % 2:
            p.fillRect(QRectF(c.left, y, c.content_w, h), ROW_ALT)
        for i in winners:
            p.fillRect(QRectF(c.left + label_w + i * col_w, y, col_w, h), WIN_FILL)
        p.setFont(self.body_font)
        p.setPen(INK)
        label_h = c.text_height(cells[0], label_w - 2 * PAD, self.body_font)
        p.drawText(QRectF(c.left + PAD, y + PAD, label_w - 2 * PAD, label_h + 1), int(Qt.TextFlag.TextWordWrap), cells[0])
        if direction:
            p.setFont(self.small)
            p.setPen(MUTED)
            p.drawText(QRectF(c.left + PAD, y + PAD + label_h, label_w - 2 * PAD, h), int(Qt.TextFlag.TextWordWrap), direction)
        for i, text in enumerate(cells[1:]):
            win = i in winners
            p.setFont(font(7.2, bold=win))
            p.setPen(WIN_INK if win else INK)
            p.drawText(QRectF(c.left + label_w + i * col_w + PAD, y + PAD, col_w - 2 * PAD, h - 2 * PAD),
                       int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop),
                       ("★ " if win else "") + text)
        p.setPen(QPen(RULE, 0.4))
        p.drawLine(QPointF(c.left, y + h), QPointF(c.right, y + h))
