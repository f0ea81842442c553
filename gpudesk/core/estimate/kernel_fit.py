"""Fit a GEMM curve (kernels.GemmCurve) to one measured table of (M, N, K, seconds).

The objective is the mean squared log error of the curve's time against each measured time, so a
4 µs product counts as much as a 4 ms one. The continuous parameters are found by coordinate descent
(golden-section search on each in turn, a fixed number of rounds, from fixed starting values), the
tile shape by trying each candidate: deterministic, no random starts, and fast enough for a test to
refit every table (about a second a table)."""

from __future__ import annotations

import math
from dataclasses import replace

from gpudesk.core.estimate.kernels import GemmCurve

# Bounds of the continuous parameters: (name, low, high)
BOUNDS = (("efficiency", 0.3, 0.99), ("bandwidth_share", 0.3, 0.98), ("fixed_us", 0.0, 60.0),
          ("k_half", 0.0, 1024.0), ("prepass_bytes", 0.0, 8.0))
TILES = ((64, 128), (128, 128), (128, 256))
UNITS_CANDIDATES = tuple(range(64, 201, 4))
ROUNDS = 4
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def loss(curve: GemmCurve, rows, peak_flops: float, bandwidth_bytes_s: float, precision: str) -> float:
    total = 0.0
    for m, n, k, seconds in rows:
        predicted = curve.seconds(m, n, k, peak_flops, bandwidth_bytes_s, precision)
        total += math.log(predicted / seconds) ** 2
    return total / max(1, len(rows))


def _golden(f, low: float, high: float, steps: int = 24) -> float:
    a, b = low, high
    c, d = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + GOLDEN * (b - a)
            fd = f(d)
    return (a + b) / 2.0


def _descend(curve: GemmCurve, rows, peak: float, bw: float, precision: str) -> GemmCurve:
    for _ in range(ROUNDS):
        for name, low, high in BOUNDS:
            best = _golden(lambda v, name=name, curve=curve: loss(replace(curve, **{name: v}), rows, peak, bw, precision),
                           low, high)
            curve = replace(curve, **{name: best})
    return curve


def fit(rows, peak_flops: float, bandwidth_bytes_s: float, precision: str, units: int | None = None,
        basis: str = "") -> tuple[GemmCurve, float]:
    """The curve that best explains `rows` [(m, n, k, seconds)], and its RMS log error. `units`
    is the device's SM or compute-unit count where the datasheet gives it; otherwise it is fitted
    too (from UNITS_CANDIDATES, on the best tile shape)."""
    start = GemmCurve(efficiency=0.75, bandwidth_share=0.8, fixed_us=5.0, k_half=64.0, tile_m=128, tile_n=128,
                      units=units or 132, basis=basis, measured=True)
    best, best_loss = None, math.inf
    for tile_m, tile_n in TILES:
        curve = _descend(replace(start, tile_m=tile_m, tile_n=tile_n), rows, peak_flops, bandwidth_bytes_s, precision)
        value = loss(curve, rows, peak_flops, bandwidth_bytes_s, precision)
        if value < best_loss:
            best, best_loss = curve, value
    if units is None:
        for candidate in UNITS_CANDIDATES:
            value = loss(replace(best, units=candidate), rows, peak_flops, bandwidth_bytes_s, precision)
            if value < best_loss:
                best, best_loss = replace(best, units=candidate), value
        best = _descend(best, rows, peak_flops, bandwidth_bytes_s, precision)
        best_loss = loss(best, rows, peak_flops, bandwidth_bytes_s, precision)
    return best, math.sqrt(best_loss)


def fit_all_reduce(rows, gpus: int) -> tuple[float, float, float]:
    """(latency µs, bus GB/s, RMS log error) of the all-reduce line t = latency + bus bytes / bandwidth
    that best explains `rows` [(bytes, seconds)] on `gpus` devices (mean squared log error)."""
    from gpudesk.core.estimate.kernels import AllReduceCurve

    def err(latency: float, bus: float) -> float:
        c = AllReduceCurve(gpus, latency, bus)
        return sum(math.log(c.seconds(b) / t) ** 2 for b, t in rows) / max(1, len(rows))

    latency, bus = 10.0, 100.0
    for _ in range(6):
        latency = _golden(lambda v, bus=bus: err(v, bus), 0.5, 200.0)
        bus = _golden(lambda v, latency=latency: err(latency, v), 1.0, 2000.0)
    return latency, bus, math.sqrt(err(latency, bus))


DECODE_BOUNDS = (("fixed_us", 0.0, 60.0), ("per_sequence_us", 0.0, 2.0), ("bandwidth_share", 0.1, 1.0),
                 ("flops_share", 0.005, 1.0))


def fit_decode_attention(rows, kv_dtype: str, bandwidth_bytes_s: float, peak16_flops: float):
    """The DecodeAttentionCurve that best explains `rows` [(batch, context, heads, kv_heads, head_dim,
    seconds)] (mean squared log error, coordinate descent from fixed starting values), and its RMS
    log error."""
    from gpudesk.core.estimate.kernels import DecodeAttentionCurve

    def err(curve) -> float:
        return sum(math.log(curve.seconds(b, c, h, kv, d, bandwidth_bytes_s, peak16_flops) / t) ** 2
                   for b, c, h, kv, d, t in rows) / max(1, len(rows))

    curve = DecodeAttentionCurve(kv_dtype, 10.0, 0.05, 0.7, 0.1)
    for _ in range(ROUNDS + 2):
        for name, low, high in DECODE_BOUNDS:
            best = _golden(lambda v, name=name, curve=curve: err(replace(curve, **{name: v})), low, high)
            curve = replace(curve, **{name: best})
    return curve, math.sqrt(err(curve))


CONTEXT_BOUNDS = (("efficiency", 0.1, 0.99), ("seq_half", 0.0, 8192.0), ("fixed_us", 0.0, 60.0))


def fit_context_attention(rows, peak16_flops: float):
    """The ContextAttentionCurve that best explains `rows` [(batch, seq, heads, head_dim, seconds)] (mean
    squared log error), and its RMS log error."""
    from gpudesk.core.estimate.kernels import ContextAttentionCurve

    def err(curve) -> float:
        return sum(math.log(curve.seconds(b, q, h, d, peak16_flops) / t) ** 2 for b, q, h, d, t in rows) / max(1, len(rows))

    curve = ContextAttentionCurve(0.6, 512.0, 10.0)
    for _ in range(ROUNDS + 2):
        for name, low, high in CONTEXT_BOUNDS:
            best = _golden(lambda v, name=name, curve=curve: err(replace(curve, **{name: v})), low, high)
            curve = replace(curve, **{name: best})
    return curve, math.sqrt(err(curve))


MOE_BOUNDS = (("grouped", 0.05, 1.5), ("bandwidth_share", 0.1, 1.0), ("row_bytes", 0.0, 64.0), ("fixed_us", 0.0, 200.0))


def fit_moe(rows, dtype: str, server: str):
    """The MoECurve that best explains `rows` [(products, weights, moved, seconds)]: each call's raw
    terms (kernels.moe_terms) and its measured time (mean squared log error, coordinate descent from
    fixed starting values), and its RMS log error."""
    from gpudesk.core.estimate.kernels import MoECurve

    def err(curve) -> float:
        return sum(math.log(curve.scaled(p, w, m) / t) ** 2 for p, w, m, t in rows) / max(1, len(rows))

    curve = MoECurve(dtype, server, 0.6, 0.8, 8.0, 30.0)
    for _ in range(ROUNDS + 2):
        for name, low, high in MOE_BOUNDS:
            best = _golden(lambda v, name=name, curve=curve: err(replace(curve, **{name: v})), low, high)
            curve = replace(curve, **{name: best})
    return curve, math.sqrt(err(curve))
