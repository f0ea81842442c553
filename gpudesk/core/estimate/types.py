"""Plain inputs and outputs of the estimation engine: no catalogue, no database, no Qt.

Units live in the names. A `Range` is low / likely / high of one figure; the assumptions that
produced a result travel with it as sentences.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "q8", "q4", "fp4")
WORKLOAD_KINDS = ("train", "finetune", "infer")
SHARDINGS = ("auto", "none", "zero1", "zero2", "zero3", "fsdp", "hsdp")
RECOMPUTE = ("none", "selective", "full")
FINETUNE_METHODS = ("full", "lora", "qlora")
ATTENTIONS = ("mha", "gqa", "mqa", "mla")


@dataclass(frozen=True)
class Finding:
    """One typed statement of the engine (a reason it cannot run, a note, a limit): a stable `code`
    that other modules test, the `values` behind it, and the sentence a person reads. Modules that
    write recommendations or reports use the code and the values, never the sentence."""

    code: str
    text: str
    values: Mapping[str, float | str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict:
        return {"code": self.code, "text": self.text, "values": dict(self.values)}


@dataclass(frozen=True)
class Range:
    low: float
    likely: float
    high: float

    @classmethod
    def of(cls, values) -> Range:
        values = list(values)
        return cls(min(values), values[1] if len(values) == 3 else sorted(values)[len(values) // 2], max(values))

    @classmethod
    def exact(cls, value: float) -> Range:
        return cls(value, value, value)

    def scaled(self, factor: float) -> Range:
        lo, hi = self.low * factor, self.high * factor
        return Range(min(lo, hi), self.likely * factor, max(lo, hi))

    def to_json(self) -> dict:
        return {"low": self.low, "likely": self.likely, "high": self.high}

    def at_least(self, log_spread: float) -> Range:
        """The range widened, where narrower, to likely ×/÷ e^log_spread (the engine's known error)."""
        if self.likely <= 0 or log_spread <= 0:
            return self
        factor = math.exp(log_spread)
        return Range(min(self.low, self.likely / factor), self.likely, max(self.high, self.likely * factor))


@dataclass(frozen=True)
class Band:
    """An uncertain factor: pessimistic, likely and optimistic values, with where they come from."""

    pessimistic: float
    likely: float
    optimistic: float
    basis: str = ""

    def pick(self, case: int) -> float:
        return (self.pessimistic, self.likely, self.optimistic)[case]


@dataclass(frozen=True)
class Device:
    id: str
    name: str
    device_class: str = "datacenter"  # datacenter | workstation | consumer | laptop | edge | desktop_ai
    kind: str = "gpu"
    vendor: str = ""
    memory_gb: float | None = None
    memory_type: str = ""
    mem_bandwidth_gbs: float | None = None
    memory_shared: bool = False
    tdp_w: float | None = None
    idle_w: float | None = None
    peak_tflops: Mapping[str, float] = field(default_factory=dict)  # precision -> dense peak
    intra_link_gbs: float | None = None  # per device, both directions
    architecture: str = ""
    tensor_cores: int | None = None  # None: not known; 0: none (no matrix units)
    # measured maximum achievable matmul throughput (MAMF) by precision, when published
    achievable_tflops: Mapping[str, float] = field(default_factory=dict)
    form_factor: str = ""
    # GEMM curves fitted to measured tables (kernels.GemmCurve), by precision ("bf16", "fp8")
    gemm_curves: Mapping[str, object] = field(default_factory=dict)
    # all-reduce curves measured inside this device's fast domain (kernels.AllReduceCurve), by GPU count
    all_reduce_curves: tuple = ()
    # decode attention measured on this device (kernels.DecodeAttentionCurve), by KV-cache element type
    decode_attention_curves: tuple = ()
    # a mixture of experts' expert computation measured on this device (kernels.MoECurve), by server and format
    moe_curves: tuple = ()
    # fused causal attention over whole sequences measured on this device (kernels.ContextAttentionCurve)
    context_attention_curve: object | None = None
    # streaming bandwidth measured on this device (GB/s, a read or triad kernel past the caches) and its source
    stream_gbs: float | None = None
    stream_basis: str = ""


@dataclass(frozen=True)
class Link:
    id: str
    name: str
    family: str  # nvlink | pcie | infiniband | ethernet | ...
    unidirectional_gbs: float
    latency_us: float = 5.0
    # the share of the one-way rate an all-reduce over more than two devices reaches, where measured
    # hosts say it is the host's and not the link's (PCIe: kernel_tables.pcie_ring_share); None: the link's
    ring_share: float | None = None
    ring_basis: str = ""


@dataclass(frozen=True)
class CloudOffer:
    id: str
    provider: str
    instance_type: str
    usd_per_hour: float
    devices_per_instance: int
    usd_per_hour_spot: float | None = None
    usd_per_hour_reserved: float | None = None
    region: str = ""
    # the newest price of each pricing model the provider publishes (on_demand, spot, reserved_1y,
    # reserved_3y), USD per hour for the whole instance
    rates: tuple[tuple[str, float], ...] = ()

    def rate(self, pricing: str) -> float | None:
        """The hourly price under `pricing`, None when the provider publishes none."""
        found = dict(self.rates).get(pricing)
        if found is not None:
            return found
        if pricing == "on_demand":
            return self.usd_per_hour
        if pricing == "spot":
            return self.usd_per_hour_spot
        if pricing == "reserved_1y":  # an offering's single reserved price is a 1-year term unless the rates say
            return self.usd_per_hour_reserved
        return None


@dataclass(frozen=True)
class NodeGroup:
    """`nodes` identical nodes, each with `per_node` devices."""

    device: Device
    per_node: int = 1
    nodes: int = 1
    intra: Link | None = None  # between the devices of one node
    inter: Link | None = None  # each node's scale-out NIC
    nic_count: int = 1  # NICs per node
    label: str = ""
    system_power_w: float | None = None  # measured or rated power of one node, replaces the model
    node_overhead_w: float | None = None  # CPU, memory, NIC, fans of one node
    capex_usd_per_node: float | None = None  # purchase price of one node (devices and host)
    # whether that price buys a whole server (a system's price) or the accelerators alone (False), or
    # the user's own figure (None: taken as it is)
    capex_includes_host: bool | None = None
    cloud: CloudOffer | None = None  # rented instead of owned
    usd_per_hour_override: float | None = None
    embodied_kg_per_node: float | None = None  # manufacturing CO2e of one node, as far as it is known
    embodied_basis: str = ""  # what that figure covers and where it comes from

    @property
    def devices(self) -> int:
        return self.per_node * self.nodes


@dataclass(frozen=True)
class Workload:
    kind: str = "train"
    params: float = 1e9
    tokens: float | None = None  # training tokens (train/finetune)
    seq_len: int = 2048
    precision: str = "bf16"
    layers: int | None = None
    d_model: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    vocab: int | None = None
    global_batch_tokens: float | None = None
    micro_batch: int | None = None  # None: the planner chooses
    sharding: str = "auto"
    checkpointing: bool | None = None  # None: only when needed to fit
    tp: int | None = None
    pp: int | None = None
    method: str = "full"  # fine-tuning: full | lora | qlora
    lora_fraction: float = 0.005  # trainable adapter parameters / N
    prompt_tokens: int = 512
    output_tokens: int = 256
    concurrency: int = 1
    weights_bytes: float | None = None  # size of the served weights, when known (quantised files)
    kv_bytes_per_element: float | None = None
    flops_per_token: float | None = None  # override of the FLOPs model
    mfu: float | None = None  # measured utilisation: replaces the band's likely value
    name: str = ""
    # architecture (from the catalogue's model entry, or given by hand)
    model: str = ""  # id of a catalogue model, for labels
    ffn_dim: int | None = None
    gated_ffn: bool | None = None  # SwiGLU/GeGLU: three matrices per MLP
    head_dim: int | None = None
    attention: str = ""  # mha | gqa | mqa | mla ("" = from the head counts)
    active_params: float | None = None  # MoE: parameters used per token
    experts: int | None = None
    experts_active: int | None = None
    shared_experts: int | None = None
    expert_ffn_dim: int | None = None
    dense_layers: int | None = None  # MoE models whose first layers are dense (DeepSeek)
    kv_lora_rank: int | None = None  # MLA: compressed KV latent width
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_share: float | None = None  # share of layers with windowed attention
    tied_embeddings: bool | None = None
    # the parallel plan, when the scenario pins part of it
    dp: int | None = None
    cp: int | None = None
    ep: int | None = None
    # serving a mixture of experts with data-parallel attention (serving.Layout.dp_attention): True or False
    # pins it, None lets the planner try both
    attention_dp: bool | None = None
    vpp: int | None = None
    recompute: str | None = None  # none | selective | full
    # serving
    max_batch: int | None = None  # the server's cap on running sequences
    # how decoding launches its kernels: "graphs" (a decode step replayed as a CUDA graph with fused
    # kernels: vLLM, SGLang, TensorRT-LLM, llama.cpp since mid-2024) or "eager" (every operation
    # launched from the host: llama.cpp before its CUDA graphs, PyTorch eager generate); "" = graphs
    runtime: str = ""
    # the inference server (data/servers.toml; "tuned": the best the planner finds) and the limits it
    # puts on this device, filled in from the server's documented defaults by the resolver
    server: str = "tuned"
    server_max_batch: int | None = None  # None: only the KV cache limits the running sequences
    server_chunk_tokens: int | None = None
    server_memory_share: float | None = None
    # what the share is of: "total" (all memory: vLLM, SGLang) or "free" (the KV cache takes the share of
    # what the weights leave: TensorRT-LLM's free_gpu_memory_fraction)
    server_memory_basis: str = "total"
    # the cache a running sequence holds for admission: "used" (blocks as it grows: vLLM, SGLang) or
    # "whole" (its whole length reserved when admitted: TensorRT-LLM's GUARANTEED_NO_EVICT)
    server_kv_reserve: str = "used"
    # the most sequences a decode step may hold and still replay the server's CUDA graph (llama.cpp: 1); a
    # larger step launches each kernel from the host. None: graphs at any batch
    server_graphs_max_batch: int | None = None
    # latency targets: the answer is the best throughput that meets them (frontier.py)
    ttft_s_max: float | None = None
    tokens_per_s_per_user_min: float | None = None

    @property
    def frozen_base(self) -> bool:
        """LoRA and QLoRA fine-tuning: the model's own weights are frozen, so they get no gradients,
        no optimizer state and no weight-gradient products; only the small adapters train."""
        return self.kind == "finetune" and self.method in ("lora", "qlora")


@dataclass(frozen=True)
class Site:
    region: str = "us-avg"
    region_name: str = ""
    grid_gco2e_per_kwh: float = 0.0
    pue: float = 1.2
    electricity_usd_per_kwh: float = 0.15


@dataclass(frozen=True)
class Finance:
    rent: NodeGroup | None = None  # the rented alternative: a cloud offering (with its device) × instances
    lifetime_years: float = 4.0
    utilization: float = 0.6  # share of the year the owned hardware runs this workload
    maintenance_fraction_per_year: float = 0.0
    pricing: str = "on_demand"  # on_demand | spot | reserved_1y | reserved_3y
    embodied: bool = True  # spread the owned hardware's embodied CO2 over its lifetime
    tco: object | None = None  # tco.TcoFactors: hosts, network and facility; None counts the hardware alone


@dataclass(frozen=True)
class Calibration:
    """Measured utilisation for a device and workload kind, replacing the default band."""

    device_id: str
    kind: str  # train | infer_decode | infer_prefill
    factor: float  # measured / estimated, applied to the band
    measurements: int


@dataclass(frozen=True)
class EstimateInput:
    workload: Workload
    groups: tuple[NodeGroup, ...]
    site: Site = field(default_factory=Site)
    finance: Finance = field(default_factory=Finance)
    calibrations: tuple[Calibration, ...] = ()


@dataclass
class MemoryFit:
    per_device_gb: float
    capacity_gb: float
    fits: bool
    min_devices: int | None
    breakdown_gb: dict[str, float] = field(default_factory=dict)
    strategy: str = ""

    def to_json(self) -> dict:
        return {
            "per_device_gb": self.per_device_gb,
            "capacity_gb": self.capacity_gb,
            "fits": self.fits,
            "min_devices": self.min_devices,
            "breakdown_gb": dict(self.breakdown_gb),
            "strategy": self.strategy,
        }


@dataclass
class Cost:
    cloud_usd_per_run: Range | None
    capex_usd: float | None
    owned_usd_per_run: Range | None  # amortised capex + electricity + maintenance
    owned_marginal_usd_per_run: Range | None  # electricity + maintenance
    electricity_usd_per_run: Range
    break_even_runs: float | None
    break_even_months: float | None
    rent_label: str = ""
    cloud_hours_per_run: Range | None = None
    owned_usd_per_year: float | None = None
    rent_usd_per_year: float | None = None
    break_even_runs_range: Range | None = None
    break_even_months_range: Range | None = None
    # capex by part (hardware, hosts, network, facility) and what each part counts
    capex_parts: dict[str, float] | None = None
    capex_notes: list[str] = field(default_factory=list)
    # capex plus the running cost (electricity, maintenance) over the years of use
    total_usd_over_life: float | None = None
    # break-even against every pricing model the rented alternative has: pricing -> (runs, months)
    break_even_by_pricing: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    rent_rates: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        def r(x):
            return x.to_json() if isinstance(x, Range) else x

        return {
            "cloud_usd_per_run": r(self.cloud_usd_per_run),
            "capex_usd": self.capex_usd,
            "owned_usd_per_run": r(self.owned_usd_per_run),
            "owned_marginal_usd_per_run": r(self.owned_marginal_usd_per_run),
            "electricity_usd_per_run": r(self.electricity_usd_per_run),
            "break_even_runs": self.break_even_runs,
            "break_even_months": self.break_even_months,
            "break_even_runs_range": _finite(self.break_even_runs_range),
            "break_even_months_range": _finite(self.break_even_months_range),
            "rent": self.rent_label,
            "owned_usd_per_year": self.owned_usd_per_year,
            "rent_usd_per_year": self.rent_usd_per_year,
            "capex_parts": self.capex_parts,
            "capex_notes": list(self.capex_notes),
            "total_usd_over_life": self.total_usd_over_life,
            "break_even_by_pricing": {k: {"runs": v[0], "months": v[1]} for k, v in self.break_even_by_pricing.items()},
            "rent_usd_per_hour_by_pricing": dict(self.rent_rates),
        }


@dataclass
class Estimate:
    kind: str
    feasible: bool
    reasons: list[Finding]
    tokens_per_s: Range
    time_s: Range | None
    mfu: Range | None
    memory: MemoryFit
    power_w: Range | None  # None when a device's power is unknown
    energy_kwh: Range | None
    co2_kg: Range | None
    cost: Cost
    assumptions: list[str]
    devices: int
    step_time_s: Range | None = None
    hfu: Range | None = None  # hardware FLOP utilisation: counts recomputed FLOPs too
    comm_share: Range | None = None  # share of a step spent in exposed communication
    slowest_link: str = ""
    ttft_s: Range | None = None
    prefill_tokens_per_s: Range | None = None
    # decoding alone, all running sequences together (what llama-batched-bench's S_TG and a server's
    # "generation throughput" print): running batch × replicas / decode step, prompts left out
    decode_tokens_per_s_aggregate: Range | None = None
    # manufacturing CO2e of the owned hardware, spread over its lifetime and use (None: unknown or off)
    embodied_kg_per_run: Range | None = None
    embodied_kg_per_year: float | None = None
    decode_tokens_per_s_per_user: Range | None = None
    energy_kwh_per_year: float | None = None
    co2_kg_per_year: float | None = None
    peak_pflops: float = 0.0
    precision_used: str = ""
    notes: list[Finding] = field(default_factory=list)
    breakdown: dict = field(default_factory=dict)
    workload: Workload | None = None
    plan: dict = field(default_factory=dict)  # the chosen parallel plan (training) or serving layout
    alternatives: list[dict] = field(default_factory=list)  # the next best plans, with their throughput
    tpot_s: Range | None = None  # serving: time per output token
    serving: dict = field(default_factory=dict)  # serving: the running batch and why, queueing

    def reason_texts(self) -> list[str]:
        return [str(r) for r in self.reasons]

    def note_texts(self) -> list[str]:
        return [str(n) for n in self.notes]

    def finding(self, code: str) -> Finding | None:
        return next((f for f in (*self.reasons, *self.notes) if f.code == code), None)

    def to_json(self) -> dict:
        def r(x):
            return x.to_json() if isinstance(x, Range) else x

        out = {
            "kind": self.kind,
            "feasible": self.feasible,
            "reasons": self.reason_texts(),
            "devices": self.devices,
            "precision": self.precision_used,
            "peak_pflops": self.peak_pflops,
            "tokens_per_s": r(self.tokens_per_s),
            "time_s": r(self.time_s),
            "step_time_s": r(self.step_time_s),
            "mfu": r(self.mfu),
            "hfu": r(self.hfu),
            "memory": self.memory.to_json(),
            "power_w": r(self.power_w),
            "energy_kwh": r(self.energy_kwh),
            "co2_kg": r(self.co2_kg),
            "energy_kwh_per_year": self.energy_kwh_per_year,
            "co2_kg_per_year": self.co2_kg_per_year,
            "embodied_kg_per_run": r(self.embodied_kg_per_run),
            "embodied_kg_per_year": self.embodied_kg_per_year,
            "cost": self.cost.to_json(),
            "comm_share": r(self.comm_share),
            "slowest_link": self.slowest_link,
            "assumptions": list(self.assumptions),
            "notes": self.note_texts(),
            "findings": [f.to_json() for f in (*self.reasons, *self.notes)],
            "plan": dict(self.plan),
            "alternatives": [dict(a) for a in self.alternatives],
            "breakdown": _plain(self.breakdown),
        }
        if self.kind == "infer":
            out["ttft_s"] = r(self.ttft_s)
            out["tpot_s"] = r(self.tpot_s)
            out["decode_tokens_per_s_per_user"] = r(self.decode_tokens_per_s_per_user)
            out["prefill_tokens_per_s"] = r(self.prefill_tokens_per_s)
            out["decode_tokens_per_s_aggregate"] = r(self.decode_tokens_per_s_aggregate)
            out["serving"] = _plain(self.serving)
        return out


def _finite(r: Range | None) -> dict | None:
    """A range for JSON: an unbounded high end (break-even never reached) becomes null."""
    if r is None:
        return None
    fix = lambda v: None if v in (float("inf"), float("-inf")) or v != v else v  # noqa: E731
    return {"low": fix(r.low), "likely": fix(r.likely), "high": fix(r.high)}


def _plain(value):
    """JSON-safe copy: numbers, strings, lists and dicts only."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return str(value)
