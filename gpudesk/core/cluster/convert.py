"""Between the canvas graph and everything else: the scenario's cluster entries (what the engine
estimates), the palette of catalogue items, node defaults and captions, and the problems the
canvas shows (isolated nodes, links the hardware cannot drive)."""

from __future__ import annotations

from dataclasses import dataclass

from gpudesk.core.cluster.model import ClusterGraph, Link, Node
from gpudesk.core.scenario import ClusterEntry, Scenario, parse_scenario

SCALE_OUT_FAMILIES = ("infiniband", "ethernet")
LINK_KINDS_FOR_LINKS = ("nvlink", "infiniband", "ethernet", "ici", "neuronlink", "infinity_fabric", "nvlink-c2c")


@dataclass(frozen=True)
class PaletteItem:
    category: str
    kind: str  # system | accelerator | cloud | switch
    item: str
    label: str
    detail: str


@dataclass(frozen=True)
class Problem:
    target: str  # node or link id
    message: str
    severity: str = "error"  # error | warning


# ----------------------------------------------------------------------------- palette and nodes
def palette_items(catalogue) -> list[PaletteItem]:
    out = []
    system_category = {"server": "Servers and systems", "board": "Servers and systems", "rack": "Servers and systems",
                       "workstation": "Workstations and desktops", "desktop_ai": "Workstations and desktops",
                       "laptop": "Workstations and desktops", "edge_kit": "Edge devices"}
    accelerators = catalogue.index("accelerators")
    for s in catalogue.items("systems"):
        acc = accelerators.get(s["accelerator"], {})
        out.append(PaletteItem(system_category.get(s.get("kind") or "", "Servers and systems"), "system", s["id"],
                               s["name"], f"{s.get('accelerator_count') or 1} × {acc.get('name', s['accelerator'])}"))
    for c in catalogue.items("cloud"):
        acc = accelerators.get(c["accelerator"], {})
        out.append(PaletteItem("Cloud instances", "cloud", c["id"], f"{c['provider']} {c['instance_type']}",
                               f"{c.get('accelerator_count') or 1} × {acc.get('name', c['accelerator'])}, ${c['usd_per_hour']:,.2f}/h"))
    for a in catalogue.items("accelerators"):
        out.append(PaletteItem("Accelerators (build a node)", "accelerator", a["id"], a["name"],
                               f"{a.get('vendor') or ''} · {a.get('memory_gb') or '?'} GB"))
    for link in catalogue.items("interconnects"):
        if link.get("family") in SCALE_OUT_FAMILIES:
            out.append(PaletteItem("Switches", "switch", link["id"], f"{link['name']} switch",
                                   f"{(link.get('unidirectional_gbs') or 0) * 8:,.0f} Gb/s ports"))
    return out


def make_node(graph: ClusterGraph, catalogue, kind: str, item: str, x: float = 0.0, y: float = 0.0) -> Node:
    """A new node for a palette item, with sensible defaults from the catalogue."""
    node_id = graph.new_id("n")
    if kind == "system":
        system = catalogue.get("systems", item) or {}
        return Node(node_id, kind, item, label=system.get("name", item), nic=system.get("nic"),
                    nic_count=system.get("nic_count"), x=x, y=y)
    if kind == "cloud":
        offer = catalogue.get("cloud", item) or {}
        return Node(node_id, kind, item, label=f"{offer.get('provider', '')} {offer.get('instance_type', item)}".strip(),
                    nic=offer.get("inter_link"), x=x, y=y)
    if kind == "switch":
        link = catalogue.get("interconnects", item) or {}
        return Node(node_id, kind, item, label=f"{link.get('name', item)} switch", x=x, y=y)
    acc = catalogue.get("accelerators", item) or {}
    datacenter = (acc.get("device_class") == "datacenter" and (acc.get("form_factor") or "").upper().startswith(("SXM", "OAM")))
    return Node(node_id, "accelerator", item, label=acc.get("name", item), per_node=8 if datacenter else 1, x=x, y=y)


def node_devices(node: Node, catalogue) -> tuple[str, int]:
    """(accelerator id, accelerators per machine) of a node; ('', 0) for a switch."""
    if node.kind == "switch":
        return "", 0
    if node.kind == "system":
        system = catalogue.get("systems", node.item) or {}
        return system.get("accelerator", ""), node.per_node or system.get("accelerator_count") or 1
    if node.kind == "cloud":
        offer = catalogue.get("cloud", node.item) or {}
        return offer.get("accelerator", ""), offer.get("accelerator_count") or 1
    return node.item, node.per_node or 1


def node_caption(node: Node, catalogue) -> str:
    if node.kind == "switch":
        link = catalogue.get("interconnects", node.item) or {}
        rate = (link.get("unidirectional_gbs") or 0) * 8
        return f"{rate:,.0f} Gb/s ports" if rate else "switch"
    acc_id, per = node_devices(node, catalogue)
    acc = catalogue.get("accelerators", acc_id) or {}
    name = acc.get("name", acc_id)
    machines = "instance" if node.kind == "cloud" else "machine"
    each = f"{per} × {name}" if per > 1 else name
    return f"{each} per {machines}" if node.count > 1 else each


# ----------------------------------------------------------------------------- graph -> cluster
def _rate(catalogue, link_id: str | None) -> float:
    row = catalogue.get("interconnects", link_id) if link_id else None
    if not row:
        return 0.0
    return row.get("unidirectional_gbs") or (row.get("bidirectional_gbs") or 0) / 2


def node_network(graph: ClusterGraph, node: Node, catalogue) -> tuple[str | None, int | None]:
    """The link type (and ports per machine) that joins this node's machines to the rest: the
    slowest of its NIC setting and the links that touch it, directly or through a switch (whose
    ports run no faster than the switch)."""
    interconnects = catalogue.index("interconnects")
    candidates: list[tuple[float, str, int | None]] = []
    if node.nic:
        candidates.append((_rate(catalogue, node.nic), node.nic, node.nic_count))
    for link in graph.links_of(node.id):
        row = interconnects.get(link.kind) or {}
        if row.get("family") in ("pcie",):
            continue
        ports = link.count if link.count > 1 else node.nic_count
        candidates.append((_rate(catalogue, link.kind), link.kind, ports))
        other = graph.nodes.get(link.target if link.source == node.id else link.source)
        if other is not None and other.kind == "switch" and other.item != link.kind and other.item in interconnects:
            candidates.append((_rate(catalogue, other.item), other.item, ports))
    if not candidates:
        return None, node.nic_count
    rate, link_id, count = min(candidates, key=lambda c: c[0])
    return link_id, count


def graph_entries(graph: ClusterGraph, catalogue) -> list[ClusterEntry]:
    """The scenario's cluster: one entry per kind of machine (identical nodes merged). Machines
    with no link to the rest of the cluster are left out unless the graph says to count them."""
    return _merge_entries(graph, lambda node: node_network(graph, node, catalogue), linked_machines(graph)[0])


def machine_count(nodes) -> int:
    """How many machines (servers, kits, instances) some nodes stand for."""
    return sum(n.count for n in nodes if n.kind != "switch")


def linked_machines(graph: ClusterGraph) -> tuple[set[str] | None, list[Node]]:
    """(the ids of the nodes the estimate counts, the machine nodes it leaves out). The cluster is
    the connected part with the most machines (then the most nodes, then the one drawn first); a
    node with no link to it cannot take part in the same job. With `graph.count_unlinked` every
    node counts (None: no filter) and the list of nodes left out is empty."""
    main = None if graph.count_unlinked else main_component(graph)
    if main is None:
        return None, []
    return main, [n for n in graph.nodes.values() if n.id not in main and n.kind != "switch"]


def main_component(graph: ClusterGraph) -> set[str] | None:
    """The node ids of the cluster proper, or None when the graph is in one piece (or empty)."""
    components = _components(graph)
    if len(components) < 2:
        return None
    # components come in the order of their first node, so max() keeps the one drawn first on a tie
    return max(components, key=lambda c: (machine_count(graph.nodes[i] for i in c), len(c)))


def entry_key(node: Node, inter: str | None, nic_count: int | None) -> tuple:
    """Nodes with the same key merge into one cluster entry."""
    overrides = tuple(sorted(node.overrides.items())) if node.overrides else ()
    if node.kind == "cloud":
        return "cloud", node.item, inter, nic_count, overrides
    return "item", node.item, node.per_node, node.intra, inter, nic_count, node.overhead_w, overrides


def new_entry(node: Node, inter: str | None, nic_count: int | None, count: int, label: str) -> ClusterEntry:
    """The cluster entry for `count` machines like `node`."""
    if node.kind == "cloud":
        return ClusterEntry(cloud=node.item, instances=count, inter=inter, nic_count=nic_count,
                            overrides=dict(node.overrides), label=label)
    return ClusterEntry(item=node.item, per_node=node.per_node, nodes=count, intra=node.intra, inter=inter,
                        nic_count=nic_count, node_overhead_w=node.overhead_w, overrides=dict(node.overrides),
                        label=label)


def _merge_entries(graph: ClusterGraph, network, counted: set[str] | None = None) -> list[ClusterEntry]:
    merged: dict[tuple, tuple[Node, tuple, list]] = {}
    for node in graph.nodes.values():
        if node.kind == "switch" or (counted is not None and node.id not in counted):
            continue
        inter, nic_count = network(node)
        key = entry_key(node, inter, nic_count)
        group = merged.get(key)
        if group is None:
            merged[key] = (node, (inter, nic_count), [node.count])
        else:
            group[2].append(node.count)
    return [new_entry(node, inter, nic_count, sum(counts), node.label if len(counts) == 1 else "")
            for node, (inter, nic_count), counts in merged.values()]


def graph_from_entries(entries: list[ClusterEntry], catalogue) -> ClusterGraph:
    """A canvas for a scenario that has none: one node per entry, joined by a switch of the
    network they use when there are several machines."""
    graph = ClusterGraph()
    nodes = []
    for i, e in enumerate(entries):
        kind = "cloud" if e.cloud else ("system" if catalogue.get("systems", e.item) else "accelerator")
        node = Node(graph.new_id("n"), kind, e.cloud or e.item, label=e.label or "", count=e.instances if e.cloud else e.nodes,
                    per_node=None if kind != "accelerator" else e.per_node, intra=e.intra, nic=e.inter,
                    nic_count=e.nic_count, overhead_w=e.node_overhead_w, overrides=dict(e.overrides),
                    x=(i % 4) * 260.0, y=(i // 4) * 170.0 + 180.0)
        if not node.label:
            node.label = make_node(ClusterGraph(), catalogue, kind, node.item).label
        graph.add_node(node)
        nodes.append(node)
    networks = [n.nic for n in nodes if n.nic]
    if len(nodes) > 1 and not networks:
        # several machines and no network named: the one the engine would assume, drawn, so that
        # they are linked (an unlinked machine is left out of the estimate)
        datacenter = all((catalogue.get("accelerators", node_devices(n, catalogue)[0]) or {}).get("device_class")
                         == "datacenter" for n in nodes)
        networks = ["eth-100g" if datacenter else "eth-1g"]
    if len(nodes) > 1 and networks:
        slowest = min(networks, key=lambda lk: _rate(catalogue, lk))
        switch = Node(graph.new_id("s"), "switch", slowest, label=f"{(catalogue.get('interconnects', slowest) or {}).get('name', slowest)} switch",
                      x=(min(len(nodes), 4) - 1) * 130.0, y=0.0)
        graph.add_node(switch)
        for node in nodes:
            graph.add_link(Link(graph.new_id("l"), node.id, switch.id, node.nic or slowest, node.nic_count or 1))
    return graph


def scenario_with_canvas(graph: ClusterGraph, catalogue, base: dict) -> Scenario:
    """A scenario document (workload, site, finance from `base`) whose cluster is the canvas."""
    doc = {k: v for k, v in base.items() if k not in ("cluster", "compare", "canvas")}
    doc["gpudesk_scenario"] = 1
    doc["cluster"] = [e.to_dict() for e in graph_entries(graph, catalogue)]
    doc["canvas"] = graph.to_dict()
    return parse_scenario(doc, "the cluster canvas")


def graph_for_scenario(scenario: Scenario, catalogue) -> ClusterGraph:
    if scenario.canvas:
        graph = ClusterGraph()
        graph.load_dict(scenario.canvas)
        return graph
    return graph_from_entries(scenario.cluster, catalogue)


# ----------------------------------------------------------------------------- problems
def graph_problems(graph: ClusterGraph, catalogue) -> list[Problem]:
    """Every problem of the drawing, worked out from scratch: nodes cut off from the cluster (in
    the order drawn), then links the hardware cannot drive, then NICs that cannot drive their
    network. GraphAnalysis keeps the same list up to date edit by edit."""
    # a fat tree repeats the same few kinds of link and node many times: check each kind once
    seen: dict[tuple, list[str]] = {}
    main = main_component(graph)
    problems = [island_problem(node, graph.count_unlinked) for node in graph.nodes.values()
                if main is not None and node.id not in main]
    for link in graph.links.values():
        key = link_signature(graph, link)
        if key not in seen:
            seen[key] = link_messages(graph, link, catalogue)
        problems.extend(Problem(link.id, message) for message in seen[key])
    for node in graph.nodes.values():
        key = nic_signature(node)
        if key not in seen:
            seen[key] = nic_messages(node, catalogue)
        problems.extend(Problem(node.id, message) for message in seen[key])
    return problems


def island_problem(node: Node, count_unlinked: bool) -> Problem:
    what = "switch" if node.kind == "switch" else "node"
    counted = " It is not counted in the estimate." if what == "node" and not count_unlinked else ""
    return Problem(node.id, f"{node.label or node.item}: this {what} has no link to the rest of the "
                            f"cluster, so it cannot take part in the same job.{counted}",
                   "warning" if count_unlinked else "error")


def _signature(node: Node) -> tuple:
    """What the link and NIC checks read from a node (its id and count do not matter)."""
    return node.kind, node.item, node.label, node.per_node


def link_signature(graph: ClusterGraph, link: Link) -> tuple:
    """Links with the same signature have the same problems."""
    return "link", link.kind, _signature(graph.nodes[link.source]), _signature(graph.nodes[link.target])


def nic_signature(node: Node) -> tuple:
    return "nic", node.nic, _signature(node)


def link_messages(graph: ClusterGraph, link: Link, catalogue) -> list[str]:
    return [p.message for p in _link_problems(graph, link, catalogue)]


def nic_messages(node: Node, catalogue) -> list[str]:
    if node.kind == "switch" or not node.nic:
        return []
    return [p.message for p in _nic_problems(node, node.nic, node.id, catalogue)]


def _components(graph: ClusterGraph) -> list[set[str]]:
    """The connected parts of the graph, in the order of their first node."""
    seen: set[str] = set()
    out = []
    for start in graph.nodes:
        if start in seen:
            continue
        component = {start}
        stack = [start]
        while stack:
            current = stack.pop()
            for other in graph.neighbour_ids(current):
                if other not in component:
                    component.add(other)
                    stack.append(other)
        seen |= component
        out.append(component)
    return out


def _link_problems(graph: ClusterGraph, link: Link, catalogue) -> list[Problem]:
    row = catalogue.get("interconnects", link.kind)
    if row is None:
        return [Problem(link.id, f"'{link.kind}' is not an interconnect in the catalogue.")]
    family = row.get("family")
    a, b = graph.nodes[link.source], graph.nodes[link.target]
    out = []
    if family == "pcie":
        out.append(Problem(link.id, f"{row['name']} joins devices inside one machine, not separate machines: use "
                                    "Ethernet, InfiniBand or an NVLink switch between nodes."))
        return out
    clouds = [n for n in (a, b) if n.kind == "cloud"]
    if clouds and (len(clouds) == 1 and (a.kind != "switch" and b.kind != "switch") or
                   (len(clouds) == 2 and a.item != b.item)):
        out.append(Problem(link.id, "Cloud instances cannot be cabled to other machines: a rented cluster is one "
                                    "offering with its provider's network."))
    for node in (a, b):
        if node.kind == "switch":
            switch = catalogue.get("interconnects", node.item) or {}
            if switch.get("family") and switch.get("family") != family:
                out.append(Problem(link.id, f"A {row['name']} link cannot plug into the {switch.get('name', node.item)} switch."))
            continue
        if family == "nvlink":
            acc_id, _per = node_devices(node, catalogue)
            acc = catalogue.get("accelerators", acc_id) or {}
            if not (acc.get("intra_link") or "").startswith("nvlink"):
                out.append(Problem(link.id, f"{node.label}: {acc.get('name', acc_id)} has no NVLink to drive this link."))
        elif family in SCALE_OUT_FAMILIES:
            out.extend(_nic_problems(node, link.kind, link.id, catalogue))
    return out


def _nic_problems(node: Node, link_id: str, target: str, catalogue) -> list[Problem]:
    """A machine with a known NIC (a system's port) cannot drive a faster or different network."""
    if node.kind != "system":
        return []
    system = catalogue.get("systems", node.item) or {}
    nic = catalogue.get("interconnects", system.get("nic")) if system.get("nic") else None
    wanted = catalogue.get("interconnects", link_id)
    if nic is None or wanted is None:
        return []
    if wanted.get("family") == nic.get("family") == "ethernet" and (wanted.get("unidirectional_gbs") or 0) <= (nic.get("unidirectional_gbs") or 0):
        return []
    if wanted.get("family") == nic.get("family") and (wanted.get("unidirectional_gbs") or 0) <= (nic.get("unidirectional_gbs") or 0):
        return []
    # a VPI adapter (ConnectX, as the system's catalogue notes say) runs its ports as InfiniBand or Ethernet
    if (nic.get("family") == "infiniband" and wanted.get("family") == "ethernet" and "VPI" in (system.get("notes") or "")
            and (wanted.get("unidirectional_gbs") or 0) <= (nic.get("unidirectional_gbs") or 0)):
        return []
    return [Problem(target, f"{node.label}: its network port is {nic['name']}; it cannot drive {wanted['name']}.")]
