"""The installed Qt binding keeps Python's reference counts straight.

PySide6 6.12.0 under Python 3.11 drops a reference to None on every call of a void method
(QPainter.setFont, QPen, ...); a report or a long session then aborts the interpreter
("none_dealloc"). pyproject.toml keeps the binding below that release; this test catches a
binding with the same fault, whatever its version."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtGui import QColor, QFont, QImage, QPainter


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12: nothing to leak")
def test_void_methods_do_not_leak_references_to_none(qapp):
    image = QImage(16, 16, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    font = QFont()
    before = sys.getrefcount(None)
    for _ in range(500):
        painter.setFont(font)
        painter.setPen(QColor("#123456"))
        font.setBold(True)
    after = sys.getrefcount(None)
    painter.end()
    assert after >= before - 10, f"None lost {before - after} references in 1,500 calls"
