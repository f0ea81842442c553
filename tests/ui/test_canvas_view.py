"""The cluster canvas with pytest-qt: the scene mirrors the model, dragging and linking with the
mouse, undo, the panel following edits, files, autosave and recovery, exports."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtTest import QTest

from gpudesk.cli import main
from gpudesk.core.cluster.commands import RemoveItems
from gpudesk.ui.canvas.items import NODE_H, NODE_W, NodeItem
from gpudesk.ui.canvas.links import LinkItem
from gpudesk.ui.canvas.view import ClusterView

from .conftest import new_cluster_view


@pytest.fixture
def view(qtbot, catalogue):
    widget = new_cluster_view(qtbot, catalogue)
    widget.show()
    qtbot.waitExposed(widget)
    widget.update_estimate()
    return widget


def test_the_scene_mirrors_the_model(view):
    view.graph.clear()
    a = view.add_item("system", "dgx-h100", QPointF(0, 0))
    b = view.add_item("system", "dgx-h100", QPointF(400, 0))
    link = view.connect_nodes(a.id, b.id, "ib-ndr-400", 8)
    assert set(view.scene.node_items) == set(view.graph.nodes)
    assert set(view.scene.link_items) == {link.id}
    view.set_node(a.id, {"count": 16})
    assert view.scene.node_items[a.id].count == 16
    view.push(RemoveItems([a.id]))
    assert a.id not in view.scene.node_items and not view.scene.link_items
    view.undo_stack.undo()
    assert a.id in view.scene.node_items and link.id in view.scene.link_items


def _viewport_point(view, scene_point: QPointF) -> QPoint:
    return view.canvas.mapFromScene(scene_point)


def test_dragging_a_node_is_one_undoable_step(view, qtbot):
    view.graph.clear()
    view.undo_stack.clear()
    node = view.add_item("system", "dgx-h100", QPointF(0, 0))
    view.canvas.resetTransform()
    view.canvas.centerOn(QPointF(0, 0))
    item = view.scene.node_items[node.id]
    start = item.pos() + QPointF(40, 20)
    vp = view.canvas.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _viewport_point(view, start))
    for step in range(1, 6):
        QTest.mouseMove(vp, _viewport_point(view, start + QPointF(step * 30, step * 10)))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       _viewport_point(view, start + QPointF(150, 50)))
    moved = view.graph.nodes[node.id]
    assert (moved.x, moved.y) != (node.x, node.y) or view.undo_stack.count() == 2
    assert view.undo_stack.count() == 2  # add + one move
    assert view.undo_stack.text(1).startswith("Move")
    view.undo_stack.undo()
    assert (view.graph.nodes[node.id].x, view.graph.nodes[node.id].y) == (item.x(), item.y())


def test_drawing_a_link_from_a_port(view, qtbot):
    view.graph.clear()
    a = view.add_item("system", "dgx-spark", QPointF(0, 0))
    b = view.add_item("system", "dgx-spark", QPointF(400, 0))
    view.canvas.resetTransform()
    view.canvas.centerOn(QPointF(200, 0))
    item_a, item_b = view.scene.node_items[a.id], view.scene.node_items[b.id]
    port = item_a.mapToScene(item_a.port_rect().center())
    target = item_b.pos() + QPointF(NODE_W / 2, NODE_H / 2)
    vp = view.canvas.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _viewport_point(view, port))
    QTest.mouseMove(vp, _viewport_point(view, (port + target) / 2))
    QTest.mouseMove(vp, _viewport_point(view, target))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _viewport_point(view, target))
    assert len(view.graph.links) == 1
    link = next(iter(view.graph.links.values()))
    assert {link.source, link.target} == {a.id, b.id}
    assert isinstance(view.scene.link_items[link.id], LinkItem)


def test_panel_follows_edits_and_undo_walks_back(view, qtbot):
    view.graph.clear()
    view.undo_stack.clear()
    node = view.add_item("accelerator", "h100-sxm5-80gb", QPointF(0, 0))
    qtbot.waitUntil(lambda: view.estimate is not None and view.estimate.devices == 8, timeout=3000)
    one_node = view.estimate.time_s.likely
    view.set_node(node.id, {"count": 4, "nic": "ib-ndr-400", "nic_count": 8})
    qtbot.waitUntil(lambda: view.estimate.devices == 32, timeout=3000)
    assert view.estimate.time_s.likely < one_node / 3
    assert "InfiniBand" in view.panel.values["devices"].text() or view.estimate.devices == 32
    assert view.panel.values["time"].text() != "—"
    # the toolbar's labels stay short; what would be undone is in the tooltip
    assert view.undo_action.text() == "Undo" and view.undo_action.toolTip().startswith("Undo ")
    assert len(view.undo_action.toolTip()) > len("Undo ")
    while view.undo_stack.canUndo():
        view.undo_stack.undo()
    assert not view.graph.nodes
    assert view.undo_action.text() == "Undo" and view.undo_action.toolTip() == "Nothing to undo"
    assert view.redo_action.text() == "Redo" and view.redo_action.toolTip().startswith("Redo ")
    qtbot.waitUntil(lambda: view.estimate is None, timeout=3000)


def test_problems_are_marked_on_the_canvas(view, qtbot):
    view.graph.clear()
    a = view.add_item("system", "jetson-nano-devkit", QPointF(0, 0))
    b = view.add_item("system", "jetson-nano-devkit", QPointF(300, 0))
    view.update_estimate()
    assert view.scene.node_items[b.id].problem  # not linked, and the 561M model does not fit
    link = view.connect_nodes(a.id, b.id, "ib-ndr-400", 1)
    view.update_estimate()
    assert "cannot drive" in view.scene.link_items[link.id].problem
    assert "cannot hold" in view.scene.node_items[a.id].problem


def test_spin_box_edit_is_one_step(view, qtbot):
    view.graph.clear()
    view.undo_stack.clear()
    node = view.add_item("system", "dgx-h100", QPointF(0, 0))
    view.scene.select_ids([node.id])
    spin = view.properties.count
    for value in (2, 3, 32):
        spin.setValue(value)
    spin.editingFinished.emit()
    assert view.graph.nodes[node.id].count == 32
    assert view.undo_stack.count() == 2
    view.undo_stack.undo()
    assert view.graph.nodes[node.id].count == 1


def test_copy_paste_and_delete(view, qtbot):
    view.graph.clear()
    a = view.add_item("system", "dgx-h100", QPointF(0, 0))
    b = view.add_item("switch", "ib-ndr-400", QPointF(0, -200))
    view.connect_nodes(a.id, b.id, "ib-ndr-400", 8)
    view.scene.select_ids([a.id, b.id])
    view.copy_selection()
    view.paste()
    assert len(view.graph.nodes) == 4 and len(view.graph.links) == 2
    view.delete_selection()
    assert len(view.graph.nodes) == 2


def test_saved_file_gives_the_same_numbers_in_gpudesk_estimate(view, qtbot, tmp_path, capsys):
    view.graph.clear()
    node = view.add_item("accelerator", "h100-sxm5-80gb", QPointF(0, 0))
    view.set_node(node.id, {"count": 4, "nic": "ib-ndr-400", "nic_count": 8})
    view.update_estimate()
    path = tmp_path / "cluster.json"
    assert view._write(path)
    assert not view.is_modified()
    assert main(["estimate", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["devices"] == 32
    assert data["time_s"]["likely"] == pytest.approx(view.estimate.time_s.likely)
    assert data["cost"]["break_even_runs"] == pytest.approx(view.estimate.cost.break_even_runs)


def test_open_restores_the_canvas(view, qtbot, tmp_path, catalogue):
    view.graph.clear()
    a = view.add_item("system", "dgx-spark", QPointF(0, 0))
    b = view.add_item("switch", "eth-10g", QPointF(0, -200))
    view.connect_nodes(a.id, b.id, "eth-10g", 1)
    path = tmp_path / "c.json"
    view._write(path)
    other = ClusterView()
    other.ask_recover = lambda when: False
    qtbot.addWidget(other)
    other.set_catalogue(catalogue)
    assert other.open_path(path)
    assert other.graph.to_dict() == view.graph.to_dict()
    assert not other.is_modified()


def test_a_file_naming_hardware_the_catalogue_lacks_is_refused_by_place(view, tmp_path, monkeypatch):
    """Opened, its node would leave every live estimate blank with no word of why: refused instead, and the
    canvas keeps what it shows."""
    from gpudesk.ui.canvas import files

    said = []
    monkeypatch.setattr(files.QMessageBox, "warning", lambda _parent, title, text: said.append((title, text)))
    before = view.graph.to_dict()
    path = tmp_path / "typo.json"
    path.write_text(json.dumps({"gpudesk_scenario": 1, "name": "t",
                                "workload": {"kind": "train", "params": 8e9, "tokens": 1e10},
                                "cluster": [{"item": "dgx-h1000", "per_node": 8, "nodes": 2}]}))
    assert not view.open_path(path)
    assert said[0][0] == "Cannot open cluster"
    assert said[0][1].startswith(f"{path}:\ncluster[0].item: 'dgx-h1000' is not an accelerator or system in the "
                                 "catalogue (did you mean")
    assert view.graph.to_dict() == before


def test_autosave_and_recovery_after_a_crash(view, qtbot, catalogue):
    view.graph.clear()
    view.add_item("system", "dgx-b200", QPointF(0, 0))
    assert view.is_modified()
    assert view.autosave()
    saved = view.graph.to_dict()
    # a new session finds the autosave and, asked, restores it
    again = ClusterView()
    asked = []
    again.ask_recover = lambda when: asked.append(when) or True
    qtbot.addWidget(again)
    again.set_catalogue(catalogue)
    assert asked and again.graph.to_dict() == saved
    assert again.is_modified()
    # saving removes the autosave
    again._write(view.autosave_path().parent / "kept.json")
    assert not view.autosave_path().exists()


def test_exports_png_svg_and_pdf(view, tmp_path):
    png = view.export_image("png", str(tmp_path / "c.png"))
    svg = view.export_image("svg", str(tmp_path / "c.svg"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:400]
    pdf = view.export_pdf(str(tmp_path / "c.pdf"))
    assert pdf.read_bytes().startswith(b"%PDF")
    from pypdf import PdfReader

    text = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(str(pdf)).pages)
    assert "Cluster design report" in text and "The cluster" in text


def test_node_items_are_node_items(view):
    assert all(isinstance(i, NodeItem) for i in view.scene.node_items.values())


def _drag_link(view, a_id: str, b_id: str) -> None:
    """Draw a link the way a user does: press on a's port, drag to b, release."""
    item_a, item_b = view.scene.node_items[a_id], view.scene.node_items[b_id]
    view.canvas.resetTransform()
    view.canvas.centerOn((item_a.pos() + item_b.pos()) / 2)
    port = item_a.mapToScene(item_a.port_rect().center())
    target = item_b.pos() + QPointF(NODE_W / 2, NODE_H / 2)
    vp = view.canvas.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _viewport_point(view, port))
    QTest.mouseMove(vp, _viewport_point(view, (port + target) / 2))
    QTest.mouseMove(vp, _viewport_point(view, target))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _viewport_point(view, target))


def test_a_drawn_link_changes_the_estimate_and_an_unlinked_machine_is_never_counted_silently(view, qtbot):
    """DGX H100 + HGX H100: unlinked, the HGX is left out and the panel says so; drawn with the
    mouse, the link joins it; its type sets the speed (NDR against 100 GbE) and names the slowest
    link with its share of the step; deleting the link drops the machine again; the user may
    choose to count it."""
    view.graph.clear()
    view.undo_stack.clear()
    dgx = view.add_item("system", "dgx-h100", QPointF(0, 0))
    hgx = view.add_item("system", "hgx-h100-8gpu", QPointF(420, 0))
    view.update_estimate()
    assert view.estimate.devices == 8
    panel = view.panel
    assert panel.unlinked.isVisibleTo(panel)
    assert "1 machine not linked: not counted" in panel.unlinked.text() and "HGX H100" in panel.unlinked.text()
    assert "not counted in the estimate" in view.scene.node_items[hgx.id].problem

    _drag_link(view, dgx.id, hgx.id)
    assert len(view.graph.links) == 1
    link = next(iter(view.graph.links.values()))
    assert link.kind == "ib-ndr-400"  # the DGX's NIC
    view.update_estimate()
    assert view.estimate.devices == 16 and not panel.unlinked.isVisibleTo(panel)
    ndr_speed = view.estimate.tokens_per_s.likely
    assert panel.values["link"].text().startswith("InfiniBand NDR (400 Gb/s): ")

    # the link's type, changed in the properties panel as a user does
    view.scene.select_ids(link_ids=[link.id])
    combo = view.properties.link_kind
    combo.setCurrentIndex(combo.findData("eth-100g"))
    assert view.graph.links[link.id].kind == "eth-100g"
    view.update_estimate()
    est = view.estimate
    assert est.devices == 16 and est.tokens_per_s.likely < ndr_speed
    b = est.breakdown
    share = b["link_seconds"]["100 Gigabit Ethernet (100GbE)"] / b["step_s"]
    assert panel.values["link"].text().startswith(f"100 Gigabit Ethernet (100GbE): {share:.1%} of each step")
    assert panel.values["speed"].text() != ""

    # deleting the link (selected, Delete) drops the HGX from the estimate, and says so
    view.scene.select_ids(link_ids=[link.id])
    view.delete_selection()
    view.update_estimate()
    assert view.estimate.devices == 8 and "not counted" in panel.unlinked.text()
    view.undo_stack.undo()
    view.update_estimate()
    assert view.estimate.devices == 16

    # counting unlinked machines is the user's choice, one undoable step
    view.undo_stack.redo()
    panel.count_unlinked.setChecked(True)
    view.update_estimate()
    assert view.graph.count_unlinked and view.estimate.devices == 16
    assert not panel.unlinked.isVisibleTo(panel) and panel.count_unlinked.isVisibleTo(panel)
    view.undo_stack.undo()
    view.update_estimate()
    assert view.estimate.devices == 8 and not panel.count_unlinked.isChecked()


def test_a_systems_power_shows_its_it_load_against_its_rating(view):
    view.graph.clear()
    view.add_item("system", "dgx-h100", QPointF(0, 0))
    view.update_estimate()
    est = view.estimate
    text = view.panel.values["power"].text()
    pue = view.estimate_context["pue"]
    assert view.estimate_context["rated"] == [("NVIDIA DGX H100", 1, 10200)]
    if est.power_w.high > 10200:  # with a PUE above 1 the total may exceed the rating, never silently
        assert f"with PUE {pue:g}" in text
    assert "NVIDIA DGX H100 rated 10.2 kW at most" in text
    assert est.power_w.high / pue <= 10200 + 1e-6


def _click(view, scene_point: QPointF, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    QTest.mouseClick(view.canvas.viewport(), Qt.MouseButton.LeftButton, modifier, _viewport_point(view, scene_point))


def test_clicking_a_link_selects_it_through_the_link_layer(view, qtbot):
    """Links are rows of one layer item, not Qt items: a click near a link picks it, the properties
    panel shows it, Ctrl toggles it, a click on empty canvas or on a node deselects it, and Delete
    removes it as one undoable step."""
    view.graph.clear()
    view.undo_stack.clear()
    a = view.add_item("system", "dgx-h100", QPointF(0, 0))
    b = view.add_item("system", "dgx-h100", QPointF(600, 0))
    c = view.add_item("system", "dgx-h100", QPointF(0, 400))
    ab = view.connect_nodes(a.id, b.id, "ib-ndr-400", 8)
    ac = view.connect_nodes(a.id, c.id, "ib-ndr-400", 8)
    view.canvas.resetTransform()
    view.canvas.centerOn(QPointF(300, 200))
    scene = view.scene
    line = scene.link_items[ab.id].line
    near_ab = line.pointAt(0.5) + QPointF(0, 3)  # a few pixels off the line still hits it
    assert scene.link_at(near_ab) is scene.link_items[ab.id]
    assert scene.link_at(line.pointAt(0.5) + QPointF(0, 40)) is None
    assert scene.link_at(line.p1()) is None  # a link's end lies under its node: the node wins

    _click(view, near_ab)
    assert scene.selected_ids() == ([], [ab.id])
    assert view.properties.link_id == ab.id
    assert scene.link_items[ab.id].isSelected() and not scene.link_items[ac.id].isSelected()
    # Ctrl adds the other link, and Ctrl on a selected link takes it away again
    _click(view, scene.link_items[ac.id].line.pointAt(0.5), Qt.KeyboardModifier.ControlModifier)
    assert set(scene.selected_ids()[1]) == {ab.id, ac.id} and view.properties.link_id is None
    _click(view, scene.link_items[ac.id].line.pointAt(0.5), Qt.KeyboardModifier.ControlModifier)
    assert scene.selected_ids() == ([], [ab.id])
    # a click on empty canvas deselects; a click on a node selects it alone
    _click(view, QPointF(300, 300))
    assert scene.selected_ids() == ([], []) and view.properties.link_id is None
    _click(view, near_ab)
    _click(view, scene.node_items[b.id].pos() + QPointF(60, 30))
    assert scene.selected_ids() == ([b.id], [])

    _click(view, near_ab)
    view.delete_selection()
    assert ab.id not in view.graph.links and ab.id not in scene.link_items
    assert scene.selected_ids() == ([], []) and scene.links.count == 1
    assert scene.link_at(near_ab) is None
    view.undo_stack.undo()
    assert scene.link_at(near_ab) is scene.link_items[ab.id]


def test_a_rubber_band_selects_the_links_it_crosses(view, qtbot):
    view.graph.clear()
    a = view.add_item("system", "dgx-h100", QPointF(0, 0))
    b = view.add_item("system", "dgx-h100", QPointF(600, 0))
    c = view.add_item("system", "dgx-h100", QPointF(0, 400))
    ab = view.connect_nodes(a.id, b.id, "ib-ndr-400", 8)
    view.connect_nodes(a.id, c.id, "ib-ndr-400", 8)
    view.canvas.resetTransform()
    view.canvas.centerOn(QPointF(300, 200))
    mid = view.scene.link_items[ab.id].line.pointAt(0.5)
    vp = view.canvas.viewport()
    start, end = mid + QPointF(-30, -60), mid + QPointF(30, 60)
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _viewport_point(view, start))
    QTest.mouseMove(vp, _viewport_point(view, (start + end) / 2))
    QTest.mouseMove(vp, _viewport_point(view, end))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, _viewport_point(view, end))
    assert view.scene.selected_ids() == ([], [ab.id])
    assert view.properties.link_id == ab.id


def test_links_are_drawn_in_their_kinds_colours(view):
    """The layer draws each kind of link in its own colour: a picture of the scene has InfiniBand
    and Ethernet colours in it, and a selected link is drawn thicker."""
    from PySide6.QtGui import QColor, QImage, QPainter

    from gpudesk.ui.canvas.items import Ink

    view.graph.clear()
    a = view.add_item("system", "dgx-h100", QPointF(0, 0))
    b = view.add_item("switch", "ib-ndr-400", QPointF(0, -600))
    c = view.add_item("switch", "eth-100g", QPointF(800, 0))
    ib = view.connect_nodes(a.id, b.id, "ib-ndr-400", 8)
    view.connect_nodes(a.id, c.id, "eth-100g", 1)
    assert {r.family for r in view.scene.link_items.values()} == {"infiniband", "ethernet"}

    def picture():
        image = QImage(900, 800, QImage.Format.Format_ARGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        view.scene.render(painter, source=QRectF(-50, -650, 900, 800))
        painter.end()
        return image

    def count(image, name):
        colour = Ink.get(name).rgb()
        return sum(1 for y in range(0, 800, 2) for x in range(0, 900, 2) if image.pixel(x, y) == colour)

    before = picture()
    assert count(before, "link_infiniband") > 20 and count(before, "link_ethernet") > 20
    view.scene.select_ids(link_ids=[ib.id])
    assert count(picture(), "link_infiniband") > count(before, "link_infiniband")


def test_an_exported_drawing_is_on_paper_colours_under_a_dark_screen_palette(view, tmp_path, qapp):
    from collections import Counter

    from PySide6.QtGui import QColor, QImage, QPalette

    from gpudesk.ui import theme

    before = QPalette(qapp.palette())
    qapp.setPalette(theme.make_palette(theme.DARK))
    try:
        view.scene.update()
        qapp.processEvents()
        png = view.export_image("png", str(tmp_path / "dark.png"))
        image = QImage(str(png))
        node = next(iter(view.scene.node_items.values()))
        corner = view.scene.itemsBoundingRect().adjusted(-30, -30, 30, 30).topLeft()
        scale = image.width() / (view.scene.itemsBoundingRect().width() + 60)
        top_left = (node.scenePos() - corner) * scale
        box = node.boundingRect()
        samples = Counter(image.pixel(int(top_left.x() + box.width() * scale * fx),
                                      int(top_left.y() + box.height() * scale * fy))
                          for fx in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9) for fy in (0.15, 0.5, 0.85))
        fill = QColor(samples.most_common(1)[0][0])  # the node's fill: most of its face
        background = QColor(image.pixel(2, 2))
        assert fill.lightnessF() > 0.85 and background.lightnessF() > 0.85  # not the dark screen's fills
        dark_fill = QColor(theme.VARIANTS[theme.DARK]["node_fill"])
        assert fill != dark_fill
        # and the screen goes back to its own colours
        from gpudesk.ui.canvas.items import Ink

        Ink.refresh()
        assert Ink.hex("node_fill") == theme.VARIANTS[theme.DARK]["node_fill"]
    finally:
        qapp.setPalette(before)
