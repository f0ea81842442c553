"""Help dialogs: the short guide (F1) and the list of keyboard shortcuts built from the window's actions."""

from __future__ import annotations

from html import escape

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from gpudesk.core import paths


def guide_html() -> str:
    """The guide's text (resources/guide.html), or a sentence saying it is missing."""
    path = paths.resource("guide.html")
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return f"<p>The guide is missing from this installation ({escape(str(path))}).</p>"


def shortcut_rows(actions: list[QAction]) -> list[tuple[str, str]]:
    """(what, keys) for each action with a shortcut, in menu order, without duplicates."""
    rows: list[tuple[str, str]] = []
    for action in actions:
        keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts() if not k.isEmpty())
        text = action.text().replace("&", "").rstrip(".…")
        if keys and text and (text, keys) not in rows:
            rows.append((text, keys))
    return rows


def shortcuts_html(actions: list[QAction]) -> str:
    cells = "".join(f"<tr><td style='padding:3px 18px 3px 0'>{escape(text)}</td><td><b>{escape(keys)}</b></td></tr>"
                    for text, keys in shortcut_rows(actions))
    return f"<h3>Keyboard shortcuts</h3><table>{cells}</table>"


class HelpDialog(QDialog):
    """A resizable page of rich text with a Close button (the guide, the shortcut list)."""

    def __init__(self, title: str, html: str, parent: QWidget | None = None, size: tuple[int, int] = (640, 560)):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("helpDialog")
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(html)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.resize(*size)


__all__ = ["HelpDialog", "guide_html", "shortcut_rows", "shortcuts_html"]
