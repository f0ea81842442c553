"""The main window's menu bar: File, Edit, View and Help. File's document actions call the current
view's method of the same name; the window enables them where the view has it."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication

from gpudesk.core import paths


def add_action(window, menu, text, shortcut, slot) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(shortcut)
    # a slot never receives triggered()'s `checked` flag as its first argument (an optional
    # `path` or `confirm` parameter would take it for a value)
    action.triggered.connect(lambda *_: slot())
    menu.addAction(action)
    return action


def build_menus(window, pages) -> None:
    """The menus of `window` (a MainWindow); its act_* attributes are the actions it updates later."""
    bar = window.menuBar()
    _file_menu(window, bar.addMenu("&File"))

    edit_menu = bar.addMenu("&Edit")
    undo = window.undo_group.createUndoAction(window, "&Undo")
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    redo = window.undo_group.createRedoAction(window, "&Redo")
    redo.setShortcut(QKeySequence.StandardKey.Redo)
    edit_menu.addAction(undo)
    edit_menu.addAction(redo)
    edit_menu.addSeparator()
    add_action(window, edit_menu, "&Find", QKeySequence.StandardKey.Find, window._find)
    edit_menu.addSeparator()
    add_action(window, edit_menu, "&Preferences…", QKeySequence.StandardKey.Preferences, window._preferences)

    view_menu = bar.addMenu("&View")
    for i, (key, label, _icon) in enumerate(pages):
        add_action(window, view_menu, label, QKeySequence(f"Ctrl+{i + 1}"), lambda _=False, k=key: window.show_page(k))
    view_menu.addSeparator()
    add_action(window, view_menu, "&Full Screen", QKeySequence.StandardKey.FullScreen,
               lambda: window.showNormal() if window.isFullScreen() else window.showFullScreen())

    _help_menu(window, bar.addMenu("&Help"))


def _file_menu(window, menu) -> None:
    def call(method):
        return lambda: window._call(method)

    window.act_new = add_action(window, menu, "&New Scenario", QKeySequence.StandardKey.New, call("new_file"))
    window.act_open = add_action(window, menu, "&Open…", QKeySequence.StandardKey.Open, call("open_file"))
    window.act_save = add_action(window, menu, "&Save", QKeySequence.StandardKey.Save, call("save"))
    window.act_save_as = add_action(window, menu, "Save &As…", QKeySequence.StandardKey.SaveAs, call("save_as"))
    menu.addSeparator()
    window.act_pdf = add_action(window, menu, "Export &PDF Report…", QKeySequence("Ctrl+P"), call("export_pdf"))
    window.act_csv = add_action(window, menu, "Export &CSV…", None, call("export_csv"))
    window.act_import = add_action(window, menu, "&Import Benchmark Files…", QKeySequence("Ctrl+I"),
                                   window._import_files)
    window.act_catalogue_update = add_action(window, menu, "Import Catalogue &Update…", None,
                                             window._import_catalogue_update)
    menu.addSeparator()
    add_action(window, menu, "&Quit", QKeySequence.StandardKey.Quit, window.close)


def _help_menu(window, menu) -> None:
    window.act_guide = add_action(window, menu, "&Guide", QKeySequence.StandardKey.HelpContents, window.show_guide)
    window.act_shortcuts = add_action(window, menu, "&Keyboard Shortcuts", None, window.show_shortcuts)
    menu.addSeparator()
    window.act_data_folder = add_action(window, menu, "Open &Data Folder", None,
                                        lambda: window.open_folder(paths.data_dir()))
    window.act_log = add_action(window, menu, "Open &Log", None, window.open_log)
    menu.addSeparator()
    add_action(window, menu, "&About gpudesk", None, window.show_about)
    add_action(window, menu, "About &Qt", None, QApplication.aboutQt)
