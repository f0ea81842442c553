"""Exact arithmetic of the kernel curves, the serving frontier and the server limits, written against
mutmut's survivors (README, "Mutation testing"): each test pins a number or a boundary that a
changed operator, constant or default would move."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpudesk.core.estimate import frontier as F
from gpudesk.core.estimate.kernels import (
    DATASHEET_K_HALF,
    AllReduceCurve,
    ContextAttentionCurve,
    DecodeAttentionCurve,
    GemmCurve,
    datasheet_curve,
    measured_all_reduce,
    shape_factor,
)
from gpudesk.core.servers import limits, server_ids

C = GemmCurve(efficiency=0.5, bandwidth_share=0.5, fixed_us=2.0, k_half=100.0, tile_m=64, tile_n=128, units=10)
PEAK, BW = 1e12, 1e11


# ----------------------------------------------------------------------------- GemmCurve
def test_an_empty_product_takes_no_time():
    for m, n, k in ((0, 8, 8), (8, 0, 8), (8, 8, 0), (-1, 8, 8)):
        assert C.seconds(m, n, k, PEAK, BW) == 0.0
    assert C.seconds(1, 1, 1, PEAK, BW) > 0.0


def test_the_default_precision_is_16_bit_and_fp8_moves_half_the_input_bytes():
    assert C.seconds(4, 256, 512, PEAK, BW) == C.seconds(4, 256, 512, PEAK, BW, "bf16")
    assert C.memory_seconds(4, 256, 512, BW, "bf16") == pytest.approx((4 * 512 + 512 * 256) * 2 / (BW * 0.5) +
                                                                      4 * 256 * 2 / (BW * 0.5))
    assert C.memory_seconds(4, 256, 512, BW, "fp8") == pytest.approx((4 * 512 + 512 * 256) * 1 / (BW * 0.5) +
                                                                     4 * 256 * 2 / (BW * 0.5))
    # an unknown element type counts 2 bytes
    assert C.memory_seconds(4, 256, 512, BW, "odd") == C.memory_seconds(4, 256, 512, BW, "bf16")
    # the result is written in 16 bits: a square output adds m·n·2 bytes
    assert C.memory_seconds(1000, 1000, 1, BW, "bf16") == pytest.approx((1000 + 1000 + 1000 * 1000) * 2 / 5e10)


def test_seconds_is_the_slower_side_plus_the_prepass_and_the_fixed_cost():
    m, n, k = 100, 300, 5000
    compute, memory = C.compute_seconds(m, n, k, PEAK), C.memory_seconds(m, n, k, BW, "bf16")
    assert C.seconds(m, n, k, PEAK, BW) == pytest.approx(max(compute, memory) + 2e-6)
    pre = replace(C, prepass_bytes=3.0)
    assert pre.seconds(m, n, k, PEAK, BW) == pytest.approx(max(compute, memory) + m * k * 3.0 / (BW * 0.5) + 2e-6)


def test_tiles_split_k_only_when_they_leave_units_idle():
    # 2 × 3 = 6 tiles on 10 units: K = 4,096 splits min(10 // 6, 4096 // 512) = 1 way (no split)
    per_unit = PEAK * 0.5 / 10
    assert C.compute_seconds(128, 384, 4096, PEAK) == pytest.approx(2 * 64 * 128 * (4096 + 100) / per_unit)
    # 1 tile: split min(10, 4096 // 512 = 8) = 8 ways, one wave of 8 pieces of 512
    assert C.compute_seconds(64, 128, 4096, PEAK) == pytest.approx(2 * 64 * 128 * (512 + 100) / per_unit)
    # exactly as many tiles as units: no split, one wave
    assert C.compute_seconds(64 * 10, 128, 4096, PEAK) == pytest.approx(2 * 64 * 128 * (4096 + 100) / per_unit)
    # 11 tiles: two waves
    assert C.compute_seconds(64 * 11, 128, 4096, PEAK) == pytest.approx(2 * 2 * 64 * 128 * (4096 + 100) / per_unit)
    # a short K is not split below 512
    assert C.compute_seconds(64, 128, 1000, PEAK) == pytest.approx(2 * 64 * 128 * (1000 + 100) / per_unit)


def test_share_is_the_products_flops_over_its_time_at_the_peak():
    t = C.seconds(512, 512, 512, PEAK, BW)
    assert C.share(512, 512, 512, PEAK, BW) == pytest.approx(2 * 512 ** 3 / (t * PEAK))
    assert C.share(512, 512, 512, PEAK, BW, "fp8") == pytest.approx(
        2 * 512 ** 3 / (C.seconds(512, 512, 512, PEAK, BW, "fp8") * PEAK))
    assert C.share(0, 512, 512, PEAK, BW) == 0.0


def test_a_datasheet_curve_takes_the_familys_share_and_the_fitted_ramp():
    c = datasheet_curve(0.6, 0.7, 4.0, 76, "consumer", "Fam")
    assert (c.efficiency, c.bandwidth_share, c.fixed_us, c.k_half, c.tile_m, c.tile_n, c.units, c.measured) == \
        (0.6, 0.7, 4.0, DATASHEET_K_HALF, 64, 128, 76, False)
    assert c.basis == "no measured table: Fam's large-product share, 76 units, the fitted tables' median ramp"
    assert datasheet_curve(0.6, 0.7, 4.0, None, "laptop", "Fam").units == 48
    assert datasheet_curve(0.6, 0.7, 4.0, None, "unheard-of", "Fam").units == 64
    assert "assumed units" in datasheet_curve(0.6, 0.7, 4.0, None, "edge", "Fam").basis


def test_the_shape_factor_weighs_products_by_their_flops_and_can_leave_memory_out():
    small, big = (64, 128, 256), (8192, 8192, 8192)
    ref = 2 * 8192 ** 3 / C.seconds(*big, PEAK, BW)
    both = (2 * 64 * 128 * 256 + 2 * 8192 ** 3) / (C.seconds(*small, PEAK, BW) + C.seconds(*big, PEAK, BW))
    assert shape_factor(C, [small, big], PEAK, BW) == pytest.approx(min(1.0, both / ref))
    compute_only = 2 * 64 * 128 * 256 / (C.compute_seconds(*small, PEAK) + 2e-6)
    assert shape_factor(C, [small], PEAK, BW, compute_only=True) == pytest.approx(min(1.0, compute_only / ref))
    # empty products are skipped; nothing at all gives no rate
    assert shape_factor(C, [(0, 5, 5), small], PEAK, BW) == shape_factor(C, [small], PEAK, BW)
    assert shape_factor(C, [(0, 5, 5)], PEAK, BW) == 0.0
    assert shape_factor(C, [(16384, 16384, 16384)], PEAK, BW) == 1.0  # clipped at the reference
    decode = (1, 4096, 4096)  # memory-bound: an FP8 operand moves half the bytes
    assert shape_factor(C, [decode], 1e15, BW, "fp8") > 1.2 * shape_factor(C, [decode], 1e15, BW, "bf16")


# ----------------------------------------------------------------------------- collectives and attention
def test_an_all_reduce_of_two_devices_moves_the_whole_message_once():
    c = AllReduceCurve(gpus=2, latency_us=5.0, bus_gbs=100.0)
    assert c.seconds(1e6) == pytest.approx(5e-6 + 1e6 / 100e9)
    assert c.seconds(-1) == 0.0
    assert (c.kind, c.fabric) == ("nccl", "nvlink")
    assert measured_all_reduce((c,), 2, 1e6, ("custom",)) is None


def test_decode_attention_counts_keys_and_values_and_the_math_of_every_query_head():
    c = DecodeAttentionCurve("bf16", 10.0, 1.0, 0.5, 0.25)
    stream = 3 * 100 * 2 * 64 * 2 * 2 / (1e12 * 0.5)
    math_s = 4 * 3 * 100 * 16 * 64 / (1e15 * 0.25)
    assert c.seconds(3, 100, 16, 2, 64, 1e12, 1e15) == pytest.approx(13e-6 + max(stream, math_s))
    slow_math = replace(c, flops_share=1e-9)
    assert slow_math.seconds(3, 100, 16, 2, 64, 1e12, 1e15) == pytest.approx(13e-6 + 4 * 3 * 100 * 16 * 64 / 1e6)
    # no peak figure: the stream alone
    assert c.seconds(3, 100, 16, 2, 64, 1e12, 0.0) == pytest.approx(13e-6 + stream)
    assert DecodeAttentionCurve("other", 0, 0, 0.5, 1).seconds(1, 10, 1, 1, 1, 1e12, 1e15) == \
        pytest.approx(10 * 2 * 2 / 5e11)


def test_context_attention_rises_with_the_sequence():
    c = ContextAttentionCurve(0.6, 1000.0, 10.0)
    assert c.share(1000) == pytest.approx(0.3) and c.share(0) == 0.0 and c.share(9000) == pytest.approx(0.54)
    flops = 4 * 2 * 1000 * 500 * 8 * 128
    assert c.seconds(2, 1000, 8, 128, 1e15) == pytest.approx(10e-6 + flops / (1e15 * 0.3))
    assert c.seconds(0, 1000, 8, 128, 1e15) == 0.0 and c.seconds(2, 0, 8, 128, 1e15) == 0.0


# ----------------------------------------------------------------------------- the frontier
def _p(user, gpu, ttft=0.1):
    return {"tokens_per_s_per_user": user, "tokens_per_s_per_gpu": gpu, "ttft_s": ttft}


def test_the_frontier_breaks_ties_by_throughput_and_drops_equals():
    got = F.frontier([_p(10, 5), _p(10, 7), _p(9, 7), _p(8, 7.000000001)])
    assert [(p["tokens_per_s_per_user"], p["tokens_per_s_per_gpu"]) for p in got] == [(10, 7)]
    assert F.frontier([]) == []


def test_targets_are_met_at_their_bounds_and_missed_just_past_them():
    p = _p(30.0, 100.0, ttft=1.0)
    assert F.meets(p, 1.0, 30.0) and F.meets(p, None, None)
    assert not F.meets(p, 0.999, None) and not F.meets(p, None, 30.001)
    assert F.shortfall(p, 0.5, 60.0) == pytest.approx(2.0)
    assert F.shortfall(p, 0.25, 60.0) == pytest.approx(4.0)
    assert F.shortfall(p, None, None) == 0.0 and F.shortfall(p, 2.0, 15.0) == pytest.approx(0.5)
    assert F.shortfall(_p(0.0, 1.0), None, 10.0) == pytest.approx(10.0 / 1e-12)


def test_the_operating_point_prefers_throughput_among_the_points_that_meet():
    curve = [_p(50, 10, 0.1), _p(40, 30, 0.5), _p(30, 20, 0.2)]
    assert F.operating_point(curve, 0.3, None) == (curve[2], True)
    assert F.operating_point(curve, None, 45) == (curve[0], True)
    point, met = F.operating_point(curve, 0.05, None)
    assert not met and point is curve[0]


def test_the_ladder_stops_at_the_top_and_adds_the_scenarios_own_only_below_it():
    assert F.ladder(3, 4) == [1, 2, 3, 4]
    assert F.ladder(0, 0) == [1]
    assert F.ladder(10_000, 10) == [2 ** i for i in range(14)]  # 8,192 at most, the 10,000 left out
    assert F.ladder(8192, 1) == [2 ** i for i in range(14)]


def test_each_point_of_a_layout_is_one_steady_state(catalogue):
    from gpudesk.core.estimate.model import shape_of
    from gpudesk.core.estimate.serving import engine_rates, serve
    from gpudesk.core.estimate.topology import topology_of
    from gpudesk.core.resolve import resolve_option
    from gpudesk.core.scenario import parse_scenario

    doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": "h100-sxm5-80gb", "per_node": 2, "nodes": 1}],
           "workload": {"kind": "infer", "model": "llama-3.1-8b", "precision": "bf16", "concurrency": 3,
                        "prompt_tokens": 256, "output_tokens": 128}}
    sc = parse_scenario(doc, "t")
    inp = resolve_option(sc, sc.options()[0], catalogue).inputs
    w, groups = inp.workload, inp.groups
    s, topo, device = shape_of(w), topology_of(groups), groups[0].device
    e = engine_rates(device, w.precision, 1, 1.0)
    pts = F.points(w, s, device, topo, e, (1.0, 1.0), 2)
    tp1 = [p for p in pts if p["tp"] == 1 and p["pp"] == 1]
    assert [p["concurrency"] for p in tp1][:3] == [1, 2, 3]
    p = next(p for p in tp1 if p["concurrency"] == 3)
    got = serve(replace(w, concurrency=3), s, device, topo, __import__("gpudesk.core.estimate.serving",
                fromlist=["Layout"]).Layout(1, 1, 2), e)
    assert p["layout"] == "TP1 × 2" and p["replicas"] == 2 and p["devices_used"] == 2
    assert p["output_tokens_per_s"] == pytest.approx(got.output_tokens_per_s)
    assert p["tokens_per_s_per_gpu"] == pytest.approx(got.output_tokens_per_s / 2)
    assert p["tokens_per_s_per_user"] == pytest.approx(1 / got.tpot_s)
    assert (p["ttft_s"], p["tpot_s"], p["running_batch"]) == pytest.approx((got.ttft_s, got.tpot_s, got.batch))
    assert any(q["layout"] == "TP2 × 1" for q in pts)
    assert all(q["output_tokens_per_s"] > 0 and math.isfinite(q["tokens_per_s_per_user"]) for q in pts)
    # factors scale every point's speed
    faster = F.points(w, s, device, topo, e, (2.0, 2.0), 2)
    assert faster[0]["output_tokens_per_s"] == pytest.approx(2 * pts[0]["output_tokens_per_s"])


# ----------------------------------------------------------------------------- servers
def test_server_limits_at_the_large_gpu_boundary():
    assert limits("vllm", 70, "H100")["max_batch"] == 1024  # at least 70 GiB
    assert limits("vllm", 69.9, "H100")["max_batch"] == 256
    assert limits("vllm", None, "H100")["max_batch"] == 256
    assert limits("vllm", 80, "NVIDIA A100-SXM4-80GB")["chunk_tokens"] == 2048  # the name check ignores case
    assert limits("trtllm", 80, "A100") == {"max_batch": 2048, "chunk_tokens": 8192, "memory_share": 0.9,
                                            "memory_basis": "free", "kv_reserve": "whole", "graphs": True,
                                            "graphs_max_batch": None, "block_formats": False}
    assert limits("sglang", 80, "H100") == {"max_batch": None, "chunk_tokens": 8192, "memory_share": None,
                                            "memory_basis": "total", "kv_reserve": "used", "graphs": True,
                                            "graphs_max_batch": None, "block_formats": False}
    assert limits("llamacpp", 128, "GB10")["block_formats"] is True
    assert limits("llamacpp", 128, "GB10")["graphs_max_batch"] == 1
    assert limits("llamacpp", 24, "RTX 4090")["chunk_tokens"] is None
    assert server_ids()[0] == "tuned"


def test_a_disaggregated_point_is_the_slower_pools_rate_and_the_decode_step_alone(catalogue):
    from dataclasses import replace

    from gpudesk.core.estimate.memory import kv_gb_per_sequence
    from gpudesk.core.estimate.model import shape_of
    from gpudesk.core.estimate.serving import Layout, decode_only, engine_rates, kv_capacity, layouts, prefill
    from gpudesk.core.estimate.topology import topology_of
    from gpudesk.core.resolve import resolve_option
    from gpudesk.core.scenario import parse_scenario

    doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": "dgx-h100", "nodes": 2}],
           "workload": {"kind": "infer", "model": "llama-3.1-8b", "precision": "bf16", "concurrency": 16,
                        "prompt_tokens": 4096, "output_tokens": 256}}
    sc = parse_scenario(doc, "t")
    inp = resolve_option(sc, sc.options()[0], catalogue).inputs
    w, device = inp.workload, inp.groups[0].device
    s, topo = shape_of(w), topology_of(inp.groups)
    e = engine_rates(device, w.precision, 1, 1.0)
    factors = (1.5, 0.5)
    pts = F.disaggregated_points(w, s, device, topo, e, factors, 16)
    assert {(p["prefill_nodes"], p["decode_nodes"]) for p in pts} == {(1, 1)}
    half = replace(topo, devices=8, nodes=1)
    # the prefill pool: its best layout by prompts per second
    best = None
    for lay in layouts(w, s, half):
        if kv_capacity(w, s, device, lay, 4096, True)[0] < 1:
            continue
        alone, per_token = prefill(w, s, e, half, lay, 1 << 20)
        rate = lay.replicas / (4096 * per_token / 0.5)
        if best is None or rate > best[0]:
            best = (rate, alone / 0.5)
    transfer = kv_gb_per_sequence(w, s, 4096, 1, 1) * 1e9 / (topo.node_gbs * 1e9) + topo.inter_latency_s
    p = next(p for p in pts if p["tp"] == 1 and p["concurrency"] == 16)
    batch, step = decode_only(replace(w, concurrency=16), s, device, half, Layout(1, 1, 8), e, 1.5)
    assert (p["running_batch"], p["tpot_s"]) == (batch, pytest.approx(step))
    rate = min(best[0], 8 * batch / (256 * step))
    assert p["output_tokens_per_s"] == pytest.approx(rate * 256)
    assert p["tokens_per_s_per_gpu"] == pytest.approx(rate * 256 / 16)
    assert p["ttft_s"] == pytest.approx(best[1] + transfer + step)
    assert p["layout"] == "1 prefill + 1 decode nodes, decode TP1 × 8" and p["replicas"] == 8 and p["pp"] == 1
    assert p["devices_used"] == 16 and p["tokens_per_s_per_user"] == pytest.approx(1 / step)
    # one concurrency on fewer replicas than users: only the replicas with users serve
    few = next(p for p in pts if p["tp"] == 1 and p["concurrency"] == 4)
    b4, s4 = decode_only(replace(w, concurrency=4), s, device, half, Layout(1, 1, 8), e, 1.5)
    assert few["output_tokens_per_s"] == pytest.approx(min(best[0], 4 * b4 / (256 * s4)) * 256)
    # the ladder reaches what a decode replica's cache holds
    top = kv_capacity(w, s, device, Layout(8, 1, 1), 4096 + 128, True)[0]
    assert max(p["concurrency"] for p in pts if p["tp"] == 8) == F.ladder(16, top)[-1]
    # a prefill pool that holds nothing (no layout fits the prompt's cache) gives no point
    huge = replace(w, prompt_tokens=10_000_000)
    assert F.disaggregated_points(huge, s, device, topo, e, factors, 16) == []


def test_node_splits_spread_over_large_clusters():
    assert F.node_splits(2) == [1] and F.node_splits(8) == list(range(1, 8))
    assert F.node_splits(9) == [1, 2, 3, 4, 6, 7, 8]
    assert F.node_splits(1000) == [50, 125, 250, 375, 500, 625, 750, 875]
