"""LLM inference: prefill is compute-bound, decoding is bandwidth-bound (every generated token
reads the weights and the KV cache once) until batching makes it compute-bound; tensor
parallelism splits both and adds two all-reduces per layer and token."""

from __future__ import annotations

from dataclasses import dataclass

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.model import Shape, inference_flops_per_token, kv_bytes_per_token, weight_bytes
from gpudesk.core.estimate.types import Device, Link, Workload

QUANTISED = ("int4", "q4", "fp4")


def inference_peak(device: Device, precision: str) -> tuple[float | None, str]:
    """Dense peak (TFLOPS) for the matrix multiplications of inference at `precision`."""
    peaks = device.peak_tflops
    order = {
        "fp32": ("fp32",),
        "tf32": ("tf32", "fp32"),
        "fp16": ("fp16", "bf16"),
        "bf16": ("bf16", "fp16"),
        "fp8": ("fp8", "bf16", "fp16"),
        "int8": ("int8", "fp8", "fp16", "bf16"),
        "int4": ("fp16", "bf16"),  # weight-only quantisation: dequantised to 16-bit for the matmul
        "q4": ("fp16", "bf16"),
        "fp4": ("fp4", "fp8", "fp16", "bf16"),
    }.get(precision, ("fp16", "bf16"))
    for key in order:
        if peaks.get(key):
            gain = C.FP16_ACCUMULATE_GAIN.get(device.device_class, 1.0) if key in ("fp16", "bf16", "fp8") else 1.0
            note = "" if key == order[0] else f"{device.name}: {precision.upper()} runs at its {key.upper()} rate"
            if gain != 1.0:
                note = (note + "; " if note else "") + (
                    f"{device.name}: inference GEMMs with FP16 accumulation at twice the stored FP32-accumulate rate")
            return peaks[key] * gain, note
    return None, f"the catalogue has no compute figure for {device.name} at {precision.upper()}"


@dataclass
class InferenceModel:
    tp: int
    pp: int
    replicas: int
    sequences_per_replica: int
    prefill_tokens_per_s: float | None  # per replica
    ttft_s: float | None
    decode_step_s: float
    decode_tokens_per_s_per_user: float
    decode_tokens_per_s: float  # whole cluster
    bound: str  # "memory bandwidth" | "compute"
    round_s: float  # one round: every user's prompt and answer


def inference_model(w: Workload, s: Shape, device: Device, per_node: int, devices: int, tp: int, pp: int,
                    link: Link | None, case: int, decode_factor: float = 1.0, prefill_factor: float = 1.0) -> InferenceModel:
    """`decode_factor` and `prefill_factor` scale the bandwidth and compute utilisation bands: 1.0
    by default, the measured/estimated ratio when the user's benchmarks calibrate this device."""
    replicas = max(1, devices // (tp * pp))
    sequences = max(1, -(-max(1, w.concurrency) // replicas))  # ceil
    peak, _ = inference_peak(device, w.precision)
    bandwidth = (device.mem_bandwidth_gbs or 0.0) * 1e9

    # prefill of one prompt on one replica
    prefill_rate = None
    ttft = None
    if peak:
        context = w.prompt_tokens / 2.0
        flops = inference_flops_per_token(w, s, context)
        band = C.PREFILL_UTILISATION["quantised" if w.precision in QUANTISED else "dense"]
        prefill_rate = tp * pp * peak * 1e12 * min(0.95, band.pick(case) * prefill_factor) / flops
        if pp > 1:
            prefill_rate /= pp  # one prompt flows through the stages one after another

    # decoding: every step reads this device's share of the weights and of the KV cache
    context = w.prompt_tokens + w.output_tokens / 2.0
    bw_band = C.DECODE_BW["quantised" if w.precision in QUANTISED else "dense"]
    weights = weight_bytes(w) / (tp * pp)
    kv = kv_bytes_per_token(w, s) * context * sequences / (tp * pp)
    memory_s = (weights + kv) / (bandwidth * min(0.98, bw_band.pick(case) * decode_factor)) if bandwidth else float("inf")
    compute_s = 0.0
    if peak:
        compute_s = sequences * inference_flops_per_token(w, s, context) / (tp * pp * peak * 1e12 * C.DECODE_COMPUTE_UTILISATION)
    overhead_s = s.layers * C.DECODE_LAYER_OVERHEAD_S.pick(case)
    comm_s = 0.0
    if tp > 1:
        latency = (link.latency_us if link and link.latency_us else C.LINK_LATENCY_US.get(link.family if link else "pcie", 10.0))
        rate = (link.unidirectional_gbs if link and link.unidirectional_gbs else 16.0) * 1e9 * 0.8
        comm_s = s.layers * 2 * (latency * 1e-6 + 2.0 * (tp - 1) / tp * sequences * s.d_model * 2.0 / rate)
    if pp > 1:
        comm_s += (pp - 1) * 10e-6
    step = max(memory_s, compute_s) + overhead_s + comm_s
    bound = "memory bandwidth" if memory_s >= compute_s else "compute"
    per_user = 1.0 / step
    if prefill_rate:
        ttft = w.prompt_tokens / prefill_rate + step
    round_s = (w.prompt_tokens * sequences / prefill_rate if prefill_rate else 0.0) + w.output_tokens * step
    return InferenceModel(tp, pp, replicas, sequences, prefill_rate, ttft, step, per_user,
                          per_user * sequences * replicas, bound, round_s)
