"""Importing a catalogue update (a bundle someone exported with `gpudesk catalogue export`): the
bundle is checked, what it would add, change and remove is shown kind by kind and field by field,
and Apply writes it in one transaction. Checking and applying run on a worker thread; the work is
gpudesk.core.catalogue.exchange's."""

from __future__ import annotations

import html
import logging
from pathlib import Path

from PySide6.QtCore import Qt, QThread, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QMessageBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpudesk.ui import theme

log = logging.getLogger(__name__)

CHANGE_COLOURS = {"added": "success", "changed": "accent_ink", "removed": "error", "kept": "muted"}  # theme names
CHANGE_TEXT = {"added": "added", "changed": "changed", "removed": "removed", "kept": "yours, kept"}
EXPAND_ALL_BELOW = 40  # changes; larger updates open with only the kinds expanded


class UpdateWorker(QThread):
    """Checks a bundle and plans the update (plan=None), or applies a plan, off the UI thread."""

    planned = Signal(object)  # UpdatePlan
    applied = Signal(object)  # counts of added, changed, removed, kept
    failed = Signal(str, str)  # message, reason ("invalid", "refused", "failed")

    def __init__(self, catalogue, path: str, plan=None, parent=None):
        super().__init__(parent)
        self.catalogue = catalogue
        self.path = path
        self.plan = plan

    def run(self) -> None:
        from gpudesk.core.catalogue.exchange import ExchangeError, apply_update, plan_update

        try:
            if self.plan is None:
                self.planned.emit(plan_update(self.catalogue, self.path))
            else:
                self.applied.emit(apply_update(self.catalogue, self.plan))
        except ExchangeError as exc:
            self.failed.emit(str(exc), exc.reason)
        except Exception as exc:  # shown in the dialog; the transaction rolled back
            log.exception("catalogue update failed")
            self.failed.emit(f"{type(exc).__name__}: {exc}", "failed")


class CatalogueUpdateDialog(QDialog):
    """Check a catalogue bundle, show its changes, Apply or Cancel. `applied(counts)` is emitted
    once the update is in the database."""

    applied = Signal(object)

    def __init__(self, catalogue, path: str | Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Import catalogue update")
        self.resize(1000, 620)
        self.catalogue = catalogue
        self.path = str(path)
        self.plan = None
        self.error: tuple[str, str] | None = None  # (message, reason) when the bundle was refused
        self.counts: dict | None = None
        self.worker: UpdateWorker | None = None

        self.heading = QLabel()
        self.heading.setObjectName("updateHeading")
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tree = QTreeWidget()
        self.tree.setObjectName("updateChanges")
        self.tree.setHeaderLabels(["Record / field", "Change", "Before", "After"])
        self.tree.setColumnWidth(0, 420)
        self.tree.setColumnWidth(1, 180)
        self.tree.setColumnWidth(2, 170)
        self.tree.setUniformRowHeights(True)
        self.note = QLabel("Your own entries and quotes are never changed by an import. Apply writes every change "
                           "in one step; Cancel changes nothing.")
        self.note.setObjectName("hint")
        self.note.setWordWrap(True)
        self.buttons = QDialogButtonBox()
        self.apply_button = self.buttons.addButton("Apply", QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply_button.setEnabled(False)
        self.apply_button.clicked.connect(self.apply)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.note)
        layout.addWidget(self.buttons)
        self.heading.setText(f"<b>Checking</b> {html.escape(self.path)}…")
        self._run(None)

    # ------------------------------------------------------------------ running
    def _run(self, plan) -> None:
        self.worker = UpdateWorker(self.catalogue, self.path, plan, self)
        self.worker.planned.connect(self._planned)
        self.worker.applied.connect(self._applied)
        self.worker.failed.connect(self._failed)
        self.worker.start()

    def wait(self, timeout_ms: int = 60000) -> bool:
        """For tests and scripts: block until the running step finished and its result is shown."""
        ok = self.worker is None or self.worker.wait(timeout_ms)
        QApplication.processEvents()
        return ok

    def apply(self) -> None:
        if self.plan is None or self.plan.empty or (self.worker is not None and self.worker.isRunning()):
            return
        self.apply_button.setEnabled(False)
        self.cancel_button.setEnabled(False)
        self.heading.setText(f"<b>Applying</b> catalogue {html.escape(self.plan.version)}…")
        self._run(self.plan)

    def reject(self) -> None:
        if self.worker is not None and self.worker.isRunning() and self.plan is not None:
            return  # applying: the transaction finishes (or rolls back) first
        if self.worker is not None:
            self.worker.wait()
        super().reject()

    # ------------------------------------------------------------------ results
    def _planned(self, plan) -> None:
        self.plan = plan
        self._show(plan)
        s = plan.summary()
        bundle = html.escape(plan.describe_bundle())
        installed = (f"Installed: catalogue {html.escape(plan.installed_version)} "
                     f"(released {html.escape(plan.installed_released or 'undated')}).")
        if plan.empty:
            self.heading.setText(f"<b>No changes</b>: your catalogue already matches this bundle.<br>{bundle}.<br>"
                                 f"{installed}")
            self.cancel_button.setText("Close")
            return
        parts = [f"{s[c]} {c}" for c in ("added", "changed", "removed") if s[c]] or ["no record changes"]
        kept = f"; {s['kept']} of your own entries kept as they are" if s["kept"] else ""
        version = (f" Catalogue version {html.escape(plan.installed_version)} → {html.escape(plan.version)}."
                   if plan.version != plan.installed_version else "")
        self.heading.setText(f"<b>{html.escape(Path(self.path).name)}</b>: {', '.join(parts)}{kept}.{version}<br>"
                             f"{bundle}.<br>{installed}")
        self.apply_button.setEnabled(True)
        self.apply_button.setDefault(True)

    def _failed(self, message: str, reason: str) -> None:
        applying = self.plan is not None
        self.error = (message, reason)
        what = {"invalid": "This file cannot be imported", "refused": "This bundle is refused"}.get(reason, "The import failed")
        lines = html.escape(message).replace("\n", "<br>")
        tail = "" if "nothing was changed" in message.lower() else "<br>Nothing was changed."
        self.heading.setText(f"<b style='color:{theme.hex('error')}'>{what}</b>: {lines}{tail}")
        if not applying:
            self.tree.clear()
        self.apply_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Close")

    def _applied(self, counts) -> None:
        self.counts = counts
        self.applied.emit(counts)
        self.accept()

    def _show(self, plan) -> None:
        from gpudesk.core.catalogue.exchange import kind_label

        self.tree.clear()
        expand_records = len(plan.changes) < EXPAND_ALL_BELOW
        for kind, changes in plan.by_kind().items():
            counts = [f"{n} {CHANGE_TEXT[c]}" for c in CHANGE_TEXT if (n := sum(1 for x in changes if x.change == c))]
            top = QTreeWidgetItem([kind_label(kind), ", ".join(counts), "", ""])
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            self.tree.addTopLevelItem(top)
            for change in changes:
                item = QTreeWidgetItem([f"{change.id}  ·  {change.label}" if change.label else change.id,
                                        CHANGE_TEXT[change.change], "", ""])
                item.setForeground(1, QBrush(theme.colour(CHANGE_COLOURS[change.change])))
                item.setToolTip(0, change.id)
                if change.change == "kept":
                    item.setToolTip(1, "Your own entry: the import leaves it as it is; the bundle's differs as shown")
                top.addChild(item)
                for f in change.fields:
                    old, new = f.shown()
                    child = QTreeWidgetItem([f.label, "", old or "—", new or "—"])
                    child.setToolTip(2, old)
                    child.setToolTip(3, new)
                    if change.change == "kept":  # the bundle's value, shown but not applied
                        child.setForeground(3, QBrush(theme.colour(CHANGE_COLOURS["kept"])))
                        child.setToolTip(3, f"{new} (the bundle's; not applied: the entry is yours)")
                    item.addChild(child)
                item.setExpanded(expand_records)
            top.setExpanded(True)

    def changes_shown(self) -> list[tuple[str, str, str]]:
        """(kind label, record id, change) of every record row in the tree, for tests and scripts."""
        rows = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                item = top.child(j)
                rows.append((top.text(0), item.toolTip(0), item.text(1)))
        return rows


def import_catalogue_update(parent: QWidget, catalogue, path: str | None = None, on_applied=None,
                            modal: bool = True) -> CatalogueUpdateDialog | None:
    """File → Import Catalogue Update…: ask for a bundle (unless `path`), then preview and apply it."""
    if catalogue is None or getattr(catalogue, "read_only", True):
        QMessageBox.information(parent, "Import catalogue update",
                                "The catalogue is still opening; try again in a moment.")
        return None
    if path is None:
        path, _ = QFileDialog.getOpenFileName(
            parent, "Import catalogue update", str(Path.home()),
            "Catalogue bundles (*.zip manifest.json);;All files (*)")
        if not path:
            return None
    dialog = CatalogueUpdateDialog(catalogue, path, parent)
    if on_applied is not None:
        dialog.applied.connect(on_applied)
    if modal:
        dialog.exec()
        dialog.wait()  # a check still running when the dialog closed finishes before its thread is dropped
    else:
        dialog.show()
    return dialog
