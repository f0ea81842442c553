"""Benchmark (not a test): the cluster canvas at scale — DGX H100 machines behind a two-level fat
tree of InfiniBand NDR switches, one node per machine, training Llama 3 70B:

- 1,000 machines (8,000 GPUs): 32 leaves, 16 spines — 1,048 nodes, 1,512 links;
- 10,000 machines (80,000 GPUs): 320 leaves, 160 spines — 10,480 nodes, 61,200 links.

For each it reports adding the cluster (one undoable command), edit-to-panel time (a count edit
through the undo stack to the estimates panel: the UI thread's share, with the estimate on its
worker thread, and the time until the new figures are shown), and repaint time for fit-to-view,
wheel zoom, panning and dragging a node, at full quality and while moving (links drawn without
antialiasing until the user pauses).

Two drawings of the same cluster: "tidy", each leaf switch above its machines as a user would lay
out racks, and "tangled", machines in one big grid so that most links cross the view.

    python tests/bench/bench_canvas.py [--machines 1000,10000] [--layouts tidy,tangled]

The budget is a frame (16.7 ms at 60 Hz) for the UI thread's work per edit and for each repaint
while moving, and a second for adding the 10,000-machine cluster.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("GPUDESK_HOME", tempfile.mkdtemp(prefix="gpudesk-bench-"))

FRAME_MS = 16.7
SIZES = {1000: (32, 16), 10000: (320, 160)}  # machines -> (leaf switches, spine switches)


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def median_ms(samples) -> float:
    return statistics.median(samples) * 1000


def fat_tree(graph, catalogue, layout: str, machines: int):
    """Nodes and links of the cluster, positioned for `layout` ("tidy" or "tangled")."""
    from gpudesk.core.cluster.convert import make_node
    from gpudesk.core.cluster.model import Link

    leaves_n, spines_n = SIZES.get(machines) or (max(1, -(-machines // 32)), max(1, -(-machines // 64)))
    per_leaf = -(-machines // leaves_n)  # 32 machines under each leaf (the last ones may have fewer)
    block_w = 4 * 240  # a leaf's machines: 4 columns by 8 rows
    nodes, links = [], []
    spines = []
    for i in range(spines_n):
        x = (i + 0.5) * leaves_n * (block_w + 120) / spines_n if layout == "tidy" else 600 + i * 440
        spine = make_node(graph, catalogue, "switch", "ib-ndr-400", x, -1400)
        spine.id = f"spine{i}"
        spines.append(spine)
    leaves = []
    for i in range(leaves_n):
        x = i * (block_w + 120) + block_w / 2 - 100 if layout == "tidy" else i * 260
        leaf = make_node(graph, catalogue, "switch", "ib-ndr-400", x, -700)
        leaf.id = f"leaf{i}"
        leaves.append(leaf)
    for m in range(machines):
        leaf, slot = divmod(m, per_leaf)
        if layout == "tidy":
            x, y = leaf * (block_w + 120) + (slot % 4) * 240, (slot // 4) * 100 - 400
        else:
            x, y = (m % 40) * 240, (m // 40) * 100
        node = make_node(graph, catalogue, "system", "dgx-h100", x, y)
        node.id = f"m{m}"
        nodes.append(node)
        links.append(Link(f"lm{m}", node.id, leaves[leaf].id, "ib-ndr-400", 8))
    for i, leaf in enumerate(leaves):
        for j, spine in enumerate(spines):
            links.append(Link(f"ls{i}_{j}", leaf.id, spine.id, "ib-ndr-400", 16))
    return spines + leaves + nodes, links, leaves_n + spines_n


def run(app, view, catalogue, layout: str, machines: int) -> dict:
    from gpudesk.core.cluster.commands import AddItems
    from gpudesk.core.format import power

    view.graph.clear()
    view.undo_stack.clear()
    app.processEvents()
    nodes, links, switches = fat_tree(view.graph, catalogue, layout, machines)
    rss_before = rss_mb()
    start = time.perf_counter()
    view.push(AddItems(nodes, links, "Fat tree"))
    build = time.perf_counter() - start
    start = time.perf_counter()
    app.processEvents()  # the first paint, at 100%, and the debounced estimate
    settle = time.perf_counter() - start
    rss_after = rss_mb()
    view.canvas.fit()
    app.processEvents()
    while view._estimating:
        app.processEvents()

    start = time.perf_counter()
    view.update_estimate()
    first = time.perf_counter() - start
    est = view.estimate

    edits, undo = [], []
    for k in range(20):
        start = time.perf_counter()
        view.set_node(f"m{k}", {"count": 2})
        view.update_estimate()
        edits.append(time.perf_counter() - start)
    for _ in range(10):
        start = time.perf_counter()
        view.undo_stack.undo()
        view.update_estimate()
        undo.append(time.perf_counter() - start)

    # what a user's edit does: the UI thread applies the edit and resolves the estimate's inputs,
    # a worker computes it, and the UI thread shows it. The UI thread's share is the frame budget.
    applied = []
    original_apply = view._apply_estimate

    def timed_apply(*args):
        t = time.perf_counter()
        original_apply(*args)
        applied.append(time.perf_counter() - t)

    view._apply_estimate = timed_apply
    blocked, arrived = [], []
    for k in range(30, 50):
        start = time.perf_counter()
        view.set_node(f"m{k}", {"count": 2})
        view.update_estimate_async()
        blocked.append(time.perf_counter() - start)
        while view._estimating:
            app.processEvents()
        app.processEvents()
        arrived.append(time.perf_counter() - start)
    view._apply_estimate = original_apply
    ui_thread = [b + a for b, a in zip(blocked, applied, strict=False)]

    canvas = view.canvas
    viewport = canvas.viewport()
    bar = canvas.horizontalScrollBar()

    def repaint(action, settle=False):
        """Median ms of 20 repaints after `action`; with settle, each at full quality (as after a pause)."""
        samples = []
        for _ in range(20):
            action()
            if settle:
                canvas._settled()
            start = time.perf_counter()
            viewport.repaint()
            samples.append(time.perf_counter() - start)
        return median_ms(samples)

    def pan():
        bar.setValue(bar.value() + 37 if bar.value() + 37 < bar.maximum() else bar.minimum())

    rows = []
    canvas.fit()
    rows.append(("whole cluster fitted to the window", repaint(lambda: None, settle=True), None))
    factors = iter([1.15] * 10 + [1 / 1.15] * 10 + [1.15] * 10 + [1 / 1.15] * 10)
    rows.append(("zooming in and out from fit (wheel steps)", repaint(lambda: canvas.zoom(next(factors)), True),
                 repaint(lambda: canvas.zoom(next(factors)))))
    canvas.fit()
    canvas.zoom(3.0)
    rows.append(("panning at 3x from fit", repaint(pan, True), repaint(pan)))
    canvas.resetTransform()
    middle = view.scene.node_items[f"m{machines // 2}"]
    canvas.centerOn(middle)
    rows.append(("panning at 100% in the middle of the cluster", repaint(pan, True), repaint(pan)))
    # dragging a leaf switch: its links follow on every mouse move (as QGraphicsScene moves an item)
    leaf = view.scene.node_items["leaf0"]
    canvas.centerOn(leaf)
    steps = iter([(20, 0), (0, 20), (-20, 0), (0, -20)] * 20)

    def drag():
        """As a mouse drag does: move the item, and the view knows the user is moving something."""
        dx, dy = next(steps)
        leaf.setPos(leaf.x() + dx, leaf.y() + dy)
        canvas._interacting()

    rows.append(("dragging a leaf switch at 100%", repaint(drag, True), repaint(drag)))
    canvas.fit()
    rows.append(("dragging a leaf switch, whole cluster in view", repaint(drag, True), repaint(drag)))

    # a click on the canvas: which link is under the pointer (the link layer's hit test)
    scene = view.scene
    probes = [scene.link_items[f"lm{k * (machines // 50)}"].line.pointAt(0.37) for k in range(50)]
    hits, hit_s = 0, []
    for point in probes:
        start = time.perf_counter()
        hits += scene.link_at(point) is not None
        hit_s.append(time.perf_counter() - start)

    gpus = sum(n.count * 8 for n in nodes if n.kind == "system")
    print(f"\n[{machines:,} machines, {layout} layout] {len(view.graph.nodes):,} nodes ({machines:,} machines, "
          f"{switches} switches), {len(view.graph.links):,} links, {gpus:,} GPUs")
    if est is not None:
        time_s = f", time to train {est.time_s.likely / 86400:.1f} days" if est.time_s else ""
        print(f"estimate: {est.devices:,} devices, {est.tokens_per_s.likely:,.0f} tokens/s{time_s}, "
              f"power {power(est.power_w.likely) if est.power_w else 'unknown'}, slowest link {est.slowest_link or '-'}")
    print(f"add the cluster (one undoable command, {len(nodes):,} nodes + {len(links):,} links): {build * 1000:.0f} ms; "
          f"first paint and estimate {settle * 1000:.0f} ms; resident memory +{rss_after - rss_before:.0f} MB")
    print(f"first panel update (estimate on the UI thread): {first * 1000:.1f} ms")
    print(f"edit-to-panel, all on the UI thread (count edit + estimate + panel), median of {len(edits)}: "
          f"{median_ms(edits):.1f} ms (max {max(edits) * 1000:.1f}); undo-to-panel {median_ms(undo):.1f} ms")
    print(f"edit with the estimate on the worker thread, median of {len(blocked)}: UI thread busy "
          f"{median_ms(ui_thread):.1f} ms (edit and inputs {median_ms(blocked):.1f}, showing the result "
          f"{median_ms(applied) if applied else 0:.1f}; max {max(ui_thread) * 1000:.1f}), new estimate on the panel "
          f"after {median_ms(arrived):.1f} ms")
    print(f"hit test of a click on a link, median of {len(hit_s)}: {median_ms(hit_s):.2f} ms ({hits} found a link)")
    print("repaint, median ms of 20                        full quality  while moving")
    for name, full, moving in rows:
        moving_text = "" if moving is None else f"{moving:>12.1f}"
        print(f"  {name:<46} {full:>10.1f}  {moving_text}")
    return {"add_ms": build * 1000, "ui_thread_ms": median_ms(ui_thread), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", default="1000,10000", help="comma-separated cluster sizes (default 1000,10000)")
    parser.add_argument("--layouts", default="tidy,tangled", help="comma-separated: tidy, tangled")
    args = parser.parse_args()
    from gpudesk.core.catalogue import Catalogue
    from gpudesk.ui.app import make_application
    from gpudesk.ui.canvas.view import ClusterView

    app = make_application()
    catalogue = Catalogue.open(None, ROOT / "data")
    view = ClusterView()
    view.ask_recover = lambda when: False
    view.resize(1600, 1000)
    view.set_catalogue(catalogue)
    view.base["workload"] = {"preset": "llama3-70b-train", "kind": "train"}
    view.show()
    app.processEvents()
    for machines in (int(m) for m in args.machines.split(",")):
        for layout in args.layouts.split(","):
            run(app, view, catalogue, layout.strip(), machines)
    print(f"\nbudget: one frame = {FRAME_MS} ms (60 Hz); adding 10,000 machines under a second")
    view.undo_stack.setClean()
    view.close()


if __name__ == "__main__":
    main()
