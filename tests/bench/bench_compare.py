"""Benchmark (not a test): a six-way comparison — building it, refreshing the compare view after an
edit, and exporting the PDF report with charts.

    python tests/bench/bench_compare.py
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

SIX_WAY = {
    "gpudesk_scenario": 1,
    "name": "Six ways to train Llama 3 8B",
    "workload": {"preset": "llama3-8b-train", "kind": "train", "tokens": 1e11},
    "compare": [
        {"name": "8 × H100 SXM", "cluster": [{"item": "dgx-h100"}]},
        {"name": "8 × A100 80GB", "cluster": [{"item": "a100-sxm4-80gb", "per_node": 8, "intra": "nvlink3"}]},
        {"name": "8 × B200", "cluster": [{"item": "dgx-b200"}]},
        {"name": "AWS p5 × 2", "cluster": [{"cloud": "aws-p5.48xlarge", "instances": 2}]},
        {"name": "8 × MI300X", "cluster": [{"item": "mi300x", "per_node": 8}]},
        {"name": "16 × RTX 4090", "cluster": [{"item": "rtx-4090", "per_node": 4, "nodes": 4, "inter": "eth-100g"}]},
    ],
    "finance": {"rent": "aws-p5.48xlarge"},
}


def timed(fn, repeat):
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    os.environ.setdefault("GPUDESK_HOME", tempfile.mkdtemp(prefix="gpudesk-bench-"))
    from gpudesk.core.catalogue import Catalogue
    from gpudesk.core.compare import build_comparison
    from gpudesk.core.scenario import parse_scenario
    from gpudesk.ui.app import make_application

    app = make_application()
    catalogue = Catalogue.open(None, ROOT / "data")
    scenario = parse_scenario(SIX_WAY)
    build = timed(lambda: build_comparison(scenario, catalogue), 20)
    comparison = build_comparison(scenario, catalogue)
    why = _why_figures(comparison, catalogue)

    from gpudesk.ui.render.pdf import render_comparison_pdf

    out = Path(tempfile.mkdtemp()) / "six.pdf"
    render_comparison_pdf(comparison, out)  # warm fonts
    pdf = timed(lambda: render_comparison_pdf(comparison, out, "Bench", "gpudesk"), 5)

    from gpudesk.ui.compare.view import CompareView

    view = CompareView()
    view.resize(1500, 900)
    view.set_catalogue(catalogue)
    view.load_scenario(scenario)
    view.show()
    app.processEvents()
    view.tabs.setCurrentIndex(1)  # charts update too
    app.processEvents()

    def edit_and_refresh():
        view.tokens.setValue(view.tokens.value() + 1)
        view.refresh()
        app.processEvents()

    refresh = timed(edit_and_refresh, 20)
    print(f"options: {len(comparison.results)}; PDF pages: {out.read_bytes().count(b'/Type /Page') - 1}, "
          f"{out.stat().st_size / 1024:.0f} KiB")
    print(f"build_comparison_six_way_ms: {build * 1000:.1f}")
    print(f"view_refresh_after_edit_ms: {refresh * 1000:.1f}")
    print(f"export_pdf_six_way_ms: {pdf * 1000:.0f}")
    for key, value in why.items():
        print(f"{key}: {value:.1f}")
    return 0


def _why_figures(comparison, catalogue) -> dict:
    """What the recommendation rests on, for the six configurations: the whole analysis (tornado,
    crossovers and 2,000 draws) and the draws alone."""
    from gpudesk.core.defend import basis_of, build_inputs, probabilities, why_for

    bases = [basis_of(r, catalogue) for r in comparison.results if r.ok]
    row = comparison.why.row if comparison.why is not None else "cost_run"
    inputs = build_inputs(bases, row)
    return {"why_configurations": float(len(bases)), "why_inputs": float(len(inputs)),
            "why_whole_analysis_ms": timed(lambda: why_for(comparison, catalogue), 10) * 1000,
            "why_2000_draws_ms": timed(lambda: probabilities(bases, inputs, row, 2000), 20) * 1000}


if __name__ == "__main__":
    sys.exit(main())
