"""Training and fine-tuning estimates: the planner picks the plan on the likely case, then the
plan is timed in a pessimistic, a likely and an optimistic case, and explained in words."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.compute import Peak, rates, training_peak
from gpudesk.core.estimate.memory import Plan, capacity_basis, capacity_gb, total_gb, training_parts
from gpudesk.core.estimate.model import Shape, describe, matmul_params_per_token, shape_of, training_flops_per_token
from gpudesk.core.estimate.planner import (
    Case,
    Context,
    SearchResult,
    StepResult,
    default_global_batch,
    evaluate,
    search,
)
from gpudesk.core.estimate.profiles import profile_of
from gpudesk.core.estimate.topology import Topology, slowest_device, topology_of
from gpudesk.core.estimate.types import (
    Cost,
    Device,
    Estimate,
    EstimateInput,
    Finding,
    MemoryFit,
    NodeGroup,
    Range,
    Workload,
)

CASES = (0, 1, 2)  # pessimistic, likely, optimistic
_SEARCH_CACHE: dict[tuple, SearchResult] = {}


@dataclass
class Setup:
    w: Workload
    s: Shape
    device: Device
    topo: Topology
    peak: Peak | None
    flops_per_token: float
    global_batch: float
    batch_given: bool


def _empty(w: Workload, devices: int, memory: MemoryFit, reasons, notes, assumptions) -> Estimate:
    return Estimate(kind=w.kind, feasible=False, reasons=reasons, tokens_per_s=Range.exact(0.0), time_s=None,
                    mfu=None, memory=memory, power_w=Range.exact(0.0), energy_kwh=None, co2_kg=None,
                    cost=Cost(None, None, None, None, Range.exact(0.0), None, None), assumptions=assumptions,
                    devices=devices, notes=notes)


def case_factor(device: Device, case: int) -> float:
    spread = profile_of(device).spread
    factor = C.MATMUL_CASE.pick(case)
    if case == 0:
        return factor / spread
    if case == 2:
        return factor * spread
    return factor


def context(setup: Setup, case: int) -> Context:
    r = rates(setup.device, setup.peak, case_factor(setup.device, case), setup.w.precision)
    return Context(setup.w, setup.s, setup.device, setup.topo, setup.peak, r, Case.pick(case), setup.global_batch,
                   capacity_gb(setup.device))


def _search_key(setup: Setup) -> tuple:
    d = setup.device
    return (setup.w, d.id, d.memory_gb, d.mem_bandwidth_gbs, d.memory_shared, tuple(sorted(d.peak_tflops.items())),
            tuple(sorted(d.achievable_tflops.items())), d.stream_gbs, d.architecture, d.device_class, setup.topo,
            setup.global_batch)


def plan_search(setup: Setup) -> SearchResult:
    """The planner on the likely case, remembered while the workload and the cluster's shape stay
    the same (a canvas edit that moves a node or renames it does not search again)."""
    key = _search_key(setup)
    hit = _SEARCH_CACHE.get(key)
    if hit is None:
        hit = search(context(setup, 1))
        if len(_SEARCH_CACHE) > 256:
            _SEARCH_CACHE.clear()
        _SEARCH_CACHE[key] = hit
    return hit


def min_training_devices(setup: Setup) -> int | None:
    """Smallest count of this device that holds the workload with the most frugal plan (ZeRO-3,
    full recomputation, tensor parallel inside a node, pipeline across nodes)."""
    ctx = context(setup, 1)
    cap = ctx.capacity_gb
    best = None
    per_node = max(1, setup.topo.per_node)
    for tp in [t for t in (1, 2, 4, 8) if t <= per_node and setup.s.heads % t == 0]:
        for pp in (1, 2, 4, 8, 16, 32, 64, 128):
            if pp > setup.s.layers:
                break
            probe = Plan(tp=tp, pp=pp, dp=1, micro_batch=1, micro_batches=pp, recompute="full", sharding="none")
            parts = training_parts(setup.w, setup.s, setup.device, probe, ctx.rates.flash, per_node)
            states = parts["weights"] + parts["gradients"] + parts["optimizer"]
            rest = total_gb(parts) - states
            if rest >= cap:
                continue
            dp = max(1, math.ceil(states / (cap - rest)))
            n = dp * tp * pp
            if best is None or n < best:
                best = n
    return best


def _memory_reasons(setup: Setup, smallest, cap: float, min_devices: int | None) -> list[Finding]:
    plan, parts = smallest
    dev, devices = setup.device, setup.topo.devices
    need = total_gb(parts)
    states = parts["weights"] + parts["gradients"] + parts["optimizer"]
    count = f"{devices:,} × {dev.name}" if devices > 1 else dev.name
    text = (f"{count} cannot hold this workload: even the most frugal plan tried ({plan.describe()}) needs "
            f"{need:.1f} GB on each device — weights, gradients and optimizer state {states:.1f} GB, activations "
            f"{parts['activations'] + parts.get('logits', 0.0):.1f} GB — but each {dev.name} has {cap:.1f} GB usable.")
    out = [Finding("memory", text, {"need_gb": need, "capacity_gb": cap, "devices": devices,
                                     "min_devices": min_devices or 0, "device": dev.name})]
    pinned = plan.sharding == "none" and setup.w.sharding not in ("auto", "", None) and devices > 1
    if pinned:
        out.append(Finding("memory_full_copies", "Plain data parallelism keeps a full copy of the model states on every "
                           "device, so adding devices does not help; let the planner shard them.", {}))
    if min_devices is None:
        out.append(Finding("memory_never", f"No number of {dev.name} can hold it: one layer's activations alone "
                           "do not fit.", {}))
    elif min_devices > devices:
        out.append(Finding("memory_min_devices", f"At least {min_devices:,} × {dev.name} would hold it (ZeRO-3, full "
                           "recomputation, tensor and pipeline parallelism).", {"min_devices": min_devices}))
    return out


def setup_of(inp: EstimateInput, groups: tuple[NodeGroup, ...]) -> tuple[Setup, list[Finding], list[str]]:
    w = inp.workload
    s = shape_of(w)
    reasons: list[Finding] = []
    assumptions: list[str] = []
    device = slowest_device(groups)
    topo = topology_of(groups)
    if w.precision not in C.TRAINING_PRECISIONS:
        reasons.append(Finding("precision", f"{w.precision.upper()} is not a training precision (use fp32, tf32, "
                               "fp16, bf16 or fp8).", {"precision": w.precision}))
    peak = training_peak(device, w.precision) if not reasons else None
    if peak is None and not reasons:
        reasons.append(Finding("no_peak", f"The catalogue has no dense {w.precision.upper()} figure for {device.name}, "
                               "so its training throughput cannot be estimated.", {"device": device.name}))
    if not s.known:
        assumptions.append(f"Model shaped from {w.params / 1e9:.3g}B parameters as a modern decoder: {describe(s)}.")
    batch = float(w.global_batch_tokens) if w.global_batch_tokens else default_global_batch(w, topo.devices)
    setup = Setup(w, s, device, topo, peak, training_flops_per_token(w, s), batch, bool(w.global_batch_tokens))
    return setup, reasons, assumptions


def train(inp: EstimateInput, groups: tuple[NodeGroup, ...]) -> Estimate:
    w = inp.workload
    setup, reasons, assumptions = setup_of(inp, groups)
    notes: list[Finding] = []
    cap = capacity_gb(setup.device)
    if len({g.device.id for g in groups}) > 1:
        notes.append(Finding("mixed_hardware", f"Mixed hardware: every device is timed as the slowest, "
                             f"{setup.device.name}, as a synchronous step waits for it.", {}))
    if setup.peak is not None and setup.peak.note:
        notes.append(Finding("peak_fallback", setup.peak.note + ".", {}))
    if setup.peak is not None and setup.peak.tensor_note:
        notes.append(Finding("no_tensor_cores", setup.peak.tensor_note + ".",
                             {"rate_tflops": setup.peak.rate_tflops, "peak_tflops": setup.peak.tflops,
                              "device": setup.device.name}))
    if reasons:
        return _empty(w, setup.topo.devices, MemoryFit(0.0, round(cap, 3), False, None), reasons, notes, assumptions)
    found = plan_search(setup)
    if found.best is None:
        smallest = found.smallest or (Plan(), training_parts(w, setup.s, setup.device, Plan(), True, setup.topo.domain))
        min_devices = min_training_devices(setup)
        parts = smallest[1]
        memory = MemoryFit(round(total_gb(parts), 3), round(cap, 3), False, min_devices,
                           {k: round(v, 3) for k, v in parts.items()}, smallest[0].describe())
        est = _empty(w, setup.topo.devices, memory, _memory_reasons(setup, smallest, cap, min_devices), notes,
                     assumptions)
        _set_peak(est, setup, groups)
        return est
    return _timed(inp, groups, setup, found, assumptions, notes)


def _set_peak(est: Estimate, setup: Setup, groups) -> None:
    if setup.peak is None:
        return
    est.precision_used = setup.peak.precision
    est.peak_pflops = sum((training_peak(g.device, setup.w.precision) or setup.peak).tflops * g.devices
                          for g in groups) / 1000.0


def _calibration(inp: EstimateInput, device: Device, notes: list[Finding]) -> float:
    if inp.workload.mfu:
        return 1.0
    for cal in inp.calibrations:
        if cal.kind == "train" and cal.device_id == device.id:
            notes.append(Finding("calibrated", f"Training throughput calibrated on {cal.measurements} of your "
                                 f"measurements on {device.name} (×{cal.factor:.2f}).", {"factor": cal.factor}))
            return cal.factor
    return 1.0


def _timed(inp: EstimateInput, groups, setup: Setup, found: SearchResult, assumptions: list[str],
           notes: list[Finding]) -> Estimate:
    w = setup.w
    best = found.best
    plan = best.plan
    cap = capacity_gb(setup.device)
    parts = best.memory_gb
    memory = MemoryFit(round(total_gb(parts), 3), round(cap, 3), True, None, {k: round(v, 3) for k, v in parts.items()},
                       plan.describe())
    cases = [best if c == 1 else evaluate(context(setup, c), plan, {}) for c in CASES]
    factor = _calibration(inp, setup.device, notes)
    # hardware FLOPs per model FLOP: recomputed forward passes run on the device too
    recompute = 1.0 + (C.RECOMPUTE_FACTOR - 1.0) * plan.recomputed if plan.recompute == "full" else \
        {"selective": 1.02}.get(plan.recompute, 1.0)
    peak_total = sum((training_peak(g.device, w.precision) or setup.peak).tflops * g.devices for g in groups) * 1e12
    tps = [r.tokens_per_s * factor * C.FITTED_SCALE["training"] for r in cases]
    if w.mfu:
        given = [w.mfu * C.GIVEN_MFU_CASE.pick(c) * peak_total / setup.flops_per_token for c in CASES]
        tps = given
    elif factor == 1.0:  # not calibrated on the user's own measurements: the engine's known error applies
        known = Range(tps[0], tps[1], tps[2]).at_least(C.MODEL_ERROR["training"])
        # but never past physics: every FLOP, recomputed ones included, at the fastest matrix rate the
        # optimistic case allows (the fitted scale can carry even the likely case of a small model past it)
        ceiling = setup.topo.devices * context(setup, 2).rates.gemm / (setup.flops_per_token * recompute)
        tps = [min(known.low, ceiling), min(known.likely, ceiling), min(max(known.likely, known.high), ceiling)]
    est = _empty(w, setup.topo.devices, memory, [], notes, assumptions)
    est.feasible = True
    est.tokens_per_s = Range(tps[0], tps[1], tps[2])
    steps = [best.tokens_per_step / t for t in tps]
    est.step_time_s = Range(steps[2], steps[1], steps[0])
    mfu = [t * setup.flops_per_token / peak_total for t in tps]
    est.mfu = Range(mfu[0], mfu[1], mfu[2])
    est.hfu = Range(mfu[0] * recompute, mfu[1] * recompute, mfu[2] * recompute)
    shares = [_comm_share(r) for r in cases]
    est.comm_share = Range(min(shares), shares[1], max(shares))
    links = best.link_seconds
    est.slowest_link = max(links, key=links.get) if links else ""
    if w.tokens:
        times = [w.tokens / t for t in tps]
        est.time_s = Range(times[2], times[1], times[0])
    est.plan = plan.to_json()
    est.alternatives = [_alternative(r, best) for r in found.alternatives]
    est.breakdown = _breakdown(setup, best, found)
    _set_peak(est, setup, groups)
    est.assumptions.extend(_assumptions(setup, best, found, cap))
    est.notes.extend(_notes(setup, best, shares[1], est.slowest_link))
    return est


def _comm_share(r: StepResult) -> float:
    return (r.tp_s + r.cp_s + r.ep_s + r.pp_s + r.dp_s) / r.step_s


def _alternative(r: StepResult, best: StepResult) -> dict:
    return {"plan": r.plan.to_json(), "label": r.plan.short(), "tokens_per_s": r.tokens_per_s,
            "relative": r.tokens_per_s / best.tokens_per_s, "memory_gb": round(total_gb(r.memory_gb), 3)}


def _breakdown(setup: Setup, best: StepResult, found: SearchResult) -> dict:
    out = best.breakdown()
    out.update({
        "tokens_per_step": best.tokens_per_step,
        "flops_per_token": setup.flops_per_token,
        "layout": best.plan.describe(),
        "plan": best.plan.short(),
        "link_seconds": dict(best.link_seconds),
        "plans_evaluated": found.evaluated,
        "stage": {"gemm_s": best.stage.gemm, "attention_s": best.stage.attention,
                  "memory_bound_s": best.stage.memory, "kernel_overhead_s": best.stage.overhead},
        "devices_used": best.plan.devices,
    })
    return out


def _assumptions(setup: Setup, best: StepResult, found: SearchResult, cap: float) -> list[str]:
    w, plan, dev = setup.w, best.plan, setup.device
    ctx = context(setup, 1)
    r = ctx.rates
    out = [
        f"{setup.flops_per_token / 1e9:.4g} GFLOPs per token: "
        + ("the scenario's figure." if w.flops_per_token else
           "4·N for LoRA/QLoRA (frozen weights need no weight gradients) plus attention."
           if w.frozen_base else
           f"6 × {matmul_params_per_token(setup.s) / 1e9:.3g}B parameters that multiply each token (the layers and the output head; the input embedding is a lookup"
           + (", active experts only" if setup.s.moe else "") + ") plus attention 12·L·d·s "
           "(Kaplan et al. 2020; the MFU convention of PaLM and Megatron-LM)."),
        f"Plan chosen by search ({found.evaluated:,} plans that fit were timed): {plan.describe()}; "
        f"{best.tokens_per_step:,.0f} tokens per optimizer step in {plan.micro_batches} micro-batch(es) per "
        f"pipeline" + ("" if setup.batch_given else
                       f" (default batch: the model-size default, at least {C.TOKENS_PER_DEVICE_DEFAULT:,} tokens per "
                       "device as large runs grow it with the cluster; set global_batch_tokens)") + ".",
        f"{dev.name} ({r.profile.label}): matrix multiplications at {_sig(r.gemm / 1e12)} TFLOPS "
        f"({r.gemm / (setup.peak.fp8_tflops or setup.peak.rate_tflops) / 1e12:.0%} of "
        f"{_sig(setup.peak.fp8_tflops or setup.peak.rate_tflops)}; {r.matmul_basis}), "
        + (f"fused attention at {_sig(r.attention / 1e12)} TFLOPS, " if r.flash else "no fused attention (scores go "
           "through memory), ")
        + f"element-wise work at {_sig(r.bandwidth / 1e9)} GB/s, {r.kernel_s * 1e6:g} µs per kernel.",
        capacity_basis(dev) + f"; this plan uses {total_gb(best.memory_gb):.1f} GB.",
        f"Matrix multiplications timed by their shapes (M, N, K: tiles, waves, short-K ramp, memory side) relative "
        f"to the large-GEMM rate: {(r.curve or r.curve16).basis}." if (r.curve or r.curve16) else "",
    ]
    out = [line for line in out if line]
    if plan.pp > 1:
        out.append(f"Pipeline bubble (p−1)/(m·v) = ({plan.pp}−1)/({plan.micro_batches}·{plan.vpp}) of the compute "
                   "(interleaved 1F1B, Narayanan et al. 2021); stages hold whole layers, the last also the output head.")
    if plan.dp > 1:
        out.append(
            f"Data-parallel traffic as {_SHARDING_WORDS.get(plan.sharding, plan.sharding)} sends it "
            f"(ZeRO, Rajbhandari et al. 2020), hierarchical over {setup.topo.intra_name or 'the node'} and "
            f"{setup.topo.nic_count} × {setup.topo.inter_name or 'network'} per node; "
            f"{C.OVERLAP.likely:.0%} ({C.OVERLAP.pessimistic:.0%}–{C.OVERLAP.optimistic:.0%}) of what can overlap "
            "hides behind the computation: gradients behind the backward pass, sharded weights' gathers behind "
            "the forward pass.")
    if found.alternatives:
        alts = "; ".join(f"{a.plan.short()} at {a.tokens_per_s / best.tokens_per_s:.0%}" for a in found.alternatives)
        out.append(f"Next best plans: {alts} of the chosen plan's throughput.")
    if w.precision == "fp8" and setup.peak.fp8_tflops:
        out.append("FP8 speeds up only the matrix multiplications; attention, norms and the optimizer run as in BF16.")
    return out


_SHARDING_WORDS = {"none": "DDP", "zero1": "ZeRO-1 (distributed optimizer)", "zero2": "ZeRO-2", "zero3": "ZeRO-3",
                   "fsdp": "FSDP", "hsdp": "HSDP (hybrid sharding)"}


def _sig(value: float) -> str:
    """Three significant figures, with thousands separators: 0.125, 42.5, 1,403 (and 1,000 for 999.7)."""
    text = f"{value:.3g}"
    return f"{value:,.0f}" if value >= 1000 or "e+" in text else text


def _notes(setup: Setup, best: StepResult, share: float, slowest: str) -> list[Finding]:
    out: list[Finding] = []
    plan = best.plan
    wanted = setup.global_batch
    if abs(best.tokens_per_step - wanted) > 0.01 * wanted:
        out.append(Finding(
            "batch_changed", f"The global batch runs as {best.tokens_per_step:,.0f} tokens rather than "
            f"{wanted:,.0f}: {plan.dp:,} replica(s) × {plan.micro_batches} micro-batch(es) × {plan.micro_batch} "
            f"sequence(s) of {setup.w.seq_len:,} tokens is the nearest whole split.",
            {"requested": wanted, "used": best.tokens_per_step}))
    idle = setup.topo.devices - plan.devices
    if idle > 0:
        out.append(Finding("devices_idle", f"{idle:,} of {setup.topo.devices:,} devices stay idle: the best plan uses "
                           f"{plan.devices:,} ({plan.short()}); a larger global batch would use more.",
                           {"idle": idle, "used": plan.devices}))
    if share > 0.5 and slowest:
        out.append(Finding("comm_dominates", f"Communication dominates: {share:.0%} of each step is spent waiting for "
                           f"data over {slowest}; the devices wait more than they compute.",
                           {"share": share, "link": slowest}))
    elif share > 0.2 and slowest:
        out.append(Finding("comm_share", f"{slowest} costs {share:.0%} of each step.", {"share": share, "link": slowest}))
    if best.bubble_s > 0.15 * best.step_s:
        out.append(Finding("bubble", f"The pipeline bubble costs {best.bubble_s / best.step_s:.0%} of each step: more "
                           "micro-batches (a larger batch) would shrink it.", {"share": best.bubble_s / best.step_s}))
    return out


def replace_workload(inp: EstimateInput, **changes) -> EstimateInput:
    return replace(inp, workload=replace(inp.workload, **changes))
