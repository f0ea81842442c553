"""The serving planner's throughput-interactivity curve and latency targets (core/estimate/frontier.py):
the frontier keeps only points nothing beats on both axes, a target picks the best throughput that
meets it, an unreachable target says so and shows the closest point, and the curve reaches the
estimate's JSON, Compare's chart series and the PDF."""

from __future__ import annotations

import pytest

from gpudesk.core.compare import build_comparison
from gpudesk.core.estimate.frontier import enrich, frontier, ladder, operating_point, shortfall
from gpudesk.core.report.content import CurveChart, comparison_report
from gpudesk.core.resolve import estimate_scenario
from gpudesk.core.scenario import ScenarioError, parse_scenario


def _p(user, gpu, ttft=0.1, **kw):
    return {"tokens_per_s_per_user": user, "tokens_per_s_per_gpu": gpu, "output_tokens_per_s": gpu * 8,
            "ttft_s": ttft, "concurrency": kw.get("c", 1), "tp": 8, "pp": 1, "replicas": 1, "layout": "TP8 × 1"}


def test_the_frontier_keeps_what_nothing_beats_on_both_axes():
    pts = [_p(100, 10), _p(90, 5), _p(80, 50), _p(60, 40), _p(50, 90), _p(100, 8)]
    got = [(p["tokens_per_s_per_user"], p["tokens_per_s_per_gpu"]) for p in frontier(pts)]
    assert got == [(100, 10), (80, 50), (50, 90)]


def test_the_ladder_doubles_to_the_kv_limit_and_keeps_the_scenarios_own_concurrency():
    assert ladder(20, 100) == [1, 2, 4, 8, 16, 20, 32, 64]
    assert ladder(1, 1) == [1]
    assert max(ladder(10, 10 ** 6)) == 8192


def test_a_target_picks_the_best_throughput_that_meets_it():
    curve = frontier([_p(120, 10, 0.05), _p(80, 50, 0.2), _p(40, 90, 0.9), _p(20, 120, 3.0)])
    point, met = operating_point(curve, ttft_s_max=1.0, per_user_min=None)
    assert met and point["tokens_per_s_per_gpu"] == 90
    point, met = operating_point(curve, ttft_s_max=1.0, per_user_min=60)
    assert met and point["tokens_per_s_per_gpu"] == 50
    # nothing meets 200 tokens/s per user: the closest point (the fastest per user) is shown
    point, met = operating_point(curve, ttft_s_max=None, per_user_min=200)
    assert not met and point["tokens_per_s_per_user"] == 120
    assert shortfall(point, None, 200) == pytest.approx(200 / 120)
    assert operating_point([], 1.0, None) == (None, False)


def test_each_point_gets_its_cost_per_million_tokens_and_tokens_per_megawatt():
    pts = [_p(50, 100)]  # 800 tokens/s on the cluster
    enrich(pts, usd_per_hour=36.0, power_w=10_000.0)
    assert pts[0]["usd_per_million_tokens"] == pytest.approx(36.0 / (800 * 3600) * 1e6)
    assert pts[0]["tokens_per_s_per_mw"] == pytest.approx(800 / 0.01)
    enrich(pts, usd_per_hour=None, power_w=None)
    assert pts[0]["usd_per_million_tokens"] is None and pts[0]["tokens_per_s_per_mw"] is None


def _doc(**workload):
    w = {"kind": "infer", "model": "llama-3.1-70b", "precision": "fp8", "prompt_tokens": 1024,
         "output_tokens": 1024, "concurrency": 64, **workload}
    return {"gpudesk_scenario": 1, "name": "t", "workload": w, "cluster": [{"item": "dgx-h100", "nodes": 1}]}


def test_an_estimate_carries_its_curve_and_meets_its_targets(catalogue):
    plain = estimate_scenario(parse_scenario(_doc(), "t"), catalogue)
    curve = plain.serving["curve"]
    assert len(curve) >= 5
    users = [p["tokens_per_s_per_user"] for p in curve]
    gpus = [p["tokens_per_s_per_gpu"] for p in curve]
    assert users == sorted(users, reverse=True) and gpus == sorted(gpus)
    assert all(p["usd_per_million_tokens"] and p["tokens_per_s_per_mw"] for p in curve)
    assert plain.to_json()["serving"]["curve"][0]["tokens_per_s_per_user"] == pytest.approx(users[0])
    targeted = estimate_scenario(parse_scenario(_doc(ttft_s_max=1.0, tokens_per_s_per_user_min=30), "t"), catalogue)
    note = targeted.finding("latency_targets_met")
    assert note is not None and note.values["tokens_per_s_per_user"] >= 30 and note.values["ttft_s"] <= 1.0
    best = max(p["tokens_per_s_per_gpu"] for p in curve
               if p["tokens_per_s_per_user"] >= 30 and p["ttft_s"] <= 1.0)
    assert targeted.tokens_per_s.likely / 8 == pytest.approx(best, rel=1e-6)
    assert targeted.serving["concurrency"] == note.values["concurrency"]


def test_an_unreachable_target_says_so_and_shows_the_closest_point(catalogue):
    est = estimate_scenario(parse_scenario(_doc(tokens_per_s_per_user_min=5000), "t"), catalogue)
    note = est.finding("latency_target_missed")
    assert note is not None and "No operating point meets the targets" in note.text
    assert note.values["tokens_per_s_per_user"] == pytest.approx(
        max(p["tokens_per_s_per_user"] for p in est.serving["curve"]))
    assert est.feasible


@pytest.mark.parametrize("field,value", [("ttft_s_max", 0), ("ttft_s_max", -1), ("tokens_per_s_per_user_min", "x")])
def test_a_bad_target_is_refused_by_name(field, value):
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(_doc(**{field: value}), "t")
    assert f"workload.{field}" in str(caught.value)


def test_compare_and_the_pdf_draw_every_options_curve(catalogue):
    from pathlib import Path

    from gpudesk.core.scenario import load_scenario

    root = Path(__file__).resolve().parents[1]
    scenario = load_scenario(root / "resources" / "examples" / "llama-70b-fp8-8xh100-mi300x-b200.json")
    comp = build_comparison(scenario, catalogue)
    series = comp.serving_curves["series"]
    assert [s["name"] for s in series] == ["8 × H100 SXM", "8 × MI300X", "8 × B200"]
    assert all(len(s["xs"]) == len(s["ys"]) >= 5 and s["operating"] for s in series)
    charts = [b for section in comparison_report(comp).sections for b in section.blocks if isinstance(b, CurveChart)]
    assert len(charts) == 1 and len(charts[0].series) == 3 and len(charts[0].markers) == 3
    training = build_comparison(load_scenario(root / "resources" / "examples" / "a100-vs-jetson-nanos.json"), catalogue)
    assert training.serving_curves == {}


def _inputs(catalogue, nodes, **workload):
    from gpudesk.core.resolve import resolve_option

    doc = _doc(prompt_tokens=8192, output_tokens=512, **workload)
    doc["cluster"] = [{"item": "dgx-h100", "nodes": nodes}]
    sc = parse_scenario(doc, "t")
    return resolve_option(sc, sc.options()[0], catalogue).inputs


def test_prefill_and_decode_split_over_nodes_where_there_are_two_or_more(catalogue):
    from dataclasses import replace

    from gpudesk.core.estimate.frontier import disaggregated_points, node_splits
    from gpudesk.core.estimate.memory import kv_gb_per_sequence
    from gpudesk.core.estimate.model import shape_of
    from gpudesk.core.estimate.serving import Layout, decode_only, engine_rates
    from gpudesk.core.estimate.topology import topology_of

    assert node_splits(1) == [] and node_splits(4) == [1, 2, 3]
    assert node_splits(100) == [5, 12, 25, 38, 50, 62, 75, 88]
    one = _inputs(catalogue, 1)
    w, device = one.workload, one.groups[0].device
    s, e = shape_of(w), engine_rates(device, w.precision, 1, 1.0)
    assert disaggregated_points(w, s, device, topology_of(one.groups), e, (1.0, 1.0), 8) == []
    four = _inputs(catalogue, 4)
    topo = topology_of(four.groups)
    pts = disaggregated_points(w, s, device, topo, e, (1.0, 1.0), 32)
    assert pts and all(p["disaggregated"] and p["prefill_nodes"] + p["decode_nodes"] == 4 for p in pts)
    p = next(p for p in pts if p["prefill_nodes"] == 1 and p["tp"] == 8 and p["concurrency"] == 16)
    dtopo = replace(topo, devices=24, nodes=3)
    batch, step = decode_only(replace(w, concurrency=16), s, device, dtopo, Layout(8, 1, 3), e)
    assert p["tokens_per_s_per_user"] == pytest.approx(1 / step) and p["tpot_s"] == pytest.approx(step)
    assert p["running_batch"] == batch and p["devices_used"] == 32
    # the request rate is the slower pool's; the cache crosses the NICs once
    decode_rate = 3 * batch / (512 * step)
    assert p["output_tokens_per_s"] <= decode_rate * 512 * (1 + 1e-9)
    transfer = kv_gb_per_sequence(w, s, 8192, 1, 1) * 1e9 / (topo.node_gbs * 1e9)
    assert p["ttft_s"] > step + transfer
    # the estimate's own operating point is never a disaggregated one, but the curve shows them
    est = __import__("gpudesk.core.estimate", fromlist=["estimate"]).estimate(four)
    assert any(q["disaggregated"] for q in est.serving["curve"])
    targeted = __import__("gpudesk.core.estimate", fromlist=["estimate"]).estimate(
        replace(four, workload=replace(four.workload, tokens_per_s_per_user_min=50)))
    assert not targeted.finding("latency_targets_met").values["layout"].startswith(("1 prefill", "2 prefill", "3 prefill"))
