"""Prices and cost of ownership (issue 29): the fat-tree count, capex by part, stale prices, cloud
commitments, the precedence of cost factors, refusals of bad prices, and the catalogue's coverage."""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import pytest

from gpudesk.core.compare import build_comparison
from gpudesk.core.estimate.tco import Factor, TcoFactors, capex, fat_tree
from gpudesk.core.estimate.types import Device, Link, NodeGroup
from gpudesk.core.prices import is_stale, resolve_tco
from gpudesk.core.scenario import parse_scenario
from gpudesk.core.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


def test_fat_tree_counts_switches_and_links_by_tier():
    assert fat_tree(1, 64) == (0, 0, 0)  # one node: no scale-out network
    assert fat_tree(32, 64) == (1, 1, 32)  # one switch, one link each
    # two tiers: 2E/R leaves + E/R spines, two links per endpoint
    assert fat_tree(1024, 64) == (2, 48, 2048)
    assert fat_tree(2048, 64) == (2, 96, 4096)  # the largest two-tier tree of 64-port switches
    # three tiers beyond R^2/2: 5E/R switches, three links per endpoint
    assert fat_tree(2049, 64) == (3, 161, 6147)


def _group(device_class="datacenter", nodes=4, includes_host=False, price=8 * 25_000.0):
    dev = Device("x", "X", device_class=device_class, tdp_w=700)
    ib = Link("ib", "IB", "infiniband", 50.0)
    return NodeGroup(dev, per_node=8, nodes=nodes, inter=ib, nic_count=8, capex_usd_per_node=price,
                     capex_includes_host=includes_host)


FACTORS = TcoFactors((("host_usd_per_node", Factor(30_000.0, "h")), ("switch_usd", Factor(50_000.0, "s")),
                      ("switch_ports", Factor(64, "p")), ("link_usd", Factor(1_000.0, "l")),
                      ("facility_usd_per_kw", Factor(10_000.0, "f"))))


def test_capex_counts_hosts_network_and_facility_for_bare_accelerators():
    got = capex([_group()], FACTORS)
    assert got.hardware == 4 * 200_000
    assert got.hosts == 4 * 30_000
    # 32 NIC ports: one 64-port switch and 32 links
    assert got.network == 50_000 + 32 * 1_000 and got.network_tiers == 1
    # provisioned power: 8 x 700 W plus the host share at full load, per node
    assert got.provisioned_kw > 4 * 5.6
    assert got.facility == pytest.approx(got.provisioned_kw * 10_000)
    assert got.total == got.hardware + got.hosts + got.network + got.facility


def test_a_system_price_has_its_host_and_desk_hardware_no_network_or_facility():
    system = capex([_group(includes_host=True)], FACTORS)
    assert system.hosts == 0 and system.network > 0
    desk = capex([_group(device_class="workstation")], FACTORS)
    assert desk.hosts == desk.network == desk.facility == 0
    assert any("desk" in n for n in desk.notes)
    one = capex([_group(nodes=1)], FACTORS)
    assert one.network == 0  # one node alone needs no scale-out network


def test_a_missing_factor_leaves_its_part_out_and_says_so():
    got = capex([_group()], TcoFactors((("host_usd_per_node", Factor(30_000.0, "h")),)))
    assert got.hosts == 120_000 and got.network == 0 and got.facility == 0
    assert any(n.startswith("Scale-out network not counted") for n in got.notes)
    assert any(n.startswith("Facility not counted") for n in got.notes)
    assert capex([_group(price=None)], FACTORS) is None  # nothing to add to


def test_stale_prices_are_older_than_twelve_months():
    today = dt.date(2026, 11, 28)
    assert not is_stale("2026-01", today=today)
    assert not is_stale("2025-11-28", today=today)
    assert is_stale("2025-10", today=today)
    assert is_stale("2024", today=today)
    assert is_stale(None, today=today)  # nobody can say how old
    assert not is_stale("2024-01", as_of="2024-06-30")  # replayed on a past date


def test_scenario_beats_preferences_beats_catalogue(catalogue):
    from_catalogue = resolve_tco({}, catalogue)
    host = from_catalogue.get("host_usd_per_node")
    assert host.value == 32010 and host.ref == "cf-host-dgx-h100-nongpu-2023"
    prefs = Settings(tco={"host_usd_per_node": 40_000.0, "facility": False})
    mine = resolve_tco({}, catalogue, prefs)
    assert mine.get("host_usd_per_node").value == 40_000 and mine.get("host_usd_per_node").basis == "your Preferences"
    assert mine.include_facility is False
    scenario = resolve_tco({"host_usd_per_node": 50_000, "facility": True}, catalogue, prefs)
    assert scenario.get("host_usd_per_node").value == 50_000 and scenario.include_facility is True
    assert Settings(tco={"host_usd_per_node": -1}).validate() == ["tco: host_usd_per_node -1 is not a number more than 0"]
    assert Settings(tco={"hosts": 1}).validate()[0].startswith("tco: unknown cost figure 'hosts'")


EIGHT_GPU = {
    "gpudesk_scenario": 1, "name": "8 GPUs",
    "workload": {"kind": "train", "model": "llama-3.1-8b", "tokens": 2e10, "precision": "bf16"},
    "compare": [{"name": "8 x H100", "cluster": [{"item": "h100-sxm5-80gb", "per_node": 8, "nodes": 2}]},
                {"name": "DGX H100", "cluster": [{"item": "dgx-h100", "nodes": 2}]}],
    "finance": {"rent": "gcp-a3-highgpu-8g", "pricing": "reserved_3y"},
}


def test_compare_shows_capex_by_part_and_break_even_against_each_commitment(catalogue):
    comp = build_comparison(parse_scenario(json.loads(json.dumps(EIGHT_GPU))), catalogue)
    bare, dgx = comp.results
    parts = bare.estimate.cost.capex_parts
    assert parts["hosts"] == 2 * 32010 and parts["network"] > 0 and parts["facility"] > 0
    assert dgx.estimate.cost.capex_parts["hosts"] == 0  # the DGX price buys the whole server
    months = {p: bare.estimate.cost.break_even_by_pricing[p][1] for p in ("on_demand", "reserved_1y", "reserved_3y")}
    # the dearer the rent, the sooner buying pays: on demand > 1 year > 3 years committed
    assert months["on_demand"] < months["reserved_1y"] < months["reserved_3y"]
    rates = bare.estimate.cost.rent_rates
    assert rates["reserved_3y"] < rates["reserved_1y"] < rates["on_demand"]
    for key in ("capex_parts", "tco", "break_even_on_demand", "break_even_reserved_3y"):
        assert comp.row(key) is not None, key
    assert "1-year committed" in comp.row("break_even_reserved_1y").label
    # the chosen pricing (3-year) is the one break-even uses
    assert bare.estimate.cost.break_even_months == pytest.approx(months["reserved_3y"], rel=0.02)
    cited = {f for s in comp.sources for f in s["figures"]}
    assert "cf-host-dgx-h100-nongpu-2023: value" in cited and "cf-facility-cw-2025-us-avg: value" in cited


def test_an_old_price_is_marked_stale_in_the_capex_cell(catalogue):
    doc = json.loads(json.dumps(EIGHT_GPU))
    doc["compare"] = [{"name": "Nano", "cluster": [{"item": "jetson-nano-devkit", "nodes": 1}]},
                      {"name": "Orin", "cluster": [{"item": "jetson-orin-nano-super-devkit", "nodes": 1}]}]
    doc["finance"] = {}
    comp = build_comparison(parse_scenario(doc), catalogue)
    cells = comp.row("capex").cells
    assert "STALE" in cells[0].text  # a 2019 MSRP
    assert "STALE" in comp.results[0].price_used


def test_the_price_a_bare_accelerator_carries_is_named_in_words(catalogue):
    doc = json.loads(json.dumps(EIGHT_GPU))
    doc["compare"] = [{"name": "B200", "cluster": [{"item": "b200-sxm-180gb", "per_node": 8, "nodes": 1}]},
                      {"name": "H100", "cluster": [{"item": "h100-sxm5-80gb", "per_node": 8, "nodes": 1}]}]
    comp = build_comparison(parse_scenario(doc), catalogue)
    notes = [a for r in comp.results for a in r.estimate.assumptions if "price is for the accelerators only" in a]
    assert len(notes) == 2 and not any("reported_deal" in n for n in notes)
    assert any("(reported deal $" in n or "(list price $" in n for n in notes), notes


@pytest.mark.parametrize(("usd", "when", "problem"), [
    ("0", None, "Price must be more than 0"),
    ("-250", None, "Price must be more than 0"),
    ("EUR 9000", None, "is not in US dollars"),
    ("9000", "2099-01-01", "is in the future"),
])
def test_bad_quotes_are_refused_naming_the_problem_and_nothing_changes(catalogue, usd, when, problem):
    before = len(catalogue.items("prices"))
    with pytest.raises(Exception) as err:
        catalogue.add_price_quote("h100-sxm5-80gb", usd, when=when)
    assert problem in str(err.value)
    assert len(catalogue.items("prices")) == before


def test_a_dollar_quote_is_kept_and_used():
    from gpudesk.core.catalogue.fields import field_map, parse_value

    assert parse_value(field_map("prices")["usd"], "$24,500") == 24500
    assert parse_value(field_map("prices")["usd"], "24500 USD") == 24500


def _items():
    import tomllib

    out = {}
    for path in sorted((DATA / "accelerators").glob("*.toml")):
        out.update({a["id"]: "accelerator" for a in tomllib.loads(path.read_text())["accelerator"]})
    out.update({s["id"]: "system" for s in tomllib.loads((DATA / "systems.toml").read_text())["system"]})
    return out


REASONS = {"sold_inside", "cloud_only", "no_document", "end_of_life"}


def test_every_part_has_a_price_or_says_why_not():
    items = _items()
    priced = {r["item"] for r in csv.DictReader((DATA / "prices.csv").open())}
    unpriced = {r["item"]: r for r in csv.DictReader((DATA / "unpriced.csv").open())}
    assert not priced & set(unpriced), "priced items still listed as unpriced: " + ", ".join(sorted(priced & set(unpriced)))
    missing = sorted(set(items) - priced - set(unpriced))
    assert not missing, "no price and no reason: " + ", ".join(missing)
    for item, row in unpriced.items():
        assert item in items, f"unpriced.csv names '{item}', which the catalogue does not have"
        assert row["reason"] in REASONS and len(row["notes"]) > 30, item
    print("\nParts without a price, by reason:")
    for reason in sorted(REASONS):
        print(f"  {reason}: " + ", ".join(sorted(i for i, r in unpriced.items() if r["reason"] == reason)))


def test_every_region_has_an_electricity_price_or_says_why_not():
    """Issue 29: each grid region carries its electricity price with its year and source, or its notes say
    why the price is empty (the statistics office searched and what was found)."""
    regions = list(csv.DictReader((DATA / "regions.csv").open()))
    assert len(regions) >= 40
    priced = [r for r in regions if r["electricity_usd_per_kwh"]]
    for r in priced:
        assert float(r["electricity_usd_per_kwh"]) > 0 and r["electricity_year"] and r["electricity_source"], r["id"]
    for r in regions:
        if not r["electricity_usd_per_kwh"]:
            why = r["notes"].split("Price left empty:", 1)
            assert len(why) == 2 and len(why[1].strip()) > 40, f"{r['id']}: no price and no reason"
    assert "us-avg" in {r["id"] for r in priced}  # the default question's region (EIA)


def test_the_most_compared_parts_have_dated_prices():
    """The README names the 25 parts buyers compare most; these counts are today's floor (issue 29
    asks for 3 each: the parts below 3 are the ones no dated document was found for: gaudi-3,
    gh200-96gb, h200-nvl-141gb, mi325x and mi350x when last counted on 2026-12-07)."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- most-compared -->")[1].split("<!-- /most-compared -->")[0]
    named = [part for line in block.splitlines() if line.strip().startswith("- `") for part in line.split("`")[1::2]]
    assert len(named) == 25 and set(named) <= set(_items())
    counts = {n: 0 for n in named}
    for r in csv.DictReader((DATA / "prices.csv").open()):
        if r["item"] in counts and r["date"]:
            counts[r["item"]] += 1
    at_least_three = sorted(n for n, c in counts.items() if c >= 3)
    assert len(at_least_three) >= 20, counts
    assert all(counts.values()), counts  # every named part has at least one dated price


KNOWN_UNKNOWN = sorted((item, f"{p}_tflops") for item in ("a40", "arc-pro-b60", "gaudi-3-pcie", "h20", "p100-pcie-16gb",
                                                           "p100-sxm2-16gb") for p in ("bf16", "fp16"))


def test_blank_sixteen_bit_peaks_of_data_centre_parts_each_say_why(catalogue):
    """Every data-centre or workstation part without a dense 16-bit peak is listed with the reason
    the data gives; a part that loses its figure, or a new blank without a reason, fails here."""
    from gpudesk.core.catalogue.blanks import UNKNOWN, why_blank

    blanks = {}
    for acc in catalogue.items("accelerators"):
        if acc.get("device_class") not in ("datacenter", "workstation"):
            continue
        for name in ("bf16_tflops", "fp16_tflops"):
            blank = why_blank(catalogue, "accelerators", acc, name)
            if blank is not None:
                blanks[(acc["id"], name)] = blank
    print("\nBlank 16-bit peaks of data-centre and workstation parts:")
    for (item, name), blank in sorted(blanks.items()):
        print(f"  {item} {name}: {blank.reason}: {blank.text[:140]}")
    unknown = sorted(k for k, b in blanks.items() if b.reason == UNKNOWN)
    # the blanks no document read explains yet (issue 29 leaves them for a later sourcing pass)
    assert unknown == KNOWN_UNKNOWN, unknown
    assert ("mi350x", "bf16_tflops") not in blanks  # filled from AMD's ROCm page
    assert blanks[("a10g", "fp16_tflops")].reason == "not published"
    assert blanks[("v100-sxm2-32gb", "bf16_tflops")].reason == "not applicable"  # Volta has no BF16
    assert blanks[("tpu-v5p", "fp16_tflops")].reason == "not applicable"  # TPUs compute in BF16


def test_a_cost_factor_the_user_adds_comes_before_the_bundled_ones(catalogue):
    mine = catalogue.add_item("cost_factors", {"id": "our-host", "component": "host_usd_per_node", "value": "41000",
                                               "applies_to": "our OEM's 8-GPU host", "date": "2024-01-01"},
                              source={"title": "Quote from our OEM"})
    factor = resolve_tco({}, catalogue).get("host_usd_per_node")
    assert factor.value == 41000 and factor.ref == mine["id"] and "Quote from our OEM" in factor.basis
    with pytest.raises(Exception) as err:
        catalogue.add_item("cost_factors", {"id": "bad", "component": "hosts", "value": "-3", "date": "2024"},
                           source={"title": "x"})
    assert "Component 'hosts' must be one of" in str(err.value) and "must be more than 0" in str(err.value)
    assert catalogue.get("cost_factors", "bad") is None


def test_the_cost_factor_names_agree_everywhere_they_are_listed():
    """The components of tco.py, the catalogue's choice list, the settings' check, the scenario's
    finance fields and the Preferences rows: one list, kept in step here."""
    from gpudesk.core.catalogue.fields import COST_COMPONENTS
    from gpudesk.core.estimate.tco import COMPONENTS
    from gpudesk.core.scenario import FINANCE
    from gpudesk.core.settings import TCO_NUMBERS

    assert COST_COMPONENTS == COMPONENTS == TCO_NUMBERS
    assert set(COMPONENTS) <= set(FINANCE)
    ui = (ROOT / "gpudesk" / "ui" / "widgets" / "preferences.py").read_text()
    assert all(f'("{name}",' in ui for name in COMPONENTS)
