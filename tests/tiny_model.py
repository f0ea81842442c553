"""The toy decoder the engine's mutation tests work out by hand: small enough that every figure in
their comments can be checked on paper."""

from __future__ import annotations

from gpudesk.core.estimate.model import Shape


def tiny_shape(**changes) -> Shape:
    """4 layers, d_model 8, 2 query heads and 1 KV head of width 4, a gated MLP of 16, vocabulary 100,
    untied, 1e9 parameters stated, every layer dense, grouped-query attention; `changes` sets any field."""
    base = dict(params=1e9, active_params=1e9, layers=4, d_model=8, heads=2, kv_heads=1, head_dim=4, ffn_dim=16,
                gated=True, vocab=100, tied=False, experts=0, experts_active=0, shared_experts=0, expert_ffn_dim=0,
                dense_layers=4, attention="gqa", kv_lora_rank=0, qk_rope_head_dim=0, sliding_window=None,
                sliding_share=0.0, known=True)
    base.update(changes)
    return Shape(**base)
