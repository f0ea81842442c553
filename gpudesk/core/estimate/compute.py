"""Per-device time of a transformer's work, roofline by kernel class: matrix multiplications at
the device's achievable matrix rate, fused attention at its attention rate (or, without fused
kernels, the score matrix through memory), element-wise work (norms, activations, residuals,
rotary, the loss) at achievable memory bandwidth, and a fixed cost per kernel with the host's
launch rate as a floor. Utilisation is what comes out, not what goes in."""

from __future__ import annotations

from dataclasses import dataclass

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.kernels import GemmCurve, datasheet_curve, shape_factor
from gpudesk.core.estimate.model import (
    Shape,
    attention_context,
    expert_products,
    layer_matmul_params,
)
from gpudesk.core.estimate.profiles import Profile, bandwidth_share, gemm_key, matmul_share, profile_of
from gpudesk.core.estimate.types import Device, Workload


@dataclass(frozen=True)
class Peak:
    tflops: float  # dense peak at the precision used, as the catalogue states it (MFU's denominator)
    rate_tflops: float  # what 16-bit-or-wider matrix math actually runs at (FP32 rate without matrix units)
    precision: str
    note: str = ""
    fp8_tflops: float | None = None  # FP8 matrix rate when the workload trains in FP8
    tensor_note: str = ""  # set when the device has no matrix units for 16-bit math


@dataclass(frozen=True)
class Rates:
    """What one device sustains in the likely, pessimistic or optimistic case."""

    gemm: float  # FLOP/s of large matrix multiplications at the workload's precision
    gemm16: float  # FLOP/s of 16-bit matrix multiplications (attention, FP8's leftovers)
    attention: float  # FLOP/s of fused attention
    bandwidth: float  # bytes/s
    kernel_s: float
    launch_s: float
    flash: bool
    profile: Profile
    matmul_basis: str
    curve: GemmCurve | None = None  # the workload precision's GEMM curve (shape dependence)
    curve16: GemmCurve | None = None  # the 16-bit GEMM curve
    peak_flops: float = 0.0  # dense peak at the workload's GEMM precision, FLOP/s
    peak16_flops: float = 0.0
    bandwidth_raw: float = 0.0  # datasheet memory bandwidth, bytes/s
    gemm_precision: str = "bf16"
    attention_curve: object | None = None  # fused attention measured on this device (kernels.ContextAttentionCurve)
    case: float = 1.0  # the case's factor on the measured kernels' rates

    def attention_rate(self, seq: float) -> float:
        """FLOP/s of fused causal attention over sequences of `seq` tokens: the measured curve's share
        of the 16-bit peak at that length (scaled like the GEMMs by the case), else the family's share."""
        if self.attention_curve is None or self.peak16_flops <= 0:
            return self.attention
        return self.peak16_flops * min(C.UTILISATION_MAX, self.attention_curve.share(seq) * self.case)

    def gemm_rate(self, shapes, sixteen: bool = False) -> float:
        """FLOP/s of these products (m, n, k) at the workload's precision (or 16-bit): the large-GEMM
        rate scaled by the curve's shape factor."""
        curve = self.curve16 if sixteen else self.curve
        base = self.gemm16 if sixteen else self.gemm
        if curve is None:
            return base
        peak = self.peak16_flops if sixteen else self.peak_flops
        return base * shape_factor(curve, shapes, peak, self.bandwidth_raw, "bf16" if sixteen else self.gemm_precision)


def training_peak(device: Device, precision: str) -> Peak | None:
    """Dense peak at `precision`, with the fallbacks a practitioner would use."""
    peaks = device.peak_tflops
    profile = profile_of(device)
    used, note = precision, ""
    if precision == "fp8" and not peaks.get("fp8"):
        used = "bf16" if peaks.get("bf16") else "fp16"
        note = f"{device.name} has no FP8 figure: {used.upper()} used"
    if used == "bf16" and not peaks.get("bf16") and peaks.get("fp16"):
        used, note = "fp16", f"{device.name} has no BF16 figure: FP16 used"
    elif used == "fp16" and not peaks.get("fp16") and peaks.get("bf16"):
        used, note = "bf16", f"{device.name} has no FP16 figure: BF16 used"
    elif used == "tf32" and not peaks.get("tf32") and peaks.get("fp32"):
        used, note = "fp32", f"{device.name} has no TF32 figure: FP32 used"
    peak = peaks.get(used)
    if not peak and peaks.get("fp32") and precision in ("tf32", "fp16", "bf16", "fp8"):
        used, peak = "fp32", peaks["fp32"]
        note = f"{device.name} has no 16-bit figure: its FP32 rate ({peak:g} TFLOPS) is used"
    if not peak:
        return None
    rate, tensor_note = peak, ""
    if not profile.tensor and used in ("fp16", "bf16"):
        # no matrix units: mixed precision accumulates in FP32, at the FP32 vector rate
        rate = peaks.get("fp32") or peak / 2.0
        tensor_note = (f"{device.name} has no tensor cores: 16-bit training accumulates in FP32 at "
                       f"{rate:g} TFLOPS, not its {peak:g} TFLOPS {used.upper()} figure")
    if used == "fp8":
        base = peaks.get("bf16") or peaks.get("fp16") or peak / 2.0
        return Peak(peak, base, "fp8", note, fp8_tflops=peak)
    return Peak(peak, rate, used, note, tensor_note=tensor_note)


def rates(device: Device, peak: Peak, case_factor: float, precision: str) -> Rates:
    """The device's sustained rates; `case_factor` scales the matrix and attention shares (the
    spread between codebases), never beyond the datasheet."""
    profile = profile_of(device)
    share16, basis = matmul_share(device, profile, "bf16")
    gemm16 = peak.rate_tflops * 1e12 * min(C.UTILISATION_MAX, share16 * case_factor)
    gemm = gemm16
    if peak.fp8_tflops:
        share8, basis = matmul_share(device, profile, "fp8")
        gemm = peak.fp8_tflops * 1e12 * min(C.UTILISATION_MAX, share8 * case_factor)
    attention = peak.rate_tflops * 1e12 * min(C.UTILISATION_MAX, profile.attention * case_factor)
    stream, _ = bandwidth_share(device, profile)
    bandwidth = (device.mem_bandwidth_gbs or 0.0) * 1e9 * min(0.97, stream * min(case_factor, 1.05))
    precision16 = "bf16"
    curve16 = gemm_curve(device, profile, precision16)
    curve = gemm_curve(device, profile, "fp8") if peak.fp8_tflops else curve16
    return Rates(gemm, gemm16, attention, max(bandwidth, 1.0), profile.kernel_us * 1e-6,
                 profile.launch_us * 1e-6, profile.flash and profile.attention > 0, profile, basis,
                 curve=curve, curve16=curve16, peak_flops=(peak.fp8_tflops or peak.rate_tflops) * 1e12,
                 peak16_flops=peak.rate_tflops * 1e12, bandwidth_raw=max(1.0, (device.mem_bandwidth_gbs or 0.0) * 1e9),
                 gemm_precision="fp8" if peak.fp8_tflops else precision16,
                 attention_curve=device.context_attention_curve if profile.flash else None, case=case_factor)


def gemm_curve(device: Device, profile: Profile, precision: str) -> GemmCurve:
    """The device's GEMM curve at `precision` ("bf16", "fp8" or "fp4"): fitted to its own measured table
    where the catalogue has one (its 16-bit table where it has none at 8 or 4 bits), else built from its
    datasheet and family."""
    key = gemm_key(precision)
    own = device.gemm_curves.get(key) or (device.gemm_curves.get("bf16") if key != "bf16" else None)
    if own is not None:
        return own
    share, _ = matmul_share(device, profile, key)
    units = device.tensor_cores // 4 if device.tensor_cores else None
    return datasheet_curve(share, bandwidth_share(device, profile)[0], profile.kernel_us, units, device.device_class, profile.label)


def layer_shapes(s: Shape, tokens: float, tp: int) -> tuple[tuple[float, float, float], ...]:
    """The forward products (m, n, k) of one dense layer on one device under tensor parallelism
    (sequence parallel: each product sees every token of the micro-batch): QKV, output projection,
    the MLP's up (and gate) and down projections."""
    d, f = s.d_model, s.ffn_dim
    return ((tokens, (s.q_dim + 2 * s.kv_dim) / tp, d), (tokens, d, s.q_dim / tp),
            (tokens, (2 if s.gated else 1) * f / tp, d), (tokens, d, f / tp))


def backward_shapes(forward, weights: bool = True) -> tuple[tuple[float, float, float], ...]:
    """The backward products of forward products (m, n, k): the input gradient (m, k, n) and, unless
    the weights are frozen (`weights` False), the weight gradient (k, n, m)."""
    out = []
    for m, n, k in forward:
        out.append((m, k, n))
        if weights:
            out.append((k, n, m))
    return tuple(out)


def backward_passes(w: Workload) -> tuple[float, bool]:
    """How many forward-sized products the backward pass runs per weight matrix, and whether one of
    them is the weight gradient: 2 (input and weight gradients), or 1 for LoRA and QLoRA, whose frozen
    weights need only the input gradient (Hu et al. 2021, arXiv:2106.09685, section 4)."""
    return (1.0, False) if w.frozen_base else (2.0, True)


@dataclass(frozen=True)
class LayerWork:
    """Seconds of one layer's work on one device for one micro-batch: its forward GEMMs and
    attention, and its element-wise traffic over the forward and backward passes together."""

    gemm: float
    attention: float
    memory: float
    gemm_bwd: float = -1.0  # backward GEMMs (input and weight gradients); -1: twice the forward

    @property
    def backward_gemm(self) -> float:
        return self.gemm_bwd if self.gemm_bwd >= 0 else 2.0 * self.gemm


def layer_work(s: Shape, w: Workload, r: Rates, tokens: float, tp: int, moe: bool, ew_factor: float) -> LayerWork:
    """One layer over `tokens` tokens (one micro-batch; this device's share under tensor
    parallelism with sequence parallelism)."""
    dense_p, moe_p = layer_matmul_params(s)
    d = s.d_model
    shapes = layer_shapes(s, tokens, tp)
    attn_shapes = shapes[:2]
    passes, weights = backward_passes(w)
    if moe:
        # the experts' products as one grouped GEMM, each expert's rows padded to whole tiles
        expert_p, expert_shapes, fill = expert_products(s, tokens, tp, r.curve.tile_m if r.curve is not None else 1)
        rate_a, rate_e = r.gemm_rate(attn_shapes), r.gemm_rate(expert_shapes) * fill
        gemm = 2 * (moe_p - expert_p) * tokens / tp / rate_a + 2 * expert_p * tokens / tp / rate_e
        bwd_a = r.gemm_rate(backward_shapes(attn_shapes, weights))
        bwd_e = r.gemm_rate(backward_shapes(expert_shapes, weights)) * fill
        gemm_bwd = 2 * passes * ((moe_p - expert_p) * tokens / tp / bwd_a + expert_p * tokens / tp / bwd_e)
        mlp_width = (s.experts_active + s.shared_experts) * s.expert_ffn_dim
        trained = moe_p
    else:
        gemm = 2 * dense_p * tokens / tp / r.gemm_rate(shapes)
        gemm_bwd = 2 * passes * dense_p * tokens / tp / r.gemm_rate(backward_shapes(shapes, weights))
        mlp_width = s.ffn_dim
        trained = dense_p
    if not weights:
        # the adapters beside the frozen matrices a token passes: 2 FLOPs per adapter parameter
        # forward, 4 backward
        adapters = w.lora_fraction * trained * tokens / tp / r.gemm_rate(shapes)
        gemm, gemm_bwd = gemm + 2 * adapters, gemm_bwd + 4 * adapters
    ctx = attention_context(s, w.seq_len) / 2.0  # causal: a token sees half the sequence on average
    attn_flops = 4.0 * s.q_dim / tp * ctx * tokens
    if r.flash:
        attention = attn_flops / r.attention_rate(w.seq_len)
    else:
        # scores materialised: two batched GEMMs plus the score matrix written, read and softmaxed
        attention = attn_flops / (r.gemm16 * 0.7) + 8.0 * s.heads / tp * ctx * tokens / r.bandwidth
    ew_bytes = (C.ELEMENTWISE_FORWARD_D * d + C.ELEMENTWISE_FORWARD_F[s.gated or moe] * mlp_width) * tokens / tp
    return LayerWork(gemm, attention, ew_bytes * ew_factor / r.bandwidth, gemm_bwd)


@dataclass(frozen=True)
class StageTime:
    """Seconds one pipeline stage spends on one micro-batch, forward and backward, and the parts."""

    forward: float
    backward: float
    gemm: float
    attention: float
    memory: float
    overhead: float

    @property
    def total(self) -> float:
        return self.forward + self.backward


def mean_layer_work(s: Shape, w: Workload, r: Rates, tokens: float, tp: int, moe_share: float,
                    ew_factor: float) -> LayerWork:
    """One layer's work averaged over the model's dense and MoE layers."""
    dense = layer_work(s, w, r, tokens, tp, False, ew_factor)
    if not s.moe:
        return dense
    moe = layer_work(s, w, r, tokens, tp, True, ew_factor)
    return LayerWork((1 - moe_share) * dense.gemm + moe_share * moe.gemm,
                     (1 - moe_share) * dense.attention + moe_share * moe.attention,
                     (1 - moe_share) * dense.memory + moe_share * moe.memory,
                     (1 - moe_share) * dense.backward_gemm + moe_share * moe.backward_gemm)


def stage_time(s: Shape, w: Workload, r: Rates, tokens: float, tp: int, layers: float, moe_share: float,
               recompute: str, ew_factor: float, kernels_per_layer: float, head: bool,
               unit: LayerWork | None = None, recompute_share: float = 1.0) -> StageTime:
    """Forward and backward of `layers` layers (a share `moe_share` of them MoE layers), plus the
    output head and loss when this stage holds them. Backward GEMMs cost twice the forward
    (gradients of inputs and of weights); fused attention's backward 2.5 times (it recomputes the
    scores); element-wise traffic splits one third forward, two thirds backward; full recomputation
    runs the forward of `recompute_share` of the layers again. `unit` is one layer's mean work when
    the caller already has it (the planner reuses it across depths)."""
    unit = unit or mean_layer_work(s, w, r, tokens, tp, moe_share, ew_factor)
    gemm, attention, memory = unit.gemm * layers, unit.attention * layers, unit.memory * layers
    gemm_bwd = unit.backward_gemm * layers
    if head and s.vocab:
        head_shape = ((tokens, s.vocab / tp, s.d_model),)
        gemm += 2 * s.vocab * s.d_model * tokens / tp / r.gemm_rate(head_shape, sixteen=True)
        passes, weights = backward_passes(w)
        gemm_bwd += 2 * passes * s.vocab * s.d_model * tokens / tp / r.gemm_rate(
            backward_shapes(head_shape, weights), sixteen=True)
        memory += C.LOGIT_BYTES * 2 * s.vocab * tokens / tp / r.bandwidth
    fixed = kernels_per_layer * layers * r.kernel_s
    bwd_attention = 2.5 if r.flash else 2.0
    forward = gemm + attention + memory / 3 + fixed / 3
    backward = gemm_bwd + bwd_attention * attention + 2 * memory / 3 + 2 * fixed / 3
    if recompute == "full":
        backward += recompute_share * forward
    elif recompute == "selective":
        backward += attention + memory / 9
    floor = kernels_per_layer * layers * r.launch_s  # the host cannot launch kernels faster
    forward, backward = max(forward, floor / 3), max(backward, 2 * floor / 3)
    return StageTime(forward, backward, gemm + gemm_bwd, (1 + bwd_attention) * attention, memory, fixed)


def optimizer_step_s(params_local: float, r: Rates) -> float:
    """One Adam step over this device's share of the parameters: memory-bound."""
    return params_local * C.OPTIMIZER_STEP_BYTES / r.bandwidth
