"""Benchmark (not a test): the cluster canvas at scale — 1,000 DGX H100 machines (8,000 GPUs)
behind a two-level fat tree of InfiniBand NDR switches (32 leaves, 16 spines), one node per
machine, training Llama 3 70B. Reports adding the cluster, edit-to-panel time (a count edit through
the undo stack to the estimates panel), and repaint time for fit-to-view, zoom and pan, at full
quality and while moving (links drawn without antialiasing until the user pauses).

Two drawings of the same cluster: "tidy", each leaf switch above its 32 machines as a user would
lay out racks, and "tangled", machines in one big grid so that most links cross the view.

    python tests/bench/bench_canvas.py

The budget is a frame (16.7 ms at 60 Hz) for the panel update and for each repaint while moving.
"""

from __future__ import annotations

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

MACHINES, LEAVES, SPINES = 1000, 32, 16
FRAME_MS = 16.7


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


def fat_tree(graph, catalogue, layout: str):
    """Nodes and links of the cluster, positioned for `layout` ("tidy" or "tangled")."""
    from gpudesk.core.cluster.convert import make_node
    from gpudesk.core.cluster.model import Link

    per_leaf = -(-MACHINES // LEAVES)  # 32 machines under each leaf (the last has fewer)
    block_w = 4 * 240  # a leaf's machines: 4 columns by 8 rows
    nodes, links = [], []
    spines = []
    for i in range(SPINES):
        x = (i + 0.5) * LEAVES * (block_w + 120) / SPINES if layout == "tidy" else 600 + i * 440
        spine = make_node(graph, catalogue, "switch", "ib-ndr-400", x, -1400)
        spine.id = f"spine{i}"
        spines.append(spine)
    leaves = []
    for i in range(LEAVES):
        x = i * (block_w + 120) + block_w / 2 - 100 if layout == "tidy" else i * 260
        leaf = make_node(graph, catalogue, "switch", "ib-ndr-400", x, -700)
        leaf.id = f"leaf{i}"
        leaves.append(leaf)
    for m in range(MACHINES):
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
    return spines + leaves + nodes, links


def run(app, view, catalogue, layout: str) -> None:
    from gpudesk.core.cluster.commands import AddItems
    from gpudesk.core.format import power

    view.graph.clear()
    view.undo_stack.clear()
    app.processEvents()
    nodes, links = fat_tree(view.graph, catalogue, layout)
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

    start = time.perf_counter()
    view.update_estimate()
    first = time.perf_counter() - start
    est = view.estimate

    edits, undo = [], []
    for k in range(30):
        start = time.perf_counter()
        view.set_node(f"m{k}", {"count": 2})
        view.update_estimate()
        edits.append(time.perf_counter() - start)
    for _ in range(10):
        start = time.perf_counter()
        view.undo_stack.undo()
        view.update_estimate()
        undo.append(time.perf_counter() - start)
    # what a user's edit does: the UI thread resolves and hands the estimate to a worker; the panel
    # says "updating" at once, and the estimate arrives when the worker is done
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
    canvas.centerOn(view.scene.node_items["m500"])
    rows.append(("panning at 100% in the middle of the cluster", repaint(pan, True), repaint(pan)))

    gpus = sum(n.count * 8 for n in nodes if n.kind == "system")
    print(f"\n[{layout} layout] {len(view.graph.nodes):,} nodes ({MACHINES:,} machines, {LEAVES + SPINES} switches), "
          f"{len(view.graph.links):,} links, {gpus:,} GPUs")
    if est is not None:
        time_s = f", time to train {est.time_s.likely / 86400:.1f} days" if est.time_s else ""
        print(f"estimate: {est.devices:,} devices, {est.tokens_per_s.likely:,.0f} tokens/s{time_s}, "
              f"power {power(est.power_w.likely) if est.power_w else 'unknown'}, slowest link {est.slowest_link or '-'}")
    print(f"add the cluster (one undoable command, {len(nodes):,} nodes + {len(links):,} links): {build * 1000:.0f} ms; "
          f"first paint and estimate {settle * 1000:.0f} ms; resident memory +{rss_after - rss_before:.0f} MB")
    print(f"first panel update: {first * 1000:.1f} ms")
    print(f"edit-to-panel (count edit + estimate + panel), median of {len(edits)}: {median_ms(edits):.1f} ms "
          f"(max {max(edits) * 1000:.1f})")
    print(f"undo-to-panel, median of {len(undo)}: {median_ms(undo):.1f} ms")
    print(f"edit with the estimate on the worker thread, median of {len(blocked)}: UI thread busy "
          f"{median_ms(blocked):.1f} ms (max {max(blocked) * 1000:.1f}), new estimate on the panel after "
          f"{median_ms(arrived):.1f} ms")
    print("repaint, median ms of 20                        full quality  while moving")
    for name, full, moving in rows:
        moving_text = "" if moving is None else f"{moving:>12.1f}"
        print(f"  {name:<46} {full:>10.1f}  {moving_text}")


def main() -> None:
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
    for layout in ("tidy", "tangled"):
        run(app, view, catalogue, layout)
    print(f"\nbudget: one frame = {FRAME_MS} ms (60 Hz)")
    view.undo_stack.setClean()
    view.close()


if __name__ == "__main__":
    main()
