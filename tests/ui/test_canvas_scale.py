"""The cluster canvas with a large cluster: a fat tree added in one undoable step makes each item
once and notifies the view once, problems are marked item by item, and far out the overview bundles
the links (tests/bench/bench_canvas.py times the 10,000-machine case)."""

from __future__ import annotations

import pytest

from gpudesk.core.cluster.commands import AddItems
from gpudesk.core.cluster.convert import make_node
from gpudesk.core.cluster.model import Link

from .conftest import new_cluster_view

MACHINES, LEAVES, SPINES = 96, 6, 3


def fat_tree(graph, catalogue):
    """96 DGX H100 under 6 leaf switches (16 each) and 3 spines: 105 nodes, 96 + 18 links."""
    spines = [make_node(graph, catalogue, "switch", "ib-ndr-400", 2000 + i * 2000, -1400) for i in range(SPINES)]
    for i, s in enumerate(spines):
        s.id = f"spine{i}"
    leaves = [make_node(graph, catalogue, "switch", "ib-ndr-400", i * 1080, -700) for i in range(LEAVES)]
    for i, leaf in enumerate(leaves):
        leaf.id = f"leaf{i}"
    machines, links = [], []
    for m in range(MACHINES):
        leaf, slot = divmod(m, MACHINES // LEAVES)
        node = make_node(graph, catalogue, "system", "dgx-h100", leaf * 1080 + (slot % 4) * 240, (slot // 4) * 100 - 400)
        node.id = f"m{m}"
        machines.append(node)
        links.append(Link(f"lm{m}", node.id, f"leaf{leaf}", "ib-ndr-400", 8))
    for i in range(LEAVES):
        for j in range(SPINES):
            links.append(Link(f"ls{i}_{j}", f"leaf{i}", f"spine{j}", "ib-ndr-400", 16))
    return spines + leaves + machines, links


@pytest.fixture
def view(qtbot, catalogue):
    widget = new_cluster_view(qtbot, catalogue)
    widget.graph.clear()
    widget.undo_stack.clear()
    yield widget
    widget.undo_stack.setClean()


def test_a_fat_tree_added_in_one_step_makes_each_item_once_and_notifies_once(view, catalogue, monkeypatch):
    nodes, links = fat_tree(view.graph, catalogue)
    calls = {"schedule": 0, "properties": 0}
    monkeypatch.setattr(view, "schedule", lambda: calls.__setitem__("schedule", calls["schedule"] + 1))
    original = view._refresh_properties
    monkeypatch.setattr(view, "_refresh_properties",
                        lambda: (calls.__setitem__("properties", calls["properties"] + 1), original()))
    view.push(AddItems(nodes, links, "Fat tree"))
    # the view heard of the edit once, not once per node and link (114 + 105 events)
    assert calls == {"schedule": 1, "properties": 1}
    assert set(view.scene.node_items) == set(view.graph.nodes) and len(view.graph.nodes) == 105
    assert set(view.scene.link_items) == set(view.graph.links) and len(view.graph.links) == 114
    link = view.scene.link_items["lm17"]
    assert (link.source.node_id, link.target.node_id) == ("m17", "leaf1")
    assert link.line.p1() == view.scene.node_items["m17"].centre()
    assert link.label == "8 × InfiniBand NDR" and link.family == "infiniband"
    assert view.scene.node_items["m5"].pos().x() == nodes[SPINES + LEAVES + 5].x
    # the scene rect grew to hold the whole drawing, once
    assert view.scene.sceneRect().contains(view.scene.itemsBoundingRect())
    # one undo step takes all of it away (the link layer dropping every row in one pass, one
    # repaint: not one per link), and redo brings it back
    repaints = []
    layer_update = view.scene.links.update
    monkeypatch.setattr(view.scene.links, "update", lambda *a: repaints.append(a) or layer_update(*a))
    view.undo_stack.undo()
    assert len(repaints) == 1
    layers = {view.scene.overview, view.scene.links}
    assert not view.scene.node_items and not view.scene.link_items and view.scene.links.count == 0
    assert not [item for item in view.scene.items() if item not in layers]
    view.undo_stack.redo()
    assert len(view.scene.link_items) == 114 and calls["schedule"] == 3


def test_problems_are_marked_and_cleared_item_by_item(view, catalogue):
    nodes, links = fat_tree(view.graph, catalogue)
    view.push(AddItems(nodes, links))
    scene = view.scene
    scene.set_problems({"m3": "too hot", "lm4": "slow"})
    assert scene.node_items["m3"].problem == "too hot" and scene.link_items["lm4"].problem == "slow"
    scene.set_problems({"m3": "too hot", "m9": "no room"})
    assert scene.node_items["m3"].problem == "too hot"
    assert scene.link_items["lm4"].problem == "" and scene.link_items["lm4"].toolTip() == "8 × InfiniBand NDR"
    assert scene.node_items["m9"].problem == "no room"
    assert [i for i, item in scene.node_items.items() if item.problem] == ["m3", "m9"]
    scene.set_problems({})
    assert not any(item.problem for item in list(scene.node_items.values()) + list(scene.link_items.values()))


def test_far_out_the_overview_draws_racks_as_boxes_and_bundles_links(view, catalogue):
    nodes, links = fat_tree(view.graph, catalogue)
    view.push(AddItems(nodes, links))
    canvas = view.canvas
    canvas.fit()
    canvas.resetTransform()
    canvas.scale(0.05, 0.05)
    canvas._detail_changed()
    overview = view.scene.overview
    assert overview.isVisible()
    # node items stay for hit tests but paint nothing while the overview draws, and so does the link layer
    assert all(item.flags() & item.GraphicsItemFlag.ItemHasNoContents for item in view.scene.node_items.values())
    assert not view.scene.links.isVisible()
    # close up every node is its own box; the further out, the more share one
    assert overview.drawn_counts(1.0)[0] == len(view.graph.nodes)
    boxes, lines = overview.drawn_counts(0.01)
    assert overview.drawn_counts(0.05)[0] > boxes
    # at 1% a cell is 1,024 units: each leaf's 16 machines (4 × 4 at 240 × 100) are one or two boxes,
    # and the 16 machine links of a leaf, which end in those cells, a line or two
    assert boxes <= SPINES + LEAVES + 2 * LEAVES
    assert 0 < lines <= 2 * LEAVES + LEAVES * SPINES < len(view.graph.links) / 2
    far_boxes, far_lines = overview.drawn_counts(0.001)
    assert far_boxes < boxes and far_lines <= lines
    # close up nothing is merged: every link is its own line
    assert overview.drawn_counts(1.0)[1] == len(view.graph.links)
    # a dragged machine moves in the overview without rebuilding it
    item = view.scene.node_items["m0"]
    structure = overview._structure
    item.setPos(item.x() + 4000, item.y())
    assert overview._structure is structure
    layer = view.scene.links
    assert tuple(layer.xy[layer.node_row["m0"]]) == (item.x(), item.y())
    assert view.scene.link_items["lm0"].line.p1() == item.centre()
    # and back at full detail the items paint again
    canvas.resetTransform()
    canvas._detail_changed()
    assert not overview.isVisible()
    assert not any(item.flags() & item.GraphicsItemFlag.ItemHasNoContents for item in view.scene.node_items.values())
    assert view.scene.links.isVisible()


def test_a_node_dragged_far_out_moves_apart_from_the_bundles_until_the_view_settles(view, catalogue, monkeypatch):
    """While a node is dragged in the overview the bundles of everything else are computed once and
    kept; the node and its links are drawn where they are at each move; once the view settles the
    bundles take them in again."""
    nodes, links = fat_tree(view.graph, catalogue)
    view.push(AddItems(nodes, links))
    canvas = view.canvas
    canvas.resetTransform()
    canvas.scale(0.05, 0.05)
    canvas._detail_changed()
    overview, scene = view.scene.overview, view.scene
    assert overview.isVisible()
    full_boxes, full_lines = overview.drawn_counts(0.05)
    computed = []
    real = type(overview)._bundles
    monkeypatch.setattr(type(overview), "_bundles", lambda self, level: computed.append(level) or real(self, level))
    scene.fast = True  # the user is moving something (the view turns this on when frames are slow)
    leaf = scene.node_items["leaf0"]
    for step in range(1, 6):
        leaf.setPos(leaf.x() + 300, leaf.y())
        boxes, lines = overview._drawing(0.05)
        dragged_boxes, dragged_lines = overview._dragged()
        # the leaf is a box of its own, and each of its 16 machine and 3 spine links a line of its own,
        # from where the leaf is now
        assert sum(len(r) for _s, r in dragged_boxes) == 1
        segments = [tuple(row) for _s, _w, rows in dragged_lines for row in rows]
        assert len(segments) == 16 + SPINES
        centre = (leaf.centre().x(), leaf.centre().y())
        assert all(centre in ((a, b), (c, d)) for a, b, c, d in segments), step
        assert sum(len(r) for _s, r in boxes) < full_boxes + 1
    assert len(computed) == 1  # the others' bundles once for the whole drag, not once per move
    scene.fast = False  # the view settled: drawn at full quality, with the leaf in the bundles again
    overview.paint(_NullPainter(), None)
    assert overview._moving == set() and len(computed) == 2
    assert overview.drawn_counts(0.05)[1] >= 1


class _NullPainter:
    """Stands in for QPainter where only the overview's choice of what to draw is tested."""

    def worldTransform(self):  # noqa: N802 - QPainter's name
        from PySide6.QtGui import QTransform

        return QTransform.fromScale(0.05, 0.05)

    def __getattr__(self, _name):
        return lambda *args, **kwargs: None
