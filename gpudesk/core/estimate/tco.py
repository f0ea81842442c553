"""What owning a cluster costs beyond the accelerators: the hosts a bare accelerator price leaves
out, the scale-out network at the scale drawn (NICs, switches and optics of a non-blocking fat
tree), and the facility provisioned for its power. Each figure is a catalogue entry (`cost_factors`)
with its source, or the user's own from Preferences or the scenario; `Factor.basis` says which.

The network follows the usual fat-tree count (Al-Fares et al., "A scalable, commodity data center
network architecture", SIGCOMM 2008): with switches of radix R, one tier serves R endpoints, two
tiers R²/2 and three R³/4; a non-blocking tree of t ≥ 2 tiers needs (2t − 1)·E/R switches for E
endpoints, and each endpoint adds one link per tier (a cable with its transceivers at both ends)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpudesk.core.estimate.power import group_power
from gpudesk.core.estimate.types import NodeGroup

# Parts priced alone that need a server around them in a data centre: a desk card, board or kit
# brings its own computer (or is one), and its price is what the buyer pays.
HOSTED_CLASSES = frozenset({"datacenter"})
# The factors a cost of ownership uses, in the order the assumptions name them.
COMPONENTS = ("host_usd_per_node", "nic_usd", "switch_usd", "switch_ports", "link_usd", "facility_usd_per_kw")
COMPONENT_WORDS = {
    "host_usd_per_node": "host server per node (CPUs, memory, storage, chassis)",
    "nic_usd": "scale-out NIC",
    "switch_usd": "scale-out switch",
    "switch_ports": "ports per switch",
    "link_usd": "switch link (a cable with its two ends)",
    "facility_usd_per_kw": "facility capex per kW of IT power provisioned",
}


@dataclass(frozen=True)
class Factor:
    value: float
    basis: str = ""  # where it comes from: "<source title>, <date>" or "your Preferences" / "the scenario"
    ref: str = ""  # the catalogue's cost_factors row, when it comes from there


@dataclass(frozen=True)
class TcoFactors:
    """The figures a cost of ownership uses; a missing factor leaves its part out and says so."""

    factors: tuple[tuple[str, Factor], ...] = ()
    include_facility: bool = True

    def get(self, name: str) -> Factor | None:
        return dict(self.factors).get(name)


@dataclass
class Capex:
    """The capex of the owned groups by part, in USD; `notes` say what is counted and what is not."""

    hardware: float = 0.0
    hosts: float = 0.0
    network: float = 0.0
    facility: float = 0.0
    provisioned_kw: float = 0.0
    network_tiers: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return self.hardware + self.hosts + self.network + self.facility

    def parts(self) -> dict[str, float]:
        return {"hardware": self.hardware, "hosts": self.hosts, "network": self.network, "facility": self.facility}


# the factors each part of the capex rests on
PART_FACTORS = {"hosts": ("host_usd_per_node",), "network": ("nic_usd", "switch_usd", "switch_ports", "link_usd"),
                "facility": ("facility_usd_per_kw",)}


def fat_tree(endpoints: int, radix: int) -> tuple[int, int, int]:
    """(tiers, switches, links) of a non-blocking fat tree joining `endpoints` NIC ports with
    switches of `radix` ports. One node alone needs no scale-out network: (0, 0, 0)."""
    if endpoints <= 1 or radix < 2:
        return 0, 0, 0
    if endpoints <= radix:
        tiers, switches = 1, 1
    else:
        tiers = 2 if endpoints <= radix * radix // 2 else 3
        switches = math.ceil((2 * tiers - 1) * endpoints / radix)
    return tiers, switches, tiers * endpoints


def _hosts(owned: list[NodeGroup], f: TcoFactors, out: Capex) -> None:
    bare = [g for g in owned if g.capex_includes_host is False and g.device.device_class in HOSTED_CLASSES]
    if not bare:
        return
    host = f.get("host_usd_per_node")
    nodes = sum(g.nodes for g in bare)
    if host is None:
        out.notes.append(f"Hosts not counted: no host price in the catalogue for the {nodes:,} node(s) priced as "
                         "accelerators alone.")
        return
    out.hosts = host.value * nodes
    out.notes.append(f"Hosts: {nodes:,} × ${host.value:,.0f} ({host.basis}) for the accelerators priced alone.")


def _network(owned: list[NodeGroup], f: TcoFactors, out: Capex) -> None:
    nodes = sum(g.nodes for g in owned)
    if nodes <= 1:
        return
    desk = [g for g in owned if g.device.device_class not in HOSTED_CLASSES]
    if desk:
        out.notes.append("Network between desk, edge or workstation machines not counted: the catalogue's switch and "
                         "link prices are for a data centre's scale-out fabric.")
    owned = [g for g in owned if g.device.device_class in HOSTED_CLASSES]
    if sum(g.nodes for g in owned) <= 1:
        return
    endpoints = sum(g.nodes * max(1, g.nic_count) for g in owned if g.inter is not None)
    ports, switch, link = f.get("switch_ports"), f.get("switch_usd"), f.get("link_usd")
    missing = [COMPONENT_WORDS[n] for n, x in (("switch_ports", ports), ("switch_usd", switch),
                                               ("link_usd", link)) if x is None]
    if missing or not endpoints:
        out.notes.append("Scale-out network not counted: " + (f"no {', '.join(missing)} price in the catalogue."
                                                             if missing else "no network named between the nodes."))
        return
    tiers, switches, links = fat_tree(endpoints, int(ports.value))
    nic = f.get("nic_usd")
    bare_nics = sum(g.nodes * max(1, g.nic_count) for g in owned
                    if g.inter is not None and g.capex_includes_host is False)
    nic_cost = nic.value * bare_nics if nic is not None else 0.0
    out.network = switches * switch.value + links * link.value + nic_cost
    out.network_tiers = tiers
    devices = sum(g.devices for g in owned)
    out.notes.append(
        f"Scale-out network: {endpoints:,} NIC ports in a {tiers}-tier non-blocking fat tree of {int(ports.value)}-port "
        f"switches: {switches:,} switches at ${switch.value:,.0f} ({switch.basis}), {links:,} links at "
        f"${link.value:,.0f} ({link.basis})"
        + (f", {bare_nics:,} NICs at ${nic.value:,.0f} ({nic.basis})" if bare_nics and nic is not None else "")
        + (f"; ${out.network / devices:,.0f} per accelerator." if devices else "."))
    if bare_nics and nic is None:
        out.notes.append("NICs not counted: no NIC price in the catalogue.")


def _facility(owned: list[NodeGroup], f: TcoFactors, out: Capex) -> None:
    racked = [g for g in owned if g.device.device_class in HOSTED_CLASSES]
    if not racked or not f.include_facility:
        return
    kw = sum((group_power(g, 1.0)[0] or 0.0) for g in racked) / 1000.0
    out.provisioned_kw = kw
    per_kw = f.get("facility_usd_per_kw")
    if per_kw is None or not kw:
        out.notes.append("Facility not counted: " + ("no facility cost per kW in the catalogue." if per_kw is None
                                                     else "the accelerators' power is unknown."))
        return
    out.facility = kw * per_kw.value
    out.notes.append(f"Facility: {kw:,.1f} kW of IT power provisioned (the nodes at full load) at "
                     f"${per_kw.value:,.0f}/kW ({per_kw.basis}).")


def capex(owned: list[NodeGroup], f: TcoFactors | None) -> Capex | None:
    """The owned groups' capex by part; None when a group has no price (nothing to add to)."""
    if not owned or any(g.capex_usd_per_node is None for g in owned):
        return None
    out = Capex(hardware=sum(g.capex_usd_per_node * g.nodes for g in owned))
    if f is None:
        out.notes.append("Hosts, network and facility not counted (no cost factors given).")
        return out
    _hosts(owned, f, out)
    _network(owned, f, out)
    _facility(owned, f, out)
    return out
