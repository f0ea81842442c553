"""The cluster canvas's graph: nodes (groups of identical machines, cloud instances or switches)
and links between them, with change events the scene listens to. No Qt: the canvas follows the
graph, commands change it (Orange's scheme / canvas / document split)."""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields

NODE_KINDS = ("system", "accelerator", "cloud", "switch")
NODE_FIELDS = ("label", "item", "kind", "count", "per_node", "intra", "nic", "nic_count", "overhead_w", "x", "y",
               "overrides")
LINK_FIELDS = ("kind", "count")


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while many objects are made at once. Python runs a collection
    every few hundred new objects, and each older-generation pass walks every object the process
    holds: adding a 10,000-machine cluster (some 150,000 new objects beside a Qt application's)
    spent a third of its time there. Collection resumes as before when the block ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class Node:
    id: str
    kind: str  # system | accelerator | cloud | switch
    item: str  # catalogue id (a switch names its link type)
    label: str = ""
    count: int = 1  # identical machines this node stands for (a rack of 32 servers is one node)
    per_node: int | None = None  # accelerators in each machine (systems and cloud instances know theirs)
    intra: str | None = None  # link between the accelerators inside a machine
    nic: str | None = None  # the machine's scale-out NIC (interconnect id)
    nic_count: int | None = None
    overhead_w: float | None = None  # host power per machine, overriding the model
    x: float = 0.0
    y: float = 0.0
    overrides: dict = field(default_factory=dict)

    def copy(self, **changes) -> Node:
        # field by field, not dataclasses.replace: replace() reads fields() on every call, which was
        # a third of a second when copying the 10,480 nodes of a 10,000-machine cluster
        node = Node(self.id, self.kind, self.item, self.label, self.count, self.per_node, self.intra, self.nic,
                    self.nic_count, self.overhead_w, self.x, self.y, dict(self.overrides))
        for key, value in changes.items():
            if key not in _NODE_NAMES:
                raise TypeError(f"a node has no field '{key}'")
            setattr(node, key, dict(value) if key == "overrides" else value)
        return node

    def to_dict(self) -> dict:
        out = {name: getattr(self, name) for name in _NODE_NAMES}
        return {k: v for k, v in out.items() if v not in (None, {}, "") or k in ("x", "y")}


@dataclass
class Link:
    id: str
    source: str
    target: str
    kind: str  # interconnect id
    count: int = 1  # parallel links or ports per machine

    def copy(self) -> Link:
        return Link(self.id, self.source, self.target, self.kind, self.count)

    def to_dict(self) -> dict:
        return {"id": self.id, "source": self.source, "target": self.target, "kind": self.kind, "count": self.count}


_NODE_NAMES = tuple(f.name for f in fields(Node))


class ClusterGraph:
    """Nodes and links; every change goes through a method that emits an event."""

    EVENTS = ("node_added", "node_removed", "node_changed", "link_added", "link_removed", "link_changed", "reset",
              "options_changed", "items_added", "items_removed")

    def __init__(self):
        self.nodes: dict[str, Node] = {}
        self.links: dict[str, Link] = {}
        self._listeners: dict[str, list[Callable]] = {e: [] for e in self.EVENTS}
        self._ids = itertools.count(1)
        self._links_of: dict[str, set[str]] = {}
        self._batch_depth = 0
        self._batch_listeners: list[Callable[[bool], None]] = []
        # machines with no link to the rest of the cluster are left out of the estimate unless the
        # user chooses to count them (as if they were networked by their own NICs)
        self.count_unlinked = False

    # -------------------------------------------------------------- events
    def subscribe(self, event: str, callback: Callable) -> None:
        self._listeners[event].append(callback)

    def unsubscribe(self, event: str, callback: Callable) -> None:
        if callback in self._listeners[event]:
            self._listeners[event].remove(callback)

    def _emit(self, event: str, *args) -> None:
        for callback in list(self._listeners[event]):
            callback(*args)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One edit of many items (a pasted fat tree, a multi-node delete): the item events still
        come one by one, but listeners that subscribed with `subscribe_batch` hear when the edit
        begins and ends, so that they can defer their own work (a scene adding 70,000 items, a
        panel refreshing) to the end."""
        with paused_gc():
            self._batch_depth += 1
            if self._batch_depth == 1:
                for callback in list(self._batch_listeners):
                    callback(True)
            try:
                yield
            finally:
                self._batch_depth -= 1
                if self._batch_depth == 0:
                    for callback in list(self._batch_listeners):
                        callback(False)

    @property
    def in_batch(self) -> bool:
        return self._batch_depth > 0

    def subscribe_batch(self, callback: Callable[[bool], None]) -> None:
        """`callback(True)` when a batch edit begins, `callback(False)` when it has ended."""
        self._batch_listeners.append(callback)

    # -------------------------------------------------------------- ids
    def new_id(self, prefix: str) -> str:
        while True:
            candidate = f"{prefix}{next(self._ids)}"
            if candidate not in self.nodes and candidate not in self.links:
                return candidate

    # -------------------------------------------------------------- nodes
    def add_node(self, node: Node) -> Node:
        if node.id in self.nodes:
            raise ValueError(f"node '{node.id}' already exists")
        if node.kind not in NODE_KINDS:
            raise ValueError(f"node kind '{node.kind}' is not one of {', '.join(NODE_KINDS)}")
        if node.count < 1:
            raise ValueError(f"node '{node.id}': count must be at least 1")
        self.nodes[node.id] = node
        self._links_of.setdefault(node.id, set())
        self._emit("node_added", node)
        return node

    def remove_node(self, node_id: str) -> Node:
        """Remove a node; its links must be removed first (commands do both, in order)."""
        if self._links_of.get(node_id):
            raise ValueError(f"node '{node_id}' still has links")
        node = self.nodes.pop(node_id)
        self._links_of.pop(node_id, None)
        self._emit("node_removed", node)
        return node

    def set_node(self, node_id: str, **values) -> dict:
        """Change fields of a node; returns the previous values of what changed."""
        node = self.nodes[node_id]
        old = {}
        for key, value in values.items():
            if key not in NODE_FIELDS:
                raise KeyError(f"a node has no field '{key}'")
            if key == "count" and (not isinstance(value, int) or value < 1):
                raise ValueError("count must be a whole number of at least 1")
            if getattr(node, key) != value:
                old[key] = getattr(node, key)
                setattr(node, key, dict(value) if key == "overrides" else value)
        if old:
            self._emit("node_changed", node, tuple(old))
        return old

    # -------------------------------------------------------------- links
    def add_link(self, link: Link) -> Link:
        if link.id in self.links:
            raise ValueError(f"link '{link.id}' already exists")
        if link.source not in self.nodes or link.target not in self.nodes:
            raise ValueError("a link joins two nodes of the graph")
        if link.source == link.target:
            raise ValueError("a link joins two different nodes")
        self.links[link.id] = link
        self._links_of[link.source].add(link.id)
        self._links_of[link.target].add(link.id)
        self._emit("link_added", link)
        return link

    def remove_link(self, link_id: str) -> Link:
        link = self.links.pop(link_id)
        self._links_of[link.source].discard(link_id)
        self._links_of[link.target].discard(link_id)
        self._emit("link_removed", link)
        return link

    def set_link(self, link_id: str, **values) -> dict:
        link = self.links[link_id]
        old = {}
        for key, value in values.items():
            if key not in LINK_FIELDS:
                raise KeyError(f"a link has no field '{key}'")
            if key == "count" and (not isinstance(value, int) or value < 1):
                raise ValueError("count must be a whole number of at least 1")
            if getattr(link, key) != value:
                old[key] = getattr(link, key)
                setattr(link, key, value)
        if old:
            self._emit("link_changed", link, tuple(old))
        return old

    # -------------------------------------------------------------- many items in one step
    def add_items(self, nodes: list[Node], links: list[Link]) -> None:
        """Add nodes and links as one change: all are checked before any is added (a bad one
        raises ValueError and leaves the graph as it was), and listeners hear one `items_added`
        (nodes, links) instead of an event per item (a 10,000-machine fat tree is 71,680 items)."""
        new_nodes: dict[str, Node] = {}
        for node in nodes:
            if node.id in self.nodes or node.id in new_nodes:
                raise ValueError(f"node '{node.id}' already exists")
            if node.kind not in NODE_KINDS:
                raise ValueError(f"node kind '{node.kind}' is not one of {', '.join(NODE_KINDS)}")
            if node.count < 1:
                raise ValueError(f"node '{node.id}': count must be at least 1")
            new_nodes[node.id] = node
        new_links: set[str] = set()
        for link in links:
            if link.id in self.links or link.id in new_links:
                raise ValueError(f"link '{link.id}' already exists")
            if (link.source not in self.nodes and link.source not in new_nodes) or \
                    (link.target not in self.nodes and link.target not in new_nodes):
                raise ValueError("a link joins two nodes of the graph")
            if link.source == link.target:
                raise ValueError("a link joins two different nodes")
            new_links.add(link.id)
        links_of = self._links_of
        self.nodes.update(new_nodes)
        for node_id in new_nodes:
            links_of.setdefault(node_id, set())
        graph_links = self.links
        for link in links:
            graph_links[link.id] = link
            links_of[link.source].add(link.id)
            links_of[link.target].add(link.id)
        self._emit("items_added", list(nodes), list(links))

    def remove_items(self, link_ids, node_ids) -> tuple[list[Node], list[Link]]:
        """Remove links, then nodes, as one change (a node's links must be among `link_ids` or gone
        already); listeners hear one `items_removed` (nodes, links). Returns what was removed."""
        link_ids, node_ids = list(link_ids), list(node_ids)
        gone = set(link_ids)
        for node_id in node_ids:
            if node_id not in self.nodes:
                raise KeyError(node_id)
            if self._links_of.get(node_id, set()) - gone:
                raise ValueError(f"node '{node_id}' still has links")
        links = [self.links.pop(link_id) for link_id in link_ids]
        for link in links:
            self._links_of[link.source].discard(link.id)
            self._links_of[link.target].discard(link.id)
        nodes = [self.nodes.pop(node_id) for node_id in node_ids]
        for node in nodes:
            self._links_of.pop(node.id, None)
        self._emit("items_removed", nodes, links)
        return nodes, links

    def set_count_unlinked(self, value: bool) -> bool:
        """Count machines with no link in the estimate, or not; returns the previous setting."""
        old = self.count_unlinked
        if bool(value) != old:
            self.count_unlinked = bool(value)
            self._emit("options_changed", "count_unlinked")
        return old

    def links_of(self, node_id: str) -> list[Link]:
        return [self.links[i] for i in sorted(self._links_of.get(node_id, ()))]

    def neighbour_ids(self, node_id: str) -> Iterator[str]:
        """The nodes linked to a node, unsorted (for graph walks that visit every link)."""
        links = self.links
        for link_id in self._links_of.get(node_id, ()):
            link = links[link_id]
            yield link.target if link.source == node_id else link.source

    def neighbours(self, node_id: str) -> list[str]:
        out = []
        for link in self.links_of(node_id):
            out.append(link.target if link.source == node_id else link.source)
        return out

    def clear(self) -> None:
        self.nodes.clear()
        self.links.clear()
        self._links_of.clear()
        self.count_unlinked = False
        self._emit("reset")

    # -------------------------------------------------------------- whole graph
    def to_dict(self) -> dict:
        out = {"nodes": [n.to_dict() for n in self.nodes.values()], "links": [lk.to_dict() for lk in self.links.values()]}
        if self.count_unlinked:
            out["count_unlinked"] = True
        return out

    def load_dict(self, data: dict) -> None:
        """Replace the graph with a saved canvas; raises ValueError naming the bad entry."""
        nodes, links = [], []
        count_unlinked = data.get("count_unlinked", False)
        if not isinstance(count_unlinked, bool):
            raise ValueError("canvas.count_unlinked: must be true or false")
        for i, raw in enumerate(data.get("nodes", [])):
            if not isinstance(raw, dict):
                raise ValueError(f"canvas.nodes[{i}]: must be an object")
            unknown = set(raw) - {f.name for f in fields(Node)}
            if unknown:
                raise ValueError(f"canvas.nodes[{i}]: unknown keys {', '.join(sorted(unknown))}")
            try:
                node = Node(**raw)
            except TypeError as exc:
                raise ValueError(f"canvas.nodes[{i}]: {exc}") from None
            if node.kind not in NODE_KINDS or not isinstance(node.count, int) or node.count < 1:
                raise ValueError(f"canvas.nodes[{i}]: kind must be one of {', '.join(NODE_KINDS)} and count at least 1")
            nodes.append(node)
        ids = {n.id for n in nodes}
        if len(ids) != len(nodes):
            raise ValueError("canvas.nodes: two nodes share an id")
        for i, raw in enumerate(data.get("links", [])):
            if not isinstance(raw, dict):
                raise ValueError(f"canvas.links[{i}]: must be an object")
            try:
                link = Link(**raw)
            except TypeError as exc:
                raise ValueError(f"canvas.links[{i}]: {exc}") from None
            if link.source not in ids or link.target not in ids or link.source == link.target:
                raise ValueError(f"canvas.links[{i}]: must join two different nodes of the canvas")
            if not isinstance(link.count, int) or link.count < 1:
                raise ValueError(f"canvas.links[{i}]: count must be at least 1")
            links.append(link)
        self.nodes = {}
        self.links = {}
        self._links_of = {}
        self.count_unlinked = count_unlinked
        for node in nodes:
            self.nodes[node.id] = node
            self._links_of[node.id] = set()
        for link in links:
            self.links[link.id] = link
            self._links_of[link.source].add(link.id)
            self._links_of[link.target].add(link.id)
        self._emit("reset")
