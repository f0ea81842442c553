"""Small pyqtgraph helpers shared by the views (imported only where charts are built)."""

from __future__ import annotations

import pyqtgraph as pg


class SIAxis(pg.AxisItem):
    """Tick labels as 1.5k, 20M, 3G rather than 2e+08."""

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's naming
        out = []
        for v in values:
            a = abs(v)
            if a >= 1e9:
                out.append(f"{v / 1e9:g}G")
            elif a >= 1e6:
                out.append(f"{v / 1e6:g}M")
            elif a >= 1e3:
                out.append(f"{v / 1e3:g}k")
            else:
                out.append(f"{v:g}")
        return out
