"""Cost: rented hours × price, owned capex amortised over a lifetime plus electricity and
maintenance, and break-even against renting (in runs and months at a stated utilisation), each as
a low–likely–high range resting on the time and energy ranges."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate import tco
from gpudesk.core.estimate.types import Cost, Estimate, EstimateInput, Finance, Finding, NodeGroup, Range


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


# "reserved" is what scenarios saved before the 1- and 3-year terms were told apart called a 1-year term
PRICING_ALIASES = {"reserved": "reserved_1y"}
PRICING_WORDS = {"on_demand": "on demand", "spot": "spot", "reserved_1y": "1-year committed",
                 "reserved_3y": "3-year committed"}


def hourly(g: NodeGroup, pricing: str) -> float:
    """The group's price per instance-hour under `pricing`; on demand where the provider publishes
    no such price (`has_rate` tells the caller)."""
    if g.usd_per_hour_override is not None:
        return g.usd_per_hour_override
    found = g.cloud.rate(PRICING_ALIASES.get(pricing, pricing))
    return found if found else g.cloud.usd_per_hour


def has_rate(g: NodeGroup, pricing: str) -> bool:
    return g.usd_per_hour_override is not None or bool(g.cloud.rate(PRICING_ALIASES.get(pricing, pricing)))


def rates(groups) -> dict[str, float]:
    """The rented groups' price per hour under every pricing model all of them publish."""
    out = {}
    for pricing in PRICING_WORDS:
        if groups and all(has_rate(g, pricing) for g in groups):
            out[pricing] = sum(hourly(g, pricing) * g.nodes for g in groups)
    return out


@dataclass
class Rent:
    per_run: Range | None = None
    hours: Range | None = None
    label: str = ""
    rates: dict[str, float] | None = None  # the rented cluster's price per hour by pricing model


_RENT_CACHE: dict[tuple, tuple] = {}


def _rent_estimate(inp: EstimateInput, estimate_fn: Callable[[EstimateInput], Estimate]):
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
                        Finance(None, fin.lifetime_years, fin.utilization, fin.maintenance_fraction_per_year,
                                fin.pricing), inp.calibrations)
    result = estimate_fn(sub)
    if len(_RENT_CACHE) > 64:
        _RENT_CACHE.clear()
    _RENT_CACHE[key] = (group, result)  # the group is kept alive, so its id stays its own
    return group, result


def _rent(inp: EstimateInput, est: Estimate, owned, rented, estimate_fn) -> Rent:
    fin = inp.finance
    t = est.time_s
    if t is None:
        return Rent()
    if rented:
        rate = sum(hourly(g, fin.pricing) * g.nodes for g in rented)
        label = " + ".join(f"{g.nodes} × {g.cloud.provider} {g.cloud.instance_type}" for g in rented)
        _note_missing_rate(rented, fin.pricing, est)
        return Rent(t.scaled(rate / 3600.0), t.scaled(1 / 3600.0), label, rates(rented))
    if fin.rent is None or not owned:
        return Rent()
    found = _rent_estimate(inp, estimate_fn)
    if found is None:
        return Rent()
    group, result = found
    if not (result.feasible and result.time_s is not None):
        why = "; ".join(result.reason_texts()) or "no time estimate"
        est.notes.append(Finding("rent_not_comparable", f"Renting {group.cloud.instance_type} is not a comparison: "
                                 f"{why}.", {}))
        return Rent()
    rate = hourly(group, fin.pricing) * group.nodes
    label = f"{group.nodes} × {group.cloud.provider} {group.cloud.instance_type}"
    _note_missing_rate([group], fin.pricing, est)
    est.assumptions.append(f"Renting: {label} at ${rate:,.2f}/h ({_words(fin.pricing)}) would take "
                           f"{result.time_s.likely / 3600:,.3g} h per run on its own hardware.")
    return Rent(result.time_s.scaled(rate / 3600.0), result.time_s.scaled(1 / 3600.0), label, rates([group]))


def _words(pricing: str) -> str:
    return PRICING_WORDS.get(PRICING_ALIASES.get(pricing, pricing), pricing.replace("_", " "))


def _note_missing_rate(groups, pricing: str, est: Estimate) -> None:
    missing = sorted({g.cloud.instance_type for g in groups if not has_rate(g, pricing)})
    if missing:
        est.notes.append(Finding("no_rate", f"No {_words(pricing)} price published for {', '.join(missing)}: its "
                                 "on-demand price is used.", {"pricing": pricing}))


def _capex(owned, est: Estimate, factors) -> tco.Capex | None:
    if not owned:
        return None
    if all(g.capex_usd_per_node is not None for g in owned):
        return tco.capex(owned, factors)
    unpriced = sorted({g.label or g.device.name for g in owned if g.capex_usd_per_node is None})
    est.notes.append(Finding("no_price", f"No price in the catalogue for {', '.join(unpriced)}: add a quote to get "
                             "capex and break-even.", {"items": ", ".join(unpriced)}))
    return None


def _break_even_range(capex: float, rent: Range, marginal: Range, hours: Range, util: float):
    """Likely break-even, and its range from the cheapest and dearest rented run."""
    likely = break_even(capex, rent.likely, marginal.likely, hours.likely, util)
    if likely[0] is None:
        return likely, None, None
    early = break_even(capex, rent.high, marginal.low, hours.high, util)
    late = break_even(capex, rent.low, marginal.high, hours.low, util)
    runs = Range(early[0], likely[0], late[0] if late[0] is not None else math.inf)
    months = Range(early[1], likely[1], late[1] if late[1] is not None else math.inf) if likely[1] is not None else None
    return likely, runs, months


def cost(inp: EstimateInput, groups: tuple[NodeGroup, ...], est: Estimate,
         estimate_fn: Callable[[EstimateInput], Estimate]) -> Cost:
    fin, site = inp.finance, inp.site
    owned = [g for g in groups if g.cloud is None]
    rented = [g for g in groups if g.cloud is not None]
    electricity = est.energy_kwh.scaled(site.electricity_usd_per_kwh) if est.energy_kwh is not None else None
    parts = _capex(owned, est, fin.tco)
    capex = parts.total if parts is not None else None
    rent = _rent(inp, est, owned, rented, estimate_fn)
    out = Cost(rent.per_run, capex, None, None, electricity or Range.exact(0.0), None, None, rent.label, rent.hours)
    out.rent_rates = dict(rent.rates or {})
    if parts is not None:
        out.capex_parts, out.capex_notes = parts.parts(), list(parts.notes)
    t = est.time_s
    if t is not None and owned and electricity is not None:
        _owned_costs(out, inp, est, capex, rent, electricity, t)
    elif t is not None and rented and rent.per_run is not None:
        hours_likely = t.likely / 3600.0
        out.rent_usd_per_year = rent.per_run.likely * fin.utilization * C.HOURS_PER_YEAR / hours_likely if hours_likely else None
    if owned and capex is not None:
        est.assumptions.append(
            f"Owning: ${capex:,.0f} capex over {fin.lifetime_years:g} years at {fin.utilization:.0%} utilisation"
            + (f", maintenance {fin.maintenance_fraction_per_year:.0%} of capex a year" if fin.maintenance_fraction_per_year else "")
            + ".")
        est.assumptions.extend(parts.notes)
    return out


def _owned_costs(out: Cost, inp: EstimateInput, est: Estimate, capex: float | None, rent: Rent, electricity: Range,
                 t: Range) -> None:
    """Cost per run, per year and over the years of use of owned hardware, and its break-even."""
    fin, site = inp.finance, inp.site
    hours = t.scaled(1 / 3600.0)
    runs_per_year = C.HOURS_PER_YEAR * fin.utilization / hours.likely if hours.likely > 0 else math.inf
    maint = (capex or 0.0) * fin.maintenance_fraction_per_year / runs_per_year if runs_per_year else 0.0
    out.owned_marginal_usd_per_run = Range(electricity.low + maint, electricity.likely + maint, electricity.high + maint)
    if capex is None:
        return
    if runs_per_year > 0:  # hardware never used (utilisation 0) has no cost per run, only per year
        amortised = capex / (runs_per_year * fin.lifetime_years) if runs_per_year != math.inf else 0.0
        m = out.owned_marginal_usd_per_run
        out.owned_usd_per_run = Range(m.low + amortised * hours.low / hours.likely, m.likely + amortised,
                                      m.high + amortised * hours.high / hours.likely)
    running = capex * fin.maintenance_fraction_per_year + (est.energy_kwh_per_year or 0.0) * site.electricity_usd_per_kwh
    out.owned_usd_per_year = capex / fin.lifetime_years + running
    out.total_usd_over_life = capex + running * fin.lifetime_years
    if rent.per_run is not None:
        _set_break_even(out, capex, rent, hours, fin, runs_per_year, est)


def _set_break_even(out: Cost, capex: float, rent: Rent, hours: Range, fin: Finance, runs_per_year: float,
                    est: Estimate) -> None:
    likely, runs, months = _break_even_range(capex, rent.per_run, out.owned_marginal_usd_per_run, hours,
                                             fin.utilization)
    out.break_even_runs, out.break_even_months = likely
    out.break_even_runs_range, out.break_even_months_range = runs, months
    if likely[0] is not None:
        out.rent_usd_per_year = rent.per_run.likely * runs_per_year
    else:
        est.notes.append(Finding("rent_cheaper", "Renting costs less per run than running the owned hardware: buying "
                                 "never breaks even.", {}))
    rent_hours = rent.hours.likely if rent.hours is not None else None
    for pricing, rate in (rent.rates or {}).items():
        if rent_hours is not None:
            out.break_even_by_pricing[pricing] = break_even(capex, rate * rent_hours, out.owned_marginal_usd_per_run.likely,
                                                            hours.likely, fin.utilization)


def usd_per_hour(inp: EstimateInput, groups: tuple[NodeGroup, ...], est: Estimate) -> float | None:
    """What the cluster costs an hour of use: rented nodes at their price; owned nodes' capex spread
    over the hours they run in their lifetime (at the stated utilisation) with maintenance, plus the
    electricity of the likely power. None when an owned node has no price."""
    fin, site = inp.finance, inp.site
    total = sum(hourly(g, fin.pricing) * g.nodes for g in groups if g.cloud is not None)
    if any(g.cloud is None for g in groups):
        capex = est.cost.capex_usd if est.cost is not None else None
        if capex is None or fin.utilization <= 0:
            return None
        per_year = capex / fin.lifetime_years + capex * fin.maintenance_fraction_per_year
        total += per_year / (C.HOURS_PER_YEAR * fin.utilization)
        if est.power_w is not None:
            total += est.power_w.likely / 1000.0 * site.electricity_usd_per_kwh
    return total
