"""The PDF renderer: a Report drawn with QPdfWriter and QPainter — selectable text, vector charts,
numbered pages, A4 or Letter. The same function serves the compare view and `gpudesk compare --pdf`.

Layout happens in two passes (place every block, then draw) so that each footer can say
"page n of N". User-supplied names are drawn as plain text, never interpreted as markup.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QMarginsF, QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QFontMetricsF, QGuiApplication, QPageLayout, QPageSize, QPainter, QPdfWriter, QPen

from gpudesk import APP_DISPLAY_NAME, __version__
from gpudesk.core.report.content import (
    BarChart,
    Bullets,
    CurveChart,
    Figure,
    LineChart,
    Paragraph,
    Report,
    ScatterChart,
    Section,
    SourceList,
    Table,
    TornadoChart,
)
from gpudesk.ui.render.charts import MUTED
from gpudesk.ui.render.pdf_cover import CoverPlacer
from gpudesk.ui.render.pdf_figures import FigurePlacer
from gpudesk.ui.render.pdf_page import MARGIN_BOTTOM, MARGIN_TOP, MARGIN_X, RULE, PageCursor, no_ligatures
from gpudesk.ui.render.pdf_page import font as _font
from gpudesk.ui.render.pdf_table import TablePlacer
from gpudesk.ui.render.pdf_text import TextBlocks

PAGE_SIZES = {"A4": QPageSize.PageSizeId.A4, "Letter": QPageSize.PageSizeId.Letter}
RESOLUTION = 72  # one device unit is one point; the PDF keeps text and shapes as vectors anyway
_CHARTS = (BarChart, ScatterChart, LineChart, CurveChart, TornadoChart)


def ensure_gui_application():
    """QPdfWriter and fonts need a Qt application; the CLI runs without a window."""
    app = QGuiApplication.instance()
    if app is None:
        if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from PySide6.QtWidgets import QApplication

        app = QApplication(sys.argv[:1])
    return app


class _Layout(PageCursor):
    """Places the report's blocks on pages (the cursor), handing each kind of block to its placer."""

    def __init__(self, width: float, height: float, report: Report, device):
        super().__init__(width, height, device)  # fonts are measured on the PDF device
        self.report = report
        self.text = TextBlocks(self)
        self.figures = FigurePlacer(self, self.text)

    def cover(self) -> None:
        CoverPlacer(self, self.text, self.report).place()

    def section(self, section: Section) -> None:
        first = section.blocks[0] if section.blocks else None
        if section.new_page and self.y > MARGIN_TOP + 1:
            self.new_page()
        self.text.heading(section.title, 260.0 if isinstance(first, _CHARTS) else 60.0)
        for block in section.blocks:
            if isinstance(block, Paragraph):
                self.text.paragraph(block)
            elif isinstance(block, Table):
                TablePlacer(self, self.text, block).place()
            elif isinstance(block, _CHARTS):
                self.figures.chart(block)
            elif isinstance(block, Bullets):
                self.text.bullets(block)
            elif isinstance(block, SourceList):
                self.text.sources(block)
            elif isinstance(block, Figure):
                self.figures.figure(block)
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


__all__ = ["render_report_pdf", "render_comparison_pdf", "ensure_gui_application", "no_ligatures", "QSizeF"]
