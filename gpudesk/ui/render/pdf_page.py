"""The PDF renderer's page geometry, print colours, fonts and the page cursor that the block placers
(text, figures, table, cover) write into. Each page is a list of drawing operations, run in a second
pass once the page count is known."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QFont,
    QFontMetricsF,
    QPainter,
    QTextDocument,
    QTextOption,
)

from gpudesk.ui import theme
from gpudesk.ui.render.charts import INK

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


def draw_on_paper(p: QPainter, doc: QTextDocument) -> None:
    """Draw rich text in the print colours: QTextDocument.drawContents would take the text and link
    colours from the application palette, which may be a dark screen palette."""
    ctx = QAbstractTextDocumentLayout.PaintContext()
    ctx.palette.setColor(ctx.palette.ColorRole.Text, INK)
    ctx.palette.setColor(ctx.palette.ColorRole.Link, ACCENT)
    doc.documentLayout().draw(p, ctx)


def font(size: float, bold: bool = False, italic: bool = False) -> QFont:
    """The print font at `size` points, ligatures off."""
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


class PageCursor:
    """The pages laid out so far and the vertical position on the last one; measures text on the
    PDF device, so the layout matches the drawing."""

    def __init__(self, width: float, height: float, device):
        self.device = device
        self.width, self.height = width, height
        self.left = MARGIN_X
        self.right = width - MARGIN_X
        self.content_w = self.right - self.left
        self.bottom = height - MARGIN_BOTTOM
        self.pages: list[list] = []
        self.y = 0.0
        self.new_page()

    # -- pages
    def new_page(self) -> None:
        self.pages.append([])
        self.y = MARGIN_TOP

    def op(self, fn) -> None:
        """Queue a drawing operation (a callable taking the painter) on the current page."""
        self.pages[-1].append(fn)

    def ensure(self, height: float) -> None:
        """Start a new page unless `height` points fit below the cursor (or the page is still empty)."""
        if self.y + height > self.bottom and self.y > MARGIN_TOP + 1:
            self.new_page()

    # -- measuring
    def text_height(self, text: str, width: float, font: QFont) -> float:
        fm = QFontMetricsF(font, self.device)
        rect = fm.boundingRect(QRectF(0, 0, width, 1e6), int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft), text)
        return rect.height()

    def document(self, text: str, width: float, font: QFont, html_text: str | None = None) -> QTextDocument:
        """A text document laid out at `width`: plain `text`, or `html_text` when given (built by us,
        with every user string escaped)."""
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
