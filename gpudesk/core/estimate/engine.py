"""The estimation engine: one function from plain inputs to an explained estimate.

Every headline figure is computed three times, in a pessimistic, a likely and an optimistic case
(each uncertain factor set accordingly), and reported as a low / likely / high range; energy,
CO2 and cost are computed inside each case, so energy = power × time holds in each.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.inference import QUANTISED, inference_model, inference_peak
from gpudesk.core.estimate.memory import (
    Layout,
    capacity_gb,
    inference_breakdown,
    min_inference_devices,
    min_training_devices,
    total_gb,
    tp_candidates,
    training_breakdown,
    training_layouts,
)
from gpudesk.core.estimate.model import shape_of, training_flops_per_token
from gpudesk.core.estimate.training import TRAINING_PRECISIONS, likely_mfu, links_of, step_model, training_peak
from gpudesk.core.estimate.types import (
    Cost,
    Device,
    Estimate,
    EstimateInput,
    Finance,
    MemoryFit,
    NodeGroup,
    Range,
    Workload,
)

CASES = (0, 1, 2)  # pessimistic, likely, optimistic


class EstimateError(ValueError):
    """Inputs the engine cannot work with (no devices, impossible values)."""


def merge_groups(groups) -> tuple[NodeGroup, ...]:
    """Identical node groups (same hardware, links, prices) become one group with more nodes.

    A canvas that draws every server as its own node hands over thousands of identical groups;
    merging them first keeps an estimate's cost independent of how the cluster was drawn.
    """
    if len(groups) < 2:
        return tuple(groups)
    device_keys: dict[int, tuple] = {}
    merged: dict[tuple, list] = {}
    for g in groups:
        d = g.device
        dkey = device_keys.get(id(d))
        if dkey is None:
            dkey = (d.id, tuple(sorted(d.peak_tflops.items())), d.memory_gb, d.mem_bandwidth_gbs, d.tdp_w, d.idle_w)
            device_keys[id(d)] = dkey
        key = (dkey, g.per_node, g.intra, g.inter, g.nic_count, g.system_power_w, g.node_overhead_w,
               g.capex_usd_per_node, g.cloud, g.usd_per_hour_override)
        entry = merged.get(key)
        if entry is None:
            merged[key] = [g, g.nodes]
        else:
            entry[1] += g.nodes
    return tuple(g if g.nodes == nodes else replace(g, nodes=nodes) for g, nodes in merged.values())


def estimate(inp: EstimateInput) -> Estimate:
    groups = merge_groups(inp.groups)
    if not groups:
        raise EstimateError("the cluster is empty: add at least one accelerator, system or cloud instance")
    for g in groups:
        if g.per_node < 1 or g.nodes < 1:
            raise EstimateError(f"{g.label or g.device.name}: counts must be at least 1")
    w = inp.workload
    if w.kind == "infer":
        result = _inference(inp, groups)
    else:
        result = _training(inp, groups)
    _power_energy_cost(inp, groups, result)
    result.workload = w
    return result


# =============================================================================== training
def _training(inp: EstimateInput, groups: tuple[NodeGroup, ...]) -> Estimate:
    w = inp.workload
    s = shape_of(w)
    devices = sum(g.devices for g in groups)
    per_node = min(g.per_node for g in groups)
    distinct = {g.device.id: g.device for g in groups}
    reasons: list[str] = []
    notes: list[str] = []
    assumptions: list[str] = []
    if w.precision not in TRAINING_PRECISIONS:
        reasons.append(f"{w.precision.upper()} is not a training precision (use fp32, tf32, fp16, bf16 or fp8)")
    if not s.known:
        assumptions.append(f"Model shape inferred from {w.params / 1e9:.3g}B parameters: {s.layers} layers of width "
                           f"{s.d_model} (typical aspect ratio d ≈ 128·L).")
    flops_per_token = training_flops_per_token(w, s)
    assumptions.append(
        f"{flops_per_token / 1e9:.4g} GFLOPs per token: "
        + ("the scenario's figure." if w.flops_per_token else
           ("4·N for LoRA/QLoRA (frozen weights get no weight gradients) plus attention." if w.kind == "finetune" and w.method in ("lora", "qlora")
            else f"6·N plus attention 12·L·d·s = 12·{s.layers}·{s.d_model}·{w.seq_len} (Kaplan et al. 2020; PaLM's MFU convention)."))
    )

    # peaks per distinct device and case
    peaks = {}
    for dev in distinct.values():
        for case in CASES:
            peaks[dev.id, case] = training_peak(dev, w.precision, case) if w.precision in TRAINING_PRECISIONS else None
        if peaks[dev.id, 1] is None and w.precision in TRAINING_PRECISIONS:
            reasons.append(f"The catalogue has no dense {w.precision.upper()} figure for {dev.name}, so its "
                           "training throughput cannot be estimated.")
        elif peaks[dev.id, 1] and peaks[dev.id, 1].note:
            notes.append(peaks[dev.id, 1].note + ".")
    if not w.mfu:
        for cal in inp.calibrations:
            if cal.kind == "train" and cal.device_id in distinct:
                notes.append(f"Training utilisation calibrated on {cal.measurements} of your measurements on "
                             f"{distinct[cal.device_id].name} (×{cal.factor:.2f}).")
    if w.precision == "fp8" and any(p and p.precision == "fp8" for p in peaks.values()):
        assumptions.append("FP8 speeds up only the matrix multiplications, about 70% (60-80%) of a BF16 step; "
                           "the rest runs at BF16 speed.")

    # memory and layout: the fastest layout that fits every device
    likely_rate = None
    if not reasons:
        likely_rate = min(peaks[d.id, 1].rate_tflops * _training_utilisation(inp, d, peaks[d.id, 1], s, 1)
                          for d in distinct.values())
    links = links_of(groups)
    layout, fit_parts, binding = _choose_layout(w, s, groups, devices, per_node, likely_rate, flops_per_token, links)
    chosen = layout is not None
    if not chosen:
        layout, fit_parts, binding = _smallest_layout(w, s, groups, devices, per_node)
    bind_dev = binding
    cap = capacity_gb(bind_dev)
    need = total_gb(fit_parts)
    min_devices = _min_training_devices(w, bind_dev, per_node)
    fits = chosen and need <= cap
    memory = MemoryFit(round(need, 3), round(cap, 3), fits, min_devices,
                       {k: round(v, 3) for k, v in fit_parts.items()}, layout.describe())
    if not fits:
        reasons.extend(_training_memory_reasons(w, s, bind_dev, layout, fit_parts, cap, min_devices, devices))
    else:
        assumptions.append(f"Layout: {layout.describe()}; micro-batch {layout.micro_batch} × {w.seq_len} tokens "
                           f"per device; {need:.1f} GB of {cap:.1f} GB used on each {bind_dev.name}.")
    if bind_dev.memory_shared:
        assumptions.append(f"{bind_dev.name} shares its {bind_dev.memory_gb:g} GB with the CPU and OS: "
                           f"{C.SHARED_MEMORY_USABLE:.0%} counted as usable.")

    estimate = Estimate(
        kind=w.kind, feasible=False, reasons=reasons, tokens_per_s=Range.exact(0.0), time_s=None, mfu=None,
        memory=memory, power_w=Range.exact(0.0), energy_kwh=None, co2_kg=None,
        cost=Cost(None, None, None, None, Range.exact(0.0), None, None), assumptions=assumptions, devices=devices,
        notes=notes,
    )
    if peaks.get((bind_dev.id, 1)) is not None:
        estimate.precision_used = peaks[bind_dev.id, 1].precision
        estimate.peak_pflops = sum((peaks[g.device.id, 1].tflops if peaks[g.device.id, 1] else 0.0) * g.devices
                                   for g in groups) / 1000.0
    if reasons:
        return estimate

    # throughput in three coherent cases
    tokens_per_s, step_s, mfu, comm_share, slowest, steps = [], [], [], [], [], []
    for case in CASES:
        rate = math.inf
        mfu_peak = math.inf
        for dev in distinct.values():
            peak = peaks[dev.id, case]
            u = _training_utilisation(inp, dev, peak, s, case)
            rate = min(rate, peak.rate_tflops * u)
            mfu_peak = min(mfu_peak, peak.tflops)
        model = step_model(w, s, links, layout, flops_per_token, rate, case)
        steps.append(model)
        tps = model.tokens_per_step / model.step_s
        tokens_per_s.append(tps)
        step_s.append(model.step_s)
        peak_total = sum(peaks[g.device.id, case].tflops * g.devices for g in groups) * 1e12
        mfu.append(tps * flops_per_token / peak_total)
        comm_share.append((model.dp_exposed_s + model.tp_comm_s + model.pp_comm_s) / model.step_s)
        slowest.append(model.slowest_link)
    likely = steps[1]
    estimate.feasible = True
    estimate.tokens_per_s = Range(tokens_per_s[0], tokens_per_s[1], tokens_per_s[2])
    estimate.step_time_s = Range(step_s[2], step_s[1], step_s[0])
    estimate.mfu = Range(mfu[0], mfu[1], mfu[2])
    recompute = C.RECOMPUTE_FACTOR if layout.checkpointing else 1.0
    estimate.hfu = Range(mfu[0] * recompute, mfu[1] * recompute, mfu[2] * recompute)
    estimate.comm_share = Range(min(comm_share), comm_share[1], max(comm_share))
    estimate.slowest_link = slowest[1]
    if w.tokens:
        times = [w.tokens / t for t in tokens_per_s]
        estimate.time_s = Range(times[2], times[1], times[0])
    estimate.breakdown = {
        "tokens_per_step": likely.tokens_per_step,
        "compute_s": likely.compute_s,
        "pipeline_bubble_s": likely.bubble_s,
        "gradient_exchange_s": likely.dp_comm_s,
        "gradient_exchange_exposed_s": likely.dp_exposed_s,
        "tensor_parallel_s": likely.tp_comm_s,
        "pipeline_transfer_s": likely.pp_comm_s,
        "link_seconds": dict(likely.link_times),
        "flops_per_token": flops_per_token,
        "layout": layout.describe(),
    }
    u_likely = mfu[1]
    assumptions.append(
        f"Utilisation of {bind_dev.name}: likely {_training_utilisation(inp, bind_dev, peaks[bind_dev.id, 1], s, 1):.0%} "
        f"of the dense {peaks[bind_dev.id, 1].precision.upper()} peak while computing (model: matrix efficiency "
        f"falls with the device's FLOP/byte balance of {peaks[bind_dev.id, 1].balance:.0f} and with narrow models), "
        f"{C.MFU_SPREAD.pessimistic:.2f}–{C.MFU_SPREAD.optimistic:.2f}× that in the low and high cases; "
        f"end-to-end MFU {u_likely:.0%}."
    )
    assumptions.append(f"{likely.tokens_per_step:,.0f} tokens per optimizer step"
                       + ("" if w.global_batch_tokens else " (default for this model size: 0.5M tokens × (N/1B)^0.4; "
                          "set global_batch_tokens)") + ".")
    if layout.dp > 1:
        assumptions.append(
            f"Gradient exchange: hierarchical ring all-reduce at {80}% of link rate, "
            f"{C.DP_OVERLAP.likely:.0%} ({C.DP_OVERLAP.pessimistic:.0%}–{C.DP_OVERLAP.optimistic:.0%}) hidden behind the backward pass."
        )
    if layout.checkpointing:
        assumptions.append("Activation checkpointing recomputes the forward pass: 4/3 of the model FLOPs are executed.")
    share = comm_share[1]
    if share > 0.5 and estimate.slowest_link:
        notes.append(f"Communication dominates: {share:.0%} of each step is spent exchanging data over "
                     f"{estimate.slowest_link}; the devices wait more than they compute.")
    elif share > 0.2 and estimate.slowest_link:
        notes.append(f"{estimate.slowest_link} costs {share:.0%} of each step.")
    return estimate


@lru_cache(maxsize=256)
def _min_training_devices_cached(w: Workload, device_key: tuple, per_node: int, device: Device) -> int | None:
    return min_training_devices(w, shape_of(w), device, per_node)


def _min_training_devices(w: Workload, device: Device, per_node: int) -> int | None:
    key = (device.id, device.memory_gb, device.memory_shared, device.device_class)
    return _min_training_devices_cached(w, key, per_node, _Unhashed(device))


class _Unhashed:
    """Carries an unhashable value through lru_cache without taking part in the key."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other) -> bool:
        return isinstance(other, _Unhashed)

    def __getattr__(self, name):
        return getattr(self.value, name)


def _training_utilisation(inp: EstimateInput, dev: Device, peak, shape, case: int) -> float:
    w = inp.workload
    if w.mfu:
        base = float(w.mfu)
    else:
        base = likely_mfu(peak, shape)
        for cal in inp.calibrations:
            if cal.device_id == dev.id and cal.kind == "train":
                base *= cal.factor
    return max(1e-4, min(C.UTILISATION_MAX, base * C.MFU_SPREAD.pick(case)))


def _fits(w, s, groups, layout) -> tuple[bool, dict, Device]:
    worst = None
    for dev in {g.device.id: g.device for g in groups}.values():
        parts = training_breakdown(w, s, dev, layout)
        margin = capacity_gb(dev) - total_gb(parts)
        if worst is None or margin < worst[0]:
            worst = (margin, parts, dev)
    return worst[0] >= 0, worst[1], worst[2]


def _choose_layout(w, s, groups, devices, per_node, rate=None, flops_per_token=None, links=None):
    """The fastest layout that fits, as a practitioner would pick it: for each tensor × pipeline
    split, the simplest memory saving that fits (plain data parallel, then ZeRO 1-3, then
    activation checkpointing); among those, the shortest step in the likely case."""
    best = None
    done_split = None
    for layout in training_layouts(w, s, devices, per_node):
        split = (layout.tp, layout.pp)
        if split == done_split:
            continue
        ok, parts, dev = _fits(w, s, groups, layout)
        if not ok:
            continue
        done_split = split
        if rate is None:
            return layout, parts, dev
        step = step_model(w, s, links, layout, flops_per_token, rate, 1).step_s
        if best is None or step < best[0] * 0.999:
            best = (step, layout, parts, dev)
    if best is None:
        return None, None, None
    return best[1], best[2], best[3]


def _smallest_layout(w, s, groups, devices, per_node):
    best = None
    for layout in training_layouts(w, s, devices, per_node):
        _ok, parts, dev = _fits(w, s, groups, layout)
        if best is None or total_gb(parts) < total_gb(best[1]):
            best = (layout, parts, dev)
    if best is None:  # the scenario's tp × pp does not divide the device count
        layout = Layout(int(w.tp or 1), int(w.pp or 1), max(1, devices // max(1, int(w.tp or 1) * int(w.pp or 1))),
                        w.sharding if w.sharding not in ("auto", "", None) else "none", max(1, w.micro_batch),
                        bool(w.checkpointing))
        _ok, parts, dev = _fits(w, s, groups, layout)
        best = (layout, parts, dev)
    return best


def _training_memory_reasons(w, s, dev, layout, parts, cap, min_devices, devices) -> list[str]:
    need = total_gb(parts)
    states = parts["weights"] + parts["gradients"] + parts["optimizer"]
    shared = " (its share of memory shared with the CPU and OS)" if dev.memory_shared else ""
    count = f"{devices} × {dev.name}" if devices > 1 else dev.name
    out = [
        f"{count} cannot hold this workload: each device needs {need:.1f} GB — weights, gradients and "
        f"optimizer state {states:.1f} GB, activations {parts['activations']:.1f} GB, runtime {parts['runtime']:.1f} GB — "
        f"with {layout.describe()}, but {dev.name} has {cap:.1f} GB{shared}."
    ]
    if layout.sharding == "none" and layout.tp * layout.pp == 1 and devices > 1:
        out.append("Plain data parallelism keeps a full copy of the model on every device, so adding devices does not help.")
    if min_devices is None:
        out.append(f"No number of {dev.name} can hold it: even one device's activations do not fit.")
    elif min_devices > devices:
        out.append(f"With ZeRO-3/FSDP sharding, activation checkpointing and tensor/pipeline parallelism, "
                   f"at least {min_devices:,} × {dev.name} would hold it.")
    elif layout.sharding == "none" and w.sharding not in ("auto", "", None):
        out.append(f"It would fit with ZeRO-3/FSDP sharding on {min_devices:,} or more devices; the scenario asks for "
                   "plain data parallelism.")
    return out


# =============================================================================== inference
def _inference(inp: EstimateInput, groups: tuple[NodeGroup, ...]) -> Estimate:
    w = inp.workload
    s = shape_of(w)
    g0 = min(groups, key=lambda g: (capacity_gb(g.device), g.device.mem_bandwidth_gbs or 0))
    dev = g0.device
    devices = sum(g.devices for g in groups)
    per_node = g0.per_node
    reasons: list[str] = []
    notes: list[str] = []
    assumptions: list[str] = []
    if len({g.device.id for g in groups}) > 1:
        notes.append(f"Mixed hardware: each replica is estimated on the slowest device ({dev.name}).")
    if not s.known:
        assumptions.append(f"Model shape inferred from {w.params / 1e9:.3g}B parameters: {s.layers} layers of width {s.d_model}.")

    # smallest tensor-parallel size (inside a node) and pipeline depth that hold weights and KV cache
    cap = capacity_gb(dev)
    layout = None
    sequences = max(1, w.concurrency)
    fixed_tp = int(w.tp) if w.tp else None
    splits = []
    for tp in ([fixed_tp] if fixed_tp else tp_candidates(s, per_node)):
        for pp in ([int(w.pp)] if w.pp else (1, 2, 4, 8, 16, 32, 64)):
            if tp * pp <= devices:
                splits.append((tp * pp, pp, tp))
    for _total, pp, tp in sorted(splits):  # fewest devices per replica, tensor parallel before pipeline
        replicas = max(1, devices // (tp * pp))
        per_replica = max(1, -(-sequences // replicas))
        parts = inference_breakdown(w, s, dev, tp, pp, per_replica)
        if total_gb(parts) <= cap:
            layout = (tp, pp, parts)
            break
    min_devices = min_inference_devices(w, s, dev, per_node)
    if layout is None:
        tp = fixed_tp or max(tp_candidates(s, per_node))
        pp = max(1, devices // tp)
        parts = inference_breakdown(w, s, dev, tp, max(1, min(pp, devices)), max(1, -(-sequences // max(1, devices // (tp * pp)))))
        need = total_gb(parts)
        count = f"{devices} × {dev.name}" if devices > 1 else dev.name
        shared = " (its share of memory shared with the CPU and OS)" if dev.memory_shared else ""
        reasons.append(
            f"{count} cannot serve this model: each device needs {need:.1f} GB — weights {parts['weights']:.1f} GB, "
            f"KV cache {parts['kv_cache']:.1f} GB for {sequences} × {w.prompt_tokens + w.output_tokens} tokens, "
            f"runtime and activations {parts['runtime'] + parts['activations']:.1f} GB — but has {cap:.1f} GB{shared}."
        )
        if min_devices:
            reasons.append(f"At least {min_devices} × {dev.name} (tensor/pipeline parallel) would hold it.")
        else:
            reasons.append(f"Even 1,024 × {dev.name} would not hold it.")
        memory = MemoryFit(round(need, 3), round(cap, 3), False, min_devices, {k: round(v, 3) for k, v in parts.items()},
                           f"tensor parallel {tp}" + (f", pipeline {pp}" if pp > 1 else ""))
        failed = Estimate(w.kind, False, reasons, Range.exact(0.0), None, None, memory, Range.exact(0.0), None, None,
                          Cost(None, None, None, None, Range.exact(0.0), None, None), assumptions, devices, notes=notes)
        peak, _note = inference_peak(dev, w.precision)
        failed.precision_used, failed.peak_pflops = w.precision, (peak or 0.0) * devices / 1000.0
        return failed
    tp, pp, parts = layout
    need = total_gb(parts)
    memory = MemoryFit(round(need, 3), round(cap, 3), True, min_devices, {k: round(v, 3) for k, v in parts.items()},
                       (f"tensor parallel {tp}" if tp > 1 else "one device per replica") + (f", pipeline {pp}" if pp > 1 else ""))
    peak, peak_note = inference_peak(dev, w.precision)
    if peak_note:
        notes.append(peak_note + ".")
    if not dev.mem_bandwidth_gbs:
        reasons.append(f"The catalogue has no memory bandwidth figure for {dev.name}, so decoding speed cannot be estimated.")
        return Estimate(w.kind, False, reasons, Range.exact(0.0), None, None, memory, Range.exact(0.0), None, None,
                        Cost(None, None, None, None, Range.exact(0.0), None, None), assumptions, devices, notes=notes)
    decode_factor = prefill_factor = 1.0
    for cal in inp.calibrations:
        if cal.device_id == dev.id and cal.kind == "infer_decode":
            decode_factor = cal.factor
            notes.append(f"Decoding calibrated on {cal.measurements} of your measurements on {dev.name} (×{cal.factor:.2f}).")
        elif cal.device_id == dev.id and cal.kind == "infer_prefill":
            prefill_factor = cal.factor
            notes.append(f"Prompt processing calibrated on {cal.measurements} of your measurements on {dev.name} (×{cal.factor:.2f}).")
    models = [inference_model(w, s, dev, per_node, devices, tp, pp, g0.intra, case, decode_factor, prefill_factor)
              for case in CASES]
    m = models[1]
    est = Estimate(w.kind, True, reasons, Range(models[0].decode_tokens_per_s, m.decode_tokens_per_s, models[2].decode_tokens_per_s),
                   Range(models[2].round_s, m.round_s, models[0].round_s), None, memory, Range.exact(0.0), None, None,
                   Cost(None, None, None, None, Range.exact(0.0), None, None), assumptions, devices, notes=notes)
    est.decode_tokens_per_s_per_user = Range(models[0].decode_tokens_per_s_per_user, m.decode_tokens_per_s_per_user,
                                             models[2].decode_tokens_per_s_per_user)
    est.step_time_s = Range(models[2].decode_step_s, m.decode_step_s, models[0].decode_step_s)
    if m.ttft_s is not None:
        est.ttft_s = Range(models[2].ttft_s, m.ttft_s, models[0].ttft_s)
        est.prefill_tokens_per_s = Range(models[0].prefill_tokens_per_s, m.prefill_tokens_per_s,
                                         models[2].prefill_tokens_per_s)
    else:
        notes.append(f"No compute figure for {dev.name}: time to first token is not estimated.")
    est.precision_used = w.precision
    est.peak_pflops = (peak or 0.0) * devices / 1000.0
    est.breakdown = {
        "tp": tp, "pp": pp, "replicas": m.replicas, "sequences_per_replica": m.sequences_per_replica,
        "decode_bound": m.bound, "prefill_tokens_per_s": m.prefill_tokens_per_s,
    }
    band = C.DECODE_BW["quantised" if w.precision in QUANTISED else "dense"]
    assumptions.append(
        f"{m.replicas} replica(s) of {tp * pp} device(s) ({memory.strategy}); {m.sequences_per_replica} concurrent "
        f"sequence(s) per replica; decoding is {m.bound}-bound."
    )
    assumptions.append(
        f"Decoding reads the weights ({parts['weights']:.2f} GB per device) and the KV cache once per generated token at "
        f"{band.likely:.0%} ({band.pessimistic:.0%}–{band.optimistic:.0%}) of {dev.mem_bandwidth_gbs:,.0f} GB/s, plus "
        f"{C.DECODE_LAYER_OVERHEAD_S.likely * 1e6:.0f} µs of kernel overhead per layer."
    )
    if peak:
        pre = C.PREFILL_UTILISATION["quantised" if w.precision in QUANTISED else "dense"]
        assumptions.append(f"Prompt processing at {pre.likely:.0%} ({pre.pessimistic:.0%}–{pre.optimistic:.0%}) of "
                           f"{peak:,.0f} TFLOPS per device.")
    return est


# =============================================================================== power, energy, cost
def _group_power(g: NodeGroup, activity: float) -> tuple[float | None, float | None]:
    """(IT power at `activity`, IT power at idle) of one group, in W."""
    dev = g.device
    if g.system_power_w:
        per_node_max = g.system_power_w
        load = per_node_max * (0.3 + 0.7 * activity)
        idle = per_node_max * 0.3
        return load * g.nodes, idle * g.nodes
    if not dev.tdp_w:
        return None, None
    idle_w = dev.idle_w if dev.idle_w is not None else dev.tdp_w * C.IDLE_FRACTION
    device_w = idle_w + (dev.tdp_w - idle_w) * activity
    if g.node_overhead_w is not None:
        overhead, overhead_idle = g.node_overhead_w, g.node_overhead_w * 0.5
    else:
        share = C.NODE_OVERHEAD_SHARE.get(dev.device_class, 0.3)
        overhead_max = share * dev.tdp_w * g.per_node
        overhead, overhead_idle = overhead_max * (0.5 + 0.5 * activity), overhead_max * 0.5
    load = (device_w * g.per_node + overhead) * g.nodes
    idle = (idle_w * g.per_node + overhead_idle) * g.nodes
    return load, idle


def _power_energy_cost(inp: EstimateInput, groups: tuple[NodeGroup, ...], est: Estimate) -> None:
    w = inp.workload
    site = inp.site
    phase = "train" if w.kind != "infer" else "decode"
    band = C.ACTIVITY[phase]
    powers = []
    missing = [g.device.name for g in groups if not g.system_power_w and not g.device.tdp_w]
    for case in CASES:
        total = 0.0
        for g in groups:
            load, _idle = _group_power(g, band.pick(case))
            total += load or 0.0
        powers.append(total * site.pue)
    idle_total = sum((_group_power(g, 0.0)[1] or 0.0) for g in groups) * site.pue
    if missing:
        est.notes.append(f"No TDP in the catalogue for {', '.join(sorted(set(missing)))}: its power is not counted.")
    est.power_w = Range(min(powers), powers[1], max(powers))
    est.assumptions.append(
        f"Power: devices draw idle ({C.IDLE_FRACTION:.0%} of TDP) plus {band.likely:.0%} ({band.optimistic:.0%}–{band.pessimistic:.0%}) "
        f"of the rest while {'training' if phase == 'train' else 'decoding'}; hosts add a share of the accelerators' TDP "
        f"(or a system's rated power is used); PUE {site.pue:g}."
    )

    run_times = None
    if est.feasible and est.time_s is not None:
        run_times = [est.time_s.high, est.time_s.likely, est.time_s.low]  # pessimistic, likely, optimistic
        energies = [p * t / 3.6e6 for p, t in zip(powers, run_times)]
        est.energy_kwh = Range(min(energies), energies[1], max(energies))
        co2 = [e * site.grid_gco2e_per_kwh / 1000.0 for e in energies]
        est.co2_kg = Range(min(co2), co2[1], max(co2))
        est.assumptions.append(
            f"Grid {site.region_name or site.region}: {site.grid_gco2e_per_kwh:g} gCO2e/kWh; "
            f"electricity ${site.electricity_usd_per_kwh:g}/kWh."
        )
    fin = inp.finance
    util = fin.utilization
    est.energy_kwh_per_year = (powers[1] * util + idle_total * (1 - util)) * C.HOURS_PER_YEAR / 1000.0
    est.co2_kg_per_year = est.energy_kwh_per_year * site.grid_gco2e_per_kwh / 1000.0
    est.cost = _cost(inp, groups, est, run_times)


def _cost(inp: EstimateInput, groups, est: Estimate, run_times) -> Cost:
    fin: Finance = inp.finance
    site = inp.site
    owned = [g for g in groups if g.cloud is None]
    rented = [g for g in groups if g.cloud is not None]
    electricity = Range.exact(0.0)
    if est.energy_kwh is not None:
        electricity = est.energy_kwh.scaled(site.electricity_usd_per_kwh)

    capex = None
    if owned:
        prices = [g.capex_usd_per_node for g in owned]
        if all(p is not None for p in prices):
            capex = sum(p * g.nodes for p, g in zip(prices, owned))
        else:
            unpriced = sorted({g.label or g.device.name for g in owned if g.capex_usd_per_node is None})
            est.notes.append(f"No price in the catalogue for {', '.join(unpriced)}: add a quote to get capex and break-even.")

    cloud_run = None
    rent_label = ""
    cloud_hours = None
    if run_times is not None and rented:
        hourly = sum(_hourly(g, fin.pricing) * g.nodes for g in rented)
        cloud_run = Range(*(hourly * t / 3600.0 for t in (run_times[2], run_times[1], run_times[0])))
        rent_label = " + ".join(f"{g.nodes} × {g.cloud.provider} {g.cloud.instance_type}" for g in rented)
        cloud_hours = Range(run_times[2] / 3600, run_times[1] / 3600, run_times[0] / 3600)
    elif fin.rent is not None and run_times is not None and owned and not rented:
        rent_est = _rent_estimate(inp)
        if rent_est is not None:
            rent_group, rent_result = rent_est
            if rent_result.feasible and rent_result.time_s is not None:
                hourly = _hourly(rent_group, fin.pricing) * rent_group.nodes
                t = rent_result.time_s
                cloud_run = Range(hourly * t.low / 3600, hourly * t.likely / 3600, hourly * t.high / 3600)
                cloud_hours = Range(t.low / 3600, t.likely / 3600, t.high / 3600)
                rent_label = f"{rent_group.nodes} × {rent_group.cloud.provider} {rent_group.cloud.instance_type}"
                est.assumptions.append(
                    f"Renting: {rent_label} at ${hourly:,.2f}/h ({fin.pricing.replace('_', ' ')}) would take "
                    f"{t.likely / 3600:,.3g} h per run on its own hardware."
                )
            else:
                est.notes.append(f"Renting {rent_group.cloud.instance_type} is not a comparison: "
                                 + ("; ".join(rent_result.reasons) or "no time estimate") + ".")

    owned_run = owned_marginal = None
    break_even_runs = break_even_months = None
    owned_year = rent_year = None
    if run_times is not None and owned:
        hours = [t / 3600.0 for t in run_times]
        runs_per_year = [fin.utilization * C.HOURS_PER_YEAR / h if h > 0 else math.inf for h in hours]
        maint = [(capex or 0.0) * fin.maintenance_fraction_per_year / r if r and r != math.inf else 0.0 for r in runs_per_year]
        elec = [electricity.high, electricity.likely, electricity.low]
        marginal = [e + m for e, m in zip(elec, maint)]
        owned_marginal = Range(min(marginal), marginal[1], max(marginal))
        if capex is not None:
            lifetime_runs = [r * fin.lifetime_years for r in runs_per_year]
            total = [capex / lr + mg if lr and lr != math.inf else mg for lr, mg in zip(lifetime_runs, marginal)]
            owned_run = Range(min(total), total[1], max(total))
            owned_year = capex / fin.lifetime_years + capex * fin.maintenance_fraction_per_year + \
                est.energy_kwh_per_year * site.electricity_usd_per_kwh
            if cloud_run is not None:
                break_even_runs, break_even_months = break_even(capex, cloud_run.likely, owned_marginal.likely,
                                                                hours[1], fin.utilization)
                if break_even_runs is not None:
                    rent_year = cloud_run.likely * runs_per_year[1]
                else:
                    est.notes.append("Renting costs less per run than running the owned hardware: buying never breaks even.")
    elif run_times is not None and rented and cloud_run is not None:
        hours_likely = run_times[1] / 3600.0
        rent_year = cloud_run.likely * fin.utilization * C.HOURS_PER_YEAR / hours_likely if hours_likely else None
    if owned and capex is not None:
        est.assumptions.append(
            f"Owning: ${capex:,.0f} capex over {fin.lifetime_years:g} years at {fin.utilization:.0%} utilisation"
            + (f", maintenance {fin.maintenance_fraction_per_year:.0%} of capex a year" if fin.maintenance_fraction_per_year else "")
            + "; hosts, network and installation only where the scenario or a system price includes them."
        )
    return Cost(cloud_run, capex, owned_run, owned_marginal, electricity, break_even_runs, break_even_months,
                rent_label, cloud_hours, owned_year, rent_year)


def break_even(capex_usd: float, cloud_usd_per_run: float, owned_usd_per_run: float, run_hours: float,
               utilization: float) -> tuple[float | None, float | None]:
    """Runs, and months at `utilization`, after which buying has cost less than renting:
    capex / (rented cost per run - owned running cost per run). None when renting is cheaper per run."""
    saving = cloud_usd_per_run - owned_usd_per_run
    if saving <= 0:
        return None, None
    runs = capex_usd / saving
    months = runs * run_hours / (C.HOURS_PER_MONTH * utilization) if utilization > 0 else None
    return runs, months


def _hourly(g: NodeGroup, pricing: str) -> float:
    if g.usd_per_hour_override is not None:
        return g.usd_per_hour_override
    offer = g.cloud
    if pricing == "spot" and offer.usd_per_hour_spot:
        return offer.usd_per_hour_spot
    if pricing == "reserved" and offer.usd_per_hour_reserved:
        return offer.usd_per_hour_reserved
    return offer.usd_per_hour


_RENT_CACHE: dict[tuple, tuple] = {}


def _rent_estimate(inp: EstimateInput):
    """The same workload on the rented alternative; cached, since edits rarely touch it."""
    fin = inp.finance
    group = fin.rent
    if group is None or group.cloud is None:
        return None
    key = (inp.workload, id(group), inp.site, fin.lifetime_years, fin.utilization, fin.maintenance_fraction_per_year,
           fin.pricing, inp.calibrations)
    cached = _RENT_CACHE.get(key)
    if cached is not None and cached[0] is group:
        return group, cached[1]
    sub = EstimateInput(inp.workload, (group,), inp.site,
                        Finance(None, fin.lifetime_years, fin.utilization, fin.maintenance_fraction_per_year, fin.pricing),
                        inp.calibrations)
    result = estimate(sub)
    if len(_RENT_CACHE) > 64:
        _RENT_CACHE.clear()
    _RENT_CACHE[key] = (group, result)  # the group is kept alive, so its id stays its own
    return group, result


__all__ = ["break_even", "estimate", "EstimateError", "merge_groups"]
