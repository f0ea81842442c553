"""Embodied carbon: the CO2e of making the owned hardware (product carbon footprints and life-cycle
assessments in the catalogue), spread over its lifetime and the share of it a run uses, as the
GHG Protocol's ICT guidance allocates it. A run that takes h hours on hardware used a share u of
the year over L years carries h / (L · 8,760 · u) of it; a year carries 1 / L. Rented hardware's
embodied carbon is the provider's: it is not counted, and the estimate says so. Hardware without a
figure stays unknown, never zero."""

from __future__ import annotations

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.types import Estimate, EstimateInput, Finding, NodeGroup


def apply_embodied(inp: EstimateInput, groups: tuple[NodeGroup, ...], est: Estimate) -> None:
    fin = inp.finance
    if not fin.embodied:
        return
    owned = [g for g in groups if g.cloud is None]
    if not owned:
        return
    missing = sorted({g.label or g.device.name for g in owned if g.embodied_kg_per_node is None})
    if missing:
        est.notes.append(Finding("no_embodied", f"No embodied-carbon figure in the catalogue for {', '.join(missing)}: "
                                 "the CO2 of making the hardware is not counted.", {"items": ", ".join(missing)}))
        return
    total = sum(g.embodied_kg_per_node * g.nodes for g in owned)
    life_hours = fin.lifetime_years * C.HOURS_PER_YEAR * fin.utilization
    est.embodied_kg_per_year = total / fin.lifetime_years
    if est.time_s is not None and life_hours > 0:
        est.embodied_kg_per_run = est.time_s.scaled(total / (life_hours * 3600.0))
    bases = "; ".join(dict.fromkeys(g.embodied_basis for g in owned if g.embodied_basis))
    est.assumptions.append(
        f"Embodied carbon: {total:,.0f} kg CO2e to make the owned hardware ({bases}), spread over "
        f"{fin.lifetime_years:g} years of use at {fin.utilization:.0%}: {est.embodied_kg_per_year:,.0f} kg a year"
        + (f", {est.embodied_kg_per_run.likely:,.3g} kg per run" if est.embodied_kg_per_run else "") + ".")
    if any(g.cloud is not None for g in groups):
        est.notes.append(Finding("embodied_rented", "The embodied carbon of rented hardware is the provider's and is "
                                 "not counted.", {}))
