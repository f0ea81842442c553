"""GEMM curves by shape (core/estimate/kernels.py): the physics each term claims, and every fitted
curve in data/kernels/curves.toml rebuilt from the measured tables it rests on."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpudesk.core.estimate.kernel_fit import fit, loss
from gpudesk.core.estimate.kernels import REFERENCE, GemmCurve, datasheet_curve, shape_factor
from gpudesk.core.kernel_tables import CURVE_FIELDS, curves_by_device, read_rows, read_tables, refit

PEAK = 989.4e12
BW = 3350e9
CURVE = GemmCurve(efficiency=0.85, bandwidth_share=0.8, fixed_us=3.0, k_half=150.0, tile_m=64, tile_n=128, units=132)


def test_large_products_run_at_the_plateau_less_the_ramp_and_the_last_wave():
    m = n = k = 8192
    t = CURVE.seconds(m, n, k, PEAK, BW)
    tiles = (m // 64) * (n // 128)
    waves = math.ceil(tiles / 132)
    expected = waves * 2 * 64 * 128 * (k + 150) / (PEAK * 0.85 / 132) + 3e-6
    assert t == pytest.approx(expected)
    assert 0.8 < CURVE.share(m, n, k, PEAK, BW) < 0.85


def test_one_row_more_than_a_tile_costs_a_whole_tile_row():
    n, k = 8192, 8192
    full = CURVE.compute_seconds(128, n, k, PEAK)
    spill = CURVE.compute_seconds(129, n, k, PEAK)
    assert spill > full  # 129 rows need three 64-row tiles, 128 need two
    assert CURVE.compute_seconds(192, n, k, PEAK) == pytest.approx(spill)


def test_skinny_products_split_k_over_idle_units():
    # 64 rows x 256 columns: 2 tiles on 132 units; K is split so the idle units share the work
    split = CURVE.compute_seconds(64, 256, 65536, PEAK)
    unsplit = 2.0 * 64 * 128 * (65536 + 150) / (PEAK * 0.85 / 132)
    assert split < unsplit / 50


def test_decoding_products_are_memory_bound():
    # one row: the weights cross memory once, which takes far longer than the arithmetic
    t = CURVE.seconds(1, 8192, 8192, PEAK, BW)
    weights = 8192 * 8192 * 2 / (BW * 0.8)
    assert t == pytest.approx(weights + (8192 + 8192) * 2 / (BW * 0.8) + 3e-6, rel=1e-3)
    assert CURVE.compute_seconds(1, 8192, 8192, PEAK) < weights


def test_a_prepass_over_the_input_adds_its_traffic():
    fp8 = replace(CURVE, prepass_bytes=3.0)
    extra = fp8.seconds(4096, 256, 8192, PEAK, BW, "fp8") - CURVE.seconds(4096, 256, 8192, PEAK, BW, "fp8")
    assert extra == pytest.approx(4096 * 8192 * 3.0 / (BW * 0.8))


def test_the_shape_factor_is_one_at_the_reference_and_falls_for_narrow_layers():
    assert shape_factor(CURVE, [REFERENCE], PEAK, BW) == pytest.approx(1.0)
    wide = shape_factor(CURVE, [(8192, 16384, 16384)], PEAK, BW)
    narrow = shape_factor(CURVE, [(8192, 768, 768)], PEAK, BW)
    assert narrow < 0.8 * wide
    assert shape_factor(CURVE, [(64, 4096, 4096)], PEAK, BW) < shape_factor(CURVE, [(4096, 4096, 4096)], PEAK, BW)


def test_a_device_without_a_table_gets_a_curve_from_its_datasheet():
    curve = datasheet_curve(0.514, 0.8, 4.0, 304, "datacenter", "AMD Instinct CDNA 3")
    assert not curve.measured and curve.units == 304 and curve.efficiency == 0.514
    assert "no measured table" in curve.basis
    assert datasheet_curve(0.6, 0.8, 4.0, None, "edge", "x").units == 16


def test_the_fit_recovers_a_known_curve():
    truth = replace(CURVE, efficiency=0.7, fixed_us=5.0, k_half=200.0)
    rows = [(m, n, k, truth.seconds(m, n, k, PEAK, BW)) for m in (1, 16, 128, 129, 1024, 4096, 8192)
            for n in (256, 2048, 8192) for k in (512, 4096, 16384)]
    got, rms = fit(rows, PEAK, BW, "bf16", units=132)
    assert rms < 0.02
    assert got.efficiency == pytest.approx(0.7, rel=0.05)
    assert loss(got, rows, PEAK, BW, "bf16") < loss(CURVE, rows, PEAK, BW, "bf16")


def test_every_table_is_whole_on_its_grid_and_has_a_source():
    rows = read_rows()
    for table in read_tables():
        assert table["commit"] and table["date"] and table["path"].endswith(".parquet"), table["id"]
        shapes = {(m, n, k) for m, n, k, _s in rows[table["id"]]}
        assert len(shapes) == len(rows[table["id"]]) >= 800, table["id"]
        assert all(s > 0 for *_shape, s in rows[table["id"]])


def test_every_fitted_curve_is_rebuilt_from_its_table():
    stored = {c["table"]: c for c in _stored()}
    fresh = refit()
    assert {c["table"] for c in fresh} == set(stored)
    for c in fresh:
        old = stored[c["table"]]
        for f in CURVE_FIELDS:
            assert c[f] == pytest.approx(old[f], rel=1e-3, abs=1e-3), (c["table"], f)
        assert c["rms_log_error"] == pytest.approx(old["rms_log_error"], abs=1e-3)
        # the curve explains its table: a quarter of a log unit for BF16, less than half for FP8; block-scaled
        # FP4, whose small products are slowed by quantising the activations and reading the scales, within
        # 0.3 on the data-centre Blackwells and 0.55 on the RTX PRO 6000 (its table rises unevenly with M)
        limit = {"bf16": 0.25, "fp8": 0.45}.get(c["precision"]) or (0.55 if c["device"].startswith("rtx") else 0.3)
        assert c["rms_log_error"] < limit, c["table"]


def test_the_catalogue_hands_each_measured_device_its_curves():
    curves = curves_by_device()
    assert set(curves["h100-sxm5-80gb"]) == {"bf16", "fp8"}
    assert set(curves["b200-sxm-180gb"]) == {"bf16", "fp8", "fp4"}
    assert curves["h100-sxm5-80gb"]["bf16"].measured
    assert "AIConfigurator" in curves["a100-sxm4-80gb"]["bf16"].basis


def _stored(kind: str = "curve") -> list[dict]:
    import tomllib

    from gpudesk.core.kernel_tables import kernels_dir

    with (kernels_dir() / "curves.toml").open("rb") as handle:
        return tomllib.load(handle)[kind]


def _assert_refitted(kind: str, fresh: list[dict], key: tuple[str, ...], fields: tuple[str, ...], worst_rms: float):
    """Every stored entry of `kind` is the fresh fit (same set, same values), and each fits its rows."""
    stored = {tuple(c[k] for k in key): c for c in _stored(kind)}
    assert {tuple(c[k] for k in key) for c in fresh} == set(stored)
    for c in fresh:
        old = stored[tuple(c[k] for k in key)]
        for f in fields:
            assert c[f] == pytest.approx(old[f], rel=1e-3, abs=1e-4), (c["table"], f)
        assert c["rms_log_error"] < worst_rms, c["table"]


# ----------------------------------------------------------------------------- all-reduce by message size
def test_an_all_reduce_pays_its_latency_and_moves_the_rings_share_at_its_bus_bandwidth():
    from gpudesk.core.estimate.kernels import AllReduceCurve, measured_all_reduce

    c = AllReduceCurve(gpus=8, latency_us=18.0, bus_gbs=350.0)
    assert c.seconds(8e6) == pytest.approx(18e-6 + 2 * 7 / 8 * 8e6 / 350e9)
    assert c.seconds(0) == 0.0
    custom = AllReduceCurve(gpus=8, latency_us=6.0, bus_gbs=300.0, kind="custom")
    # a serving engine takes the faster of NCCL and its own; training uses NCCL
    assert measured_all_reduce((c, custom), 8, 1e4, ("nccl", "custom")) == pytest.approx(custom.seconds(1e4))
    assert measured_all_reduce((c, custom), 8, 1e9, ("nccl", "custom")) == pytest.approx(c.seconds(1e9))
    assert measured_all_reduce((c, custom), 8, 1e4) == pytest.approx(c.seconds(1e4))
    assert measured_all_reduce((c, custom), 4, 1e4) is None


def test_collectives_inside_a_measured_domain_use_the_table_and_others_the_link():
    from dataclasses import replace

    from gpudesk.core.estimate.comm import Group, all_reduce
    from gpudesk.core.estimate.kernels import AllReduceCurve
    from gpudesk.core.estimate.serving import tp_all_reduce
    from gpudesk.core.estimate.topology import Topology

    topo = Topology(16, 8, 2, 8, 300.0, 2e-6, 50.0, 10e-6, 8, "NVLink", "IB", False, False,
                    all_reduce_curves=(AllReduceCurve(8, 18.0, 350.0),))
    inside = Group(8, 8)
    assert all_reduce(8e6, inside, topo) == pytest.approx(18e-6 + 1.75 * 8e6 / 350e9)
    assert all_reduce(8e6, inside, topo, messages=4) == pytest.approx(4 * (18e-6 + 1.75 * 2e6 / 350e9))
    bare = replace(topo, all_reduce_curves=())
    assert all_reduce(8e6, inside, bare) == pytest.approx(1.75 * 8e6 / 300e9 + 2 * 7 * 2e-6)
    # a group spanning two domains is not what the table measured
    assert all_reduce(8e6, Group(16, 8), topo) == all_reduce(8e6, Group(16, 8), bare)
    assert tp_all_reduce(topo, 8, 8e6) == pytest.approx(18e-6 + 1.75 * 8e6 / 350e9)
    assert tp_all_reduce(bare, 8, 8e6) == pytest.approx(2e-6 * 2 * 3 + 1.75 * 8e6 / 300e9)


def test_a_clusters_domain_takes_the_curves_measured_over_its_own_link():
    from gpudesk.core.estimate.kernels import AllReduceCurve
    from gpudesk.core.estimate.topology import topology_of
    from gpudesk.core.estimate.types import Device, Link, NodeGroup

    curves = (AllReduceCurve(8, 18.0, 350.0, fabric="nvlink"), AllReduceCurve(8, 20.0, 2.0, fabric="pcie"))
    dev = Device("d", "D", all_reduce_curves=curves)
    nvlink = Link("nvlink4", "NVLink 4", "nvlink", 450.0)
    pcie = Link("pcie4", "PCIe 4", "pcie", 32.0)
    assert topology_of((NodeGroup(dev, 8, 1, intra=nvlink),)).all_reduce_curves == curves[:1]
    assert topology_of((NodeGroup(dev, 8, 1, intra=pcie),)).all_reduce_curves == curves[1:]
    other = Device("e", "E")
    assert topology_of((NodeGroup(dev, 8, 1, intra=nvlink), NodeGroup(other, 8, 1, intra=nvlink))).all_reduce_curves == ()


def test_every_all_reduce_curve_is_rebuilt_from_its_table():
    from gpudesk.core.kernel_tables import all_reduce_by_device, refit_all_reduce

    # 0.40: a custom all-reduce switches algorithm with the message size (one shot, then two), which one
    # latency-and-bandwidth line follows to within about 45% (B300's eight-GPU table: 0.38)
    _assert_refitted("allreduce", refit_all_reduce(), ("table", "gpus"), ("latency_us", "bus_gbs"), 0.40)
    h100 = all_reduce_by_device()["h100-sxm5-80gb"]
    assert {(c.kind, c.gpus) for c in h100} == {(k, g) for k in ("nccl", "custom") for g in (2, 4, 8)}


def test_eight_mi300x_over_infinity_fabric_all_reduce_as_rccl_tests_measured(catalogue):
    """AMD's published rccl-tests run on one 8-MI300X node (data/kernels/tables.toml): the domain of a
    cluster of MI300X joined by Infinity Fabric takes that curve, and a 16 MB all-reduce costs what the
    table printed (149.9 us) to within the line's fit, where the link's datasheet rate alone said less."""
    from gpudesk.core.estimate.comm import Group, all_reduce
    from gpudesk.core.kernel_tables import all_reduce_by_device

    (curve,) = all_reduce_by_device()["mi300x"]
    assert (curve.gpus, curve.kind, curve.fabric) == (8, "nccl", "infinity_fabric")
    assert curve.seconds(16777216) == pytest.approx(149.9e-6, rel=0.25)
    assert curve.seconds(8589934592) == pytest.approx(47617e-6, rel=0.15)  # the line fits all sizes to rms 0.18
    topo = _mi300x_node_topology(catalogue)
    assert topo.all_reduce_curves == (curve,)
    assert all_reduce(16777216, Group(8, 8), topo) == pytest.approx(curve.seconds(16777216))


def _mi300x_node_topology(catalogue):
    from gpudesk.core.catalogue.convert import device_from_row, link_from_row
    from gpudesk.core.estimate.topology import topology_of
    from gpudesk.core.estimate.types import NodeGroup

    device = device_from_row(catalogue.get("accelerators", "mi300x"))
    link = link_from_row(catalogue.get("interconnects", "amd-infinity-fabric-mi300"))
    return topology_of((NodeGroup(device, 8, 1, intra=link),))


# ----------------------------------------------------------------------------- decode attention
def test_decode_attention_streams_the_cache_and_pays_per_call_and_per_sequence():
    from gpudesk.core.estimate.kernels import DecodeAttentionCurve

    c = DecodeAttentionCurve("bf16", fixed_us=12.0, per_sequence_us=0.05, bandwidth_share=0.8, flops_share=0.5)
    # 64 sequences × 2,048 cached tokens × 8 KV heads × 128 × K and V × 2 bytes
    kv = 64 * 2048 * 8 * 128 * 2 * 2
    assert c.seconds(64, 2048, 64, 8, 128, 3.35e12, 989e12) == pytest.approx(12e-6 + 64 * 0.05e-6 + kv / (3.35e12 * 0.8))
    # an FP8 cache moves half the bytes
    f = DecodeAttentionCurve("fp8", 12.0, 0.05, 0.8, 0.5)
    assert f.seconds(64, 2048, 64, 8, 128, 3.35e12, 989e12) == pytest.approx(
        12e-6 + 64 * 0.05e-6 + kv / 2 / (3.35e12 * 0.8))
    # where the arithmetic (4 FLOPs per head, element and token) is slower than the stream, it sets the time
    slow = DecodeAttentionCurve("bf16", 0.0, 0.0, 0.8, 0.0001)
    flops = 4 * 64 * 2048 * 64 * 128
    assert slow.seconds(64, 2048, 64, 8, 128, 3.35e12, 989e12) == pytest.approx(flops / (989e12 * 0.0001))
    assert c.seconds(0, 2048, 64, 8, 128, 3.35e12, 989e12) == 0.0


def test_decoding_reads_its_cache_through_the_measured_attention_where_there_is_one():
    from dataclasses import replace

    from gpudesk.core.estimate import serving as SV
    from gpudesk.core.estimate.kernels import DecodeAttentionCurve
    from gpudesk.core.estimate.model import shape_of
    from gpudesk.core.estimate.types import Workload

    w = Workload(kind="infer", params=8e9, layers=32, d_model=4096, heads=32, kv_heads=8, ffn_dim=14336,
                 gated_ffn=True, vocab=128256, precision="bf16")
    s = shape_of(w)
    curve = DecodeAttentionCurve("bf16", 12.0, 0.05, 0.8, 1.0)
    e = SV.Engine(gemm=1e15, bandwidth=3e12, vector=1e14, kernel_s=0.0, launch_s=0.0, step_overhead_s=0.0,
                  bandwidth_raw=3.35e12, decode_curves=(curve,), peak16_flops=989e12)
    lay = SV.Layout(2, 1, 1)
    got = SV.decode_attention_s(w, s, e, lay, 64, 2048)
    assert got == pytest.approx(32 * curve.seconds(64, 2048, 16, 4, 128, 3.35e12, 989e12))
    # an FP8 cache has no curve here: the plain stream is used; so for latent attention and windows
    assert SV.decode_attention_s(replace(w, kv_bytes_per_element=1.0), s, e, lay, 64, 2048) is None
    assert SV.decode_attention_s(w, replace(s, attention="mla"), e, lay, 64, 2048) is None
    assert SV.decode_attention_s(w, replace(s, sliding_window=4096), e, lay, 64, 2048) is None
    assert SV.decode_attention_s(w, s, replace(e, decode_curves=()), lay, 64, 2048) is None


def test_every_decode_attention_curve_is_rebuilt_from_its_table():
    from gpudesk.core.kernel_tables import decode_by_device, refit_decode_attention

    fresh = refit_decode_attention()
    _assert_refitted("decode", fresh, ("table", "kv_dtype"),
                     ("fixed_us", "per_sequence_us", "bandwidth_share", "flops_share"), 0.25)
    # whose kernels and which device each curve belongs to come from its table's own entry
    tables = {t["id"]: t for t in read_tables(None, "attention")}
    for c in fresh:
        assert c["device"] == tables[c["table"]]["device"]
        assert c["server"] == tables[c["table"]].get("server", "vllm") and c["server"] in ("vllm", "trtllm")
    assert {c["server"] for c in fresh if c["device"] == "h200-sxm-141gb"} == {"vllm", "trtllm"}
    assert {c.kv_dtype for c in decode_by_device()["h100-sxm5-80gb"]} == {"bf16", "fp8"}
    assert {(c.server, c.kv_dtype) for c in decode_by_device()["h100-sxm5-80gb"]} == {
        ("vllm", "bf16"), ("vllm", "fp8"), ("trtllm", "bf16"), ("trtllm", "fp8")}
    assert {c.server for c in decode_by_device()["rtx-pro-6000-blackwell"]} == {"vllm"}


def test_each_server_decodes_with_its_own_measured_attention_kernels():
    from gpudesk.core.estimate.kernels import DecodeAttentionCurve
    from gpudesk.core.estimate.serving import attention_curves

    vllm = DecodeAttentionCurve("fp8", 14.0, 0.06, 0.73, 1.0, server="vllm")
    trt = DecodeAttentionCurve("fp8", 7.5, 0.003, 0.76, 1.0, server="trtllm")
    bf16 = DecodeAttentionCurve("bf16", 11.0, 0.03, 0.86, 1.0, server="vllm")
    both = (vllm, trt, bf16)
    assert attention_curves(both, "fp8", "trtllm") == (trt,)
    assert attention_curves(both, "fp8", "vllm") == (vllm,)
    assert attention_curves(both, "fp8", "sglang") == (vllm,)  # SGLang's kernels are closest to vLLM's
    assert set(attention_curves(both, "fp8", "tuned")) == {vllm, trt}  # the planner takes the faster
    assert set(attention_curves(both, "fp8", "")) == {vllm, trt}
    assert attention_curves((vllm, bf16), "fp8", "trtllm") == (vllm,)  # no TensorRT-LLM table: vLLM's
    assert attention_curves(both, "bf16", "trtllm") == (bf16,)
    assert attention_curves((trt,), "fp8", "llamacpp") == ()  # nothing timed for llama.cpp's kernels


def test_the_tuned_server_decodes_at_the_faster_measured_kernel():
    from gpudesk.core.estimate import serving as SV
    from gpudesk.core.estimate.kernels import DecodeAttentionCurve
    from gpudesk.core.estimate.model import shape_of
    from gpudesk.core.estimate.types import Workload

    slow = DecodeAttentionCurve("fp8", 14.0, 0.06, 0.56, 1.0, server="vllm")
    fast = DecodeAttentionCurve("fp8", 7.5, 0.003, 0.67, 1.0, server="trtllm")
    s = shape_of(Workload(kind="infer", model="llama-3.1-70b", params=70.6e9, layers=80, d_model=8192, heads=64,
                          kv_heads=8, ffn_dim=28672, precision="fp8"))
    e = SV.Engine(gemm=1e15, bandwidth=3e12, vector=3e13, kernel_s=3e-6, launch_s=5e-6, step_overhead_s=4e-4,
                  bandwidth_raw=4.8e12, decode_curves=(slow, fast), peak16_flops=989e12)
    lay = SV.Layout(tp=1, pp=1, replicas=1)
    w = Workload(kind="infer", model="llama-3.1-70b", precision="fp8", server="tuned")
    one = {c.server: c.seconds(64, 2048, 64, 8, 128, 4.8e12, 989e12) * 80 for c in (slow, fast)}
    assert SV.decode_attention_s(w, s, e, lay, 64, 2048) == pytest.approx(min(one.values()))
    assert SV.decode_attention_s(replace(w, server="vllm"), s, e, lay, 64, 2048) == pytest.approx(one["vllm"])
    assert SV.decode_attention_s(replace(w, server="trtllm"), s, e, lay, 64, 2048) == pytest.approx(one["trtllm"])


def test_an_estimate_says_where_its_kernel_times_come_from(catalogue):
    from gpudesk.core.resolve import estimate_scenario
    from gpudesk.core.scenario import parse_scenario

    def said(item):
        doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": item, "per_node": 8, "nodes": 1}],
               "workload": {"kind": "infer", "model": "llama-3.1-70b", "precision": "fp8", "concurrency": 32}}
        return "\n".join(estimate_scenario(parse_scenario(doc, "t"), catalogue).assumptions)

    h100 = said("h100-sxm5-80gb")
    assert "fitted to 1197 measured products (h100_sxm-vllm0.24.0-fp8" in h100
    assert "all-reduces timed by message size" in h100 and "(2, 4, 8 GPUs, AIConfigurator)" in h100
    # the tuned server takes the faster of TensorRT-LLM's and vLLM's measured decode attention
    assert "Decode attention timed from TensorRT-LLM's and vLLM's kernels measured on H100" in h100
    mi300x = said("mi300x")
    assert "no measured table: AMD Instinct CDNA 3's large-product share, 304 units" in mi300x
    # the all-reduce from AMD's published rccl-tests table, named as such; no decode-attention table
    assert "all-reduces timed by message size from RCCL measured on AMD Instinct MI300X (8 GPUs, rccl-tests" in mi300x
    assert "AIConfigurator" not in mi300x.split("all-reduces timed")[1].split(".")[0]
    assert "Decode attention timed" not in mi300x


def test_every_context_attention_curve_is_rebuilt_from_its_table():
    from gpudesk.core.kernel_tables import context_by_device, refit_context_attention

    _assert_refitted("context", refit_context_attention(), ("table",), ("efficiency", "seq_half", "fixed_us"), 0.2)
    h100 = context_by_device()["h100-sxm5-80gb"]
    assert 0.5 < h100.efficiency < 0.8 and "h100_sxm-vllm0.24.0-context" in h100.basis


def test_fp4_products_run_at_their_measured_share_where_a_table_exists(catalogue):
    """Block-scaled FP4 GEMMs reach far less of their peak than 16-bit ones do of theirs (B200: about
    half, against 78%); a device with a measured FP4 table is timed with it, one without keeps the
    16-bit share at its FP4 rate."""
    from gpudesk.core.catalogue.convert import device_from_row
    from gpudesk.core.estimate.compute import gemm_curve
    from gpudesk.core.estimate.profiles import matmul_share, profile_of
    from gpudesk.core.resolve import estimate_scenario
    from gpudesk.core.scenario import parse_scenario

    b200 = device_from_row(catalogue.get("accelerators", "b200-sxm-180gb"))
    fp4 = curves_by_device()["b200-sxm-180gb"]["fp4"]
    share, basis = matmul_share(b200, profile_of(b200), "fp4")
    assert share == pytest.approx(fp4.efficiency) and 0.4 < share < 0.7
    assert "measured FP4 products" in basis and "b200_sxm-vllm0.24.0-fp4" in basis
    assert share < matmul_share(b200, profile_of(b200), "bf16")[0] - 0.15
    assert gemm_curve(b200, profile_of(b200), "fp4") is fp4
    # int4 weight-only quantisation multiplies at 16 bits: the 16-bit table and share
    assert gemm_curve(b200, profile_of(b200), "int4") is curves_by_device()["b200-sxm-180gb"]["bf16"]
    rtx5090 = device_from_row(catalogue.get("accelerators", "rtx-5090"))
    assert rtx5090.peak_tflops.get("fp4") and "fp4" not in rtx5090.gemm_curves
    assert matmul_share(rtx5090, profile_of(rtx5090), "fp4") == matmul_share(rtx5090, profile_of(rtx5090), "bf16")

    def served(precision):
        doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": "b200-sxm-180gb", "per_node": 8, "nodes": 1}],
               "workload": {"kind": "infer", "model": "llama-3.1-70b", "precision": precision, "concurrency": 64,
                            "prompt_tokens": 8192, "output_tokens": 64}}
        return estimate_scenario(parse_scenario(doc, "t"), catalogue)

    fp4_run, fp8_run = served("fp4"), served("fp8")
    assert "fitted to 1197 measured products (b200_sxm-vllm0.24.0-fp4" in "\n".join(fp4_run.assumptions)
    # prompt processing is compute-bound: FP4's measured products are faster than FP8's, but by far less
    # than the datasheet's two times
    ratio = fp4_run.breakdown["prefill_tokens_per_s"] / fp8_run.breakdown["prefill_tokens_per_s"]
    assert 1.0 < ratio < 1.6


def test_fp8_products_run_at_the_devices_own_measured_share(catalogue):
    """FP8 GEMMs take the device's measured FP8 rate (MI300X and MI325X: AMD's MAF table, 1,273 and
    1,519 TFLOPS); a device measured only at 16 bits (MI355X) keeps its own 16-bit share at FP8, not
    its family's."""
    from gpudesk.core.catalogue.convert import device_from_row
    from gpudesk.core.estimate.profiles import matmul_share, profile_of

    def share(item, precision):
        device = device_from_row(catalogue.get("accelerators", item))
        return matmul_share(device, profile_of(device), precision)

    mi300x, basis = share("mi300x", "fp8")
    assert mi300x == pytest.approx(1273 / 2614.9) and basis.endswith("measured 1,273 of 2,615 TFLOPS")
    assert share("mi325x", "fp8")[0] == pytest.approx(1519 / 2614.9)
    assert share("mi300x", "bf16")[0] == pytest.approx(668.4 / 1307.4)  # Bekman's MAMF, not AMD's 708
    mi355x = device_from_row(catalogue.get("accelerators", "mi355x"))
    assert mi355x.achievable_tflops.get("bf16") and not mi355x.achievable_tflops.get("fp8")
    own16 = mi355x.achievable_tflops["bf16"] / mi355x.peak_tflops["bf16"]
    fp8, basis = share("mi355x", "fp8")
    assert fp8 == pytest.approx(own16) and fp8 != pytest.approx(profile_of(mi355x).matmul)
    assert "measured 1,565" in basis and basis.endswith("at 16 bits")
    # FP4 without a measured FP4 table: the device's own 16-bit share too (GB10: its MAMF, not its family's)
    gb10 = device_from_row(catalogue.get("accelerators", "gb10"))
    assert "fp4" not in gb10.gemm_curves and gb10.achievable_tflops.get("bf16")
    assert share("gb10", "fp4") == share("gb10", "bf16") and "measured" in share("gb10", "fp4")[1]
    # a family with a measured FP8 share of its own keeps it over a device's 16-bit one (Intel Gaudi 3's profile)
    from gpudesk.core.estimate.types import Device

    gaudi = Device("g", "Gaudi-like", "datacenter", vendor="Intel", architecture="Gaudi 3",
                   peak_tflops={"bf16": 1000.0, "fp8": 1000.0}, achievable_tflops={"bf16": 500.0})
    assert profile_of(gaudi).matmul_fp8 and matmul_share(gaudi, profile_of(gaudi), "fp8")[0] == profile_of(gaudi).matmul_fp8
    assert matmul_share(gaudi, profile_of(gaudi), "bf16")[0] == 0.5


# ----------------------------------------------------------------------------- a mixture of experts' operator
def test_every_moe_curve_is_rebuilt_from_its_table():
    """AIConfigurator's MoE tables (TensorRT-LLM's and vLLM's own operators on eight GPUs) are refitted to
    what curves.toml holds, each on its device's fitted GEMM curve, and every fit explains its table."""
    from gpudesk.core.kernel_tables import moe_by_device, read_moe_rows, read_tables, refit_moe

    fresh = refit_moe()
    _assert_refitted("moe", fresh, ("table", "dtype"), ("grouped", "bandwidth_share", "row_bytes", "fixed_us"), 0.55)
    def ids(c):
        return c["table"], c["dtype"], c["device"], c["server"]
    assert {ids(c) for c in fresh} == {ids(c) for c in _stored("moe")}
    tables = {t["id"]: t for t in read_tables(kind="moe")}
    assert set(tables) == {c["table"] for c in fresh} and len(tables) == 16
    # a format is taken where the device has a GEMM curve and a peak for it: no FP8 on the RTX PRO 6000
    assert tables["rtx_pro_6000_server-trtllm1.3.0rc20-moe"]["dtypes"] == ["bfloat16", "nvfp4"]
    # each table is taken whole on the sub-grid, every format its entry names
    assert {(t, d) for t, d in read_moe_rows()} == {(t["id"], d) for t in tables.values() for d in t["dtypes"]}
    h100 = {(c.server, c.dtype): c for c in moe_by_device()["h100-sxm5-80gb"]}
    assert set(h100) == {("trtllm", "bfloat16"), ("trtllm", "fp8"), ("vllm", "bfloat16"), ("vllm", "fp8_block")}
    # TensorRT-LLM's grouped products run nearer the dense curve than vLLM's Triton kernels on Hopper
    assert h100["vllm", "fp8_block"].grouped < h100["trtllm", "fp8"].grouped
    assert "h100_sxm-trtllm1.3.0rc20-moe" in h100["trtllm", "fp8"].basis


def test_a_moe_call_is_the_slower_of_its_products_and_weights_plus_its_rows_traffic():
    from gpudesk.core.estimate.kernels import GemmCurve, MoECurve, moe_terms

    gemm = GemmCurve(efficiency=0.8, bandwidth_share=0.9, fixed_us=5.0, k_half=0.0, tile_m=64, tile_n=128,
                     units=132)
    moe = MoECurve("fp8", "trtllm", grouped=0.5, bandwidth_share=0.8, row_bytes=10.0, fixed_us=30.0)
    peak, bw = 1979e12, 3.35e12
    # one token, 8 of 128 experts: the eight experts' weights stream; its rows' traffic is small
    products, weights, moved = moe_terms("fp8", 1, 4096, 1536, 8, 128, 1, 1, gemm, peak, bw)
    assert weights == pytest.approx(8 * 3 * 4096 * 1536 * 1.0 / bw)
    assert moved == pytest.approx(8 * 4096 / bw)
    assert moe.seconds(1, 4096, 1536, 8, 128, 1, 1, gemm, peak, bw) == pytest.approx(
        30e-6 + weights / 0.8 + 10.0 * moved)
    # 16,384 tokens: every expert is read, the products dominate at half the dense curve's rate
    products, weights, moved = moe_terms("fp8", 16384, 4096, 1536, 8, 128, 1, 1, gemm, peak, bw)
    assert weights == pytest.approx(128 * 3 * 4096 * 1536 / bw) and products / 0.5 > weights / 0.8
    assert moe.seconds(16384, 4096, 1536, 8, 128, 1, 1, gemm, peak, bw) == pytest.approx(
        30e-6 + products / 0.5 + 10.0 * moved)
    # tensor parallelism halves each expert's width; expert parallelism halves the experts and their rows
    tp2 = moe_terms("fp8", 16384, 4096, 1536, 8, 128, 2, 1, gemm, peak, bw)
    ep2 = moe_terms("fp8", 16384, 4096, 1536, 8, 128, 1, 2, gemm, peak, bw)
    assert tp2[1] == pytest.approx(weights / 2) and tp2[2] == pytest.approx(moved)
    assert ep2[1] == pytest.approx(weights / 2) and ep2[2] == pytest.approx(moved / 2)
    assert moe_terms("bfloat16", 1, 4096, 1536, 8, 128, 1, 1, gemm, peak, bw)[1] == pytest.approx(2 * 8 * 3 * 4096 * 1536 / bw)


def test_serving_a_mixture_of_experts_times_its_experts_with_the_measured_operator(catalogue):
    """The routed experts of a MoE model served on a GPU with MoE tables run as the measured operator
    does (slower than the grouped-GEMM model, the rows' traffic and a grouped kernel's rate counted);
    the assumptions say whose operator; a dense model and a precision without a table are unchanged."""
    from gpudesk.core.catalogue.convert import device_from_row
    from gpudesk.core.estimate.serving import moe_curves_for
    from gpudesk.core.resolve import estimate_scenario
    from gpudesk.core.scenario import parse_scenario

    def served(model, precision, server):
        doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": "h200-sxm-141gb", "per_node": 8, "nodes": 1}],
               "workload": {"kind": "infer", "model": model, "precision": precision, "concurrency": 512,
                            "prompt_tokens": 1000, "output_tokens": 1000, "server": server}}
        return estimate_scenario(parse_scenario(doc, "t"), catalogue)

    run = served("qwen3-235b-a22b", "fp8", "trtllm")
    text = "\n".join(run.assumptions)
    assert "routed experts timed from TensorRT-LLM's MoE operators measured on" in text
    operator = next(a for a in run.assumptions if "routed experts timed from" in a)
    assert "h200_sxm-trtllm1.3.0rc20-moe, fp8" in operator and "vLLM's" not in operator
    assert "routed experts timed from" not in "\n".join(served("llama-3.1-70b", "fp8", "trtllm").assumptions)
    assert "routed experts timed from" not in "\n".join(served("qwen3-235b-a22b", "int4", "trtllm").assumptions)
    # the tuned server takes the faster engine's operator; llama.cpp runs its own per-expert path
    h200 = device_from_row(catalogue.get("accelerators", "h200-sxm-141gb"))
    assert {c.server for c in moe_curves_for(h200.moe_curves, "fp8", "tuned")} == {"trtllm", "vllm"}
    assert {c.dtype for c in moe_curves_for(h200.moe_curves, "fp8", "sglang")} == {"fp8_block"}
    assert moe_curves_for(h200.moe_curves, "fp8", "llamacpp") == ()
    assert moe_curves_for(h200.moe_curves, "fp4", "trtllm") == ()  # Hopper has no NVFP4 table

    # the same question without the measured operator (the grouped-GEMM model alone) runs faster:
    # the operator adds its rows' traffic and a grouped kernel's rate; a dense model does not move
    import gpudesk.core.catalogue.convert as convert

    with_tables = run.tokens_per_s.likely
    dense = served("llama-3.1-70b", "fp8", "trtllm").tokens_per_s.likely
    original = convert.moe_by_device
    try:
        convert.moe_by_device = lambda: {}
        without = served("qwen3-235b-a22b", "fp8", "trtllm").tokens_per_s.likely
        assert served("llama-3.1-70b", "fp8", "trtllm").tokens_per_s.likely == pytest.approx(dense)
    finally:
        convert.moe_by_device = original
    assert 1.1 < without / with_tables < 2.5


def test_the_moe_operator_is_the_engines_format_and_is_split_as_the_layout_splits_the_experts():
    """moe_format, moe_curves_for, moe_layer_s and routed_params_per_token worked by hand on the toy
    decoder made a mixture of experts (4 layers, 1 of them dense; 8 experts of 16 wide, 2 routed a token)."""
    from dataclasses import replace

    from gpudesk.core.estimate import serving as SV
    from gpudesk.core.estimate.kernels import GemmCurve, MoECurve
    from gpudesk.core.estimate.types import Workload

    from .tiny_model import tiny_shape

    assert [SV.moe_format(p, "trtllm") for p in ("bf16", "fp16", "fp8", "fp4", "int4", "q4")] == [
        "bfloat16", "bfloat16", "fp8", "nvfp4", None, None]
    assert SV.moe_format("fp8", "vllm") == SV.moe_format("fp8", "sglang") == "fp8_block"
    trt8, trt16 = MoECurve("fp8", "trtllm", 0.8, 0.8, 10.0, 30.0), MoECurve("bfloat16", "trtllm", 0.8, 0.8, 10.0, 30.0)
    vllm8 = MoECurve("fp8_block", "vllm", 0.4, 0.8, 5.0, 40.0)
    curves = (trt8, trt16, vllm8)
    assert SV.moe_curves_for(curves, "fp8", "") == SV.moe_curves_for(curves, "fp8", "tuned") == (trt8, vllm8)
    assert SV.moe_curves_for(curves, "bf16", "trtllm") == (trt16,)
    assert SV.moe_curves_for(curves, "fp8", "sglang") == (vllm8,)
    assert SV.moe_curves_for(curves, "bf16", "vllm") == ()

    s = tiny_shape(experts=8, experts_active=2, expert_ffn_dim=16, dense_layers=1)
    assert SV.routed_params_per_token(s) == 3 * 2 * 3 * 8 * 16  # 3 MoE layers, 2 experts, gated 3·d·f
    assert SV.routed_params_per_token(tiny_shape()) == 0.0
    gemm = GemmCurve(efficiency=0.8, bandwidth_share=0.9, fixed_us=1.0, k_half=0.0, tile_m=64, tile_n=128, units=100,
                     measured=True)
    engine = SV.Engine(gemm=1e12, bandwidth=1e11, vector=1e12, kernel_s=1e-6, launch_s=5e-6, step_overhead_s=1e-3,
                       curve=gemm, peak_flops=2e12, bandwidth_raw=1e11, bandwidth_case=0.5, moe_curves=curves)
    w = Workload(kind="infer", params=1e9, precision="fp8", server="trtllm")
    tp8, dpa = SV.Layout(8, 1, 1), SV.Layout(8, 1, 1, True)
    # tensor parallel: every expert on each device, 1/8 of its width; data-parallel attention: 1/8 of the experts
    assert SV.moe_layer_s(w, s, engine, tp8, 64) == trt8.seconds(64, 8, 16, 2, 8, 8, 1, gemm, 2e12, 0.5e11)
    assert SV.moe_layer_s(w, s, engine, dpa, 64) == trt8.seconds(64, 8, 16, 2, 8, 1, 8, gemm, 2e12, 0.5e11)
    assert SV.moe_layer_s(w, s, engine, tp8, 64) != SV.moe_layer_s(w, s, engine, dpa, 64)
    tuned = replace(w, server="tuned")  # the faster engine's operator
    assert SV.moe_layer_s(tuned, s, engine, tp8, 64) == min(
        c.seconds(64, 8, 16, 2, 8, 8, 1, gemm, 2e12, 0.5e11) for c in (trt8, vllm8))
    assert SV.moe_layer_s(replace(w, server="vllm"), s, engine, tp8, 64) == vllm8.seconds(
        64, 8, 16, 2, 8, 8, 1, gemm, 2e12, 0.5e11)
    # none without a MoE model, a table, a measured GEMM curve, tokens or a timed format
    assert SV.moe_layer_s(w, tiny_shape(), engine, tp8, 64) is None
    assert SV.moe_layer_s(w, s, replace(engine, moe_curves=()), tp8, 64) is None
    assert SV.moe_layer_s(w, s, replace(engine, curve=replace(gemm, measured=False)), tp8, 64) is None
    assert SV.moe_layer_s(w, s, replace(engine, curve=None), tp8, 64) is None
    assert SV.moe_layer_s(w, s, engine, tp8, 0) is None
    assert SV.moe_layer_s(w, s, engine, tp8, 1) == trt8.seconds(1, 8, 16, 2, 8, 8, 1, gemm, 2e12, 0.5e11)
    assert SV.moe_layer_s(replace(w, precision="int4"), s, engine, tp8, 64) is None
    assert SV.moe_layer_s(replace(w, server="llamacpp"), s, engine, tp8, 64) is None


def test_a_moe_fit_recovers_the_curve_that_made_its_rows():
    from gpudesk.core.estimate.kernel_fit import fit_moe
    from gpudesk.core.estimate.kernels import GemmCurve, MoECurve, moe_terms

    gemm = GemmCurve(efficiency=0.8, bandwidth_share=0.9, fixed_us=5.0, k_half=64.0, tile_m=64, tile_n=128, units=132)
    truth = MoECurve("fp8", "trtllm", grouped=0.55, bandwidth_share=0.7, row_bytes=12.0, fixed_us=25.0)
    rows = []
    for tokens in (1, 4, 16, 64, 256, 1024, 4096, 16384):
        for hidden, inter, topk, experts in ((4096, 1536, 8, 128), (7168, 2048, 8, 256), (4096, 14336, 2, 8)):
            terms = moe_terms("fp8", tokens, hidden, inter, topk, experts, 1, 1, gemm, 1979e12, 3.35e12)
            rows.append(terms + (truth.scaled(*terms),))
    fitted, rms = fit_moe(rows, "fp8", "trtllm")
    assert (fitted.dtype, fitted.server) == ("fp8", "trtllm") and rms < 0.01
    assert fitted.grouped == pytest.approx(0.55, rel=0.03) and fitted.bandwidth_share == pytest.approx(0.7, rel=0.03)
    assert fitted.row_bytes == pytest.approx(12.0, rel=0.05) and fitted.fixed_us == pytest.approx(25.0, rel=0.1)
