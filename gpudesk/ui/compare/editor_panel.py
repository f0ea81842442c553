"""The left side of the compare view: the question, the workload, the configurations and the
site and money, in a scroll area never narrower than what it holds."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QLineEdit, QScrollArea, QVBoxLayout, QWidget

from gpudesk.ui.compare.configs_panel import ConfigurationsPanel
from gpudesk.ui.compare.site_panel import SitePanel
from gpudesk.ui.compare.workload_panel import WorkloadPanel


class EditorPanel(QScrollArea):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.question = QLineEdit()
        self.question.setObjectName("question")
        self.question.setPlaceholderText("The question the report answers")
        self.workload = WorkloadPanel()
        self.configs = ConfigurationsPanel()
        self.site = SitePanel()
        editor = QWidget()
        layout = QVBoxLayout(editor)
        layout.setContentsMargins(0, 0, 6, 0)
        hint = QLabel("Question")
        hint.setObjectName("hint")
        layout.addWidget(hint)
        layout.addWidget(self.question)
        layout.addWidget(self.workload)
        layout.addWidget(self.configs)
        layout.addWidget(self.site)
        layout.addStretch(1)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(editor)
        # never narrower than the editor's own minimum, so that nothing in it is cut off at the right
        self.setMinimumWidth(editor.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width())
        self.setMaximumWidth(560)
        self.setFrameShape(QFrame.Shape.NoFrame)

    def show_question(self, text: str) -> None:
        """Show a title gpudesk chose, its start in sight, without reporting an edit."""
        self.question.blockSignals(True)
        try:
            self.question.setText(text)
        finally:
            self.question.blockSignals(False)
        self.question.setToolTip(text)
        if not self.question.hasFocus():
            self.question.setCursorPosition(0)
