"""Training and fine-tuning throughput: compute at an achievable utilisation, plus the
communication of data, tensor and pipeline parallelism over the links of the chosen topology
(Narayanan et al. 2021), with the gradient exchange partly hidden behind the backward pass."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.memory import Layout
from gpudesk.core.estimate.model import Shape
from gpudesk.core.estimate.types import Device, Link, NodeGroup, Workload

TRAINING_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")
LINK_EFFICIENCY = 0.8  # collectives reach about 80% of a link's rate (NCCL bus bandwidth)
PCIE_FALLBACK_GBS = 16.0  # one way, when a node's devices have no named link


@dataclass(frozen=True)
class Peak:
    tflops: float  # dense peak used for MFU at the workload's precision
    rate_tflops: float  # the rate the hardware sustains for model FLOPs, before utilisation
    precision: str
    note: str = ""
    balance: float = 0.0  # FLOP per byte at the base precision


def training_peak(device: Device, precision: str, case: int) -> Peak | None:
    """Dense peak at `precision`, with the fallbacks a practitioner would use."""
    peaks = device.peak_tflops
    note = ""
    used = precision
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
        # no published tensor figure: the vector FP32 rate is a floor the device certainly reaches
        used = "fp32"
        peak = peaks["fp32"]
        note = (f"{device.name} has no published {precision.upper()} tensor figure: its FP32 rate "
                f"({peak:g} TFLOPS) is used, which understates tensor-core training; give the figure as an override")
    if not peak:
        return None
    if used == "fp8":
        base = peaks.get("bf16") or peaks.get("fp16") or peak / 2.0
        share = C.FP8_GEMM_TIME_SHARE.pick(case)
        rate = base / (share * base / peak + 1.0 - share)
        return Peak(peak, rate, used, note, _balance(device, base))
    return Peak(peak, peak, used, note, _balance(device, peak))


def _balance(device: Device, tflops: float) -> float:
    if not device.mem_bandwidth_gbs:
        return C.BALANCE_KNEE
    return tflops * 1e12 / (device.mem_bandwidth_gbs * 1e9)


def likely_mfu(peak: Peak, shape: Shape) -> float:
    """The engine's one utilisation model (see constants.py)."""
    width = shape.d_model / (shape.d_model + C.WIDTH_KNEE)
    return min(C.MFU_CEILING, C.UTILISATION_SCALE / (1.0 + peak.balance / C.BALANCE_KNEE) * width)


def default_global_batch(w: Workload) -> float:
    scaled = C.DEFAULT_GLOBAL_BATCH_TOKENS * max(1.0, w.params / 1e9) ** C.GLOBAL_BATCH_EXPONENT
    return float(min(C.MAX_DEFAULT_GLOBAL_BATCH_TOKENS, max(C.DEFAULT_GLOBAL_BATCH_TOKENS, round(scaled / w.seq_len) * w.seq_len)))


@dataclass
class StepModel:
    tokens_per_step: float
    compute_s: float
    bubble_s: float
    dp_comm_s: float
    dp_exposed_s: float
    tp_comm_s: float
    pp_comm_s: float
    step_s: float
    slowest_link: str
    link_times: dict


def link_rate_gbs(link: Link | None, fallback: float) -> float:
    if link is None or not link.unidirectional_gbs:
        return fallback * LINK_EFFICIENCY
    return link.unidirectional_gbs * LINK_EFFICIENCY


@dataclass(frozen=True)
class Links:
    """What the step model needs to know of a cluster's links, computed once per estimate."""

    devices: int
    per_node: int
    nodes: int
    intra_gbs: float
    intra_latency_s: float
    node_gbs: float
    inter_latency_s: float
    intra_name: str
    inter_name: str


def links_of(groups: tuple[NodeGroup, ...]) -> Links:
    intra_rates = [link_rate_gbs(g.intra, (g.device.intra_link_gbs or 0) / 2 or PCIE_FALLBACK_GBS) for g in groups]
    return Links(
        devices=sum(g.devices for g in groups),
        per_node=min(g.per_node for g in groups),
        nodes=sum(g.nodes for g in groups),
        intra_gbs=min(intra_rates),
        intra_latency_s=max(_latency(g.intra) for g in groups) * 1e-6,
        node_gbs=min(link_rate_gbs(g.inter, 0.125) * max(1, g.nic_count) for g in groups),
        inter_latency_s=max(_latency(g.inter) for g in groups) * 1e-6,
        intra_name=_name([g.intra for g in groups], "PCIe (assumed)"),
        inter_name=_name([g.inter for g in groups], "1 Gb Ethernet (assumed)"),
    )


def step_model(w: Workload, s: Shape, links: Links, layout: Layout, flops_per_token: float,
               rate_tflops_per_device: float, case: int) -> StepModel:
    """Time of one optimizer step, its parts, and which link costs the most."""
    devices = links.devices
    per_node = links.per_node
    nodes = links.nodes
    tokens_per_step = float(w.global_batch_tokens or default_global_batch(w))
    tokens_per_step = max(tokens_per_step, layout.dp * layout.micro_batch * w.seq_len)
    recompute = C.RECOMPUTE_FACTOR if layout.checkpointing else 1.0
    compute_s = tokens_per_step * flops_per_token * recompute / (devices * rate_tflops_per_device * 1e12)

    # pipeline bubble (interleaved 1F1B)
    bubble_s = 0.0
    if layout.pp > 1:
        microbatches = max(1.0, tokens_per_step / layout.dp / (w.seq_len * layout.micro_batch))
        virtual = C.PIPELINE_VIRTUAL_STAGES if microbatches >= layout.pp else 1
        bubble_s = compute_s * (layout.pp - 1) / (virtual * microbatches)

    intra_gbs, intra_lat, node_gbs, inter_lat = links.intra_gbs, links.intra_latency_s, links.node_gbs, links.inter_latency_s
    intra_name, inter_name = links.intra_name, links.inter_name

    # data-parallel gradient exchange (hierarchical: inside the node, then across nodes)
    grad_bytes = 4.0 if w.precision in ("fp32", "tf32") else 2.0
    trainable = w.params * (w.lora_fraction if w.kind == "finetune" and w.method in ("lora", "qlora") else 1.0)
    shard_bytes = trainable / (layout.tp * layout.pp) * grad_bytes
    dp_intra = max(1, min(layout.dp, per_node // layout.tp)) if nodes > 1 or per_node > 1 else 1
    dp_intra = min(dp_intra, layout.dp)
    dp_inter = max(1, layout.dp // dp_intra)
    volume = 3.0 if layout.sharding in ("zero3", "fsdp") else 2.0  # all-gather x2 + reduce-scatter vs all-reduce
    t_dp_intra = volume / 2.0 * 2.0 * (dp_intra - 1) / dp_intra * shard_bytes / (intra_gbs * 1e9) if dp_intra > 1 else 0.0
    node_traffic = per_node * volume / 2.0 * 2.0 * (dp_inter - 1) / dp_inter * shard_bytes / dp_intra
    t_dp_inter = node_traffic / (node_gbs * 1e9) if dp_inter > 1 else 0.0
    buckets = max(1.0, shard_bytes / 25e6)
    t_dp_lat = buckets * (2 * (dp_intra - 1) * intra_lat + 2 * math.ceil(math.log2(dp_inter)) * inter_lat) if layout.dp > 1 else 0.0
    dp_comm_s = t_dp_intra + t_dp_inter + t_dp_lat
    overlap = C.DP_OVERLAP.pick(case)
    dp_exposed_s = max(0.0, dp_comm_s - overlap * C.BACKWARD_SHARE * compute_s)

    # tensor parallelism: 4 all-reduces of the activations per layer and token (2 forward, 2 backward)
    tp_comm_s = 0.0
    tp_link_gbs = intra_gbs if layout.tp <= per_node else node_gbs / per_node
    if layout.tp > 1:
        tokens_per_replica = tokens_per_step / layout.dp
        per_token = (s.layers / layout.pp) * (6.0 if layout.checkpointing else 4.0) * 2.0 * (layout.tp - 1) / layout.tp \
            * s.d_model * 2.0
        tp_comm_s = tokens_per_replica * per_token / (tp_link_gbs * 1e9)
    # pipeline parallelism: activations forward and gradients backward at each stage boundary
    pp_comm_s = 0.0
    if layout.pp > 1:
        tokens_per_replica = tokens_per_step / layout.dp
        spans_nodes = layout.tp * layout.pp > per_node
        pp_gbs = node_gbs / per_node if spans_nodes else intra_gbs
        # Megatron's scatter/gather optimisation splits each transfer across the tensor-parallel ranks
        pp_comm_s = tokens_per_replica * s.d_model * 2.0 * 2.0 / layout.tp / (pp_gbs * 1e9)

    step_s = compute_s + bubble_s + tp_comm_s + pp_comm_s + dp_exposed_s
    # what each link costs the step: its share of the exposed gradient exchange, plus the
    # tensor- and pipeline-parallel traffic, which is not overlapped
    exposed = dp_exposed_s / dp_comm_s if dp_comm_s else 0.0
    spans_nodes = layout.tp * layout.pp > per_node
    link_times = {intra_name: 0.0, inter_name: 0.0}
    link_times[intra_name] += (t_dp_intra + t_dp_lat) * exposed
    link_times[inter_name] += t_dp_inter * exposed
    link_times[inter_name if layout.tp > per_node else intra_name] += tp_comm_s
    link_times[inter_name if spans_nodes else intra_name] += pp_comm_s
    totals = {intra_name: t_dp_intra + t_dp_lat, inter_name: t_dp_inter}
    totals[inter_name if layout.tp > per_node else intra_name] += tp_comm_s
    totals[inter_name if spans_nodes else intra_name] += pp_comm_s
    link_times = {k: v for k, v in link_times.items() if v > 0}
    ranking = link_times if link_times else {k: v for k, v in totals.items() if v > 0}
    slowest = max(ranking, key=ranking.get) if ranking else ""
    return StepModel(tokens_per_step, compute_s, bubble_s, dp_comm_s, dp_exposed_s, tp_comm_s, pp_comm_s,
                     step_s, slowest, link_times)


def _latency(link: Link | None) -> float:
    if link is None:
        return C.LINK_LATENCY_US["pcie"]
    return link.latency_us or C.LINK_LATENCY_US.get(link.family, 20.0)


def _name(links, fallback: str) -> str:
    names = [lk.name for lk in links if lk is not None]
    return names[0] if names else fallback
