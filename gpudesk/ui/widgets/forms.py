"""The foot every edit dialog shares: a line for what was refused, then Save and Cancel."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel


def add_message_and_buttons(dialog: QDialog, layout) -> QLabel:
    """Add a hidden, wrapping error line and Save/Cancel buttons wired to the dialog's accept and
    reject; returns the error line (show it with the message when a value is refused)."""
    message = QLabel("")
    message.setObjectName("errorLabel")
    message.setWordWrap(True)
    message.hide()
    layout.addWidget(message)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    return message
