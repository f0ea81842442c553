"""The Cluster view's widgets put together: the title, the toolbar, the palette, the canvas and
the side panels (properties above the live estimates), and the signals that join them to the
view. A mixin of ClusterView: it reads the view's graph, scene, canvas, palette, properties,
panel and undo stack."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from gpudesk.core.cluster.commands import MoveNodes, SetCountUnlinked
from gpudesk.core.cluster.model import ClusterGraph

ZOOM_IN, ZOOM_OUT = 1.25, 0.8  # the toolbar's zoom steps


class ViewLayout:
    """Builds ClusterView's widgets and toolbar and connects their signals."""

    def _connect_signals(self) -> None:
        for event in ClusterGraph.EVENTS:
            self.graph.subscribe(event, self._graph_changed)
        self.graph.subscribe_batch(lambda begins: None if begins else self._graph_changed())
        self.scene.nodes_moved.connect(lambda moves: self.push(MoveNodes(moves)))
        self.scene.link_requested.connect(self.connect_nodes)
        self.scene.selectionChanged.connect(self._selection_changed)
        self.canvas.dropped.connect(lambda kind, item, pos: self.add_item(kind, item, pos))
        self.palette.tree.add_requested.connect(lambda kind, item: self.add_item(kind, item))
        self.properties.node_edited.connect(self._node_edited)
        self.properties.link_edited.connect(self._link_edited)
        self.properties.edit_finished.connect(self._end_session)
        self.panel.workload_chosen.connect(self._workload_chosen)
        self.panel.rent_chosen.connect(self._rent_chosen)
        self.panel.count_unlinked_changed.connect(lambda on: self.push(SetCountUnlinked(on)))

    def _build_layout(self) -> None:
        title = QLabel("Cluster")
        title.setObjectName("pageTitle")
        self.subtitle = QLabel("Draw a cluster from catalogue items; the estimates follow every edit.")
        self.subtitle.setObjectName("pageSubtitle")
        toolbar = self._toolbar()
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(self.palette)
        main.addWidget(self.canvas)
        main.addWidget(self._side())
        main.setStretchFactor(1, 1)
        main.setSizes([230, 760, 370])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 10)
        layout.setSpacing(6)
        head = QHBoxLayout()
        titles = QVBoxLayout()
        titles.setSpacing(0)
        titles.addWidget(title)
        titles.addWidget(self.subtitle)
        head.addLayout(titles, 1)
        layout.addLayout(head)
        layout.addWidget(toolbar)
        layout.addWidget(main, 1)

    def _side(self) -> QWidget:
        """The properties of the selection above the live estimates (which scroll)."""
        panel_scroll = QScrollArea()
        panel_scroll.setWidgetResizable(True)
        panel_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        panel_scroll.setFrameShape(QFrame.Shape.NoFrame)
        panel_scroll.setWidget(self.panel)
        side = QSplitter(Qt.Orientation.Vertical)
        side.addWidget(self.properties)
        side.addWidget(panel_scroll)
        side.setStretchFactor(1, 3)
        side.setSizes([250, 560])
        return side

    def _action(self, bar: QToolBar, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.setToolTip(tip or text)
        action.triggered.connect(lambda *_: slot())  # never pass `checked` on as an argument
        bar.addAction(action)
        self.addAction(action)
        return action

    @staticmethod
    def _short_label(action, word: str, text: str) -> None:
        action.setText(word)
        action.setToolTip(f"{word} {text[:1].lower() + text[1:]}" if text else f"Nothing to {word.lower()}")

    def _undo_text_changed(self, text: str) -> None:
        self._short_label(self.undo_action, "Undo", text)

    def _redo_text_changed(self, text: str) -> None:
        self._short_label(self.redo_action, "Redo", text)

    def _toolbar(self) -> QToolBar:
        bar = QToolBar()
        bar.setIconSize(QSize(16, 16))
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        act = self._action
        self.undo_action = self.undo_stack.createUndoAction(self, "Undo")
        self.redo_action = self.undo_stack.createRedoAction(self, "Redo")
        # the toolbar keeps short labels (a long command name would push the other buttons along);
        # what would be undone or redone is in the tooltip, and in the Edit menu's full text
        self.undo_stack.undoTextChanged.connect(self._undo_text_changed)  # bound: gone with the view
        self.undo_stack.redoTextChanged.connect(self._redo_text_changed)
        bar.addAction(self.undo_action)
        bar.addAction(self.redo_action)
        bar.addSeparator()
        act(bar, "Delete", self.delete_selection, QKeySequence.StandardKey.Delete, "Delete the selected nodes and links")
        act(bar, "Copy", self.copy_selection, QKeySequence.StandardKey.Copy)
        act(bar, "Paste", self.paste, QKeySequence.StandardKey.Paste)
        bar.addSeparator()
        act(bar, "Fit", self.canvas.fit, QKeySequence("F"), "Fit the cluster in view")
        act(bar, "Zoom in", lambda: self.canvas.zoom(ZOOM_IN), QKeySequence.StandardKey.ZoomIn)
        act(bar, "Zoom out", lambda: self.canvas.zoom(ZOOM_OUT), QKeySequence.StandardKey.ZoomOut)
        self.snap_action = act(bar, "Snap to grid", lambda: self.scene.set_snap(self.snap_action.isChecked()))
        self.snap_action.setCheckable(True)
        self.snap_action.setChecked(True)
        bar.addSeparator()
        act(bar, "Export PNG…", lambda: self.export_image(fmt="png"))
        act(bar, "Export SVG…", lambda: self.export_image(fmt="svg"))
        act(bar, "PDF report…", self.export_pdf)
        return bar
