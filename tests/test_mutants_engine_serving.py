"""The serving model and the inference estimate checked against hand calculations and physical
consequences, written to kill the mutants that survived mutation testing of
gpudesk/core/estimate/{serving,inference}.py (README "Mutation testing"). A decode step reads the
weights it touches and the running sequences' KV cache once; prompts are compute-bound; the running
batch is capped by the KV cache left after the weights. Shapes, engines and devices are hand-built
(no catalogue), so each expected figure is worked out in its comment."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate import inference as I
from gpudesk.core.estimate import serving as SV
from gpudesk.core.estimate.kernels import GemmCurve, shape_factor
from gpudesk.core.estimate.memory import capacity_gb, serving_weights_gb
from gpudesk.core.estimate.model import Shape, shape_of
from gpudesk.core.estimate.serving import Engine, Layout
from gpudesk.core.estimate.topology import Topology
from gpudesk.core.estimate.types import Calibration, Device, EstimateInput, Link, NodeGroup, Range, Workload

from .tiny_model import tiny_shape


def _shape(**kw) -> Shape:
    """4 layers × 8 wide, 2 query heads and 1 KV head of 4, gated MLP of 16, vocabulary 100: 1e9
    parameters stated; K and V of one token take 2 × 4 × 2 bytes × 4 layers = 64 bytes."""
    return tiny_shape(**kw)


S = _shape()
# 1 TFLOP/s of GEMMs, 100 GB/s, 1 TFLOP/s of vector work, 1 µs a kernel, 5 µs a launch, 1 ms a server step
ENGINE = Engine(gemm=1e12, bandwidth=1e11, vector=1e12, kernel_s=1e-6, launch_s=5e-6, step_overhead_s=1e-3)
# one node of 8 on 100 GB/s links with 1 µs a hop
T8 = Topology(8, 8, 1, 8, 100.0, 1e-6, 10.0, 5e-6, 1, "NVL", "", False, False)
W = Workload(kind="infer", params=1e9, precision="bf16")
ONE = Layout(1, 1, 1)
# the engine multiplies its physics by its fitted inference scale (constants.FITTED_SCALE): serve() takes it
# as its decode and prefill factors
SCALE = (C.FITTED_SCALE["inference"], C.FITTED_SCALE["inference"])

H100 = Device("h100", "H100 SXM", "datacenter", vendor="NVIDIA", memory_gb=80, mem_bandwidth_gbs=3350, tdp_w=700,
              peak_tflops={"bf16": 989, "fp16": 989, "fp8": 1979}, architecture="Hopper", form_factor="SXM")
RTX = Device("rtx", "RTX 4090", "consumer", vendor="NVIDIA", memory_gb=24, mem_bandwidth_gbs=1008, tdp_w=450,
             peak_tflops={"fp16": 165, "bf16": 165, "fp32": 82.6, "int8": 660}, architecture="Ada Lovelace")
NVLINK = Link("nvlink4", "NVLink 4", "nvlink", 450.0, 1.0)


# =========================================================================== serving.py: rates


def test_inference_runs_at_the_precisions_peak_or_the_nearest_the_device_has():
    assert SV.inference_peak(H100, "bf16") == (989, "")
    assert SV.inference_peak(H100, "fp16") == (989, "")
    assert SV.inference_peak(H100, "q4") == (989, "")  # weight-only formats compute in 16 bits
    assert SV.inference_peak(H100, "odd") == (989, "")
    assert SV.inference_peak(H100, "int8") == (1979, "H100 SXM: INT8 runs at its FP8 rate")
    assert SV.inference_peak(H100, "fp4") == (1979, "H100 SXM: FP4 runs at its FP8 rate")
    assert SV.inference_peak(replace(H100, peak_tflops={"fp4": 4500, "fp8": 2250}), "fp4") == (4500, "")
    assert SV.inference_peak(H100, "fp32") == (None, "the catalogue has no compute figure for H100 SXM at FP32")
    assert SV.inference_peak(replace(H100, peak_tflops={"fp32": 67, "tf32": 495}), "tf32") == (495, "")
    assert SV.inference_peak(replace(H100, peak_tflops={"fp32": 67}), "tf32") == \
        (67, "H100 SXM: TF32 runs at its FP32 rate")
    assert SV.inference_peak(replace(H100, peak_tflops={"bf16": 989}), "fp16") == \
        (989, "H100 SXM: FP16 runs at its BF16 rate")


def test_geforce_cards_multiply_fp16_with_fp16_accumulation_at_twice_the_stored_rate():
    gain = "RTX 4090: inference GEMMs with FP16 accumulation at twice the stored FP32-accumulate rate"
    assert SV.inference_peak(RTX, "fp16") == (330, gain)
    assert SV.inference_peak(RTX, "q4") == (330, gain)
    assert SV.inference_peak(RTX, "int8") == (660, "")  # INT8 matrix math is stored at its own rate
    assert SV.inference_peak(replace(RTX, peak_tflops={"fp16": 165}), "bf16") == \
        (330, "RTX 4090: BF16 runs at its FP16 rate; " + gain)
    assert SV.inference_peak(replace(RTX, device_class="laptop"), "fp16")[0] == 330
    assert SV.inference_peak(replace(RTX, device_class="workstation"), "fp16") == (165, "")
    # without tensor cores 16-bit math runs at the FP32 rate, and there is nothing to double
    pascal = Device("p", "GTX 1080", "consumer", vendor="NVIDIA", peak_tflops={"fp16": 0.14, "fp32": 8.9},
                    architecture="Pascal")
    assert SV.inference_peak(pascal, "fp16") == (8.9, "")
    assert SV.inference_peak(replace(pascal, peak_tflops={"fp16": 0.14}), "fp16") == (0.14, "")


def test_engine_rates_in_each_case():
    # H100 (Hopper profile: 80.3% of the matrix peak, 88% of the bandwidth, 3 µs a kernel, 5 µs a launch)
    e = SV.engine_rates(H100, "bf16", 1, 1.0)
    assert e.gemm == pytest.approx(989e12 * 0.803 * 0.85)  # prompts reach 85% of the large-GEMM rate
    assert e.bandwidth == pytest.approx(3350e9 * 0.88)
    assert e.vector == pytest.approx(989e12 / 8 / 2)  # no FP32 figure: an eighth of the 16-bit peak, FMA = 2
    assert (e.kernel_s, e.launch_s, e.step_overhead_s) == pytest.approx((3e-6, 5e-6, 1e-3))
    assert e.compute_known and e.tensor
    slow = SV.engine_rates(H100, "bf16", 0, 1.0)
    assert slow.gemm == pytest.approx(989e12 * 0.803 * 0.65)
    assert slow.bandwidth == pytest.approx(3350e9 * 0.88 * 0.85)
    assert (slow.kernel_s, slow.launch_s, slow.step_overhead_s) == pytest.approx((4.8e-6, 8e-6, 3e-3))
    fast = SV.engine_rates(H100, "bf16", 2, 1.0)
    assert fast.gemm == pytest.approx(989e12 * 0.803 * 0.95) and fast.bandwidth == pytest.approx(3350e9 * 0.88)
    assert (fast.kernel_s, fast.launch_s, fast.step_overhead_s) == pytest.approx((2.1e-6, 3.5e-6, 0.4e-3))
    # an assumed profile widens the bandwidth's ends, at most 8% above likely and never past 97%
    assert SV.engine_rates(H100, "bf16", 0, 1.25).bandwidth == pytest.approx(3350e9 * 0.88 * 0.85 / 1.25)
    assert SV.engine_rates(H100, "bf16", 2, 1.05).bandwidth == pytest.approx(3350e9 * 0.88 * 1.05)
    assert SV.engine_rates(H100, "bf16", 2, 1.25).bandwidth == pytest.approx(3350e9 * 0.88 * 1.08)
    apple = Device("m", "M2 Ultra", "desktop_ai", vendor="Apple", memory_gb=192, mem_bandwidth_gbs=800,
                   peak_tflops={"fp16": 27.2, "fp32": 27.2})
    assert SV.engine_rates(apple, "fp16", 2, 1.25).bandwidth == pytest.approx(800e9 * 0.82 * 1.08)
    assert SV.engine_rates(apple, "fp16", 1, 1.0).vector == pytest.approx(27.2e12 / 2)  # the FP32 rate, FMA = 2
    assert not SV.engine_rates(apple, "fp16", 1, 1.0).tensor
    # FP8 GEMMs at the FP8 peak and the profile's FP8 share
    assert SV.engine_rates(H100, "fp8", 1, 1.0).gemm == pytest.approx(1979e12 * 0.709 * 0.85)
    # no compute figure: decoding is timed by bandwidth alone
    blind = SV.engine_rates(replace(H100, peak_tflops={}), "bf16", 1, 1.0)
    assert (blind.gemm, blind.vector, blind.compute_known) == (0.0, 1.0, False)
    assert SV.engine_rates(replace(H100, mem_bandwidth_gbs=None), "bf16", 1, 1.0).bandwidth == 0.0


# =========================================================================== serving.py: a decode step


def test_a_decode_step_reads_the_weights_and_the_kv_cache_once():
    # 2 GB of weights and 100 tokens × 64 bytes of KV cache at 100 GB/s: 20.000064 ms; 4 layers × 14
    # kernels × 1 µs; the compute (2 GFLOPs at 2 TFLOP/s of vector units: 1 ms) hides under the reads
    step, bound, nbytes = SV.decode_step(W, S, ENGINE, T8, ONE, 1, 100, False)
    assert nbytes == 2e9 + 6400
    assert step == pytest.approx(2.0000064e9 / 1e11 + 4 * 14 * 1e-6)
    assert bound == "memory bandwidth"
    # a serving engine adds its scheduler's step
    assert SV.decode_step(W, S, ENGINE, T8, ONE, 1, 100, True)[0] == pytest.approx(step + 1e-3)
    # a longer context reads more cache: 8 sequences of 1,000 tokens add 512,000 bytes
    longer = SV.decode_step(W, S, ENGINE, T8, ONE, 8, 1000, False)
    assert longer[2] == 2e9 + 8 * 64_000 and longer[0] > step
    # quantised weights are read in fewer bytes
    assert SV.decode_step(replace(W, precision="fp8"), S, ENGINE, T8, ONE, 1, 100, False)[2] == 1e9 + 6400 / 2
    assert SV.decode_step(replace(W, weights_bytes=5e8), S, ENGINE, T8, ONE, 1, 100, False)[2] == 5e8 + 6400


def test_a_decode_step_launched_eagerly_pays_the_hosts_launch_rate():
    graphs = SV.decode_step(W, S, ENGINE, T8, ONE, 1, 100, False)[0]
    eager = SV.decode_step(replace(W, runtime="eager"), S, ENGINE, T8, ONE, 1, 100, False)[0]
    # 26 kernels a layer, each at the slower of 1 µs on the GPU and 5 µs on the host
    assert eager - graphs == pytest.approx(4 * 26 * 5e-6 - 4 * 14 * 1e-6)
    gpu_bound = replace(ENGINE, kernel_s=8e-6)
    assert SV.decode_step(replace(W, runtime="eager"), S, gpu_bound, T8, ONE, 1, 100, False)[0] == \
        pytest.approx(2.0000064e9 / 1e11 + 4 * 26 * 8e-6)
    # a server that replays its graph only for one sequence (llama.cpp) launches eagerly from two on
    capped = replace(W, server_graphs_max_batch=1)
    assert SV.decode_step(capped, S, ENGINE, T8, ONE, 1, 100, False)[0] == graphs
    two, two_graphs = (SV.decode_step(w, S, ENGINE, T8, ONE, 2, 100, False)[0] for w in (capped, W))
    assert two - two_graphs == pytest.approx(4 * 26 * 5e-6 - 4 * 14 * 1e-6)


def test_a_large_batch_makes_decoding_compute_bound():
    # 1,000 sequences: the products' 1,000 × 2 × 999,999,200 FLOPs at the faster of the vector units
    # (2 TFLOP/s) and the GEMM rate (1 TFLOP/s without a curve); then the attention kernel on its own,
    # after them: 1,000 × 6,400 bytes of cache at 100 GB/s (64 µs; its 1,000 × 4·4·8·100 FLOPs take 6.4 µs)
    step, bound, _ = SV.decode_step(W, S, ENGINE, T8, ONE, 1000, 100, False)
    flops = 1000 * 2 * 999_999_200
    attention = 1000 * 6400 / 1e11
    assert bound == "compute"
    assert step == pytest.approx(flops / 2e12 + attention + 4 * 14 * 1e-6)
    # with fast matrix units the GEMM rate takes over, and the step waits for its reads instead:
    # 2 GB of weights and 1,000 × 6,400 bytes of cache at 100 GB/s
    big = replace(ENGINE, gemm=1e15)
    fast = SV.decode_step(W, S, big, T8, ONE, 1000, 100, False)
    assert fast[1] == "memory bandwidth" and flops / 1e15 < 0.02
    assert fast[0] == pytest.approx((2e9 + 1000 * 6400) / 1e11 + 4 * 14e-6)
    # with a GEMM curve, the rate is the curve's compute-side shape factor of the step's four products
    # (1,000 rows: QKV 1000 × 16 × 8, output 1000 × 8 × 8, gate and up 1000 × 32 × 8, down 1000 × 8 × 16)
    curve = GemmCurve(efficiency=0.8, bandwidth_share=0.8, fixed_us=0.0, k_half=100.0, tile_m=64, tile_n=128,
                      units=100)
    curved = replace(big, curve=curve, peak_flops=1.25e15, bandwidth_raw=1e11)
    shapes = ((1000, 16, 8), (1000, 8, 8), (1000, 32, 8), (1000, 8, 16))
    rate = 1e15 * shape_factor(curve, shapes, 1.25e15, 1e11, "bf16", compute_only=True)
    assert rate < 2e12  # such narrow products fall back to the vector units
    assert SV.decode_step(W, S, curved, T8, ONE, 1000, 100, False)[0] == \
        pytest.approx(flops / 2e12 + attention + 4 * 14e-6)
    wide = _shape(d_model=4096, ffn_dim=14336, heads=32, kv_heads=8, head_dim=128)
    wshapes = ((1000, 6144, 4096), (1000, 4096, 4096), (1000, 28672, 4096), (1000, 4096, 14336))
    wflops = 1000 * SV.inference_flops_per_token(wide, 100)
    wrate = 1e15 * shape_factor(curve, wshapes, 1.25e15, 1e11, "bf16", compute_only=True)
    got = SV.decode_step(replace(W, params=wide.params), wide, curved, T8, ONE, 1000, 100, False)
    plain = SV.decode_step(replace(W, params=wide.params), wide, big, T8, ONE, 1000, 100, False)
    assert wrate < 1e15 and got[0] >= wflops / wrate  # the curve's shape factor slows the products
    assert got[0] >= plain[0]
    # TP2 halves each device's work and its products' widths (plus its all-reduces)
    tp2 = SV.decode_step(W, S, big, T8, Layout(2, 1, 1), 1000, 100, False)[0]
    assert tp2 > flops / 2 / 1e15
    # a device with no compute figure is timed by its reads alone
    blind = replace(ENGINE, compute_known=False)
    assert SV.decode_step(W, S, blind, T8, ONE, 1000, 100, False)[1] == "memory bandwidth"


def test_quantised_weights_are_unpacked_on_the_vector_units():
    slow_vector = replace(ENGINE, vector=1e10)
    w = replace(W, precision="q4")
    # 1e9 weights × 0.5625 bytes at 100 GB/s: 5.625 ms of reads; unpacking 6 operations a weight at
    # 10 G/s: 0.6 s; half of the shorter overlaps: 0.6 + 0.5 × 5.625e-3 (plus the 6,400-byte cache)
    step = SV.decode_step(w, S, slow_vector, T8, ONE, 1, 100, False)[0]
    reads = (0.5625e9 + 6400) / 1e11
    compute = (2 * 999_999_200 + 12_800) / 1e12  # at the GEMM rate (no curve), above the vector units' 2e10
    assert step == pytest.approx(max(0.6 + 0.5 * reads, compute) + 4 * 14e-6)
    # Q8 takes 3 operations a weight, INT8 3, FP4 4; FP8 is not unpacked
    for precision, ops, nbytes in (("q8", 3.0, 1.0625), ("int8", 3.0, 1.0625), ("fp4", 4.0, 0.5625)):
        reads = (nbytes * 1e9 + 6400) / 1e11
        unpack = 1e9 * ops / 1e10
        assert SV.decode_step(replace(W, precision=precision), S, slow_vector, T8, ONE, 1, 100, False)[0] == \
            pytest.approx(max(unpack + 0.5 * reads, compute) + 4 * 14e-6), precision
    fp8 = SV.decode_step(replace(W, precision="fp8"), S, slow_vector, T8, ONE, 1, 100, False)[0]
    assert fp8 == pytest.approx(max((1e9 + 3200) / 1e11, compute) + 4 * 14e-6)
    # with no compute figure nothing is unpacked: the reads alone
    blind = replace(slow_vector, compute_known=False)
    assert SV.decode_step(w, S, blind, T8, ONE, 1, 100, False)[0] == pytest.approx(
        (0.5625e9 + 6400) / 1e11 + 4 * 14e-6)


def test_moe_decoding_reads_only_the_experts_its_tokens_are_routed_to():
    # 4 experts of 384 parameters in 3 MoE layers (4,608), 5,392 dense, one routed expert a token: one
    # token touches 1/4 of the experts; two tokens 1 − (3/4)² = 7/16 of them
    moe = _shape(params=10_000.0, experts=4, experts_active=1, shared_experts=0, expert_ffn_dim=16, dense_layers=1)
    w = replace(W, params=10_000.0)
    assert SV.decode_step(w, moe, ENGINE, T8, ONE, 1, 1, False)[2] == pytest.approx(2 * (5392 + 4608 / 4) + 64)
    assert SV.decode_step(w, moe, ENGINE, T8, ONE, 2, 1, False)[2] == pytest.approx(2 * (5392 + 4608 * 7 / 16) + 128)
    # TP2 × PP2 split the reads four ways (the single KV head is not split by TP)
    assert SV.decode_step(w, moe, ENGINE, T8, Layout(2, 2, 1), 1, 1, False)[2] == \
        pytest.approx(2 * (5392 + 1152) / 4 + 32)


def test_the_weights_a_decode_step_reads_are_said_as_decode_step_counts_them():
    """The assumption gives what a step reads: a dense model's whole share; a mixture of experts' dense
    part and the experts its tokens select (the same sums as the test above), never the weights held."""
    moe = _shape(params=10_000.0, experts=4, experts_active=1, shared_experts=0, expert_ffn_dim=16, dense_layers=1)
    w = replace(W, params=10_000.0)
    assert SV.experts_touched(moe, 1) == 0.25 and SV.experts_touched(moe, 2) == pytest.approx(7 / 16)
    assert SV.experts_touched(S, 5) == 1.0  # dense
    assert SV.weights_read_gb(w, moe, ONE, 1) == pytest.approx(2 * (5392 + 4608 / 4) / 1e9, rel=1e-12, abs=0)
    assert SV.weights_read_gb(w, moe, ONE, 2) * 1e9 == pytest.approx(2 * (5392 + 4608 * 7 / 16))
    # data-parallel attention over 2: the dense part whole on each device, the touched experts halved
    assert SV.weights_read_gb(w, moe, Layout(2, 1, 1, dp_attention=True), 1) * 1e9 == \
        pytest.approx(2 * (5392 + 4608 / 4 / 2))
    # a pipeline of 2 runs 2 micro-batches of one sequence: each reads a quarter of the experts
    assert SV.weights_read_gb(w, moe, Layout(1, 2, 1), 2) * 1e9 == pytest.approx(2 * (5392 + 4608 / 4) / 2)
    held = serving_weights_gb(w, moe, 1, 1)
    m = SV.Serving(ONE, 2, "concurrency", 10, 0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, "memory bandwidth", held, 0.0)
    text = I._weights_read_text(w, moe, m)
    assert "44% of the experts at 2 sequence(s), 1 of 4 per token" in text
    assert f"{2 * (5392 + 4608 * 7 / 16) / 1e9:.2f} of the {held:.2f} GB a device holds" in text
    # a pipeline of 2 runs the 2 sequences as two micro-batches of one: a quarter of the experts each
    piped = replace(m, layout=Layout(1, 2, 1))
    assert "25% of the experts at 2 sequence(s)" in I._weights_read_text(w, moe, piped)
    dense = replace(m, weights_gb=2.0)
    assert I._weights_read_text(W, S, dense) == "the weights (2.00 GB per device)"


def test_tensor_and_pipeline_parallel_decoding_pays_for_its_messages():
    base = SV.decode_step(W, S, ENGINE, T8, Layout(2, 1, 1), 1, 100, False)[0]
    # TP2: half the weights (1 GB); two all-reduces a layer, each 2 hops × 1 µs (log2 2 = 1) plus
    # 2·½ × 1 × 8 × 2 bytes over 100 GB/s
    reads = (1e9 + 6400) / 1e11
    per_call = 2e-6 + 16 / 100e9
    assert base == pytest.approx(reads + 4 * 14e-6 + 2 * 4 * per_call)
    # TP4: 2 × log2(4) = 4 hops and 2·¾ of the message; a quarter of the weights
    tp4 = SV.decode_step(W, S, ENGINE, T8, Layout(4, 1, 1), 1, 100, False)[0]
    assert tp4 == pytest.approx((0.5e9 + 6400) / 1e11 + 4 * 14e-6 + 2 * 4 * (4e-6 + 1.5 * 16 / 100e9))
    # TP across two 4-device nodes: four times the messages' cost
    t4 = replace(T8, per_node=4, domain=4, nodes=2)
    tp8 = SV.decode_step(W, S, ENGINE, t4, Layout(8, 1, 1), 1, 100, False)[0]
    assert tp8 == pytest.approx((0.25e9 + 6400) / 1e11 + 4 * 14e-6 + 2 * 4 * (6e-6 + 1.75 * 16 / 100e9) * 4)
    # PP4: each device reads a quarter of the weights and of the cache
    assert SV.decode_step(W, S, ENGINE, T8, Layout(1, 4, 1), 1, 100, False)[2] == 0.5e9 + 1600
    # and a token crosses one hop (1 µs) at each boundary between stages: 1 for PP2, 3 for PP4
    still = replace(T8, intra_latency_s=0.0)
    for pp, hops in ((2, 1), (4, 3)):
        lay = Layout(1, pp, 1)
        assert SV.decode_step(W, S, ENGINE, T8, lay, 1, 100, False)[0] - \
            SV.decode_step(W, S, ENGINE, still, lay, 1, 100, False)[0] == pytest.approx(hops * 1e-6, rel=1e-6)


def test_pipeline_stages_do_not_shorten_one_sequences_decode_step():
    # a token passes stage 1 then stage 2: each reads its half (1 GB and 3,200 bytes of cache) in turn,
    # so PP2 takes as long as one device plus the 1 µs hop between the stages (pipelining helps
    # throughput with many sequences in flight, not one sequence's latency)
    pp2 = SV.decode_step(W, S, ENGINE, T8, Layout(1, 2, 1), 1, 100, False)[0]
    assert pp2 == pytest.approx(2 * (1e9 + 3200) / 1e11 + 4 * 14e-6 + 1e-6)
    one = _infer(LLAMA8, _groups())
    piped = _infer(replace(LLAMA8, tp=1, pp=8), _groups(per_node=8))
    assert piped.decode_tokens_per_s_per_user.likely <= one.decode_tokens_per_s_per_user.likely


def test_a_pipeline_with_micro_batches_in_flight_spreads_the_batchs_cache_reads_over_its_stages():
    # PP2, 4 sequences: two micro-batches of 2 in flight. Each stage reads its 1 GB of weights for
    # each micro-batch, and each sequence's cache on it once (3,200 bytes per sequence and stage);
    # a step is two stage times of one micro-batch: 2 × (1e9 + 2 × 3,200) / 1e11, plus the kernels
    # (4 × 14 µs) and the hop between the stages (1 µs)
    step, bound, read = SV.decode_step(W, S, ENGINE, T8, Layout(1, 2, 1), 4, 100, False)
    assert read == 1e9 + 6400 and bound == "memory bandwidth"
    assert step == pytest.approx(2 * (1e9 + 6400) / 1e11 + 4 * 14e-6 + 1e-6)
    # one micro-batch holding all 4 (no pipeline) reads all of each sequence's cache in the step
    assert SV.decode_step(W, S, ENGINE, T8, Layout(1, 1, 1), 4, 100, False)[2] == 2e9 + 4 * 6400
    # more sequences than stages: the cache reads are shared out, the weights read once a micro-batch
    many = SV.decode_step(W, S, ENGINE, T8, Layout(1, 4, 1), 64, 100, False)
    assert many[2] == pytest.approx(0.5e9 + 64 / 4 * 1600)


# =========================================================================== serving.py: prompts


def test_a_prompt_is_compute_bound_on_its_large_gemms():
    w = replace(W, prompt_tokens=100)
    # 100 tokens × (2 × 999,999,200 + 4·4·8·50) FLOPs at 1 TFLOP/s (no curve: the large-GEMM rate)
    flops = 100 * (2 * 999_999_200 + 6400)
    rate = 1e12
    total, per_token = SV.prefill(w, S, ENGINE, T8, ONE)
    assert per_token == pytest.approx(flops / rate / 100)
    assert total == pytest.approx(flops / rate + 4 * 14e-6)
    # weight-only 4-bit formats on matrix units reach 75% of that rate; without matrix units no penalty
    q4 = replace(w, precision="q4")
    assert SV.prefill(q4, S, ENGINE, T8, ONE)[1] == pytest.approx(flops / rate / 0.75 / 100)
    assert SV.prefill(replace(w, precision="q8"), S, ENGINE, T8, ONE)[1] == pytest.approx(flops / rate / 0.75 / 100)
    assert SV.prefill(q4, S, replace(ENGINE, tensor=False), T8, ONE)[1] == pytest.approx(flops / rate / 100)
    assert SV.prefill(replace(w, precision="fp4"), S, ENGINE, T8, ONE)[1] == pytest.approx(flops / rate / 100)
    # no compute figure: unknown, counted as nothing
    assert SV.prefill(w, S, replace(ENGINE, compute_known=False), T8, ONE) == (0.0, 0.0)


def test_prompts_waiting_together_fill_a_chunk_and_run_faster_per_token():
    curve = GemmCurve(efficiency=0.8, bandwidth_share=0.8, fixed_us=1.0, k_half=100.0, tile_m=64, tile_n=128,
                      units=100)
    big = _shape(d_model=4096, ffn_dim=14336, heads=32, kv_heads=8, head_dim=128)
    e = replace(ENGINE, gemm=1e15, curve=curve, peak_flops=1.25e15, bandwidth_raw=3e12)
    w = replace(W, params=big.params, prompt_tokens=128)
    alone = SV.prefill(w, big, e, T8, ONE)[1]
    waiting = SV.prefill(w, big, e, T8, ONE, waiting=64)[1]
    # one 128-token prompt: products of 128 rows; 64 of them: one 2,048-token chunk (the default)
    def rows(m):
        return ((m, 6144, 4096), (m, 4096, 4096), (m, 28672, 4096), (m, 4096, 14336))
    assert alone / waiting == pytest.approx(shape_factor(curve, rows(2048), 1.25e15, 3e12) /
                                            shape_factor(curve, rows(128), 1.25e15, 3e12))
    assert waiting < alone
    # a server's own chunk sets how many prompts share a step
    big_chunk = SV.prefill(replace(w, server_chunk_tokens=8192), big, e, T8, ONE, waiting=64)[1]
    assert big_chunk == pytest.approx(alone * shape_factor(curve, rows(128), 1.25e15, 3e12) /
                                      shape_factor(curve, rows(8192), 1.25e15, 3e12))


def test_a_short_prompt_on_a_fast_device_waits_for_the_weights():
    w = replace(W, prompt_tokens=0)  # one token at least
    fast = replace(ENGINE, gemm=1e18)
    total, per_token = SV.prefill(w, S, fast, T8, ONE)
    assert total == pytest.approx(2e9 / 1e11 + 4 * 14e-6)  # 2 GB of weights at 100 GB/s
    assert per_token == pytest.approx((2 * 999_999_200 + 4 * 4 * 8 * 0.5) / 1e18)
    # TP2 × PP2: the prompt passes the two stages in turn, each reading its quarter, so half the
    # weights' time in all; TP2 adds two all-reduces a layer, each two 1 µs hops and
    # 2·½ × 8 × 2 bytes a token over 100 GB/s (no measured all-reduce on this topology)
    total = SV.prefill(w, S, fast, T8, Layout(2, 2, 1))[0]
    assert total == pytest.approx(2e9 / 2 / 1e11 + 4 * 14e-6 + 2 * 4 * (2e-6 + 16 / 100e9), rel=1e-6)


def test_waiting_prompts_fill_a_pipeline_but_one_prompt_alone_visits_its_stages_in_turn():
    w = replace(W, prompt_tokens=100)
    alone, per_token = SV.prefill(w, S, ENGINE, T8, ONE, waiting=8)
    alone4, per_token4 = SV.prefill(w, S, ENGINE, T8, Layout(1, 4, 1), waiting=8)
    assert alone4 == pytest.approx(alone)  # the same layers, one stage after another
    assert per_token4 == pytest.approx(per_token / 4)  # four stages each on a chunk of its own


def test_long_prompts_run_in_chunks_that_each_launch_the_layers_kernels():
    fast = replace(ENGINE, gemm=1e22, bandwidth=1e18)
    t2048 = SV.prefill(replace(W, prompt_tokens=2048), S, fast, T8, ONE)[0]
    t2049 = SV.prefill(replace(W, prompt_tokens=2049), S, fast, T8, ONE)[0]
    assert t2048 == pytest.approx(4 * 14e-6, rel=1e-3)
    assert t2049 == pytest.approx(2 * 4 * 14e-6, rel=1e-3)  # a second chunk


def test_tensor_parallel_prompts_use_every_devices_matrix_units():
    w = replace(W, prompt_tokens=1000)
    big = _shape(d_model=4096, ffn_dim=14336, heads=32, kv_heads=8, head_dim=128)
    curve = GemmCurve(efficiency=0.8, bandwidth_share=0.8, fixed_us=1.0, k_half=100.0, tile_m=64, tile_n=128,
                      units=100)
    e = replace(ENGINE, curve=curve, peak_flops=1.25e12, bandwidth_raw=1e11)
    one = SV.prefill(w, big, e, T8, ONE)[1]
    two = SV.prefill(w, big, e, T8, Layout(2, 1, 1))[1]

    def factor(tp):
        return shape_factor(curve, ((1000, 6144 / tp, 4096), (1000, 4096, 4096 / tp), (1000, 28672 / tp, 4096),
                                    (1000, 4096, 14336 / tp)), 1.25e12, 1e11)
    # TP2 narrows each device's products (a lower shape factor) but doubles the matrix units at work; each
    # prompt token also crosses two all-reduces a layer inside a full 1,000-token chunk
    comm = 2 * 4 * SV.tp_all_reduce(T8, 2, 1000 * 4096 * 2) / 1000
    assert two == pytest.approx(one * factor(1) / (2 * factor(2)) + comm)
    assert comm > 0
    assert factor(2) < factor(1)


# =========================================================================== serving.py: capacity


def test_the_kv_cache_holds_what_memory_leaves_after_weights_and_the_prompt_workspace():
    dev = Device("d", "D", "datacenter", memory_gb=80)
    cap = capacity_gb(dev)  # 79.77 GB
    # 8e9 parameters in 16 bits: 16 GB; a 512-token prompt's workspace 512 × (32 + 32) × 2 bytes
    w = replace(W, params=8e9)
    fit, weights, per_seq = SV.kv_capacity(w, S, dev, ONE, 1000, False)
    assert weights == pytest.approx(16.0) and per_seq == pytest.approx(64_000 / 1e9)
    assert fit == int((cap - 16.0 - 512 * 64 * 2 / 1e9) // (64_000 / 1e9))
    # a server keeps 10% back
    assert SV.kv_capacity(w, S, dev, ONE, 1000, True)[0] == int((cap * 0.9 - 16.0 - 65_536 / 1e9) // 64e-6)
    # the workspace is capped at one 2,048-token chunk
    long = replace(w, prompt_tokens=10_000)
    assert SV.kv_capacity(long, S, dev, ONE, 1000, False)[0] == int((cap - 16.0 - 2048 * 128 / 1e9) // 64e-6)
    # weights that leave no room: nothing fits
    assert SV.kv_capacity(replace(W, params=40e9), S, dev, ONE, 1000, False) == (0, 80.0, 64e-6)
    # TP2 halves the weights (the single KV head is whole on each)
    assert SV.kv_capacity(w, S, dev, Layout(2, 1, 1), 1000, False)[1:] == pytest.approx((8.0, 64e-6))
    # no KV cache at all: no limit from it
    none = replace(S, kv_heads=0)
    assert SV.kv_capacity(w, none, dev, ONE, 1000, False)[0] == 10 ** 9


# =========================================================================== serving.py: the steady state


def _serve(w: Workload, lay: Layout = ONE, **kw) -> SV.Serving:
    return SV.serve(w, S, Device("d", "D", "datacenter", memory_gb=80), T8, lay, ENGINE, **kw)


def test_one_user_waits_for_the_prompt_then_each_token():
    w = replace(W, prompt_tokens=100, output_tokens=50)
    got = _serve(w)
    step = SV.decode_step(w, S, ENGINE, T8, ONE, 1, 125, False)[0]  # context 100 + 50/2
    pre, _ = SV.prefill(w, S, ENGINE, T8, ONE)
    assert (got.batch, got.limit, got.queued, got.bound) == (1, "concurrency", 0, "memory bandwidth")
    assert got.step_s == pytest.approx(step) and got.tpot_s == pytest.approx(step) and got.ttft_s == pre
    assert got.requests_per_s == pytest.approx(1 / (pre + 50 * step))
    assert got.output_tokens_per_s == pytest.approx(50 / (pre + 50 * step))
    assert got.round_s == pytest.approx(pre + 50 * step)
    assert got.weights_gb == pytest.approx(2.0) and got.kv_gb == pytest.approx(125 * 64 / 1e9)
    assert got.step_bytes == pytest.approx(2e9 + 125 * 64)
    assert got.prefill_s == pre and got.layout == ONE
    # calibration factors divide the times
    cal = _serve(w, decode_factor=2.0, prefill_factor=4.0)
    assert cal.step_s == pytest.approx(step / 2) and cal.prefill_s == pytest.approx(pre / 4)
    # no output still costs one step
    assert _serve(replace(w, output_tokens=0)).requests_per_s == pytest.approx(
        1 / (pre + SV.decode_step(w, S, ENGINE, T8, ONE, 1, 100, False)[0]))


def test_concurrent_users_batch_and_stretch_each_others_steps_with_their_prompts():
    w = replace(W, prompt_tokens=100, output_tokens=50, concurrency=8)
    got = _serve(w)
    step = SV.decode_step(w, S, ENGINE, T8, ONE, 8, 125, True)[0]
    _pre, per_token = SV.prefill(w, S, ENGINE, T8, ONE)
    assert (got.batch, got.limit, got.queued) == (8, "concurrency", 0)
    # R = 1 / (P·t_prefill + O·T/B); time per output token T + B·P·t_prefill/O; first token P·t + T
    rate = 1 / (100 * per_token + 50 * step / 8)
    assert got.requests_per_s == pytest.approx(rate)
    assert got.output_tokens_per_s == pytest.approx(50 * rate)
    assert got.tpot_s == pytest.approx(step + 8 * 100 * per_token / 50)
    assert got.ttft_s == pytest.approx(100 * per_token + step)
    assert got.round_s == pytest.approx(8 / rate)
    # two replicas share the users: 4 each, twice the cluster's rate
    two = _serve(w, Layout(1, 1, 2))
    assert two.batch == 4 and two.requests_per_s == pytest.approx(
        2 / (100 * per_token + 50 * SV.decode_step(w, S, ENGINE, T8, ONE, 4, 125, True)[0] / 4))
    # one user with a server's sequence cap set is timed as a server (its step overhead)
    capped = _serve(replace(w, concurrency=1, max_batch=4))
    assert capped.step_s == pytest.approx(SV.decode_step(w, S, ENGINE, T8, ONE, 1, 125, True)[0])


def test_users_beyond_the_running_batch_queue_for_their_first_token():
    w = replace(W, prompt_tokens=100, output_tokens=50, concurrency=10, max_batch=4)
    got = _serve(w)
    step = SV.decode_step(w, S, ENGINE, T8, ONE, 4, 125, True)[0]
    _pre, per_token = SV.prefill(w, S, ENGINE, T8, ONE)
    rate = 1 / (100 * per_token + 50 * step / 4)
    assert (got.batch, got.limit, got.queued) == (4, "max_batch", 6)
    # Little's law: 6 waiting requests at R requests a second wait 6/R
    assert got.ttft_s == pytest.approx(6 / rate + 100 * per_token + step)
    # the KV cache caps the batch: a 4 GiB device, (4.295 × 0.995 − 1.5) × 0.95 × 90% = 2.37 GB for the
    # server, less 2 GB of weights, holds 4 sequences of 125 tokens at 640 kB a token (a 20 kB element)
    dev = Device("d", "D", "datacenter", memory_gb=4)
    big_kv = replace(w, kv_bytes_per_element=2e4, max_batch=None)
    room = SV.kv_capacity(big_kv, S, dev, ONE, 125, True)[0]
    assert room == 4
    kv = SV.serve(big_kv, S, dev, T8, ONE, ENGINE)
    assert (kv.batch, kv.limit, kv.kv_capacity_sequences, kv.queued) == (room, "kv_cache", room, 10 - room)
    # a named server's documented cap (vLLM's 256 sequences) holds the rest back
    many = _serve(replace(w, concurrency=300, max_batch=None, server_max_batch=256))
    assert (many.batch, many.limit, many.queued) == (256, "max_batch", 44)
    # the tuned server runs as many as the KV cache holds
    tuned = _serve(replace(w, concurrency=300, max_batch=None))
    assert (tuned.batch, tuned.limit, tuned.queued) == (300, "concurrency", 0)
    # weights that do not fit: no steady state
    assert SV.serve(replace(w, params=40e9), S, Device("d", "D", memory_gb=80), T8, ONE, ENGINE) is None


def test_a_server_that_reserves_a_requests_whole_length_admits_fewer():
    # 100 in, 50 out: blocks as used hold 100 + 25 tokens a sequence on average, a whole-length
    # reservation (TensorRT-LLM's GUARANTEED_NO_EVICT) 150; decode still reads the average
    w = replace(W, prompt_tokens=100, output_tokens=50, concurrency=10 ** 6, kv_bytes_per_element=2e4)
    assert SV.held_context(w) == 125 and SV.held_context(replace(w, server_kv_reserve="whole")) == 150
    empty = replace(w, prompt_tokens=0, output_tokens=0)  # a sequence holds one token of each at least
    assert SV.held_context(empty) == 1.5 and SV.held_context(replace(empty, server_kv_reserve="whole")) == 2
    dev = Device("d", "D", "datacenter", memory_gb=40)
    used = SV.serve(w, S, dev, T8, ONE, ENGINE)
    whole = SV.serve(replace(w, server_kv_reserve="whole"), S, dev, T8, ONE, ENGINE)
    assert used.batch == SV.kv_capacity(w, S, dev, ONE, 125, True)[0]
    assert whole.batch == SV.kv_capacity(w, S, dev, ONE, 150, True)[0] < used.batch
    assert whole.step_s == pytest.approx(SV.decode_step(w, S, ENGINE, T8, ONE, whole.batch, 125, True)[0])
    assert SV.decode_only(replace(w, server_kv_reserve="whole"), S, dev, T8, ONE, ENGINE)[0] == whole.batch


def test_serving_layouts_and_the_smallest_replica():
    topo = replace(T8, devices=16, nodes=2)
    lays = SV.layouts(W, _shape(heads=8, layers=4), topo)
    assert [(x.tp, x.pp, x.replicas) for x in lays] == [
        (1, 1, 16), (1, 2, 8), (1, 4, 4), (2, 1, 8), (2, 2, 4), (2, 4, 2), (4, 1, 4), (4, 2, 2), (4, 4, 1),
        (8, 1, 2), (8, 2, 1)]  # TP8 × PP4 would need 32 devices
    assert [(x.tp, x.pp) for x in SV.layouts(W, _shape(heads=6, layers=2), T8)] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    pinned = SV.layouts(replace(W, tp=2, pp=3), S, T8)
    assert [(x.tp, x.pp, x.replicas) for x in pinned] == [(2, 3, 1)]
    assert [(x.tp, x.pp, x.replicas) for x in SV.layouts(replace(W, tp=4, pp=4), S, T8)] == []
    # 40e9 parameters (80 GB): two 80 GB devices are not enough with the runtime and a sequence, four are
    dev = Device("d", "D", "datacenter", memory_gb=80)
    w = replace(W, params=40e9)
    assert SV.smallest_replica(w, _shape(heads=8), dev, 8) == 2 or SV.smallest_replica(w, _shape(heads=8), dev, 8) == 4
    need = SV.smallest_replica(w, _shape(heads=8), dev, 8)
    assert SV.kv_capacity(w, _shape(heads=8), dev, Layout(need, 1, 1), 768, False)[0] >= 1
    assert SV.kv_capacity(w, _shape(heads=8), dev, Layout(need // 2, 1, 1), 768, False)[0] < 1
    # one device per node: the split goes to pipeline stages
    assert SV.smallest_replica(w, _shape(heads=8), dev, 1) == need
    # heads that do not divide: TP halves until they do (6 heads: TP2 on a 4-device node)
    assert SV.smallest_replica(w, _shape(heads=6), dev, 4) == need
    assert SV.smallest_replica(replace(W, params=1e15), S, dev, 8) is None
    assert SV.matmul_params(S) == 1e9 - 1600 + 800


# =========================================================================== inference.py

# Llama-3-8B-like: 32 layers × 4,096, 32 heads, 8 KV heads, SwiGLU 14,336, 128,256-token vocabulary
LLAMA8 = Workload(kind="infer", params=8e9, layers=32, d_model=4096, heads=32, kv_heads=8, ffn_dim=14336,
                  vocab=128256, prompt_tokens=512, output_tokens=256, concurrency=1)


def _groups(device: Device = H100, per_node: int = 1, nodes: int = 1) -> tuple[NodeGroup, ...]:
    return (NodeGroup(device, per_node=per_node, nodes=nodes, intra=NVLINK if per_node > 1 else None),)


def _infer(w: Workload = LLAMA8, groups: tuple[NodeGroup, ...] | None = None, calibrations=()):
    groups = groups or _groups()
    return I.infer(EstimateInput(w, groups, calibrations=calibrations), groups)


def test_a_replica_is_timed_on_the_device_with_least_memory_then_bandwidth():
    small = replace(H100, id="h80", name="H100 (less bandwidth)", mem_bandwidth_gbs=2000)
    assert I._device((NodeGroup(H100), NodeGroup(RTX))).name == "RTX 4090"
    assert I._device((NodeGroup(H100), NodeGroup(small))).name == "H100 (less bandwidth)"
    assert I._device((NodeGroup(replace(H100, mem_bandwidth_gbs=None)), NodeGroup(small))).mem_bandwidth_gbs is None


def test_calibrations_for_this_device_scale_decoding_and_prompts_and_are_noted():
    notes = []
    cal = (Calibration("h100", "infer_decode", 1.5, 3), Calibration("h100", "infer_prefill", 0.8, 2),
           Calibration("other", "infer_decode", 9.0, 1), Calibration("h100", "train", 9.0, 1))
    assert I._factors(EstimateInput(LLAMA8, _groups(), calibrations=cal), H100, notes) == (1.5, 0.8)
    assert [(n.code, n.text, dict(n.values)) for n in notes] == [
        ("calibrated", "Decoding calibrated on 3 of your measurements on H100 SXM (×1.50).", {"factor": 1.5}),
        ("calibrated", "Prompt processing calibrated on 2 of your measurements on H100 SXM (×0.80).", {"factor": 0.8})]
    assert I._factors(EstimateInput(LLAMA8, _groups()), H100, []) == (1.0, 1.0)
    plain, calibrated = _infer(), _infer(calibrations=cal[:2])
    # decoding 1.5 times as fast: the decode step is 1/1.5 as long; no known-error widening
    assert calibrated.step_time_s.likely == pytest.approx(plain.step_time_s.likely / 1.5)
    assert calibrated.prefill_tokens_per_s.likely == pytest.approx(plain.prefill_tokens_per_s.likely * 0.8)
    assert calibrated.step_time_s.high / calibrated.step_time_s.likely < math.exp(C.MODEL_ERROR["inference"])


def test_a_single_user_on_one_device_is_bandwidth_bound():
    est = _infer()
    e = SV.engine_rates(H100, "bf16", 1, 1.0)
    s = shape_of(LLAMA8)
    m = SV.serve(LLAMA8, s, H100, est_topo(), Layout(1, 1, 1), e, *SCALE)
    assert est.feasible and est.devices == 1
    assert est.plan == {"tp": 1, "pp": 1, "replicas": 1, "dp_attention": False, "label": "1 replica(s), each one device"}
    assert est.tokens_per_s.likely == pytest.approx(m.output_tokens_per_s)
    assert est.tpot_s.likely == pytest.approx(m.tpot_s) and est.ttft_s.likely == pytest.approx(m.ttft_s)
    assert est.decode_tokens_per_s_per_user.likely == pytest.approx(1 / m.tpot_s)
    assert est.decode_tokens_per_s_aggregate.likely == pytest.approx(1 / m.step_s)
    assert est.prefill_tokens_per_s.likely == pytest.approx(512 / m.prefill_s)
    assert est.time_s.likely == pytest.approx(m.round_s) and est.step_time_s.likely == pytest.approx(m.step_s)
    # 16 GB of weights and 640 tokens × 128 kB of cache at the datasheet's 3,350 GB/s is the fastest a
    # step can be: no end of the range is faster
    floor = (16e9 + 640 * 131072) / 3350e9
    assert m.step_bytes == pytest.approx(16e9 + 640 * 131072)
    assert 1 / est.decode_tokens_per_s_per_user.high >= floor * (1 - 1e-9)
    assert est.tpot_s.low >= floor * (1 - 1e-9) and 1 / est.decode_tokens_per_s_aggregate.high >= floor * (1 - 1e-9)
    # the known error widens the other ends to e^0.33
    assert est.tpot_s.high == pytest.approx(max(est.tpot_s.likely * math.exp(C.MODEL_ERROR["inference"]), est.tpot_s.high))
    assert est.tokens_per_s.low <= est.tokens_per_s.likely / math.exp(C.MODEL_ERROR["inference"]) * (1 + 1e-9)
    serving = dict(est.serving)
    assert isinstance(serving.pop("curve"), list)
    assert serving == {"running_batch": 1, "limit": "concurrency", "kv_capacity_sequences": m.kv_capacity_sequences,
                           "queued_per_replica": 0, "requests_per_s": m.requests_per_s, "bound": "memory bandwidth",
                           "concurrency": 1}
    assert est.breakdown == {"tp": 1, "pp": 1, "replicas": 1, "sequences_per_replica": 1,
                             "decode_bound": "memory bandwidth", "prefill_tokens_per_s": 512 / m.prefill_s,
                             "decode_step_s": m.step_s, "kv_capacity_sequences": m.kv_capacity_sequences}
    assert est.memory.fits and est.memory.per_device_gb == round(m.weights_gb + m.kv_gb, 3)
    assert est.memory.breakdown_gb == {"weights": round(m.weights_gb, 3), "kv_cache": round(m.kv_gb, 3)}
    assert est.memory.strategy == "1 replica(s), each one device"
    assert est.precision_used == "bf16" and est.peak_pflops == pytest.approx(0.989)
    assert est.notes == [] and est.reasons == []


def est_topo(per_node: int = 1):
    from gpudesk.core.estimate.topology import topology_of

    return topology_of(_groups(per_node=per_node))


def test_the_cases_order_the_range_and_widen_it_to_the_known_error():
    lo, mid, hi = I._range([3.0, 2.0, 1.0]).low, I._range([3.0, 2.0, 1.0]).likely, I._range([3.0, 2.0, 1.0]).high
    assert (lo, mid, hi) == (1.0, 2.0, 3.0)
    r = I._range([1.9, 2.0, 2.1], math.log(2.0))
    assert (r.low, r.likely, r.high) == pytest.approx((1.0, 2.0, 4.0))
    # a speed's high end and a time's low end stop where physics does (headroom × likely)
    assert I._capped(Range(1.0, 2.0, 10.0), 3.0) == Range(1.0, 2.0, 6.0)
    assert I._capped(Range(1.0, 2.0, 5.0), 3.0) == Range(1.0, 2.0, 5.0)
    assert I._capped(Range(1.0, 2.0, 5.0), 0.5) == Range(1.0, 2.0, 2.0)  # never below likely
    assert I._floored(Range(0.1, 2.0, 5.0), 4.0) == Range(0.5, 2.0, 5.0)
    assert I._floored(Range(1.0, 2.0, 5.0), 4.0) == Range(1.0, 2.0, 5.0)
    assert I._floored(Range(1.0, 2.0, 5.0), 0.5) == Range(2.0, 2.0, 5.0)  # never above likely


def test_layouts_are_described_in_words():
    assert I._layout_text(Layout(1, 1, 1)) == "1 replica(s), each one device"
    assert I._layout_text(Layout(4, 2, 2)) == "2 replica(s), each tensor parallel 4, pipeline 2"
    assert I._layout_text(Layout(1, 2, 3)) == "3 replica(s), each one device, pipeline 2"
    assert [I._limit_text(k) for k in ("concurrency", "kv_cache", "max_batch")] == \
        ["all of them fit", "the KV cache holds no more", "the server's sequence limit"]


def test_a_model_too_big_for_one_device_is_split_over_the_node():
    w = replace(LLAMA8, params=70e9, layers=80, d_model=8192, heads=64, kv_heads=8, ffn_dim=28672)
    est = _infer(w, _groups(per_node=8))
    assert est.feasible and est.plan["tp"] * est.plan["pp"] >= 2  # 140 GB of weights
    s, topo = shape_of(w), est_topo(8)
    e = SV.engine_rates(H100, "bf16", 1, 1.0)
    fitting = [SV.serve(w, s, H100, topo, lay, e, *SCALE) for lay in SV.layouts(w, s, topo)]
    best = max(x.output_tokens_per_s for x in fitting if x is not None)
    # the chosen layout is the fastest, or one of fewer devices within 2% of it
    assert est.tokens_per_s.likely >= best / 1.02
    assert SV.serve(w, s, H100, topo, Layout(1, 1, 8), e) is None


def test_a_model_that_fits_no_device_says_how_many_would_hold_it():
    w = replace(LLAMA8, params=70e9, layers=80, d_model=8192, heads=64, kv_heads=8, ffn_dim=28672)
    est = _infer(w)
    need = serving_weights_gb(w, shape_of(w), 1, 1)
    smallest = SV.smallest_replica(w, shape_of(w), H100, 1)
    assert not est.feasible and need == pytest.approx(140.0) and smallest == 2
    assert [(r.code, r.text) for r in est.reasons] == [
        ("weights_do_not_fit", "H100 SXM cannot serve this model: its weights need 140.0 GB per device even split 1 "
         "ways, with room for one sequence's KV cache, and each H100 SXM has 79.8 GB usable."),
        ("memory_min_devices", "At least 2 × H100 SXM would hold it.")]
    assert dict(est.reasons[0].values) == {"need_gb": need, "capacity_gb": capacity_gb(H100), "devices": 1,
                                           "min_devices": 2}
    assert est.memory.to_json() == {"per_device_gb": 140.0, "capacity_gb": round(capacity_gb(H100), 3), "fits": False,
                                    "min_devices": 2, "breakdown_gb": {"weights": 140.0}, "strategy": "one device"}
    assert est.tokens_per_s == Range.exact(0.0) and est.precision_used == "bf16"
    assert (est.kind, est.feasible, est.devices, est.time_s, est.mfu, est.energy_kwh, est.co2_kg) == \
        ("infer", False, 1, None, None, None, None)
    assert est.power_w == Range.exact(0.0) and est.cost.electricity_usd_per_run == Range.exact(0.0)
    assert est.cost.cloud_usd_per_run is None and est.cost.owned_usd_per_run is None
    assert est.peak_pflops == pytest.approx(0.989)
    # on 2 × 2 devices of 24 GB: split 2 ways it still needs 70 GB each; 8 devices would do
    rtx = _infer(w, _groups(RTX, per_node=2, nodes=2))
    assert rtx.reasons[0].text.startswith("4 × RTX 4090 cannot serve this model: its weights need 70.0 GB per device "
                                          "even split 2 ways")
    assert rtx.memory.strategy == "tensor parallel 2" and rtx.peak_pflops == pytest.approx(4 * 0.330)
    huge = _infer(replace(w, params=1e15))
    assert huge.reasons[1].text == "Even 1,024 × H100 SXM would not hold it." and huge.memory.min_devices is None
    assert huge.reasons[1].values["min_devices"] == 0


def test_what_the_catalogue_lacks_is_a_reason_or_a_note():
    blind = replace(H100, mem_bandwidth_gbs=None)
    est = _infer(groups=_groups(blind))
    assert not est.feasible and [(r.code, r.text) for r in est.reasons] == [
        ("no_bandwidth", "The catalogue has no memory bandwidth figure for H100 SXM, so decoding speed cannot be "
         "estimated.")]
    assert est.memory.to_json() == {"per_device_gb": 0.0, "capacity_gb": round(capacity_gb(H100), 3), "fits": False,
                                    "min_devices": None, "breakdown_gb": {}, "strategy": ""}
    assert est.tokens_per_s == Range.exact(0.0) and est.time_s is None
    assert (est.kind, est.devices, est.mfu, est.power_w, est.energy_kwh) == ("infer", 1, None, Range.exact(0.0), None)
    assert est.cost.electricity_usd_per_run == Range.exact(0.0) and est.cost.capex_usd is None
    # no compute figure: decoding is still timed, prompts are not
    no_peak = _infer(groups=_groups(replace(H100, peak_tflops={})))
    assert no_peak.feasible and no_peak.ttft_s is None and no_peak.prefill_tokens_per_s is None
    assert no_peak.breakdown["prefill_tokens_per_s"] is None and no_peak.peak_pflops == 0.0
    assert [n.code for n in no_peak.notes] == ["no_peak"]
    assert no_peak.notes[0].text == (
        "The catalogue has no compute figure for H100 SXM at BF16, so prompt processing and the time to first "
        "token cannot be estimated; decoding is timed by memory bandwidth alone and throughput leaves the prompts "
        "out.")
    fallback = _infer(replace(LLAMA8, precision="int8"))
    assert [(n.code, n.text) for n in fallback.notes] == [("peak_fallback", "H100 SXM: INT8 runs at its FP8 rate.")]
    mixed = _infer(groups=(NodeGroup(H100), NodeGroup(replace(H100, id="h2", name="H100 B", memory_gb=40))))
    assert mixed.notes[0].text == "Mixed hardware: each replica is timed on the slowest device (H100 B)."
    assert mixed.notes[0].code == "mixed_hardware"
    shaped = _infer(Workload(kind="infer", params=8e9))
    assert shaped.assumptions[0].startswith("Model shaped from 8B parameters as a modern decoder: 32 layers")


def test_the_assumptions_and_notes_say_how_requests_are_served():
    one = _infer()
    assert one.assumptions == [
        "Serving layout: 1 replica(s), each one device; the layout with the highest output throughput whose weights "
        "fit.",
        "Decoding reads the weights (16.00 GB per device) and each running sequence's KV cache once per "
        "step at 88% of 3,350 GB/s (NVIDIA Hopper (data centre)), plus 14 kernels per layer at 3 µs each, replayed as "
        "one CUDA graph.",
        "H100 SXM: 80 GiB (85.5 GB visible), less 1.5 GB for the runtime and 5% for allocator fragmentation = 79.8 GB "
        "usable.",
        "Matrix multiplications timed by shape (M, N, K: tiles, waves, short-K ramp, memory side): no measured table: "
        "NVIDIA Hopper (data centre)'s large-product share, assumed units, the fitted tables' median ramp."]
    q4 = _infer(replace(LLAMA8, precision="q4"))
    assert q4.assumptions[1].endswith("3 µs each, replayed as one CUDA graph; quantised weights are dequantised on "
                                      "the vector units.")
    eager = _infer(replace(LLAMA8, runtime="eager")).assumptions[1]
    assert eager.endswith("plus 26 kernels per layer, each launched from the host at 5 µs (no CUDA graph).")
    assert _infer(replace(LLAMA8, precision="int8")).assumptions[1].endswith("dequantised on the vector units.")
    many = _infer(replace(LLAMA8, concurrency=400))
    assert many.assumptions[-1] == (
        "Continuous batching (Orca, vLLM): 400 of 400 concurrent requests run per replica (all of them fit); prompts "
        "are processed in chunks of 2,048 tokens alongside decoding; the server (tuned) keeps 90% of memory for "
        "weights and KV cache and runs as many sequences as the KV cache holds.")
    assert many.serving["queued_per_replica"] == 0 and many.serving["concurrency"] == 400
    vllm = _infer(replace(LLAMA8, concurrency=400, server="vllm", server_max_batch=256, server_chunk_tokens=8192,
                          server_memory_share=0.9))
    assert vllm.assumptions[-1] == (
        "Continuous batching (Orca, vLLM): 256 of 400 concurrent requests run per replica (the server's sequence "
        "limit); prompts are processed in chunks of 8,192 tokens alongside decoding; the server (vllm) keeps 90% of "
        "memory for weights and KV cache and runs at most 256 sequences.")
    assert vllm.serving["queued_per_replica"] == 144
    note = vllm.notes[-1]
    assert (note.code, dict(note.values)) == ("queueing", {"running": 256, "queued": 144, "limit": "max_batch"})
    assert note.text == (f"Only 256 of 400 requests per replica run at once (the server's sequence limit); the rest "
                         f"wait, which lengthens the time to first token to {vllm.ttft_s.likely:,.2f} s. Throughput "
                         "is that of the running batch.")
    assert not [n for n in many.notes if n.code == "queueing"]
    capped = _infer(replace(LLAMA8, concurrency=8, max_batch=4))
    assert "runs at most 4 sequences." in capped.assumptions[-1]
    assert capped.decode_tokens_per_s_aggregate.likely == pytest.approx(4 / capped.step_time_s.likely)


def test_more_bandwidth_decodes_faster_and_a_longer_context_reads_more_cache():
    slow = _infer(groups=_groups(replace(H100, mem_bandwidth_gbs=2000)))
    fast = _infer()
    assert fast.decode_tokens_per_s_per_user.likely > slow.decode_tokens_per_s_per_user.likely
    longer = _infer(replace(LLAMA8, prompt_tokens=8192, concurrency=16))
    shorter = _infer(replace(LLAMA8, concurrency=16))
    assert longer.memory.breakdown_gb["kv_cache"] > shorter.memory.breakdown_gb["kv_cache"]
    assert longer.step_time_s.likely > shorter.step_time_s.likely


def test_one_user_cannot_receive_tokens_faster_than_one_user_decodes():
    # one user on 8 H100: requests run one at a time, so output is at most that user's decode speed
    est = _infer(groups=_groups(per_node=8))
    assert est.tokens_per_s.likely <= est.decode_tokens_per_s_per_user.likely


# =========================================================================== more of serving.py


def _peaks(**tflops) -> Device:
    return Device("p", "P", "datacenter", vendor="NVIDIA", architecture="Hopper", peak_tflops=tflops)


@pytest.mark.parametrize(("precision", "peaks", "used"), [
    # each precision falls back to the nearest rate the device states, in this order
    ("fp32", {"fp32": 60}, "fp32"),
    ("fp16", {"fp32": 60}, "fp32"),
    ("bf16", {"fp32": 60}, "fp32"),
    ("fp8", {"bf16": 900}, "bf16"), ("fp8", {"fp16": 800}, "fp16"), ("fp8", {"fp32": 60}, "fp32"),
    ("int8", {"fp16": 800}, "fp16"), ("int8", {"bf16": 900}, "bf16"), ("int8", {"fp32": 60}, "fp32"),
    ("int4", {"fp16": 800}, "fp16"), ("int4", {"bf16": 900}, "bf16"), ("int4", {"fp32": 60}, "fp32"),
    ("q4", {"fp16": 800}, "fp16"), ("q4", {"bf16": 900}, "bf16"), ("q4", {"fp32": 60}, "fp32"),
    ("q8", {"fp16": 800}, "fp16"), ("q8", {"bf16": 900}, "bf16"), ("q8", {"fp32": 60}, "fp32"),
    ("fp4", {"fp8": 2000}, "fp8"), ("fp4", {"fp16": 800}, "fp16"), ("fp4", {"bf16": 900}, "bf16"),
    ("fp4", {"fp32": 60}, "fp32"),
    ("odd", {"bf16": 900}, "bf16"), ("odd", {"fp32": 60}, "fp32"),
])
def test_each_precision_falls_back_to_the_nearest_stated_rate(precision, peaks, used):
    value, note = SV.inference_peak(_peaks(**peaks), precision)
    assert value == peaks[used]
    first = {"fp32": "fp32", "fp8": "fp8", "int8": "int8", "fp4": "fp4"}.get(precision, "fp16" if precision != "bf16"
                                                                           else "bf16")
    assert note == ("" if used == first else f"P: {precision.upper()} runs at its {used.upper()} rate")


def test_without_matrix_units_16_bit_math_runs_at_the_fp32_rate_and_fp8_doubles_on_geforce():
    apple = Device("m", "M", "desktop_ai", vendor="Apple", peak_tflops={"bf16": 20.0, "fp32": 10.0})
    assert SV.inference_peak(apple, "bf16") == (10.0, "")
    rtx_fp8 = replace(RTX, peak_tflops={"fp8": 330, "fp16": 165})
    assert SV.inference_peak(rtx_fp8, "fp8") == (
        660, "RTX 4090: inference GEMMs with FP16 accumulation at twice the stored FP32-accumulate rate")


def test_unpacking_splits_with_the_weights_and_tp_messages_grow_with_the_batch():
    slow_vector = replace(ENGINE, vector=1e10)
    # TP2: each device reads and unpacks half of the 1e9 4.5-bit weights (0.3 s of unpacking)
    step = SV.decode_step(replace(W, precision="q4"), S, slow_vector, T8, Layout(2, 1, 1), 1, 100, False)[0]
    reads = (0.5625e9 / 2 + 6400) / 1e11
    assert step == pytest.approx(0.3 + 0.5 * reads + 4 * 14e-6 + 2 * 4 * (2e-6 + 16 / 1e11))
    # TP8 inside one 8-device node: 2 × log2(8) hops and 2·7/8 of the message, no penalty for leaving the node
    tp8 = SV.decode_step(W, S, ENGINE, T8, Layout(8, 1, 1), 1, 100, False)[0]
    assert tp8 == pytest.approx((2.5e8 + 6400) / 1e11 + 4 * 14e-6 + 2 * 4 * (6e-6 + 1.75 * 16 / 1e11))
    # over a 1 MB/s link with no latency the messages are all that is left of the all-reduces:
    # 4 sequences × 8 wide × 2 bytes, 2·½ of it per call, 2 calls × 4 layers
    slow = replace(T8, intra_gbs=0.001, intra_latency_s=0.0)
    comm = 2 * 4 * (2 * 0.5 * 4 * 8 * 2 / 1e6)
    got = SV.decode_step(W, S, ENGINE, slow, Layout(2, 1, 1), 4, 100, False)[0]
    assert got == pytest.approx((1e9 + 4 * 6400) / 1e11 + 4 * 14e-6 + comm)
    # TP2 × PP2 pays the same all-reduces: a slow link lengthens its step by them alone
    fast_link = replace(slow, intra_gbs=1e12)
    got = SV.decode_step(W, S, ENGINE, slow, Layout(2, 2, 1), 1, 100, False)[0] - \
        SV.decode_step(W, S, ENGINE, fast_link, Layout(2, 2, 1), 1, 100, False)[0]
    assert got == pytest.approx(2 * 4 * (16 / 1e6), rel=1e-6)


def test_tensor_parallel_prompts_all_reduce_every_token_twice_a_layer():
    # 100 prompt tokens over a 1 MB/s link: 2 all-reduces × 4 layers × 2·½ × 100 × 8 × 2 bytes = 12.8 ms
    w = replace(W, prompt_tokens=100)
    slow = replace(T8, intra_gbs=0.001, intra_latency_s=0.0)
    fast = replace(ENGINE, gemm=1e22, bandwidth=1e18)
    total = SV.prefill(w, S, fast, slow, Layout(2, 1, 1))[0]
    assert total == pytest.approx(4 * 14e-6 + 2 * 4 * 1 * 100 * 8 * 2 / 1e6, rel=1e-6)
    assert SV.prefill(w, S, fast, slow, Layout(4, 1, 1))[0] == pytest.approx(4 * 14e-6 + 2 * 4 * 1.5 * 1600 / 1e6,
                                                                           rel=1e-6)


def test_even_an_empty_prompt_keeps_one_tokens_workspace():
    dev = Device("d", "D", "datacenter", memory_gb=80)
    # a cache of 0.032 bytes a token (0.001-byte elements): 32 bytes a sequence of 1,000 tokens; the
    # workspace of one token (4·8 + 2·16) × 2 = 128 bytes is worth 4 sequences
    w = replace(W, params=8e9, prompt_tokens=0, kv_bytes_per_element=0.001)
    fit = SV.kv_capacity(w, S, dev, ONE, 1000, False)[0]
    assert fit == int((capacity_gb(dev) - 16.0 - 128e-9) // 32e-9)


def test_two_users_make_a_server_and_one_sequence_is_enough_to_serve():
    w = replace(W, prompt_tokens=100, output_tokens=50)
    two = _serve(replace(w, concurrency=2))
    assert two.batch == 2 and two.step_s == pytest.approx(SV.decode_step(w, S, ENGINE, T8, ONE, 2, 125, True)[0])
    # a 4 GiB device (2.63 GB usable) with 2 GB of weights holds one 125-token sequence of 0.48 GB
    dev = Device("d", "D", "datacenter", memory_gb=4)
    one = SV.serve(replace(w, kv_bytes_per_element=1.2e5), S, dev, T8, ONE, ENGINE)
    assert (one.batch, one.kv_capacity_sequences) == (1, 1)


def test_queued_users_and_prompt_calibration_in_the_steady_state():
    w = replace(W, prompt_tokens=100, output_tokens=50)
    step1 = SV.decode_step(w, S, ENGINE, T8, ONE, 1, 125, True)[0]
    _pre, per_token = SV.prefill(w, S, ENGINE, T8, ONE)
    # a server running one sequence at a time with 4 users: 3 wait a request each
    one_at_a_time = _serve(replace(w, concurrency=4, max_batch=1))
    rate = 1 / (100 * per_token + 50 * step1)
    assert (one_at_a_time.batch, one_at_a_time.queued) == (1, 3)
    assert one_at_a_time.ttft_s == pytest.approx(3 / rate + 100 * per_token + step1)
    # one user waiting is a wait too
    five = _serve(replace(w, concurrency=5, max_batch=4))
    step4 = SV.decode_step(w, S, ENGINE, T8, ONE, 4, 125, True)[0]
    rate4 = 1 / (100 * per_token + 50 * step4 / 4)
    assert five.queued == 1 and five.ttft_s == pytest.approx(1 / rate4 + 100 * per_token + step4)
    # a prompt-processing factor of 4 makes every prompt token four times as quick
    eight = _serve(replace(w, concurrency=8), prefill_factor=4.0)
    assert eight.prefill_token_s == pytest.approx(per_token / 4)
    assert eight.kv_gb == pytest.approx(8 * 125 * 64 / 1e9)  # every running sequence's cache


def test_layouts_reach_tp16_and_pp32_where_there_is_room():
    wide = Topology(64, 16, 4, 16, 100.0, 1e-6, 10.0, 5e-6, 1, "NVL", "IB", False, False)
    lays = SV.layouts(W, _shape(heads=16, layers=32), wide)
    assert {x.tp for x in lays} == {1, 2, 4, 8, 16}
    assert [x.pp for x in lays if x.tp == 1] == [1, 2, 4, 8, 16, 32]
    assert [x.pp for x in lays if x.tp == 16] == [1, 2, 4]  # 16 × 4 = 64 devices


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
def test_the_smallest_replica_is_the_fewest_devices_whose_weights_fit(n):
    # 35e9 × n parameters: 70 GB of 16-bit weights a device on n devices, 140 GB on n/2
    dev = Device("d", "D", "datacenter", memory_gb=80)
    assert SV.smallest_replica(replace(W, params=35e9 * n), S, dev, 8) == n


def test_the_smallest_replica_holds_one_whole_request_in_its_cache():
    dev = Device("d", "D", "datacenter", memory_gb=80)
    w = replace(W, params=35e9)  # 70 GB of weights, 9.77 GB left on one device
    # 768 tokens (512 prompt + 256 output) × 32 × 2e5-byte elements = 4.9 GB: exactly one fits on one device
    assert SV.kv_capacity(replace(w, kv_bytes_per_element=2e5), S, dev, ONE, 768, False)[0] == 1
    assert SV.smallest_replica(replace(w, kv_bytes_per_element=2e5), S, dev, 8) == 1
    # 6e5-byte elements: 14.7 GB for the whole request does not fit one device (a third of it would)
    assert SV.smallest_replica(replace(w, kv_bytes_per_element=6e5), S, dev, 8) == 2
    # across one-device nodes the two stages each hold half the layers' cache: 140 GB of weights and a
    # 12.3 GB request (5e5-byte elements) fit 2 devices as PP2 (6.1 GB of cache each), not as TP2 (the
    # single KV head is not split by TP)
    assert SV.smallest_replica(replace(W, params=70e9, kv_bytes_per_element=5e5), S, dev, 1) == 2
    # 5 heads on 8-device nodes: TP halves until it divides them (8, 4, 2, 1)
    assert SV.smallest_replica(replace(W, params=70e9), _shape(heads=5), dev, 8) == 2


def test_a_node_of_six_devices_can_hold_a_replica():
    # 280e9 parameters (560 GB in 16 bits) with 12 heads on nodes of 6 × 80 GB: TP6 × PP2 = 12 devices
    # hold 46.7 GB of weights each
    dev = Device("d", "D", "datacenter", memory_gb=80)
    assert SV.kv_capacity(replace(W, params=280e9), _shape(heads=12), dev, Layout(6, 2, 1), 768, False)[0] >= 1
    assert SV.smallest_replica(replace(W, params=280e9), _shape(heads=12), dev, 6) is not None


# =========================================================================== more of inference.py


def test_a_device_of_unknown_bandwidth_counts_as_the_slowest():
    unknown = replace(H100, id="u", name="unknown bandwidth", mem_bandwidth_gbs=None)
    slow = replace(H100, id="s", name="slow", mem_bandwidth_gbs=0.5)
    assert I._device((NodeGroup(slow), NodeGroup(unknown))).name == "unknown bandwidth"


def test_calibrations_of_other_devices_are_skipped_not_the_end_of_the_list():
    cal = (Calibration("other", "infer_decode", 9.0, 1), Calibration("h100", "infer_decode", 1.5, 3))
    assert I._factors(EstimateInput(LLAMA8, _groups(), calibrations=cal), H100, []) == (1.5, 1.0)


def test_a_layout_with_more_devices_per_replica_must_be_over_2_percent_faster(monkeypatch):
    lays = [Layout(1, 8, 1), Layout(1, 1, 8), Layout(2, 1, 4), Layout(4, 1, 2), Layout(8, 1, 1)]
    speed = {lays[0]: None, lays[1]: 100.0, lays[2]: 101.9, lays[3]: 104.1, lays[4]: 104.5}

    def fake(w, s, device, topo, lay, e, *factors):
        if speed[lay] is None:
            return None
        return SV.Serving(lay, 1, "concurrency", 1, 0, 1.0, 1.0, 0.0, 1.0, speed[lay], 1.0, 1.0, 1.0,
                          "memory bandwidth", 1.0, 0.0)

    monkeypatch.setattr(I, "layouts", lambda *a: lays)
    monkeypatch.setattr(I, "serve", fake)
    # TP2 is 1.9% faster than one device: not enough; TP4 4.1%: chosen; TP8 only 0.4% more than TP4
    got = I._best(EstimateInput(LLAMA8, _groups()), shape_of(LLAMA8), H100, est_topo(), (1.0, 1.0))
    assert got.layout == Layout(4, 1, 2)


def test_a_failed_estimate_reports_the_split_the_node_allows_and_its_own_numbers():
    w = replace(LLAMA8, params=70.1234567e9, layers=80, d_model=8192, heads=64, kv_heads=8, ffn_dim=28672)
    est = _infer(w)
    need = serving_weights_gb(w, shape_of(w), 1, 1)  # 140.2469 GB
    assert est.memory.per_device_gb == round(need, 3) == 140.247
    assert est.memory.breakdown_gb == {"weights": 140.247}
    assert (est.notes, est.assumptions, est.feasible) == ([], [], False)
    # 16 devices a node: split 8 ways at most
    big = replace(w, params=1e15)
    sixteen = _infer(big, _groups(per_node=16))
    assert "even split 8 ways" in sixteen.reasons[0].text and sixteen.memory.strategy == "tensor parallel 8"
    assert sixteen.reasons[0].values["min_devices"] == 0
    # two devices are counted in words
    assert _infer(big, _groups(per_node=2)).reasons[0].text.startswith("2 × H100 SXM cannot serve this model")
    # the peak is the precision's: INT8 runs at the FP8 rate; no compute figure counts nothing
    assert _infer(replace(big, precision="int8")).peak_pflops == pytest.approx(1.979)
    assert _infer(big, _groups(replace(H100, peak_tflops={}))).peak_pflops == 0.0
    # the notes gathered before the failure stay with it
    assert [n.code for n in _infer(replace(big, precision="int8")).notes] == ["peak_fallback"]


def test_findings_of_inference_carry_their_values():
    est = _infer(groups=(NodeGroup(H100), NodeGroup(replace(H100, id="h2", name="H100 B", memory_gb=40))))
    assert est.notes[0].values == {}
    blind = _infer(groups=_groups(replace(H100, mem_bandwidth_gbs=None)))
    assert blind.reasons[0].values == {"device": "H100 SXM"}
    assert (blind.kind, blind.feasible, blind.devices, blind.notes, blind.assumptions) == ("infer", False, 1, [], [])
    assert blind.power_w == Range.exact(0.0) and blind.cost.electricity_usd_per_run == Range.exact(0.0)
    no_peak = _infer(groups=_groups(replace(H100, peak_tflops={})))
    assert no_peak.notes[0].values == {"device": "H100 SXM"}
    # a device with neither figure: the reason and the note both
    blank = _infer(groups=_groups(replace(H100, peak_tflops={}, mem_bandwidth_gbs=None)))
    assert [r.code for r in blank.reasons] == ["no_bandwidth"] and [n.code for n in blank.notes] == ["no_peak"]
    assert _infer(replace(LLAMA8, precision="int8")).notes[0].values == {}


def test_an_assumed_profile_takes_its_range_from_the_pessimistic_and_optimistic_cases():
    # a device of no known family (spread 1.3): its pessimistic case reads memory at 0.85/1.3 of likely,
    # slower than the known error alone would allow
    dev = Device("g", "G", "datacenter", memory_gb=80, mem_bandwidth_gbs=2000, peak_tflops={"bf16": 400})
    est = _infer(groups=_groups(dev))
    s, topo = shape_of(LLAMA8), est_topo()
    slow = SV.serve(LLAMA8, s, dev, topo, Layout(1, 1, 1), SV.engine_rates(dev, "bf16", 0, 1.3), *SCALE)
    known = math.exp(C.MODEL_ERROR["inference"])
    assert slow.output_tokens_per_s < est.tokens_per_s.likely
    # the low end is the slower of the pessimistic case and the known error
    assert est.tokens_per_s.low == pytest.approx(min(slow.output_tokens_per_s, est.tokens_per_s.likely / known))
    assert est.step_time_s.high == pytest.approx(max(slow.step_s, est.step_time_s.likely * known))


def test_every_range_of_an_inference_estimate_is_at_least_the_known_error_wide():
    est = _infer()
    spread = math.exp(C.MODEL_ERROR["inference"])
    for r in (est.time_s, est.ttft_s, est.step_time_s, est.tpot_s):
        assert r.high >= r.likely * spread * (1 - 1e-9)
    for r in (est.prefill_tokens_per_s, est.decode_tokens_per_s_per_user, est.decode_tokens_per_s_aggregate,
              est.tokens_per_s):
        assert r.low <= r.likely / spread * (1 + 1e-9)
    # on a 1,000 GB/s device the fast ends stop at the datasheet's bandwidth: a step reads 16 GB of weights
    # and 640 tokens × 128 kB of cache, 16.1 ms at best (e^0.33 below the likely 19.6 ms would be 14.1)
    slow = _infer(groups=_groups(replace(H100, mem_bandwidth_gbs=1000)))
    floor = (16e9 + 640 * 131072) / 1000e9
    assert slow.tpot_s.likely / math.exp(C.MODEL_ERROR["inference"]) < floor
    assert slow.decode_tokens_per_s_per_user.high == pytest.approx(1 / floor)
    assert slow.decode_tokens_per_s_aggregate.high == pytest.approx(1 / floor)
    assert slow.tpot_s.low == pytest.approx(floor)
    assert (est.kind, est.power_w, est.cost.electricity_usd_per_run) == ("infer", Range.exact(0.0), Range.exact(0.0))
    assert est.cost.cloud_usd_per_run is None


def test_an_inference_estimate_reports_memory_peaks_and_batches_as_they_are():
    w = replace(LLAMA8, params=8.0312345e9)  # 16.062469 GB of weights
    est = _infer(w)
    assert est.memory.breakdown_gb["weights"] == 16.062
    assert est.memory.capacity_gb == round(capacity_gb(H100), 3)
    # 8 users on two single-device replicas: 8 sequences run in each decode step
    pinned = _infer(replace(LLAMA8, concurrency=8, tp=1, pp=1), _groups(per_node=2))
    assert pinned.plan["replicas"] == 2 and pinned.serving["running_batch"] == 4
    assert pinned.decode_tokens_per_s_aggregate.likely == pytest.approx(8 / pinned.step_time_s.likely)
    assert pinned.peak_pflops == pytest.approx(2 * 0.989)
    # a one-token prompt
    one = _infer(replace(LLAMA8, prompt_tokens=1))
    assert one.breakdown["prefill_tokens_per_s"] == pytest.approx(one.prefill_tokens_per_s.likely)
    e = SV.engine_rates(H100, "bf16", 1, 1.0)
    pre = SV.prefill(replace(LLAMA8, prompt_tokens=1), shape_of(LLAMA8), e, est_topo(), Layout(1, 1, 1))[0]
    assert one.prefill_tokens_per_s.likely == pytest.approx(SCALE[1] / pre)


def test_two_users_are_served_in_a_batch_and_one_waiting_user_is_noted():
    assert I._layout_text(Layout(2, 1, 1)) == "1 replica(s), each tensor parallel 2"
    two = _infer(replace(LLAMA8, concurrency=2))
    assert two.assumptions[-1].startswith("Continuous batching (Orca, vLLM): 2 of 2 concurrent requests run per "
                                          "replica (all of them fit);")
    five = _infer(replace(LLAMA8, concurrency=5, max_batch=4))
    assert [n.code for n in five.notes] == ["queueing"] and five.notes[0].values["queued"] == 1


# =========================================================================== data-parallel attention


def _moe(**kw) -> Shape:
    """The tiny decoder with 4 routed experts of width 16 (1 active) in every layer: each expert holds
    3 × 8 × 16 = 384 parameters a layer, 4 × 4 × 384 = 6,144 in all, of the 1e9 stated."""
    return _shape(**{"experts": 4, "experts_active": 1, "expert_ffn_dim": 16, "dense_layers": 0, **kw})


def test_data_parallel_attention_is_tried_for_a_mixture_of_experts_unless_pinned():
    moe, w = _moe(), replace(W, kind="infer")
    got = SV.layouts(w, moe, T8)
    assert Layout(2, 1, 4, True) in got and Layout(2, 1, 4) in got and Layout(2, 2, 2, True) in got
    assert not any(lay.dp_attention and lay.tp == 1 for lay in got)  # one device has nothing to split
    assert not any(lay.dp_attention for lay in SV.layouts(w, S, T8))  # a dense model has no experts to split
    assert not any(lay.dp_attention for lay in SV.layouts(replace(w, attention_dp=False), moe, T8))
    assert not any(lay.dp_attention for lay in SV.layouts(replace(w, server="llamacpp"), moe, T8))
    pinned = SV.layouts(replace(w, attention_dp=True, tp=2), moe, T8)
    assert pinned and all(lay.dp_attention and lay.tp == 2 for lay in pinned)
    assert Layout(1, 1, 8) in SV.layouts(replace(w, attention_dp=True), moe, T8)  # TP1 has no other form


def test_data_parallel_attention_keeps_the_attention_whole_and_splits_the_experts_and_the_cache():
    moe = _moe()
    w = replace(W, params=1e9, prompt_tokens=100, output_tokens=50)
    experts = 4 * 4 * 384
    # weights on a device: all but the experts whole (2 bytes each), the experts a quarter each at TP4
    assert serving_weights_gb(w, moe, 4, 1, True) == pytest.approx(((1e9 - experts) + experts / 4) * 2 / 1e9)
    assert serving_weights_gb(w, moe, 4, 1) == pytest.approx(2.0 / 4)
    # the cache: a device holds its own sequences whole, a quarter of the replica's on average, even where
    # tensor parallelism would replicate it (one KV head; MLA's latent)
    from gpudesk.core.estimate.memory import kv_gb_per_sequence

    whole = kv_gb_per_sequence(w, moe, 125, 1, 1)
    assert kv_gb_per_sequence(w, moe, 125, 4, 1, True) == pytest.approx(whole / 4)
    assert kv_gb_per_sequence(w, moe, 125, 4, 1) == pytest.approx(whole)  # one KV head: TP cannot split it
    mla = _moe(attention="mla", kv_lora_rank=4, qk_rope_head_dim=0)
    assert kv_gb_per_sequence(w, mla, 125, 4, 1) == pytest.approx(kv_gb_per_sequence(w, mla, 125, 1, 1))
    assert kv_gb_per_sequence(w, mla, 125, 4, 1, True) == pytest.approx(kv_gb_per_sequence(w, mla, 125, 1, 1) / 4)


def test_data_parallel_attention_exchanges_tokens_with_their_experts_instead_of_all_reducing():
    moe = _moe()
    # 64 tokens on TP4: each device sends its 16 tokens × 1 expert × 8 wide × 2 bytes = 256 bytes, 3/4 of them
    # away, over 100 GB/s after two 1 µs hops; there and back, in each of the 4 MoE layers
    one = 2e-6 + 0.75 * 256 / 100e9
    assert SV.expert_all_to_all(T8, moe, 4, 16) == pytest.approx(2 * one)
    assert SV.layer_exchanges(T8, moe, Layout(4, 1, 2, True), 64) == pytest.approx(4 * 2 * one)
    assert SV.layer_exchanges(T8, moe, Layout(4, 1, 2), 64) == pytest.approx(2 * 4 * SV.tp_all_reduce(T8, 4, 64 * 8 * 2))
    assert SV.layer_exchanges(T8, moe, Layout(1, 1, 8, True), 64) == 0.0
    # a decode step under data-parallel attention reads the attention whole and a quarter of the experts
    w = replace(W, params=1e9, prompt_tokens=100, output_tokens=50)
    step, _bound, read = SV.decode_step(w, moe, ENGINE, T8, Layout(4, 1, 2, True), 64, 125, True)
    kv = 64 * 125 * 64 / 4  # each device: its 16 sequences' cache
    assert read == pytest.approx(((1e9 - 6144) + 6144 / 4) * 2 + kv)
    tp_step = SV.decode_step(w, moe, ENGINE, T8, Layout(4, 1, 2), 64, 125, True)[0]
    assert step > tp_step  # the whole attention is read on every device: 4x the bytes of its TP share


def test_data_parallel_attention_shapes_the_products_each_device_runs():
    curve = GemmCurve(efficiency=0.8, bandwidth_share=0.8, fixed_us=1.0, k_half=100.0, tile_m=64, tile_n=128,
                      units=100)
    e = replace(ENGINE, gemm=1e15, curve=curve, peak_flops=1.25e15, bandwidth_raw=3e12)
    big = _moe(d_model=4096, heads=32, kv_heads=8, head_dim=128, experts=8, experts_active=2, expert_ffn_dim=1024)
    from gpudesk.core.estimate.model import expert_products, layer_matmul_params

    _dense, moe_p = layer_matmul_params(big)
    for compute_only in (False, True):
        # 256 rows on TP4: each device's 64 rows through the whole attention (4,096 wide, 1,024-wide K and V);
        # its experts take a quarter of the replica's routed rows at full width
        f_attn = e.shape(((64, 4096 + 2048, 4096), (64, 4096, 4096)), compute_only)
        expert_p, experts, fill = expert_products(big, 256, 1, 64)
        f_expert = e.shape(tuple((m / 4, n, k) for m, n, k in experts), compute_only) * fill
        want = moe_p / ((moe_p - expert_p) / f_attn + expert_p / f_expert)
        got = SV.product_shape(big, e, 4, 256, compute_only=compute_only, dp_attention=True)
        assert got == pytest.approx(want)
        assert got != pytest.approx(SV.product_shape(big, e, 4, 256, compute_only=compute_only))


def test_the_all_to_all_grows_with_the_experts_a_token_visits_and_across_domains():
    moe2 = _moe(experts_active=2)
    one = 2 * 1e-6 + 0.75 * 512 / 100e9  # two hops; 16 tokens × 2 experts × 8 wide × 2 bytes
    assert SV.expert_all_to_all(T8, moe2, 4, 16) == pytest.approx(2 * one)
    two_domains = replace(T8, domain=4)  # eight devices over two NVLink domains of four
    hops = 3 * 1e-6 + 7 / 8 * 512 / 100e9  # three 1 µs hops for eight devices
    assert SV.expert_all_to_all(two_domains, moe2, 8, 16) == pytest.approx(4 * 2 * hops)
    assert SV.layer_exchanges(T8, moe2, Layout(1, 1, 8), 64) == 0.0  # one device a replica: nothing to exchange


def test_data_parallel_attention_under_a_pipeline_and_on_a_pair_of_devices():
    moe = _moe()
    w = replace(W, params=1e9, prompt_tokens=100, output_tokens=50)
    # each stage holds half the layers: half of everything a device would hold without the pipeline
    assert serving_weights_gb(w, moe, 4, 2, True) == pytest.approx(serving_weights_gb(w, moe, 4, 1, True) / 2)
    step, _bound, read = SV.decode_step(w, moe, ENGINE, T8, Layout(2, 2, 2, True), 64, 125, True)
    # two micro-batches of 32 in flight; a stage reads half the weights (the experts halved again) and a
    # micro-batch's cache, its 16 sequences on this device
    assert read == pytest.approx(((1e9 - 6144) + 6144 / 2) / 2 * 2 + 32 * 125 * 64 / 2 / 2)
    pair = replace(T8, devices=2, per_node=2, domain=2)
    assert SV.layouts(replace(W, kind="infer"), moe, pair) == [Layout(1, 1, 2), Layout(1, 2, 1), Layout(2, 1, 1),
                                                              Layout(2, 1, 1, True)]


def test_decode_attention_runs_a_devices_own_sequences_with_every_head_under_data_parallel_attention():
    from gpudesk.core.estimate.kernels import DecodeAttentionCurve

    curves = (DecodeAttentionCurve("bf16", 5.0, 0.5, 0.8, 0.5), DecodeAttentionCurve("fp8", 3.0, 0.25, 0.9, 0.5))
    e = replace(ENGINE, decode_curves=curves, bandwidth_raw=1e12, bandwidth_case=0.9, peak16_flops=1e15)
    moe = _moe(heads=8, kv_heads=4)
    w = replace(W, prompt_tokens=100, output_tokens=50)
    bf16, fp8 = curves
    # TP4: every one of the 64 sequences, 2 query heads and 1 KV head a device; 4 layers, no pipeline
    assert SV.decode_attention_s(w, moe, e, Layout(4, 1, 2), 64, 125) == pytest.approx(
        4 * bf16.seconds(64, 125, 2, 1, 4, 0.9e12, 1e15))
    # attention DP: a device's own 16 sequences with all 8 heads and 4 KV heads; a pipeline of 2 halves the layers
    assert SV.decode_attention_s(w, moe, e, Layout(4, 1, 2, True), 64, 125) == pytest.approx(
        4 * bf16.seconds(16, 125, 8, 4, 4, 0.9e12, 1e15))
    assert SV.decode_attention_s(w, moe, e, Layout(4, 2, 1, True), 64, 125) == pytest.approx(
        2 * bf16.seconds(16, 125, 8, 4, 4, 0.9e12, 1e15))
    # an FP8 cache (one byte an element) takes the FP8 table; MLA and sliding windows are not what was measured
    assert SV.decode_attention_s(replace(w, precision="fp8"), moe, e, Layout(4, 1, 2), 64, 125) == pytest.approx(
        4 * fp8.seconds(64, 125, 2, 1, 4, 0.9e12, 1e15))
    assert SV.decode_attention_s(w, _moe(attention="mla", kv_lora_rank=4), e, Layout(1, 1, 8), 64, 125) is None
    assert SV.decode_attention_s(w, _moe(sliding_window=64, sliding_share=0.5), e, Layout(1, 1, 8), 64, 125) is None
    assert SV.decode_attention_s(w, moe, ENGINE, Layout(1, 1, 8), 64, 125) is None  # no measured table
