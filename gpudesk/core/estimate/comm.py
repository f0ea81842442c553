"""Time of the collectives a parallel plan runs, over a two-level topology: the fast domain (an
NVLink node, an NVL72 rack, a TPU slice) and the NICs between domains.

A collective over a group whose ranks sit `per_domain` to a domain across `domains` domains is
hierarchical, as NCCL runs it: a reduce-scatter inside the domain, the exchange of each device's
share across domains over the NICs, an all-gather inside the domain, with the two levels
pipelined so the slower sets the pace (Thakur et al. 2005, "Optimization of collective
communication operations in MPICH"; NCCL's tree and NVLS algorithms). Every device of a node
runs its own such collective at the same time (all tensor- and pipeline-parallel ranks exchange
gradients together), so a node's NICs carry the traffic of all its devices. A ring all-reduce
moves 2·(n−1)/n of the data per rank, a reduce-scatter or all-gather half of that (Patarasuk and
Yuan 2009); each message pays a latency per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpudesk.core.estimate.kernels import measured_all_reduce
from gpudesk.core.estimate.topology import Topology


@dataclass(frozen=True)
class Group:
    size: int
    per_domain: int  # ranks of the group inside one fast domain

    @property
    def domains(self) -> int:
        return max(1, -(-self.size // max(1, self.per_domain)))  # 15 ranks, 8 a domain: 2 domains, not 1


def place(size: int, stride: int, topo: Topology) -> Group:
    """A group of `size` ranks whose neighbours are `stride` ranks apart in the device order
    (Megatron's order: tensor, context, expert, data, then pipeline parallel outermost)."""
    if size <= 1:
        return Group(1, 1)
    inside = max(1, topo.domain // max(1, stride))
    return Group(size, max(1, min(size, inside)))


def _levels(volume_factor: float, bytes_per_rank: float, g: Group, topo: Topology) -> tuple[float, float]:
    """(inside-domain, across-domain) seconds of a hierarchical reduction of `bytes_per_rank`."""
    d_i, d_o = g.per_domain, g.domains
    t_in = volume_factor * (d_i - 1) / d_i * bytes_per_rank / (topo.ring_rate_gbs(d_i) * 1e9) if d_i > 1 else 0.0
    t_out = 0.0
    if d_o > 1:
        per_device = volume_factor * (d_o - 1) / d_o * bytes_per_rank / d_i
        t_out = topo.per_node * per_device / (topo.node_gbs * 1e9)
    return t_in, t_out


def _latency(steps_factor: float, g: Group, topo: Topology) -> float:
    t = steps_factor * (g.per_domain - 1) * topo.intra_latency_s
    if g.domains > 1:
        t += steps_factor * math.ceil(math.log2(g.domains)) * topo.inter_latency_s
    return t


def all_reduce(bytes_per_rank: float, g: Group, topo: Topology, messages: float = 1.0) -> float:
    """Seconds of an all-reduce; inside one domain from NCCL's all-reduce measured on this hardware
    where there is such a table for the group's size (`messages` calls of an equal share each)."""
    if g.size <= 1 or bytes_per_rank <= 0:
        return 0.0
    if g.domains == 1:
        measured = measured_all_reduce(topo.all_reduce_curves, g.size, bytes_per_rank / messages)
        if measured is not None:
            return messages * measured
    t_in, t_out = _levels(2.0, bytes_per_rank, g, topo)
    return max(t_in, t_out) + messages * _latency(2.0, g, topo)


def reduce_scatter(bytes_per_rank: float, g: Group, topo: Topology, messages: float = 1.0) -> float:
    """Also the time of an all-gather that leaves `bytes_per_rank` on every rank."""
    if g.size <= 1 or bytes_per_rank <= 0:
        return 0.0
    t_in, t_out = _levels(1.0, bytes_per_rank, g, topo)
    return max(t_in, t_out) + messages * _latency(1.0, g, topo)


all_gather = reduce_scatter


def all_to_all(bytes_per_rank: float, g: Group, topo: Topology) -> float:
    """Each rank sends `bytes_per_rank` spread evenly over the group (MoE token dispatch)."""
    if g.size <= 1 or bytes_per_rank <= 0:
        return 0.0
    inside = (g.per_domain - 1) / g.size * bytes_per_rank
    outside = (g.size - g.per_domain) / g.size * bytes_per_rank
    t_in = inside / (topo.ring_rate_gbs(g.per_domain) * 1e9)
    t_out = topo.per_node * outside / (topo.node_gbs * 1e9) if g.domains > 1 else 0.0
    return max(t_in, t_out) + topo.intra_latency_s + (topo.inter_latency_s if g.domains > 1 else 0.0)


def point_to_point(nbytes: float, crosses_domain: bool, topo: Topology) -> float:
    """One send between neighbouring pipeline stages (every device of a node sends at once)."""
    if nbytes <= 0:
        return 0.0
    if crosses_domain:
        return topo.per_node * nbytes / (topo.node_gbs * 1e9) + topo.inter_latency_s
    return nbytes / (topo.intra_gbs * 1e9) + topo.intra_latency_s


def exposed(comm_s: float, window_s: float, overlap: float) -> float:
    """What is left of `comm_s` after hiding up to `overlap` of it behind `window_s` of compute."""
    return max(comm_s - overlap * window_s, (1.0 - overlap) * comm_s, 0.0)
