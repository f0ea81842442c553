"""Benchmark (not a test): time of one estimate for a 1-node and a 1,000-node cluster, of the
parallelism planner's search from cold for 10,000 and 16,384 GPUs, and of the serving planner (every
layout and concurrency of a configuration, its throughput-interactivity curve) from cold.

    python tests/bench/bench_estimate.py

Prints medians over many repetitions. Budgets: under 1 ms (1000 us) per estimate once the plan is
known (the engine remembers the plan while the workload and the cluster's shape are unchanged, so a
canvas edit that does not change them does not search again); under 20 ms for a cold plan search
on 10,000 GPUs; under 50 ms to plan serving one configuration (curve included).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def median_us(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def main() -> int:
    os.environ.setdefault("GPUDESK_HOME", tempfile.mkdtemp(prefix="gpudesk-bench-"))
    from gpudesk.core.catalogue import Catalogue
    from gpudesk.core.estimate import estimate
    from gpudesk.core.resolve import resolve_option
    from gpudesk.core.scenario import load_scenario

    catalogue = Catalogue.open(None, ROOT / "data")
    scenario = load_scenario(ROOT / "resources" / "examples" / "nanochat-d20-8xh100.json")
    one = resolve_option(scenario, scenario.options()[0], catalogue).inputs
    group = one.groups[0]
    # 1,000 nodes of 8 x H100 behind InfiniBand NDR: as one group, and as 1,000 separate nodes (a canvas
    # that draws every server), which the engine merges first
    inter = resolve_option(
        scenario,
        replace(scenario.options()[0], cluster=[replace(scenario.cluster[0], nodes=1000, nic_count=8)]),
        catalogue,
    ).inputs
    thousand_grouped = inter
    thousand_separate = replace(inter, groups=tuple(replace(inter.groups[0], nodes=1) for _ in range(1000)))
    llama = replace(inter, workload=replace(inter.workload, params=70.6e9, layers=80, d_model=8192, heads=64, kv_heads=8,
                                            tokens=15e12, seq_len=8192))
    for _ in range(20):
        estimate(one)
        estimate(thousand_grouped)
    rows = [
        ("estimate_1_node_us", median_us(lambda: estimate(one), 400)),
        ("estimate_1000_nodes_llama70b_us", median_us(lambda: estimate(llama), 200)),
        ("estimate_1000_separate_nodes_us", median_us(lambda: estimate(thousand_separate), 100)),
        ("estimate_1000_nodes_us", median_us(lambda: estimate(thousand_grouped), 400)),
    ]
    print(f"cluster: {group.device.name}, {group.per_node} per node; workload {scenario.name}")
    for name, value in rows:
        print(f"{name}: {value:.0f}")

    # the planner from cold: 1,250 and 2,048 nodes of 8 x H100, Llama 3 70B and 405B pretraining
    from gpudesk.core.estimate import training

    def cold(inp):
        def run():
            training._SEARCH_CACHE.clear()
            return estimate(inp)
        return run

    def cluster(nodes, **shape):
        grown = replace(inter, groups=(replace(inter.groups[0], nodes=nodes),))
        return replace(grown, workload=replace(inter.workload, tokens=15e12, seq_len=8192, **shape))

    llama70 = dict(params=70.6e9, layers=80, d_model=8192, heads=64, kv_heads=8, ffn_dim=28672)
    llama405 = dict(params=405.9e9, layers=126, d_model=16384, heads=128, kv_heads=8, ffn_dim=53248)
    for label, inp in (("10000_gpus_llama70b", cluster(1250, **llama70)),
                       ("10000_gpus_llama405b", cluster(1250, **llama405)),
                       ("16384_gpus_llama405b", cluster(2048, **llama405))):
        est = cold(inp)()
        setup = training.setup_of(inp, inp.groups)[0]
        samples = []
        for _ in range(15):
            start = time.perf_counter()
            training.search(training.context(setup, 1))
            samples.append((time.perf_counter() - start) * 1000)
        search_ms, fastest_ms = statistics.median(samples), min(samples)
        estimate_ms = median_us(cold(inp), 15) / 1000
        print(f"plan_search_{label}_ms: {search_ms:.1f}  (fastest of 15: {fastest_ms:.1f})")
        print(f"cold_estimate_{label}_ms: {estimate_ms:.1f}  (with the rented alternative's own search; "
              f"{est.breakdown.get('plans_evaluated')} plans timed; chose {est.plan.get('label')}, "
              f"MFU {est.mfu.likely:.0%})")

    # the serving planner from cold (no remembered GEMM shapes): Llama 3.1 70B FP8 on 8 GPUs of three makes
    from gpudesk.core.estimate import kernels

    served = load_scenario(ROOT / "resources" / "examples" / "llama-70b-fp8-8xh100-mi300x-b200.json")
    for option in served.options():
        inp = resolve_option(served, option, catalogue).inputs

        def plan(inp=inp):
            kernels._shape_factor.cache_clear()
            return estimate(inp)
        est = plan()
        print(f"serving_plan_{option.name.replace(' ', '')}_ms: {median_us(plan, 15) / 1000:.1f}  (warm: "
              f"{median_us(lambda inp=inp: estimate(inp), 15) / 1000:.1f}; {len(est.serving['curve'])} curve points, "
              f"chose {est.plan['label']})")
    # with prefill and decode split over nodes: 4 and 16 DGX H100, 8,192-token prompts
    for nodes in (4, 16):
        first = served.options()[0]
        grown = replace(first, cluster=[replace(first.cluster[0], item="dgx-h100", per_node=None, nodes=nodes,
                                                intra=None)])
        inp = resolve_option(served, grown, catalogue).inputs
        inp = replace(inp, workload=replace(inp.workload, prompt_tokens=8192, output_tokens=512, concurrency=64))

        def plan(inp=inp):
            kernels._shape_factor.cache_clear()
            return estimate(inp)
        est = plan()
        split = sum(1 for p in est.serving["curve"] if p["disaggregated"])
        print(f"serving_plan_{nodes}xDGXH100_disaggregated_ms: {median_us(plan, 9) / 1000:.1f}  "
              f"({len(est.serving['curve'])} curve points, {split} of them prefill and decode on separate nodes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
