"""Array helpers for drawing and hit-testing thousands of straight links at once: clipping to a
rectangle, distance to a point, and handing a numpy array of lines or rectangles to QPainter
without making one Python object per line."""

from __future__ import annotations

import numpy as np
import shiboken6
from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QPainter


def draw_lines(painter: QPainter, segments: np.ndarray) -> None:
    """Draw (n, 4) float64 rows (x1, y1, x2, y2) as n lines in one call. QLineF is four doubles,
    so a C-contiguous float64 array is already an array of QLineF: PySide6's
    drawLines(const QLineF *, int) overload takes a pointer to its first row."""
    if not len(segments):
        return
    data = np.ascontiguousarray(segments, dtype=np.float64)
    painter.drawLines(shiboken6.wrapInstance(data.ctypes.data, QLineF), len(data))


def draw_rects(painter: QPainter, rects: np.ndarray) -> None:
    """Draw (n, 4) float64 rows (x, y, width, height) as n rectangles in one call (as draw_lines)."""
    if not len(rects):
        return
    data = np.ascontiguousarray(rects, dtype=np.float64)
    painter.drawRects(shiboken6.wrapInstance(data.ctypes.data, QRectF), len(data))


def in_box(segments: np.ndarray, left: float, top: float, right: float, bottom: float) -> np.ndarray:
    """Rows whose bounding box meets the box: a cheap first cut before clipping."""
    x1, y1, x2, y2 = segments.T
    return ((np.minimum(x1, x2) <= right) & (np.maximum(x1, x2) >= left)
            & (np.minimum(y1, y2) <= bottom) & (np.maximum(y1, y2) >= top))


def clip(segments: np.ndarray, rect: QRectF) -> tuple[np.ndarray, np.ndarray]:
    """Liang-Barsky over every row at once: (the rows that cross `rect`, their parts inside it).
    The rasteriser strokes a whole line before clipping, so a 40,000-unit link crossing the view
    must be cut to the view first."""
    x1, y1, x2, y2 = segments.T
    dx, dy = x2 - x1, y2 - y1
    t0 = np.zeros(len(segments))
    t1 = np.ones(len(segments))
    keep = np.ones(len(segments), dtype=bool)
    for p, q in ((-dx, x1 - rect.left()), (dx, rect.right() - x1), (-dy, y1 - rect.top()), (dy, rect.bottom() - y1)):
        flat = p == 0
        keep &= ~(flat & (q < 0))  # parallel to this edge and outside it
        r = np.divide(q, p, out=np.zeros_like(q), where=~flat)
        t0 = np.where(p < 0, np.maximum(t0, r), t0)
        t1 = np.where(p > 0, np.minimum(t1, r), t1)
    keep &= t0 <= t1
    rows = np.flatnonzero(keep)
    t0, t1 = t0[rows, None], t1[rows, None]
    start = segments[rows, :2]
    delta = segments[rows, 2:] - start
    return rows, np.hstack([start + t0 * delta, start + t1 * delta])


def distances(segments: np.ndarray, x: float, y: float) -> np.ndarray:
    """Distance from (x, y) to each row's line segment."""
    a = segments[:, :2]
    d = segments[:, 2:] - a
    length2 = (d * d).sum(axis=1)
    t = np.divide(((x - a[:, 0]) * d[:, 0] + (y - a[:, 1]) * d[:, 1]), length2,
                  out=np.zeros_like(length2), where=length2 > 0)
    t = np.clip(t, 0.0, 1.0)
    return np.hypot(a[:, 0] + t * d[:, 0] - x, a[:, 1] + t * d[:, 1] - y)
