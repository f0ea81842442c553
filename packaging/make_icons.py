"""Render resources/icons/gpudesk.svg into the PNG sizes desktops and installers want."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"


def main() -> int:
    app = QGuiApplication(sys.argv[:1])  # noqa: F841 - needed for QPainter
    renderer = QSvgRenderer(str(ICONS / "gpudesk.svg"))
    for size in (16, 32, 48, 64, 128, 256, 512):
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        image.save(str(ICONS / f"gpudesk-{size}.png"))
    print(f"wrote PNG icons to {ICONS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
