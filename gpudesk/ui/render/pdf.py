"""The PDF renderer: a Report drawn with QPdfWriter and QPainter — selectable text, vector charts,
numbered pages, A4 or Letter. The same function serves the compare view and `gpudesk compare --pdf`.

Layout happens in two passes (place every block, then draw) so that each footer can say
"page n of N". User-supplied names are drawn as plain text, never interpreted as markup.
"""

from __future__ import annotations

import html
import os
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QMarginsF, QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QPen,
    QTextDocument,
    QTextOption,
)

from gpudesk import APP_DISPLAY_NAME, __version__
from gpudesk.core.report.content import (
    BarChart,
    Bullets,
    Figure,
    LineChart,
    Paragraph,
    Report,
    ScatterChart,
    Section,
    SourceList,
    Table,
)
from gpudesk.ui import theme
from gpudesk.ui.render.charts import INK, MUTED, draw_chart

PAGE_SIZES = {"A4": QPageSize.PageSizeId.A4, "Letter": QPageSize.PageSizeId.Letter}
RESOLUTION = 72  # one device unit is one point; the PDF keeps text and shapes as vectors anyway
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 50.0, 56.0, 58.0
# The theme's print variant: the PDF is read on white paper, whichever palette the screen has.
ACCENT = theme.print_colour("accent")
WIN_FILL = theme.print_colour("winner_fill")
WIN_INK = theme.print_colour("winner_ink")
SECTION_FILL = theme.print_colour("section_fill")
RULE = theme.print_colour("rule")
BAND_FILL = theme.print_colour("band_fill")
BAND_INK = theme.print_colour("band_ink")
BAND_SUBTITLE = theme.print_colour("band_subtitle")
ROW_ALT = theme.print_colour("row_alt")
CALLOUT_FILL = theme.print_colour("callout_fill")


def _draw_on_paper(p: QPainter, doc: QTextDocument) -> None:
    """Draw rich text in the print colours: QTextDocument.drawContents would take the text and link
    colours from the application palette, which may be a dark screen palette."""
    ctx = QAbstractTextDocumentLayout.PaintContext()
    ctx.palette.setColor(ctx.palette.ColorRole.Text, INK)
    ctx.palette.setColor(ctx.palette.ColorRole.Link, ACCENT)
    doc.documentLayout().draw(p, ctx)


def _font(size: float, bold: bool = False, italic: bool = False) -> QFont:
    f = QFont(theme.PRINT_FONT)
    f.setPointSizeF(size)
    f.setBold(bold)
    f.setItalic(italic)
    no_ligatures(f)
    return f


def no_ligatures(f: QFont) -> QFont:
    """'fi' drawn as one glyph reads back as U+FB01 and defeats searching the PDF: keep letters apart."""
    if hasattr(f, "setFeature"):  # Qt >= 6.7
        for tag in ("liga", "clig", "dlig"):
            f.setFeature(QFont.Tag(tag), 0)
    else:  # pragma: no cover - older Qt: letter spacing also turns ligatures off
        f.setLetterSpacing(QFont.SpacingType.AbsoluteSpacing, 0.01)
    return f


def ensure_gui_application():
    """QPdfWriter and fonts need a Qt application; the CLI runs without a window."""
    app = QGuiApplication.instance()
    if app is None:
        if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from PySide6.QtWidgets import QApplication

        app = QApplication(sys.argv[:1])
    return app


class _Layout:
    """Places blocks on pages; each page is a list of drawing operations."""

    def __init__(self, width: float, height: float, report: Report, device):
        self.device = device  # fonts are measured on the PDF device, so the layout matches the drawing
        self.width, self.height = width, height
        self.left = MARGIN_X
        self.right = width - MARGIN_X
        self.content_w = self.right - self.left
        self.bottom = height - MARGIN_BOTTOM
        self.report = report
        self.pages: list[list] = []
        self.y = 0.0
        self.new_page()

    # -- pages
    def new_page(self) -> None:
        self.pages.append([])
        self.y = MARGIN_TOP

    def op(self, fn) -> None:
        self.pages[-1].append(fn)

    def ensure(self, height: float) -> None:
        if self.y + height > self.bottom and self.y > MARGIN_TOP + 1:
            self.new_page()

    # -- measuring
    def text_height(self, text: str, width: float, font: QFont) -> float:
        fm = QFontMetricsF(font, self.device)
        rect = fm.boundingRect(QRectF(0, 0, width, 1e6), int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft), text)
        return rect.height()

    def document(self, text: str, width: float, font: QFont, html_text: str | None = None) -> QTextDocument:
        doc = QTextDocument()
        doc.documentLayout().setPaintDevice(self.device)
        doc.setDefaultFont(font)
        doc.setDocumentMargin(0)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(option)
        if html_text is not None:
            # links take the application palette's colour when parsed; on paper they take the print one
            doc.setDefaultStyleSheet(f"a {{ color: {ACCENT.name()}; }}")
            doc.setHtml(html_text)
        else:
            doc.setPlainText(text)  # user text is never markup
        doc.setTextWidth(width)
        return doc

    # -- blocks
    def heading(self, text: str, follow: float = 60.0) -> None:
        self.ensure(30 + follow)
        y = self.y + 6
        self.op(lambda p, y=y: (p.setFont(_font(13.5, True)), p.setPen(INK),
                                p.drawText(QRectF(self.left, y, self.content_w, 20), int(Qt.AlignmentFlag.AlignLeft), text),
                                p.setPen(QPen(ACCENT, 1.4)),
                                p.drawLine(QPointF(self.left, y + 21), QPointF(self.left + 36, y + 21))))
        self.y = y + 30

    def paragraph(self, block: Paragraph) -> None:
        size = {"lead": 10.0, "note": 8.0}.get(block.style, 9.0)
        font = _font(size, italic=block.style == "note")
        doc = self.document(block.text, self.content_w, font)
        h = doc.size().height()
        self.ensure(h + 4)
        y = self.y
        colour = MUTED if block.style == "note" else INK

        def draw(p, doc=doc, y=y, colour=colour):
            p.save()
            p.translate(self.left, y)
            ctx = QAbstractTextDocumentLayout.PaintContext()
            ctx.palette.setColor(ctx.palette.ColorRole.Text, colour)
            doc.documentLayout().draw(p, ctx)
            p.restore()

        self.op(draw)
        self.y += h + 7

    def bullets(self, block: Bullets) -> None:
        font = _font(8.0)
        for item in block.items:
            doc = self.document(item, self.content_w - 12, font)
            h = doc.size().height()
            self.ensure(h + 2)
            y = self.y

            def draw(p, doc=doc, y=y):
                p.setFont(_font(8.0))
                p.setPen(INK)
                p.drawText(QPointF(self.left + 1, y + 8.5), "•")
                p.save()
                p.translate(self.left + 12, y)
                _draw_on_paper(p, doc)
                p.restore()

            self.op(draw)
            self.y += h + 3
        self.y += 4

    def sources(self, block: SourceList) -> None:
        font = _font(7.8)
        for src in block.sources:
            title = html.escape(src.get("title") or "")
            url = src.get("url") or ""
            link = f'<a href="{html.escape(url, quote=True)}">{html.escape(url)}</a>' if url else ""
            meta = ", ".join(html.escape(x) for x in (src.get("publisher") or "", src.get("date") or "undated") if x)
            figures = html.escape("; ".join(src.get("figures") or [])[:600])
            body = (f"<b>[{src['number']}]</b> {title} — {meta}.<br/>{link}"
                    + (f'<br/><span style="color:{MUTED.name()}">Used for: {figures}</span>' if figures else ""))
            doc = self.document("", self.content_w, font, body)
            h = doc.size().height()
            self.ensure(h + 3)
            y = self.y

            def draw(p, doc=doc, y=y):
                p.save()
                p.translate(self.left, y)
                _draw_on_paper(p, doc)
                p.restore()

            self.op(draw)
            self.y += h + 6

    def chart(self, block, height: float = 235.0) -> None:
        caption_h = self.text_height(block.caption, self.content_w, _font(7.5, italic=True)) if block.caption else 0
        self.ensure(height + caption_h + 10)
        rect = QRectF(self.left, self.y, self.content_w, height)
        self.op(lambda p, rect=rect, block=block: draw_chart(p, rect, block))
        self.y += height + 4
        if block.caption:
            y = self.y
            self.op(lambda p, y=y, text=block.caption: (p.setFont(_font(7.5, italic=True)), p.setPen(MUTED),
                                                       p.drawText(QRectF(self.left, y, self.content_w, caption_h + 2),
                                                                  int(Qt.TextFlag.TextWordWrap), text)))
            self.y += caption_h + 8
        self.y += 10

    def figure(self, block: Figure) -> None:
        """An SVG drawn as vectors (or a PNG), scaled to the content width, at most half a page tall."""
        path = block.path
        if path.lower().endswith(".svg"):
            from PySide6.QtSvg import QSvgRenderer

            renderer = QSvgRenderer(path)
            size = renderer.viewBoxF().size() if renderer.isValid() else QSizeF(4, 3)
        else:
            from PySide6.QtGui import QImage

            image = QImage(path)
            renderer = None
            size = QSizeF(image.width(), image.height()) if not image.isNull() else QSizeF(4, 3)
        scale = min(self.content_w / max(size.width(), 1), (self.bottom - MARGIN_TOP) * 0.55 / max(size.height(), 1))
        w, h = size.width() * scale, size.height() * scale
        self.ensure(h + 24)
        rect = QRectF(self.left + (self.content_w - w) / 2, self.y, w, h)

        def draw(p, rect=rect, renderer=renderer, path=path):
            p.setPen(QPen(RULE, 0.6))
            p.drawRect(rect.adjusted(-2, -2, 2, 2))
            if renderer is not None:
                renderer.render(p, rect)
            else:
                from PySide6.QtGui import QImage

                p.drawImage(rect, QImage(path))

        self.op(draw)
        self.y += h + 8
        if block.caption:
            self.paragraph(Paragraph(block.caption, "note"))
        self._keep = renderer  # the renderer must outlive the drawing

    def table(self, block: Table) -> None:
        n_opts = len(block.columns) - 1
        label_w = min(150.0, self.content_w * 0.3)
        col_w = (self.content_w - label_w) / max(1, n_opts)
        body_font, head_font, small = _font(7.2), _font(7.4, True), _font(6.2)
        pad = 3.0

        def row_height(cells: list[str], direction: str) -> float:
            h = self.text_height(cells[0], label_w - 2 * pad, body_font)
            if direction:
                h += self.text_height(direction, label_w - 2 * pad, small)
            for text in cells[1:]:
                h = max(h, self.text_height("★ " + text, col_w - 2 * pad, body_font))
            return h + 2 * pad

        header_h = max(self.text_height(c, col_w - 2 * pad, head_font) for c in block.columns[1:]) + 2 * pad + 2

        def draw_header(p, y):
            p.fillRect(QRectF(self.left, y, self.content_w, header_h), BAND_FILL)
            p.setFont(head_font)
            p.setPen(BAND_INK)
            p.drawText(QRectF(self.left + pad, y + pad, label_w - 2 * pad, header_h - 2 * pad),
                       int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), block.columns[0])
            for i, name in enumerate(block.columns[1:]):
                x = self.left + label_w + i * col_w
                p.drawText(QRectF(x + pad, y + pad, col_w - 2 * pad, header_h - 2 * pad),
                           int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter), name)

        self.ensure(header_h + 60)
        self.op(lambda p, y=self.y: draw_header(p, y))
        self.y += header_h
        current_section = None
        for r, cells in enumerate(block.rows):
            section = block.sections[r] if r < len(block.sections) else ""
            direction = block.directions[r] if r < len(block.directions) else ""
            winners = block.winners[r] if r < len(block.winners) else []
            h = row_height(cells, direction)
            sec_h = 14.0 if section != current_section and section else 0.0
            if self.y + h + sec_h > self.bottom:
                self.new_page()
                self.op(lambda p, y=self.y: draw_header(p, y))
                self.y += header_h
                current_section = None
                sec_h = 14.0 if section else 0.0
            if sec_h:
                y = self.y
                self.op(lambda p, y=y, section=section: (
                    p.fillRect(QRectF(self.left, y, self.content_w, 14), SECTION_FILL), p.setFont(_font(7.4, True)),
                    p.setPen(INK), p.drawText(QRectF(self.left + pad, y, self.content_w, 14),
                                              int(Qt.AlignmentFlag.AlignVCenter), section)))
                self.y += sec_h
                current_section = section
            y = self.y

            def draw_row(p, y=y, h=h, cells=cells, winners=winners, direction=direction, r=r):
                if r % 2:
                    p.fillRect(QRectF(self.left, y, self.content_w, h), ROW_ALT)
                for i in winners:
                    p.fillRect(QRectF(self.left + label_w + i * col_w, y, col_w, h), WIN_FILL)
                p.setFont(body_font)
                p.setPen(INK)
                label_h = self.text_height(cells[0], label_w - 2 * pad, body_font)
                p.drawText(QRectF(self.left + pad, y + pad, label_w - 2 * pad, label_h + 1), int(Qt.TextFlag.TextWordWrap), cells[0])
                if direction:
                    p.setFont(small)
                    p.setPen(MUTED)
                    p.drawText(QRectF(self.left + pad, y + pad + label_h, label_w - 2 * pad, h), int(Qt.TextFlag.TextWordWrap), direction)
                for i, text in enumerate(cells[1:]):
                    win = i in winners
                    p.setFont(_font(7.2, bold=win))
                    p.setPen(WIN_INK if win else INK)
                    p.drawText(QRectF(self.left + label_w + i * col_w + pad, y + pad, col_w - 2 * pad, h - 2 * pad),
                               int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop),
                               ("★ " if win else "") + text)
                p.setPen(QPen(RULE, 0.4))
                p.drawLine(QPointF(self.left, y + h), QPointF(self.right, y + h))

            self.op(draw_row)
            self.y += h
        if block.note:
            self.y += 5
            self.paragraph(Paragraph(block.note, "note"))
        self.y += 6

    # -- the cover
    def cover(self) -> None:
        rep = self.report
        band = 118.0

        def draw_band(p):
            p.fillRect(QRectF(0, 0, self.width, band), BAND_FILL)
            p.fillRect(QRectF(0, band, self.width, 3), ACCENT)
            p.setPen(BAND_INK)
            p.setFont(_font(20, True))
            p.drawText(QPointF(self.left, 58), APP_DISPLAY_NAME)
            p.setFont(_font(10))
            p.setPen(BAND_SUBTITLE)
            p.drawText(QPointF(self.left, 80), rep.title)
            p.drawText(QRectF(self.left, 48, self.content_w, 40), int(Qt.AlignmentFlag.AlignRight), rep.date)

        self.op(draw_band)
        self.y = band + 40
        title_font = _font(19, True)
        h = self.text_height(rep.question, self.content_w, title_font)
        y = self.y
        self.op(lambda p, y=y, h=h: (p.setFont(title_font), p.setPen(INK),
                                     p.drawText(QRectF(self.left, y, self.content_w, h + 4), int(Qt.TextFlag.TextWordWrap), rep.question)))
        self.y += h + 12
        self.paragraph(Paragraph(rep.subtitle, "lead"))
        self.y += 6
        facts = [("Date", rep.date), ("Prepared by", rep.author or "—"), ("Organisation", rep.organisation or "—"),
                 ("Catalogue version", rep.catalogue_version), ("Prices as of", rep.prices_as_of or rep.date),
                 ("Tool", f"{APP_DISPLAY_NAME} {rep.app_version}")]
        for label, value in facts:
            y = self.y
            self.op(lambda p, y=y, label=label, value=value: (
                p.setFont(_font(8.5)), p.setPen(MUTED), p.drawText(QPointF(self.left, y + 10), label),
                p.setFont(_font(8.5, True)), p.setPen(INK),
                p.drawText(QRectF(self.left + 120, y, self.content_w - 120, 14), int(Qt.AlignmentFlag.AlignLeft), value)))
            self.y += 15
        self.y += 16
        # the recommendation in a shaded box
        body = self.document(rep.recommendation, self.content_w - 24, _font(9.5))
        bh = body.size().height()
        y = self.y

        def draw_box(p, y=y, bh=bh, body=body):
            p.fillRect(QRectF(self.left, y, self.content_w, bh + 42), CALLOUT_FILL)
            p.fillRect(QRectF(self.left, y, 3, bh + 42), ACCENT)
            p.setFont(_font(10.5, True))
            p.setPen(INK)
            p.drawText(QPointF(self.left + 12, y + 20), "Recommendation")
            p.save()
            p.translate(self.left + 12, y + 30)
            _draw_on_paper(p, body)
            p.restore()

        self.op(draw_box)
        self.y += bh + 58
        if rep.highlights:
            y = self.y
            self.op(lambda p, y=y: (p.setFont(_font(10.5, True)), p.setPen(INK), p.drawText(QPointF(self.left, y + 12), "At a glance")))
            self.y += 22
            for label, value in rep.highlights:
                hv = self.text_height(value, self.content_w - 190, _font(8.5, True))
                y = self.y
                self.op(lambda p, y=y, label=label, value=value, hv=hv: (
                    p.setFont(_font(8.5)), p.setPen(MUTED),
                    p.drawText(QRectF(self.left, y, 185, hv + 2), int(Qt.TextFlag.TextWordWrap), label),
                    p.setFont(_font(8.5, True)), p.setPen(INK),
                    p.drawText(QRectF(self.left + 190, y, self.content_w - 190, hv + 2), int(Qt.TextFlag.TextWordWrap), value)))
                self.y += max(hv, 12) + 6

    def section(self, section: Section) -> None:
        first = section.blocks[0] if section.blocks else None
        self.heading(section.title, 260.0 if isinstance(first, (BarChart, ScatterChart, LineChart)) else 60.0)
        for block in section.blocks:
            if isinstance(block, Paragraph):
                self.paragraph(block)
            elif isinstance(block, Table):
                self.table(block)
            elif isinstance(block, (BarChart, ScatterChart, LineChart)):
                self.chart(block)
            elif isinstance(block, Bullets):
                self.bullets(block)
            elif isinstance(block, SourceList):
                self.sources(block)
            elif isinstance(block, Figure):
                self.figure(block)
        self.y += 8


def _footer(p: QPainter, width: float, height: float, report: Report, page: int, pages: int) -> None:
    y = height - MARGIN_BOTTOM + 22
    p.setPen(QPen(RULE, 0.6))
    p.drawLine(QPointF(MARGIN_X, y - 8), QPointF(width - MARGIN_X, y - 8))
    p.setFont(_font(7))
    p.setPen(MUTED)
    p.drawText(QPointF(MARGIN_X, y + 4), f"{APP_DISPLAY_NAME} {report.app_version} · catalogue {report.catalogue_version} · {report.date}")
    p.drawText(QRectF(MARGIN_X, y - 6, width - 2 * MARGIN_X, 14), int(Qt.AlignmentFlag.AlignRight), f"Page {page} of {pages}")
    if page > 1:
        fm = QFontMetricsF(p.font(), p.device())
        p.drawText(QPointF(MARGIN_X, MARGIN_TOP - 22), fm.elidedText(report.question, Qt.TextElideMode.ElideRight, width - 2 * MARGIN_X))


def render_report_pdf(report: Report, path: str | os.PathLike[str], page_size: str = "A4") -> Path:
    """Write `report` as a PDF at `path` (atomically: a temporary file renamed into place)."""
    ensure_gui_application()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    size = QPageSize(PAGE_SIZES.get(page_size, QPageSize.PageSizeId.A4))
    points = size.size(QPageSize.Unit.Point)
    width, height = points.width(), points.height()

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        writer = QPdfWriter(tmp)
        writer.setPageLayout(QPageLayout(size, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
        writer.setResolution(RESOLUTION)
        writer.setTitle(report.question)
        writer.setCreator(f"{APP_DISPLAY_NAME} {__version__}")
        if hasattr(writer, "setAuthor") and report.author:
            writer.setAuthor(report.author)
        layout = _Layout(width, height, report, writer)
        layout.cover()
        for section in report.sections:
            if section.title == "Comparison table":
                layout.new_page()
            layout.section(section)
        pages = layout.pages
        painter = QPainter(writer)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        for index, ops in enumerate(pages):
            if index:
                writer.newPage()
            for op in ops:
                op(painter)
            _footer(painter, width, height, report, index + 1, len(pages))
        painter.end()
        pages.clear()  # drop the laid-out text documents while Qt is alive
        del layout, writer
        os.replace(tmp, target)
        _default_permissions(target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


def _default_permissions(path: Path) -> None:
    """mkstemp creates 0600; a report is an ordinary document: honour the umask."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def render_comparison_pdf(comparison, path, author: str = "", organisation: str = "", page_size: str = "A4") -> Path:
    from gpudesk.core.report.content import comparison_report

    return render_report_pdf(comparison_report(comparison, author, organisation), path, page_size)


__all__ = ["render_report_pdf", "render_comparison_pdf", "ensure_gui_application", "QSizeF"]
