"""Undoable edits of the cluster graph, and a pure-Python undo stack (the Qt view adapts each
command into a flat QUndoCommand; PySide6 crashes on QUndoCommand parent/child trees).

A command changes only the graph. Commands with the same merge key pushed one after another
merge into one step: a drag is one step, and so is a spin-box edit.
"""

from __future__ import annotations

from collections.abc import Callable

from gpudesk.core.cluster.model import ClusterGraph, Link, Node, paused_gc


class Command:
    text = "Edit"

    def redo(self, graph: ClusterGraph) -> None:
        raise NotImplementedError

    def undo(self, graph: ClusterGraph) -> None:
        raise NotImplementedError

    def merge_key(self):
        return None

    def merge(self, other: Command) -> bool:
        """Absorb `other` (pushed right after this one with the same merge key)."""
        return False


class AddItems(Command):
    """Add nodes and the links between them (a new node, or a paste)."""

    def __init__(self, nodes: list[Node], links: list[Link] = (), text: str = ""):
        with paused_gc():  # a 10,000-machine cluster is 71,680 copies
            self.nodes = [n.copy() for n in nodes]
            self.links = [lk.copy() for lk in links]
        self.text = text or (f"Add {self.nodes[0].label or self.nodes[0].item}" if len(self.nodes) == 1 and not self.links
                             else f"Add {len(self.nodes)} nodes and {len(self.links)} links")

    def redo(self, graph):
        # the graph takes this command's own copies, as RemoveItems.undo gives back the very items
        # it removed: when this step is redone, every later step has been undone, so they are as
        # they were when first added
        graph.add_items(self.nodes, self.links)

    def undo(self, graph):
        graph.remove_items([link.id for link in reversed(self.links)], [node.id for node in reversed(self.nodes)])


class RemoveItems(Command):
    """Remove nodes (with every link that touches them) and links."""

    def __init__(self, node_ids=(), link_ids=()):
        self.node_ids = list(node_ids)
        self.link_ids = list(link_ids)
        self.removed_nodes: list[Node] = []
        self.removed_links: list[Link] = []
        n, k = len(self.node_ids), len(self.link_ids)
        self.text = f"Delete {n} node{'s' * (n != 1)}" if n else f"Delete {k} link{'s' * (k != 1)}"

    def redo(self, graph):
        links = set(self.link_ids)
        for node_id in self.node_ids:
            links.update(lk.id for lk in graph.links_of(node_id))
        self.removed_nodes, self.removed_links = graph.remove_items(
            [i for i in sorted(links) if i in graph.links], [i for i in dict.fromkeys(self.node_ids) if i in graph.nodes])

    def undo(self, graph):
        graph.add_items(self.removed_nodes, self.removed_links)


class MoveNodes(Command):
    text = "Move"

    def __init__(self, moves: dict[str, tuple[tuple[float, float], tuple[float, float]]]):
        self.moves = dict(moves)  # id -> (old, new)
        n = len(self.moves)
        self.text = f"Move {n} node{'s' * (n != 1)}"

    def redo(self, graph):
        for node_id, (_old, new) in self.moves.items():
            graph.set_node(node_id, x=new[0], y=new[1])

    def undo(self, graph):
        for node_id, (old, _new) in self.moves.items():
            graph.set_node(node_id, x=old[0], y=old[1])


class SetNode(Command):
    """Change fields of one node; edits of the same fields in one editing session merge."""

    def __init__(self, node_id: str, values: dict, session: object = None, label: str = ""):
        self.node_id = node_id
        self.values = dict(values)
        self.session = session
        self.old: dict | None = None
        self.text = f"Change {label or node_id}: {', '.join(self.values)}"

    def redo(self, graph):
        node = graph.nodes[self.node_id]
        if self.old is None:
            self.old = {k: getattr(node, k) for k in self.values}
        graph.set_node(self.node_id, **self.values)

    def undo(self, graph):
        graph.set_node(self.node_id, **self.old)

    def merge_key(self):
        return None if self.session is None else ("node", self.node_id, tuple(sorted(self.values)), self.session)

    def merge(self, other):
        self.values.update(other.values)
        return True


class SetLink(Command):
    def __init__(self, link_id: str, values: dict, session: object = None):
        self.link_id = link_id
        self.values = dict(values)
        self.session = session
        self.old: dict | None = None
        self.text = f"Change link: {', '.join(self.values)}"

    def redo(self, graph):
        link = graph.links[self.link_id]
        if self.old is None:
            self.old = {k: getattr(link, k) for k in self.values}
        graph.set_link(self.link_id, **self.values)

    def undo(self, graph):
        graph.set_link(self.link_id, **self.old)

    def merge_key(self):
        return None if self.session is None else ("link", self.link_id, tuple(sorted(self.values)), self.session)

    def merge(self, other):
        self.values.update(other.values)
        return True


class SetCountUnlinked(Command):
    """Count the machines with no link to the rest of the cluster in the estimate, or leave them out."""

    def __init__(self, value: bool):
        self.value = bool(value)
        self.old: bool | None = None
        self.text = "Count unlinked machines" if self.value else "Leave unlinked machines out"

    def redo(self, graph):
        self.old = graph.set_count_unlinked(self.value)

    def undo(self, graph):
        graph.set_count_unlinked(bool(self.old))


class Macro(Command):
    """Several commands as one step (a flat list, never a tree of Qt commands)."""

    def __init__(self, commands: list[Command], text: str):
        self.commands = list(commands)
        self.text = text

    def redo(self, graph):
        for command in self.commands:
            command.redo(graph)

    def undo(self, graph):
        for command in reversed(self.commands):
            command.undo(graph)


class UndoStack:
    """A pure-Python undo stack with a clean state (for tests, scripts and headless use)."""

    def __init__(self, graph: ClusterGraph):
        self.graph = graph
        self.commands: list[Command] = []
        self.index = 0
        self.clean_index: int | None = 0
        self.changed: list[Callable[[], None]] = []

    def push(self, command: Command) -> None:
        command.redo(self.graph)
        del self.commands[self.index:]
        if self.clean_index is not None and self.clean_index > self.index:
            self.clean_index = None
        last = self.commands[-1] if self.commands and self.index == len(self.commands) else None
        key = command.merge_key()
        if last is not None and key is not None and last.merge_key() == key and self.clean_index != self.index \
                and last.merge(command):
            pass
        else:
            self.commands.append(command)
            self.index += 1
        self._notify()

    def undo(self) -> bool:
        if self.index == 0:
            return False
        self.index -= 1
        self.commands[self.index].undo(self.graph)
        self._notify()
        return True

    def redo(self) -> bool:
        if self.index >= len(self.commands):
            return False
        self.commands[self.index].redo(self.graph)
        self.index += 1
        self._notify()
        return True

    def can_undo(self) -> bool:
        return self.index > 0

    def can_redo(self) -> bool:
        return self.index < len(self.commands)

    def set_clean(self) -> None:
        self.clean_index = self.index
        self._notify()

    def is_clean(self) -> bool:
        return self.clean_index == self.index

    def clear(self) -> None:
        self.commands.clear()
        self.index = 0
        self.clean_index = 0
        self._notify()

    def _notify(self) -> None:
        for callback in list(self.changed):
            callback()
