"""The engine's model arithmetic, profiles, result types, parallelism planner and training estimate
checked against hand calculations and physical consequences, written to kill the mutants that
survived mutation testing of gpudesk/core/estimate/{model,profiles,types,planner,training}.py
(README "Mutation testing"). Shapes, devices and links are tiny and hand-built (no catalogue), so
that every expected figure is worked out in its comment from the formula's physics."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate import model as MD
from gpudesk.core.estimate import planner as P
from gpudesk.core.estimate import training as T
from gpudesk.core.estimate.compute import Rates, StageTime, rates, stage_time
from gpudesk.core.estimate.memory import MemoryModel, Plan, capacity_gb, total_gb, training_parts
from gpudesk.core.estimate.model import Shape, shape_of
from gpudesk.core.estimate.profiles import PROFILES, Profile, _p, matmul_share, profile_of
from gpudesk.core.estimate.topology import Topology
from gpudesk.core.estimate.types import (
    Band,
    Calibration,
    Cost,
    Device,
    Estimate,
    EstimateInput,
    Finding,
    Link,
    MemoryFit,
    NodeGroup,
    Range,
    Workload,
    _finite,
    _plain,
)

from .tiny_model import tiny_shape


def _shape(**kw) -> Shape:
    """A 4-layer dense decoder, d=8, 2 query heads and 1 KV head of width 4, gated MLP of 16, vocab 100.
    Attention 8·8 + 2·8·4 + 8·8 = 192 parameters per layer, MLP 3·8·16 = 384: 576 per layer, 2,304 in
    the body; the output head 100·8 = 800."""
    return tiny_shape(**kw)


# a MoE of the same width: 4 experts of MLP 16 (1 routed + 1 shared per token), the first layer dense.
# MoE layer: attention 192 + 2 × 3·8·16 = 768 active expert parameters + router 8·4 = 32 → 992
MOE = _shape(experts=4, experts_active=1, shared_experts=1, expert_ffn_dim=16, dense_layers=1)


# =========================================================================== model.py


def test_a_shapes_derived_widths_and_moe_layers():
    s = _shape()
    assert (s.moe, s.q_dim, s.kv_dim, s.moe_layers) == (False, 8, 4, 0)
    assert (MOE.moe, MOE.moe_layers) == (True, 3)  # 4 layers, the first dense


def test_rounding_to_a_multiple_never_goes_below_one_step():
    assert MD._round_to(100, 64) == 128  # 1.56 steps round to 2
    assert MD._round_to(95, 64) == 64  # 1.48 steps round to 1
    assert MD._round_to(10, 64) == 64  # 0.16 steps would round to 0: one step is the least


def test_a_bare_8b_parameter_count_is_shaped_as_llama_3_8b():
    # 32 layers × 4,096 (128 per layer), 32 heads of 128, 8 KV heads, SwiGLU 3.5 × 4,096 = 14,336:
    # per layer 2·4096² + 2·4096·8·128 + 3·4096·14336 = 218,103,808; × 32 = 6.979e9, plus untied input
    # and output embeddings 2 × 128,256 × 4,096 = 1.051e9 → 8.030e9, the nearest to 8e9 (31 layers
    # give 7.37e9; 33 layers pass 8e9 and end the search)
    s = shape_of(Workload(params=8e9))
    assert (s.layers, s.d_model, s.heads, s.kv_heads, s.head_dim, s.ffn_dim) == (32, 4096, 32, 8, 128, 14336)
    assert (s.tied, s.gated, s.vocab, s.known, s.attention) == (False, True, 128_256, False, "gqa")
    assert (s.experts, s.experts_active, s.expert_ffn_dim, s.dense_layers) == (0, 0, 0, 32)
    assert (s.params, s.active_params, s.sliding_window, s.sliding_share) == (8e9, 8e9, None, 0.0)
    # the stated parameter count is trusted, less the input embedding (a lookup, not a product)
    assert MD.matmul_params_per_token(s) == pytest.approx(8e9 - 128_256 * 4096)
    # parts of the shape the scenario gives replace the inferred ones
    pinned = shape_of(Workload(params=8e9, layers=30, heads=16, kv_heads=4))
    assert (pinned.layers, pinned.d_model, pinned.heads, pinned.kv_heads) == (30, 4096, 16, 4)


def test_a_tiny_model_is_one_layer_and_ties_its_embeddings_when_they_dominate():
    # 1M parameters: one layer of 128 (1 head, 1 KV head, FFN 448) holds 2·128² + 2·128·128 + 3·128·448 =
    # 237,568; the 128,256-token embedding (16.4M) is more than a quarter of the model: tied, one copy
    s = shape_of(Workload(params=1e6))
    assert (s.layers, s.d_model, s.heads, s.kv_heads, s.head_dim, s.ffn_dim, s.tied) == (1, 128, 1, 1, 128, 448, True)
    assert s.attention == "mha"
    # with a 1,000-token vocabulary the embedding (128,000) is under a quarter: untied, 493,568 in all;
    # two layers of 256 (2,156,544 with a tied 256,000 embedding) overshoot 1M by more
    s = shape_of(Workload(params=1e6, vocab=1000))
    assert (s.layers, s.d_model, s.tied, s.vocab) == (1, 128, False, 1000)
    # an inferred MoE shape keeps at least half its active parameters as products: 1e9 active less a
    # 525M-parameter embedding would leave 475M, under the floor of 0.5e9
    moe = shape_of(Workload(params=8e9, active_params=1e9, experts=8))
    assert MD.matmul_params_per_token(moe) == pytest.approx(0.5e9)
    # a dense inferred shape with tied embeddings subtracts no input embedding
    assert MD.matmul_params_per_token(shape_of(Workload(params=1e6))) == 1e6


def _modern(layers: int, params: float, vocab: int = 128_256) -> Shape:
    """The modern-decoder rule at a given depth: 128 wide a layer, 128-wide heads, at most 8 KV heads,
    SwiGLU of 3.5 widths, embeddings tied when they are more than a quarter of the model."""
    d = 128 * layers
    return _shape(params=params, active_params=params, layers=layers, d_model=d, heads=layers, kv_heads=min(8, layers),
                  head_dim=128, ffn_dim=448 * layers, vocab=vocab, tied=vocab * d > 0.25 * params, known=False)


def _count(s: Shape) -> float:
    """A shape's parameters: its layers' matrices and one or two embedding tables."""
    return s.layers * (MD.attention_params_per_layer(s) + MD.mlp_params(s.d_model, s.ffn_dim, True)) + \
        s.vocab * s.d_model * (1 if s.tied else 2)


@pytest.mark.parametrize("params", [3e7, 1e8, 3e8, 1.5e9, 7.5e9, 70e9, 405e9])
def test_a_bare_parameter_count_gets_the_modern_shape_nearest_to_it(params):
    s = shape_of(Workload(params=params))
    assert s == replace(_modern(s.layers, params), experts_active=0, dense_layers=s.layers, attention=s.attention)
    # no shallower nor deeper modern shape is nearer the stated count
    for other in (s.layers - 1, s.layers + 1):
        if other >= 1:
            assert abs(_count(s) - params) < abs(_count(_modern(other, params)) - params), other
    # 7.5e9 lies nearer 31 layers (7.37e9) than the first shape past it (32 layers, 8.03e9)
    if params == 7.5e9:
        assert (s.layers, s.d_model) == (31, 3968)


def test_a_known_shape_fills_its_gaps_from_the_width():
    # 256 wide: 256 // 128 = 2 heads of 128, as many KV heads (multi-head), FFN 4·d plain GELU
    s = shape_of(Workload(params=1e6, layers=3, d_model=256))
    assert (s.heads, s.kv_heads, s.head_dim, s.ffn_dim, s.gated, s.tied) == (2, 2, 128, 1024, False, False)
    assert (s.vocab, s.known, s.attention, s.dense_layers, s.moe_layers) == (None, True, "mha", 3, 0)
    assert (s.experts_active, s.shared_experts, s.expert_ffn_dim) == (0, 0, 0)
    assert (s.kv_lora_rank, s.qk_rope_head_dim) == (0, 0)
    assert (shape_of(Workload(params=1e6, layers=3, d_model=256, kv_lora_rank=512, qk_rope_head_dim=64)).kv_lora_rank,
            shape_of(Workload(params=1e6, layers=3, d_model=256, qk_rope_head_dim=64)).qk_rope_head_dim) == (512, 64)
    # widths that are not a multiple of 128 still get whole heads: 200 → one head of 200; 10 / 4 → 2
    assert (shape_of(Workload(params=1e6, layers=2, d_model=200)).heads,
            shape_of(Workload(params=1e6, layers=2, d_model=200)).head_dim) == (1, 200)
    assert shape_of(Workload(params=1e6, layers=2, d_model=10, heads=4)).head_dim == 2
    assert shape_of(Workload(params=1e6, layers=1, d_model=4, heads=4)).head_dim == 1
    # a width under 128 still has one head, as wide as the model
    narrow = shape_of(Workload(params=1e6, layers=2, d_model=64))
    assert (narrow.heads, narrow.head_dim) == (1, 64)
    # four heads of 256 / 4 = 64
    assert shape_of(Workload(params=1e6, layers=2, d_model=256, heads=4)).head_dim == 64


def test_an_ffn_narrower_than_3_9_widths_is_taken_as_gated():
    gated = shape_of(Workload(params=1e6, layers=2, d_model=10, ffn_dim=38))  # SwiGLU's 8/3·d family
    assert gated.gated and gated.ffn_dim == 38
    assert not shape_of(Workload(params=1e6, layers=2, d_model=10, ffn_dim=39)).gated  # exactly 3.9·d: GELU
    assert not shape_of(Workload(params=1e6, layers=2, d_model=10, ffn_dim=38, gated_ffn=False)).gated
    assert shape_of(Workload(params=1e6, layers=2, d_model=10, ffn_dim=40, gated_ffn=True)).gated


def test_a_moe_scenario_defaults_to_two_active_experts_of_the_dense_width():
    w = Workload(params=1e6, active_params=5e5, layers=2, d_model=10, heads=2, kv_heads=1, head_dim=7, ffn_dim=39,
                 tied_embeddings=True, vocab=77, experts=4, shared_experts=1, dense_layers=1, sliding_window=8)
    s = shape_of(w)
    assert (s.heads, s.kv_heads, s.head_dim, s.attention, s.tied, s.vocab) == (2, 1, 7, "mqa", True, 77)
    assert (s.experts, s.experts_active, s.shared_experts, s.expert_ffn_dim) == (4, 2, 1, 39)
    assert (s.dense_layers, s.moe_layers, s.active_params) == (1, 1, 5e5)
    assert (s.sliding_window, s.sliding_share) == (8, 1.0)  # a window with no share: every layer windowed
    # named parts win: 3 active experts of 20, no dense layer, a quarter of the layers windowed
    s = shape_of(replace(w, experts_active=3, expert_ffn_dim=20, dense_layers=None, sliding_share=0.25))
    assert (s.experts_active, s.expert_ffn_dim, s.dense_layers, s.sliding_share) == (3, 20, 0, 0.25)
    assert shape_of(replace(w, sliding_share=0.0)).sliding_share == 0.0  # zero is a share, not "unset"
    # grouped-query between one and all heads; a named attention wins
    assert shape_of(Workload(params=1e6, layers=2, d_model=16, heads=4, kv_heads=2)).attention == "gqa"
    assert shape_of(Workload(params=1e6, layers=2, d_model=16, heads=4, kv_heads=2, attention="mla")).attention == \
        "mla"


def test_attention_parameters_for_grouped_query_and_latent_attention():
    # GQA: Q and O 8·8 each, K and V 8·4 each: 192
    assert MD.attention_params_per_layer(_shape()) == 192
    # MLA with latent 4 and rope 2, 2 heads of 3 (q 6): down 8·(4+2) = 48, up 4·2·2·3 = 48, query
    # 8·6·1.5 = 72, output 6·8 = 48 → 216
    mla = _shape(attention="mla", kv_lora_rank=4, qk_rope_head_dim=2, head_dim=3)
    assert MD.attention_params_per_layer(mla) == 216
    # "mla" without a latent width is counted as ordinary attention: Q, O 8·6, K, V 8·3
    assert MD.attention_params_per_layer(replace(mla, kv_lora_rank=0)) == 8 * 6 + 2 * 8 * 3 + 6 * 8


def test_mlp_and_layer_matmul_parameters():
    assert MD.mlp_params(8, 16, True) == 384  # gate, up, down
    assert MD.mlp_params(8, 16, False) == 256  # up, down
    assert MD.layer_matmul_params(_shape()) == (576, 576)
    assert MD.layer_matmul_params(_shape(gated=False)) == (192 + 256, 192 + 256)
    assert MD.layer_matmul_params(MOE) == (576, 992)
    # the experts the routers choose from: 3 MoE layers × 4 experts × 384
    assert MD.expert_params(MOE) == 3 * 4 * 384
    assert MD.expert_params(_shape()) == 0.0


def test_matmul_parameters_per_token_of_known_shapes():
    # dense, 1e9 stated: the body is the stated count less two 800-parameter embeddings, plus the head
    assert MD.matmul_params_per_token(_shape()) == pytest.approx(1e9 - 1600 + 800)
    assert MD.matmul_params_per_token(_shape(tied=True)) == pytest.approx(1e9 - 800 + 800)
    # 2,500 stated leaves 900 for the body, under half the 2,304 the shape holds: the shape is trusted
    assert MD.matmul_params_per_token(_shape(params=2500.0, active_params=2500.0)) == 2304 + 800
    # 2,752 stated leaves exactly half (1,152): still the shape's 2,304
    assert MD.matmul_params_per_token(_shape(params=2752.0, active_params=2752.0)) == 2304 + 800
    assert MD.matmul_params_per_token(_shape(params=3000.0, active_params=3000.0)) == 1400 + 800
    # MoE: one dense layer 576 and three MoE layers 992 each, plus the head, whatever the stated count
    assert MD.matmul_params_per_token(replace(MOE, active_params=5e8)) == 576 + 3 * 992 + 800
    assert MD.matmul_params_per_token(MOE) == 576 + 3 * 992 + 800
    # a model without a vocabulary has no head nor embeddings: the stated 2,500 is all body; 1,000
    # is under half the shape's 2,304
    assert MD.matmul_params_per_token(_shape(params=2500.0, vocab=None)) == 2500
    assert MD.matmul_params_per_token(_shape(params=1000.0, vocab=None)) == 2304


def test_sliding_windows_cap_the_context_of_their_share_of_layers():
    s = _shape(sliding_window=8, sliding_share=0.25)
    assert MD.attention_context(s, 100) == pytest.approx(0.25 * 8 + 0.75 * 100)  # 77
    assert MD.attention_context(s, 4) == 4  # inside the window nothing is cut
    assert MD.attention_context(_shape(sliding_window=8, sliding_share=0.0), 100) == 100
    assert MD.attention_context(_shape(), 100) == 100
    assert MD.attention_context(_shape(sliding_share=0.5), 100) == 100  # a share but no window: nothing to cap


def test_training_flops_are_six_n_plus_attention_and_lora_skips_weight_gradients():
    s = _shape(params=2500.0, active_params=2500.0)  # 3,104 matmul parameters
    w = Workload(params=2500.0, seq_len=10)
    # 6 × 3,104 + 12 × 4 layers × 8 × 10 tokens = 18,624 + 3,840
    assert MD.training_flops_per_token(w, s) == pytest.approx(22_464)
    # LoRA: forward 2N and input gradients 2N, two thirds of the attention, adapters 6N × 1%
    lora = replace(w, kind="finetune", method="lora", lora_fraction=0.01)
    assert MD.training_flops_per_token(lora, s) == pytest.approx(4 * 3104 + 2560 + 6 * 3104 * 0.01)
    assert MD.training_flops_per_token(replace(lora, method="qlora"), s) == pytest.approx(15_162.24)
    assert MD.training_flops_per_token(replace(lora, method="full"), s) == pytest.approx(22_464)
    assert MD.training_flops_per_token(replace(lora, kind="train"), s) == pytest.approx(22_464)
    assert MD.training_flops_per_token(replace(w, flops_per_token=123), s) == 123.0
    # inference: forward 2N plus 4·L·q·context: 6,208 + 1,280
    assert MD.inference_flops_per_token(s, 10) == pytest.approx(7488)


def test_weight_bytes_follow_the_stored_format_or_the_given_size():
    assert MD.weight_bytes(Workload(params=1e9, precision="q4")) == pytest.approx(0.5625e9)  # 4.5 bits
    assert MD.weight_bytes(Workload(params=1e9, precision="odd")) == pytest.approx(2e9)  # 16-bit default
    assert MD.weight_bytes(Workload(params=1e9, weights_bytes=7e8)) == 7e8
    assert MD.weight_bytes_per_param(Workload(params=1e9, weights_bytes=7e8)) == pytest.approx(0.7)
    assert MD.weight_bytes_per_param(Workload(params=0.0, weights_bytes=7e8, precision="q8")) == 1.0625
    assert MD.weight_bytes_per_param(Workload(params=1e9, precision="odd")) == 2.0


def test_kv_cache_bytes_per_token():
    s = _shape()
    # K and V of 4 wide × 2 bytes × 4 layers
    assert MD.kv_bytes_per_token(Workload(), s) == 64
    assert MD.kv_bytes_per_token(Workload(precision="fp8"), s) == 32
    assert MD.kv_bytes_per_token(Workload(kv_bytes_per_element=4.0), s) == 128
    # MLA caches the latent (4) and the rope key (2) once per layer: 6 × 2 × 4
    assert MD.kv_bytes_per_token(Workload(), _shape(attention="mla", kv_lora_rank=4, qk_rope_head_dim=2)) == 48
    # a latent width on a grouped-query model is not a latent cache
    assert MD.kv_bytes_per_token(Workload(), _shape(kv_lora_rank=4, qk_rope_head_dim=2)) == 64
    # half the layers windowed to 8 tokens at a context of 100: 0.5 × 8/100 + 0.5 of the full cache
    win = _shape(sliding_window=8, sliding_share=0.5)
    assert MD.kv_bytes_per_token(Workload(), win, 100) == pytest.approx(64 * 0.54)
    assert MD.kv_bytes_per_token(Workload(), win, 8) == 64  # the window is not full yet
    assert MD.kv_bytes_per_token(Workload(), win) == 64
    assert MD.kv_bytes_per_token(Workload(), _shape(sliding_window=8, sliding_share=0.0), 100) == 64


def test_activation_and_logit_bytes_per_token():
    assert MD.activation_bytes_per_token_layer(_shape()) == 192  # 80 attention + 2·(8 + 3·16)
    assert MD.activation_bytes_per_token_layer(_shape(gated=False)) == 80 + 2 * (8 + 2 * 16)
    assert MD.activation_bytes_per_token_layer(MOE) == 80 + 2 * (8 + 2 * 3 * 16)  # two experts' MLPs
    assert MD.logits_bytes_per_token(_shape()) == 600
    assert MD.logits_bytes_per_token(_shape(vocab=None)) == 0


def test_a_shape_is_described_in_words():
    assert MD.describe(_shape(layers=32, d_model=4096, ffn_dim=14336, heads=32, kv_heads=8)) == \
        "32 layers × 4,096 wide, 32 heads, grouped-query (8 KV heads) attention, SwiGLU FFN 14,336"
    assert MD.describe(replace(MOE, gated=False, attention="mha")) == \
        "4 layers × 8 wide, 2 heads, multi-head attention, GELU FFN 16, 4 experts (1 active + 1 shared)"
    assert MD.describe(replace(MOE, shared_experts=0, attention="mqa")) == \
        "4 layers × 8 wide, 2 heads, multi-query attention, SwiGLU FFN 16, 4 experts (1 active)"
    assert MD.describe(_shape(attention="mla", kv_lora_rank=512)).endswith(
        "multi-head latent (KV latent 512) attention, SwiGLU FFN 16")
    assert "2 heads, odd attention" in MD.describe(_shape(attention="odd"))


def test_quantised_formats_and_ceiling_division():
    assert MD.is_quantised("q4") and MD.is_quantised("int4") and MD.is_quantised("fp4")
    assert not MD.is_quantised("int8") and not MD.is_quantised("bf16")
    assert MD.ceil_div(10, 5) == 2 and MD.ceil_div(11, 5) == 3
    assert MD.ceil_div(1.1, 0.1) == 11  # 11.000000000000002 in floating point is still 11


# =========================================================================== types.py


def test_a_finding_reads_as_its_sentence_and_exports_its_values():
    f = Finding("memory", "Too big.", {"need_gb": 90.0})
    assert str(f) == "Too big."
    out = f.to_json()
    assert out == {"code": "memory", "text": "Too big.", "values": {"need_gb": 90.0}}
    out["values"]["need_gb"] = 1.0
    assert f.values["need_gb"] == 90.0  # a copy
    assert Finding("x", "y").values == {}


def test_a_range_from_values_and_its_scaling():
    assert Range.of([5.0, 2.0, 9.0]) == Range(2.0, 2.0, 9.0)  # three values: the middle one is the likely
    assert Range.of([4.0, 1.0, 3.0, 2.0]) == Range(1.0, 3.0, 4.0)  # otherwise the upper median
    assert Range.of(iter([7.0])) == Range(7.0, 7.0, 7.0)
    assert Range.exact(2.5) == Range(2.5, 2.5, 2.5)
    assert Range(1.0, 2.0, 4.0).scaled(3.0) == Range(3.0, 6.0, 12.0)
    assert Range(1.0, 2.0, 4.0).scaled(-1.0) == Range(-4.0, -2.0, -1.0)  # a negative factor swaps the ends
    assert Range(1.0, 2.0, 4.0).to_json() == {"low": 1.0, "likely": 2.0, "high": 4.0}


def test_a_range_widens_to_the_known_error_but_never_narrows():
    r = Range(9.0, 10.0, 11.0).at_least(math.log(2.0))
    assert (r.low, r.likely, r.high) == pytest.approx((5.0, 10.0, 20.0))
    assert Range(1.0, 10.0, 100.0).at_least(math.log(2.0)) == Range(1.0, 10.0, 100.0)
    assert Range(9.0, 10.0, 30.0).at_least(math.log(2.0)) == Range(5.0, 10.0, 30.0)
    # nothing to widen around a likely of zero, nor with no spread
    assert Range(1.0, 0.0, 2.0).at_least(1.0) == Range(1.0, 0.0, 2.0)
    assert Range(5.0, 4.0, 3.0).at_least(0.0) == Range(5.0, 4.0, 3.0)


def test_a_band_picks_its_case_and_a_group_counts_its_devices():
    b = Band(1.0, 2.0, 3.0)
    assert (b.pick(0), b.pick(1), b.pick(2)) == (1.0, 2.0, 3.0)
    assert NodeGroup(Device("d", "D"), per_node=8, nodes=3).devices == 24


def test_memory_fit_and_cost_export_copies_and_drop_unbounded_ends():
    fit = MemoryFit(10.0, 80.0, True, None, {"weights": 4.0}, "one device")
    out = fit.to_json()
    assert out == {"per_device_gb": 10.0, "capacity_gb": 80.0, "fits": True, "min_devices": None,
                   "breakdown_gb": {"weights": 4.0}, "strategy": "one device"}
    out["breakdown_gb"]["weights"] = 0.0
    assert fit.breakdown_gb["weights"] == 4.0
    c = Cost(Range(1.0, 2.0, 3.0), 1000.0, Range.exact(4.0), Range.exact(5.0), Range.exact(0.5), 10.0, 2.0, "AWS",
             break_even_runs_range=Range(5.0, 10.0, float("inf")), break_even_months_range=Range(1.0, 2.0, 3.0),
             owned_usd_per_year=7.0, rent_usd_per_year=8.0)
    assert c.to_json() == {
        "cloud_usd_per_run": {"low": 1.0, "likely": 2.0, "high": 3.0}, "capex_usd": 1000.0,
        "owned_usd_per_run": {"low": 4.0, "likely": 4.0, "high": 4.0},
        "owned_marginal_usd_per_run": {"low": 5.0, "likely": 5.0, "high": 5.0},
        "electricity_usd_per_run": {"low": 0.5, "likely": 0.5, "high": 0.5}, "break_even_runs": 10.0,
        "break_even_months": 2.0, "break_even_runs_range": {"low": 5.0, "likely": 10.0, "high": None},
        "break_even_months_range": {"low": 1.0, "likely": 2.0, "high": 3.0}, "rent": "AWS", "owned_usd_per_year": 7.0,
        "rent_usd_per_year": 8.0, "capex_parts": None, "capex_notes": [], "total_usd_over_life": None,
        "break_even_by_pricing": {}, "rent_usd_per_hour_by_pricing": {}}
    assert Cost(None, None, None, None, Range.exact(0.0), None, None).to_json()["break_even_months_range"] is None
    assert _finite(Range(float("-inf"), float("nan"), 3.0)) == {"low": None, "likely": None, "high": 3.0}


def test_plain_copies_keep_numbers_strings_and_containers_only():
    nan, inf = float("nan"), float("inf")
    assert _plain({1: (1, "a", None, True), "x": [nan, inf, -inf, 2.5], "y": {"z": Band(1, 2, 3)}}) == \
        {"1": [1, "a", None, True], "x": [None, None, None, 2.5], "y": {"z": str(Band(1, 2, 3))}}


def _est(kind: str) -> Estimate:
    return Estimate(kind, True, [Finding("a", "reason A"), Finding("b", "reason B")], Range.exact(2.0), None,
                    Range.exact(0.4), MemoryFit(1.0, 2.0, True, None), None, None, None,
                    Cost(None, None, None, None, Range.exact(0.0), None, None), ["assumed"], 4,
                    notes=[Finding("b", "note B"), Finding("c", "note C")], ttft_s=Range.exact(0.1),
                    tpot_s=Range.exact(0.02), serving={"limit": "kv_cache", "bad": float("nan")},
                    breakdown={"k": (1, 2)}, plan={"tp": 2}, alternatives=[{"label": "x"}])


def test_an_estimate_finds_reasons_before_notes_and_exports_serving_only_for_inference():
    e = _est("infer")
    assert e.reason_texts() == ["reason A", "reason B"]
    assert e.note_texts() == ["note B", "note C"]
    assert e.finding("b").text == "reason B"  # the reason, not the note of the same code
    assert e.finding("c").text == "note C"
    assert e.finding("zzz") is None
    out = e.to_json()
    assert out["reasons"] == ["reason A", "reason B"] and out["notes"] == ["note B", "note C"]
    assert [f["code"] for f in out["findings"]] == ["a", "b", "b", "c"]
    assert (out["kind"], out["feasible"], out["devices"], out["mfu"]) == \
        ("infer", True, 4, {"low": 0.4, "likely": 0.4, "high": 0.4})
    assert out["time_s"] is None and out["memory"]["fits"] is True and out["breakdown"] == {"k": [1, 2]}
    assert out["ttft_s"] == {"low": 0.1, "likely": 0.1, "high": 0.1}
    assert out["tpot_s"]["likely"] == 0.02 and out["serving"] == {"limit": "kv_cache", "bad": None}
    assert out["plan"] == {"tp": 2} and out["alternatives"] == [{"label": "x"}]
    for key in ("decode_tokens_per_s_per_user", "prefill_tokens_per_s", "decode_tokens_per_s_aggregate"):
        assert key in out and out[key] is None
    train = _est("train").to_json()
    assert "ttft_s" not in train and "serving" not in train and "tpot_s" not in train


def test_an_estimate_exports_every_figure_under_its_name():
    r = [Range.exact(float(i)) for i in range(16)]
    e = Estimate("infer", True, [], r[0], r[1], r[2], MemoryFit(1.0, 2.0, True, None), r[3], r[4], r[5],
                 Cost(None, None, None, None, r[6], None, None), ["a"], 8, step_time_s=r[7], hfu=r[8],
                 comm_share=r[9], slowest_link="IB", ttft_s=r[10], prefill_tokens_per_s=r[11],
                 decode_tokens_per_s_aggregate=r[12], embodied_kg_per_run=r[13], embodied_kg_per_year=1.5,
                 decode_tokens_per_s_per_user=r[14], energy_kwh_per_year=2.5, co2_kg_per_year=3.5, peak_pflops=7.9,
                 precision_used="bf16", tpot_s=r[15])
    out = e.to_json()

    def x(i):
        return {"low": float(i), "likely": float(i), "high": float(i)}

    assert out == {
        "kind": "infer", "feasible": True, "reasons": [], "devices": 8, "precision": "bf16", "peak_pflops": 7.9,
        "tokens_per_s": x(0), "time_s": x(1), "step_time_s": x(7), "mfu": x(2), "hfu": x(8),
        "memory": e.memory.to_json(), "power_w": x(3), "energy_kwh": x(4), "co2_kg": x(5),
        "energy_kwh_per_year": 2.5, "co2_kg_per_year": 3.5, "embodied_kg_per_run": x(13),
        "embodied_kg_per_year": 1.5, "cost": e.cost.to_json(), "comm_share": x(9), "slowest_link": "IB",
        "assumptions": ["a"], "notes": [], "findings": [], "plan": {}, "alternatives": [], "breakdown": {},
        "ttft_s": x(10), "tpot_s": x(15), "decode_tokens_per_s_per_user": x(14), "prefill_tokens_per_s": x(11),
        "decode_tokens_per_s_aggregate": x(12), "serving": {}}


# =========================================================================== profiles.py


def _dev(vendor: str, arch: str = "", cls: str = "datacenter", form: str = "", tensor_cores=None) -> Device:
    return Device("x", "X", cls, vendor=vendor, architecture=arch, form_factor=form, tensor_cores=tensor_cores)


@pytest.mark.parametrize(("device", "key"), [
    (_dev("NVIDIA", "Maxwell", "edge"), "nvidia-jetson-maxwell"),
    (_dev("NVIDIA", "Maxwell", "datacenter"), "nvidia-no-tensor"),
    (_dev("nvidia", "Pascal", "consumer"), "nvidia-no-tensor"),
    (_dev("NVIDIA", "Kepler"), "nvidia-no-tensor"),
    (_dev("NVIDIA", "Ampere", "edge"), "nvidia-jetson-tensor"),
    (_dev("NVIDIA", "Blackwell", "desktop_ai"), "nvidia-gb10"),
    (_dev("NVIDIA", "Hopper", "datacenter", "PCIe"), "nvidia-hopper-pcie"),
    (_dev("NVIDIA", "Hopper", "datacenter", "SXM5"), "nvidia-hopper"),
    (_dev("NVIDIA", "Hopper", "workstation"), "nvidia-client"),
    (_dev("NVIDIA", "Blackwell", "datacenter"), "nvidia-blackwell"),
    (_dev("NVIDIA", "Blackwell", "consumer"), "nvidia-client"),
    (_dev("NVIDIA", "Volta", "workstation"), "nvidia-volta"),
    (_dev("NVIDIA", "Ampere", "datacenter", "SXM4"), "nvidia-ampere-dc"),
    (_dev("NVIDIA", "Ampere", "datacenter", "PCIe"), "nvidia-ampere-pcie"),
    (_dev("NVIDIA", "Ada Lovelace", "consumer"), "nvidia-client"),
    (_dev("AMD", "CDNA 4"), "amd-cdna4"),
    (_dev("AMD", "CDNA 3"), "amd-cdna3"),
    (_dev("AMD", "CDNA 2"), "amd-cdna2"),
    (_dev("AMD", "CDNA"), "amd-cdna2"),
    (_dev("AMD", "RDNA 3", "consumer"), "amd-rdna"),
    (_dev("Apple", "M2", "desktop_ai"), "apple"),
    (_dev("Intel", "Gaudi 2"), "intel-gaudi2"),
    (_dev("Intel", "Gaudi 3"), "intel-gaudi3"),
    (_dev("Intel", "Xe-HPG", "consumer"), "intel-arc"),
    (_dev("Google", "TPU v5e"), "google-tpu"),
    (_dev("AWS", "NeuronCore-v2"), "aws-neuron"),
    (_dev("", ""), "generic"),
    (_dev("Tenstorrent", "Wormhole", tensor_cores=0), "generic"),
])
def test_a_device_gets_the_profile_of_its_family(device, key):
    assert profile_of(device).key == key


def test_an_nvidia_gpu_known_to_have_no_tensor_cores_is_profiled_without_them():
    # a GeForce GTX 1660 (Turing TU116) has no tensor cores: 16-bit products accumulate in FP32 on the
    # CUDA cores, and there is no FlashAttention kernel for it
    gtx1660 = _dev("NVIDIA", "Turing", "consumer", tensor_cores=0)
    assert profile_of(gtx1660).key == "nvidia-no-tensor"
    assert not profile_of(gtx1660).tensor


def test_a_profile_is_built_from_its_fields():
    p = _p("k", "K", 0.5, 0.3, True, 0.8, 2.0, 4.0, matmul_fp8=0.6, spread=1.5)
    assert p == Profile("k", "K", 0.5, 0.3, True, 0.8, 2.0, 4.0, matmul_fp8=0.6, spread=1.5)


def test_a_measured_matmul_rate_replaces_the_profiles_share():
    hopper = PROFILES["nvidia-hopper"]
    d = Device("h", "H", peak_tflops={"bf16": 1000.0, "fp8": 2000.0}, achievable_tflops={"bf16": 800.0})
    assert matmul_share(d, hopper, "bf16") == (0.8, "H's measured 800 of 1,000 TFLOPS")
    assert matmul_share(d, hopper, "fp16") == (0.8, "H's measured 800 of 1,000 TFLOPS")
    # no measured FP8 rate: the profile's FP8 share
    assert matmul_share(d, hopper, "fp8") == (0.709, hopper.label)
    fp8 = replace(d, achievable_tflops={"fp8": 1500.0})
    assert matmul_share(fp8, hopper, "fp8")[0] == pytest.approx(0.75)
    # a measurement above the datasheet is held at 99%
    assert matmul_share(replace(d, achievable_tflops={"bf16": 1200.0}), hopper, "bf16")[0] == 0.99
    # the BF16 measurement over the FP16 peak when no BF16 peak is stated
    fp16 = Device("g", "G", peak_tflops={"fp16": 400.0}, achievable_tflops={"bf16": 300.0})
    assert matmul_share(fp16, hopper, "bf16")[0] == pytest.approx(0.75)
    # a profile without an FP8 share uses its 16-bit share; without a peak the measurement is unusable
    ampere = PROFILES["nvidia-ampere-dc"]
    assert matmul_share(Device("a", "A"), ampere, "fp8") == (0.869, ampere.label)
    assert matmul_share(Device("a", "A", achievable_tflops={"bf16": 5.0}), ampere, "bf16") == (0.869, ampere.label)


# =========================================================================== planner.py

W10 = Workload(params=1e9, seq_len=10)
# a device that multiplies at 1 TFLOP/s and streams 100 GB/s, with no per-kernel cost
RATES = Rates(1e12, 1e12, 1e12, 1e11, 0.0, 0.0, True, PROFILES["generic"], "assumed")
# half of what may overlap hides, a quarter of the tensor-parallel and half of the expert traffic; no kernels
# and no step overhead
CASE = P.Case(ew_factor=1.0, kernels_per_layer=0.0, overlap=0.5, tp_overlap=0.25, ep_overlap=0.5, overhead_share=0.0)


def _topo(devices: int = 8, per_node: int = 8, latency: float = 0.0) -> Topology:
    """Nodes of `per_node` devices on 100 GB/s links, each node with 10 GB/s to the network."""
    return Topology(devices, per_node, max(1, devices // per_node), per_node, 100.0, latency, 10.0, latency, 1,
                    "NVL", "IB" if devices > per_node else "", False, False)


def _ctx(w: Workload = W10, s: Shape | None = None, topo: Topology | None = None, case: P.Case = CASE,
         rates: Rates = RATES, batch: float = 1000.0, capacity: float = 1e9) -> P.Context:
    return P.Context(w, s or _shape(), Device("d", "D"), topo or _topo(), None, rates, case, batch, capacity)


def test_each_case_takes_its_end_of_every_band():
    assert P.Case.pick(0) == P.Case(6.5, 80.0, 0.5, 0.0, 0.0, 0.12)
    assert P.Case.pick(1) == P.Case(4.5, 45.0, 0.8, 0.2, 0.3, 0.05)
    assert P.Case.pick(2) == P.Case(3.0, 30.0, 0.92, 0.5, 0.7, 0.02)


def test_tensor_parallel_sizes_divide_the_heads_and_stay_in_the_fast_domain():
    topo = _topo(16, 8)
    s = _shape(heads=8, kv_heads=2)
    assert P.tp_candidates(W10, s, topo) == [1, 2, 4, 8]  # 16 would leave the 8-device node
    assert P.tp_candidates(W10, s, _topo(4, 4)) == [1, 2, 4]
    assert P.tp_candidates(W10, _shape(heads=16, kv_heads=16), topo) == [1, 2, 4, 8]  # 16 heads, but 8 a node
    assert P.tp_candidates(W10, _shape(heads=6, kv_heads=6), topo) == [1, 2]  # 6 heads: not 4 nor 8
    assert P.tp_candidates(replace(W10, tp=3), s, topo) == [3]
    wide = Topology(64, 64, 1, 64, 100.0, 0.0, 10.0, 0.0, 1, "", "", False, False)
    assert P.tp_candidates(W10, _shape(heads=32, kv_heads=32), wide) == [1, 2, 4, 8, 16]  # at most 16
    assert P.tp_candidates(W10, _shape(heads=32, kv_heads=32), replace(wide, devices=2)) == [1, 2]
    # KV heads are split until each device holds one, then replicated: 2 KV heads allow TP 4 (4 % 2 == 0)
    assert P._divides_heads(_shape(heads=8, kv_heads=2), 4)
    assert not P._divides_heads(_shape(heads=8, kv_heads=3), 2)
    assert P._divides_heads(_shape(heads=8, kv_heads=3, attention="mla"), 2)  # MLA's latent is not split
    assert not P._divides_heads(_shape(heads=6, kv_heads=6), 4)


def test_context_parallelism_only_for_long_sequences_that_it_divides():
    topo = _topo(8)
    assert P.cp_candidates(W10, _shape(), topo) == [1]
    assert P.cp_candidates(replace(W10, seq_len=16_383), _shape(), topo) == [1]
    assert P.cp_candidates(replace(W10, seq_len=16_384), _shape(), topo) == [1, 2, 4, 8]
    assert P.cp_candidates(replace(W10, seq_len=16_384), _shape(), _topo(16)) == [1, 2, 4, 8, 16]
    assert P.cp_candidates(replace(W10, seq_len=20_000), _shape(), _topo(4, 4)) == [1, 2, 4]
    assert P.cp_candidates(replace(W10, seq_len=16_386), _shape(), topo) == [1, 2]  # 16,386 = 2 × 8,193
    assert P.cp_candidates(replace(W10, cp=4), _shape(), topo) == [4]


def test_expert_parallel_sizes_divide_the_experts():
    assert P.ep_candidates(W10, _shape()) == [1]
    assert P.ep_candidates(W10, MOE) == [1, 2, 4]
    assert P.ep_candidates(W10, replace(MOE, experts=64)) == [1, 2, 4, 8, 16, 32, 64]
    assert P.ep_candidates(W10, replace(MOE, experts=6)) == [1, 2]
    assert P.ep_candidates(replace(W10, ep=8), MOE) == [8]


def test_pipeline_depths_keep_the_busiest_stage_within_ten_percent_of_the_mean():
    s = _shape(layers=20)
    # 20 layers: 3 stages would hold 7 (21 = 5% over), 6 stages 4 (24, 20% over), 7 stages 3 (21),
    # 11 stages 2 (22, 10% over: the limit)
    assert P.pp_candidates(W10, s, 64) == [1, 2, 3, 4, 5, 7, 10, 11, 20]
    assert P.pp_candidates(W10, s, 4) == [1, 2, 3, 4]
    assert P.pp_candidates(W10, _shape(layers=4), 64) == [1, 2, 4]  # never more stages than layers
    assert P.pp_candidates(W10, _shape(layers=10), 64) == [1, 2, 5, 10]  # 3 stages of 4: 12 is 20% over
    assert P.pp_candidates(W10, _shape(layers=11), 64)[:4] == [1, 2, 3, 4]  # 12 = 9% over 11; 4 × 3 = 12
    assert P.pp_candidates(replace(W10, pp=6), s, 4) == [6]


def test_sharding_and_recomputation_options():
    assert P.shardings(W10, 1) == ["none"]
    assert P.shardings(W10, 2) == ["zero1", "zero2", "hsdp", "zero3"]
    assert P.shardings(replace(W10, sharding=""), 4) == ["zero1", "zero2", "hsdp", "zero3"]
    assert P.shardings(replace(W10, sharding="fsdp"), 4) == ["zero3"]
    assert P.shardings(replace(W10, sharding="zero2"), 1) == ["zero2"]
    assert P.recomputes(W10) == ["none", "selective", "full"]
    assert P.recomputes(replace(W10, recompute="selective")) == ["selective"]
    assert P.recomputes(replace(W10, checkpointing=True)) == ["full"]
    assert P.recomputes(replace(W10, checkpointing=False)) == ["none", "selective"]


def test_the_critical_stage_is_the_busier_of_a_full_stage_and_the_last_with_the_head():
    ctx = _ctx()
    cache: dict = {}

    def stage(layers, head, tp=1, mb=1, recompute="none", share=1.0, s=ctx.s, cp=1):
        moe_share = s.moe_layers / s.layers if s.moe else 0.0
        return stage_time(s, ctx.w, RATES, mb * 10 / cp, tp, layers, moe_share, recompute, 1.0, 0.0, head, None,
                          share)

    # one stage holds all 4 layers and the head
    assert P.critical_stage(ctx, Plan(), cache) == stage(4, True)
    # two stages of 2 layers: the last also holds the head, so it sets the pace
    assert P.critical_stage(ctx, Plan(pp=2), cache) == stage(2, True)
    # three stages hold 2, 2 and what is left (0, counted as 1 layer) with the head
    three = P.critical_stage(ctx, Plan(pp=3), cache)
    assert three == max(stage(2, False), stage(1, True), key=lambda t: t.total)
    # a head-heavy model (vocabulary 100,000) makes the last stage the busiest
    big = _ctx(s=_shape(vocab=100_000))
    assert P.critical_stage(big, Plan(pp=3), {}) == stage(1, True, s=big.s)
    # TP2, micro-batch 2, CP2 (10 tokens), full recomputation of half the layers
    plan = Plan(tp=2, cp=2, micro_batch=2, recompute="full", recompute_share=0.5)
    assert P.critical_stage(ctx, plan, cache) == stage(4, True, tp=2, mb=2, recompute="full", share=0.5, cp=2)
    # the result is remembered per split; MoE layers are averaged in by their share (3 of 4)
    assert P.critical_stage(ctx, Plan(pp=2), cache) is P.critical_stage(ctx, Plan(pp=2, dp=4), cache)
    moe = _ctx(s=MOE)
    assert P.critical_stage(moe, Plan(), {}) == stage(4, True, s=MOE)
    # two stages recomputing half their layers: the last (with the head) is the busier, recomputed too
    half = Plan(pp=2, recompute="full", recompute_share=0.5)
    assert P.critical_stage(ctx, half, {}) == stage(2, True, recompute="full", share=0.5)
    # without a vocabulary the head costs nothing: three stages of 2, 2 and 1 layers, a full one is the busiest
    headless = _ctx(s=_shape(vocab=None))
    three = Plan(pp=3, recompute="full", recompute_share=0.5)
    assert P.critical_stage(headless, three, {}) == stage(2, False, recompute="full", share=0.5, s=headless.s)
    assert P.critical_stage(headless, Plan(pp=3), {}) == stage(2, False, s=headless.s)


def test_tensor_parallel_all_reduces_four_per_layer_and_two_more_when_recomputed():
    ctx = _ctx()
    st = StageTime(1.0, 2.0, 0.0, 0.0, 0.0, 0.0)
    # 10 tokens × 8 wide × 2 bytes = 160 bytes; a ring of 2 moves 2·½·160 over 100 GB/s = 1.6 ns;
    # 4 per layer × 4 layers, a quarter hidden
    assert P._layer_comm(ctx, Plan(tp=2), st) == pytest.approx((4 * 4 * 1.6e-9 * 0.75, 0.0, 0.0, 0.0))
    assert P._layer_comm(ctx, Plan(tp=2, recompute="full", recompute_share=0.5), st)[0] == \
        pytest.approx(5 * 4 * 1.6e-9 * 0.75)
    assert P._layer_comm(ctx, Plan(tp=2, recompute="selective"), st)[0] == pytest.approx(4 * 4 * 1.6e-9 * 0.75)
    assert P._layer_comm(ctx, Plan(tp=2, pp=2), st)[0] == pytest.approx(4 * 2 * 1.6e-9 * 0.75)  # 2 layers a stage
    assert P._layer_comm(ctx, Plan(tp=2, micro_batch=3), st)[0] == pytest.approx(3 * 4 * 4 * 1.6e-9 * 0.75)
    assert P._layer_comm(ctx, Plan(), st) == (0.0, 0.0, 0.0, 0.0)
    # TP8 fills the 8-device node: a ring of 8 over its links moves 2·7/8 × 160 bytes
    assert P._layer_comm(ctx, Plan(tp=8), st)[0] == pytest.approx(4 * 4 * (2 * 7 / 8 * 160 / 1e11) * 0.75)


def test_context_parallel_gathers_keys_and_values_behind_attention():
    ctx = _ctx()
    # CP2: 5 tokens each, K and V 2 × 4 wide × 2 bytes = 80 bytes; gathering 2 × 80 over a ring of 2
    # moves 80 bytes: 0.8 ns, 3 per layer × 4 layers = 9.6 ns
    raw = 3 * 4 * 0.8e-9
    assert P._layer_comm(ctx, Plan(cp=2), StageTime(1, 1, 0, 0.0, 0, 0))[1] == pytest.approx(raw)
    # half of it may hide behind the attention: 2 ns of attention hide 1 ns
    assert P._layer_comm(ctx, Plan(cp=2), StageTime(1, 1, 0, 2e-9, 0, 0))[1] == pytest.approx(raw - 1e-9)
    # but never more than half of it
    assert P._layer_comm(ctx, Plan(cp=2), StageTime(1, 1, 0, 1.0, 0, 0))[1] == pytest.approx(raw / 2)


def test_expert_parallel_all_to_all_four_times_per_moe_layer():
    st = StageTime(1.0, 2.0, 0.0, 0.0, 0.0, 0.0)
    # 10 tokens × 1 active expert × 8 wide × 2 bytes = 160 bytes; EP2 sends half to the other rank:
    # 0.8 ns; 4 per MoE layer × 3 MoE layers, half hidden
    assert P._layer_comm(_ctx(s=MOE), Plan(ep=2, dp=2), st)[2] == pytest.approx(4 * 3 * 0.8e-9 * 0.5)
    # TP2 halves each rank's share; PP2 leaves 2 layers, 1.5 of them MoE layers
    assert P._layer_comm(_ctx(s=MOE), Plan(ep=2, dp=2, tp=2), st)[2] == pytest.approx(4 * 3 * 0.4e-9 * 0.5)
    assert P._layer_comm(_ctx(s=MOE), Plan(ep=2, dp=2, pp=2), st)[2] == pytest.approx(4 * 1.5 * 0.8e-9 * 0.5)
    assert P._layer_comm(_ctx(), Plan(ep=2, dp=2), st)[2] == 0.0  # a dense model has no experts to reach
    # two routed experts a token send twice the bytes
    two = replace(MOE, experts_active=2)
    assert P._layer_comm(_ctx(s=two), Plan(ep=2, dp=2), st)[2] == pytest.approx(4 * 3 * 1.6e-9 * 0.5)
    # EP8 with CP2 between the expert ranks on 2 nodes: 4 of the 8 ranks in each node, so half of each
    # rank's 80 bytes (5 tokens) leaves through the node's 10 GB/s shared by its 8 devices: 3.2e-8 s
    eight = replace(MOE, experts=8)
    got = P._layer_comm(_ctx(s=eight, topo=_topo(16)), Plan(cp=2, ep=8, dp=4), st)[2]
    assert got == pytest.approx(4 * 3 * (8 * 40 / 1e10) * 0.5)


def test_pipeline_stages_send_activations_forward_and_gradients_back():
    st = StageTime(1.0, 2.0, 0.0, 0.0, 0.0, 0.0)
    # 160 bytes to the neighbouring stage over the node's link (1.6 ns), forward and backward
    assert P._layer_comm(_ctx(), Plan(pp=2), st)[3] == pytest.approx(2 * 1.6e-9)
    assert P._layer_comm(_ctx(), Plan(pp=2, vpp=2), st)[3] == pytest.approx(4 * 1.6e-9)  # each virtual stage
    assert P._layer_comm(_ctx(), Plan(pp=2, tp=2), st)[3] == pytest.approx(2 * 0.8e-9)  # sequence-parallel share
    # 4 replicas fill half the node: the next stage is still in it
    assert P._layer_comm(_ctx(topo=_topo(16)), Plan(pp=2, dp=4), st)[3] == pytest.approx(2 * 1.6e-9)
    # 8 replicas fill the node: the next stage is on the other one, and its 8 devices share 10 GB/s
    assert P._layer_comm(_ctx(topo=_topo(16)), Plan(pp=2, dp=8), st)[3] == pytest.approx(2 * 8 * 160 / 1e10)
    # CP4 × DP2 fill the node too (2.5 tokens a rank: 40 bytes)
    assert P._layer_comm(_ctx(topo=_topo(16)), Plan(pp=2, cp=4, dp=2), st)[3] == pytest.approx(2 * 8 * 40 / 1e10)


def test_gradient_bytes_follow_the_split_and_the_precision():
    moe = replace(MOE, params=10_000.0)  # 4,608 expert and 5,392 dense parameters
    assert P._grad_bytes(_ctx(s=moe), Plan()) == pytest.approx((5392 * 2, 4608 * 2))
    assert P._grad_bytes(_ctx(s=moe), Plan(tp=2, pp=2)) == pytest.approx((5392 / 2, 4608 / 2))
    # EP4: experts split 4 ways and not again by TP
    assert P._grad_bytes(_ctx(s=moe), Plan(tp=2, ep=4)) == pytest.approx((5392, 4608 / 2))
    fp32 = replace(W10, precision="fp32")
    assert P._grad_bytes(_ctx(w=fp32, s=moe), Plan()) == pytest.approx((5392 * 4, 4608 * 4))
    assert P._grad_bytes(_ctx(w=replace(W10, precision="tf32"), s=moe), Plan())[0] == pytest.approx(5392 * 4)
    # LoRA exchanges the adapters' gradients only
    lora = Workload(kind="finetune", method="lora", lora_fraction=0.01, seq_len=10)
    assert P._grad_bytes(_ctx(w=lora, s=moe), Plan()) == pytest.approx((5392 * 0.02, 4608 * 0.02))
    assert P._grad_bytes(_ctx(w=replace(lora, method="qlora"), s=moe), Plan())[0] == pytest.approx(5392 * 0.02)
    assert P._grad_bytes(_ctx(w=replace(lora, method="full"), s=moe), Plan())[0] == pytest.approx(5392 * 2)
    assert P._grad_bytes(_ctx(w=replace(lora, kind="train"), s=moe), Plan())[0] == pytest.approx(5392 * 2)


# 1e9 dense parameters: 2 GB of 16-bit gradients; backward 10 ms and forward 4 ms per micro-batch
STAGE = StageTime(0.004, 0.01, 0.0, 0.0, 0.0, 0.0)


def test_data_parallel_traffic_of_each_zero_stage_on_one_node():
    ctx = _ctx()

    def dp(sharding, m=3):
        return P._data_parallel(ctx, Plan(dp=8, micro_batches=m, sharding=sharding), STAGE)

    # a ring all-reduce over 8 moves 2·7/8 × 2 GB over 100 GB/s: 35 ms; half the backward (5 ms) hides
    # behind it, but no more than half of it
    assert dp("none") == pytest.approx((0.030, 0.035))
    # ZeRO-1 (Megatron's distributed optimizer) moves the same 35 ms as a reduce-scatter behind the
    # last backward (12.5 ms exposed) and a gather of the updated weights behind the next forward
    # (17.5 - 2 = 15.5 ms exposed): 28 ms, less than the all-reduce, and whatever the micro-batches
    assert dp("zero1") == pytest.approx((0.0125 + 0.0155, 0.035))
    assert dp("zero1", m=1) == dp("zero1", m=5) == dp("zero2", m=1)
    # ZeRO-2: a reduce-scatter (17.5 ms) per micro-batch, 5 ms of each hidden, and one weight gather
    # behind a forward pass (2 ms hidden): 3 × 12.5 + 15.5 ms exposed; 4 × 17.5 ms in all
    assert dp("zero2") == pytest.approx((3 * 0.0125 + 0.0155, 0.07))
    # ZeRO-3: per micro-batch a gather behind the forward (15.5 ms), gather and reduce-scatter behind
    # the backward (35 - 5 = 30 ms), and the first layer's gather (17.5 / 4 layers) exposed
    assert dp("zero3") == pytest.approx((3 * (0.0155 + 0.030 + 0.004375), 9 * 0.0175))
    # hybrid sharding inside one node is ZeRO-3 without the first-layer term
    assert dp("hsdp") == pytest.approx((3 * (0.0155 + 0.030), 9 * 0.0175))
    # one replica exchanges nothing
    assert P._data_parallel(ctx, Plan(sharding="zero3"), STAGE) == (0.0, 0.0)
    # two context-parallel ranks reduce their gradients like two replicas
    assert P._data_parallel(ctx, Plan(cp=2, sharding="zero1"), STAGE)[1] == pytest.approx(0.02)
    # a one-layer model's first gather is all of the gather: 17.5 ms exposed
    one = _ctx(s=_shape(layers=1))
    assert P._data_parallel(one, Plan(dp=8, sharding="zero3"), STAGE)[0] == pytest.approx(0.0155 + 0.030 + 0.0175)


def test_hybrid_sharding_with_one_replica_a_node_is_data_parallel_across_the_nodes():
    # TP8 × DP2 on 2 × 8: each node holds one replica, so nothing is gathered inside a node; each device
    # all-reduces its 2.5e8 bytes of gradients with its peer: 8 × 250 MB leave each node, 0.2 s at 10 GB/s
    ctx = _ctx(topo=_topo(16))
    exposed, total = P._data_parallel(ctx, Plan(tp=8, dp=2, micro_batches=3, sharding="hsdp"), STAGE)
    assert total == pytest.approx(0.2)
    assert exposed == pytest.approx(0.2 - 0.5 * 0.01)  # half the backward pass hides part of it
    # experts count too: 1,348 dense and 1,152 expert bytes a device (TP8 splits both)
    moe = _ctx(s=replace(MOE, params=10_000.0), topo=_topo(16))
    assert P._data_parallel(moe, Plan(tp=8, dp=2, sharding="hsdp"), STAGE)[1] == pytest.approx(8 * 2500 / 1e10)
    # inside one node: the gathers of 10,784 dense and 9,216 expert bytes, 3 a micro-batch
    one = _ctx(s=replace(MOE, params=10_000.0))
    assert P._data_parallel(one, Plan(dp=8, sharding="hsdp"), STAGE)[1] == pytest.approx(3 * 7 / 8 * 20_000 / 1e11)
    # sharded weights are gathered a layer at a time (the FSDP unit), not in 25 MB buckets: each of
    # the 4 layers' gathers pays the ring's 7 hops, whatever the bytes (2 GB would be 80 buckets)
    lat = _ctx(topo=_topo(8, latency=1e-6))
    ag = 7 / 8 * 2e9 / 1e11 + 4 * 7 * 1e-6
    assert P._data_parallel(lat, Plan(dp=8, sharding="hsdp"), STAGE)[1] == pytest.approx(3 * ag)
    assert P._data_parallel(lat, Plan(dp=8, sharding="zero3"), STAGE)[1] == pytest.approx(3 * ag)
    # a pipeline stage gathers only its own layers: 2 of the 4 on each of 2 stages
    half = 7 / 8 * 2e9 / 2 / 1e11 + 2 * 7 * 1e-6
    assert P._data_parallel(lat, Plan(dp=8, pp=2, sharding="zero3"), STAGE)[1] == pytest.approx(3 * half)
    # plain data parallelism keeps the gradient buckets: 80 of them, 2 hops each on a ring of 2
    assert P._data_parallel(lat, Plan(dp=2, sharding="none"), STAGE)[1] == pytest.approx(2e9 / 1e11 + 80 * 2e-6)


def test_data_parallel_traffic_across_two_nodes_goes_through_each_nodes_nics():
    ctx = _ctx(topo=_topo(16))
    # DDP over 2 × 8: each node's 8 devices send their 1/8 share of 2 GB over the 10 GB/s NICs: 0.2 s
    assert P._data_parallel(ctx, Plan(dp=16, sharding="none"), STAGE)[1] == pytest.approx(0.2)
    # hybrid sharding: 3 gathers of 2 GB inside the node per micro-batch (7/8 × 2 GB / 100 GB/s each)
    # plus the all-reduce of the shards across the nodes
    exposed, total = P._data_parallel(ctx, Plan(dp=16, micro_batches=3, sharding="hsdp"), STAGE)
    assert total > 9 * 0.0175


def test_hybrid_sharding_sends_the_whole_gradient_across_nodes_as_ddp_does():
    # After the reduce-scatter inside a node each of its 8 devices holds a distinct 1/8 shard (250 MB)
    # and all-reduces it with its peer on the other node: 8 × 250 MB = 2 GB leave each node, as with
    # DDP, over 10 GB/s: 0.2 s on top of the 9 gathers inside the node.
    ctx = _ctx(topo=_topo(16))
    total = P._data_parallel(ctx, Plan(dp=16, micro_batches=3, sharding="hsdp"), STAGE)[1]
    assert total == pytest.approx(9 * 0.0175 + 0.2)


def test_every_gradient_bucket_pays_the_collectives_latency():
    # 1 µs per hop: a ring of 2 takes 2 × 1 hop per message; 2 GB in 25 MB buckets is 80 messages
    ctx = _ctx(topo=_topo(8, latency=1e-6))
    total = P._data_parallel(ctx, Plan(dp=2, sharding="zero1"), STAGE)[1]
    assert total == pytest.approx(2 * 0.5 * 2e9 / 1e11 + 80 * 2e-6)
    tiny = _ctx(s=_shape(params=1e6), topo=_topo(8, latency=1e-6))  # 2 MB: still one message
    assert P._data_parallel(tiny, Plan(dp=2, sharding="zero1"), STAGE)[1] == pytest.approx(2e6 / 1e11 + 2e-6)


def test_expert_gradients_are_reduced_over_the_replicas_that_hold_the_same_experts():
    moe = replace(MOE, params=10_000.0)  # 5,392 dense and 4,608 expert parameters
    ctx = _ctx(s=moe, topo=_topo(8, latency=1e-6))
    # DP4 × EP2: dense gradients over a ring of 4 (2·¾ × 10,784 bytes + 2 × 3 hops), experts over the
    # 2 replicas of each expert (2·½ × 4,608 bytes + 2 × 1 hop)
    total = P._data_parallel(ctx, Plan(dp=4, ep=2, sharding="zero1"), STAGE)[1]
    assert total == pytest.approx(1.5 * 10_784 / 1e11 + 6e-6 + 4608 / 1e11 + 2e-6)
    flat = _ctx(s=moe)
    # EP2 over DP2: each expert has a single replica, nothing to reduce for it
    assert P._data_parallel(flat, Plan(dp=2, ep=2, sharding="zero1"), STAGE)[1] == pytest.approx(10_784 / 1e11)
    # CP2 × DP2 with EP2: the dense gradients over 4 ranks, each expert over 2
    assert P._data_parallel(flat, Plan(cp=2, dp=2, ep=2, sharding="zero1"), STAGE)[1] == pytest.approx(
        1.5 * 10_784 / 1e11 + 4608 / 1e11)
    # DP16 × EP2 on 2 nodes: each expert's 8 replicas sit 4 to a node, so its reduction crosses the
    # network too: 8 devices × 4,608/4 bytes; the dense one 8 × 10,784/8, both at 10 GB/s
    wide = _ctx(s=moe, topo=_topo(16))
    assert P._data_parallel(wide, Plan(dp=16, ep=2, sharding="zero1"), STAGE)[1] == pytest.approx(
        8 * 10_784 / 8 / 1e10 + 8 * 4608 / 4 / 1e10)
    # buckets count the expert gradients too: 4e8 bytes of a 2e8-parameter MoE are 16 buckets
    big = _shape(params=2e8, d_model=1024, expert_ffn_dim=1024, experts=8, experts_active=1, dense_layers=1)
    assert MD.expert_params(big) == 3 * 8 * 3 * 1024 * 1024
    dense_b, expert_b = 2 * (2e8 - MD.expert_params(big)), 2 * MD.expert_params(big)
    got = P._data_parallel(_ctx(s=big, topo=_topo(8, latency=1e-6)), Plan(dp=2, sharding="zero1"), STAGE)[1]
    assert got == pytest.approx(dense_b / 1e11 + 16 * 2e-6 + expert_b / 1e11 + 2e-6)


def test_a_step_is_micro_batches_plus_the_bubble_exposed_traffic_optimizer_and_overhead():
    case = replace(CASE, overhead_share=0.1)
    ctx = _ctx(case=case, topo=_topo(8))
    plan = Plan(tp=2, pp=2, vpp=2, dp=2, micro_batch=1, micro_batches=4, sharding="zero1")
    r = P.evaluate(ctx, plan, {})
    st = P.critical_stage(ctx, plan, {})
    tp, cp, ep, pp = P._layer_comm(ctx, plan, st)
    per_mb = st.total + tp + cp + ep + pp
    assert r.stage == st and r.compute_s == pytest.approx(4 * st.total)
    assert r.bubble_s == pytest.approx((2 - 1) / 2 * per_mb)  # (p − 1)/v micro-batches' time
    assert (r.tp_s, r.pp_s, r.cp_s, r.ep_s) == pytest.approx((4 * tp, 4 * pp, 0.0, 0.0))
    dp_exposed, dp_total = P._data_parallel(ctx, plan, st)
    assert (r.dp_s, r.dp_total_s) == pytest.approx((dp_exposed, dp_total))
    # Adam over 1e9 / (TP2 · PP2) parameters sharded over 2 replicas, 28 bytes each at 100 GB/s
    assert r.optimizer_s == pytest.approx(1e9 / 4 / 2 * 28 / 1e11)
    core = 4 * per_mb + r.bubble_s + dp_exposed + r.optimizer_s
    assert r.overhead_s == pytest.approx(0.1 * core) and r.step_s == pytest.approx(1.1 * core)
    # 4 micro-batches × 2 replicas × 1 sequence × 10 tokens
    assert r.tokens_per_step == 80.0 and r.tokens_per_s == pytest.approx(80 / r.step_s)
    b = r.breakdown()
    assert b["pipeline_bubble_s"] == r.bubble_s and b["gradient_exchange_s"] == r.dp_total_s
    assert b["gradient_exchange_exposed_s"] == r.dp_s and b["step_s"] == r.step_s
    assert set(b) == {"compute_s", "pipeline_bubble_s", "tensor_parallel_s", "context_parallel_s",
                      "expert_parallel_s", "pipeline_transfer_s", "gradient_exchange_s",
                      "gradient_exchange_exposed_s", "optimizer_s", "overhead_s", "step_s"}
    assert r.memory_gb == {} and P.evaluate(ctx, plan, {}, {"w": 1.0}).memory_gb == {"w": 1.0}
    # one stage has no bubble
    assert P.evaluate(ctx, replace(plan, pp=1, vpp=1), {}).bubble_s == 0.0
    # context- and expert-parallel traffic lengthens every micro-batch
    moe = _ctx(s=replace(MOE, params=10_000.0), topo=_topo(8))
    plan = Plan(cp=2, ep=2, dp=2, micro_batches=3, sharding="zero1")
    r = P.evaluate(moe, plan, {})
    st = P.critical_stage(moe, plan, {})
    _tp, cp, ep, _pp = P._layer_comm(moe, plan, st)
    assert cp > 0 and ep > 0 and (r.cp_s, r.ep_s) == pytest.approx((3 * cp, 3 * ep))
    assert r.step_s == pytest.approx(3 * (st.total + cp + ep) + r.dp_s + r.optimizer_s, rel=1e-9)


def test_the_optimizer_step_covers_the_share_of_parameters_each_device_updates():
    ctx = _ctx(topo=_topo(16))

    def opt(**kw):
        return P.evaluate(ctx, Plan(**kw), {}).optimizer_s / (28 / 1e11)

    assert opt() == pytest.approx(1e9)
    assert opt(dp=4) == pytest.approx(1e9)  # plain data parallel: every replica updates everything
    assert opt(dp=4, sharding="zero1") == pytest.approx(1e9 / 4)
    assert opt(dp=2, cp=2, sharding="zero1") == pytest.approx(1e9 / 4)
    assert opt(tp=2, dp=16, sharding="hsdp") == pytest.approx(1e9 / 2 / 4)  # shards only inside a node
    assert opt(dp=2, sharding="hsdp") == pytest.approx(1e9 / 2)
    assert opt(dp=16, sharding="zero1") == pytest.approx(1e9 / 16)  # ZeRO shards over every replica
    assert opt(tp=8, dp=2, sharding="hsdp") == pytest.approx(1e9 / 8)  # one replica a node: nothing sharded
    train_lora = _ctx(w=Workload(kind="train", method="lora", lora_fraction=0.01, seq_len=10))
    assert P.evaluate(train_lora, Plan(), {}).optimizer_s == pytest.approx(1e9 * 28 / 1e11)  # LoRA is a fine-tune
    lora = _ctx(w=Workload(kind="finetune", method="lora", lora_fraction=0.01, seq_len=10))
    assert P.evaluate(lora, Plan(), {}).optimizer_s == pytest.approx(1e7 * 28 / 1e11)
    qlora = _ctx(w=Workload(kind="finetune", method="qlora", lora_fraction=0.01, seq_len=10))
    assert P.evaluate(qlora, Plan(), {}).optimizer_s == pytest.approx(1e7 * 28 / 1e11)


def test_exposed_seconds_are_charged_to_the_link_that_carries_them():
    two = _topo(16)
    ctx = _ctx(topo=two)
    r = P.StepResult(Plan(tp=2, pp=2, dp=4, cp=1), 1.0, 1.0, 0, 0, tp_s=1.0, cp_s=0.0, ep_s=0.0, pp_s=2.0,
                     dp_s=4.0, dp_total_s=4.0, optimizer_s=0.0, overhead_s=0.0)
    # TP inside the node; PP crosses (2·4·2 = 16 > 8); DP4 with TP2 fills one node
    assert P._link_seconds(ctx, r.plan, r) == {"NVL": 1.0 + 4.0, "IB": 2.0}
    r.plan = Plan(tp=2, pp=2, dp=2)
    assert P._link_seconds(ctx, r.plan, r) == {"NVL": 7.0}
    r.plan = Plan(dp=16, cp=1)  # 16 replicas span both nodes, and so would a next stage
    assert P._link_seconds(ctx, r.plan, r) == {"NVL": 1.0, "IB": 2.0 + 4.0}
    r = P.StepResult(Plan(tp=8, cp=2, ep=2, dp=1), 1.0, 1.0, 0, 0, 0.0, cp_s=3.0, ep_s=5.0, pp_s=0.0, dp_s=0.0,
                     dp_total_s=0.0, optimizer_s=0.0, overhead_s=0.0)
    assert P._link_seconds(ctx, r.plan, r) == {"IB": 3.0 + 5.0}  # CP and EP beyond TP8 leave the node
    r.plan = Plan(tp=2, cp=2, ep=2)
    assert P._link_seconds(ctx, r.plan, r) == {"NVL": 8.0}
    # TP2 × CP2 × DP2 × 2 = 16 ranks between stages: the next stage is on the other node
    r = P.StepResult(Plan(tp=2, cp=2, pp=2, dp=2), 1.0, 1.0, 0, 0, 1.0, cp_s=3.0, ep_s=0.0, pp_s=2.0, dp_s=4.0,
                     dp_total_s=4.0, optimizer_s=0.0, overhead_s=0.0)
    assert P._link_seconds(ctx, r.plan, r) == {"NVL": 1.0 + 3.0 + 4.0, "IB": 2.0}
    # CP2 × DP8 = 16 replicas of the gradients: their exchange crosses the network
    r = P.StepResult(Plan(cp=2, dp=8), 1.0, 1.0, 0, 0, 0.0, cp_s=3.0, ep_s=0.0, pp_s=0.0, dp_s=4.0, dp_total_s=4.0,
                     optimizer_s=0.0, overhead_s=0.0)
    assert P._link_seconds(ctx, r.plan, r) == {"NVL": 3.0, "IB": 4.0}
    # one device's node has no intra link: its exposed seconds go to the network's name
    lone = _ctx(topo=replace(two, intra_name=""))
    r = P.StepResult(Plan(tp=2), 1.0, 1.0, 0, 0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert P._link_seconds(lone, r.plan, r) == {"IB": 1.0}


def test_a_plan_fits_when_its_parts_less_the_runtime_fit_the_usable_capacity():
    ctx = _ctx(capacity=16.0)  # 1e9 parameters: 16 GB of states in mixed precision with Adam
    ok, parts = P.fits(ctx, Plan())
    assert parts == training_parts(W10, ctx.s, ctx.device, Plan(), True, 8)
    assert total_gb(parts) > 16.0 and not ok  # plus activations and logits
    assert P.fits(ctx, Plan(dp=2, sharding="zero1"))[0]  # optimizer state halved: 10 GB
    assert P.fits(replace(ctx, capacity_gb=total_gb(parts)), Plan())[0]  # exactly full still fits
    # hybrid sharding shards inside the node the context knows of
    assert P.fits(ctx, Plan(dp=2, sharding="hsdp"))[1] == training_parts(W10, ctx.s, ctx.device,
                                                                         Plan(dp=2, sharding="hsdp"), True, 8)


def test_the_batch_sets_the_micro_batches_and_the_data_parallel_sizes_to_try():
    ctx = _ctx(batch=1000.0)  # 100 sequences of 10 tokens
    assert P._micro_batches(ctx, 8, 1) == 12  # 100 // 8
    assert P._micro_batches(ctx, 8, 4) == 3
    assert P._micro_batches(ctx, 200, 1) == 1  # never none
    assert P.dp_candidates(W10, 8, 100) == [8, 7, 6, 5, 4, 3, 2, 1]
    assert P.dp_candidates(W10, 8, 3) == [3, 2, 1]  # no more replicas than sequences
    assert P.dp_candidates(W10, 0, 100) == []
    assert P.dp_candidates(W10, 64, 1000) == list(range(64, 0, -1))
    assert P.dp_candidates(W10, 200, 1000) == [200, 100, 50, 25, 12]  # above 64: four halvings
    assert P.dp_candidates(W10, 65, 1000) == [65, 32, 16, 8, 4]
    assert P.dp_candidates(replace(W10, dp=3), 200, 1000) == [3]
    # micro-batches that split a replica's sequences evenly, and powers of two
    assert P.micro_batch_sizes(ctx, 1) == [1, 2, 4, 5, 8, 10, 16]  # 100 sequences
    assert P.micro_batch_sizes(ctx, 8) == [1, 2, 3, 4, 6, 8, 12]  # 12 sequences
    assert P.micro_batch_sizes(ctx, 200) == [1]
    assert P.micro_batch_sizes(_ctx(batch=170.0), 1) == [1, 2, 4, 8, 16]  # 17 sequences: powers of two
    assert P.micro_batch_sizes(replace(ctx, w=replace(W10, micro_batch=3)), 8) == [3]


def test_interleaving_is_tried_when_each_stage_holds_enough_layers_and_micro_batches():
    ctx = _ctx(s=_shape(layers=16), batch=1000.0)
    # PP2 of 16 layers (8 a stage), 100 sequences: every micro-batch size gets v1 and v8
    got = list(P._variants(ctx, 1, 1, 1, 2, 1))
    assert got[:4] == [(1, 100, 1), (1, 100, 8), (2, 50, 1), (2, 50, 8)]
    assert got[-2:] == [(16, 6, 1), (16, 6, 8)]
    # PP4 of 4 layers: 1 a stage, nothing to interleave; PP4 of 16 layers but 3 micro-batches: no room
    assert list(P._variants(_ctx(batch=40.0), 1, 1, 1, 4, 1)) == [(1, 4, 1), (2, 2, 1), (4, 1, 1)]
    assert (4, 1, 4) not in list(P._variants(replace(ctx, global_batch=40.0), 1, 1, 1, 4, 1))
    assert list(P._variants(replace(ctx, global_batch=40.0), 1, 1, 1, 4, 1))[:2] == [(1, 4, 1), (1, 4, 4)]
    # 12 layers on PP3 (4 a stage): at most v4; PP1 never interleaves
    assert {v for _mb, _m, v in P._variants(_ctx(s=_shape(layers=12)), 1, 1, 1, 3, 1)} == {1, 4}
    assert {v for _mb, _m, v in P._variants(ctx, 1, 1, 1, 1, 1)} == {1}
    assert {v for _mb, _m, v in P._variants(_ctx(s=_shape(layers=6)), 1, 1, 1, 3, 1)} == {1, 2}
    pinned = replace(ctx, w=replace(W10, vpp=3, micro_batch=2))
    assert list(P._variants(pinned, 1, 1, 1, 2, 1)) == [(2, 50, 3)]


def test_the_splits_tried_use_no_more_devices_than_there_are():
    ctx = _ctx(topo=_topo(8), batch=1000.0)
    splits = set(P._shapes(ctx))
    # TP 1 or 2 (2 heads), PP 1, 2 or 4 (4 layers), every DP that fits what is left
    expect = {(tp, 1, 1, pp, dp) for tp in (1, 2) for pp in (1, 2, 4) for dp in range(1, 8 // (tp * pp) + 1)}
    assert splits == expect
    # a pinned data-parallel size leaves room for TP or PP of at most 2
    assert set(P._shapes(_ctx(w=replace(W10, dp=4)))) == {(1, 1, 1, 1, 4), (1, 1, 1, 2, 4), (2, 1, 1, 1, 4)}
    # a batch of 3 sequences allows at most 3 replicas; 5 tokens still allow one
    assert max(dp for *_, dp in P._shapes(_ctx(batch=30.0))) == 3
    assert {dp for *_, dp in P._shapes(_ctx(batch=5.0))} == {1}
    # experts split over the replicas they divide: EP2 needs an even DP, EP4 a DP of 4 or 8
    moe = set(P._shapes(_ctx(s=MOE, batch=1000.0)))
    assert {(ep, dp) for tp, cp, ep, pp, dp in moe if tp == 1 and pp == 1} == \
        {(1, d) for d in range(1, 9)} | {(2, d) for d in (2, 4, 6, 8)} | {(4, 4), (4, 8)}
    # context parallelism splits the sequence: CP2 × DP4 and CP4 × DP2 on 8 devices
    long = _ctx(w=replace(W10, seq_len=16_384), batch=16_384 * 8.0)
    assert {(cp, dp) for tp, cp, ep, pp, dp in P._shapes(long) if tp == 1 and pp == 1 and dp * cp == 8} == \
        {(1, 8), (2, 4), (4, 2), (8, 1)}
    # experts split over the context-parallel ranks as well: EP4 over CP2 × DP2
    long_moe = _ctx(w=replace(W10, seq_len=16_384), s=MOE, batch=16_384 * 8.0)
    assert (1, 2, 4, 1, 2) in set(P._shapes(long_moe))


def _result(label_plan: Plan, tokens_per_s: float) -> P.StepResult:
    return P.StepResult(label_plan, tokens_per_s, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)


def test_the_best_three_distinct_plans_are_kept():
    best = P._Best()
    assert not best.full and not best.hopeless(0.0)
    best.add(_result(Plan(dp=1), 10.0))
    best.add(_result(Plan(dp=2), 30.0))
    best.add(_result(Plan(dp=2), 20.0))  # the same plan slower: the faster stays
    assert [r.tokens_per_s for r in best.items] == [30.0, 10.0]
    best.add(_result(Plan(dp=3), 20.0))
    assert best.full and best.floor == 10.0
    assert [r.plan.dp for r in best.items] == [2, 3, 1]
    best.add(_result(Plan(dp=4), 10.0))  # no better than the third: ignored
    assert [r.plan.dp for r in best.items] == [2, 3, 1]
    best.add(_result(Plan(dp=1), 40.0))  # the same label faster replaces it
    assert [(r.plan.dp, r.tokens_per_s) for r in best.items] == [(1, 40.0), (2, 30.0), (3, 20.0)]
    best.add(_result(Plan(dp=6), 25.0))
    assert [r.plan.dp for r in best.items] == [1, 2, 6]
    assert best.hopeless(24.9) and not best.hopeless(25.0)


def test_the_bounds_are_the_step_with_only_the_layers_tensor_parallel_traffic_and_the_bubble():
    ctx = _ctx(s=_shape(layers=16), case=replace(CASE, overhead_share=0.1), batch=1000.0)
    cache: dict = {}
    plan = Plan(tp=2, pp=2, vpp=4, dp=2, micro_batch=2, micro_batches=25, sharding="zero1")
    st = P.critical_stage(ctx, plan, {})
    per_mb = st.total + P._layer_comm(ctx, plan, st)[0]
    assert P._per_micro_batch(ctx, 2, 1, 2, 2, "none", cache) == pytest.approx(per_mb)
    assert P._per_micro_batch(ctx, 1, 1, 2, 2, "none", cache) == pytest.approx(
        P.critical_stage(ctx, Plan(pp=2, micro_batch=2), {}).total)  # no TP: no all-reduce
    # 25 micro-batches of 2 sequences × 10 tokens on 2 replicas, with (2 − 1)/4 micro-batches of bubble
    bound = P._stage_bound(ctx, 2, 1, 2, 4, 2, 2, 25, "none", cache)
    assert bound == pytest.approx(25 * 2 * 2 * 10 / ((25 + 1 / 4) * per_mb))
    assert bound > P.evaluate(ctx, plan, {}).tokens_per_s  # nothing real is faster than the bound
    # the split's bound: the best micro-batch with no bubble, for any DP up to 2
    split = P._split_bound(ctx, 2, 1, 2, 2, "none", cache)
    assert split == pytest.approx(2 * max(mb * 10 / P._per_micro_batch(ctx, 2, 1, 2, mb, "none", {})
                                          for mb in (1, 2, 4, 8, 16)), rel=1e-6)
    for dp in (1, 2):
        for mb, m, v in P._variants(ctx, 2, 1, 1, 2, dp):
            r = P.evaluate(ctx, Plan(2, 1, 2, v, dp, 1, mb, m, "none", "zero1"), {})
            assert r.tokens_per_s < split
            assert r.tokens_per_s < P._shape_bound(ctx, 2, 1, 2, dp, "none", {})


def test_the_shape_bound_assumes_the_deepest_interleaving_the_stage_allows():
    ctx = _ctx(s=_shape(layers=16), batch=1000.0)
    # PP4 of 16 layers (4 a stage) and DP1: 100 sequences; micro-batch 16 gives 6 micro-batches,
    # interleaved ×4, so (6 + 3/4) micro-batch times
    expect = max(max(1, 100 // mb) * mb * 10 / ((max(1, 100 // mb) + 3 / 4) * P._per_micro_batch(
        ctx, 1, 1, 4, mb, "none", {})) for mb in (1, 2, 4, 8, 16))
    assert P._shape_bound(ctx, 1, 1, 4, 1, "none", {}) == pytest.approx(expect)
    # 8 layers a stage interleave ×8; 2 a stage ×2
    per = {mb: P._per_micro_batch(ctx, 1, 1, 2, mb, "none", {}) for mb in (1, 2, 4, 8, 16)}
    assert P._shape_bound(ctx, 1, 1, 2, 1, "none", {}) == pytest.approx(
        max((100 // mb) * mb * 10 / ((100 // mb + 1 / 8) * per[mb]) for mb in per))
    eight = _ctx(s=_shape(layers=16), batch=1000.0)
    per8 = {mb: P._per_micro_batch(eight, 1, 1, 8, mb, "none", {}) for mb in (1, 2, 4, 8, 16)}
    # PP8: 2 layers a stage interleave ×2, where there are at least 8 micro-batches (not with 16 a
    # micro-batch: 6 micro-batches)
    assert P._shape_bound(eight, 1, 1, 8, 1, "none", {}) == pytest.approx(
        max((100 // mb) * mb * 10 / ((100 // mb + 7 / (2 if 100 // mb >= 8 else 1)) * per8[mb]) for mb in per8))
    # too few micro-batches to interleave: 4 sequences on PP8 with micro-batch 1 leave 4 < 8
    few = replace(eight, global_batch=40.0)
    per_few = {mb: P._per_micro_batch(few, 1, 1, 8, mb, "none", {}) for mb in (1, 2, 4, 8, 16)}
    assert P._shape_bound(few, 1, 1, 8, 1, "none", {}) == pytest.approx(
        max(max(1, 4 // mb) * mb * 10 / ((max(1, 4 // mb) + 7) * per_few[mb]) for mb in per_few))
    # a pinned interleaving is used as given; PP1 has no bubble
    pinned = replace(ctx, w=replace(W10, vpp=2))
    assert P._shape_bound(pinned, 1, 1, 4, 1, "none", {}) == pytest.approx(max(
        max(1, 100 // mb) * mb * 10 / ((max(1, 100 // mb) + 3 / 2) * P._per_micro_batch(ctx, 1, 1, 4, mb, "none", {}))
        for mb in (1, 2, 4, 8, 16)))
    assert P._shape_bound(ctx, 1, 1, 1, 2, "none", {}) == pytest.approx(
        max(2 * mb * 10 / P._per_micro_batch(ctx, 1, 1, 1, mb, "none", {}) for mb in (1, 2, 4, 8, 16)))


def test_the_default_global_batch_grows_with_the_model_and_the_cluster():
    def batch(params, devices, seq=2048):
        return P.default_global_batch(Workload(params=params, seq_len=seq), devices)

    assert batch(1e9, 8) == 524_288  # 0.5M tokens for a 1B model
    assert batch(0.5e9, 8) == 524_288  # never less
    assert batch(32e9, 8) == 2_097_152  # 32^0.4 = 4 times as many
    assert batch(1024e9, 8) == 4_194_304  # 16 times, capped at 4M
    assert batch(1e9, 4096) == 4_194_304  # 1,024 tokens per device
    assert batch(1e9, 100_000) == 67_108_864  # capped at 64M
    assert batch(1e9, 8, seq=3000) == 525_000  # whole sequences: 175 of 3,000
    assert batch(1e9, 8, seq=2_000_000) == 2_000_000  # at least one sequence


# a 1.2B decoder (16 layers × 2,048, GQA 16/8 heads, SwiGLU 5,632, 32K vocabulary) on H100-like rates:
# 700 TFLOP/s GEMMs, 400 fused attention, 2.9 TB/s, 3 µs a kernel; nodes of 8 on 360 GB/s links,
# 50 GB/s a node between nodes
REAL = _shape(params=1.2e9, active_params=1.2e9, layers=16, d_model=2048, heads=16, kv_heads=8, head_dim=128,
              ffn_dim=5632, vocab=32_000)
REAL_MOE = replace(REAL, experts=8, experts_active=2, expert_ffn_dim=1408, dense_layers=2, params=2.4e9,
                   active_params=1e9)
H100ISH = Rates(700e12, 700e12, 400e12, 2.9e12, 3e-6, 5e-6, True, PROFILES["nvidia-hopper"], "assumed")


def _real(devices: int, capacity: float, seq: int = 2048, sequences: int = 16, s: Shape = REAL,
          w: Workload | None = None) -> P.Context:
    topo = Topology(devices, 8 if devices >= 8 else devices, max(1, devices // 8), min(8, devices), 360.0, 3e-6,
                    50.0, 5e-6, 1, "NVL", "IB" if devices > 8 else "", False, False)
    w = w or Workload(params=s.params, seq_len=seq)
    return P.Context(w, s, Device("d", "D"), topo, None, H100ISH, P.Case.pick(1), float(seq * sequences), capacity)


def _need(ctx: P.Context, plan: Plan) -> float:
    return total_gb(training_parts(ctx.w, ctx.s, ctx.device, plan, True, ctx.topo.domain))


def test_partial_recomputation_recomputes_the_fewest_layers_that_fit():
    ctx = _real(8, 16.0)
    mem = MemoryModel(ctx.w, REAL, True, 8)
    plan = Plan(dp=8, micro_batch=2, micro_batches=4, recompute="full", sharding="zero1")
    none, full = mem.need_gb(replace(plan, recompute_share=0.0)), mem.need_gb(plan)
    assert full < none
    # memory falls linearly with the layers recomputed: 30% of the way down needs ceil(0.3 × 16) = 5
    cap = none - 0.3 * (none - full)
    got = P._partial_recompute(mem, plan, cap, 16)
    assert got.recompute_share == 5 / 16
    assert mem.need_gb(got) <= cap < mem.need_gb(replace(plan, recompute_share=4 / 16))
    # room for everything: still at least one layer, as the plan asks for recomputation
    assert P._partial_recompute(mem, plan, none + 1.0, 16).recompute_share == 1 / 16
    # no room even recomputing all layers: the plan as it was
    assert P._partial_recompute(mem, plan, full - 0.1, 16) == plan
    # one layer a stage and one micro-batch in flight: recomputing saves nothing (the layer being
    # recomputed holds its activations again), so the plan is left as it is
    one = Plan(pp=16, micro_batch=1, micro_batches=1, recompute="full")
    assert P._partial_recompute(mem, one, 100.0, 1) == one


def _unpruned(monkeypatch, ctx: P.Context) -> P.SearchResult:
    with monkeypatch.context() as m:
        for name in ("_stage_bound", "_split_bound", "_shape_bound"):
            m.setattr(P, name, lambda *a, **k: math.inf)
        return P.search(ctx)


def _labels(r: P.SearchResult) -> list[tuple[str, float]]:
    return [(x.plan.short(), round(x.tokens_per_s, 3)) for x in [r.best, *r.alternatives]]


@pytest.mark.parametrize("ctx", [
    _real(4, 6.0), _real(8, 16.0), _real(8, 20.0, s=REAL_MOE), _real(4, 40.0, seq=16_384, sequences=4),
    _real(8, 6.0, sequences=8), _real(16, 12.0), _real(4, 6.0, w=Workload(params=1.2e9, seq_len=2048, recompute="full")),
    _real(32, 3.0, sequences=4)],
    ids=["tight", "roomy", "moe", "long", "tiny-batch", "two-nodes", "pinned-full", "many-small"])
def test_pruning_by_the_bounds_never_changes_the_plans_found(monkeypatch, ctx):
    assert _labels(P.search(ctx)) == _labels(_unpruned(monkeypatch, ctx))


def _exhaustive(ctx: P.Context) -> list[P.StepResult]:
    """Every split, micro-batch, interleaving, sharding and recomputation that fits, timed."""
    mem = MemoryModel(ctx.w, ctx.s, ctx.rates.flash, ctx.topo.domain)
    out = []
    for tp, cp, ep, pp, dp in P._shapes(ctx):
        for mb, m, v in P._variants(ctx, tp, cp, ep, pp, dp):
            for sharding in P.shardings(ctx.w, dp):
                for recompute in P.recomputes(ctx.w):
                    plan = Plan(tp, cp, pp, v, dp, ep, mb, m, recompute, sharding)
                    if mem.need_gb(plan) <= ctx.capacity_gb:
                        if recompute == "full":
                            plan = P._partial_recompute(mem, plan, ctx.capacity_gb, math.ceil(ctx.s.layers / pp))
                        out.append(P.evaluate(ctx, plan, {}))
    return sorted(out, key=lambda r: -r.tokens_per_s)


@pytest.mark.parametrize("ctx", [_real(4, 6.0), _real(4, 40.0, seq=16_384, sequences=4), _real(8, 6.0, sequences=8)],
                         ids=["tight", "long", "tiny-batch"])
def test_the_search_finds_the_fastest_plan_that_fits(monkeypatch, ctx):
    timed = []
    with monkeypatch.context() as m:
        m.setattr(P, "evaluate", lambda *a, _f=P.evaluate: timed.append(1) or _f(*a))
        found = P.search(ctx)
    assert found.evaluated == len(timed) > 0  # the count the assumptions report is the plans timed
    best = _exhaustive(ctx)[0]
    assert found.best.tokens_per_s == pytest.approx(best.tokens_per_s, rel=1e-9)
    assert found.best.plan.short() == best.plan.short()
    # what it reports fits, and the alternatives are slower, each with its memory
    for r in (found.best, *found.alternatives):
        assert total_gb(r.memory_gb) == pytest.approx(_need(ctx, r.plan)) and _need(ctx, r.plan) <= ctx.capacity_gb
        assert r.tokens_per_s <= found.best.tokens_per_s
        # Megatron recomputes whole layers: the share is a number of each stage's layers
        layers = math.ceil(ctx.s.layers / r.plan.pp)
        assert r.plan.recompute_share * layers == pytest.approx(round(r.plan.recompute_share * layers))
    assert found.smallest is None


def test_the_search_finds_the_fastest_plan_across_two_nodes():
    # 2 × 8 devices, 32 sequences: DP16 · ZeRO-1 · mb2 fits without recomputation, so ZeRO-2, which hides
    # its weight gather behind the forward pass and is faster here, is never timed
    ctx = _real(16, 12.0, sequences=32)
    assert P.search(ctx).best.tokens_per_s == pytest.approx(_exhaustive(ctx)[0].tokens_per_s, rel=1e-9)


def test_a_pinned_recomputation_is_not_made_partial():
    free = P.search(_real(4, 6.0))
    assert any(r.plan.recompute == "full" and r.plan.recompute_share < 1 for r in (free.best, *free.alternatives))
    pinned = P.search(_real(4, 6.0, w=Workload(params=1.2e9, seq_len=2048, recompute="full")))
    assert pinned.best is not None
    assert all(r.plan.recompute == "full" and r.plan.recompute_share == 1.0
               for r in (pinned.best, *pinned.alternatives))
    checkpointed = P.search(_real(4, 6.0, w=Workload(params=1.2e9, seq_len=2048, checkpointing=True)))
    assert all(r.plan.recompute_share == 1.0 for r in (checkpointed.best, *checkpointed.alternatives))


def test_when_nothing_fits_the_most_frugal_plan_tried_is_reported():
    ctx = _real(4, 1.0)  # 1 GB per device cannot hold 1.2e9 parameters' states even over 4 devices
    found = P.search(ctx)
    assert found.best is None and found.alternatives == []
    plan, parts = found.smallest
    mem = MemoryModel(ctx.w, REAL, True, 4)
    # it is the plan that needs least of every plan tried: ZeRO-3 and full recomputation, split 4 ways
    frugal = [mem.need_gb(Plan(tp, cp, pp, v, dp, ep, mb, m, "full", P.shardings(ctx.w, dp)[-1]))
              for tp, cp, ep, pp, dp in P._shapes(ctx) for mb, m, v in P._variants(ctx, tp, cp, ep, pp, dp)]
    assert mem.need_gb(plan) == pytest.approx(min(frugal))
    assert plan.recompute == "full" and plan.devices == 4
    assert parts == training_parts(ctx.w, REAL, ctx.device, plan, True, 4)
    assert total_gb(parts) > 1.0 and found.evaluated == 0


def test_a_split_pinned_beyond_the_cluster_tries_nothing():
    found = P.search(_real(8, 16.0, w=Workload(params=1.2e9, seq_len=2048, tp=16)))
    assert (found.best, found.alternatives, found.smallest, found.evaluated) == (None, [], None, 0)


# =========================================================================== training.py

H100 = Device("h100", "H100 SXM", "datacenter", vendor="NVIDIA", memory_gb=80, mem_bandwidth_gbs=3350, tdp_w=700,
              peak_tflops={"bf16": 989, "fp16": 989, "fp8": 1979}, architecture="Hopper", form_factor="SXM")
NVLINK = Link("nvlink4", "NVLink 4", "nvlink", 450.0, 1.0)
IB = Link("ib", "IB NDR", "infiniband", 50.0, 5.0)
# GPT-2 small: 12 layers × 768, 12 heads, tied 50,257-token vocabulary, half a million tokens a step
GPT2 = Workload(kind="train", params=124e6, tokens=1e9, seq_len=1024, layers=12, d_model=768, heads=12, kv_heads=12,
                vocab=50257, global_batch_tokens=524288, tied_embeddings=True)


@pytest.fixture(autouse=True)
def _fresh_plans():
    T._SEARCH_CACHE.clear()
    yield
    T._SEARCH_CACHE.clear()


def _node(device: Device = H100, per_node: int = 8, nodes: int = 1, inter: Link | None = IB) -> tuple[NodeGroup, ...]:
    return (NodeGroup(device, per_node=per_node, nodes=nodes, intra=NVLINK, inter=inter if nodes > 1 else None),)


def _setup(w: Workload = GPT2, groups: tuple[NodeGroup, ...] | None = None) -> T.Setup:
    groups = groups or _node()
    return T.setup_of(EstimateInput(w, groups), groups)[0]


def test_the_cases_scale_the_matrix_share_and_assumed_profiles_widen_them():
    assert [T.case_factor(H100, c) for c in (0, 1, 2)] == pytest.approx([0.75, 0.88, 0.97])
    odd = Device("o", "O", peak_tflops={"bf16": 100})  # no known family: spread 1.3
    assert [T.case_factor(odd, c) for c in (0, 1, 2)] == pytest.approx([0.75 / 1.3, 0.88, 0.97 * 1.3])


def test_each_case_times_the_plan_with_its_rates_and_its_band_ends():
    setup = _setup()
    for case, factor in ((0, 0.75), (1, 0.88), (2, 0.97)):
        ctx = T.context(setup, case)
        assert ctx.rates == rates(H100, setup.peak, factor, "bf16")
        assert ctx.case == P.Case.pick(case)
        assert (ctx.w, ctx.s, ctx.device, ctx.topo, ctx.peak) == (setup.w, setup.s, H100, setup.topo, setup.peak)
        assert ctx.global_batch == 524288 and ctx.capacity_gb == capacity_gb(H100)


def test_a_plan_search_is_remembered_until_the_workload_or_the_hardware_changes():
    setup = _setup()
    first = T.plan_search(setup)
    assert T.plan_search(setup) is first
    assert T.plan_search(replace(setup, device=replace(H100, name="renamed"))) is first  # a label is not physics
    key = T._search_key(setup)
    for change in (dict(id="other"), dict(memory_gb=40), dict(mem_bandwidth_gbs=2000), dict(memory_shared=True),
                   dict(peak_tflops={"bf16": 500}), dict(achievable_tflops={"bf16": 700}),
                   dict(architecture="Ampere"), dict(device_class="workstation")):
        assert T._search_key(replace(setup, device=replace(H100, **change))) != key, change
    assert T._search_key(replace(setup, global_batch=1024.0)) != key
    assert T._search_key(replace(setup, w=replace(GPT2, tokens=2e9))) != key
    assert T._search_key(_setup(groups=_node(nodes=2))) != key
    # the memory is bounded: it keeps 257 searches, and past that starts again
    T._SEARCH_CACHE.clear()
    T._SEARCH_CACHE.update({("filler", i): first for i in range(256)})
    T.plan_search(replace(setup, global_batch=2048.0 * 1024))
    assert len(T._SEARCH_CACHE) == 257
    T.plan_search(replace(setup, global_batch=4096.0 * 1024))
    assert len(T._SEARCH_CACHE) == 1


def test_the_fewest_devices_that_could_hold_a_workload():
    # 1e9 parameters (16 GB of states) of the small 4-layer shape, on devices of 8 GiB: (8 × 1.0737 × 0.995
    # − 1.5) × 0.95 = 6.69 GB usable; activations and logits are negligible at 10 tokens
    dev = Device("d8", "D8", memory_gb=8, peak_tflops={"bf16": 100})
    w = Workload(params=1e9, seq_len=10, layers=4, d_model=8, heads=2, kv_heads=1, ffn_dim=16, vocab=100)
    setup = _setup(w, (NodeGroup(dev, per_node=8),))
    assert T.min_training_devices(setup) == 3  # ceil(16 / 6.69)
    # 4 GiB (2.63 GB usable): ceil(16 / 2.63) = 7 replicas beat TP2 × 4 = 8
    small = replace(setup, device=replace(dev, memory_gb=4))
    assert T.min_training_devices(small) == 7
    # a vocabulary of a million at 1,000 tokens keeps 6 GB of logits on one device, 3 GB with TP2:
    # TP1 needs ceil(16 / 0.69) = 24, TP2 × ceil(8 / 3.69) = 6
    wide = _setup(replace(w, vocab=1_000_000, seq_len=1000), (NodeGroup(dev, per_node=8),))
    assert T.min_training_devices(wide) == 6
    assert T.min_training_devices(replace(wide, topo=replace(wide.topo, per_node=1))) == 24
    # with no room at all no count will do
    assert T.min_training_devices(replace(setup, device=replace(dev, memory_gb=1))) is None
    # 64 GB of states and 18 GB of logits (a 3M vocabulary at 1,000 tokens) on 6.69 GB devices: only TP8
    # leaves room (2.25 GB of logits): 2 replicas of 8; with 4 devices a node, TP4 × 8 = 32
    huge = _setup(Workload(params=4e9, seq_len=1000, layers=4, d_model=8, heads=8, kv_heads=8, ffn_dim=16,
                           vocab=3_000_000), (NodeGroup(dev, per_node=8),))
    assert T.min_training_devices(huge) == 16
    assert T.min_training_devices(replace(huge, topo=replace(huge.topo, per_node=4))) == 32
    # a model that fits one device needs one
    assert T.min_training_devices(_setup(replace(w, params=1e8), (NodeGroup(dev),))) == 1


def test_the_fewest_devices_assume_full_recomputation_and_fused_attention():
    # 1.2B parameters (19.2 GB of states) at 4,096 tokens on 12 GiB Hopper boards (10.75 GB usable): with
    # full recomputation TP2 keeps 9.6 GB of states and about 0.7 GB of activations and logits: 2 devices.
    # Keeping every activation (or the score matrices of unfused attention) would need more.
    dev = Device("h12", "H12", "datacenter", vendor="NVIDIA", architecture="Hopper", memory_gb=12,
                 peak_tflops={"bf16": 100})
    w = Workload(params=1.2e9, seq_len=4096, layers=16, d_model=2048, heads=16, kv_heads=8, ffn_dim=5632, vocab=32000)
    setup = _setup(w, (NodeGroup(dev, per_node=8),))
    assert T.min_training_devices(setup) == 2
    ctx = T.context(setup, 1)
    plan = Plan(tp=2, pp=1, dp=1, micro_batch=1, micro_batches=1, recompute="full")
    parts = training_parts(w, setup.s, dev, plan, True, 8)
    states = parts["weights"] + parts["gradients"] + parts["optimizer"]
    assert states == pytest.approx(9.6) and states + (total_gb(parts) - states) <= ctx.capacity_gb


def test_a_setup_names_what_stops_the_estimate():
    setup, reasons, assumptions = T.setup_of(EstimateInput(replace(GPT2, precision="int8"), _node()), _node())
    assert [(r.code, r.text, dict(r.values)) for r in reasons] == [
        ("precision", "INT8 is not a training precision (use fp32, tf32, fp16, bf16 or fp8).", {"precision": "int8"})]
    assert setup.peak is None and assumptions == []
    # even where the device has an INT8 rate, no training peak is taken from it
    int8 = replace(H100, peak_tflops={"int8": 1979, "fp32": 67})
    assert T.setup_of(EstimateInput(replace(GPT2, precision="int8"), _node(int8)), _node(int8))[0].peak is None
    blank = Device("b", "Blank", peak_tflops={"int8": 100})
    _s, reasons, _a = T.setup_of(EstimateInput(GPT2, _node(blank)), _node(blank))
    assert [(r.code, r.text, dict(r.values)) for r in reasons] == [
        ("no_peak", "The catalogue has no dense BF16 figure for Blank, so its training throughput cannot be "
         "estimated.", {"device": "Blank"})]
    # a bare parameter count is shaped, and said so; the default batch grows with the model
    setup, reasons, assumptions = T.setup_of(EstimateInput(Workload(params=8e9), _node()), _node())
    assert reasons == [] and assumptions == [
        "Model shaped from 8B parameters as a modern decoder: 32 layers × 4,096 wide, 32 heads, grouped-query "
        "(8 KV heads) attention, SwiGLU FFN 14,336."]
    assert setup.global_batch == P.default_global_batch(Workload(params=8e9), 8) and not setup.batch_given
    assert setup.flops_per_token == MD.training_flops_per_token(Workload(params=8e9), setup.s)
    assert (_setup().global_batch, _setup().batch_given) == (524288.0, True)


def test_a_workload_that_cannot_run_is_infeasible_with_its_reasons():
    est = T.train(EstimateInput(replace(GPT2, precision="int4"), _node()), _node())
    assert not est.feasible and est.reasons[0].code == "precision"
    assert est.tokens_per_s == Range.exact(0.0) and est.time_s is None and est.devices == 8
    assert (est.kind, est.mfu, est.energy_kwh, est.co2_kg, est.power_w) == ("train", None, None, None, Range.exact(0.0))
    assert est.feasible is False and est.assumptions == []
    assert est.cost.electricity_usd_per_run == Range.exact(0.0) and est.cost.cloud_usd_per_run is None
    assert est.cost.capex_usd is None and est.cost.break_even_runs is None and est.notes == []
    assert est.memory.to_json() == MemoryFit(0.0, round(capacity_gb(H100), 3), False, None).to_json()


def test_a_model_too_big_for_the_cluster_says_how_much_it_needs_and_how_many_devices_would_hold_it():
    w = Workload(kind="train", params=70e9, seq_len=4096, layers=80, d_model=8192, heads=64, kv_heads=8,
                 ffn_dim=28672, vocab=128256, global_batch_tokens=4096 * 64)
    groups = _node(per_node=2)
    est = T.train(EstimateInput(w, groups), groups)
    assert not est.feasible and est.tokens_per_s == Range.exact(0.0)
    memory, reason = est.reasons[0], est.memory
    assert [r.code for r in est.reasons] == ["memory", "memory_min_devices"]
    # 70e9 × 16 bytes = 1,120 GB of states over 2 devices: far beyond 79.8 GB each
    assert memory.values["need_gb"] == pytest.approx(reason.per_device_gb, abs=1e-3)
    assert reason.per_device_gb > 79.8
    assert memory.values["capacity_gb"] == pytest.approx(capacity_gb(H100))
    assert (memory.values["devices"], memory.values["device"]) == (2, "H100 SXM")
    assert memory.text.startswith("2 × H100 SXM cannot hold this workload: even the most frugal plan tried (")
    assert "but each H100 SXM has 79.8 GB usable." in memory.text
    n = T.min_training_devices(_setup(w, groups))
    assert 1120 / 79.8 < n == reason.min_devices == memory.values["min_devices"] == est.reasons[1].values["min_devices"]
    assert est.reasons[1].text == f"At least {n:,} × H100 SXM would hold it (ZeRO-3, full recomputation, tensor " \
        "and pipeline parallelism)."
    assert reason.fits is False and reason.capacity_gb == round(capacity_gb(H100), 3)
    assert reason.breakdown_gb["weights"] > 0 and "full activation recomputation" in reason.strategy
    # the figures of the sentence are the most frugal plan's parts, rounded as shown
    parts = T.plan_search(_setup(w, groups)).smallest[1]
    assert reason.breakdown_gb == {k: round(v, 3) for k, v in parts.items()}
    assert reason.per_device_gb == round(total_gb(parts), 3)
    states = parts["weights"] + parts["gradients"] + parts["optimizer"]
    assert f"weights, gradients and optimizer state {states:.1f} GB, activations " \
           f"{parts['activations'] + parts['logits']:.1f} GB — but" in memory.text
    assert (est.devices, est.notes, est.assumptions, est.feasible) == (2, [], [], False)
    assert est.precision_used == "bf16" and est.peak_pflops == pytest.approx(2 * 989 / 1000)
    # plain data parallelism pinned: adding devices cannot help, and the estimate says so
    pinned = T.train(EstimateInput(replace(w, sharding="none"), groups), groups)
    copies = pinned.finding("memory_full_copies")
    assert (copies.text, copies.values) == ("Plain data parallelism keeps a full copy of the model states on every "
                                            "device, so adding devices does not help; let the planner shard them.", {})
    assert T.plan_search(_setup(w, groups)).smallest[0].sharding == "none"  # the frugal plan: TP2, one replica
    assert "memory_full_copies" not in [r.code for r in T.train(EstimateInput(replace(w, sharding=""), groups),
                                                                 groups).reasons]
    one = T.train(EstimateInput(replace(w, sharding="none"), _node(per_node=1)), _node(per_node=1))
    assert "memory_full_copies" not in [r.code for r in one.reasons]
    assert one.reasons[0].text.startswith("H100 SXM cannot hold this workload")
    # a device with no usable memory can never hold it
    tiny = replace(H100, memory_gb=1)
    never = T.train(EstimateInput(w, _node(tiny)), _node(tiny))
    assert [r.code for r in never.reasons] == ["memory", "memory_never"]
    assert never.reasons[1].text == "No number of H100 SXM can hold it: one layer's activations alone do not fit."
    assert never.reasons[1].values == {}
    assert never.memory.min_devices is None and never.reasons[0].values["min_devices"] == 0
    # a minimum equal to the devices there are is no news
    setup = _setup(w, groups)
    smallest = T.plan_search(setup).smallest
    assert [f.code for f in T._memory_reasons(setup, smallest, 79.8, 2)] == ["memory"]
    assert [f.code for f in T._memory_reasons(setup, smallest, 79.8, 3)] == ["memory", "memory_min_devices"]


def test_a_split_pinned_beyond_the_cluster_reports_one_devices_memory():
    # TP16 on 8 devices: no plan is tried, so the memory reported is one device's, unsplit
    w = replace(GPT2, tp=16)
    est = T.train(EstimateInput(w, _node()), _node())
    parts = training_parts(w, shape_of(w), H100, Plan(), True, 8)
    assert not est.feasible and est.reasons[0].code == "memory"
    assert est.memory.per_device_gb == round(total_gb(parts), 3)
    assert est.memory.breakdown_gb == {k: round(v, 3) for k, v in parts.items()}
    assert est.memory.strategy == "data parallel 1, micro-batch 1"


def test_a_cluster_of_enough_devices_has_no_minimum_count_reason():
    # 70B on 4 × 8 H100 with plain data parallelism, no tensor nor pipeline parallelism pinned: the
    # minimum count (about 16) is there, but full copies of 1,120 GB of states cannot be sharded
    w = Workload(kind="train", params=70e9, seq_len=4096, layers=80, d_model=8192, heads=64, kv_heads=8,
                 ffn_dim=28672, vocab=128256, global_batch_tokens=4096 * 64, sharding="none", tp=1, pp=1)
    groups = _node(per_node=8, nodes=4)
    est = T.train(EstimateInput(w, groups), groups)
    codes = [r.code for r in est.reasons]
    assert "memory_full_copies" in codes and "memory_min_devices" not in codes
    assert est.memory.min_devices <= 32


def _cases(setup: T.Setup, found: P.SearchResult) -> list[P.StepResult]:
    plan = found.best.plan
    return [P.evaluate(T.context(setup, 0), plan, {}), found.best, P.evaluate(T.context(setup, 2), plan, {})]


def test_a_timed_estimate_follows_from_the_chosen_plans_step_in_three_cases():
    groups = _node()
    est = T.train(EstimateInput(GPT2, groups), groups)
    setup = _setup()
    found = T.plan_search(setup)
    best = found.best
    pess, _likely, opt = _cases(setup, found)
    assert pess.tokens_per_s < best.tokens_per_s < opt.tokens_per_s
    # the cases are scaled by the fitted training scale and widened to the engine's known error
    scale = C.FITTED_SCALE["training"]
    spread = math.exp(C.MODEL_ERROR["training"])
    assert est.feasible and est.devices == 8
    assert est.tokens_per_s.likely == pytest.approx(best.tokens_per_s * scale)
    assert est.tokens_per_s.low == pytest.approx(min(pess.tokens_per_s, best.tokens_per_s / spread) * scale)
    ceiling = 8 * T.context(setup, 2).rates.gemm / setup.flops_per_token
    assert est.tokens_per_s.high == pytest.approx(min(max(opt.tokens_per_s, best.tokens_per_s * spread) * scale,
                                                      max(ceiling, best.tokens_per_s * scale)))
    tps = est.tokens_per_s
    # a step is the step's tokens at that rate; the run is its tokens at that rate
    assert (est.step_time_s.low, est.step_time_s.likely, est.step_time_s.high) == pytest.approx(
        (524288 / tps.high, 524288 / tps.likely, 524288 / tps.low))
    assert (est.time_s.low, est.time_s.likely, est.time_s.high) == pytest.approx((1e9 / tps.high, 1e9 / tps.likely,
                                                                                  1e9 / tps.low))
    # MFU: model FLOPs per second over the 8 × 989 TFLOPS the devices are rated for; no recomputation
    flops = setup.flops_per_token
    assert (est.mfu.low, est.mfu.likely, est.mfu.high) == pytest.approx(
        (tps.low * flops / 7912e12, tps.likely * flops / 7912e12, tps.high * flops / 7912e12))
    assert est.hfu == est.mfu
    shares = [T._comm_share(r) for r in (pess, best, opt)]
    assert est.comm_share == Range(min(shares), shares[1], max(shares))
    assert est.slowest_link == "NVLink 4" and best.link_seconds
    assert est.plan == best.plan.to_json()
    assert est.alternatives == [T._alternative(r, best) for r in found.alternatives] and len(est.alternatives) == 2
    # 124M parameters fit 80 GB many times over: recomputing anything would only be slower
    assert best.plan.recompute == "none" and all(a["plan"]["recompute"] == "none" for a in est.alternatives)
    assert est.memory.fits and est.memory.min_devices is None
    assert est.memory.capacity_gb == round(capacity_gb(H100), 3)
    assert est.memory.per_device_gb == round(total_gb(best.memory_gb), 3)
    assert est.memory.breakdown_gb == {k: round(v, 3) for k, v in best.memory_gb.items()}
    assert est.memory.strategy == best.plan.describe()
    assert est.precision_used == "bf16" and est.peak_pflops == pytest.approx(8 * 989 / 1000)
    assert est.breakdown == {
        **best.breakdown(), "tokens_per_step": 524288.0, "flops_per_token": setup.flops_per_token,
        "layout": best.plan.describe(), "plan": best.plan.short(), "link_seconds": best.link_seconds,
        "plans_evaluated": found.evaluated, "devices_used": 8,
        "stage": {"gemm_s": best.stage.gemm, "attention_s": best.stage.attention, "memory_bound_s": best.stage.memory,
                  "kernel_overhead_s": best.stage.overhead}}
    assert est.notes == [] and len(est.assumptions) == 7


def test_the_optimistic_end_never_passes_every_flop_at_the_fastest_matrix_rate():
    # a 1.2B model on 2 × 8 H100 reaches about 60% MFU likely; e^0.31 above would pass the matrix units'
    # best case (0.803 × 0.97 of 989 TFLOPS): the high end stops there
    w = replace(GPT2, params=1.2e9, layers=16, d_model=2048, heads=16, kv_heads=8, ffn_dim=5632, vocab=32000,
                tied_embeddings=False)
    groups = _node(nodes=2)
    est = T.train(EstimateInput(w, groups), groups)
    assert est.tokens_per_s.likely * math.exp(0.31) > 16 * 989e12 * 0.803 * 0.97 / est.breakdown["flops_per_token"]
    assert est.mfu.high == pytest.approx(0.803 * 0.97)
    assert est.slowest_link == "IB NDR"


def test_the_slowest_link_is_the_one_with_the_most_exposed_seconds():
    # TP2 inside each node and DP8 across 2 nodes over 5 GB/s: the network waits longer than NVLink
    w = replace(GPT2, params=1.2e9, layers=16, d_model=2048, heads=16, kv_heads=8, ffn_dim=5632, vocab=32000,
                tied_embeddings=False, tp=2, dp=8, pp=1, sharding="zero1")
    ib5 = replace(IB, unidirectional_gbs=5.0)
    est = T.train(EstimateInput(w, _node(nodes=2, inter=ib5)), _node(nodes=2, inter=ib5))
    links = est.breakdown["link_seconds"]
    assert set(links) == {"NVLink 4", "IB NDR"} and links["IB NDR"] > links["NVLink 4"]
    assert est.slowest_link == "IB NDR"
    # one device exposes nothing on any link
    alone = T.train(EstimateInput(replace(GPT2, global_batch_tokens=8192), (NodeGroup(H100),)), (NodeGroup(H100),))
    assert alone.slowest_link == "" and alone.breakdown["link_seconds"] == {}


def test_a_slow_network_is_named_in_the_notes_with_the_likely_share():
    # DP16 pinned over two nodes on 1 GbE: the gradient exchange dominates the step
    slow = Link("eth1", "1 GbE", "ethernet", 0.125, 50.0)
    w = replace(GPT2, dp=16, tp=1, pp=1, sharding="zero1")
    est = T.train(EstimateInput(w, _node(nodes=2, inter=slow)), _node(nodes=2, inter=slow))
    note = est.finding("comm_dominates")
    assert note.values == {"share": est.comm_share.likely, "link": "1 GbE"}
    assert est.comm_share.likely > 0.5 and est.slowest_link == "1 GbE"


def test_partial_recomputation_counts_its_share_in_hardware_utilisation():
    # a 1.2B model at 4,096 tokens on 8 devices of 8 GiB: the planner recomputes only some layers
    dev = replace(H100, memory_gb=8)
    w = replace(GPT2, params=1.2e9, layers=16, d_model=2048, heads=16, kv_heads=8, ffn_dim=5632, vocab=32000,
                tied_embeddings=False, seq_len=4096, global_batch_tokens=4096 * 16)
    est = T.train(EstimateInput(w, _node(dev)), _node(dev))
    share = est.plan["recompute_share"]
    assert est.plan["recompute"] == "full" and 0 < share < 1
    assert est.hfu.likely == pytest.approx(est.mfu.likely * (1 + share / 3))


def test_your_own_measurements_replace_the_known_error():
    groups = _node()
    cal = (Calibration("other", "train", 2.0, 3), Calibration("h100", "infer_decode", 3.0, 3),
           Calibration("h100", "train", 1.2, 5))
    est = T.train(EstimateInput(GPT2, groups, calibrations=cal), groups)
    pess, likely, opt = _cases(_setup(), T.plan_search(_setup()))
    scale = 1.2 * C.FITTED_SCALE["training"]  # the user's factor on top of the engine's fitted scale
    assert (est.tokens_per_s.low, est.tokens_per_s.likely, est.tokens_per_s.high) == pytest.approx(
        (scale * pess.tokens_per_s, scale * likely.tokens_per_s, scale * opt.tokens_per_s))
    assert [(n.code, n.text, dict(n.values)) for n in est.notes] == [
        ("calibrated", "Training throughput calibrated on 5 of your measurements on H100 SXM (×1.20).",
         {"factor": 1.2})]
    # a measured utilisation given with the workload wins over both, with its own ±10%
    est = T.train(EstimateInput(replace(GPT2, mfu=0.4), groups, calibrations=cal), groups)
    assert (est.mfu.low, est.mfu.likely, est.mfu.high) == pytest.approx((0.36, 0.4, 0.44))
    assert est.tokens_per_s.likely == pytest.approx(0.4 * 7912e12 / est.breakdown["flops_per_token"])
    assert est.notes == []


def test_recomputed_work_counts_in_hardware_but_not_model_utilisation():
    groups = _node()
    full = T.train(EstimateInput(replace(GPT2, recompute="full"), groups), groups)
    assert full.plan["recompute"] == "full" and full.plan["recompute_share"] == 1.0
    assert full.hfu.likely == pytest.approx(full.mfu.likely * 4 / 3)  # the forward pass runs twice
    assert full.hfu.low == pytest.approx(full.mfu.low * 4 / 3) and full.hfu.high == pytest.approx(full.mfu.high * 4 / 3)
    sel = T.train(EstimateInput(replace(GPT2, recompute="selective"), groups), groups)
    assert sel.hfu.likely == pytest.approx(sel.mfu.likely * 1.02)


def test_mixed_hardware_and_peak_fallbacks_are_noted():
    a100 = Device("a100", "A100", "datacenter", vendor="NVIDIA", memory_gb=80, mem_bandwidth_gbs=2039,
                  peak_tflops={"fp16": 312}, architecture="Ampere", form_factor="SXM4")
    groups = (NodeGroup(H100, per_node=8, intra=NVLINK), NodeGroup(a100, per_node=8, intra=NVLINK))
    est = T.train(EstimateInput(GPT2, groups), groups)
    assert [(n.code, n.text, n.values) for n in est.notes[:2]] == [
        ("mixed_hardware", "Mixed hardware: every device is timed as the slowest, A100, as a synchronous step "
         "waits for it.", {}),
        ("peak_fallback", "A100 has no BF16 figure: FP16 used.", {})]
    # each group counts at its own peak: 8 × 989 + 8 × 312 TFLOPS, in the peak and in the utilisation
    assert est.peak_pflops == pytest.approx((8 * 989 + 8 * 312) / 1000) and est.precision_used == "fp16"
    assert est.mfu.likely == pytest.approx(est.tokens_per_s.likely * est.breakdown["flops_per_token"]
                                           / ((8 * 989 + 8 * 312) * 1e12))
    # a GPU without tensor cores trains 16-bit at its FP32 rate
    p100 = Device("p100", "P100", "datacenter", vendor="NVIDIA", memory_gb=16, mem_bandwidth_gbs=732,
                  peak_tflops={"fp16": 18.7, "fp32": 9.3}, architecture="Pascal")
    est = T.train(EstimateInput(replace(GPT2, precision="fp16"), _node(p100)), _node(p100))
    note = est.finding("no_tensor_cores")
    assert note.text == ("P100 has no tensor cores: 16-bit training accumulates in FP32 at 9.3 TFLOPS, not its "
                         "18.7 TFLOPS FP16 figure.")
    assert dict(note.values) == {"rate_tflops": 9.3, "peak_tflops": 18.7, "device": "P100"}


def test_the_notes_say_what_the_plan_costs():
    setup = _setup()  # 524,288 tokens asked for on 8 devices

    def notes(plan=Plan(dp=8), tokens=524288.0, step=1.0, bubble=0.0, share=0.0, slowest="IB"):
        r = P.StepResult(plan, tokens, step, 0, bubble, 0, 0, 0, 0, 0, 0, 0, 0)
        return [(n.code, n.text, dict(n.values)) for n in T._notes(setup, r, share, slowest)]

    assert notes() == []
    assert notes(tokens=524288 * 1.009) == []  # within 1%
    assert notes(plan=Plan(dp=8, micro_batches=3, micro_batch=2), tokens=540672.0) == [(
        "batch_changed", "The global batch runs as 540,672 tokens rather than 524,288: 8 replica(s) × 3 "
        "micro-batch(es) × 2 sequence(s) of 1,024 tokens is the nearest whole split.",
        {"requested": 524288.0, "used": 540672.0})]
    assert notes(tokens=524288 * 0.98)[0][0] == "batch_changed"
    assert notes(plan=Plan(dp=4)) == [(
        "devices_idle", "4 of 8 devices stay idle: the best plan uses 4 (DP4 · mb1); a larger global batch would "
        "use more.", {"idle": 4, "used": 4})]
    assert notes(share=0.6) == [(
        "comm_dominates", "Communication dominates: 60% of each step is spent waiting for data over IB; the devices "
        "wait more than they compute.", {"share": 0.6, "link": "IB"})]
    assert notes(share=0.5) == [("comm_share", "IB costs 50% of each step.", {"share": 0.5, "link": "IB"})]
    assert notes(share=0.21)[0][0] == "comm_share"
    assert notes(share=0.2) == [] and notes(share=0.6, slowest="") == [] and notes(share=0.3, slowest="") == []
    assert notes(bubble=0.2) == [("bubble", "The pipeline bubble costs 20% of each step: more micro-batches (a "
                                  "larger batch) would shrink it.", {"share": 0.2})]
    assert notes(bubble=0.15) == []
    # a share of the step, whatever its length: 0.4 s of a 2 s step is 20%, 0.2 s 10%
    assert notes(bubble=0.4, step=2.0) == [("bubble", "The pipeline bubble costs 20% of each step: more micro-batches "
                                            "(a larger batch) would shrink it.", {"share": 0.2})]
    assert notes(bubble=0.2, step=2.0) == []
    assert notes(plan=Plan(dp=7))[0][2] == {"idle": 1, "used": 7}  # one idle device is worth saying


def test_communication_share_alternatives_and_numbers_in_words():
    r = P.StepResult(Plan(dp=2), 100.0, 10.0, 0, 0, tp_s=1.0, cp_s=0.5, ep_s=0.25, pp_s=0.125, dp_s=2.0,
                     dp_total_s=9.0, optimizer_s=0.0, overhead_s=0.0, memory_gb={"weights": 2.0, "runtime": 1.5})
    assert T._comm_share(r) == pytest.approx(3.875 / 10)  # exposed seconds only, not the hidden exchange
    best = P.StepResult(Plan(dp=4), 100.0, 5.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    assert T._alternative(r, best) == {"plan": Plan(dp=2).to_json(), "label": "DP2 · mb1", "tokens_per_s": 10.0,
                                       "relative": 0.5, "memory_gb": 2.0}
    r.memory_gb = {"weights": 2.123456}
    assert T._alternative(r, best)["memory_gb"] == 2.123
    assert [T._sig(v) for v in (1403.2, 1000.0, 12345.6, 42.46, 0.12549, 7.0, 999.7)] == \
        ["1,403", "1,000", "12,346", "42.5", "0.125", "7", "1,000"]


def test_the_assumptions_say_how_the_estimate_was_made():
    groups = _node()
    est = T.train(EstimateInput(GPT2, groups), groups)
    found = T.plan_search(_setup())
    alts = "; ".join(f"{a.plan.short()} at {a.tokens_per_s / found.best.tokens_per_s:.0%}" for a in found.alternatives)
    # 6 × 124M (tied embeddings: the head is the input matrix) + 12 × 12 × 768 × 1,024 = 857.2M FLOPs;
    # 989 TFLOPS × 0.803 × 0.88 = 699 TFLOPS (71%), attention 989 × 0.5 × 0.88 = 435 TFLOPS,
    # 3,350 GB/s × 0.88 × 0.88 = 2,594 GB/s
    assert est.assumptions == [
        "0.8572 GFLOPs per token: 6 × 0.124B parameters that multiply each token (the layers and the output head; "
        "the input embedding is a lookup) plus attention 12·L·d·s (Kaplan et al. 2020; the MFU convention of PaLM "
        "and Megatron-LM).",
        f"Plan chosen by search ({found.evaluated:,} plans that fit were timed): {found.best.plan.describe()}; "
        f"524,288 tokens per optimizer step in {found.best.plan.micro_batches} micro-batch(es) per pipeline.",
        "H100 SXM (NVIDIA Hopper (data centre)): matrix multiplications at 699 TFLOPS (71% of 989; NVIDIA Hopper "
        "(data centre)), fused attention at 435 TFLOPS, element-wise work at 2,594 GB/s, 3 µs per kernel.",
        "H100 SXM: 80 GiB (85.5 GB visible), less 1.5 GB for the runtime and 5% for allocator fragmentation = 79.8 GB "
        f"usable; this plan uses {total_gb(found.best.memory_gb):.1f} GB.",
        "Matrix multiplications timed by their shapes (M, N, K: tiles, waves, short-K ramp, memory side) relative "
        "to the large-GEMM rate: no measured table: NVIDIA Hopper (data centre)'s large-product share, assumed "
        "units, the fitted tables' median ramp.",
        "Data-parallel traffic as ZeRO-1 (distributed optimizer) sends it (ZeRO, Rajbhandari et al. 2020), "
        "hierarchical over NVLink 4 and 1 × network per node; 80% (50%–92%) of what can overlap hides behind the "
        "computation: gradients behind the backward pass, sharded weights' gathers behind the forward pass.",
        f"Next best plans: {alts} of the chosen plan's throughput."]


def test_the_assumptions_follow_the_method_the_split_and_the_precision():
    groups = _node()

    def said(w, g=groups):
        T._SEARCH_CACHE.clear()
        return "\n".join(T.train(EstimateInput(w, g), g).assumptions)

    assert said(replace(GPT2, flops_per_token=1e9)).startswith("1 GFLOPs per token: the scenario's figure.")
    lora = said(replace(GPT2, kind="finetune", method="lora"))
    first = "GFLOPs per token: 4·N for LoRA/QLoRA (frozen weights need no weight gradients) plus attention."
    assert lora.split("\n")[0].endswith(first)
    assert said(replace(GPT2, kind="finetune", method="qlora")).split("\n")[0].endswith(first)
    assert "GFLOPs per token: 6 × 0.124B" in said(replace(GPT2, kind="train", method="lora"))
    moe = said(replace(GPT2, experts=8, experts_active=2, active_params=60e6))
    assert "(the layers and the output head; the input embedding is a lookup, active experts only) plus" in moe
    # a default batch says where it comes from
    assert ("(default batch: the model-size default, at least 1,024 tokens per device as large runs grow it with the "
            "cluster; set global_batch_tokens).") in said(replace(GPT2, global_batch_tokens=None))
    piped = said(replace(GPT2, pp=2, dp=4, tp=1, vpp=2, micro_batch=4, sharding="none"))
    assert ("Pipeline bubble (p−1)/(m·v) = (2−1)/(32·2) of the compute (interleaved 1F1B, Narayanan et al. 2021); "
            "stages hold whole layers, the last also the output head.") in piped
    assert "Data-parallel traffic as DDP sends it" in piped
    one = said(GPT2, g=(NodeGroup(H100),))
    assert "Data-parallel" not in one and "Pipeline bubble" not in one
    assert "Data-parallel traffic as ZeRO-1 (distributed optimizer) sends it" in said(
        replace(GPT2, dp=2, tp=1, pp=1, sharding="zero1"))
    # nodes of one device have no link inside: "the node"
    lone = (NodeGroup(H100, per_node=1, nodes=2, inter=IB),)
    assert "hierarchical over the node and 1 × IB NDR per node" in said(replace(GPT2, dp=2), lone)
    # FP8 asked of a device without an FP8 rate trains in BF16, and says nothing of FP8 matrices
    a100 = Device("a100", "A100", "datacenter", vendor="NVIDIA", memory_gb=80, mem_bandwidth_gbs=2039,
                  peak_tflops={"bf16": 312}, architecture="Ampere", form_factor="SXM4")
    assert "FP8 speeds up" not in said(replace(GPT2, precision="fp8"), (NodeGroup(a100, per_node=8, intra=NVLINK),))
    fp8 = said(replace(GPT2, precision="fp8"))
    # FP8 GEMMs at 1,979 TFLOPS × 0.709 (Hopper's FP8 MAMF share) × 0.88 = 1,235 TFLOPS
    assert "matrix multiplications at 1,235 TFLOPS (62% of 1,979;" in fp8
    assert "FP8 speeds up only the matrix multiplications; attention, norms and the optimizer run as in BF16." in \
        fp8.split("\n")
    volta = replace(H100, id="v100", name="V100", architecture="Volta", peak_tflops={"fp16": 125})
    slow = said(replace(GPT2, precision="fp16"), (NodeGroup(volta, per_node=8, intra=NVLINK),))
    assert "no fused attention (scores go through memory), element-wise work at" in slow
    assert "1 × IB NDR per node" in said(GPT2, _node(nodes=2))


def test_replacing_part_of_a_workload_keeps_the_rest():
    inp = EstimateInput(GPT2, _node())
    out = T.replace_workload(inp, tokens=5.0, seq_len=2048)
    assert out.workload == replace(GPT2, tokens=5.0, seq_len=2048) and out.groups == inp.groups
