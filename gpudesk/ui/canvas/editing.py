"""The Cluster view's edits, every one a command on the undo stack: add, connect, delete, copy,
paste and the properties panel's changes. A mixin of ClusterView: it reads the view's graph,
scene, canvas, catalogue and undo stack."""

from __future__ import annotations

import json

from PySide6.QtCore import QMimeData, QPointF
from PySide6.QtGui import QGuiApplication, QUndoCommand

from gpudesk.core.cluster.commands import AddItems, Command, RemoveItems, SetLink, SetNode
from gpudesk.core.cluster.convert import make_node
from gpudesk.core.cluster.model import ClusterGraph, Link, Node
from gpudesk.ui.canvas.items import NODE_H, NODE_W
from gpudesk.ui.widgets.clipboard import set_clipboard

CLIPBOARD_MIME = "application/x-gpudesk-canvas"
GRID = 20  # an added node's corner lands on this grid
PASTE_OFFSET = 40  # a pasted copy sits this far right of and below the original


class GraphCommand(QUndoCommand):
    """A flat QUndoCommand around a pure-Python command (no parent/child trees: PySide6 crashes on them)."""

    def __init__(self, command: Command, graph: ClusterGraph):
        super().__init__(command.text)
        self.command = command
        self.graph = graph

    def redo(self) -> None:
        with self.graph.batch():  # listeners defer their work to the end of the edit
            self.command.redo(self.graph)

    def undo(self) -> None:
        with self.graph.batch():
            self.command.undo(self.graph)

    def id(self) -> int:
        key = self.command.merge_key()
        return -1 if key is None else (hash(key) & 0x7FFFFFFF)

    def mergeWith(self, other) -> bool:  # noqa: N802 - Qt override
        if not isinstance(other, GraphCommand) or other.command.merge_key() != self.command.merge_key():
            return False
        return self.command.merge(other.command)


class EditActions:
    """Edits of the drawn cluster for ClusterView, each pushed as a command."""

    def push(self, command: Command) -> None:
        self.undo_stack.push(GraphCommand(command, self.graph))

    def add_item(self, kind: str, item: str, pos: QPointF | None = None) -> Node:
        if pos is None:
            centre = self.canvas.mapToScene(self.canvas.viewport().rect().center())
            pos = centre + QPointF(len(self.graph.nodes) % 5 * 24, len(self.graph.nodes) % 5 * 24)
        node = make_node(self.graph, self.catalogue, kind, item, pos.x() - NODE_W / 2, pos.y() - NODE_H / 2)
        node.x, node.y = round(node.x / GRID) * GRID, round(node.y / GRID) * GRID
        self.push(AddItems([node]))
        self.scene.select_ids([node.id])
        return self.graph.nodes[node.id]

    def connect_nodes(self, source_id: str, target_id: str, kind: str | None = None, count: int | None = None) -> Link | None:
        if any({lk.source, lk.target} == {source_id, target_id} for lk in self.graph.links.values()):
            self.status_message.emit("These nodes are already linked")
            return None
        kind = kind or self._default_link(source_id, target_id)
        link = Link(self.graph.new_id("l"), source_id, target_id, kind, count or self._default_ports(source_id))
        self.push(AddItems([], [link], "Connect"))
        return self.graph.links[link.id]

    def delete_selection(self) -> None:
        nodes, links = self.scene.selected_ids()
        if nodes or links:
            self.push(RemoveItems(nodes, links))

    def copy_selection(self) -> None:
        nodes, _links = self.scene.selected_ids()
        if not nodes:
            return
        chosen = set(nodes)
        data = {"nodes": [self.graph.nodes[i].to_dict() for i in nodes],
                "links": [lk.to_dict() for lk in self.graph.links.values() if lk.source in chosen and lk.target in chosen]}
        mime = QMimeData()
        mime.setData(CLIPBOARD_MIME, json.dumps(data).encode())
        mime.setText(json.dumps(data, indent=1))
        set_clipboard(mime)
        self.status_message.emit(f"Copied {len(nodes)} node(s)")

    def paste(self) -> None:
        mime = QGuiApplication.clipboard().mimeData()
        if mime is None or not mime.hasFormat(CLIPBOARD_MIME):
            return
        try:
            data = json.loads(bytes(mime.data(CLIPBOARD_MIME)).decode())
            scratch = ClusterGraph()
            scratch.load_dict(data)
        except (ValueError, UnicodeDecodeError) as exc:
            self.status_message.emit(f"Nothing to paste: {exc}")
            return
        ids = {}
        nodes = []
        for node in scratch.nodes.values():
            ids[node.id] = self.graph.new_id("n")
            nodes.append(node.copy(id=ids[node.id], x=node.x + PASTE_OFFSET, y=node.y + PASTE_OFFSET))
        links = []
        for link in scratch.links.values():
            links.append(Link(self.graph.new_id("l"), ids[link.source], ids[link.target], link.kind, link.count))
        self.push(AddItems(nodes, links, f"Paste {len(nodes)} node(s)"))
        self.scene.select_ids([n.id for n in nodes])

    def set_node(self, node_id: str, values: dict, ongoing: bool = False) -> None:
        node = self.graph.nodes.get(node_id)
        if node is None or all(getattr(node, k) == v for k, v in values.items()):
            return
        self.push(SetNode(node_id, values, session=self._session if ongoing else None, label=node.label))

    def _node_edited(self, node_id: str, values: dict, ongoing: bool) -> None:
        self.set_node(node_id, values, ongoing)

    def _link_edited(self, link_id: str, values: dict, ongoing: bool) -> None:
        link = self.graph.links.get(link_id)
        if link is None or all(getattr(link, k) == v for k, v in values.items()):
            return
        self.push(SetLink(link_id, values, session=self._session if ongoing else None))

    def _end_session(self) -> None:
        self._session += 1

    def _default_link(self, source_id: str, target_id: str) -> str:
        a, b = self.graph.nodes[source_id], self.graph.nodes[target_id]
        for node in (a, b):
            if node.kind == "switch":
                return node.item
        nics = [n.nic for n in (a, b) if n.nic]
        if nics:
            rates = {k: (self.catalogue.get("interconnects", k) or {}).get("unidirectional_gbs") or 0 for k in nics}
            return min(nics, key=lambda k: rates[k])
        return "eth-100g"

    def _default_ports(self, node_id: str) -> int:
        node = self.graph.nodes[node_id]
        return node.nic_count or 1
