"""The canvas model and its commands, without Qt: add, remove, connect, undo, redo, save, load."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.cluster import AddItems, ClusterGraph, Link, MoveNodes, RemoveItems, SetLink, SetNode, UndoStack
from gpudesk.core.cluster.convert import (
    graph_entries,
    graph_for_scenario,
    graph_problems,
    make_node,
    scenario_with_canvas,
)
from gpudesk.core.resolve import estimate_scenario
from gpudesk.core.scenario import loads_scenario

BASE = {"gpudesk_scenario": 1, "name": "canvas",
        "workload": {"preset": "nanochat-d20", "kind": "train"},
        "site": {"region": "us-avg", "pue": 1.2}, "finance": {"rent": "aws-p5.48xlarge"}}


@pytest.fixture
def graph():
    return ClusterGraph()


def test_events_follow_every_change(graph):
    seen = []
    for event in ClusterGraph.EVENTS:
        graph.subscribe(event, lambda *a, e=event: seen.append(e))
    stack = UndoStack(graph)
    a = graph.new_id("n")
    stack.push(AddItems([make_node_for(graph, a, "h100-sxm5-80gb")]))
    stack.push(SetNode(a, {"count": 4}))
    stack.undo()
    stack.redo()
    assert seen == ["items_added", "node_changed", "node_changed", "node_changed"]


def test_adding_and_removing_many_items_is_one_event_each(graph):
    """A pasted fat tree is one `items_added` and its undo one `items_removed`, not an event per item."""
    seen = []
    for event in ClusterGraph.EVENTS:
        graph.subscribe(event, lambda *a, e=event: seen.append((e, *(len(x) for x in a))))
    stack = UndoStack(graph)
    nodes = [make_node_for(graph, f"n{i}", "h100-sxm5-80gb") for i in range(5)]
    links = [Link(f"l{i}", "n0", f"n{i}", "ib-ndr-400") for i in range(1, 5)]
    stack.push(AddItems(nodes, links))
    assert seen == [("items_added", 5, 4)] and len(graph.nodes) == 5 and graph.neighbours("n0") == ["n1", "n2", "n3", "n4"]
    stack.undo()
    assert seen[-1] == ("items_removed", 5, 4) and not graph.nodes and not graph.links
    stack.redo()
    stack.push(RemoveItems(["n0"]))  # its four links go with it
    assert seen[-1] == ("items_removed", 1, 4) and set(graph.nodes) == {"n1", "n2", "n3", "n4"} and not graph.links
    stack.undo()
    assert seen[-1] == ("items_added", 1, 4) and len(graph.links) == 4


def test_a_bad_item_in_a_bulk_add_adds_nothing(graph):
    graph.add_items([make_node_for(graph, "a", "h100-sxm5-80gb")], [])
    for nodes, links in (([make_node_for(graph, "b", "x"), make_node_for(graph, "a", "x")], []),  # "a" exists
                         ([make_node_for(graph, "b", "x")], [Link("l1", "b", "zz", "ib-ndr-400")]),  # no node "zz"
                         ([make_node_for(graph, "b", "x")], [Link("l1", "b", "b", "ib-ndr-400")])):  # to itself
        with pytest.raises(ValueError):
            graph.add_items(nodes, links)
        assert set(graph.nodes) == {"a"} and not graph.links and graph.links_of("a") == []
    with pytest.raises(ValueError):  # a node whose link stays
        graph.add_items([make_node_for(graph, "b", "x")], [Link("l1", "a", "b", "ib-ndr-400")])
        graph.remove_items([], ["b"])
    assert set(graph.nodes) == {"a", "b"} and set(graph.links) == {"l1"}


def test_copies_are_deep_enough_and_equal(graph):
    node = make_node_for(graph, "a", "h100-sxm5-80gb", overrides={"tdp_w": 700})
    twin = node.copy(x=40.0)
    assert twin.x == 40.0 and twin.to_dict() == {**node.to_dict(), "x": 40.0}
    twin.overrides["tdp_w"] = 1
    assert node.overrides == {"tdp_w": 700}
    link = Link("l", "a", "b", "ib-ndr-400", 4)
    assert link.copy() == link and link.copy() is not link and Link(**link.to_dict()) == link
    with pytest.raises(TypeError):
        node.copy(colour="red")


def make_node_for(graph, node_id, item, **kw):
    from gpudesk.core.cluster import Node

    return Node(node_id, "accelerator", item, label=item, per_node=8, **kw)


def test_add_connect_remove_undo_redo(graph, catalogue):
    stack = UndoStack(graph)
    a = make_node(graph, catalogue, "system", "dgx-h100")
    stack.push(AddItems([a]))
    b = make_node(graph, catalogue, "system", "dgx-h100", x=300)
    stack.push(AddItems([b]))
    link = Link(graph.new_id("l"), a.id, b.id, "ib-ndr-400", 8)
    stack.push(AddItems([], [link], "Connect"))
    assert len(graph.nodes) == 2 and len(graph.links) == 1
    stack.push(RemoveItems([a.id]))
    assert a.id not in graph.nodes and not graph.links  # its link went with it
    stack.undo()
    assert a.id in graph.nodes and link.id in graph.links
    for _ in range(3):
        stack.undo()
    assert not graph.nodes and not stack.can_undo()
    for _ in range(4):
        stack.redo()
    assert b.id in graph.nodes and a.id not in graph.nodes


def test_a_drag_is_one_step_and_a_spin_box_edit_is_one_step(graph):
    stack = UndoStack(graph)
    node_id = graph.new_id("n")
    stack.push(AddItems([make_node_for(graph, node_id, "a100-sxm4-80gb")]))
    stack.push(MoveNodes({node_id: ((0, 0), (120, 40))}))
    for value in (2, 3, 32):  # typing "32" emits 3, 32 ...
        stack.push(SetNode(node_id, {"count": value}, session="edit-1"))
    assert graph.nodes[node_id].count == 32
    assert len(stack.commands) == 3  # add, move, one count edit
    stack.undo()
    assert graph.nodes[node_id].count == 1
    stack.undo()
    assert (graph.nodes[node_id].x, graph.nodes[node_id].y) == (0, 0)


def test_clean_state_tracks_saved_work(graph):
    stack = UndoStack(graph)
    assert stack.is_clean()
    node_id = graph.new_id("n")
    stack.push(AddItems([make_node_for(graph, node_id, "l4")]))
    assert not stack.is_clean()
    stack.set_clean()
    stack.push(SetNode(node_id, {"label": "inference box"}))
    stack.undo()
    assert stack.is_clean()


def test_bad_edits_are_refused(graph):
    node_id = graph.new_id("n")
    graph.add_node(make_node_for(graph, node_id, "l4"))
    with pytest.raises(ValueError):
        graph.set_node(node_id, count=0)
    with pytest.raises(ValueError):
        graph.add_link(Link("x", node_id, node_id, "eth-1g"))
    with pytest.raises(KeyError):
        graph.set_node(node_id, colour="red")
    other = graph.add_node(make_node_for(graph, "m", "l4"))
    graph.add_link(Link("y", node_id, other.id, "eth-1g"))
    with pytest.raises(ValueError, match="still has links"):
        graph.remove_node(node_id)
    stack = UndoStack(graph)
    stack.push(SetLink("y", {"count": 2}))
    assert graph.links["y"].count == 2


def test_save_and_load_give_the_same_estimate(graph, catalogue):
    stack = UndoStack(graph)
    nodes = [make_node(graph, catalogue, "system", "dgx-h100", x=i * 200) for i in range(4)]
    stack.push(AddItems(nodes))
    switch = make_node(graph, catalogue, "switch", "ib-ndr-400", y=-150)
    stack.push(AddItems([switch]))
    links = [Link(graph.new_id("l"), n.id, switch.id, "ib-ndr-400", 8) for n in nodes]
    stack.push(AddItems([], links))
    scenario = scenario_with_canvas(graph, catalogue, BASE)
    assert scenario.cluster[0].nodes == 4 and scenario.cluster[0].inter == "ib-ndr-400"
    again = loads_scenario(scenario.to_json())
    graph2 = graph_for_scenario(again, catalogue)
    assert graph2.to_dict() == graph.to_dict()
    one = estimate_scenario(scenario, catalogue).to_json()
    two = estimate_scenario(again, catalogue).to_json()
    assert one == two and one["devices"] == 32


def test_identical_nodes_merge_into_one_cluster_entry(graph, catalogue):
    for i in range(50):
        graph.add_node(make_node(graph, catalogue, "system", "dgx-h100", x=i))
    switch = graph.add_node(make_node(graph, catalogue, "switch", "ib-ndr-400"))
    for node in list(graph.nodes.values()):
        if node.kind != "switch":
            graph.add_link(Link(graph.new_id("l"), node.id, switch.id, "ib-ndr-400", 8))
    entries = graph_entries(graph, catalogue)
    assert len(entries) == 1 and entries[0].nodes == 50


def test_problems_isolated_nodes_and_links_hardware_cannot_drive(graph, catalogue):
    spark = graph.add_node(make_node(graph, catalogue, "system", "dgx-spark"))
    spark2 = graph.add_node(make_node(graph, catalogue, "system", "dgx-spark"))
    nano = graph.add_node(make_node(graph, catalogue, "system", "jetson-nano-devkit"))
    graph.add_link(Link("l1", spark.id, spark2.id, "ib-ndr-400", 1))
    problems = graph_problems(graph, catalogue)
    messages = " ".join(p.message for p in problems)
    assert any(p.target == nano.id and "no link to the rest" in p.message for p in problems)
    assert any(p.target == "l1" and "cannot drive" in p.message for p in problems)
    graph.set_link("l1", kind="eth-10g")
    graph.add_link(Link("l2", spark.id, nano.id, "pcie4", 1))
    problems = graph_problems(graph, catalogue)
    assert not any(p.target == "l1" for p in problems)
    assert any(p.target == "l2" and "inside one machine" in p.message for p in problems)
    assert "Jetson" in messages


def test_canvas_section_is_validated(catalogue):
    doc = dict(BASE, cluster=[{"item": "dgx-h100"}], canvas={"nodes": [{"id": "a", "kind": "robot", "item": "x"}]})
    scenario = loads_scenario(json.dumps(doc))
    with pytest.raises(ValueError, match="canvas.nodes\\[0\\]"):
        graph_for_scenario(scenario, catalogue)


def test_incremental_analysis_matches_a_full_pass_after_every_edit(catalogue):
    """The canvas keeps entries and problems up to date edit by edit; after any sequence of edits
    (and their undo) it must agree with recomputing from scratch."""
    import random

    from gpudesk.core.cluster.analysis import GraphAnalysis

    graph = ClusterGraph()
    analysis = GraphAnalysis(graph, catalogue)
    stack = UndoStack(graph)
    rng = random.Random(7)
    items = [("system", "dgx-h100"), ("system", "dgx-spark"), ("accelerator", "rtx-4090"), ("switch", "ib-ndr-400"),
             ("switch", "eth-10g"), ("cloud", "aws-p5.48xlarge")]
    kinds = ["ib-ndr-400", "eth-10g", "eth-100g", "nvlink4", "pcie4", "no-such-link"]

    def same():
        assert [e.to_dict() for e in analysis.entries()] == [e.to_dict() for e in graph_entries(graph, catalogue)]
        assert analysis.problems() == graph_problems(graph, catalogue)

    for _step in range(150):
        choice = rng.random()
        ids = list(graph.nodes)
        if choice < 0.3 or len(ids) < 2:
            kind, item = rng.choice(items)
            stack.push(AddItems([make_node(graph, catalogue, kind, item)]))
        elif choice < 0.55:
            a, b = rng.sample(ids, 2)
            if not any({lk.source, lk.target} == {a, b} for lk in graph.links.values()):
                stack.push(AddItems([], [Link(graph.new_id("l"), a, b, rng.choice(kinds), rng.randint(1, 8))]))
        elif choice < 0.7:
            stack.push(SetNode(rng.choice(ids), {"count": rng.randint(1, 64)}))
        elif choice < 0.8 and graph.links:
            link_id = rng.choice(list(graph.links))
            stack.push(SetLink(link_id, {"kind": rng.choice(kinds)}))
        elif choice < 0.9:
            stack.push(RemoveItems([rng.choice(ids)]))
        else:
            stack.undo()
        same()
    graph.clear()
    same()


# ----------------------------------------------------------------------------- what the estimate counts
def _dgx_and_hgx(graph, catalogue):
    dgx = graph.add_node(make_node(graph, catalogue, "system", "dgx-h100"))
    hgx = graph.add_node(make_node(graph, catalogue, "system", "hgx-h100-8gpu", x=300))
    return dgx, hgx


def _estimate(graph, catalogue):
    return estimate_scenario(scenario_with_canvas(graph, catalogue, BASE), catalogue)


def test_a_machine_with_no_link_is_left_out_and_named_unless_the_user_counts_it(graph, catalogue):
    from gpudesk.core.cluster import SetCountUnlinked
    from gpudesk.core.cluster.analysis import GraphAnalysis
    from gpudesk.core.cluster.convert import linked_machines

    dgx, hgx = _dgx_and_hgx(graph, catalogue)
    analysis = GraphAnalysis(graph, catalogue)
    entries = graph_entries(graph, catalogue)
    assert [(e.item, e.nodes) for e in entries] == [("dgx-h100", 1)]
    assert [n.id for n in linked_machines(graph)[1]] == [hgx.id] == [n.id for n in analysis.unlinked()]
    problem = next(p for p in graph_problems(graph, catalogue) if p.target == hgx.id)
    assert "not counted in the estimate" in problem.message
    assert _estimate(graph, catalogue).devices == 8

    stack = UndoStack(graph)
    stack.push(SetCountUnlinked(True))  # the user's choice: count it anyway
    assert sorted(e.item for e in graph_entries(graph, catalogue)) == ["dgx-h100", "hgx-h100-8gpu"]
    assert analysis.unlinked() == [] and _estimate(graph, catalogue).devices == 16
    assert "not counted" not in next(p for p in graph_problems(graph, catalogue) if p.target == hgx.id).message
    saved = scenario_with_canvas(graph, catalogue, BASE)
    assert saved.canvas["count_unlinked"] is True
    assert graph_for_scenario(loads_scenario(saved.to_json()), catalogue).count_unlinked is True
    stack.undo()
    assert graph.count_unlinked is False and len(graph_entries(graph, catalogue)) == 1

    # the larger part of a drawing is the cluster: a lone machine beside a linked pair is left out
    third = graph.add_node(make_node(graph, catalogue, "system", "dgx-h100", x=600))
    graph.add_link(Link("l1", hgx.id, third.id, "ib-ndr-400", 8))
    assert [n.id for n in linked_machines(graph)[1]] == [dgx.id]
    assert _estimate(graph, catalogue).devices == 16


def test_a_drawn_link_sets_the_speed_when_it_is_the_slowest_path(graph, catalogue):
    """DGX H100 + HGX H100 joined by one link: InfiniBand NDR against 100 Gb Ethernet give different
    throughput for multi-node training, the slowest link is the one drawn, with its share of the
    step; removing the link drops the second machine."""
    dgx, hgx = _dgx_and_hgx(graph, catalogue)
    graph.add_link(Link("l1", dgx.id, hgx.id, "ib-ndr-400", 1))  # one cable: the HGX board names no NICs
    ndr = _estimate(graph, catalogue)
    graph.set_link("l1", kind="eth-100g")
    eth = _estimate(graph, catalogue)
    assert ndr.devices == eth.devices == 16
    assert eth.tokens_per_s.likely < ndr.tokens_per_s.likely * 0.99
    assert ndr.slowest_link.startswith("InfiniBand NDR") and eth.slowest_link.startswith("100 Gigabit Ethernet")
    from gpudesk.core.compare import slowest_link_share

    name, share, total = slowest_link_share(eth)
    assert name == eth.slowest_link
    assert share == pytest.approx(eth.breakdown["link_seconds"][name] / eth.breakdown["step_s"])
    assert 0 < share <= total < 1
    assert slowest_link_share(ndr)[1] < share  # the faster link takes a smaller part of the step

    # a fast cable into a slow switch is as slow as the switch
    graph.set_link("l1", kind="ib-ndr-400")
    switch = graph.add_node(make_node(graph, catalogue, "switch", "eth-100g", y=-200))
    graph.remove_link("l1")
    graph.add_link(Link("l2", dgx.id, switch.id, "ib-ndr-400", 8))
    graph.add_link(Link("l3", hgx.id, switch.id, "ib-ndr-400", 8))
    assert {e.inter for e in graph_entries(graph, catalogue)} == {"eth-100g"}

    graph.remove_link("l2")
    graph.remove_link("l3")
    assert _estimate(graph, catalogue).devices == 8  # the second machine is no longer in the cluster


def test_a_systems_power_never_exceeds_its_rating_without_saying_why(graph, catalogue):
    graph.add_node(make_node(graph, catalogue, "system", "dgx-h100"))
    est = _estimate(graph, catalogue)
    rated = catalogue.get("systems", "dgx-h100")["system_power_w"]
    pue = BASE["site"]["pue"]
    assert est.power_w.high / pue <= rated + 1e-6  # the IT load stays within the catalogued maximum
    assert est.power_w.high > rated  # only the facility's PUE takes the total above it ...
    text = next(a for a in est.assumptions if a.startswith("Rated system power caps the draw"))
    assert "NVIDIA DGX H100 at most 10.2 kW" in text and "PUE" in text  # ... and the assumptions say so


def test_a_scenario_of_several_machines_and_no_network_opens_linked(catalogue):
    from gpudesk.core.cluster.convert import linked_machines
    from gpudesk.core.scenario import ClusterEntry

    entries = [ClusterEntry(item="h100-sxm5-80gb", per_node=8), ClusterEntry(item="a100-sxm4-80gb", per_node=8)]
    opened = graph_for_scenario(loads_scenario(json.dumps(dict(BASE, cluster=[e.to_dict() for e in entries]))),
                                catalogue)
    assert linked_machines(opened)[1] == []
    assert {e.item for e in graph_entries(opened, catalogue)} == {"h100-sxm5-80gb", "a100-sxm4-80gb"}


# ----------------------------------------------------------------------------- incremental analysis
def _parts_from_scratch(graph):
    from gpudesk.core.cluster.convert import _components

    return sorted(sorted(c) for c in _components(graph))


def _same_as_from_scratch(analysis, graph, catalogue):
    from gpudesk.core.cluster.convert import linked_machines

    assert [e.to_dict() for e in analysis.entries()] == [e.to_dict() for e in graph_entries(graph, catalogue)]
    assert analysis.problems() == graph_problems(graph, catalogue)
    assert [n.id for n in analysis.unlinked()] == [n.id for n in linked_machines(graph)[1]]
    parts = analysis.components.parts()
    assert sorted(sorted(m) for m in parts.values()) == _parts_from_scratch(graph)
    assert all(analysis.components.machines[p] == sum(graph.nodes[i].count for i in m if graph.nodes[i].kind != "switch")
               for p, m in parts.items())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_components_islands_and_problems_follow_random_edits(catalogue, seed):
    """Random edits (nodes and links added and removed, counts, kinds, labels, NICs, switches that
    change network, the count-unlinked option, undo and redo, big deletes): after each one the
    incremental analysis gives the same parts, machines left out, problems and entries as a
    from-scratch pass."""
    import random

    from gpudesk.core.cluster import SetCountUnlinked
    from gpudesk.core.cluster.analysis import GraphAnalysis

    graph = ClusterGraph()
    analysis = GraphAnalysis(graph, catalogue)
    stack = UndoStack(graph)
    rng = random.Random(seed)
    items = [("system", "dgx-h100"), ("system", "dgx-spark"), ("system", "hgx-h100-8gpu"), ("accelerator", "rtx-4090"),
             ("switch", "ib-ndr-400"), ("switch", "eth-10g"), ("cloud", "aws-p5.48xlarge")]
    kinds = ["ib-ndr-400", "eth-10g", "eth-100g", "nvlink4", "pcie4", "no-such-link"]
    for _step in range(400):
        choice = rng.random()
        ids = list(graph.nodes)
        if choice < 0.25 or len(ids) < 3:
            kind, item = rng.choice(items)
            stack.push(AddItems([make_node(graph, catalogue, kind, item)]))
        elif choice < 0.5:
            a, b = rng.sample(ids, 2)
            if not any({lk.source, lk.target} == {a, b} for lk in graph.links.values()):
                stack.push(AddItems([], [Link(graph.new_id("l"), a, b, rng.choice(kinds), rng.randint(1, 8))]))
        elif choice < 0.6 and graph.links:
            stack.push(RemoveItems([], [rng.choice(list(graph.links))]))
        elif choice < 0.68:
            node_id = rng.choice(ids)
            values = rng.choice([{"count": rng.randint(1, 64)}, {"label": f"rack {rng.randint(1, 3)}"},
                                 {"nic": rng.choice(kinds[:3])}, {"x": rng.random() * 100}])
            if graph.nodes[node_id].kind == "switch" and rng.random() < 0.5:
                values = {"item": rng.choice(["ib-ndr-400", "eth-10g"])}
            stack.push(SetNode(node_id, values))
        elif choice < 0.74 and graph.links:
            stack.push(SetLink(rng.choice(list(graph.links)), {"kind": rng.choice(kinds)}))
        elif choice < 0.8:
            stack.push(RemoveItems(rng.sample(ids, min(len(ids), rng.randint(1, 3)))))
        elif choice < 0.83:
            stack.push(SetCountUnlinked(not graph.count_unlinked))
        elif choice < 0.95:
            stack.undo()
        else:
            stack.redo()
        _same_as_from_scratch(analysis, graph, catalogue)
    graph.clear()
    _same_as_from_scratch(analysis, graph, catalogue)


def test_incremental_analysis_splits_and_rejoins_a_fat_tree(catalogue):
    """A small fat tree: cutting a machine's only link leaves it out and marks it; cutting one
    leaf-to-spine link keeps one cluster; a delete of hundreds of links at once (past the point
    where the analysis does one full pass instead) and its undo agree with a full pass too."""
    from gpudesk.core.cluster.analysis import REBUILD_AFTER_REMOVALS, GraphAnalysis

    graph = ClusterGraph()
    analysis = GraphAnalysis(graph, catalogue)
    stack = UndoStack(graph)
    spines = [make_node(graph, catalogue, "switch", "ib-ndr-400") for _ in range(4)]
    for i, s in enumerate(spines):
        s.id = f"spine{i}"
    leaves = [make_node(graph, catalogue, "switch", "ib-ndr-400") for _ in range(8)]
    for i, s in enumerate(leaves):
        s.id = f"leaf{i}"
    machines, links = [], []
    for m in range(8 * 40):
        node = make_node(graph, catalogue, "system", "dgx-h100")
        node.id = f"m{m}"
        machines.append(node)
        links.append(Link(f"lm{m}", node.id, f"leaf{m // 40}", "ib-ndr-400", 8))
    links += [Link(f"ls{i}_{j}", f"leaf{i}", f"spine{j}", "ib-ndr-400", 16) for i in range(8) for j in range(4)]
    assert len(links) > REBUILD_AFTER_REMOVALS
    stack.push(AddItems(spines + leaves + machines, links))
    _same_as_from_scratch(analysis, graph, catalogue)
    assert analysis.unlinked() == [] and analysis.entries()[0].nodes == 320

    stack.push(RemoveItems([], ["lm5"]))
    assert [n.id for n in analysis.unlinked()] == ["m5"]
    assert [p.target for p in analysis.problems()] == ["m5"] and "not counted" in analysis.problems()[0].message
    assert analysis.entries()[0].nodes == 319
    _same_as_from_scratch(analysis, graph, catalogue)
    stack.push(RemoveItems([], ["ls0_0"]))  # leaf0 still reaches the spines through the others
    assert len(analysis.components.parts()) == 2
    stack.push(SetNode("m5", {"count": 400}))  # now the lone node holds more machines: it is the cluster
    assert analysis.entries()[0].nodes == 400 and len(analysis.unlinked()) == 319
    _same_as_from_scratch(analysis, graph, catalogue)
    for _ in range(3):
        stack.undo()
    stack.push(RemoveItems([f"leaf{i}" for i in range(8)]))  # 352 links at once
    assert len(analysis.components.parts()) == 4 + 320
    _same_as_from_scratch(analysis, graph, catalogue)
    stack.undo()
    assert len(analysis.components.parts()) == 1
    _same_as_from_scratch(analysis, graph, catalogue)
