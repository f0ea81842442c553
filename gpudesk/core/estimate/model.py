"""Transformer arithmetic: shape, FLOPs per token, KV cache and activation sizes.

References: Kaplan et al. 2020 and Hoffmann et al. 2022 (6·N FLOPs per training token),
Chowdhery et al. 2022, appendix B (the 12·L·d·s attention term used for MFU),
Korthikanti et al. 2022 (activation memory).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.types import Workload


@dataclass(frozen=True)
class Shape:
    params: float
    layers: int
    d_model: int
    heads: int
    kv_heads: int
    vocab: int | None
    known: bool  # False when layers and width were inferred from the parameter count

    @property
    def head_dim(self) -> float:
        return self.d_model / self.heads


def shape_of(w: Workload) -> Shape:
    """The model's shape; layers and width inferred from N (d ≈ 128·L, N ≈ 12·L·d²) when not given."""
    known = bool(w.layers and w.d_model)
    if known:
        layers, d_model = int(w.layers), int(w.d_model)
    else:
        d_model = int(round((C.ASPECT_RATIO * w.params / 12.0) ** (1.0 / 3.0)))
        layers = max(1, int(round(d_model / C.ASPECT_RATIO)))
        if w.layers:
            layers = int(w.layers)
            d_model = int(round(math.sqrt(w.params / (12.0 * layers))))
        if w.d_model:
            d_model = int(w.d_model)
            layers = max(1, int(round(w.params / (12.0 * d_model * d_model))))
    heads = int(w.heads) if w.heads else max(1, d_model // 128)
    kv_heads = int(w.kv_heads) if w.kv_heads else heads
    return Shape(w.params, layers, d_model, heads, kv_heads, w.vocab, known)


def non_embedding_params(w: Workload, s: Shape) -> float:
    """N without the input embedding table (a lookup, not a matrix multiplication)."""
    if s.vocab and s.known:
        return max(w.params - s.vocab * s.d_model, w.params * 0.5)
    return w.params


def training_flops_per_token(w: Workload, s: Shape) -> float:
    """Model FLOPs per trained token: 6·N plus attention 12·L·d·s (PaLM's MFU convention)."""
    if w.flops_per_token:
        return float(w.flops_per_token)
    n = non_embedding_params(w, s)
    attention = 12.0 * s.layers * s.d_model * w.seq_len
    if w.kind == "finetune" and w.method in ("lora", "qlora"):
        # frozen weights need no weight gradients: forward 2N + backward activation gradients 2N
        return 4.0 * n + (2.0 / 3.0) * attention + 6.0 * n * w.lora_fraction
    return 6.0 * n + attention


def inference_flops_per_token(w: Workload, s: Shape, context: float) -> float:
    """Forward FLOPs for one token attending to `context` earlier tokens."""
    return 2.0 * non_embedding_params(w, s) + 4.0 * s.layers * s.d_model * context


def weight_bytes(w: Workload) -> float:
    if w.weights_bytes:
        return float(w.weights_bytes)
    return w.params * C.WEIGHT_BYTES.get(w.precision, 2.0)


def kv_bytes_per_token(w: Workload, s: Shape) -> float:
    per_element = w.kv_bytes_per_element or C.KV_BYTES.get(w.precision, 2.0)
    return 2.0 * s.layers * s.kv_heads * s.head_dim * per_element


def activation_bytes(w: Workload, s: Shape, tp: int, micro_batch: int, checkpointing: bool) -> float:
    """Activation memory of one device (Korthikanti et al. 2022, with FlashAttention).

    With tensor parallelism, sequence parallelism splits the whole layer's activations by t. With
    1F1B pipelining the first stage keeps `pp` micro-batches of its L/pp layers: about L layers'
    worth whatever the pipeline depth.
    """
    sbh = w.seq_len * micro_batch * s.d_model
    per_layer = sbh * C.ACT_PER_LAYER / max(1, tp)
    if checkpointing:
        stored = 2.0 * sbh * s.layers / max(1, tp) + per_layer  # layer inputs, plus one layer recomputed
    else:
        stored = per_layer * s.layers
    logits = w.seq_len * micro_batch * (s.vocab or 0) * C.LOGIT_BYTES / max(1, tp)
    return stored + logits
