"""What the engine needs to know of a cluster's shape: how many devices, how many share a fast
domain (an NVLink node or rack, a TPU slice), and how fast each device reaches the others inside
that domain and across the network (the NIC count and speed of each node, rail-optimised when a
node has a NIC per device)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.types import Device, Link, NodeGroup

# Link families whose domain spans the nodes of a group, not just one node: a TPU slice's chips reach each
# other over ICI whichever host they sit in. That holds where the nodes are hosts (a Cloud TPU host holds 4
# chips on v4 and v5p, 8 on v5e and v6e) or single rented chips; a node of more chips than a host holds is
# itself a slice, and slices talk over the data-centre network (multislice), so its domain ends at the node.
DOMAIN_WIDE = ("ici",)
DOMAIN_WIDE_HOST_MAX = 8


def joins_nodes(link: Link | None, per_node: int) -> bool:
    """Whether `link` joins nodes of `per_node` devices into one fast domain (see DOMAIN_WIDE)."""
    return link is not None and link.family in DOMAIN_WIDE and per_node <= DOMAIN_WIDE_HOST_MAX


@dataclass(frozen=True)
class Topology:
    devices: int
    per_node: int  # devices of one node (the smallest node when groups differ)
    nodes: int
    domain: int  # devices that reach each other over the fast link
    intra_gbs: float  # per device, one way, achievable
    intra_latency_s: float
    node_gbs: float  # per node, all NICs, one way, achievable
    inter_latency_s: float
    nic_count: int
    intra_name: str
    inter_name: str
    intra_assumed: bool
    inter_assumed: bool
    # all-reduces measured inside the fast domain on this hardware (kernels.AllReduceCurve); () = none
    all_reduce_curves: tuple = ()
    # per device, one way: what a ring over more than two devices of the domain reaches (below
    # intra_gbs where measured hosts put the limit in the host, as on PCIe); 0 = intra_gbs
    ring_gbs: float = 0.0
    ring_basis: str = ""

    def ring_rate_gbs(self, size: int) -> float:
        """One-way GB/s of a collective over `size` devices of one domain."""
        return self.ring_gbs if size > 2 and self.ring_gbs else self.intra_gbs

    @property
    def domains(self) -> int:
        return max(1, self.devices // self.domain)


# What a missing link is taken for: inside a node, PCIe; between nodes, the 1 Gb Ethernet every
# board and server has (the name topology_of gives it), run over TCP like any Ethernet under 40 Gb.
ASSUMED_INTRA_FAMILY = "pcie"
ASSUMED_INTER_FAMILY = "ethernet-slow"
ASSUMED_INTER_GBS = 0.125  # 1 Gb/s, one way


def link_family(link: Link | None, assumed: str = ASSUMED_INTRA_FAMILY) -> str:
    if link is None:
        return assumed
    if link.family == "ethernet" and link.unidirectional_gbs and link.unidirectional_gbs < C.SLOW_ETHERNET_GBS:
        return "ethernet-slow"
    return link.family


def link_rate_gbs(link: Link | None, fallback_gbs: float, assumed: str = ASSUMED_INTRA_FAMILY) -> float:
    family = link_family(link, assumed)
    raw = link.unidirectional_gbs if link is not None and link.unidirectional_gbs else fallback_gbs
    return raw * C.LINK_EFFICIENCY.get(family, C.LINK_EFFICIENCY["other"])


def link_latency_s(link: Link | None, assumed: str = ASSUMED_INTRA_FAMILY) -> float:
    family = link_family(link, assumed)
    explicit = link.latency_us if link is not None and link.latency_us and family != "ethernet-slow" else None
    return (explicit or C.LINK_LATENCY_US.get(family, 20.0)) * 1e-6


def _intra_rate(g: NodeGroup) -> float:
    device_link = (g.device.intra_link_gbs or 0) / 2 or C.PCIE_FALLBACK_GBS
    return link_rate_gbs(g.intra, device_link)


def _inter_rate(g: NodeGroup) -> float:
    """A node's network bandwidth, one way, over all its NICs."""
    return link_rate_gbs(g.inter, ASSUMED_INTER_GBS, ASSUMED_INTER_FAMILY) * max(1, g.nic_count)


def topology_of(groups: tuple[NodeGroup, ...]) -> Topology:
    devices = sum(g.devices for g in groups)
    per_node = min(g.per_node for g in groups)
    nodes = sum(g.nodes for g in groups)
    domain_wide = all(joins_nodes(g.intra, per_node) for g in groups)
    domain = devices if domain_wide else per_node
    node_gbs = min(_inter_rate(g) for g in groups)
    named_intra = [g.intra for g in groups if g.intra is not None]
    named_inter = [g.inter for g in groups if g.inter is not None]
    if nodes > 1 and len(named_inter) > 1:  # name the network that sets node_gbs: the slowest group's
        named_inter = [min((g for g in groups if g.inter is not None),
                           key=_inter_rate).inter]
    return Topology(
        devices=devices, per_node=per_node, nodes=nodes, domain=domain,
        intra_gbs=min(_intra_rate(g) for g in groups),
        intra_latency_s=max(link_latency_s(g.intra) for g in groups),
        node_gbs=node_gbs,
        inter_latency_s=max(link_latency_s(g.inter, ASSUMED_INTER_FAMILY) for g in groups) if nodes > 1 else 0.0,
        nic_count=min(max(1, g.nic_count) for g in groups),
        intra_name=named_intra[0].name if named_intra else ("PCIe (assumed)" if per_node > 1 else ""),
        inter_name=named_inter[0].name if named_inter else ("1 Gb Ethernet (assumed)" if nodes > 1 else ""),
        intra_assumed=not named_intra and per_node > 1,
        inter_assumed=not named_inter and nodes > 1,
        all_reduce_curves=_domain_curves(groups),
        ring_gbs=min((_ring_rate(g) for g in groups), default=0.0),
        ring_basis=next((g.intra.ring_basis for g in groups if g.intra is not None and g.intra.ring_share), ""),
    )


def _ring_rate(g: NodeGroup) -> float:
    """A ring of more than two of this group's devices, one way: the link's measured host share where
    it has one, else its usual achievable rate."""
    if g.intra is not None and g.intra.ring_share and g.intra.unidirectional_gbs:
        device_link = (g.device.intra_link_gbs or 0) / 2 or g.intra.unidirectional_gbs
        return min(g.intra.unidirectional_gbs, device_link) * g.intra.ring_share
    return _intra_rate(g)


def _domain_curves(groups: tuple[NodeGroup, ...]) -> tuple:
    """The measured all-reduce curves of the cluster's fast domains: its device's, measured over the
    family of link the cluster's nodes use (a table measured over NVLink says nothing of the same GPU
    joined by PCIe); none when the groups differ in device."""
    if len({g.device.id for g in groups}) != 1:
        return ()
    g = groups[0]
    family = link_family(g.intra)
    curves = tuple(c for c in g.device.all_reduce_curves if c.fabric == family)
    if g.intra is None or not g.intra.ring_share:
        return curves
    ring = _ring_rate(g)  # past a pair, the host's measured share sets the rate, not one host's table
    return tuple(replace(c, bus_gbs=ring) if c.gpus > 2 else c for c in curves)


def slowest_device(groups: tuple[NodeGroup, ...]) -> Device:
    """The device that sets the pace of a synchronous step (lowest 16-bit peak, then bandwidth)."""
    def pace(g: NodeGroup):
        d = g.device
        peak = d.peak_tflops.get("bf16") or d.peak_tflops.get("fp16") or d.peak_tflops.get("fp32") or 0.0
        return (peak, d.mem_bandwidth_gbs or 0.0)
    return min(groups, key=pace).device
