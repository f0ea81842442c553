"""Kernel time by shape: how long one matrix multiplication of M×K by K×N takes on a device, from a
curve that explains itself, fitted to measured operator tables (data/kernels/, fitted by
core/kernel_fit.py) or, where a device has no table, built from its datasheet.

The curve is a roofline with the losses GEMM libraries are known for:
- the compute side runs at `efficiency` of the dense peak once the device is full;
- tile quantisation: the output is cut into tiles of tile_m × tile_n, and a tile that sticks out of
  the matrix costs as much as a whole one;
- wave quantisation: tiles run `units` at a time (one per SM or compute unit), so the last wave
  may leave units idle; skinny products split K over idle units (split-K), as cuBLAS and CUTLASS do;
- a ramp for short K: each tile pays a fixed prologue and epilogue worth `k_half` steps of K;
- the memory side: the operands and the result cross memory once at `bandwidth_share` of the
  datasheet bandwidth (small-M products such as decoding are memory-bound);
- a fixed cost per call (`fixed_us`: launch, ramp-up and tail);
- a pass over the activations before the product where the library runs one (`prepass_bytes` per
  M×K element: FP8 paths quantise their 16-bit input per token first, reading 2 and writing 1 byte).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

# Bytes per element of the inputs by precision (outputs are 16-bit).
INPUT_BYTES = {"fp32": 4.0, "tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 0.5625}
OUTPUT_BYTES = 2.0
# Split-K cuts K into pieces no shorter than this (a shorter piece costs more in reduction than it
# saves), as CUTLASS's split-K heuristics do.
SPLIT_K_MIN = 512


@dataclass(frozen=True)
class GemmCurve:
    efficiency: float  # share of the dense peak a full device reaches on large products
    bandwidth_share: float  # share of the datasheet memory bandwidth the memory side reaches
    fixed_us: float  # per call
    k_half: float  # prologue and epilogue of a tile, in steps of K
    tile_m: int
    tile_n: int
    units: int  # SMs or compute units that each run one tile at a time
    basis: str = ""  # where the curve comes from, in words
    measured: bool = False  # fitted to a measured table (True) or built from the datasheet
    prepass_bytes: float = 0.0  # bytes per element of the M×K input moved by a separate pass first

    def seconds(self, m: float, n: float, k: float, peak_flops: float, bandwidth_bytes_s: float,
                precision: str = "bf16") -> float:
        """Seconds of one product (m×k)·(k×n) on one device at `peak_flops` dense and
        `bandwidth_bytes_s` of memory bandwidth."""
        if m <= 0 or n <= 0 or k <= 0:
            return 0.0
        compute = self.compute_seconds(m, n, k, peak_flops)
        memory = self.memory_seconds(m, n, k, bandwidth_bytes_s, precision)
        prepass = m * k * self.prepass_bytes / (bandwidth_bytes_s * self.bandwidth_share)
        return max(compute, memory) + prepass + self.fixed_us * 1e-6

    def compute_seconds(self, m: float, n: float, k: float, peak_flops: float) -> float:
        tiles = math.ceil(m / self.tile_m) * math.ceil(n / self.tile_n)
        split = 1
        if tiles < self.units:
            split = max(1, min(self.units // tiles, int(k // SPLIT_K_MIN)))
        waves = math.ceil(tiles * split / self.units)
        k_piece = k / split
        per_unit = peak_flops * self.efficiency / self.units
        return waves * 2.0 * self.tile_m * self.tile_n * (k_piece + self.k_half) / per_unit

    def memory_seconds(self, m: float, n: float, k: float, bandwidth_bytes_s: float, precision: str) -> float:
        moved = (m * k + k * n) * INPUT_BYTES.get(precision, 2.0) + m * n * OUTPUT_BYTES
        return moved / (bandwidth_bytes_s * self.bandwidth_share)

    def share(self, m: float, n: float, k: float, peak_flops: float, bandwidth_bytes_s: float,
              precision: str = "bf16") -> float:
        """Share of `peak_flops` the product reaches: 2·m·n·k / (seconds × peak)."""
        t = self.seconds(m, n, k, peak_flops, bandwidth_bytes_s, precision)
        return 2.0 * m * n * k / (t * peak_flops) if t > 0 else 0.0



# The shape the datasheet-level rate (MAMF: the best of a sweep of large products) is taken at:
# shape factors are relative to it, so the curve carries the shape and MAMF the level.
REFERENCE = (8192, 8192, 8192)
# Fallbacks for a device without a measured table: the median of the fitted BF16 curves
# (data/kernels/curves.toml) for the ramp and the tile, and its matrix-unit count where known.
DATASHEET_K_HALF = 150.0
DATASHEET_TILE = (64, 128)
UNITS_BY_CLASS = {"datacenter": 108, "workstation": 84, "consumer": 64, "laptop": 48, "edge": 16, "desktop_ai": 48}


def datasheet_curve(efficiency: float, bandwidth_share: float, fixed_us: float, units: int | None,
                    device_class: str, label: str) -> GemmCurve:
    """A curve for a device without a measured table: its family's large-product share, its own
    unit count where the datasheet gives one, the fitted tables' median ramp and tile."""
    return GemmCurve(efficiency=efficiency, bandwidth_share=bandwidth_share, fixed_us=fixed_us,
                     k_half=DATASHEET_K_HALF, tile_m=DATASHEET_TILE[0], tile_n=DATASHEET_TILE[1],
                     units=units or UNITS_BY_CLASS.get(device_class, 64),
                     basis=f"no measured table: {label}'s large-product share, {units or 'assumed'} units, "
                           "the fitted tables' median ramp", measured=False)


def grouped_rows(tokens: float, experts: int, active: int, tile_m: int) -> tuple[float, float]:
    """The rows of a mixture of experts' grouped product over `tokens` tokens, each routed to `active`
    of `experts` experts: MoE kernels (grouped GEMMs) run every routed expert's tiles in one launch,
    so the waves fill with all experts' tiles and only each expert's last tile of rows is partly
    empty. Returns (rows of the product, every expert's rows padded to whole tiles; the share of those
    rows that hold a token)."""
    routed = max(1.0, tokens * active)  # rows in all (a product has at least one)
    used = min(float(experts), routed)  # experts some token is routed to
    per_expert = routed / used
    padded = used * math.ceil(per_expert / max(1, tile_m)) * max(1, tile_m)
    return padded, used * per_expert / padded


# the MoE tables' weight formats (moe.csv's dtype column): bytes per weight, and the precision of the
# GEMM curve each multiplies at
MOE_WEIGHT_BYTES = {"bfloat16": 2.0, "fp8": 1.0, "fp8_block": 1.0, "nvfp4": 0.5}
MOE_FORMAT_PRECISION = {"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8", "nvfp4": "fp4"}


@dataclass(frozen=True)
class MoECurve:
    """A mixture of experts' whole expert computation in one layer, as a serving engine's MoE operator
    runs it (routing, gathering each token's rows for its experts, the grouped up/gate and down products
    with their activation, the weighted return), fitted to a measured table of such calls:

        fixed + max(grouped products, the touched experts' weights) + the routed rows' traffic

    The grouped products are timed on the device's own GEMM curve over each expert's rows padded to whole
    tiles, at `grouped` times that curve's rate (a grouped kernel rarely reaches a dense one's); the
    weights stream at `bandwidth_share` of the datasheet bandwidth; every routed row moves `row_bytes`
    bytes per hidden element (the gather, the activation's round trip, the return). Balanced routing."""

    dtype: str  # weight format as the table names it (bfloat16, fp8, fp8_block, nvfp4)
    server: str  # whose operator was timed (trtllm | vllm)
    grouped: float
    bandwidth_share: float
    row_bytes: float
    fixed_us: float
    basis: str = ""

    def seconds(self, tokens: float, hidden: float, inter: float, topk: int, experts: int, tp: int, ep: int,
                gemm: GemmCurve, peak_flops: float, bandwidth_bytes_s: float) -> float:
        """One call over `tokens` tokens on one device holding 1/ep of the experts, each split tp ways."""
        products, weights, moved = moe_terms(self.dtype, tokens, hidden, inter, topk, experts, tp, ep, gemm,
                                             peak_flops, bandwidth_bytes_s)
        return self.scaled(products, weights, moved)

    def scaled(self, products: float, weights: float, moved: float) -> float:
        """Seconds from `moe_terms`' raw terms."""
        return (self.fixed_us * 1e-6 + max(products / self.grouped, weights / self.bandwidth_share)
                + moved * self.row_bytes)


def moe_terms(dtype: str, tokens: float, hidden: float, inter: float, topk: int, experts: int, tp: int, ep: int,
              gemm: GemmCurve, peak_flops: float, bandwidth_bytes_s: float) -> tuple[float, float, float]:
    """A MoE call's raw terms, before a MoECurve scales them: the grouped products at the GEMM curve's
    own rate (each expert's rows padded to whole tiles), the touched experts' weights at the full
    datasheet bandwidth, and one byte per routed row and hidden element at that bandwidth."""
    local = experts / ep
    rows, _fill = grouped_rows(tokens / ep, local, topk, gemm.tile_m)
    width = inter / tp
    products = (gemm.compute_seconds(rows, 2.0 * width, hidden, peak_flops)
                + gemm.compute_seconds(rows, hidden, width, peak_flops))
    routed = tokens * topk / ep
    weights = min(local, routed) * 3.0 * hidden * width * MOE_WEIGHT_BYTES.get(dtype, 2.0) / bandwidth_bytes_s
    return products, weights, routed * hidden / bandwidth_bytes_s


def shape_factor(curve: GemmCurve, shapes, peak_flops: float, bandwidth_bytes_s: float, precision: str = "bf16",
                 compute_only: bool = False) -> float:
    """What these products reach together, relative to the reference product on the same curve
    (1.0 for large squares; less for narrow, short or skinny ones; above 1 is clipped). Remembered:
    the planners ask for the same few shapes many times."""
    return _shape_factor(curve, tuple(tuple(s) for s in shapes), peak_flops, bandwidth_bytes_s, precision, compute_only)


@functools.lru_cache(maxsize=65536)
def _shape_factor(curve: GemmCurve, shapes: tuple, peak_flops: float, bandwidth_bytes_s: float, precision: str,
                  compute_only: bool) -> float:
    def rate(items) -> float:
        flops = seconds = 0.0
        for m, n, k in items:
            if m <= 0 or n <= 0 or k <= 0:
                continue
            flops += 2.0 * m * n * k
            seconds += (curve.compute_seconds(m, n, k, peak_flops) + curve.fixed_us * 1e-6 if compute_only else
                        curve.seconds(m, n, k, peak_flops, bandwidth_bytes_s, precision))
        return flops / seconds if seconds > 0 else 0.0

    reference = rate([REFERENCE])
    return min(1.0, rate(shapes) / reference) if reference > 0 else 1.0


@dataclass(frozen=True)
class AllReduceCurve:
    """An all-reduce inside one fast domain on `gpus` devices, fitted to a measured table: a fixed
    latency per call and the bus bandwidth its messages move at (the ring's 2·(g−1)/g of the
    message per device, as nccl-tests counts "busbw")."""

    gpus: int
    latency_us: float
    bus_gbs: float
    kind: str = "nccl"  # nccl | custom (a serving engine's own all-reduce, replayed in a CUDA graph)
    fabric: str = "nvlink"  # the link family it was measured over (nvlink | pcie | infinity_fabric)
    library: str = "NCCL"  # what was timed, in words (NCCL, RCCL, vLLM's custom all-reduce)
    measured_by: str = ""  # whose table (AIConfigurator, a vendor's published rccl-tests run)

    def seconds(self, nbytes: float) -> float:
        if nbytes <= 0:
            return 0.0
        bus = 2.0 * (self.gpus - 1) / self.gpus * nbytes
        return self.latency_us * 1e-6 + bus / (self.bus_gbs * 1e9)


def measured_all_reduce(curves, gpus: int, nbytes: float, kinds=("nccl",)) -> float | None:
    """Seconds of an all-reduce of `nbytes` on `gpus` devices of one domain from the device's measured
    curves of those kinds (the fastest, where a serving engine may use either), or None without one."""
    times = [c.seconds(nbytes) for c in curves if c.gpus == gpus and c.kind in kinds]
    return min(times) if times else None


KV_ELEMENT_BYTES = {"bf16": 2.0, "fp8": 1.0}


@dataclass(frozen=True)
class DecodeAttentionCurve:
    """One layer's decode attention (each of `batch` sequences' new token against its `context`
    cached tokens), fitted to a measured table: a fixed cost per call, a cost per sequence (its own
    blocks and the reduction of split-KV partials), and the slower of streaming the KV cache at a
    share of the datasheet bandwidth and the arithmetic (QK and PV, 4 FLOPs per head, element and
    cached token) at a share of the dense 16-bit peak."""

    kv_dtype: str  # bf16 | fp8: the cache's element type
    fixed_us: float
    per_sequence_us: float
    bandwidth_share: float
    flops_share: float
    basis: str = ""
    server: str = "vllm"  # whose attention kernels were timed (vllm | trtllm): the serving engine's own

    def seconds(self, batch: float, context: float, heads: float, kv_heads: float, head_dim: float,
                bandwidth_bytes_s: float, peak16_flops: float) -> float:
        if batch <= 0:
            return 0.0
        kv_bytes = batch * context * kv_heads * head_dim * 2.0 * KV_ELEMENT_BYTES.get(self.kv_dtype, 2.0)
        flops = 4.0 * batch * context * heads * head_dim
        stream = kv_bytes / (bandwidth_bytes_s * self.bandwidth_share)
        math_s = flops / (peak16_flops * self.flops_share) if peak16_flops > 0 else 0.0
        return (self.fixed_us + batch * self.per_sequence_us) * 1e-6 + max(stream, math_s)


@dataclass(frozen=True)
class ContextAttentionCurve:
    """Fused causal attention over a whole sequence (prefill, and a training step's forward pass),
    fitted to a measured table: the share of the dense 16-bit peak it reaches rises with the
    sequence, efficiency · s / (s + seq_half), plus a fixed cost per call."""

    efficiency: float
    seq_half: float
    fixed_us: float
    basis: str = ""

    def share(self, seq: float) -> float:
        return self.efficiency * seq / (seq + self.seq_half) if seq > 0 else 0.0

    def seconds(self, batch: float, seq: float, heads: float, head_dim: float, peak16_flops: float) -> float:
        """One call: `batch` sequences of `seq` tokens, causal (each token sees half the sequence on average)."""
        if batch <= 0 or seq <= 0:
            return 0.0
        flops = 4.0 * batch * seq * (seq / 2.0) * heads * head_dim
        return self.fixed_us * 1e-6 + flops / (peak16_flops * self.share(seq))
