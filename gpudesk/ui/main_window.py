"""The main window: navigation between the views, menus, status bar, remembered state.

The window shows before any heavy work: the catalogue opens on a worker thread, the catalogue's
view is built just after the first frame, and each other view the first time it is shown. Views do not import each other; this
module composes them.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QIcon, QUndoGroup
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gpudesk import APP_DISPLAY_NAME
from gpudesk.core import paths
from gpudesk.ui.state import settings_store
from gpudesk.ui.window import drop, offline, recovery
from gpudesk.ui.window import help as window_help
from gpudesk.ui.window.loader import CatalogueLoader
from gpudesk.ui.window.menus import build_menus
from gpudesk.ui.window.sidebar import ITEM_HEIGHT_PX, WIDE_PX, Sidebar
from gpudesk.ui.window.state import restore_catalogue, restore_state, save_state

PAGES = (
    ("catalogue", "Catalogue", "catalogue.svg"),
    ("compare", "Compare", "compare.svg"),
    ("cluster", "Cluster", "cluster.svg"),
    ("benchmarks", "Benchmarks", "benchmarks.svg"),
    ("reports", "Reports", "reports.svg"),
)


class MainWindow(QMainWindow):
    catalogueReady = Signal()
    catalogueFailed = Signal(str)

    def __init__(self, database_url: str | None = None, parent=None):
        super().__init__(parent)
        self.database_url = database_url
        self.catalogue = None
        self._loader: CatalogueLoader | None = None
        self.recovery_dialog = None  # the RecoveryDialog while it is shown
        self.offline_dialog = None  # the question shown while the team catalogue is unreachable
        self.working_locally_instead_of: str | None = None  # the unreachable team catalogue, when so
        self.repair_message = ""  # what the last repair did
        self.undo_group = QUndoGroup(self)
        self.setWindowTitle(APP_DISPLAY_NAME)
        self.setMinimumSize(QSize(980, 640))

        self.nav = QListWidget()
        self.nav.setObjectName("navigation")
        self.nav.setIconSize(QSize(20, 20))
        self.stack = QStackedWidget()
        self.pages: dict[str, QWidget] = {}
        self._page_index: dict[str, int] = {}
        for key, label, icon in PAGES:
            item = QListWidgetItem(QIcon(str(paths.resource("icons", icon))), label)
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setSizeHint(QSize(WIDE_PX - 10, ITEM_HEIGHT_PX))
            self.nav.addItem(item)
            holder = QWidget()
            QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
            self._page_index[key] = self.stack.addWidget(holder)
        self.nav.currentRowChanged.connect(self._nav_changed)

        # the catalogue view (its table models and the catalogue's field lists) is built once the window
        # has shown its first frame (start), or sooner where something asks for it
        self._catalogue_view = None
        self._snapshot = None  # the stored catalogue previewed before the view was built

        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.sidebar = Sidebar(self.nav)
        layout.addWidget(self.sidebar)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self.setAcceptDrops(True)  # result files and scenarios dropped anywhere on the window

        self.catalogue_status = QLabel("Opening the catalogue…")
        self.statusBar().addPermanentWidget(self.catalogue_status)
        self._build_menus()
        restore_state(self, PAGES)

    @property
    def catalogue_view(self):
        if self._catalogue_view is None:
            from gpudesk.ui.catalogue.view import CatalogueView

            self._catalogue_view = view = CatalogueView()
            view.message.connect(lambda m: self.statusBar().showMessage(m, 5000))
            view.populated.connect(self.catalogueReady.emit)
            restore_catalogue(view)
            self._install_page("catalogue", view)  # hands it the catalogue when that is open
            if self.catalogue is None and self._snapshot is not None:
                view.set_catalogue(self._snapshot)
                self._loader.go_on_after_paint()  # the snapshot came from it
            if self.current_page_key() == "catalogue":
                self._nav_changed(self.nav.currentRow())  # its actions, undo stack and title
        return self._catalogue_view

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.sidebar.fit_window(event.size().width())
        super().resizeEvent(event)

    # ------------------------------------------------------------------ start-up
    def start(self, database_url: str | None = None, read_only_copy_of: str | None = None) -> None:
        """Open the catalogue on a worker thread; views receive it when it is ready. `database_url`
        and `read_only_copy_of` open another database instead (see window/offline.py)."""
        if self._loader is not None:
            return
        self._loader = CatalogueLoader(database_url or self.database_url, self, read_only_copy_of)
        self._loader.unreachable.connect(lambda error: offline.ask(self, error))
        self._loader.previewed.connect(self._catalogue_previewed)
        self._loader.loaded.connect(self._catalogue_loaded)
        self._loader.failed.connect(self._catalogue_failed)
        self._loader.damaged.connect(self._catalogue_damaged)
        self._loader.start()
        QTimer.singleShot(0, lambda: self.catalogue_view)  # once the first frame is up

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
            self._snapshot = snapshot
            if self._catalogue_view is None:
                return  # the view, built after the first frame, shows it and then releases the loader
            self._catalogue_view.set_catalogue(snapshot)
        self._loader.go_on_after_paint()

    def _catalogue_loaded(self, catalogue) -> None:
        self.catalogue = catalogue
        where = self.database_url or str(paths.database_path())
        if getattr(catalogue, "engine", None) is not None and catalogue.engine.dialect.name != "sqlite":
            from gpudesk.core.catalogue.team import display_url

            where = f"team catalogue {display_url(catalogue.engine.url)}"
        self.catalogue_status.setText(offline.status_text(self, catalogue) or f"Catalogue {catalogue.version}  ·  {where}")
        for view in self.pages.values():
            if hasattr(view, "set_catalogue"):
                view.set_catalogue(catalogue)

    def _catalogue_failed(self, message: str) -> None:
        self.catalogue_status.setText("Catalogue unavailable")
        self.catalogueFailed.emit(message)
        recovery.cannot_open(self, message)

    def _catalogue_damaged(self, error) -> None:
        """Ask what to do about a damaged database; nothing is changed before the user answers."""
        recovery.ask(self, error)

    def _recover(self, dialog, database) -> None:
        recovery.recover(self, dialog, database)

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
        if key == "catalogue":
            return self.catalogue_view
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

    def current_view(self) -> QWidget | None:
        """The page shown, or None while the catalogue's is still being built."""
        return self.pages.get(self.current_page_key())

    def _nav_changed(self, row: int) -> None:
        key = PAGES[max(0, row)][0]
        # the catalogue's page stays empty until start() builds its view, after the first frame
        view = None if key == "catalogue" and self._catalogue_view is None else self.page(key)
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
        build_menus(self, PAGES)
        self._update_actions()

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
        window_help.show_guide(self)

    def show_shortcuts(self) -> None:
        window_help.show_shortcuts(self)

    def open_folder(self, folder) -> bool:
        return window_help.open_folder(self, folder)

    def open_log(self) -> bool:
        """The log file (in the log folder, which opens instead while nothing has been logged)."""
        return window_help.open_log(self)

    def show_about(self) -> None:
        window_help.show_about(self)

    # ------------------------------------------------------------------ state
    def save_state(self) -> None:
        save_state(self)

    # ------------------------------------------------------------------ files dropped on the window
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            drop.open_dropped(self, paths)

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

