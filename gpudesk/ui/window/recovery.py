"""A damaged catalogue database: ask the user (restore the newest good backup, rebuild, or quit),
then repair it and open the catalogue again. Nothing is changed before the user answers."""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from gpudesk.core import paths

log = logging.getLogger("gpudesk.ui.main_window")  # the logger its records always named


def ask(window, error) -> None:
    from gpudesk.core.catalogue.backup import newest_good_backup
    from gpudesk.ui.widgets.recovery import RecoveryDialog

    window.catalogue_status.setText("Catalogue database damaged")
    window.catalogueFailed.emit(str(error))
    dialog = RecoveryDialog(error.path, error.detail, newest_good_backup(error.path), window)
    window.recovery_dialog = dialog
    dialog.finished.connect(lambda _result: window._recover(dialog, error.path))
    dialog.open()


def cannot_open(window, message: str) -> None:
    """The catalogue could not be opened at all: say why and where the log is."""
    from PySide6.QtWidgets import QMessageBox  # created when first used, not in the first frame

    QMessageBox.critical(window, "Cannot open the catalogue",
                         f"gpudesk could not open its catalogue database.\n\n{message}\n\n"
                         f"Log: {paths.log_dir() / 'gpudesk.log'}")


def recover(window, dialog, database) -> None:
    from PySide6.QtWidgets import QMessageBox  # created when first used, not in the first frame

    from gpudesk.core.catalogue.backup import restore_backup
    from gpudesk.core.catalogue.repair import rebuild
    from gpudesk.ui.widgets.recovery import QUIT, RESTORE

    window.recovery_dialog = None
    if dialog.choice == QUIT:
        window.close()
        return
    if window._loader is not None:
        window._loader.wait()
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        if dialog.choice == RESTORE:
            text = restore_backup(dialog.newest_backup.name, database).format_text()
        else:
            text = rebuild(database).format_text()
    except Exception as exc:  # shown to the user; details in the log
        log.exception("repairing %s failed", database)
        QMessageBox.critical(window, "The repair failed", f"{database}: {exc}\n\n"
                             f"Log: {paths.log_dir() / 'gpudesk.log'}")
        return
    finally:
        QApplication.restoreOverrideCursor()
    window.repair_message = text
    window.statusBar().showMessage(text.splitlines()[0], 15000)
    box = QMessageBox(QMessageBox.Icon.Information, "The catalogue database was repaired", text,
                      QMessageBox.StandardButton.Ok, window)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    window._loader = None
    window.start()
