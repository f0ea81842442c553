"""A drop-down that fits a narrow panel: a long choice is shortened in the middle ("NVIDIA Jetson
…(4 GB)"), where the start and the distinguishing end both stay readable, and the full text is
its tooltip. The list that drops down shows every choice in full."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox, QStylePainter


class ElidingComboBox(QComboBox):
    def __init__(self, parent=None, min_chars: int = 10):
        super().__init__(parent)
        # the width follows the panel, not the longest choice
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(min_chars)
        self.currentIndexChanged.connect(lambda _i: self.setToolTip(self.currentText()))

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        field = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                            QStyle.SubControl.SC_ComboBoxEditField, self)
        option.currentText = self.fontMetrics().elidedText(option.currentText, Qt.TextElideMode.ElideMiddle,
                                                           max(0, field.width() - 2))
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)
