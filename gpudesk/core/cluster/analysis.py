"""What the canvas shows after every edit, kept up to date edit by edit: the connected parts of
the graph, the cluster entries the estimate reads and the problems marked on the canvas. A
10,000-machine fat tree has 70,000 items; an edit touches one or two, so the analysis follows the
graph's events and redoes only what an edit touched. `convert.graph_entries`, `linked_machines`
and `graph_problems` are the from-scratch definitions it must agree with (tests check that after
random edit sequences). No Qt."""

from __future__ import annotations

import itertools
from collections import deque

from gpudesk.core.cluster.convert import (
    Problem,
    entry_key,
    island_problem,
    link_messages,
    link_signature,
    new_entry,
    nic_messages,
    nic_signature,
    node_network,
)
from gpudesk.core.cluster.model import ClusterGraph, Link, Node
from gpudesk.core.scenario import ClusterEntry

# removals since the last question after which one full pass is cheaper than searching per removal
REBUILD_AFTER_REMOVALS = 256
SIGNATURE_FIELDS = frozenset(("kind", "item", "label", "per_node"))  # what link and NIC checks read


class Components:
    """The connected parts of a graph, kept up to date from its events: a new link merges two
    parts (the smaller into the larger); a removed link searches from both of its ends at once and
    stops when they meet (still one part) or when one side runs out (that side is a part of its
    own). Each part knows how many machines it holds, so the cluster proper is found without a
    walk."""

    def __init__(self, graph: ClusterGraph):
        self.graph = graph
        self.part_of: dict[str, int] = {}
        self.members: dict[int, set[str]] = {}
        self.machines: dict[int, int] = {}
        self._weight: dict[str, int] = {}  # machines each node stands for (0 for a switch)
        self._ids = itertools.count()
        self._stale = True
        self._removals = 0

    # -------------------------------------------------------------- following the graph
    def invalidate(self) -> None:
        self._stale = True

    def node_added(self, node: Node) -> None:
        if self._stale:
            return
        part = next(self._ids)
        self.part_of[node.id] = part
        self.members[part] = {node.id}
        self._weight[node.id] = self.machines[part] = _weight(node)

    def node_removed(self, node: Node) -> None:
        if self._stale:
            return
        part = self.part_of.pop(node.id)  # a node is removed after its links: it is a part on its own
        del self.members[part], self.machines[part]
        self._weight.pop(node.id, None)

    def node_changed(self, node: Node) -> None:
        if self._stale:
            return
        weight = _weight(node)
        self.machines[self.part_of[node.id]] += weight - self._weight[node.id]
        self._weight[node.id] = weight

    def link_added(self, link: Link) -> None:
        if self._stale:
            return
        a, b = self.part_of[link.source], self.part_of[link.target]
        if a == b:
            return
        if len(self.members[a]) < len(self.members[b]):
            a, b = b, a
        moved = self.members.pop(b)
        for node_id in moved:
            self.part_of[node_id] = a
        self.members[a] |= moved
        self.machines[a] += self.machines.pop(b)

    def link_removed(self, link: Link) -> None:
        if self._stale:
            return
        self._removals += 1
        if self._removals > REBUILD_AFTER_REMOVALS:  # a big delete: one pass at the next question
            self._stale = True
            return
        cut_off = self._cut_off(link.source, link.target)
        if cut_off is None:
            return
        old = self.part_of[link.source]
        part = next(self._ids)
        self.members[old] -= cut_off
        self.members[part] = cut_off
        weight = sum(self._weight[i] for i in cut_off)
        self.machines[old] -= weight
        self.machines[part] = weight
        for node_id in cut_off:
            self.part_of[node_id] = part

    def _cut_off(self, a: str, b: str) -> set[str] | None:
        """None when a and b are still joined; else the smaller side's nodes (breadth-first from
        both ends, one node at a time each, so the work is about twice the smaller side)."""
        seen = ({a}, {b})
        queues = (deque([a]), deque([b]))
        neighbours = self.graph.neighbour_ids
        while True:
            for side in (0, 1):
                queue, mine, theirs = queues[side], seen[side], seen[1 - side]
                if not queue:
                    return mine
                for other in neighbours(queue.popleft()):
                    if other in theirs:
                        return None
                    if other not in mine:
                        mine.add(other)
                        queue.append(other)

    def _rebuild(self) -> None:
        self.part_of.clear()
        self.members.clear()
        self.machines.clear()
        self._weight = {node_id: _weight(node) for node_id, node in self.graph.nodes.items()}
        neighbours = self.graph.neighbour_ids
        for start in self.graph.nodes:
            if start in self.part_of:
                continue
            part = next(self._ids)
            found = {start}
            stack = [start]
            while stack:
                for other in neighbours(stack.pop()):
                    if other not in found:
                        found.add(other)
                        stack.append(other)
            self.members[part] = found
            self.machines[part] = sum(self._weight[i] for i in found)
            for node_id in found:
                self.part_of[node_id] = part
        self._stale = False

    # -------------------------------------------------------------- questions
    def parts(self) -> dict[int, set[str]]:
        if self._stale:
            self._rebuild()
        self._removals = 0
        return self.members

    def main(self, order: dict[str, int]) -> int | None:
        """The part that is the cluster: the most machines, then the most nodes, then the one
        whose first node was drawn first. None when the graph is in one piece or empty."""
        parts = self.parts()
        if len(parts) < 2:
            return None
        best = max((self.machines[p], len(m)) for p, m in parts.items())
        tied = [p for p, m in parts.items() if (self.machines[p], len(m)) == best]
        if len(tied) == 1:
            return tied[0]
        return min(tied, key=lambda p: min(order[i] for i in parts[p]))


def _weight(node: Node) -> int:
    return 0 if node.kind == "switch" else node.count


def _overlap(small: set[str], large: dict) -> bool:
    if len(small) > len(large):
        return any(i in small for i in large)
    return any(i in large for i in small)


class _Group:
    """Machine nodes that merge into one cluster entry."""

    __slots__ = ("members", "total", "first")

    def __init__(self):
        self.members: dict[str, int] = {}  # node id -> its count
        self.total = 0
        self.first: int | None = None  # the smallest drawing order of a member; None: work it out


class GraphAnalysis:
    """The canvas's cluster entries, machines left out and problems, following the graph's events
    (see the module's doc). Edits only mark what they touched; the questions (`entries`,
    `unlinked`, `problems`) bring the marked items up to date. Call `reset()` when the catalogue
    changes (a catalogue edited in place is noticed too)."""

    EVENTS = ("node_added", "node_removed", "node_changed", "link_added", "link_removed", "link_changed", "reset",
              "options_changed", "items_added", "items_removed")

    def __init__(self, graph: ClusterGraph, catalogue):
        self.graph = graph
        self.catalogue = catalogue
        self.components = Components(graph)
        self._order: dict[str, int] = {}  # node and link ids in the order drawn (as the graph's dicts)
        self._counter = itertools.count()
        self._memo: dict[tuple, list[str]] = {}  # problem messages by signature
        self._link_problems: dict[str, list[str]] = {}  # links with problems only
        self._nic_problems: dict[str, list[str]] = {}  # nodes with problems only
        self._entry_of: dict[str, tuple[tuple, tuple, int]] = {}  # node -> (key, network, count)
        self._groups: dict[tuple, _Group] = {}
        self._dirty_nodes: set[str] = set()
        self._dirty_links: set[str] = set()
        self._stamp: tuple | None = None
        self._answers: dict[str, object] = {}  # answers until the next edit
        self._handlers = {"node_added": self._node_added, "node_removed": self._node_removed,
                          "node_changed": self._node_changed, "link_added": self._link_added,
                          "link_removed": self._link_removed, "link_changed": self._link_changed,
                          "reset": self._graph_reset, "options_changed": self._options_changed,
                          "items_added": self._items_added, "items_removed": self._items_removed}
        for event, handler in self._handlers.items():
            graph.subscribe(event, handler)
        self._graph_reset()

    def close(self) -> None:
        for event, handler in self._handlers.items():
            self.graph.unsubscribe(event, handler)

    def reset(self, catalogue=None) -> None:
        """Recheck everything (the catalogue changed)."""
        if catalogue is not None:
            self.catalogue = catalogue
        self._memo.clear()
        self._link_problems.clear()
        self._nic_problems.clear()
        self._entry_of.clear()
        self._groups.clear()
        self._dirty_nodes = set(self.graph.nodes)
        self._dirty_links = set(self.graph.links)
        self._answers.clear()

    # -------------------------------------------------------------- events: mark what an edit touched
    def _graph_reset(self, *_args) -> None:
        self._order = {}
        for item_id in itertools.chain(self.graph.nodes, self.graph.links):
            self._order[item_id] = next(self._counter)
        self.components.invalidate()
        self.reset()

    def _options_changed(self, *_args) -> None:
        self._answers.clear()

    def _node_added(self, node: Node) -> None:
        self._order[node.id] = next(self._counter)
        self.components.node_added(node)
        self._dirty_nodes.add(node.id)
        self._answers.clear()

    def _node_removed(self, node: Node) -> None:
        self._order.pop(node.id, None)
        self.components.node_removed(node)
        self._nic_problems.pop(node.id, None)
        self._dirty_nodes.add(node.id)  # leaves its entry group when brought up to date
        self._answers.clear()

    def _node_changed(self, node: Node, changed: tuple = ()) -> None:
        changed = set(changed)
        if changed <= {"x", "y"}:
            return  # a move changes nothing the analysis reads
        if changed & {"count", "kind"}:
            self.components.node_changed(node)
        self._dirty_nodes.add(node.id)
        if changed & SIGNATURE_FIELDS:
            links = self.graph.links_of(node.id)
            self._dirty_links.update(link.id for link in links)
            if changed & {"kind", "item"}:  # a switch's kind sets its neighbours' network
                self._dirty_nodes.update(link.target if link.source == node.id else link.source for link in links)
        self._answers.clear()

    def _link_added(self, link: Link) -> None:
        self._order[link.id] = next(self._counter)
        self.components.link_added(link)
        self._link_touched(link)

    def _link_removed(self, link: Link) -> None:
        self._order.pop(link.id, None)
        self.components.link_removed(link)
        self._link_touched(link)

    def _items_added(self, nodes: list[Node], links: list[Link]) -> None:
        """Many items in one step (a paste, a 10,000-machine fat tree): marked in one pass each;
        past a few hundred links the parts are found again in one walk when next asked."""
        counter, order = self._counter, self._order
        for node in nodes:
            order[node.id] = next(counter)
        for link in links:
            order[link.id] = next(counter)
        components = self.components
        if len(links) > REBUILD_AFTER_REMOVALS:
            components.invalidate()
        else:
            for node in nodes:
                components.node_added(node)
            for link in links:
                components.link_added(link)
        self._dirty_nodes.update(node.id for node in nodes)
        self._dirty_links.update(link.id for link in links)
        self._dirty_nodes.update(link.source for link in links)
        self._dirty_nodes.update(link.target for link in links)
        self._answers.clear()

    def _items_removed(self, nodes: list[Node], links: list[Link]) -> None:
        # one removed link is followed in place; several are checked against the graph after all
        # of them went, where searching link by link could split a part twice: walk again instead
        if len(links) > 1:
            self.components.invalidate()
        for link in links:
            self._order.pop(link.id, None)
            self.components.link_removed(link)
        for node in nodes:
            self._order.pop(node.id, None)
            self.components.node_removed(node)
            self._nic_problems.pop(node.id, None)
        self._dirty_links.update(link.id for link in links)
        self._dirty_nodes.update(link.source for link in links)
        self._dirty_nodes.update(link.target for link in links)
        self._dirty_nodes.update(node.id for node in nodes)
        self._answers.clear()

    def _link_changed(self, link: Link, *_changed) -> None:
        self._link_touched(link)

    def _link_touched(self, link: Link) -> None:
        self._dirty_links.add(link.id)
        self._dirty_nodes.add(link.source)
        self._dirty_nodes.add(link.target)
        self._answers.clear()

    # -------------------------------------------------------------- bringing marked items up to date
    def _update(self) -> None:
        self._check_catalogue()
        if self._dirty_links:
            self._update_links()
        if self._dirty_nodes:
            self._update_nodes()

    def _check_catalogue(self) -> None:
        """Forget everything when the catalogue was edited (its record lists are rebuilt then)."""
        stamp = tuple(self.catalogue.items(kind) for kind in ("accelerators", "systems", "cloud", "interconnects"))
        if self._stamp is None or any(a is not b for a, b in zip(stamp, self._stamp, strict=True)):
            self.reset()
            self._stamp = stamp

    def _update_links(self) -> None:
        graph, memo = self.graph, self._memo
        for link_id in self._dirty_links:
            link = graph.links.get(link_id)
            messages = []
            if link is not None:
                key = link_signature(graph, link)
                messages = memo.get(key)
                if messages is None:
                    messages = memo[key] = link_messages(graph, link, self.catalogue)
            if messages:
                self._link_problems[link_id] = messages
            else:
                self._link_problems.pop(link_id, None)
        self._dirty_links.clear()

    def _update_nodes(self) -> None:
        graph, memo = self.graph, self._memo
        for node_id in self._dirty_nodes:
            self._leave_group(node_id)
            node = graph.nodes.get(node_id)
            if node is None:
                continue
            key = nic_signature(node)
            messages = memo.get(key)
            if messages is None:
                messages = memo[key] = nic_messages(node, self.catalogue)
            if messages:
                self._nic_problems[node_id] = messages
            else:
                self._nic_problems.pop(node_id, None)
            if node.kind != "switch":
                self._join_group(node)
        self._dirty_nodes.clear()

    def _leave_group(self, node_id: str) -> None:
        found = self._entry_of.pop(node_id, None)
        if found is None:
            return
        key, _network, count = found
        group = self._groups[key]
        del group.members[node_id]
        group.total -= count
        if not group.members:
            del self._groups[key]
        elif group.first is not None and group.first >= self._order.get(node_id, group.first):
            group.first = None

    def _join_group(self, node: Node) -> None:
        network = node_network(self.graph, node, self.catalogue)
        key = entry_key(node, *network)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group()
        group.members[node.id] = node.count
        group.total += node.count
        order = self._order[node.id]
        if group.first is not None and order < group.first:
            group.first = order
        self._entry_of[node.id] = (key, network, node.count)

    # -------------------------------------------------------------- questions
    def _left_out(self) -> set[str]:
        """The ids of the nodes (switches too) not in the cluster proper."""
        found = self._answers.get("left_out")
        if found is None:
            main = self.components.main(self._order)
            parts = self.components.members
            found = set() if main is None else set().union(*(m for p, m in parts.items() if p != main))
            self._answers["left_out"] = found
        return found

    def entries(self) -> list[ClusterEntry]:
        """The scenario's cluster, as `convert.graph_entries` would give it."""
        self._update()
        left_out = set() if self.graph.count_unlinked else self._left_out()
        rows = []
        for group in self._groups.values():
            members, total = group.members, group.total
            if left_out and _overlap(left_out, members):
                members = {i: c for i, c in members.items() if i not in left_out}
                if not members:
                    continue
                total = sum(members.values())
                first = min(self._order[i] for i in members)
            else:
                if group.first is None:
                    group.first = min(self._order[i] for i in members)
                first = group.first
            rows.append((first, members, total))
        rows.sort(key=lambda row: row[0])
        out = []
        for _first, members, total in rows:
            node_id = next(iter(members))  # the members share everything the entry reads but the label
            node = self.graph.nodes[node_id]
            _key, (inter, nic_count), _count = self._entry_of[node_id]
            out.append(new_entry(node, inter, nic_count, total, node.label if len(members) == 1 else ""))
        return out

    def unlinked(self) -> list[Node]:
        """The machine nodes the estimate leaves out: no link to the rest of the cluster."""
        if self.graph.count_unlinked:
            return []
        nodes = self.graph.nodes
        left = [nodes[i] for i in self._left_out() if nodes[i].kind != "switch"]
        left.sort(key=lambda n: self._order[n.id])
        return left

    def problems(self) -> list[Problem]:
        """Every problem of the drawing, as `convert.graph_problems` would list them."""
        self._update()
        found = self._answers.get("problems")
        if found is None:
            order, nodes = self._order, self.graph.nodes
            islands = sorted(self._left_out(), key=order.__getitem__)
            found = [island_problem(nodes[i], self.graph.count_unlinked) for i in islands]
            for target, messages in sorted(self._link_problems.items(), key=lambda kv: order[kv[0]]):
                found.extend(Problem(target, m) for m in messages)
            for target, messages in sorted(self._nic_problems.items(), key=lambda kv: order[kv[0]]):
                found.extend(Problem(target, m) for m in messages)
            self._answers["problems"] = found
        return list(found)
