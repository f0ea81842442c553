"""From a scenario and the catalogue to the engine's inputs: ids become devices, links, prices
and grid figures; every default the resolver supplies is said in the estimate's assumptions."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpudesk.core.catalogue.convert import cloud_from_row, device_from_row, link_from_row
from gpudesk.core.catalogue.fields import CLOUD_PRICINGS, PRICE_KIND_WORDS
from gpudesk.core.estimate.engine import estimate
from gpudesk.core.estimate.types import (
    Calibration,
    Estimate,
    EstimateInput,
    Finance,
    NodeGroup,
    Site,
    Workload,
)
from gpudesk.core.prices import STALE_MONTHS, is_stale, resolve_tco
from gpudesk.core.scenario import ClusterEntry, Option, Scenario
from gpudesk.core.servers import limits as server_limits
from gpudesk.core.workload import MODEL_FIELDS, model_fields, normalise_workload  # noqa: F401 (names kept here)
from gpudesk.core.workload import suggest as _suggest

DEFAULT_ELECTRICITY_USD_PER_KWH = 0.15
# Servers of this many data-centre accelerators are HGX/DGX-class: their reference designs carry one
# scale-out NIC per GPU (DGX H100/H200/B200 user guides: eight single-port ConnectX-7 for the compute
# fabric; data/systems.toml's nic_count), so a multi-node cluster of them without a NIC count gets one per GPU.
HGX_NODE_SIZE = 8
WORKLOAD_KEYS = set(Workload.__dataclass_fields__)


class ResolveError(ValueError):
    """A scenario that names something the catalogue does not have; the message names the field."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass
class Resolved:
    inputs: EstimateInput
    assumptions: list[str] = field(default_factory=list)
    label: str = ""


def resolve_workload(spec: dict, catalogue, problems: list[str] | None = None,
                     notes: list[str] | None = None) -> Workload:
    """The engine's workload: the scenario's after the shared workload rules (the preset and
    catalogue model filled in, fields the kind does not use dropped, defaults set)."""
    problems = problems if problems is not None else []
    normalised = normalise_workload(spec, catalogue)
    problems.extend(normalised.problems)
    if notes is not None:  # what the rules changed beyond filling in, said with the estimate
        notes.extend(n.text + "." for n in normalised.notes if n.rule not in ("preset", "model", "default"))
    merged = dict(normalised.workload)
    if "params" not in merged:
        problems.append("workload.params: missing")
        merged["params"] = 1e9
    values = {k: v for k, v in merged.items() if k in WORKLOAD_KEYS}
    return Workload(**values)


def _device_row(catalogue, item: str, where: str, problems: list[str]):
    found = catalogue.get("accelerators", item)
    if found is not None:
        return found, None
    system = catalogue.get("systems", item)
    if system is not None:
        acc = catalogue.get("accelerators", system["accelerator"])
        return acc, system
    choices = [r["id"] for r in catalogue.items("accelerators")] + [r["id"] for r in catalogue.items("systems")]
    problems.append(f"{where}.item: '{item}' is not an accelerator or system in the catalogue{_suggest(item, choices)}")
    return None, None


def _cloud_row(catalogue, cloud: str, where: str, problems: list[str]):
    row = catalogue.get("cloud", cloud)
    if row is None:
        problems.append(f"{where}.cloud: '{cloud}' is not a cloud offering in the catalogue"
                        f"{_suggest(cloud, [r['id'] for r in catalogue.items('cloud')])}")
    return row


def missing_entries(scenario, catalogue) -> list[str]:
    """The scenario's configurations whose accelerator, system or cloud offering the catalogue does not
    hold, each named by its place ("compare[1].cluster[0].item: ..."), worded as estimating would
    refuse them. An editor opening the scenario refuses it rather than show something else in their place."""
    problems: list[str] = []
    for k, option in enumerate(scenario.options()):
        base = f"compare[{k}].cluster" if scenario.compare else "cluster"
        for i, entry in enumerate(option.cluster):
            where = f"{base}[{i}]"
            if entry.cloud:
                _cloud_row(catalogue, entry.cloud, where, problems)
            elif entry.item:
                _device_row(catalogue, entry.item, where, problems)
    return problems


def _link(catalogue, link_id: str | None, where: str, problems: list[str]):
    if not link_id:
        return None
    row = catalogue.get("interconnects", link_id)
    if row is None:
        problems.append(f"{where}: '{link_id}' is not an interconnect in the catalogue"
                        f"{_suggest(link_id, [r['id'] for r in catalogue.items('interconnects')])}")
        return None
    return link_from_row(row)


def _default_intra(acc: dict, system: dict | None, catalogue=None) -> str | None:
    """The link between a node's devices when the scenario names none: the system's, the SXM/OAM
    device's own fabric, else its PCIe generation (the oldest catalogued one for older devices)."""
    if system and system.get("intra_link"):
        return system["intra_link"]
    form = (acc.get("form_factor") or "").lower()
    if acc.get("intra_link") and not form.startswith("pcie"):
        return acc["intra_link"]
    if acc.get("pcie_gen"):
        link = f"pcie{acc['pcie_gen']}"
        if catalogue is None or catalogue.get("interconnects", link):
            return link
        known = sorted(r["id"] for r in catalogue.items("interconnects") if r.get("family") == "pcie")
        return known[0] if known else None
    return acc.get("intra_link") or None


PRICING_HISTORY = {"on_demand": "on_demand", "spot": "spot", "reserved": "reserved_1y", "reserved_1y": "reserved_1y",
                   "reserved_3y": "reserved_3y"}


def _offer_rates(catalogue, row: dict, as_of: str | None) -> tuple[tuple[str, float], ...]:
    """The newest price known on `as_of` of every pricing model the provider publishes for an offering."""
    out = []
    for pricing in CLOUD_PRICINGS:
        found = catalogue.cloud_price(row["id"], pricing, as_of)
        if found is None and pricing != "on_demand" and row.get("usd_per_hour_reserved") and \
                row.get("reserved_term") == {"reserved_1y": "1y", "reserved_3y": "3y"}.get(pricing):
            found = {"usd_per_hour": row["usd_per_hour_reserved"]}
        if found is not None and found.get("usd_per_hour"):
            out.append((pricing, float(found["usd_per_hour"])))
    return tuple(out)


def _cloud_rate(catalogue, row: dict, entry: ClusterEntry, pricing: str, as_of: str | None,
                notes: list[str]) -> float | None:
    """The hourly price to use: the scenario's, else as of the replay date from the price history."""
    if entry.usd_per_hour is not None or not as_of:
        return entry.usd_per_hour
    found = catalogue.cloud_price(row["id"], PRICING_HISTORY.get(pricing, "on_demand"), as_of)
    if found is None and pricing != "on_demand":
        found = catalogue.cloud_price(row["id"], "on_demand", as_of)
    if found is None:
        notes.append(f"{row.get('instance_type', row['id'])}: no price known on {as_of}; today's catalogue price is used.")
        return None
    if found.get("date") != row.get("date") or found["usd_per_hour"] != row.get("usd_per_hour"):
        notes.append(f"{row.get('instance_type', row['id'])}: ${found['usd_per_hour']:,.2f}/h as of {as_of} "
                     f"(price of {found.get('date') or 'undated'}).")
    return float(found["usd_per_hour"])


def _embodied(catalogue, acc: dict, system: dict | None, per_node: int) -> tuple[float | None, str]:
    """Embodied CO2e of one node and what it covers: the system's own figure, else the GPU baseboard
    figure of a system with the same accelerators (the rest of the server then is not counted),
    else the accelerators' own figure times their count."""
    def text(row: dict, what: str) -> str:
        boundary = row.get("boundary", "").replace("_", " ")
        return f"{what}: {row['kg_co2e']:,.0f} kg, {boundary}, {row.get('date') or 'undated'}"

    if system is not None:
        row = catalogue.embodied(system["id"])
        if row is not None:
            covers = "GPU baseboard only" if row.get("scope") == "baseboard" else "the whole system"
            return float(row["kg_co2e"]), text(row, f"{system['name']} ({covers})")
        for other in catalogue.items("systems"):
            if other["id"] == system["id"] or other.get("accelerator") != system.get("accelerator") \
                    or other.get("accelerator_count") != system.get("accelerator_count"):
                continue
            row = catalogue.embodied(other["id"])
            if row is not None and row.get("scope") == "baseboard":
                return float(row["kg_co2e"]), text(row, f"{other['name']} baseboard's figure for {system['name']} "
                                                        "(GPUs and board only; CPUs, memory, chassis not counted)")
    row = catalogue.embodied(acc["id"])
    if row is not None and row.get("scope") == "device":
        return float(row["kg_co2e"]) * per_node, text(row, f"{per_node} × {acc['name']} (the accelerators only)")
    return None, ""


def _nic_count(entry: ClusterEntry, acc: dict, system: dict | None, per_node: int, notes: list[str]) -> int:
    """NICs per node: the scenario's, else the system's catalogue entry, else one per GPU for a
    multi-node cluster of HGX-class data-centre nodes (said in the notes), else one."""
    if entry.nic_count is not None:
        return entry.nic_count
    if system:
        return system.get("nic_count") or 1
    if entry.nodes > 1 and per_node >= HGX_NODE_SIZE and acc.get("device_class") == "datacenter":
        notes.append(f"{entry.label or entry.item}: no NIC count named; one NIC per GPU assumed, as HGX/DGX reference "
                     f"designs and large training clusters are built ({per_node} per node).")
        return per_node
    return 1


def _owned_price(entry: ClusterEntry, catalogue, acc: dict, system: dict | None, per_node: int, as_of: str | None,
                 notes: list[str]) -> tuple[float | None, bool | None]:
    """One node's purchase price, and whether it buys a whole server (a system's price) or the
    accelerators alone; the scenario's own figure is taken as it is (None)."""
    capex = entry.capex_usd_per_node
    includes_host = None
    if capex is None:
        price = catalogue.latest_price(system["id"] if system else acc["id"], as_of=as_of)
        if price is None and as_of and catalogue.latest_price(system["id"] if system else acc["id"]) is not None:
            notes.append(f"{entry.label or (system or acc)['name']}: no price known on {as_of}.")
        if price is not None:
            capex = price["usd"] * (1 if system else per_node)
            includes_host = bool(system)
            if not system:
                kind = PRICE_KIND_WORDS.get(price["kind"], price["kind"])
                notes.append(f"{acc['name']}: price is for the accelerators only ({kind} ${price['usd']:,.0f} "
                             f"each, {price.get('date') or 'undated'}); a host per node is counted apart where the "
                             "catalogue prices one.")
            if is_stale(price.get("date"), as_of):
                notes.append(f"{(system or acc)['name']}: the price used is from {price.get('date') or 'an unknown date'}, "
                             f"more than {STALE_MONTHS} months old: check it before acting on it.")
    return capex, includes_host


def resolve_entry(entry: ClusterEntry, catalogue, where: str, problems: list[str], notes: list[str],
                  as_of: str | None = None, pricing: str = "on_demand") -> NodeGroup | None:
    if entry.cloud:
        row = _cloud_row(catalogue, entry.cloud, where, problems)
        if row is None:
            return None
        acc = catalogue.get("accelerators", row["accelerator"])
        if acc is None:
            problems.append(f"{where}.cloud: its accelerator '{row['accelerator']}' is missing from the catalogue")
            return None
        offer = replace(cloud_from_row(row), rates=_offer_rates(catalogue, row, as_of))
        intra = _link(catalogue, entry.intra or row.get("intra_link") or _default_intra(acc, None, catalogue), f"{where}.intra", problems)
        inter = _link(catalogue, entry.inter or row.get("inter_link"), f"{where}.inter", problems)
        if entry.instances > 1 and inter is None:
            inter = _link(catalogue, "eth-100g", f"{where}.inter", problems)
            notes.append(f"{offer.instance_type}: the provider names no network between instances; 100 Gb Ethernet assumed.")
        return NodeGroup(device=device_from_row(acc, entry.overrides), per_node=offer.devices_per_instance,
                         nodes=entry.instances, intra=intra, inter=inter, nic_count=entry.nic_count or 1,
                         label=entry.label or f"{offer.provider} {offer.instance_type}", cloud=offer,
                         usd_per_hour_override=_cloud_rate(catalogue, row, entry, pricing, as_of, notes),
                         node_overhead_w=entry.node_overhead_w, system_power_w=entry.system_power_w)
    acc, system = _device_row(catalogue, entry.item, where, problems)
    if acc is None:
        if system is not None:
            problems.append(f"{where}.item: system '{entry.item}' names accelerator '{system['accelerator']}', "
                            "which is missing from the catalogue")
        return None
    per_node = entry.per_node or (system.get("accelerator_count") if system else 1) or 1
    intra_id = entry.intra or _default_intra(acc, system, catalogue)
    inter_id = entry.inter or (system.get("nic") if system else None)
    if entry.nodes > 1 and not inter_id:
        inter_id = "eth-100g" if acc.get("device_class") == "datacenter" else "eth-1g"
        notes.append(f"{entry.label or entry.item}: no network named between nodes; {inter_id} assumed.")
    intra = _link(catalogue, intra_id, f"{where}.intra", problems) if per_node > 1 else None
    # a network named for a single machine still joins it to the cluster's other groups (a drawn link)
    inter = _link(catalogue, inter_id, f"{where}.inter", problems) if entry.nodes > 1 or entry.inter else None
    nic_count = _nic_count(entry, acc, system, per_node, notes)
    capex, includes_host = _owned_price(entry, catalogue, acc, system, per_node, as_of, notes)
    system_power = entry.system_power_w or (system.get("system_power_w") if system else None)
    label = entry.label or (system["name"] if system else f"{per_node} × {acc['name']}")
    embodied, basis = _embodied(catalogue, acc, system, per_node)
    return NodeGroup(device=device_from_row(acc, entry.overrides), per_node=per_node, nodes=entry.nodes, intra=intra,
                     inter=inter, nic_count=max(1, nic_count), label=label, system_power_w=system_power,
                     node_overhead_w=entry.node_overhead_w, capex_usd_per_node=capex, capex_includes_host=includes_host,
                     embodied_kg_per_node=embodied, embodied_basis=basis)


def resolve_site(spec: dict, catalogue, problems: list[str], notes: list[str], settings=None) -> Site:
    region_id = spec.get("region") or (settings.region if settings else "us-avg")
    region = catalogue.get("regions", region_id)
    if region is None:
        problems.append(f"site.region: '{region_id}' is not a grid region in the catalogue"
                        f"{_suggest(region_id, [r['id'] for r in catalogue.items('regions')])}")
        region = {}
    intensity = spec.get("grid_gco2e_per_kwh", region.get("grid_gco2e_per_kwh"))
    if intensity is None:
        intensity = 0.0
        notes.append(f"No grid intensity for {region_id}: CO2 is not estimated.")
    price = spec.get("electricity_usd_per_kwh")
    if price is None and settings is not None and settings.electricity_usd_per_kwh:
        price = settings.electricity_usd_per_kwh
    if price is None:
        price = region.get("electricity_usd_per_kwh")
    if price is None:
        price = DEFAULT_ELECTRICITY_USD_PER_KWH
        notes.append(f"No electricity price for {region.get('name', region_id)}: ${price}/kWh assumed.")
    pue = spec.get("pue") if spec.get("pue") is not None else (settings.pue if settings else 1.2)
    return Site(region=region_id, region_name=region.get("name", region_id), grid_gco2e_per_kwh=float(intensity),
                pue=float(pue), electricity_usd_per_kwh=float(price))


def resolve_finance(spec: dict, catalogue, where: str, problems: list[str], notes: list[str], settings=None,
                    owned_devices: int = 0) -> Finance:
    """Lifetime, utilisation and the rented alternative. Without `rent_instances`, the rented
    alternative has as many accelerators as the cluster it is compared with (`owned_devices`)."""
    rent = None
    if spec.get("rent"):
        row = catalogue.get("cloud", spec["rent"])
        if row is None:
            problems.append(f"{where}.rent: '{spec['rent']}' is not a cloud offering in the catalogue"
                            f"{_suggest(spec['rent'], [r['id'] for r in catalogue.items('cloud')])}")
        else:
            instances = spec.get("rent_instances")
            if instances is None:
                per_instance = row.get("accelerator_count") or 1
                instances = max(1, -(-owned_devices // per_instance))
                if instances > 1:
                    notes.append(f"Renting instead: {instances:,} × {row.get('instance_type', spec['rent'])}, as many "
                                 "accelerators as the cluster (set finance.rent_instances to change).")
            rent = resolve_entry(ClusterEntry(cloud=spec["rent"], instances=instances), catalogue,
                                 f"{where}.rent", problems, notes, spec.get("as_of"), spec.get("pricing", "on_demand"))
    return Finance(
        rent=rent,
        lifetime_years=float(spec.get("lifetime_years", settings.lifetime_years if settings else 4.0)),
        utilization=float(spec.get("utilization", settings.utilization if settings else 0.6)),
        maintenance_fraction_per_year=float(spec.get("maintenance_fraction_per_year", 0.0)),
        pricing=PRICING_HISTORY.get(spec.get("pricing", "on_demand"), "on_demand"),
        embodied=bool(spec.get("embodied", True)),
        tco=resolve_tco(spec, catalogue, settings),
    )


def resolve_option(scenario: Scenario, option: Option, catalogue, where: str = "cluster", settings=None,
                   calibrations: tuple[Calibration, ...] = ()) -> Resolved:
    problems: list[str] = []
    notes: list[str] = []
    workload = resolve_workload(scenario.workload, catalogue, problems, notes)
    groups = []
    money = {**scenario.finance, **option.finance}
    as_of = money.get("as_of")
    if as_of:
        notes.append(f"Prices as of {as_of}: the newest quote, list, street and cloud price known on that date.")
    for i, entry in enumerate(option.cluster):
        group = resolve_entry(entry, catalogue, f"{where}[{i}]", problems, notes, as_of, money.get("pricing", "on_demand"))
        if group is not None:
            groups.append(group)
    if not option.cluster:
        problems.append(f"{where}: empty (name at least one accelerator, system or cloud offering)")
    site = resolve_site(scenario.site, catalogue, problems, notes, settings)
    owned = sum(g.per_node * g.nodes for g in groups)
    finance = resolve_finance({**scenario.finance, **option.finance}, catalogue, "finance", problems, notes, settings,
                              owned_devices=owned)
    if problems:
        raise ResolveError(problems)
    workload = with_server_limits(workload, groups, notes)
    return Resolved(EstimateInput(workload, tuple(groups), site, finance, calibrations), notes, option.name)


def with_server_limits(workload: Workload, groups, notes: list[str] | None = None) -> Workload:
    """An inference workload with its server's documented limits on the cluster's smallest device
    (data/servers.toml): the sequence cap, the prefill chunk, the memory share and whether decoding replays
    CUDA graphs; on a server of block formats, a 4-bit float checkpoint runs as a 4-bit block format (said in
    `notes`)."""
    if workload.kind != "infer" or not groups:
        return workload
    device = min((g.device for g in groups), key=lambda d: d.memory_gb or 0.0)
    got = server_limits(workload.server or "tuned", device.memory_gb, device.name)
    precision = workload.precision
    if got["block_formats"] and precision == "fp4":
        precision = "q4"
        if notes is not None:
            notes.append(f"{workload.server}: FP4 weights (MXFP4) run as a 4-bit block format, unpacked into 8-bit "
                         "products, not on FP4 matrix units.")
    # a server that launches every kernel from the host (no CUDA graphs) decodes eagerly, unless the scenario says
    runtime = workload.runtime or ("" if got["graphs"] else "eager")
    return replace(workload, precision=precision, runtime=runtime, server_max_batch=got["max_batch"],
                   server_chunk_tokens=got["chunk_tokens"], server_memory_share=got["memory_share"],
                   server_memory_basis=got["memory_basis"], server_kv_reserve=got["kv_reserve"],
                   server_graphs_max_batch=got["graphs_max_batch"])


def estimate_option(scenario: Scenario, option: Option, catalogue, where: str = "cluster", settings=None,
                    calibrations=()) -> Estimate:
    resolved = resolve_option(scenario, option, catalogue, where, settings, calibrations)
    result = estimate(resolved.inputs)
    result.assumptions[:0] = resolved.assumptions
    return result


def estimate_scenario(scenario: Scenario, catalogue, settings=None, calibrations=()) -> Estimate:
    """The estimate of the scenario's cluster (or of its first configuration to compare)."""
    options = scenario.options()
    where = "cluster" if not scenario.compare else "compare[0].cluster"
    return estimate_option(scenario, options[0], catalogue, where, settings, calibrations)
