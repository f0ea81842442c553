"""Transformer arithmetic: a model's shape, its matrix-multiply parameters, FLOPs, KV cache and
activation sizes, for dense, grouped-query, multi-latent-attention and mixture-of-experts models.

References: Kaplan et al. 2020 and Hoffmann et al. 2022 (6·N FLOPs per training token);
Chowdhery et al. 2022, appendix B (the 12·L·d·s attention term of the MFU convention);
Korthikanti et al. 2022 (activation memory); Ainslie et al. 2023 (grouped-query attention);
DeepSeek-AI 2024, "DeepSeek-V2/V3" (multi-head latent attention: the KV cache holds a compressed
latent of kv_lora_rank + rope dims per layer); Shazeer et al. 2017 and Fedus et al. 2021 (MoE:
each token passes through its k routed experts, so FLOPs follow active parameters and memory
follows total parameters).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.kernels import grouped_rows
from gpudesk.core.estimate.types import Workload


@dataclass(frozen=True)
class Shape:
    params: float  # total parameters (memory)
    active_params: float  # parameters a token passes through (FLOPs)
    layers: int
    d_model: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_dim: int
    gated: bool
    vocab: int | None
    tied: bool
    experts: int  # 0 for a dense model
    experts_active: int
    shared_experts: int
    expert_ffn_dim: int
    dense_layers: int  # layers with a dense MLP in a MoE model
    attention: str  # mha | gqa | mqa | mla
    kv_lora_rank: int
    qk_rope_head_dim: int
    sliding_window: int | None
    sliding_share: float
    known: bool  # False when layers and width were inferred from the parameter count

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.moe else 0


def _round_to(value: float, step: int) -> int:
    return max(step, int(round(value / step)) * step)


def _modern_shape(params: float, vocab: int | None) -> tuple[int, int, int, int, int, int, bool]:
    """(layers, width, heads, kv heads, head dim, FFN width, tied) of a modern dense decoder with
    N parameters: width ≈ 128·layers (Llama 3 8B/70B/405B: 4,096/32, 8,192/80, 16,384/126), 128-wide
    heads, 8 KV heads (grouped-query attention), SwiGLU FFN of 3.5× the width, a 128K vocabulary."""
    v = vocab or C.MODERN_VOCAB
    best = None
    for layers in range(1, 400):
        d = _round_to(C.ASPECT_RATIO * layers, 64)
        heads = max(1, d // 128)
        kv = min(C.MODERN_KV_HEADS, heads)
        f = _round_to(C.MODERN_FFN_RATIO * d, 64)
        per_layer = 2 * d * d + 2 * d * kv * 128 + 3 * d * f
        tied = v * d > 0.25 * params
        total = layers * per_layer + v * d * (1 if tied else 2)
        if best is None or abs(total - params) < abs(best[0] - params):
            best = (total, layers, d, heads, kv, 128 if d >= 128 else d // heads, f, tied)
        if total > params:
            break
    _total, layers, d, heads, kv, hd, f, tied = best
    return layers, d, heads, kv, hd, f, tied


def shape_of(w: Workload) -> Shape:
    """The model's shape; a bare parameter count is shaped as a modern grouped-query decoder."""
    known = bool(w.layers and w.d_model)
    if known:
        layers, d = int(w.layers), int(w.d_model)
        heads = int(w.heads) if w.heads else max(1, d // 128)
        kv = int(w.kv_heads) if w.kv_heads else heads
        hd = int(w.head_dim) if w.head_dim else max(1, d // heads)
        gated = bool(w.gated_ffn) if w.gated_ffn is not None else bool(w.ffn_dim and w.ffn_dim < 3.9 * d)
        f = int(w.ffn_dim) if w.ffn_dim else 4 * d
        tied = bool(w.tied_embeddings)
    else:
        layers, d, heads, kv, hd, f, tied = _modern_shape(w.params, w.vocab)
        gated = True
        if w.layers:
            layers = int(w.layers)
        if w.heads:
            heads = int(w.heads)
        if w.kv_heads:
            kv = int(w.kv_heads)
    experts = int(w.experts or 0)
    attention = w.attention or ("mha" if kv == heads else "mqa" if kv == 1 else "gqa")
    vocab = w.vocab if w.vocab else (C.MODERN_VOCAB if not known else None)
    window = int(w.sliding_window) if w.sliding_window else None
    return Shape(
        params=float(w.params), active_params=float(w.active_params or w.params), layers=layers, d_model=d,
        heads=heads, kv_heads=kv, head_dim=hd, ffn_dim=f, gated=gated, vocab=vocab, tied=tied,
        experts=experts, experts_active=int(w.experts_active or (2 if experts else 0)),
        shared_experts=int(w.shared_experts or 0), expert_ffn_dim=int(w.expert_ffn_dim or (f if experts else 0)),
        dense_layers=int(w.dense_layers or 0) if experts else layers, attention=attention,
        kv_lora_rank=int(w.kv_lora_rank or 0), qk_rope_head_dim=int(w.qk_rope_head_dim or 0),
        sliding_window=window, sliding_share=float(w.sliding_share if w.sliding_share is not None else (1.0 if window else 0.0)),
        known=known,
    )


# ----------------------------------------------------------------------------- parameters
def attention_params_per_layer(s: Shape) -> float:
    d = s.d_model
    if s.attention == "mla" and s.kv_lora_rank:
        # down-projections to the latents, up-projections to heads, output projection
        return d * (s.kv_lora_rank + s.qk_rope_head_dim) + s.kv_lora_rank * s.heads * 2 * s.head_dim \
            + d * s.q_dim * 1.5 + s.q_dim * d
    return d * s.q_dim + 2 * d * s.kv_dim + s.q_dim * d


def mlp_params(d: int, f: int, gated: bool) -> float:
    return (3 if gated else 2) * d * f


def layer_matmul_params(s: Shape) -> tuple[float, float]:
    """(dense-layer, MoE-layer) parameters a token multiplies by in one layer."""
    attn = attention_params_per_layer(s)
    dense = attn + mlp_params(s.d_model, s.ffn_dim, s.gated)
    if not s.moe:
        return dense, dense
    active = (s.experts_active + s.shared_experts) * mlp_params(s.d_model, s.expert_ffn_dim, True)
    return dense, attn + active + s.d_model * s.experts  # router


def expert_products(s: Shape, tokens: float, tp: int, tile_m: int) -> tuple[float, tuple, float]:
    """A MoE layer's experts over `tokens` tokens as one grouped GEMM (every routed expert's tiles in one
    launch, as MoE kernels run them): (the parameters a token multiplies by in its experts, the
    products' (m, n, k) with each expert's rows padded to whole tiles of `tile_m`, the share of
    those rows that hold a token)."""
    d, fe = s.d_model, s.expert_ffn_dim
    rows, fill = grouped_rows(tokens, s.experts, s.experts_active, tile_m)
    expert_p = (s.experts_active + s.shared_experts) * mlp_params(d, fe, True)
    return expert_p, ((rows, 2 * fe / tp, d), (rows, d, fe / tp)), fill


def matmul_params_per_token(s: Shape) -> float:
    """Parameters in the matrix multiplications one token passes through: its layers (active
    experts only) and the output head. The input embedding is a lookup, not a multiplication."""
    dense, moe = layer_matmul_params(s)
    body = s.dense_layers * dense + s.moe_layers * moe
    if not s.known:
        # shape inferred: trust the stated parameter count, less the input embedding
        embedding = (s.vocab or 0) * s.d_model if not s.tied else 0.0
        return max(s.active_params - embedding, 0.5 * s.active_params)
    head = (s.vocab or 0) * s.d_model
    if s.moe and s.active_params != s.params:
        return body + head
    # a dense model with a known shape: scale the body so the total matches the stated count
    stated_body = s.params - (s.vocab or 0) * s.d_model * (1 if s.tied else 2)
    if stated_body > 0.5 * body and not s.moe:
        body = stated_body
    return body + head


def expert_params(s: Shape) -> float:
    """Parameters held by the routed experts (what expert parallelism shards)."""
    if not s.moe:
        return 0.0
    return s.moe_layers * s.experts * mlp_params(s.d_model, s.expert_ffn_dim, True)


# ----------------------------------------------------------------------------- FLOPs
def attention_context(s: Shape, seq_len: float) -> float:
    """Average number of earlier tokens a token attends to over the layers (sliding windows cap it)."""
    if s.sliding_window and s.sliding_share:
        windowed = min(seq_len, s.sliding_window)
        return s.sliding_share * windowed + (1 - s.sliding_share) * seq_len
    return seq_len


def training_flops_per_token(w: Workload, s: Shape) -> float:
    """Model FLOPs per trained token: 6 × matmul parameters plus attention 12·L·d_attn·s (the MFU
    convention of PaLM and Megatron-LM: attention counted without the causal halving)."""
    if w.flops_per_token:
        return float(w.flops_per_token)
    n = matmul_params_per_token(s)
    attention = 12.0 * s.layers * s.q_dim * attention_context(s, w.seq_len)
    if w.frozen_base:
        # frozen weights need no weight gradients: forward 2N + activation gradients 2N
        return 4.0 * n + (2.0 / 3.0) * attention + 6.0 * n * w.lora_fraction
    return 6.0 * n + attention


def attention_flops_per_token(s: Shape, context: float) -> float:
    """Forward FLOPs of one token's attention to `context` earlier tokens (scores and values, all layers)."""
    return 4.0 * s.layers * s.q_dim * attention_context(s, context)


def inference_flops_per_token(s: Shape, context: float) -> float:
    """Forward FLOPs of one token attending to `context` earlier tokens."""
    return 2.0 * matmul_params_per_token(s) + attention_flops_per_token(s, context)


# ----------------------------------------------------------------------------- bytes
def weight_bytes(w: Workload, s: Shape | None = None) -> float:
    if w.weights_bytes:
        return float(w.weights_bytes)
    return w.params * C.WEIGHT_BYTES.get(w.precision, 2.0)


def weight_bytes_per_param(w: Workload) -> float:
    if w.weights_bytes and w.params:
        return float(w.weights_bytes) / w.params
    return C.WEIGHT_BYTES.get(w.precision, 2.0)


def kv_element_bytes(w: Workload) -> float:
    """Bytes of one KV-cache element: the scenario's, else the precision's (8-bit for FP8), else 16-bit."""
    return w.kv_bytes_per_element or C.KV_BYTES.get(w.precision, 2.0)


def kv_dtype(w: Workload) -> str:
    """The KV cache's element type as the measured attention tables name it: fp8 or bf16."""
    return "fp8" if kv_element_bytes(w) <= 1.0 else "bf16"


def kv_bytes_per_token(w: Workload, s: Shape, context: float | None = None) -> float:
    """KV-cache bytes one token adds over all layers (layers with a sliding window stop growing
    once the window is full: `context` caps their share)."""
    per_element = kv_element_bytes(w)
    if s.attention == "mla" and s.kv_lora_rank:
        per_layer = (s.kv_lora_rank + s.qk_rope_head_dim) * per_element
    else:
        per_layer = 2.0 * s.kv_dim * per_element
    if context and s.sliding_window and s.sliding_share and context > s.sliding_window:
        share = s.sliding_share * s.sliding_window / context + (1 - s.sliding_share)
        return per_layer * s.layers * share
    return per_layer * s.layers


def activation_bytes_per_token_layer(s: Shape) -> float:
    """Bytes one token's activations occupy per layer for the backward pass (16-bit, fused
    attention that stores no score matrix, no dropout): norm inputs, Q/K/V, attention output and
    the MLP's inputs and intermediate products (Korthikanti et al. 2022, generalised to GQA and
    gated MLPs; 34·d for GPT-3's shape with dropout)."""
    d = s.d_model
    attention = 2 * (3 * d + s.q_dim + 2 * s.kv_dim)  # two norm inputs, QKV input, Q, K, V, output
    if s.moe:
        mlp = 2 * (d + (s.experts_active + s.shared_experts) * 3 * s.expert_ffn_dim)
    else:
        mlp = 2 * (d + (3 if s.gated else 2) * s.ffn_dim)
    return float(attention + mlp)


def logits_bytes_per_token(s: Shape) -> float:
    """16-bit logits plus the FP32 copy the loss keeps, per token."""
    return (s.vocab or 0) * C.LOGIT_BYTES


def describe(s: Shape) -> str:
    moe = (f", {s.experts} experts ({s.experts_active} active"
           + (f" + {s.shared_experts} shared" if s.shared_experts else "") + ")") if s.moe else ""
    attn = {"mha": "multi-head", "gqa": f"grouped-query ({s.kv_heads} KV heads)", "mqa": "multi-query",
            "mla": f"multi-head latent (KV latent {s.kv_lora_rank})"}.get(s.attention, s.attention)
    return (f"{s.layers} layers × {s.d_model:,} wide, {s.heads} heads, {attn} attention, "
            f"{'SwiGLU' if s.gated else 'GELU'} FFN {s.ffn_dim:,}{moe}")


def is_quantised(precision: str) -> bool:
    return precision in C.QUANTISED


def ceil_div(a: float, b: float) -> int:
    return int(math.ceil(a / b - 1e-12))
