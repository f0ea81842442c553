"""What the serving model learnt from the published TensorRT-LLM, MLPerf and llama.cpp tables, each
checked by hand: kernels on one stream run in turn (the attention kernel's cache reads add to the
products' time), TensorRT-LLM's KV cache takes its share of the memory the weights leave, prompt
tokens carry their tensor-parallel all-reduces, a mixture of experts multiplies as one grouped GEMM,
and llama.cpp runs a 4-bit float checkpoint as a block format. Shapes and engines are hand-built."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpudesk.core.estimate import serving as SV
from gpudesk.core.estimate.kernels import GemmCurve, grouped_rows, shape_factor
from gpudesk.core.estimate.memory import capacity_gb
from gpudesk.core.estimate.serving import Engine, Layout
from gpudesk.core.estimate.topology import Topology
from gpudesk.core.estimate.types import Device, Workload
from gpudesk.core.resolve import estimate_scenario, resolve_option
from gpudesk.core.scenario import parse_scenario

from .tiny_model import tiny_shape

S = tiny_shape()  # 4 layers × 8 wide, K and V of one token 64 bytes, 1e9 parameters stated
ENGINE = Engine(gemm=1e15, bandwidth=1e11, vector=1e12, kernel_s=1e-6, launch_s=5e-6, step_overhead_s=1e-3)
T8 = Topology(8, 8, 1, 8, 100.0, 1e-6, 10.0, 5e-6, 1, "NVL", "", False, False)
W = Workload(kind="infer", params=1e9, precision="bf16")
ONE = Layout(1, 1, 1)
CURVE = GemmCurve(efficiency=0.8, bandwidth_share=0.8, fixed_us=1.0, k_half=100.0, tile_m=64, tile_n=128, units=100)


# ----------------------------------------------------------------------------- kernels in turn
def test_the_attention_kernel_adds_its_cache_reads_to_the_products_time():
    # 100,000 sequences at 100 tokens: the products (2 × 999,999,200 FLOPs each at 1 PFLOP/s: 0.2 s) are
    # compute-bound, over the weights' 2 GB at 100 GB/s (20 ms); the cache, 100,000 × 6,400 bytes at
    # 100 GB/s (6.4 ms), streams through its own kernel after them, so it adds rather than hides
    step, bound, _ = SV.decode_step(W, S, ENGINE, T8, ONE, 100_000, 100, False)
    products = 100_000 * 2 * 999_999_200 / 1e15
    assert step == pytest.approx(products + 100_000 * 6400 / 1e11 + 4 * 14e-6)
    assert bound == "compute"
    # memory-bound: the weights' reads and the cache's still add (one sequence: 20 ms + 64 ns)
    assert SV.decode_step(W, S, ENGINE, T8, ONE, 1, 100, False)[0] == pytest.approx(2e9 / 1e11 + 6400 / 1e11 + 56e-6)


def test_a_step_is_memory_bound_while_reads_outlast_the_products():
    # 1,000 sequences: products 2 ms, weights 20 ms and cache 64 µs: the reads bound the step
    assert SV.decode_step(W, S, ENGINE, T8, ONE, 1000, 100, False)[1] == "memory bandwidth"
    # the products (20.00 ms) just over the weights alone (20 ms) but under weights and cache: still memory
    assert SV.decode_step(W, S, ENGINE, T8, ONE, 10_001, 100, False)[1] == "memory bandwidth"


# ----------------------------------------------------------------------------- memory the server takes
def test_tensorrt_llms_cache_takes_its_share_of_the_memory_the_weights_leave():
    dev = Device("d", "D", "datacenter", memory_gb=80)
    cap = capacity_gb(dev)
    w = replace(W, params=30e9, server_memory_share=0.9)  # 60 GB of 16-bit weights
    workspace = 512 * 64 * 2 / 1e9
    per_seq = 64_000 / 1e9
    total = SV.kv_capacity(w, S, dev, ONE, 1000, True)[0]
    free = SV.kv_capacity(replace(w, server_memory_basis="free"), S, dev, ONE, 1000, True)[0]
    # vLLM: 90% of all memory holds weights, workspace and cache
    assert total == int((cap * 0.9 - 60.0 - workspace) // per_seq)
    # TensorRT-LLM: the cache takes 90% of what the weights and workspace leave: 6 GB more here
    assert free == int(((cap - 60.0 - workspace) * 0.9) // per_seq)
    assert free > total
    # without a server (one user) neither share applies
    assert SV.kv_capacity(replace(w, server_memory_basis="free"), S, dev, ONE, 1000, False)[0] == \
        int((cap - 60.0 - workspace) // per_seq)


def test_the_named_servers_say_what_their_memory_share_is_of(catalogue):
    def workload(server):
        doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": "h100-sxm5-80gb"}],
               "workload": {"kind": "infer", "model": "llama-3.1-70b", "precision": "fp8", "concurrency": 64,
                            **({"server": server} if server else {})}}
        scenario = parse_scenario(doc, "t")
        return resolve_option(scenario, scenario.options()[0], catalogue).inputs.workload

    assert workload("trtllm").server_memory_basis == "free"
    assert workload(None).server_memory_basis == "free"  # tuned: the larger of the two defaults
    assert workload("vllm").server_memory_basis == "total"
    assert workload("sglang").server_memory_basis == "total"
    # 70B in FP8 on one H100: TensorRT-LLM's way leaves room for several times the sequences
    doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": "h100-sxm5-80gb"}],
           "workload": {"kind": "infer", "model": "llama-3.1-70b", "precision": "fp8", "concurrency": 3000,
                        "prompt_tokens": 128, "output_tokens": 2048}}
    trt = estimate_scenario(parse_scenario({**doc, "workload": {**doc["workload"], "server": "trtllm"}}, "t"),
                            catalogue)
    vllm = estimate_scenario(parse_scenario({**doc, "workload": {**doc["workload"], "server": "vllm"}}, "t"),
                             catalogue)
    assert trt.serving["kv_capacity_sequences"] > 2 * vllm.serving["kv_capacity_sequences"]
    assert any("of the memory the weights leave" in a for a in trt.assumptions)
    assert any("of memory for weights and KV cache" in a for a in vllm.assumptions)


# ----------------------------------------------------------------------------- prompts under TP
def test_each_batched_prompt_token_carries_its_all_reduces():
    # prompts waiting together fill a 2,048-token chunk: each token's share of the chunk's 2 all-reduces
    # a layer (4 layers) of 2,048 × 8 × 2 bytes over a 1 MB/s link (2·½·32,768 bytes: 32.768 ms each)
    w = replace(W, prompt_tokens=1000)
    slow = replace(T8, intra_gbs=0.001, intra_latency_s=0.0)
    fast = replace(ENGINE, gemm=1e22, bandwidth=1e18)
    per_token = SV.prefill(w, S, fast, slow, Layout(2, 1, 1), waiting=4)[1]
    alone = SV.prefill(w, S, fast, slow, ONE, waiting=4)[1]
    assert per_token - alone == pytest.approx(2 * 4 * (2048 * 8 * 2 / 1e6) / 2048, rel=1e-6)
    assert alone < 1e-9  # no split, no messages: the products alone, at an enormous rate


# ----------------------------------------------------------------------------- grouped experts
def test_experts_multiply_as_one_grouped_product_padded_to_whole_tiles():
    # 192 tokens, 1 of 4 experts each: 4 experts × 48 rows, each padded to one 64-row tile
    assert grouped_rows(192, 4, 1, 64) == (256, 0.75)
    # 2,048 tokens, 8 of 128 experts: 128 rows each, exactly two tiles: nothing wasted
    assert grouped_rows(2048, 128, 8, 64) == (128 * 128, 1.0)
    # 3 tokens, 2 of 128 experts: only 6 experts get a row, each a whole tile
    assert grouped_rows(3, 128, 2, 64) == (6 * 64, 6 / 384)
    # no tile (no curve): rows as they are
    assert grouped_rows(192, 4, 1, 1) == (192, 1.0)
    # no token still makes a product of one row
    assert grouped_rows(0, 4, 1, 64) == (64, 1 / 64)


def test_a_mixture_of_experts_times_its_experts_as_a_grouped_product():
    moe = tiny_shape(params=20000.0, experts=4, experts_active=1, expert_ffn_dim=16)
    e = replace(ENGINE, curve=CURVE, peak_flops=1.25e15, bandwidth_raw=1e11)
    got = SV.product_shape(moe, e, 1, 192)
    attn = shape_factor(CURVE, ((192, 16, 8), (192, 8, 8)), 1.25e15, 1e11)
    experts = shape_factor(CURVE, ((256, 32, 8), (256, 8, 16)), 1.25e15, 1e11) * 0.75
    # weighted by parameters: 384 in the expert, 224 outside it (attention 192, router 32)
    moe_p = 224 + 384
    assert got == pytest.approx(moe_p / (224 / attn + 384 / experts))
    # a dense model's products at every row
    dense = SV.product_shape(S, e, 1, 192)
    assert dense == pytest.approx(shape_factor(CURVE, ((192, 16, 8), (192, 8, 8), (192, 32, 8), (192, 8, 16)),
                                               1.25e15, 1e11))
    # without a curve every shape runs at the large-product rate
    assert SV.product_shape(moe, ENGINE, 1, 192) == pytest.approx(1.0)
    assert math.isfinite(SV.product_shape(moe, e, 8, 1))


# ----------------------------------------------------------------------------- llama.cpp's block formats
def test_llamacpp_runs_an_fp4_checkpoint_as_a_4_bit_block_format(catalogue):
    def resolved(server):
        doc = {"gpudesk_scenario": 1, "name": "t", "cluster": [{"item": "gb10"}],
               "workload": {"kind": "infer", "model": "gpt-oss-20b", "precision": "fp4", "prompt_tokens": 2048,
                            "server": server}}
        scenario = parse_scenario(doc, "t")
        return resolve_option(scenario, scenario.options()[0], catalogue)

    llama = resolved("llamacpp")
    assert llama.inputs.workload.precision == "q4"
    assert any("run as a 4-bit block format" in n for n in llama.assumptions)
    # a server with FP4 products keeps FP4
    trt = resolved("trtllm")
    assert trt.inputs.workload.precision == "fp4"
    assert not any("block format" in n for n in trt.assumptions)


# ----------------------------------------------------------------------------- more of the same, by hand
def test_without_a_measured_kernel_the_attention_is_the_slower_of_its_reads_and_its_arithmetic():
    # a million cached tokens on a device with endless bandwidth: the attention's arithmetic, 10 sequences ×
    # 4 FLOPs × 4 layers × 8 query widths × 1e6 tokens = 1.28 GFLOP, split over TP2 and run at the faster of
    # the vector units (2 × 1e9) and the GEMM rate (1e12): 0.64 ms after the products (10 × 2 × 999,999,200
    # FLOPs / 2 at 1e12: 10 ms) and two all-reduces a layer of 10 × 8 × 2 bytes
    e = replace(ENGINE, gemm=1e12, bandwidth=1e18, vector=1e9)
    tp2 = Layout(2, 1, 1)
    step = SV.decode_step(W, S, e, T8, tp2, 10, 1e6, False)[0]
    comm = 2 * 4 * SV.tp_all_reduce(T8, 2, 10 * 8 * 2)
    products = 10 * 2 * 999_999_200 / 2 / 1e12
    attention = 10 * 4 * 4 * 8 * 1e6 / 2 / 1e12
    cache = 10 * 1e6 * 64 / 2 / 1e18  # the single KV head whole on both devices: 32 bytes a token each
    assert step == pytest.approx(max(products, 1e9 / 1e18) + max(attention, cache) + 4 * 14e-6 + comm, rel=1e-9)
    # where the vector units are the faster (2e12 against a GEMM rate of 1e9), both run on them
    v = replace(e, gemm=1e9, vector=1e12)
    assert SV.decode_step(W, S, v, T8, ONE, 10, 1e6, False)[0] == \
        pytest.approx(10 * 2 * 999_999_200 / 2e12 + 10 * 4 * 4 * 8 * 1e6 / 2e12 + 4 * 14e-6, rel=1e-9)
    # a device with no compute figure is timed by its reads alone: weights, then the cache
    blind = replace(ENGINE, compute_known=False)
    assert SV.decode_step(W, S, blind, T8, ONE, 10, 1e6, False)[0] == \
        pytest.approx(2e9 / 1e11 + 10 * 64e6 / 1e11 + 4 * 14e-6, rel=1e-9)


def test_a_measured_decode_kernel_times_the_attention_after_the_products():
    from gpudesk.core.estimate.kernels import DecodeAttentionCurve

    curve = DecodeAttentionCurve("bf16", fixed_us=10.0, per_sequence_us=0.5, bandwidth_share=0.5, flops_share=0.5)
    e = replace(ENGINE, decode_curves=(curve,), bandwidth_raw=1e11, peak16_flops=1e15)
    # 1,000 sequences of 100 tokens: per layer 10 µs + 1,000 × 0.5 µs + the cache (1,000 × 100 × 1 head × 4
    # × K and V × 2 bytes = 1.6 MB) at half of 100 GB/s; four layers; after the products' 20 ms of weights
    per_layer = curve.seconds(1000, 100, 2, 1, 4, 1e11, 1e15)
    assert per_layer == pytest.approx(10e-6 + 500e-6 + 1.6e6 / 5e10)
    step = SV.decode_step(W, S, e, T8, ONE, 1000, 100, False)[0]
    assert step == pytest.approx(2e9 / 1e11 + 4 * per_layer + 4 * 14e-6, rel=1e-9)


def test_a_compute_bound_pipeline_spreads_the_batchs_products_over_its_stages():
    # PP2, 1,000 sequences in two micro-batches of 500: each stage multiplies 500 × 2 × 999,999,200 / 2 FLOPs
    # at 2e12 (the vector units beat a GEMM rate of 1e12), 0.125 s; a token passes both stages in turn;
    # the attention reads each stage's half of a micro-batch's cache (500 × 3,200 bytes at 100 GB/s)
    e = replace(ENGINE, gemm=1e12)
    pp2 = Layout(1, 2, 1)
    step = SV.decode_step(W, S, e, T8, pp2, 1000, 100, False)[0]
    stage = 500 * 2 * 999_999_200 / 2 / 2e12 + 500 * 3200 / 1e11
    assert step == pytest.approx(2 * stage + 4 * 14e-6 + 1e-6, rel=1e-9)


def test_a_long_prompt_pays_its_all_reduces_chunk_by_chunk():
    # 5,000 prompt tokens in chunks of 2,048: three chunks, each 2 all-reduces a layer of 2,048 × 8 × 2 bytes
    w = replace(W, prompt_tokens=5000)
    slow = replace(T8, intra_gbs=0.001, intra_latency_s=0.0)
    fast = replace(ENGINE, gemm=1e22, bandwidth=1e18)
    alone = SV.prefill(w, S, fast, slow, Layout(2, 1, 1))[0]
    assert alone == pytest.approx(3 * 4 * 14e-6 + 3 * 2 * 4 * (2048 * 8 * 2 / 1e6), rel=1e-6)


def test_the_grouped_experts_shape_follows_the_layout_and_the_kind_of_time():
    e = replace(ENGINE, curve=CURVE, peak_flops=1.25e15, bandwidth_raw=1e11)
    # a plain MLP has one up projection; a gated one has two
    plain = tiny_shape(gated=False)
    assert SV.product_shape(plain, e, 1, 192) == pytest.approx(
        shape_factor(CURVE, ((192, 16, 8), (192, 8, 8), (192, 16, 8), (192, 8, 16)), 1.25e15, 1e11))
    # shared experts count with the routed one: 2 experts' 768 parameters inside, 224 outside
    shared = tiny_shape(params=20000.0, experts=4, experts_active=1, shared_experts=1, expert_ffn_dim=16)
    attn = shape_factor(CURVE, ((192, 16, 8), (192, 8, 8)), 1.25e15, 1e11)
    experts = shape_factor(CURVE, ((256, 32, 8), (256, 8, 16)), 1.25e15, 1e11) * 0.75
    assert SV.product_shape(shared, e, 1, 192) == pytest.approx((224 + 768) / (224 / attn + 768 / experts))
    # TP2 narrows the experts' products too; the compute side alone where asked
    moe = tiny_shape(params=20000.0, experts=4, experts_active=1, expert_ffn_dim=16)
    for compute_only in (False, True):
        attn = shape_factor(CURVE, ((192, 8, 8), (192, 8, 4)), 1.25e15, 1e11, compute_only=compute_only)
        experts = shape_factor(CURVE, ((256, 16, 8), (256, 8, 8)), 1.25e15, 1e11, compute_only=compute_only) * 0.75
        assert SV.product_shape(moe, e, 2, 192, compute_only) == pytest.approx(608 / (224 / attn + 384 / experts))
    # without a curve the experts' rows are not padded: three tokens, three experts, all rows real
    assert SV.product_shape(moe, ENGINE, 1, 3) == pytest.approx(1.0)


def test_a_prompts_attention_runs_at_the_rate_measured_for_its_length():
    from gpudesk.core.estimate.kernels import ContextAttentionCurve

    # 1,000 prompt tokens, each attending to 500 on average: 1,000 × 4 × 4 layers × 8 × 500 = 64 MFLOP of
    # attention at the measured share for 1,000 tokens (0.5 × 1,000 / (1,000 + 1,000) = 0.25) of 1 TFLOP/s,
    # the case's factor 0.5 on it: 0.512 ms; the products' 1,000 × 2 × 999,999,200 FLOPs at 1 TFLOP/s
    curve = ContextAttentionCurve(efficiency=0.5, seq_half=1000.0, fixed_us=0.0)
    e = replace(ENGINE, gemm=1e12, context_curve=curve, peak16_flops=1e12, attention_case=0.5)
    w = replace(W, prompt_tokens=1000)
    alone, per_token = SV.prefill(w, S, e, T8, ONE)
    attention = 1000 * 4 * 4 * 8 * 500 / (1e12 * 0.25 * 0.5)
    products = 1000 * 2 * 999_999_200 / 1e12
    assert alone == pytest.approx(products + attention + 4 * 14e-6, rel=1e-9)
    assert per_token == pytest.approx((products + attention) / 1000, rel=1e-9)
    # under TP2 every device takes half the heads: the attention takes half the time
    tp2 = SV.prefill(w, S, e, replace(T8, intra_gbs=1e9, intra_latency_s=0.0), Layout(2, 1, 1))[0]
    comm = 2 * 4 * (1000 * 8 * 2 / 1e18)
    assert tp2 == pytest.approx(products / 2 + attention / 2 + 4 * 14e-6 + comm, rel=1e-6)
    # without a 16-bit peak the measured curve cannot be scaled: the attention runs with the products
    blind16 = replace(e, peak16_flops=0.0)
    assert SV.prefill(w, S, blind16, T8, ONE)[0] == \
        pytest.approx(1000 * (2 * 999_999_200 + 64_000) / 1e12 + 4 * 14e-6, rel=1e-9)


def test_a_device_without_a_compute_figure_times_the_cache_by_its_reads_alone():
    # endless bandwidth and slow arithmetic: counting the attention's FLOPs would take 1.28 GFLOP at 2e12
    blind = replace(ENGINE, compute_known=False, bandwidth=1e18, gemm=0.0, vector=1e12)
    step = SV.decode_step(W, S, blind, T8, ONE, 10, 1e6, False)[0]
    assert step == pytest.approx(2e9 / 1e18 + 10 * 64e6 / 1e18 + 4 * 14e-6, rel=1e-9)
