"""Putting data on the clipboard without crashing at exit.

A QMimeData made in Python and handed to the clipboard is deleted by Qt when the clipboard is
next set, or by QtGui's own clean-up after the interpreter has finished; in that last case the
binding's clean-up runs without Python and the process crashes on exit. So gpudesk remembers
what it put there and, before quitting (and between tests), swaps it for a plain-text copy that
Qt makes itself: other applications (and clipboard managers) still get the text."""

from __future__ import annotations

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QGuiApplication

_OURS: list[QMimeData] = []


def set_clipboard(mime: QMimeData) -> None:
    QGuiApplication.clipboard().setMimeData(mime)
    _OURS[:] = [mime]


def release_clipboard() -> None:
    """If the clipboard still holds gpudesk's QMimeData, replace it with its text (or nothing)."""
    if not _OURS or QGuiApplication.instance() is None:
        _OURS.clear()
        return
    mime = _OURS.pop()
    clipboard = QGuiApplication.clipboard()
    try:
        if clipboard.mimeData() is not mime:
            return
        text = mime.text()
    except RuntimeError:  # already deleted by Qt (the clipboard was set since): nothing to do
        return
    if text:
        clipboard.setText(text)
    else:
        clipboard.clear()
