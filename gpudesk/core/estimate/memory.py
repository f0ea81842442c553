"""Memory fit: what one device must hold, which parallel layout makes it fit, and the smallest
count of a device that can hold a workload.

Model states per parameter follow EleutherAI's "Transformer Math 101" (16 bytes in mixed
precision with Adam); sharding follows ZeRO (Rajbhandari et al. 2020); activations follow
Korthikanti et al. 2022.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.model import Shape, activation_bytes, kv_bytes_per_token, weight_bytes
from gpudesk.core.estimate.types import Device, Workload

GB = 1e9
SHARDING_LABELS = {
    "none": "plain data parallelism (every device holds a full copy)",
    "zero1": "ZeRO-1 (optimizer state sharded)",
    "zero2": "ZeRO-2 (optimizer state and gradients sharded)",
    "zero3": "ZeRO-3 / FSDP (weights, gradients and optimizer state sharded)",
    "fsdp": "FSDP (weights, gradients and optimizer state sharded)",
}


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    dp: int = 1
    sharding: str = "none"
    micro_batch: int = 1
    checkpointing: bool = False

    def describe(self) -> str:
        parts = []
        if self.tp > 1:
            parts.append(f"tensor parallel {self.tp}")
        if self.pp > 1:
            parts.append(f"pipeline parallel {self.pp}")
        parts.append(f"data parallel {self.dp}" + (f" with {SHARDING_LABELS[self.sharding]}" if self.dp > 1 or self.sharding != "none" else ""))
        if self.checkpointing:
            parts.append("activation checkpointing")
        return ", ".join(parts)


def capacity_gb(device: Device) -> float:
    """Memory a workload can use on one device."""
    memory = device.memory_gb or 0.0
    if device.memory_shared:
        memory *= C.SHARED_MEMORY_USABLE
    return memory


def runtime_gb(device: Device) -> float:
    return C.RUNTIME_GB.get(device.device_class, 1.0)


def state_bytes_per_param(w: Workload) -> dict[str, float]:
    if w.precision in ("fp32", "tf32"):
        return dict(C.FP32_BYTES)
    return dict(C.MIXED_PRECISION_BYTES)


def training_breakdown(w: Workload, s: Shape, device: Device, layout: Layout) -> dict[str, float]:
    """GB per device by part, for one layout."""
    shard = layout.tp * layout.pp
    per_param = state_bytes_per_param(w)
    if w.kind == "finetune" and w.method in ("lora", "qlora"):
        frozen = C.QLORA_WEIGHT_BYTES if w.method == "qlora" else per_param["weights"]
        trainable = w.params * w.lora_fraction / shard
        weights = w.params / shard * frozen + trainable * per_param["weights"]
        grads = trainable * per_param["grads"]
        optimizer = trainable * per_param["optimizer"]
    else:
        params = w.params / shard
        weights = params * per_param["weights"]
        grads = params * per_param["grads"]
        optimizer = params * per_param["optimizer"]
    dp = max(1, layout.dp)
    if layout.sharding in ("zero1", "zero2", "zero3", "fsdp"):
        optimizer /= dp
    if layout.sharding in ("zero2", "zero3", "fsdp"):
        grads /= dp
    if layout.sharding in ("zero3", "fsdp"):
        weights /= dp
    acts = activation_bytes(w, s, layout.tp, layout.micro_batch, layout.checkpointing)
    return {
        "weights": weights / GB,
        "gradients": grads / GB,
        "optimizer": optimizer / GB,
        "activations": acts / GB,
        "runtime": runtime_gb(device),
    }


def inference_breakdown(w: Workload, s: Shape, device: Device, tp: int, pp: int, sequences: int) -> dict[str, float]:
    context = w.prompt_tokens + w.output_tokens
    kv = kv_bytes_per_token(w, s) * context * sequences
    weights = weight_bytes(w)
    activations = sequences * max(w.prompt_tokens, 1) * s.d_model * 2 * 4 / min(sequences, 8)  # prefill workspace
    return {
        "weights": weights / (tp * pp) / GB,
        "kv_cache": kv / (tp * pp) / GB,
        "activations": activations / tp / GB,
        "runtime": runtime_gb(device),
    }


def _divides_heads(s: Shape, tp: int) -> bool:
    return s.heads % tp == 0 and (s.kv_heads % tp == 0 or tp % s.kv_heads == 0)


def tp_candidates(s: Shape, per_node: int) -> list[int]:
    """Tensor-parallel sizes inside one node: powers of two that divide the attention heads."""
    out = [1]
    t = 2
    while t <= per_node:
        if _divides_heads(s, t):
            out.append(t)
        t *= 2
    return out


def training_layouts(w: Workload, s: Shape, devices: int, per_node: int):
    """Layouts to try, simplest first: plain data parallel, then ZeRO stages, then activation
    checkpointing, then tensor parallelism inside a node and pipeline stages across nodes.
    A scenario that names its sharding, tp, pp or checkpointing gets exactly that."""
    auto_sharding = w.sharding in ("auto", "", None)
    shardings = ["none", "zero1", "zero2", "zero3"] if auto_sharding else [w.sharding]
    checkpointing = (False, True) if w.checkpointing is None else (bool(w.checkpointing),)
    tps = [int(w.tp)] if w.tp else tp_candidates(s, per_node)
    pps = [int(w.pp)] if w.pp else _pp_candidates(s, devices)
    for tp in tps:
        for pp in pps:
            if tp * pp > devices or devices % (tp * pp):
                continue
            if s.layers % pp and pp > 1 and not w.pp:
                continue  # stages of unequal depth: not a layout anyone would pick
            dp = devices // (tp * pp)
            for ckpt in checkpointing:
                for sharding in shardings:
                    if dp == 1 and auto_sharding and sharding != "none":
                        continue  # sharding over one replica changes nothing
                    yield Layout(tp, pp, dp, sharding, max(1, int(w.micro_batch)), ckpt)


def _pp_candidates(s: Shape, devices: int) -> list[int]:
    out = [1]
    p = 2
    while p <= min(devices, s.layers):
        out.append(p)
        p *= 2
    return out


def total_gb(breakdown: dict[str, float]) -> float:
    return sum(breakdown.values())


def min_training_devices(w: Workload, s: Shape, device: Device, per_node: int) -> int | None:
    """Smallest device count that holds the workload with the most memory-frugal layout
    (ZeRO-3, activation checkpointing, tensor parallel inside a node, pipeline across nodes)."""
    cap = capacity_gb(device)
    if cap <= 0:
        return None
    best = None
    for tp in tp_candidates(s, max(per_node, 1)):
        for pp in _pp_candidates(s, 1 << 20):
            base = training_breakdown(w, s, device, Layout(tp, pp, 1, "zero3", max(1, int(w.micro_batch)), True))
            sharded = base["weights"] + base["gradients"] + base["optimizer"]
            rest = base["activations"] + base["runtime"]
            if rest >= cap:
                continue
            dp = max(1, math.ceil(sharded / (cap - rest)))
            while dp > 1 and sharded / (dp - 1) + rest <= cap:
                dp -= 1
            n = dp * tp * pp
            if best is None or n < best:
                best = n
    return best


def min_inference_devices(w: Workload, s: Shape, device: Device, per_node: int) -> int | None:
    cap = capacity_gb(device)
    if cap <= 0:
        return None
    for n in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        tp = min(n, max(per_node, 1))
        while tp > 1 and not _divides_heads(s, tp):
            tp //= 2
        pp = max(1, n // tp)
        if tp * pp != n:
            continue
        parts = inference_breakdown(w, s, device, tp, pp, max(1, w.concurrency))
        if total_gb(parts) <= cap:
            return n
    return None
