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
    assert seen == ["node_added", "node_changed", "node_changed", "node_changed"]


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

    from gpudesk.core.cluster.convert import GraphAnalysis

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
