"""Inference estimates: the serving layout with the highest output throughput whose weights fit,
timed in three cases, explained in words (the physics is in serving.py)."""

from __future__ import annotations

from dataclasses import replace

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.compute import gemm_curve
from gpudesk.core.estimate.frontier import frontier, operating_point, points
from gpudesk.core.estimate.memory import capacity_basis, capacity_gb
from gpudesk.core.estimate.model import describe, kv_dtype, shape_of
from gpudesk.core.estimate.profiles import bandwidth_share, gemm_key, profile_of
from gpudesk.core.estimate.serving import (
    Layout,
    Serving,
    attention_curves,
    chunk_tokens,
    eager_decode,
    engine_rates,
    experts_touched,
    inference_peak,
    layouts,
    micro_batch,
    moe_curves_for,
    serve,
    serving_weights_gb,
    smallest_replica,
    weights_read_gb,
)
from gpudesk.core.estimate.topology import topology_of
from gpudesk.core.estimate.types import Cost, Estimate, EstimateInput, Finding, MemoryFit, NodeGroup, Range

CASES = (0, 1, 2)


def _device(groups: tuple[NodeGroup, ...]):
    return min(groups, key=lambda g: (capacity_gb(g.device), g.device.mem_bandwidth_gbs or 0)).device


def _factors(inp: EstimateInput, device, notes: list[Finding]) -> tuple[float, float]:
    decode = prefill = 1.0
    for cal in inp.calibrations:
        if cal.device_id != device.id:
            continue
        if cal.kind == "infer_decode":
            decode = cal.factor
            notes.append(Finding("calibrated", f"Decoding calibrated on {cal.measurements} of your measurements on "
                                 f"{device.name} (×{cal.factor:.2f}).", {"factor": cal.factor}))
        elif cal.kind == "infer_prefill":
            prefill = cal.factor
            notes.append(Finding("calibrated", f"Prompt processing calibrated on {cal.measurements} of your "
                                 f"measurements on {device.name} (×{cal.factor:.2f}).", {"factor": cal.factor}))
    return decode, prefill


def _best(inp: EstimateInput, s, device, topo, factors) -> Serving | None:
    w = inp.workload
    spread = profile_of(device).spread
    e = engine_rates(device, w.precision, 1, spread)
    best = None
    for lay in layouts(w, s, topo):
        got = serve(w, s, device, topo, lay, e, *factors)
        if got is None:
            continue
        key = (got.output_tokens_per_s, -lay.tp * lay.pp)
        if best is None or key > (best.output_tokens_per_s * 1.02, -best.layout.tp * best.layout.pp):
            best = got
    return best


def _failed(w, s, device, topo, devices, reasons, notes, assumptions) -> Estimate:
    cap = capacity_gb(device)
    tp = min(topo.per_node, 8)
    need = serving_weights_gb(w, s, tp, 1)
    smallest = smallest_replica(w, s, device, topo.per_node)
    memory = MemoryFit(round(need, 3), round(cap, 3), False, smallest, {"weights": round(need, 3)},
                       f"tensor parallel {tp}" if tp > 1 else "one device")
    count = f"{devices:,} × {device.name}" if devices > 1 else device.name
    reasons.append(Finding(
        "weights_do_not_fit",
        f"{count} cannot serve this model: its weights need {need:.1f} GB per device even split {tp} ways, "
        f"with room for one sequence's KV cache, and each {device.name} has {cap:.1f} GB usable.",
        {"need_gb": need, "capacity_gb": cap, "devices": devices, "min_devices": smallest or 0}))
    reasons.append(Finding("memory_min_devices", f"At least {smallest:,} × {device.name} would hold it." if smallest
                           else f"Even 1,024 × {device.name} would not hold it.", {"min_devices": smallest or 0}))
    est = Estimate(w.kind, False, reasons, Range.exact(0.0), None, None, memory, Range.exact(0.0), None, None,
                   Cost(None, None, None, None, Range.exact(0.0), None, None), assumptions, devices, notes=notes)
    peak, _ = inference_peak(device, w.precision)
    est.precision_used, est.peak_pflops = w.precision, (peak or 0.0) * devices / 1000.0
    return est


def infer(inp: EstimateInput, groups: tuple[NodeGroup, ...]) -> Estimate:
    w = inp.workload
    s = shape_of(w)
    device = _device(groups)
    topo = topology_of(groups)
    devices = topo.devices
    reasons: list[Finding] = []
    notes: list[Finding] = []
    assumptions: list[str] = []
    if len({g.device.id for g in groups}) > 1:
        notes.append(Finding("mixed_hardware", f"Mixed hardware: each replica is timed on the slowest device "
                             f"({device.name}).", {}))
    if not s.known:
        assumptions.append(f"Model shaped from {w.params / 1e9:.3g}B parameters as a modern decoder: {describe(s)}.")
    if not device.mem_bandwidth_gbs:
        reasons.append(Finding("no_bandwidth", f"The catalogue has no memory bandwidth figure for {device.name}, so "
                               "decoding speed cannot be estimated.", {"device": device.name}))
    peak, peak_note = inference_peak(device, w.precision)
    if peak is None:
        # decoding is bound by memory bandwidth and can still be timed; prompt processing cannot
        notes.append(Finding("no_peak", f"The catalogue has no compute figure for {device.name} at "
                             f"{w.precision.upper()}, so prompt processing and the time to first token cannot be "
                             "estimated; decoding is timed by memory bandwidth alone and throughput leaves the "
                             "prompts out.", {"device": device.name}))
    elif peak_note:
        notes.append(Finding("peak_fallback", peak_note + ".", {}))
    factors = tuple(f * C.FITTED_SCALE["inference"] for f in _factors(inp, device, notes))
    curve = [] if reasons else frontier(points(w, s, device, topo, engine_rates(device, w.precision, 1,
                                                                              profile_of(device).spread),
                                               factors, devices))
    if curve and (w.ttft_s_max or w.tokens_per_s_per_user_min):
        inp, w = _at_operating_point(inp, curve, notes)
    best = _best(inp, s, device, topo, factors) if not reasons else None
    if best is None:
        if reasons:
            memory = MemoryFit(0.0, round(capacity_gb(device), 3), False, None)
            return Estimate(w.kind, False, reasons, Range.exact(0.0), None, None, memory, Range.exact(0.0), None,
                            None, Cost(None, None, None, None, Range.exact(0.0), None, None), assumptions, devices,
                            notes=notes)
        return _failed(w, s, device, topo, devices, reasons, notes, assumptions)
    spread = profile_of(device).spread
    cases = [serve(w, s, device, topo, best.layout, engine_rates(device, w.precision, c, spread), *factors)
             if c != 1 else best for c in CASES]
    est = _estimate(inp, s, device, topo, cases, peak, reasons, notes, assumptions)
    est.serving["curve"] = curve
    return est


def _at_operating_point(inp: EstimateInput, curve: list[dict], notes: list[Finding]):
    """The workload at the curve's best point that meets its latency targets (its concurrency and
    layout), or at the closest point with a note saying the targets are not met."""
    w = inp.workload
    point, met = operating_point(curve, w.ttft_s_max, w.tokens_per_s_per_user_min)
    targets = ", ".join(t for t in (
        f"time to first token at most {w.ttft_s_max:g} s" if w.ttft_s_max else "",
        f"at least {w.tokens_per_s_per_user_min:g} tokens/s per user" if w.tokens_per_s_per_user_min else "") if t)
    values = {"concurrency": point["concurrency"], "ttft_s": point["ttft_s"],
              "tokens_per_s_per_user": point["tokens_per_s_per_user"], "layout": point["layout"]}
    if met:
        notes.append(Finding("latency_targets_met", f"Operating point chosen for the targets ({targets}): "
                             f"{point['concurrency']:,} concurrent requests on {point['layout']}, the highest throughput "
                             f"that meets them ({point['ttft_s']:.2f} s to first token, "
                             f"{point['tokens_per_s_per_user']:.1f} tokens/s per user).", values))
    else:
        notes.append(Finding("latency_target_missed", f"No operating point meets the targets ({targets}). The closest: "
                             f"{point['concurrency']:,} concurrent requests on {point['layout']}, "
                             f"{point['ttft_s']:.2f} s to first token and {point['tokens_per_s_per_user']:.1f} "
                             "tokens/s per user; it is the point shown.", values))
    w = replace(w, concurrency=point["concurrency"], tp=point["tp"], pp=point["pp"])
    return replace(inp, workload=w), w


def _range(values, spread: float = 0.0) -> Range:
    """low / likely / high of three cases, widened to the engine's known error (`spread`)."""
    lo, mid, hi = values
    return Range(min(lo, hi), mid, max(lo, hi)).at_least(spread)


def _estimate(inp, s, device, topo, cases: list[Serving], peak, reasons, notes, assumptions) -> Estimate:
    w = inp.workload
    m = cases[1]
    lay = m.layout
    cap = capacity_gb(device)
    need = m.weights_gb + m.kv_gb
    memory = MemoryFit(round(need, 3), round(cap, 3), True, None,
                       {"weights": round(m.weights_gb, 3), "kv_cache": round(m.kv_gb, 3)},
                       _layout_text(lay))
    calibrated = any(n.code == "calibrated" for n in notes)
    spread = 0.0 if calibrated else C.MODEL_ERROR["inference"]
    # the fastest a decode step can be: its bytes at the datasheet's full memory bandwidth
    floor_step = m.step_bytes * lay.pp / ((device.mem_bandwidth_gbs or 1.0) * 1e9)  # the stages read in turn
    headroom = max(1.0, m.step_s / floor_step) if floor_step > 0 else float("inf")
    est = Estimate(w.kind, True, reasons, _range([c.output_tokens_per_s for c in cases], spread),
                   _range([c.round_s for c in cases], spread), None, memory, Range.exact(0.0), None, None,
                   Cost(None, None, None, None, Range.exact(0.0), None, None), assumptions, topo.devices, notes=notes)
    est.decode_tokens_per_s_per_user = _capped(_range([1.0 / c.tpot_s for c in cases], spread), headroom)
    est.tpot_s = _floored(_range([c.tpot_s for c in cases], spread), headroom)
    est.decode_tokens_per_s_aggregate = _capped(
        _range([min(max(1, w.concurrency), c.batch * c.layout.replicas) / c.step_s for c in cases], spread), headroom)
    est.ttft_s = _range([c.ttft_s for c in cases], spread)
    if peak is not None:
        est.prefill_tokens_per_s = _range([max(1, w.prompt_tokens) / c.prefill_s for c in cases], spread)
    else:
        est.ttft_s = None
    est.step_time_s = _range([c.step_s for c in cases], spread)
    est.precision_used = w.precision
    est.peak_pflops = (peak or 0.0) * topo.devices / 1000.0
    est.plan = {"tp": lay.tp, "pp": lay.pp, "replicas": lay.replicas, "dp_attention": lay.dp_attention,
                "label": _layout_text(lay)}
    est.serving = {"running_batch": m.batch, "limit": m.limit, "kv_capacity_sequences": m.kv_capacity_sequences,
                   "queued_per_replica": m.queued, "requests_per_s": m.requests_per_s, "bound": m.bound,
                   "concurrency": max(1, w.concurrency)}
    est.breakdown = {"tp": lay.tp, "pp": lay.pp, "replicas": lay.replicas, "sequences_per_replica": m.batch,
                     "decode_bound": m.bound, "prefill_tokens_per_s": max(1, w.prompt_tokens) / m.prefill_s if m.prefill_s else None,
                     "decode_step_s": m.step_s, "kv_capacity_sequences": m.kv_capacity_sequences}
    est.assumptions.extend(_assumptions(w, s, device, m))
    est.assumptions.extend(_ring_text(topo, m.layout.tp))
    est.notes.extend(_notes(w, m))
    return est


def _capped(r: Range, headroom: float) -> Range:
    """A speed's high end no faster than physics allows (`headroom` × likely)."""
    return Range(r.low, r.likely, max(r.likely, min(r.high, r.likely * headroom)))


def _floored(r: Range, headroom: float) -> Range:
    """A time's low end no shorter than physics allows (likely / `headroom`)."""
    return Range(min(r.likely, max(r.low, r.likely / headroom)), r.likely, r.high)


def _layout_text(lay: Layout) -> str:
    one = (f"{lay.tp} devices with data-parallel attention and the experts split {lay.tp} ways" if lay.dp_attention
           else f"tensor parallel {lay.tp}" if lay.tp > 1 else "one device") + (f", pipeline {lay.pp}" if lay.pp > 1 else "")
    return f"{lay.replicas} replica(s), each {one}"


def _kernels_text(w, profile, batch: int) -> str:
    """The decode step's fixed cost per layer, as `serving.decode_step` counts it."""
    if not eager_decode(w, batch):
        return f"{C.KERNELS_PER_LAYER_DECODE:g} kernels per layer at {profile.kernel_us:g} µs each, replayed as one CUDA graph"
    why = (f"the server replays its CUDA graph only for steps of at most {w.server_graphs_max_batch} sequence(s)"
           if not w.runtime else "no CUDA graph")
    return (f"{C.KERNELS_PER_LAYER_DECODE_EAGER:g} kernels per layer, each launched from the host at "
            f"{max(profile.kernel_us, profile.launch_us):g} µs ({why})")


def _weights_read_text(w, s, m: Serving) -> str:
    """What a decode step reads of the weights: all a device holds, or, in a mixture of experts, its
    dense part and the routed experts that the step's tokens select."""
    read = weights_read_gb(w, s, m.layout, m.batch)
    if not s.moe:
        return f"the weights ({m.weights_gb:.2f} GB per device)"
    share = experts_touched(s, micro_batch(m.layout, m.batch))
    return (f"the dense weights and the routed experts the step's tokens select ({share:.0%} of the experts at "
            f"{m.batch} sequence(s), {s.experts_active} of {s.experts} per token: {read:.2f} of the {m.weights_gb:.2f} GB "
            f"a device holds)")


def _assumptions(w, s, device, m: Serving) -> list[str]:
    profile = profile_of(device)
    stream, stream_basis = bandwidth_share(device, profile)
    users = max(1, w.concurrency)
    out = [
        f"Serving layout: {_layout_text(m.layout)}; the layout with the highest output throughput whose weights fit.",
        f"Decoding reads {_weights_read_text(w, s, m)} and each running sequence's KV cache once per step at "
        f"{stream:.0%} of {device.mem_bandwidth_gbs:,.0f} GB/s ({stream_basis}), "
        f"plus {_kernels_text(w, profile, m.batch)}"
        + ("; quantised weights are dequantised on the vector units." if w.precision in C.QUANTISED + ("int8",) else "."),
        capacity_basis(device) + ".",
    ]
    out.extend(kernel_sources(w, s, device, m.layout.tp))
    if users > 1:
        out.append(
            f"Continuous batching (Orca, vLLM): {m.batch} of {users} concurrent requests run per replica "
            f"({_limit_text(m.limit)}); prompts are processed in chunks of {chunk_tokens(w):,} tokens alongside "
            f"decoding; the server ({w.server or 'tuned'}) "
            + (f"gives the KV cache {w.server_memory_share or C.SERVER_MEMORY_SHARE:.0%} of the memory the weights leave "
               if w.server_memory_basis == "free" else
               f"keeps {w.server_memory_share or C.SERVER_MEMORY_SHARE:.0%} of memory for weights and KV cache ")
            + ("reserves a request's whole length when it admits it, " if w.server_kv_reserve == "whole" else "")
            + "and runs "
            + (f"at most {int(w.max_batch or w.server_max_batch)} sequences." if (w.max_batch or w.server_max_batch)
               else "as many sequences as the KV cache holds."))
    return out


SERVER_KERNELS = {"vllm": "vLLM's", "trtllm": "TensorRT-LLM's"}


def kernel_sources(w, s, device, tp: int = 1) -> list[str]:
    """Where the kernel times by shape come from: the device's measured tables, or its datasheet
    (all-reduces only where the layout splits the model over devices)."""
    curve = gemm_curve(device, profile_of(device), gemm_key(w.precision))
    out = [f"Matrix multiplications timed by shape (M, N, K: tiles, waves, short-K ramp, memory side): {curve.basis}."]
    curves = device.all_reduce_curves
    if curves and tp > 1:
        libraries = " and ".join(dict.fromkeys(c.library for c in curves))
        gpus = ", ".join(str(g) for g in sorted({c.gpus for c in curves}))
        by = ", ".join(dict.fromkeys(c.measured_by for c in curves if c.measured_by))
        out.append(f"Tensor-parallel all-reduces timed by message size from {libraries} measured on {device.name} "
                   f"({gpus} GPUs{', ' + by if by else ''}).")
    timed = attention_curves(device.decode_attention_curves, kv_dtype(w), w.server)
    if timed and s.attention != "mla" and not s.sliding_window:
        kernels = " and ".join(sorted({SERVER_KERNELS.get(c.server, c.server) for c in timed}))
        faster = ", the faster of them" if len({c.server for c in timed}) > 1 else ""
        out.append(f"Decode attention timed from {kernels} kernels measured on {device.name} (AIConfigurator){faster}: "
                   "a fixed cost per call, a cost per sequence, and the KV cache streamed at the measured share of the "
                   "bandwidth.")
    moe = moe_curves_for(device.moe_curves, w.precision, w.server) if s.moe and curve.measured else ()
    if moe:
        kernels = " and ".join(sorted({SERVER_KERNELS.get(c.server, c.server) for c in moe}))
        faster = ", the faster of them" if len({c.server for c in moe}) > 1 else ""
        fits = "; ".join(f"{SERVER_KERNELS.get(c.server, c.server)} {c.dtype}: products at {c.grouped:.2f} of the GEMM "
                         f"curve, weights at {c.bandwidth_share:.0%} of the bandwidth, {c.row_bytes:.0f} bytes a routed "
                         f"row element, {c.fixed_us:.0f} µs a call ({c.basis})" for c in moe)
        out.append(f"The routed experts timed from {kernels} MoE operators measured on {device.name}{faster}, each "
                   f"call the grouped products or the touched experts' weights, whichever is slower, plus the routed "
                   f"rows' traffic: {fits}.")
    return out


def _ring_text(topo, tp: int) -> list[str]:
    """The rate a tensor-parallel group of more than two devices exchanges at, where the link's
    measured hosts set it (PCIe)."""
    if tp <= 2 or not topo.ring_basis or topo.domain < 3:
        return []
    return [f"Tensor-parallel groups of more than two devices over {topo.intra_name} exchange at "
            f"{topo.ring_gbs:,.1f} GB/s one way per device, whatever a single host's measured table says: "
            f"{topo.ring_basis}; past a pair the ring crosses the host's PCIe tree, so the host sets the rate."]


def _limit_text(limit: str) -> str:
    return {"concurrency": "all of them fit", "kv_cache": "the KV cache holds no more",
            "max_batch": "the server's sequence limit"}[limit]


def _notes(w, m: Serving) -> list[Finding]:
    out: list[Finding] = []
    if m.queued > 0:
        out.append(Finding(
            "queueing", f"Only {m.batch} of {m.batch + m.queued} requests per replica run at once "
            f"({_limit_text(m.limit)}); the rest wait, which lengthens the time to first token to "
            f"{m.ttft_s:,.2f} s. Throughput is that of the running batch.",
            {"running": m.batch, "queued": m.queued, "limit": m.limit}))
    return out
