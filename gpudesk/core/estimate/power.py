"""Power, energy and operational CO2 (Patterson et al. 2021; Luccioni et al. 2022): devices draw
between idle and TDP by load, hosts add their share (or a system's rated power is used), PUE
scales it all, energy is power × time in each case, and CO2 is energy × grid intensity. A device
with no power figure is unknown, never zero."""

from __future__ import annotations

import math

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.types import Estimate, EstimateInput, Finding, NodeGroup, Range

CASES = (0, 1, 2)


def group_power(g: NodeGroup, activity: float) -> tuple[float | None, float | None]:
    """(IT power at `activity`, IT power at idle) of one group, in W; None when unknown."""
    dev = g.device
    if g.system_power_w:
        rated = g.system_power_w
        return rated * (C.SYSTEM_IDLE_SHARE + (1 - C.SYSTEM_IDLE_SHARE) * activity) * g.nodes, \
            rated * C.SYSTEM_IDLE_SHARE * g.nodes
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
    return (device_w * g.per_node + overhead) * g.nodes, (idle_w * g.per_node + overhead_idle) * g.nodes


def combine(a: Range, b: Range) -> Range:
    """The product of two independent uncertain figures: likely × likely, with the low and high
    spreads added in quadrature on a log scale rather than stacked worst case on worst case."""
    likely = a.likely * b.likely
    if likely <= 0:
        return Range(a.low * b.low, likely, a.high * b.high)

    def spread(x: float, y: float) -> float:
        return math.log(x) if x > 0 and y > 0 else 0.0

    down = math.hypot(spread(a.likely / a.low, 1) if a.low > 0 else 0.0, spread(b.likely / b.low, 1) if b.low > 0 else 0.0)
    up = math.hypot(spread(a.high / a.likely, 1) if a.likely > 0 else 0.0, spread(b.high / b.likely, 1) if b.likely > 0 else 0.0)
    return Range(likely * math.exp(-down), likely, likely * math.exp(up))


def apply_power(inp: EstimateInput, groups: tuple[NodeGroup, ...], est: Estimate) -> list[float] | None:
    """Fill power, energy and CO2; return the power of each case (W) or None when unknown."""
    w, site = inp.workload, inp.site
    phase = "train" if w.kind != "infer" else "decode"
    band = C.ACTIVITY[phase]
    missing = sorted({g.label or g.device.name for g in groups if not g.system_power_w and not g.device.tdp_w})
    if missing:
        est.notes.append(Finding("no_tdp", f"No power figure in the catalogue for {', '.join(missing)}: power, energy "
                                 "and CO2 are unknown (add a TDP or a system power to estimate them).",
                                 {"items": ", ".join(missing)}))
        est.power_w = None
        return None
    powers = [sum(group_power(g, band.pick(c))[0] for g in groups) * site.pue for c in CASES]
    est.power_w = Range(min(powers), powers[1], max(powers))
    est.assumptions.append(
        f"Power: devices draw idle ({C.IDLE_FRACTION:.0%} of TDP) plus {band.likely:.0%} ({band.optimistic:.0%}–"
        f"{band.pessimistic:.0%}) of the rest while {'training' if phase == 'train' else 'decoding'}; hosts add a share "
        f"of the accelerators' TDP, or a system's rated power is used (it draws {C.SYSTEM_IDLE_SHARE:.0%} of it idle "
        f"and its rating at full load); the facility adds PUE {site.pue:g}.")
    rated = [g for g in groups if g.system_power_w]
    if rated:  # a catalogued system's rating caps its draw; only PUE takes the total above it
        est.assumptions.append(
            "Rated system power caps the draw: " + "; ".join(
                f"{g.label or g.device.name} at most {g.system_power_w / 1000:,.3g} kW each"
                + (f" ({g.nodes:,} of them)" if g.nodes > 1 else "") for g in rated)
            + (f". The figures with PUE add the facility's cooling and power delivery ({site.pue:g}×) on top, so they "
               "can exceed the rating." if site.pue > 1 else "."))
    if est.feasible and est.time_s is not None:
        energy = combine(est.power_w, est.time_s).scaled(1 / 3.6e6)
        est.energy_kwh = energy
        est.co2_kg = energy.scaled(site.grid_gco2e_per_kwh / 1000.0)
        est.assumptions.append(f"Grid {site.region_name or site.region}: {site.grid_gco2e_per_kwh:g} gCO2e/kWh; "
                               f"electricity ${site.electricity_usd_per_kwh:g}/kWh. Energy and CO2 ranges combine the "
                               "power and time ranges as independent uncertainties.")
    idle_total = sum(group_power(g, 0.0)[1] for g in groups) * site.pue
    util = inp.finance.utilization
    est.energy_kwh_per_year = (powers[1] * util + idle_total * (1 - util)) * C.HOURS_PER_YEAR / 1000.0
    est.co2_kg_per_year = est.energy_kwh_per_year * site.grid_gco2e_per_kwh / 1000.0
    return powers
