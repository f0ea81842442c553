"""The main window: navigation between the views, menus, status bar, remembered state.

The window shows before any heavy work: the catalogue opens on a worker thread, and each view
but the catalogue is built the first time it is shown. Views do not import each other; this
module composes them.
"""

from __future__ import annotations

import logging
import sqlite3
import threading

from PySide6.QtCore import QByteArray, QSize, Qt, QThread, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence, QUndoGroup
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gpudesk import APP_DISPLAY_NAME, __version__
from gpudesk.core import paths
from gpudesk.ui.catalogue.view import CatalogueView
from gpudesk.ui.state import settings_store

log = logging.getLogger(__name__)

PAGES = (
    ("catalogue", "Catalogue", "catalogue.svg"),
    ("compare", "Compare", "compare.svg"),
    ("cluster", "Cluster", "cluster.svg"),
    ("benchmarks", "Benchmarks", "benchmarks.svg"),
    ("reports", "Reports", "reports.svg"),
)


class CatalogueLoader(QThread):
    """Opens (creating or upgrading) the catalogue database off the UI thread."""

    previewed = Signal(object)  # the stored catalogue, read-only, before the full open
    loaded = Signal(object)
    failed = Signal(str)
    damaged = Signal(object)  # a DamagedDatabaseError: the database file needs repair

    def __init__(self, database_url: str | None, parent=None):
        super().__init__(parent)
        self.database_url = database_url
        self.preview_shown = threading.Event()

    def run(self) -> None:
        # First the catalogue as stored (stdlib sqlite3, a few ms), so the window is populated at
        # once; then the full catalogue (SQLAlchemy, migrations, bundle sync), which replaces it.
        if not self.database_url:
            try:
                from gpudesk.core.catalogue.reading import read_snapshot
                from gpudesk.core.settings import load_settings

                if not load_settings().database_url:
                    snapshot = read_snapshot(paths.database_path())
                    if snapshot is not None:
                        self.previewed.emit(snapshot)
                        # let the UI thread show it before this thread's imports take the GIL
                        self.preview_shown.wait(2.0)
            except Exception:  # the full open below reports real problems
                log.exception("start-up snapshot failed")
        from gpudesk.core.catalogue.backup import DamagedDatabaseError  # standard library only

        try:
            from gpudesk.core.catalogue import open_catalogue
            from gpudesk.core.catalogue.fields import KINDS

            catalogue = open_catalogue(self.database_url)
            for kind in KINDS:
                catalogue.items(kind)  # warm the cache here, not on the UI thread
            self._daily_backup(catalogue)
            self.loaded.emit(catalogue)
        except DamagedDatabaseError as exc:
            log.error("%s", exc)
            self.damaged.emit(exc)
        except Exception as exc:  # shown to the user; details in the log
            log.exception("cannot open the catalogue")
            self.failed.emit(f"{type(exc).__name__}: {exc}")


    @staticmethod
    def _daily_backup(catalogue) -> None:
        """A backup a day while the app is used (core.catalogue.backup keeps the newest few)."""
        from gpudesk.core.catalogue import backup, db

        database = db.sqlite_file(catalogue.engine)
        if database is None:
            return
        try:
            backup.backup_if_due(database)
        except (OSError, backup.BackupError, sqlite3.Error) as exc:  # the app works on; the log says why
            log.warning("the daily backup of %s failed: %s", database, exc)


class MainWindow(QMainWindow):
    catalogueReady = Signal()
    catalogueFailed = Signal(str)

    def __init__(self, database_url: str | None = None, parent=None):
        super().__init__(parent)
        self.database_url = database_url
        self.catalogue = None
        self._loader: CatalogueLoader | None = None
        self.recovery_dialog = None  # the RecoveryDialog while it is shown
        self.repair_message = ""  # what the last repair did
        self.undo_group = QUndoGroup(self)
        self.setWindowTitle(APP_DISPLAY_NAME)
        self.setMinimumSize(QSize(980, 640))

        self.nav = QListWidget()
        self.nav.setObjectName("navigation")
        self.nav.setIconSize(QSize(20, 20))
        self.nav.setFixedWidth(190)
        self.stack = QStackedWidget()
        self.pages: dict[str, QWidget] = {}
        self._page_index: dict[str, int] = {}
        for key, label, icon in PAGES:
            item = QListWidgetItem(QIcon(str(paths.resource("icons", icon))), label)
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setSizeHint(QSize(180, 40))
            self.nav.addItem(item)
            holder = QWidget()
            QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
            self._page_index[key] = self.stack.addWidget(holder)
        self.nav.currentRowChanged.connect(self._nav_changed)

        self.catalogue_view = CatalogueView()
        self.catalogue_view.message.connect(lambda m: self.statusBar().showMessage(m, 5000))
        self.catalogue_view.populated.connect(self.catalogueReady.emit)
        self._install_page("catalogue", self.catalogue_view)

        side = QWidget()
        side.setObjectName("sidebar")
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.setSpacing(0)
        brand = QLabel(APP_DISPLAY_NAME)
        brand.setObjectName("navTitle")
        tagline = QLabel("choose AI compute,\ndefend the choice")
        tagline.setObjectName("navSubtitle")
        side_layout.addWidget(brand)
        side_layout.addWidget(tagline)
        side_layout.addWidget(self.nav, 1)

        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(side)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self.setAcceptDrops(True)  # result files and scenarios dropped anywhere on the window

        self.catalogue_status = QLabel("Opening the catalogue…")
        self.statusBar().addPermanentWidget(self.catalogue_status)
        self._build_menus()
        self._restore_state()

    # ------------------------------------------------------------------ start-up
    def start(self) -> None:
        """Open the catalogue on a worker thread; views receive it when it is ready."""
        if self._loader is not None:
            return
        self._loader = CatalogueLoader(self.database_url, self)
        self._loader.previewed.connect(self._catalogue_previewed)
        self._loader.loaded.connect(self._catalogue_loaded)
        self._loader.failed.connect(self._catalogue_failed)
        self._loader.damaged.connect(self._catalogue_damaged)
        self._loader.start()

    def wait_loaded(self, timeout_ms: int = 30000) -> bool:
        """For tests and scripts: block until the loader finished."""
        if self._loader is None:
            self.start()
        ok = self._loader.wait(timeout_ms)
        QApplication.processEvents()
        return ok and self.catalogue is not None

    def _catalogue_previewed(self, snapshot) -> None:
        """Show the stored catalogue while the full one opens; only the catalogue view uses it."""
        if self.catalogue is None:
            self.catalogue_status.setText(f"Catalogue {snapshot.version}  ·  opening…")
            self.catalogue_view.set_catalogue(snapshot)
        if self._loader is not None:
            QTimer.singleShot(0, self._loader.preview_shown.set)  # after the table has been painted

    def _catalogue_loaded(self, catalogue) -> None:
        self.catalogue = catalogue
        where = self.database_url or str(paths.database_path())
        self.catalogue_status.setText(f"Catalogue {catalogue.version}  ·  {where}")
        for view in self.pages.values():
            if hasattr(view, "set_catalogue"):
                view.set_catalogue(catalogue)

    def _catalogue_failed(self, message: str) -> None:
        self.catalogue_status.setText("Catalogue unavailable")
        self.catalogueFailed.emit(message)
        QMessageBox.critical(self, "Cannot open the catalogue",
                             f"gpudesk could not open its catalogue database.\n\n{message}\n\n"
                             f"Log: {paths.log_dir() / 'gpudesk.log'}")

    def _catalogue_damaged(self, error) -> None:
        """Ask what to do about a damaged database; nothing is changed before the user answers."""
        from gpudesk.core.catalogue.backup import newest_good_backup
        from gpudesk.ui.widgets.recovery import RecoveryDialog

        self.catalogue_status.setText("Catalogue database damaged")
        self.catalogueFailed.emit(str(error))
        dialog = RecoveryDialog(error.path, error.detail, newest_good_backup(error.path), self)
        self.recovery_dialog = dialog
        dialog.finished.connect(lambda _result: self._recover(dialog, error.path))
        dialog.open()

    def _recover(self, dialog, database) -> None:
        from gpudesk.core.catalogue.backup import restore_backup
        from gpudesk.core.catalogue.repair import rebuild
        from gpudesk.ui.widgets.recovery import QUIT, RESTORE

        self.recovery_dialog = None
        if dialog.choice == QUIT:
            self.close()
            return
        if self._loader is not None:
            self._loader.wait()
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            if dialog.choice == RESTORE:
                text = restore_backup(dialog.newest_backup.name, database).format_text()
            else:
                text = rebuild(database).format_text()
        except Exception as exc:  # shown to the user; details in the log
            log.exception("repairing %s failed", database)
            QMessageBox.critical(self, "The repair failed", f"{database}: {exc}\n\n"
                                 f"Log: {paths.log_dir() / 'gpudesk.log'}")
            return
        finally:
            QApplication.restoreOverrideCursor()
        self.repair_message = text
        self.statusBar().showMessage(text.splitlines()[0], 15000)
        box = QMessageBox(QMessageBox.Icon.Information, "The catalogue database was repaired", text,
                          QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self._loader = None
        self.start()

    # ------------------------------------------------------------------ pages
    def _install_page(self, key: str, widget: QWidget) -> None:
        holder = self.stack.widget(self._page_index[key])
        holder.layout().addWidget(widget)
        self.pages[key] = widget
        if self.catalogue is not None and hasattr(widget, "set_catalogue"):
            widget.set_catalogue(self.catalogue)
        stack = getattr(widget, "undo_stack", None)
        if stack is not None:
            self.undo_group.addStack(stack)
        if hasattr(widget, "status_message"):
            widget.status_message.connect(lambda m: self.statusBar().showMessage(m, 5000))
        if hasattr(widget, "modified_changed"):
            widget.modified_changed.connect(lambda _m: self._update_title())

    def page(self, key: str) -> QWidget:
        """The view for `key`, built on first use."""
        if key not in self.pages:
            self._install_page(key, self._make_page(key))
        return self.pages[key]

    def _make_page(self, key: str) -> QWidget:
        if key == "compare":
            from gpudesk.ui.compare.view import CompareView

            view = CompareView()
            splitter = settings_store().value("compare/splitter")
            if isinstance(splitter, QByteArray) and not splitter.isEmpty():
                view.splitter.restoreState(splitter)
            return view
        if key == "cluster":
            from gpudesk.ui.canvas.view import ClusterView

            return ClusterView()
        if key == "benchmarks":
            from gpudesk.ui.benchmarks.view import BenchmarksView

            return BenchmarksView()
        if key == "reports":
            from gpudesk.ui.report.view import ReportsView

            view = ReportsView()
            view.open_requested.connect(self._open_report_source)
            return view
        raise KeyError(key)

    def show_page(self, key: str) -> QWidget:
        row = [p[0] for p in PAGES].index(key)
        self.nav.setCurrentRow(row)
        return self.page(key)

    def current_page_key(self) -> str:
        item = self.nav.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item else "catalogue"

    def current_view(self) -> QWidget:
        return self.pages.get(self.current_page_key(), self.catalogue_view)

    def _nav_changed(self, row: int) -> None:
        key = PAGES[max(0, row)][0]
        view = self.page(key)
        self.stack.setCurrentIndex(self._page_index[key])
        stack = getattr(view, "undo_stack", None)
        self.undo_group.setActiveStack(stack)
        self._update_actions()
        self._update_title()

    def _open_report_source(self, key: str, path: str) -> None:
        """A report's scenario opens untitled, so that saving never overwrites the report's copy."""
        view = self.show_page(key)
        if hasattr(view, "open_path"):
            view.open_path(path, as_copy=True)

    # ------------------------------------------------------------------ menus
    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.act_new = self._action(file_menu, "&New Scenario", QKeySequence.StandardKey.New, lambda: self._call("new_file"))
        self.act_open = self._action(file_menu, "&Open…", QKeySequence.StandardKey.Open, lambda: self._call("open_file"))
        self.act_save = self._action(file_menu, "&Save", QKeySequence.StandardKey.Save, lambda: self._call("save"))
        self.act_save_as = self._action(file_menu, "Save &As…", QKeySequence.StandardKey.SaveAs, lambda: self._call("save_as"))
        file_menu.addSeparator()
        self.act_pdf = self._action(file_menu, "Export &PDF Report…", QKeySequence("Ctrl+P"), lambda: self._call("export_pdf"))
        self.act_csv = self._action(file_menu, "Export &CSV…", None, lambda: self._call("export_csv"))
        self.act_import = self._action(file_menu, "&Import Benchmark Files…", QKeySequence("Ctrl+I"), self._import_files)
        self.act_catalogue_update = self._action(file_menu, "Import Catalogue &Update…", None, self._import_catalogue_update)
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)

        edit_menu = bar.addMenu("&Edit")
        undo = self.undo_group.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.undo_group.createRedoAction(self, "&Redo")
        redo.setShortcut(QKeySequence.StandardKey.Redo)
        edit_menu.addAction(undo)
        edit_menu.addAction(redo)
        edit_menu.addSeparator()
        self._action(edit_menu, "&Find", QKeySequence.StandardKey.Find, self._find)
        edit_menu.addSeparator()
        self._action(edit_menu, "&Preferences…", QKeySequence.StandardKey.Preferences, self._preferences)

        view_menu = bar.addMenu("&View")
        for i, (key, label, _icon) in enumerate(PAGES):
            self._action(view_menu, label, QKeySequence(f"Ctrl+{i + 1}"), lambda _=False, k=key: self.show_page(k))
        view_menu.addSeparator()
        self._action(view_menu, "&Full Screen", QKeySequence.StandardKey.FullScreen,
                     lambda: self.showNormal() if self.isFullScreen() else self.showFullScreen())

        help_menu = bar.addMenu("&Help")
        self.act_guide = self._action(help_menu, "&Guide", QKeySequence.StandardKey.HelpContents, self.show_guide)
        self.act_shortcuts = self._action(help_menu, "&Keyboard Shortcuts", None, self.show_shortcuts)
        help_menu.addSeparator()
        self.act_data_folder = self._action(help_menu, "Open &Data Folder", None,
                                            lambda: self.open_folder(paths.data_dir()))
        self.act_log = self._action(help_menu, "Open &Log", None, self.open_log)
        help_menu.addSeparator()
        self._action(help_menu, "&About gpudesk", None, self.show_about)
        self._action(help_menu, "About &Qt", None, QApplication.aboutQt)
        self._update_actions()

    def _action(self, menu, text, shortcut, slot) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
        # a slot never receives triggered()'s `checked` flag as its first argument (an optional
        # `path` or `confirm` parameter would take it for a value)
        action.triggered.connect(lambda *_: slot())
        menu.addAction(action)
        return action

    def _call(self, method: str) -> None:
        view = self.current_view()
        if hasattr(view, method):
            getattr(view, method)()

    def _update_actions(self) -> None:
        view = self.current_view()
        for action, method in ((self.act_new, "new_file"), (self.act_open, "open_file"), (self.act_save, "save"),
                               (self.act_save_as, "save_as"), (self.act_pdf, "export_pdf"), (self.act_csv, "export_csv")):
            action.setEnabled(hasattr(view, method))

    def _update_title(self) -> None:
        view = self.current_view()
        doc = getattr(view, "document_title", None)
        modified = bool(getattr(view, "is_modified", lambda: False)())
        title = f"{doc()} — {APP_DISPLAY_NAME}" if callable(doc) and doc() else APP_DISPLAY_NAME
        self.setWindowTitle(title + ("[*]" if "[*]" not in title else ""))
        self.setWindowModified(modified)

    def _find(self) -> None:
        view = self.current_view()
        if hasattr(view, "focus_search"):
            view.focus_search()

    def _import_files(self) -> None:
        view = self.show_page("benchmarks")
        if hasattr(view, "open_file"):
            view.open_file()

    def _import_catalogue_update(self) -> None:
        """A catalogue bundle a colleague exported: preview its changes, apply them, show the result."""
        from gpudesk.ui.catalogue.update_dialog import import_catalogue_update

        import_catalogue_update(self, self.catalogue, on_applied=lambda _counts: self._catalogue_loaded(self.catalogue))

    def _preferences(self) -> None:
        from gpudesk.ui.widgets.preferences import PreferencesDialog

        dialog = PreferencesDialog(self.catalogue, self)
        if dialog.exec():
            for view in self.pages.values():
                if hasattr(view, "settings_changed"):
                    view.settings_changed()

    def show_guide(self) -> None:
        from gpudesk.ui.widgets.help import HelpDialog, guide_html

        HelpDialog(f"{APP_DISPLAY_NAME} guide", guide_html(), self).exec()

    def show_shortcuts(self) -> None:
        from gpudesk.ui.widgets.help import HelpDialog, shortcuts_html

        actions = [a for menu_action in self.menuBar().actions() if menu_action.menu()
                   for a in menu_action.menu().actions()]
        HelpDialog("Keyboard shortcuts", shortcuts_html(actions), self, size=(420, 480)).exec()

    def open_folder(self, folder) -> bool:
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        folder.mkdir(parents=True, exist_ok=True)
        opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))
        if not opened:
            self.statusBar().showMessage(f"Could not open {folder}", 5000)
        return opened

    def open_log(self) -> bool:
        """The log file (in the log folder, which opens instead while nothing has been logged)."""
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        from gpudesk.core.logs import log_path

        path = log_path()
        if not path.is_file():
            return self.open_folder(path.parent)
        opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
        if not opened:
            self.statusBar().showMessage(f"Could not open {path}", 5000)
        return opened

    def show_about(self) -> None:
        import platform  # only the About box needs it: not imported at start-up

        from PySide6 import __version__ as pyside_version
        from PySide6.QtCore import qVersion

        cat = self.catalogue
        catalogue = f"version {cat.version}, released {cat.released}" if cat else "not loaded"
        sources = len(cat.items("sources")) if cat else 0
        QMessageBox.about(
            self,
            f"About {APP_DISPLAY_NAME}",
            f"<h3>{APP_DISPLAY_NAME} {__version__}</h3>"
            "<p>Choose AI compute and defend the choice: a sourced catalogue, side-by-side comparison, "
            "cluster estimates and procurement reports.</p>"
            f"<p><b>Catalogue:</b> {catalogue}"
            + (f", {sources} cited sources (Catalogue ▸ Sources)" if sources else "") + "<br>"
            f"<b>Database:</b> {self.database_url or paths.database_path()}<br>"
            f"<b>Qt:</b> {qVersion()} · PySide6 {pyside_version} · Python {platform.python_version()}</p>",
        )

    # ------------------------------------------------------------------ state
    def _restore_state(self) -> None:
        store = settings_store()
        geometry = store.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:
            self.resize(1320, 820)
        splitter = store.value("catalogue/splitter")
        if isinstance(splitter, QByteArray) and not splitter.isEmpty():
            self.catalogue_view.splitter.restoreState(splitter)
        columns = {}
        store.beginGroup("catalogue-columns")
        for kind in store.childGroups():
            keys, state = store.value(f"{kind}/keys"), store.value(f"{kind}/state")
            if isinstance(keys, str) and isinstance(state, QByteArray) and not state.isEmpty():
                columns[kind] = (keys, state)
        store.endGroup()
        self.catalogue_view.set_header_states(columns)
        page = str(store.value("window/page", "catalogue"))
        keys = [p[0] for p in PAGES]
        # views other than the catalogue are built on first show: open them after the window is up
        if page in keys and page != "catalogue":
            self.nav.setCurrentRow(0)
            QTimer.singleShot(0, lambda: self.nav.setCurrentRow(keys.index(page)))
        else:
            self.nav.setCurrentRow(0)

    def save_state(self) -> None:
        store = settings_store()
        store.setValue("window/geometry", self.saveGeometry())
        store.setValue("window/page", self.current_page_key())
        store.setValue("catalogue/splitter", self.catalogue_view.splitter.saveState())
        for kind, (keys, state) in self.catalogue_view.header_states().items():
            store.setValue(f"catalogue-columns/{kind}/keys", keys)
            store.setValue(f"catalogue-columns/{kind}/state", state)
        compare = self.pages.get("compare")
        if compare is not None and hasattr(compare, "splitter"):
            store.setValue("compare/splitter", compare.splitter.saveState())
        store.sync()

    # ------------------------------------------------------------------ files dropped on the window
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        """Scenario files open in Compare (or Cluster, when drawn there); anything else is taken for
        benchmark results and opens the import."""
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if not paths:
            return
        event.acceptProposedAction()
        scenarios = [p for p in paths if _is_scenario(p)]
        results = [p for p in paths if p not in scenarios]
        for path in scenarios:
            self._open_scenario_file(path)
        if results:
            self.show_page("benchmarks").import_files(results)

    def _open_scenario_file(self, path: str) -> None:
        import json

        try:
            with open(path, encoding="utf-8") as handle:
                doc = json.load(handle)
        except (OSError, ValueError):
            doc = {}
        key = "cluster" if isinstance(doc, dict) and doc.get("canvas") else "compare"
        view = self.show_page(key)
        if hasattr(view, "open_path"):
            view.open_path(path)

    def closeEvent(self, event: QCloseEvent) -> None:
        for view in self.pages.values():
            if hasattr(view, "maybe_close") and not view.maybe_close():
                event.ignore()
                return
        self.save_state()
        if self._loader is not None and self._loader.isRunning():
            self._loader.preview_shown.set()
            self._loader.wait(30000)  # never leave the database half-migrated
        event.accept()


def _is_scenario(path: str) -> bool:
    """A gpudesk scenario (its first bytes name the format), not a benchmark result."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"gpudesk_scenario"' in head
