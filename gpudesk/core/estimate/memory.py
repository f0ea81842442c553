"""Memory fit: what one device must hold under a parallel plan, and what a device can give.

Model states per parameter follow EleutherAI's "Transformer Math 101" (16 bytes in mixed
precision with Adam); sharding follows ZeRO (Rajbhandari et al. 2020) and FSDP (Zhao et al.
2023); activations follow Korthikanti et al. 2022 (sequence parallelism divides them by the
tensor-parallel size; the first pipeline stage keeps as many micro-batches in flight as there are
stages, about L layers' worth, more with interleaving).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.model import (
    Shape,
    activation_bytes_per_token_layer,
    expert_params,
    kv_bytes_per_token,
    logits_bytes_per_token,
    weight_bytes,
)
from gpudesk.core.estimate.types import Device, Workload

GB = 1e9
SHARDING_LABELS = {
    "none": "plain data parallelism (every replica holds the full model states)",
    "zero1": "ZeRO-1 / distributed optimizer (optimizer state sharded)",
    "zero2": "ZeRO-2 (optimizer state and gradients sharded)",
    "zero3": "ZeRO-3 / FSDP (weights, gradients and optimizer state sharded)",
    "hsdp": "hybrid FSDP (states sharded inside a node, replicated across nodes)",
}


@dataclass(frozen=True)
class Plan:
    """A parallel training plan: how the model and the batch are split over the devices."""

    tp: int = 1
    cp: int = 1
    pp: int = 1
    vpp: int = 1  # virtual stages per device (interleaved 1F1B)
    dp: int = 1
    ep: int = 1
    micro_batch: int = 1
    micro_batches: int = 1  # per pipeline and optimizer step (gradient accumulation)
    recompute: str = "none"  # none | selective | full
    sharding: str = "none"  # none | zero1 | zero2 | zero3 | hsdp
    recompute_share: float = 1.0  # with "full": the share of each stage's layers recomputed (Megatron's
    #                               recompute_num_layers), the rest keep their activations

    @property
    def recomputed(self) -> float:
        """Share of the layers whose forward pass runs twice."""
        return self.recompute_share if self.recompute == "full" else 0.0

    def _recompute_words(self, short: bool) -> str:
        if self.recompute == "selective":
            return "sel. recompute" if short else "selective activation recomputation"
        if self.recompute_share >= 0.999:
            return "full recompute" if short else "full activation recomputation"
        return (f"recompute {self.recompute_share:.0%}" if short else
                f"full activation recomputation of {self.recompute_share:.0%} of the layers")

    @property
    def devices(self) -> int:
        return self.tp * self.cp * self.pp * self.dp

    @property
    def model_parallel(self) -> int:
        return self.tp * self.cp * self.pp

    def describe(self) -> str:
        parts = []
        if self.tp > 1:
            parts.append(f"tensor parallel {self.tp}")
        if self.cp > 1:
            parts.append(f"context parallel {self.cp}")
        if self.pp > 1:
            parts.append(f"pipeline parallel {self.pp}" + (f" (interleaved ×{self.vpp})" if self.vpp > 1 else ""))
        if self.ep > 1:
            parts.append(f"expert parallel {self.ep}")
        dp = f"data parallel {self.dp}"
        if self.dp > 1 or self.sharding != "none":
            dp += f" with {SHARDING_LABELS[self.sharding]}"
        parts.append(dp)
        if self.recompute != "none":
            parts.append(self._recompute_words(False))
        parts.append(f"micro-batch {self.micro_batch}")
        return ", ".join(parts)

    def short(self) -> str:
        """TP8 · PP16 · v4 · DP128 · ZeRO-1 · mb1 · recompute 25%; parts that are 1 are left out."""
        bits = ([f"TP{self.tp}"] if self.tp > 1 else []) + ([f"CP{self.cp}"] if self.cp > 1 else []) + \
            ([f"PP{self.pp}" + (f" v{self.vpp}" if self.vpp > 1 else "")] if self.pp > 1 else []) + \
            ([f"EP{self.ep}"] if self.ep > 1 else []) + \
            ([f"DP{self.dp}"] if self.dp > 1 else []) + \
            ([{"zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3", "hsdp": "HSDP"}[self.sharding]]
             if self.sharding != "none" else []) + \
            [f"mb{self.micro_batch}"] + ([self._recompute_words(True)] if self.recompute != "none" else [])
        if self.devices == 1:
            bits.insert(0, "one device")
        return " · ".join(bits)

    def to_json(self) -> dict:
        return {"tp": self.tp, "cp": self.cp, "pp": self.pp, "vpp": self.vpp, "dp": self.dp, "ep": self.ep,
                "micro_batch": self.micro_batch, "micro_batches": self.micro_batches, "recompute": self.recompute,
                "recompute_share": self.recomputed,
                "sharding": self.sharding, "devices_used": self.devices, "label": self.short()}


# ----------------------------------------------------------------------------- capacity
def raw_capacity_gb(device: Device) -> float:
    """What the device's memory holds for everything (the catalogue's binary "GB" as bytes)."""
    memory = (device.memory_gb or 0.0) * C.GIB / GB
    if device.memory_shared:
        if (device.vendor or "").lower() == "apple":
            return memory * C.APPLE_GPU_SHARE
        return max(0.0, memory - C.SHARED_OS_RESERVE_GB.get(device.device_class, 8.0))
    return memory * C.VISIBLE_SHARE


def runtime_gb(device: Device) -> float:
    return C.RUNTIME_GB.get(device.device_class, 1.0)


def capacity_gb(device: Device) -> float:
    """Memory a workload can use on one device: visible memory less the runtime's share and the
    allocator's fragmentation reserve."""
    return max(0.0, raw_capacity_gb(device) - runtime_gb(device)) * (1.0 - C.FRAGMENTATION)


def capacity_basis(device: Device) -> str:
    raw = raw_capacity_gb(device)
    if device.memory_shared:
        share = (f"{C.APPLE_GPU_SHARE:.0%} of it wired for the GPU by macOS"
                 if (device.vendor or "").lower() == "apple" else
                 f"{C.SHARED_OS_RESERVE_GB.get(device.device_class, 8.0):g} GB kept by the OS and CPU")
        where = f"{device.memory_gb:g} GiB shared with the CPU, {share}"
    else:
        where = f"{device.memory_gb:g} GiB ({raw:,.1f} GB visible)"
    return (f"{device.name}: {where}, less {runtime_gb(device):g} GB for the runtime and "
            f"{C.FRAGMENTATION:.0%} for allocator fragmentation = {capacity_gb(device):,.1f} GB usable")


# ----------------------------------------------------------------------------- training
def _state_bytes(w: Workload) -> dict[str, float]:
    return dict(C.FP32_BYTES if w.precision in ("fp32", "tf32") else C.MIXED_PRECISION_BYTES)


def _sharded(value: float, stage: str, sharding: str, replicas: int) -> float:
    order = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3, "hsdp": 3}[sharding]
    needed = {"optimizer": 1, "grads": 2, "weights": 3}[stage]
    return value / replicas if order >= needed and replicas > 1 else value


def state_parts(w: Workload, s: Shape, plan: Plan, node_devices: int) -> dict[str, float]:
    """Bytes of weights, gradients and optimizer state on one device."""
    per = _state_bytes(w)
    experts = expert_params(s)
    dense = s.params - experts
    expert_split = plan.ep * (plan.tp if plan.ep == 1 else 1)
    local_dense = dense / (plan.tp * plan.pp)
    local_expert = experts / (expert_split * plan.pp)
    replicas_dense = plan.dp * plan.cp
    replicas_expert = max(1, plan.dp * plan.cp // plan.ep)
    if plan.sharding == "hsdp":
        inside = max(1, node_devices // plan.model_parallel)
        replicas_dense = replicas_expert = min(replicas_dense, inside)
    out = {}
    lora = w.frozen_base
    for stage, key in (("weights", "weights"), ("grads", "gradients"), ("optimizer", "optimizer")):
        if lora:
            frozen = (C.QLORA_WEIGHT_BYTES if w.method == "qlora" else per["weights"]) if stage == "weights" else 0.0
            trainable = (local_dense + local_expert) * w.lora_fraction * per[stage]
            out[key] = (local_dense + local_expert) * frozen + trainable
            continue
        out[key] = _sharded(local_dense * per[stage], stage, plan.sharding, replicas_dense) + \
            _sharded(local_expert * per[stage], stage, plan.sharding, replicas_expert)
    return out


def activation_parts(w: Workload, s: Shape, plan: Plan, flash: bool) -> dict[str, float]:
    """Bytes of stored activations and logits on the busiest device (the first stage holds the
    most micro-batches in flight; the last holds the logits)."""
    tokens = plan.micro_batch * w.seq_len / plan.cp
    per_layer = activation_bytes_per_token_layer(s) / plan.tp
    if not flash and plan.recompute in ("none", "full"):
        # score matrices and softmax (Korthikanti), kept by every layer that is not recomputed
        per_layer += 5.0 * s.heads / plan.tp * w.seq_len
    layers_per_stage = math.ceil(s.layers / plan.pp)
    inflight = min(plan.micro_batches, plan.pp)
    if plan.vpp > 1:
        inflight *= 1 + (plan.pp - 1) / (plan.pp * plan.vpp)
    if plan.recompute == "full":
        f = plan.recompute_share  # recomputed layers keep only their input; the others everything
        stored = (f * 2.0 * s.d_model / plan.tp + (1 - f) * per_layer) * tokens * layers_per_stage * inflight \
            + per_layer * tokens
    else:
        stored = per_layer * tokens * layers_per_stage * inflight
    logits = logits_bytes_per_token(s) * tokens / plan.tp
    return {"activations": stored, "logits": logits}


def training_parts(w: Workload, s: Shape, device: Device, plan: Plan, flash: bool, node_devices: int) -> dict[str, float]:
    """GB per device by part, for one plan."""
    parts = state_parts(w, s, plan, node_devices)
    if plan.sharding in ("zero3", "hsdp") and plan.dp > 1:
        per_layer = (s.params - expert_params(s)) / s.layers / (plan.tp * plan.pp)
        parts["weights"] += C.ZERO3_LIVE_LAYERS * per_layer * 2.0  # gathered layers in use
    parts.update(activation_parts(w, s, plan, flash))
    out = {k: v / GB for k, v in parts.items()}
    out["runtime"] = runtime_gb(device)
    return out


class MemoryModel:
    """total_gb(training_parts(...)) for many plans of one workload, with what does not depend on
    the plan computed once: the planner's hot path."""

    ORDER = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3, "hsdp": 3}

    def __init__(self, w: Workload, s: Shape, flash: bool, node_devices: int):
        self.w, self.s, self.node_devices = w, s, node_devices
        self.lora = w.frozen_base
        self.per = _state_bytes(w)
        self.experts = expert_params(s)
        self.dense = s.params - self.experts
        self.act = activation_bytes_per_token_layer(s)
        self.scores = 0.0 if flash else 5.0 * s.heads * w.seq_len
        self.logits = logits_bytes_per_token(s)

    def need_gb(self, plan: Plan) -> float:
        if self.lora:
            # total_gb leaves the runtime out already: capacity_gb has taken it off the device
            return total_gb(training_parts(self.w, self.s, _NoDevice, plan, not self.scores, self.node_devices))
        per, order = self.per, self.ORDER[plan.sharding]
        local_dense = self.dense / (plan.tp * plan.pp)
        local_expert = self.experts / ((plan.ep * (plan.tp if plan.ep == 1 else 1)) * plan.pp)
        rep_d, rep_e = plan.dp * plan.cp, max(1, plan.dp * plan.cp // plan.ep)
        if plan.sharding == "hsdp":
            rep_d = rep_e = min(rep_d, max(1, self.node_devices // plan.model_parallel))
        states = 0.0
        for key, needed in (("weights", 3), ("grads", 2), ("optimizer", 1)):
            div_d = rep_d if order >= needed and rep_d > 1 else 1
            div_e = rep_e if order >= needed and rep_e > 1 else 1
            states += per[key] * (local_dense / div_d + local_expert / div_e)
        if order == 3 and plan.dp > 1:
            states += C.ZERO3_LIVE_LAYERS * local_dense / self.s.layers * 2.0
        tokens = plan.micro_batch * self.w.seq_len / plan.cp
        per_layer = self.act / plan.tp + (self.scores / plan.tp if plan.recompute in ("none", "full") else 0.0)
        layers = math.ceil(self.s.layers / plan.pp)
        inflight = min(plan.micro_batches, plan.pp)
        if plan.vpp > 1:
            inflight *= 1 + (plan.pp - 1) / (plan.pp * plan.vpp)
        if plan.recompute == "full":
            f = plan.recompute_share
            acts = (f * 2.0 * self.s.d_model / plan.tp + (1 - f) * per_layer) * tokens * layers * inflight \
                + per_layer * tokens
        else:
            acts = per_layer * tokens * layers * inflight
        return (states + acts + self.logits * tokens / plan.tp) / GB


class _NoDeviceType:
    device_class = "datacenter"


_NoDevice = _NoDeviceType()


def total_gb(parts: dict[str, float]) -> float:
    """What the parts need of the usable capacity (runtime is already deducted from it)."""
    return sum(v for k, v in parts.items() if k != "runtime")


# ----------------------------------------------------------------------------- inference
def device_params(s: Shape, tp: int, pp: int, dp_attention: bool = False, touched: float = 1.0) -> float:
    """Parameters one serving device holds (or reads, with only a `touched` share of the routed experts):
    a tp × pp share, or, with data-parallel attention, everything but the routed experts whole on each
    device and the routed experts split tp ways."""
    experts = expert_params(s)
    if dp_attention:
        return ((s.params - experts) + experts * touched / tp) / pp
    return ((s.params - experts) + experts * touched) / (tp * pp)


def serving_weights_gb(w: Workload, s: Shape, tp: int, pp: int, dp_attention: bool = False) -> float:
    """Weights on one device (`device_params`)."""
    if not dp_attention:
        return weight_bytes(w, s) / (tp * pp) / GB
    return device_params(s, tp, pp, True) * weight_bytes(w, s) / max(1.0, s.params) / GB


def kv_gb_per_sequence(w: Workload, s: Shape, context: float, tp: int, pp: int, dp_attention: bool = False) -> float:
    """KV cache of one sequence of `context` tokens on one device, on average over the sequences a
    replica runs (KV heads split over tensor parallelism until each device holds one; MLA's latent is
    replicated; with data-parallel attention each device holds its own sequences' whole cache)."""
    # MLA caches one latent per token that every head reads, so each tensor-parallel rank holds it
    # all (vLLM and SGLang replicate it; SGLang's data-parallel attention exists for that reason)
    split = tp if dp_attention else 1 if s.attention == "mla" else min(tp, max(1, s.kv_heads))
    return kv_bytes_per_token(w, s, context) * context / (split * pp) / GB


def prefill_workspace_gb(w: Workload, s: Shape, tp: int, tokens: float) -> float:
    """Transient activations of processing `tokens` prompt tokens at once (a few layer widths per token)."""
    return tokens * (4 * s.d_model + 2 * s.ffn_dim) * 2 / tp / GB
