"""The dialog shown when the catalogue database is damaged: restore a backup, rebuild keeping the
user's rows, or quit. It only asks; the window runs the chosen repair (core.catalogue.backup and
core.catalogue.repair), and nothing is deleted either way."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDialog, QLabel, QPushButton, QVBoxLayout

from gpudesk.ui import theme

RESTORE = "restore"
REBUILD = "rebuild"
QUIT = "quit"


class RecoveryDialog(QDialog):
    """Says in plain words what happened and offers the ways back; `choice` holds the answer."""

    def __init__(self, database: Path, detail: str, newest_backup=None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("The catalogue database is damaged")
        self.setModal(True)
        self.choice = QUIT
        self.newest_backup = newest_backup
        self.setMinimumWidth(560)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.setSpacing(8)
        text = (f"<p>gpudesk could not open its database, <b>{database}</b>: the file is damaged "
                "(a crash, a full disk or a failing drive can do this).</p>"
                f"<p style='color:{theme.hex('muted')}'>SQLite says: {detail}</p>"
                "<p>Whatever you choose, the damaged file is kept, renamed, beside the new one.</p>")
        self.message = QLabel(text)
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        self.restore_button = QPushButton("Restore the newest backup")
        if newest_backup is not None:
            self.restore_button.setToolTip(newest_backup.describe())
            hint = QLabel(f"Newest backup: {newest_backup.describe()}. Changes made since then are not in it.")
            hint.setObjectName("hint")
            hint.setWordWrap(True)
            layout.addWidget(hint)
        else:
            self.restore_button.setEnabled(False)
            self.restore_button.setToolTip("There is no backup of this database yet")
        self.rebuild_button = QPushButton("Rebuild and keep my rows")
        self.rebuild_button.setToolTip("Build the catalogue again from the bundled data and copy back every "
                                       "entry, quote and measurement of yours that can still be read")
        self.quit_button = QPushButton("Quit")
        for button, choice in ((self.restore_button, RESTORE), (self.rebuild_button, REBUILD),
                               (self.quit_button, QUIT)):
            button.clicked.connect(lambda _checked=False, c=choice: self._choose(c))
            layout.addWidget(button)
        (self.restore_button if newest_backup is not None else self.rebuild_button).setDefault(True)

    def _choose(self, choice: str) -> None:
        self.choice = choice
        if choice == QUIT:
            self.reject()
        else:
            self.accept()
