"""A table's spare width goes to one column (a name that is cut at its fitted width), up to what
that column's widest text needs; when the window narrows, the column gives the width back, down
to its fitted width (the width fit_columns gives it). So a wide screen shows whole names and a
laptop keeps the figures in view."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QTableView

from gpudesk.ui.models.table import RowTableModel, natural_widths


class SpareWidth(QObject):
    def __init__(self, table: QTableView, model: RowTableModel, key: str = "name", minimum: int = 60,
                 maximum: int = 260):
        super().__init__(table)
        self.table = table
        self.model = model
        self.key = key
        self.limits = (minimum, maximum)  # fit_columns' limits: the fitted width is the floor
        self._fitted: tuple[int, int, int] | None = None  # (column, fitted width, needed width)
        # The horizontal header spans the viewport and is resized with it (a window resize, a vertical
        # scroll bar appearing), so its width and resize events stand for the viewport's. Watching the
        # header rather than the viewport also spares start-up the first wrapping of a plain QWidget,
        # which creates PySide6's QWidget enums (10-20 ms before the populated window).
        table.horizontalHeader().installEventFilter(self)

    def refit(self, widths: list[int] | None = None) -> None:
        """After the rows or columns changed: the column is measured again, or its width taken from
        `widths` (what fit_columns just measured for every column)."""
        self._fitted = None
        column = self._column()
        if widths is not None and column is not None:
            needed = widths[column]
            self._fitted = (column, min(max(needed, self.limits[0]), self.limits[1]), needed)
        self.spend()

    def _column(self) -> int | None:
        return next((i for i, c in enumerate(self.model.columns()) if c.key == self.key), None)

    def spend(self) -> None:
        header = self.table.horizontalHeader()
        column = self._column()
        if column is None or header.isSectionHidden(column):
            return
        if self._fitted is None or self._fitted[0] != column:
            needed = natural_widths(self.table, self.model, columns=[column])[0]
            self._fitted = (column, min(max(needed, self.limits[0]), self.limits[1]), needed)
        _, fitted, needed = self._fitted
        width = header.sectionSize(column)
        spare = header.width() - header.length()
        wanted = max(fitted, min(needed, width + spare))
        if wanted != width:
            header.resizeSection(column, wanted)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize:
            self.spend()
        return False
