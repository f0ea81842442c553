"""A readable summary of an estimate, for the terminal and for tooltips."""

from __future__ import annotations

from gpudesk.core.estimate.types import Estimate, Range
from gpudesk.core.format import co2, duration, energy, flops, power, si, usd


def rng(r: Range | None, fmt, sep: str = " – ") -> str:
    if r is None:
        return "n/a"
    if abs(r.high - r.low) <= 1e-9 * max(abs(r.likely), 1e-12):
        return fmt(r.likely)
    return f"{fmt(r.likely)}  ({fmt(r.low)}{sep}{fmt(r.high)})"


def plan_text(e: Estimate) -> str:
    """The chosen plan and, for training, how close the next best came."""
    plan = e.plan or {}
    if e.kind == "infer":
        serving = e.serving or {}
        text = plan.get("label", "")
        if serving.get("concurrency", 1) > 1:
            text += f"\n{serving.get('running_batch', 0):,} of {serving.get('concurrency', 1):,} requests run at once"
        return text
    text = plan.get("label", "")
    if e.alternatives:
        best = e.alternatives[0]
        text += f"\nnext best: {best['label']} at {best['relative']:.0%}"
    return text


# What the step breakdown's parts are called in a table cell.
STEP_PARTS = (("compute_s", "compute"), ("pipeline_bubble_s", "pipeline bubble"),
              ("tensor_parallel_s", "tensor-parallel"), ("context_parallel_s", "context-parallel"),
              ("expert_parallel_s", "expert all-to-all"), ("pipeline_transfer_s", "pipeline transfers"),
              ("gradient_exchange_exposed_s", "data-parallel"), ("optimizer_s", "optimizer"),
              ("overhead_s", "host overhead"))


def step_text(e: Estimate) -> str:
    b = e.breakdown or {}
    step = b.get("step_s") or 0.0
    if step <= 0:
        return "—"
    parts = [(label, b.get(key, 0.0) / step) for key, label in STEP_PARTS if b.get(key, 0.0) / step >= 0.005]
    parts.sort(key=lambda p: -p[1])
    return "\n".join(f"{label} {share:.0%}" for label, share in parts[:4])


def format_estimate(scenario, est: Estimate) -> str:
    lines = []
    title = scenario.name or "Scenario"
    lines.append(title)
    lines.append("=" * len(title))
    w = est.workload
    if w is not None:
        lines.append(f"Workload: {w.kind} · {w.params / 1e9:.3g}B parameters · {w.precision}")
    lines.append(f"Devices: {est.devices:,}  ·  peak {flops(est.peak_pflops)} dense {est.precision_used.upper()}")
    lines.append("")
    if not est.feasible:
        lines.append("NOT FEASIBLE")
        for reason in est.reasons:
            lines.append(f"  - {reason}")
        lines.append("")
    lines.append(f"Memory per device  {est.memory.per_device_gb:,.1f} GB of {est.memory.capacity_gb:,.1f} GB"
                 f"  ({'fits' if est.memory.fits else 'does not fit'}"
                 + (f"; at least {est.memory.min_devices:,} devices would hold it" if not est.memory.fits
                    and est.memory.min_devices else "") + ")")
    if est.memory.strategy:
        lines.append(f"Layout             {est.memory.strategy}")
    if est.feasible and est.plan:
        label = "Serving            " if est.kind == "infer" else "Plan               "
        lines.append(label + plan_text(est).replace("\n", "; "))
        if est.kind != "infer":
            lines.append("Each step          " + step_text(est).replace("\n", ", "))
    if est.feasible:
        lines.extend(_speed_lines(est))
        lines.extend(_power_lines(est))
        lines.extend(_cost_lines(est.cost))
    if est.notes:
        lines.append("")
        lines.append("Notes")
        for note in est.notes:
            lines.append(f"  - {note}")
    lines.append("")
    lines.append("Assumptions")
    for text in est.assumptions:
        lines.append(f"  - {text}")
    return "\n".join(lines)


def _speed_lines(est: Estimate) -> list[str]:
    """Decode speed, first-token latency and round time (serving), else throughput, MFU and time to train."""
    if est.kind == "infer":
        return [f"Decode, per user   {rng(est.decode_tokens_per_s_per_user, lambda v: f'{v:,.1f} tokens/s')}",
                f"Decode, all users  {rng(est.tokens_per_s, lambda v: f'{v:,.0f} tokens/s')}",
                f"Time to 1st token  {rng(est.ttft_s, duration)}",
                f"One round          {rng(est.time_s, duration)}"]
    lines = [f"Throughput         {rng(est.tokens_per_s, lambda v: si(v, 'tokens/s'))}",
             f"MFU                {rng(est.mfu, lambda v: f'{v:.0%}')}"]
    if est.time_s is not None:
        lines.append(f"Time to train      {rng(est.time_s, duration)}")
    if est.slowest_link and est.comm_share and est.comm_share.likely >= 0.005:
        lines.append(f"Slowest link       {est.slowest_link} ({est.comm_share.likely:.0%} of each step)")
    return lines


def _power_lines(est: Estimate) -> list[str]:
    """Power, energy and CO2 per run (operational and embodied), and per year."""
    lines = [f"Power (with PUE)   {rng(est.power_w, power) if est.power_w else 'unknown (no power figure)'}"]
    if est.energy_kwh is not None:
        lines.append(f"Energy per run     {rng(est.energy_kwh, energy)}")
        lines.append(f"CO2 per run        {rng(est.co2_kg, co2)}")
    if est.embodied_kg_per_run is not None:
        lines.append(f"Embodied CO2 / run {rng(est.embodied_kg_per_run, co2)}  (making the hardware, spread over "
                     f"its lifetime)")
    if est.energy_kwh_per_year:
        lines.append(f"Per year           {energy(est.energy_kwh_per_year)}, {co2(est.co2_kg_per_year)}"
                     + (f" + {co2(est.embodied_kg_per_year)} embodied" if est.embodied_kg_per_year else ""))
    return lines


def _cost_lines(c) -> list[str]:
    """Cloud cost per run, capex, owned cost per run and the break-even point, where known."""
    lines = []
    if c.cloud_usd_per_run is not None:
        lines.append(f"Cloud cost / run   {rng(c.cloud_usd_per_run, usd)}  ({c.rent_label})")
    if c.capex_usd is not None:
        lines.append(f"Capex              {usd(c.capex_usd)}")
    if c.owned_usd_per_run is not None:
        lines.append(f"Owned cost / run   {rng(c.owned_usd_per_run, usd)}  (electricity {usd(c.electricity_usd_per_run.likely)})")
    if c.break_even_runs is not None:
        lines.append(f"Break-even         {c.break_even_runs:,.1f} runs, {c.break_even_months:,.1f} months")
    return lines
