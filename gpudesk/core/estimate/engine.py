"""The estimation engine: one function from plain inputs to an explained estimate.

Training goes through the parallelism planner (planner.py) and the per-device roofline
(compute.py); inference through the serving model (serving.py). Every headline figure comes in a
pessimistic, a likely and an optimistic case, reported as a low / likely / high range; energy,
CO2 and cost rest on those ranges (power.py, cost.py).
"""

from __future__ import annotations

from dataclasses import replace

from gpudesk.core.estimate.cost import break_even, cost, usd_per_hour
from gpudesk.core.estimate.embodied import apply_embodied
from gpudesk.core.estimate.frontier import enrich
from gpudesk.core.estimate.inference import infer
from gpudesk.core.estimate.power import apply_power
from gpudesk.core.estimate.training import train
from gpudesk.core.estimate.types import Estimate, EstimateInput, NodeGroup


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
               g.capex_usd_per_node, g.cloud, g.usd_per_hour_override, g.embodied_kg_per_node, g.embodied_basis)
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
    result = infer(inp, groups) if inp.workload.kind == "infer" else train(inp, groups)
    apply_power(inp, groups, result)
    apply_embodied(inp, groups, result)
    result.cost = cost(inp, groups, result, estimate)
    if result.serving.get("curve"):
        enrich(result.serving["curve"], usd_per_hour(inp, groups, result),
               result.power_w.likely if result.power_w is not None else None)
    result.workload = inp.workload
    return result


__all__ = ["break_even", "estimate", "EstimateError", "merge_groups"]
