"""Measured against estimated: for a stored measurement whose hardware is known, the gpudesk
estimate of the same setup and the same metric, with the relative error of the likely value; and
a physical sanity check of the measurement itself (a decode speed above what the memory bandwidth
can feed, a prefill speed above the dense peak) with the reason in words.

The workload comes from the file (llama-bench: parameters, weights bytes, quantisation, prompt and
generated tokens; trtllm-bench and the vLLM/SGLang files: the model id and lengths; MLPerf: the
benchmark's model) and from the user's answers (store.answer_model).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from gpudesk.core.benchmarks.types import Measurement
from gpudesk.core.catalogue.convert import device_from_row, link_from_row
from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.engine import EstimateError, estimate
from gpudesk.core.estimate.serving import inference_peak
from gpudesk.core.estimate.types import Calibration, Device, Estimate, EstimateInput, NodeGroup, Range, Workload

INFER_DECODE = ("decode_tokens_per_s_per_user", "tpot_s", "itl_s")
INFER_AGGREGATE = ("decode_tokens_per_s_aggregate", "output_tokens_per_s", "total_tokens_per_s",
                   "request_throughput", "samples_per_s", "e2e_latency_s", "output_tokens_per_s_per_gpu")
COMPARED = {
    "prefill_tokens_per_s", "decode_tokens_per_s_per_user", "decode_tokens_per_s_aggregate", "output_tokens_per_s",
    "output_tokens_per_s_per_gpu", "total_tokens_per_s", "request_throughput", "samples_per_s", "ttft_s", "tpot_s",
    "itl_s", "e2e_latency_s", "prompt_and_generation_tokens_per_s", "time_to_train_s", "train_samples_per_s",
}
TYPICAL = ("mean", "median", "p50", "last tracked_stats", "run_start to run_stop", "wall clock (RESULT line)")
DEFAULT_MAX_SEQUENCES = 256  # vLLM's default max_num_seqs: a server runs at most this many at once
_TRAIN_METRICS = ("time_to_train_s", "train_samples_per_s")


@dataclass
class Versus:
    measurement: Measurement
    comparable: bool
    reason: str  # what was compared with what, or why nothing was
    estimated: Range | None = None  # in the measurement's metric and unit
    implausible: list[str] = field(default_factory=list)  # why the measurement itself looks impossible
    notes: list[str] = field(default_factory=list)
    estimate_input: EstimateInput | None = None
    kind: str | None = None  # calibration kind: train | infer_decode | infer_prefill

    @property
    def measured(self) -> float:
        return self.measurement.value

    @property
    def error(self) -> float | None:
        """(estimated likely - measured) / measured."""
        if self.estimated is None or not self.measured:
            return None
        return (self.estimated.likely - self.measured) / self.measured

    @property
    def inside(self) -> bool:
        if self.estimated is None:
            return False
        return self.estimated.low * (1 - 1e-9) <= self.measured <= self.estimated.high * (1 + 1e-9)

    @property
    def plausible(self) -> bool:
        return not self.implausible

    @property
    def ratio(self) -> float | None:
        """How much faster the measurement is than the estimate (measured speed / estimated speed):
        the calibration factor this measurement suggests."""
        if self.estimated is None or not self.estimated.likely or not self.measured:
            return None
        if self.measurement.unit == "s":
            return self.estimated.likely / self.measured
        return self.measured / self.estimated.likely

    def to_json(self) -> dict:
        return {
            "measurement_id": self.measurement.id,
            "metric": self.measurement.metric,
            "statistic": self.measurement.statistic,
            "measured": self.measured,
            "unit": self.measurement.unit,
            "comparable": self.comparable,
            "reason": self.reason,
            "estimated": self.estimated.to_json() if self.estimated else None,
            "error": self.error,
            "inside": self.inside,
            "plausible": self.plausible,
            "implausible": list(self.implausible),
            "notes": list(self.notes),
            "kind": self.kind,
        }


def calibration_kind(m: Measurement) -> str | None:
    if m.metric in _TRAIN_METRICS:
        return "train"
    if m.metric == "prefill_tokens_per_s":
        return "infer_prefill"
    if m.metric in INFER_DECODE or (m.metric in ("decode_tokens_per_s_aggregate", "output_tokens_per_s")
                                    and int(m.workload.get("concurrency") or 1) == 1):
        return "infer_decode"
    return None


# ----------------------------------------------------------------------------------- inputs
def _link(catalogue, acc: dict):
    form = (acc.get("form_factor") or "").lower()
    link_id = acc.get("intra_link") if acc.get("intra_link") and not form.startswith("pcie") else None
    if not link_id and acc.get("pcie_gen"):
        link_id = f"pcie{acc['pcie_gen']}"
    row = catalogue.get("interconnects", link_id) if link_id else None
    return link_from_row(row) if row else None


def _device(catalogue, m: Measurement) -> tuple[dict | None, Device | None]:
    if not m.accelerator_id:
        return None, None
    row = catalogue.get("accelerators", m.accelerator_id)
    if row is None:
        return None, None
    return row, device_from_row(row)


def build_input(catalogue, m: Measurement, calibrations: tuple[Calibration, ...] = ()) -> tuple[
        EstimateInput | None, str, list[str]]:
    """The engine input describing the measurement's setup: (input, why not, notes)."""
    notes: list[str] = []
    if m.cpu_only:
        return None, "a CPU-only run: gpudesk estimates accelerators, not CPUs", notes
    if m.metric not in COMPARED:
        return None, f"gpudesk does not estimate {m.metric}", notes
    if m.statistic not in TYPICAL:
        return None, f"the estimate is of typical values; this is the {m.statistic}", notes
    row, device = _device(catalogue, m)
    if device is None:
        what = f"'{m.accelerator_id}' is not in the catalogue" if m.accelerator_id else \
            "the hardware is not known yet (answer which accelerator ran it)"
        return None, what, notes
    count = max(1, int(m.accelerator_count or 1))
    model = _model(m, notes)
    if isinstance(model, str):
        return None, model, notes
    if m.metric in _TRAIN_METRICS:
        work = _train_workload(m, model)
        if not isinstance(work, str):
            notes.append("Training at BF16 (mixed precision) assumed.")
    else:
        work = _infer_workload(m, model, count, notes)
    if isinstance(work, str):
        return None, work, notes
    link = _link(catalogue, row) if count > 1 else None
    group = NodeGroup(device=device, per_node=count, nodes=1, intra=link, label=f"{count} × {device.name}")
    return EstimateInput(work, (group,), calibrations=tuple(calibrations)), "", notes


def _model(m: Measurement, notes: list[str]) -> dict | str:
    """The model's parameters (active ones for a mixture of experts), weights, precision and shape
    from the workload, or why they are not known."""
    wl = m.workload or {}
    params = _num(wl.get("params"))
    if not params:
        return "the model's parameter count is not known (answer which model ran)"
    weights = _num(wl.get("weights_bytes"))
    if wl.get("moe"):
        active = _num(wl.get("active_params"))
        if not active:
            return "a mixture-of-experts model whose active parameters per token are not known"
        if weights:
            weights = weights * active / params
        notes.append(f"Mixture of experts: {active / 1e9:.3g}B of {params / 1e9:.3g}B parameters (and that share of "
                     "the weights) are used per token.")
        params = active
    precision = wl.get("precision")
    if not precision:
        precision = "fp16"
        if m.metric not in _TRAIN_METRICS:
            notes.append("Precision not recorded: FP16 assumed.")
    if wl.get("params_from") == "model name":
        notes.append(f"Parameter count {params / 1e9:.3g}B guessed from the model name '{wl.get('model')}'.")
    shape = {k: int(wl[k]) for k in ("layers", "d_model", "heads", "kv_heads", "vocab") if _num(wl.get(k))}
    return {"params": params, "weights": weights, "precision": precision, "shape": shape,
            "name": str(wl.get("model") or "")}


def _train_workload(m: Measurement, model: dict) -> Workload | str:
    wl = m.workload or {}
    seq = int(_num(wl.get("seq_len")) or 0)
    if not seq:
        return "the training sequence length is not known"
    tokens = None
    if m.metric == "time_to_train_s":
        samples = _num(wl.get("train_samples"))
        if not samples:
            return "the number of training samples is not known"
        tokens = samples * seq
    gbt = _num(wl.get("global_batch_size"))
    precision = model["precision"]
    return Workload(kind="finetune" if wl.get("method") == "lora" else "train", params=model["params"],
                    tokens=tokens, seq_len=seq,
                    precision="bf16" if precision in ("fp16", "bf16", "q4", "q8", "int8") else precision,
                    global_batch_tokens=gbt * seq if gbt else None, method=wl.get("method") or "full",
                    name=model["name"], **model["shape"])


def _infer_workload(m: Measurement, model: dict, count: int, notes: list[str]) -> Workload | str:
    wl = m.workload or {}
    depth = int(_num(wl.get("depth")) or 0)
    prompt = int(_num(wl.get("prompt_tokens")) or 0)
    gen = int(_num(wl.get("gen_tokens")) or 0)
    if m.metric == "prefill_tokens_per_s":
        if not prompt:
            return "the prompt length is not known"
        prompt_in, out = prompt + 2 * depth, max(1, gen)
        if depth:
            notes.append(f"{depth} tokens already in the KV cache: modelled as a longer prompt with the same mean "
                         "attention context.")
    elif m.metric in ("decode_tokens_per_s_per_user", "tpot_s", "itl_s") and m.format == "llama-bench":
        prompt_in, out = depth, max(1, gen)
    else:
        if not gen and m.metric not in ("ttft_s",):
            return "the number of generated tokens per request is not known"
        prompt_in, out = prompt + depth, max(1, gen)
    concurrency = int(_num(wl.get("concurrency")) or 1)
    cap = int(_num((m.conditions or {}).get("max_num_seqs")) or DEFAULT_MAX_SEQUENCES)
    if concurrency > cap * count:
        notes.append(f"{concurrency} requests in flight: the estimate runs at most {cap * count} at once ({cap} per "
                     "accelerator, vLLM's default max_num_seqs) and queues the rest.")
        concurrency = cap * count
    tp = _num((m.conditions or {}).get("tp_size"))
    work = Workload(kind="infer", params=model["params"], precision=model["precision"],
                    prompt_tokens=max(0, prompt_in), output_tokens=out, concurrency=max(1, concurrency),
                    weights_bytes=model["weights"], tp=int(tp) if tp else None, name=model["name"],
                    **model["shape"])
    if m.format == "llama-bench" and count > 1:
        notes.append("llama.cpp splits layers across the GPUs and runs them one after another; the estimate "
                     "spreads the model with tensor parallelism, so it may be optimistic for one user.")
    return work


def _num(value) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


# ----------------------------------------------------------------------------------- the metric
def _invert(r: Range) -> Range:
    return Range(1.0 / r.high, 1.0 / r.likely, 1.0 / r.low)


def _metric_range(m: Measurement, est: Estimate, inp: EstimateInput) -> tuple[Range | None, str]:
    w = inp.workload
    metric = m.metric
    if metric == "time_to_train_s":
        return est.time_s, "estimated time to train the same number of tokens"
    if metric == "train_samples_per_s":
        return est.tokens_per_s.scaled(1.0 / w.seq_len), "estimated training samples per second"
    if metric == "prefill_tokens_per_s":
        return est.prefill_tokens_per_s, "estimated prompt processing speed"
    if metric == "decode_tokens_per_s_per_user":
        return est.decode_tokens_per_s_per_user, "estimated generation speed of one sequence"
    if metric in ("tpot_s", "itl_s"):
        per_user = est.decode_tokens_per_s_per_user
        return (_invert(per_user) if per_user else None), "estimated time per generated token (1 / decode speed)"
    if metric == "ttft_s":
        if w.concurrency > 1:
            return None, "time to first token under load includes queueing behind other prompts, which the " \
                         "estimate does not model"
        return est.ttft_s, "estimated time to first token"
    if metric == "prompt_and_generation_tokens_per_s":
        pre, dec = est.prefill_tokens_per_s, est.decode_tokens_per_s_per_user
        if pre is None or dec is None:
            return None, "estimated prompt processing speed (needed for the blend)"
        p, g = w.prompt_tokens, w.output_tokens
        cases = [(p + g) / (p / a + g / b) for a, b in ((pre.low, dec.low), (pre.likely, dec.likely),
                                                         (pre.high, dec.high))]
        return Range(cases[0], cases[1], cases[2]), "estimated (prompt + generated tokens) / (prefill + decode time)"
    if metric == "decode_tokens_per_s_aggregate":
        return est.tokens_per_s, "estimated generated tokens per second over all sequences"
    # whole-run serving figures: every sequence's prompt and answer per round
    if est.time_s is None:
        return None, "no round time in the estimate"
    sequences = int(est.breakdown.get("replicas", 1)) * int(est.breakdown.get("sequences_per_replica", 1))
    sequences = min(sequences, w.concurrency) or 1
    rounds = Range(1.0 / est.time_s.high, 1.0 / est.time_s.likely, 1.0 / est.time_s.low)  # rounds per second
    if metric in ("output_tokens_per_s", "output_tokens_per_s_per_gpu"):
        r = rounds.scaled(sequences * w.output_tokens)
        if metric == "output_tokens_per_s_per_gpu":
            r = r.scaled(1.0 / max(1, est.devices))
        return r, "estimated generated tokens per second of the run (all prompts, then all answers, per round)"
    if metric == "total_tokens_per_s":
        return rounds.scaled(sequences * (w.output_tokens + w.prompt_tokens)), \
            "estimated prompt + generated tokens per second of the run"
    if metric in ("request_throughput", "samples_per_s"):
        return rounds.scaled(sequences), "estimated completed requests per second"
    if metric == "e2e_latency_s":
        return est.time_s, "estimated time of one round (prompt processing and generation of all sequences)"
    return None, f"gpudesk does not estimate {metric}"


# ----------------------------------------------------------------------------------- plausibility
def plausibility(m: Measurement, device: Device | None) -> list[str]:
    """Reasons, in words, why a measurement cannot be right on its hardware (empty when it can)."""
    reasons: list[str] = []
    if m.value is None or not math.isfinite(m.value) or m.value <= 0:
        if m.metric not in ("busbw_gbs", "algbw_gbs", "avg_busbw_gbs"):
            reasons.append(f"{m.metric} is {m.value}: a speed or a time must be positive (a failed run?)")
        return reasons
    if device is None or m.cpu_only:
        return reasons
    wl = m.workload or {}
    count = max(1, int(m.accelerator_count or 1))
    params = _num(wl.get("params"))
    active = _num(wl.get("active_params"))
    weights = _num(wl.get("weights_bytes"))
    moe = bool(wl.get("moe"))
    precision = wl.get("precision") or "fp16"
    per_token_params = active if moe and active else (None if moe else params)
    if weights and moe:
        weights = weights * active / params if active and params else None
    elif not weights and per_token_params:
        weights = per_token_params * C.WEIGHT_BYTES.get(precision, 2.0)
    bw = (device.mem_bandwidth_gbs or 0.0) * 1e9 * count
    speed = m.value
    if m.metric in ("tpot_s", "itl_s"):
        speed = 1.0 / m.value
    who = f"{count} × {device.name}" if count > 1 else device.name
    if m.metric in ("decode_tokens_per_s_per_user", "tpot_s", "itl_s") and weights and bw and \
            m.statistic in TYPICAL:
        limit = bw / weights
        if speed > limit * 1.05:
            reasons.append(f"{speed:,.1f} tokens/s for one sequence reads the {weights / 1e9:,.2f} GB of weights "
                           f"{speed:,.0f} times a second, {speed * weights / 1e9:,.0f} GB/s, but {who} has "
                           f"{bw / 1e9:,.0f} GB/s of memory bandwidth: at most {limit:,.1f} tokens/s is physically "
                           "possible")
    peak, _note = inference_peak(device, precision if precision in ("fp32", "tf32", "fp16", "bf16", "fp8", "int8",
                                                                    "int4", "q8", "q4", "fp4") else "fp16")
    if peak and per_token_params:
        flops = count * peak * 1e12
        limit = flops / (2.0 * per_token_params)
        if m.metric in ("prefill_tokens_per_s", "decode_tokens_per_s_aggregate", "output_tokens_per_s",
                        "total_tokens_per_s") and m.value > limit * 1.05:
            reasons.append(f"{m.value:,.0f} tokens/s × 2 FLOPs per parameter × {per_token_params / 1e9:.3g}B "
                           f"parameters = {m.value * 2 * per_token_params / 1e12:,.0f} TFLOPS, above the "
                           f"{flops / 1e12:,.0f} TFLOPS dense {precision.upper()} peak of {who}")
    return reasons


# ----------------------------------------------------------------------------------- comparing
class EstimateCache:
    """Estimates of identical setups, computed once (100,000 llama-bench rows are a few setups)."""

    def __init__(self):
        self._store: dict = {}

    def get(self, inp: EstimateInput) -> Estimate:
        g = inp.groups[0]
        key = (inp.workload, g.device.id, g.per_node, g.nodes, g.intra, inp.calibrations)
        hit = self._store.get(key)
        if hit is None:
            hit = estimate(inp)
            if len(self._store) > 10_000:
                self._store.clear()
            self._store[key] = hit
        return hit


def compare(catalogue, m: Measurement, calibrations: tuple[Calibration, ...] = (),
            cache: EstimateCache | None = None) -> Versus:
    """The estimate for the measurement's setup and metric, or why there is none; with the
    physical plausibility of the measurement."""
    cache = cache or EstimateCache()
    _row, device = _device(catalogue, m)
    implausible = plausibility(m, device)
    kind = calibration_kind(m)
    inp, why, notes = build_input(catalogue, m, tuple(calibrations))
    if inp is None:
        return Versus(m, False, why, implausible=implausible, notes=notes, kind=kind)
    try:
        est = cache.get(inp)
    except (EstimateError, ValueError, ZeroDivisionError, OverflowError) as exc:
        return Versus(m, False, f"the estimate failed: {exc}", implausible=implausible, notes=notes,
                      estimate_input=inp, kind=kind)
    if not est.feasible and inp.workload.kind == "infer" and inp.workload.concurrency > 1:
        # a server runs as many sequences at once as its memory holds (continuous batching) and
        # queues the rest: find the largest concurrency that fits
        fits, wanted = None, inp.workload.concurrency
        low, high = 1, wanted
        while low <= high:
            mid = (low + high) // 2
            trial = replace(inp, workload=replace(inp.workload, concurrency=mid))
            try:
                candidate = cache.get(trial)
            except (EstimateError, ValueError, ZeroDivisionError, OverflowError):
                break
            if candidate.feasible:
                fits, low = (trial, candidate), mid + 1
            else:
                high = mid - 1
        if fits is not None:
            inp, est = fits
            notes = notes + [f"{wanted} sequences at once do not fit in memory: the estimate runs "
                             f"{inp.workload.concurrency} at once and queues the rest, as a server would."]
    if not est.feasible:
        return Versus(m, False, "the estimate says this setup cannot run: " + "; ".join(est.reason_texts()),
                      implausible=implausible, notes=notes, estimate_input=inp, kind=kind)
    queued = inp.workload.kind == "infer" and inp.workload.concurrency < int(
        _num((m.workload or {}).get("concurrency")) or 1)
    if queued and m.metric == "e2e_latency_s":
        return Versus(m, False, "requests queued behind the ones running: their end-to-end latency includes the "
                      "wait, which the estimate does not model", implausible=implausible, notes=notes,
                      estimate_input=inp, kind=kind)
    value, what = _metric_range(m, est, inp)
    if value is None:
        if what.startswith("estimated "):
            missing = [str(n).rstrip(".") for n in (*est.reasons, *est.notes) if n.code == "no_peak"]
            what = f"the estimate has no {what[len('estimated '):]}" + (f": {missing[0]}" if missing else "")
        return Versus(m, False, what, implausible=implausible, notes=notes + _relevant(est.notes), estimate_input=inp,
                      kind=kind)
    return Versus(m, True, what, value, implausible, notes + _relevant(est.notes), inp, kind)


def _relevant(notes) -> list[str]:
    """The engine's notes that bear on speed (not prices or power)."""
    return [str(n) for n in notes if n.code not in ("no_price", "no_tdp", "rent_cheaper", "rent_not_comparable")]


def compare_all(catalogue, measurements: Iterable[Measurement] | None = None,
                calibrations: tuple[Calibration, ...] = (), **filters) -> list[Versus]:
    """compare() for many measurements (default: the stored ones matching `filters`)."""
    if measurements is None:
        from gpudesk.core.benchmarks.store import stored_measurements

        measurements = stored_measurements(catalogue, **filters)
    cache = EstimateCache()
    return [compare(catalogue, m, calibrations, cache) for m in measurements]
