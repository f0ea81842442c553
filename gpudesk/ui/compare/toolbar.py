"""The compare view's toolbar: the question picker (the shipped example comparisons) and the
file and export actions."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget


class CompareToolbar(QWidget):
    example_chosen = Signal(int)  # the picker's index
    open_clicked = Signal()
    save_clicked = Signal()
    pdf_clicked = Signal()
    csv_clicked = Signal()
    copy_clicked = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.preset = QComboBox()
        self.preset.setObjectName("comparePreset")
        # the questions are long sentences: the picker shows what fits and gives way to the buttons
        # in a narrow window, rather than growing under them
        self.preset.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.preset.setMinimumContentsLength(14)
        self.preset.activated.connect(self.example_chosen.emit)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Question:"))
        layout.addWidget(self.preset, 1)
        self.open_button = QPushButton("Open…")
        self.save_button = QPushButton("Save…")
        self.pdf_button = QPushButton("Export PDF…")
        self.pdf_button.setObjectName("exportPdf")
        self.csv_button = QPushButton("Export CSV…")
        self.copy_button = QPushButton("Copy table")
        for button, signal in ((self.open_button, self.open_clicked), (self.save_button, self.save_clicked),
                               (self.pdf_button, self.pdf_clicked), (self.csv_button, self.csv_clicked),
                               (self.copy_button, self.copy_clicked)):
            button.clicked.connect(lambda *_, s=signal: s.emit())
            layout.addWidget(button)

    def set_examples(self, examples: list[tuple[str, Path]]) -> None:
        self.preset.clear()
        self.preset.addItem("Choose a question…", None)
        for name, path in examples:
            self.preset.addItem(name, str(path))

    def example_index(self, path) -> int:
        """The picker's entry for a file, 0 when it is none of the examples."""
        target = Path(path).resolve()
        return next((i for i in range(1, self.preset.count()) if Path(self.preset.itemData(i)).resolve() == target), 0)

    def show_example(self, index: int) -> None:
        if self.preset.currentIndex() != index and index < self.preset.count():
            self.preset.setCurrentIndex(index)
