"""Figures of the engine's small pure functions checked against hand calculations, written to kill
the mutants that survived mutation testing (README "Mutation testing"): each expected value below
is worked out in its comment from the formula's physics (power between idle and TDP, energy as
power × time, amortised capex, break-even as capex over the saving per run), not copied from the
engine's output."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from gpudesk.core.estimate import cost as cost_module
from gpudesk.core.estimate.comm import Group, all_reduce, all_to_all, place, point_to_point, reduce_scatter
from gpudesk.core.estimate.cost import _break_even_range, break_even, cost, hourly
from gpudesk.core.estimate.embodied import apply_embodied
from gpudesk.core.estimate.engine import EstimateError, estimate, merge_groups
from gpudesk.core.estimate.power import apply_power, combine, group_power
from gpudesk.core.estimate.topology import (
    Topology,
    link_family,
    link_latency_s,
    link_rate_gbs,
    slowest_device,
    topology_of,
)
from gpudesk.core.estimate.types import (
    Calibration,
    CloudOffer,
    Device,
    Estimate,
    EstimateInput,
    Finance,
    Link,
    MemoryFit,
    NodeGroup,
    Range,
    Site,
    Workload,
)

H100 = Device("h100", "H100 SXM", "datacenter", memory_gb=80, mem_bandwidth_gbs=3350, tdp_w=700,
              peak_tflops={"bf16": 989})
NO_TDP = Device("mystery", "Mystery board", "datacenter", memory_gb=16, peak_tflops={"bf16": 100})
P5 = CloudOffer("aws-p5", "AWS", "p5.48xlarge", 98.32, 8, usd_per_hour_spot=40.0, usd_per_hour_reserved=60.0)
# two hours likely, one to four hours at the ends
TWO_HOURS = Range(3600.0, 7200.0, 14400.0)


def _estimate(time_s: Range | None = TWO_HOURS, feasible: bool = True) -> Estimate:
    return Estimate("train", feasible, [], Range.exact(1.0), time_s, None, MemoryFit(0.0, 80.0, True, None), None,
                    None, None, None, [], 8)


@pytest.fixture(autouse=True)
def _fresh_rent_cache():
    cost_module._RENT_CACHE.clear()
    yield
    cost_module._RENT_CACHE.clear()


# --------------------------------------------------------------------------- power.py


def test_a_rated_system_draws_its_idle_share_plus_its_load_share_of_the_rest():
    # a 10.2 kW system draws 30% idle; at half load 0.3 + 0.7 × 0.5 = 65% of its rating, per node
    g = NodeGroup(H100, per_node=8, nodes=2, system_power_w=10_200.0)
    busy, idle = group_power(g, 0.5)
    assert busy == pytest.approx(10_200 * 0.65 * 2)
    assert idle == pytest.approx(10_200 * 0.3 * 2)
    assert group_power(g, 1.0)[0] == pytest.approx(10_200 * 2)  # at full load exactly its rating


def test_a_device_without_tdp_has_unknown_power_not_zero():
    assert group_power(NodeGroup(NO_TDP), 0.5) == (None, None)


def test_a_catalogued_idle_figure_and_host_overhead_are_used_as_given():
    # 700 W TDP, 50 W idle: at half load 50 + 650 × 0.5 = 375 W per device; 4 devices and a host of
    # 1 kW (half of it at idle) per node, 3 nodes
    dev = Device("x", "X", "datacenter", tdp_w=700.0, idle_w=50.0)
    g = NodeGroup(dev, per_node=4, nodes=3, node_overhead_w=1000.0)
    busy, idle = group_power(g, 0.5)
    assert busy == pytest.approx((375 * 4 + 1000) * 3)
    assert idle == pytest.approx((50 * 4 + 500) * 3)


def test_host_overhead_is_a_class_share_of_tdp_and_half_of_it_at_idle():
    # data centre: host at full load is 50% of the accelerators' TDP (8 × 700 W → 2.8 kW); devices
    # idle at 12% of TDP (84 W)
    g = NodeGroup(H100, per_node=8)
    busy, idle = group_power(g, 1.0)
    assert busy == pytest.approx(8 * 700 + 2800)
    assert idle == pytest.approx(8 * 84 + 1400)
    # with no load the host draws its idle half and the devices their idle floor
    assert group_power(g, 0.0)[0] == pytest.approx(idle)
    # at 40% load the host draws 0.5 + 0.5 × 0.4 = 70% of its maximum
    assert group_power(g, 0.4)[0] == pytest.approx(8 * (84 + 616 * 0.4) + 2800 * 0.7)
    # an edge board's host is 15% of its TDP; an unknown class falls back to 30%
    edge = NodeGroup(Device("e", "E", "edge", tdp_w=10.0))
    assert group_power(edge, 1.0)[0] == pytest.approx(10 + 1.5)
    odd = NodeGroup(Device("o", "O", "mainframe", tdp_w=100.0))
    assert group_power(odd, 1.0) == pytest.approx((100 + 30, 12 + 15))


def test_combining_with_an_exact_figure_scales_the_range():
    # a factor known exactly adds no spread: (1, 2, 4) × 3 is (3, 6, 12)
    r = combine(Range(1.0, 2.0, 4.0), Range.exact(3.0))
    assert (r.low, r.likely, r.high) == pytest.approx((3.0, 6.0, 12.0))
    r = combine(Range.exact(3.0), Range(1.0, 2.0, 4.0))
    assert (r.low, r.likely, r.high) == pytest.approx((3.0, 6.0, 12.0))


def test_combining_two_uncertain_figures_adds_their_log_spreads_in_quadrature():
    # each factor is ×/÷ 2 around its likely value: together ×/÷ 2^√2, narrower than 4
    r = combine(Range(1.0, 2.0, 4.0), Range(1.5, 3.0, 6.0))
    assert r.likely == pytest.approx(6.0)
    assert r.low == pytest.approx(6.0 / 2 ** math.sqrt(2))
    assert r.high == pytest.approx(6.0 * 2 ** math.sqrt(2))
    # asymmetric: down ÷ 2 and ÷ 1.5, up × 3 and × 1
    r = combine(Range(1.0, 2.0, 6.0), Range(2.0, 3.0, 3.0))
    assert r.low == pytest.approx(6.0 * math.exp(-math.hypot(math.log(2), math.log(1.5))))
    assert r.high == pytest.approx(18.0)
    # a zero low end carries no spread information: that side is taken as exact
    r = combine(Range(0.0, 2.0, 4.0), Range.exact(3.0))
    assert (r.low, r.high) == pytest.approx((6.0, 12.0))
    # a likely value of zero keeps the end points' products
    r = combine(Range(-1.0, 0.0, 2.0), Range(1.0, 2.0, 3.0))
    assert (r.low, r.likely, r.high) == (-1.0, 0.0, 6.0)


def _power_input(kind: str = "train", devices: Device = H100, **site) -> tuple[EstimateInput, tuple]:
    g = NodeGroup(devices, per_node=8, node_overhead_w=0.0)
    inp = EstimateInput(Workload(kind=kind), (g,), Site(grid_gco2e_per_kwh=400.0, pue=1.5,
                                                        electricity_usd_per_kwh=0.2, **site),
                        Finance(utilization=0.5))
    return inp, (g,)


def test_training_power_energy_and_co2_follow_from_the_activity_band():
    # 8 × H100 (idle 84 W, 616 W more at full load) drawing 100 / 85 / 70% while training, host 0,
    # PUE 1.5: 8 × (84 + 616 a) × 1.5
    inp, groups = _power_input()
    est = _estimate()
    powers = apply_power(inp, groups, est)
    expected = [8 * (84 + 616 * a) * 1.5 for a in (1.0, 0.85, 0.7)]
    assert powers == pytest.approx(expected)
    assert (est.power_w.low, est.power_w.likely, est.power_w.high) == pytest.approx(
        (expected[2], expected[1], expected[0]))
    # two hours at 7,291.2 W is 14.58 kWh; at 400 g/kWh, 5.83 kg
    assert est.energy_kwh.likely == pytest.approx(expected[1] * 2 / 1000)
    assert est.co2_kg.likely == pytest.approx(expected[1] * 2 / 1000 * 0.4)
    assert est.co2_kg.high == pytest.approx(est.energy_kwh.high * 0.4)
    assert est.energy_kwh.low < est.energy_kwh.likely < est.energy_kwh.high
    # a year at 50% use: busy half the hours, idle (8 × 84 W × 1.5) the other half
    idle_w = 8 * 84 * 1.5
    assert est.energy_kwh_per_year == pytest.approx((expected[1] * 0.5 + idle_w * 0.5) * 8760 / 1000)
    assert est.co2_kg_per_year == pytest.approx(est.energy_kwh_per_year * 0.4)


def test_decoding_draws_less_than_training():
    # bandwidth-bound decoding: 80 / 60 / 45% of the way from idle to TDP
    inp, groups = _power_input("infer")
    est = _estimate()
    powers = apply_power(inp, groups, est)
    assert powers == pytest.approx([8 * (84 + 616 * a) * 1.5 for a in (0.8, 0.6, 0.45)])
    assert "decoding" in est.assumptions[0]


def test_an_infeasible_run_has_no_energy_but_a_yearly_draw():
    inp, groups = _power_input()
    est = _estimate(feasible=False)
    apply_power(inp, groups, est)
    assert est.power_w is not None
    assert est.energy_kwh is None and est.co2_kg is None
    assert est.energy_kwh_per_year > 0
    est = _estimate(time_s=None)
    apply_power(inp, groups, est)
    assert est.energy_kwh is None


def test_an_unknown_tdp_leaves_power_unknown_and_names_the_device():
    inp, groups = _power_input(devices=NO_TDP)
    est = _estimate()
    assert apply_power(inp, groups, est) is None
    assert est.power_w is None and est.energy_kwh is None
    note = est.finding("no_tdp")
    assert note is not None and note.values == {"items": "Mystery board"}
    assert "Mystery board" in note.text


def test_a_rated_system_names_its_cap_and_says_pue_may_exceed_it():
    g = NodeGroup(H100, per_node=8, nodes=2, system_power_w=10_200.0, label="DGX H100")
    inp = EstimateInput(Workload(), (g,), Site(pue=1.2))
    est = _estimate()
    apply_power(inp, (g,), est)
    cap = next(a for a in est.assumptions if a.startswith("Rated system power caps the draw"))
    assert "DGX H100 at most 10.2 kW each (2 of them)" in cap
    assert "1.2×" in cap
    inp = EstimateInput(Workload(), (g,), Site(pue=1.0))
    est = _estimate()
    apply_power(inp, (g,), est)
    assert est.power_w.high == pytest.approx(2 * 10_200.0)  # full load at PUE 1 is the rating
    assert not any("exceed the rating" in a for a in est.assumptions)


# --------------------------------------------------------------------------- embodied.py


def _embodied_input(*groups: NodeGroup, **finance) -> EstimateInput:
    return EstimateInput(Workload(), groups, Site(), Finance(**{"lifetime_years": 4.0, "utilization": 0.5, **finance}))


def test_embodied_carbon_is_spread_over_the_hours_of_use_in_the_lifetime():
    # two nodes of 3,000 kg over 4 years at 50% use: 1,500 kg a year; a 2-hour run is 2 of the
    # 4 × 8,760 × 0.5 = 17,520 hours of use, so 6,000 × 2 / 17,520 = 0.685 kg
    g = NodeGroup(H100, per_node=8, nodes=2, embodied_kg_per_node=3000.0, embodied_basis="vendor PCF")
    est = _estimate()
    apply_embodied(_embodied_input(g), (g,), est)
    assert est.embodied_kg_per_year == pytest.approx(1500.0)
    assert est.embodied_kg_per_run.likely == pytest.approx(6000 * 2 / 17_520)
    assert est.embodied_kg_per_run.high == pytest.approx(6000 * 4 / 17_520)
    assert "vendor PCF" in est.assumptions[-1]
    assert "6,000 kg" in est.assumptions[-1]


def test_embodied_carbon_is_skipped_when_off_rented_or_unknown():
    owned = NodeGroup(H100, embodied_kg_per_node=3000.0)
    est = _estimate()
    apply_embodied(_embodied_input(owned, embodied=False), (owned,), est)
    assert est.embodied_kg_per_year is None and not est.assumptions
    rented = NodeGroup(H100, per_node=8, cloud=P5, embodied_kg_per_node=3000.0)
    apply_embodied(_embodied_input(rented), (rented,), est)
    assert est.embodied_kg_per_year is None and not est.notes
    unknown = NodeGroup(NO_TDP)
    apply_embodied(_embodied_input(unknown), (unknown,), est)
    assert est.embodied_kg_per_year is None
    assert est.finding("no_embodied").values == {"items": "Mystery board"}


def test_rented_hardware_beside_owned_is_left_to_the_provider():
    owned = NodeGroup(H100, nodes=2, embodied_kg_per_node=1000.0)
    rented = NodeGroup(H100, per_node=8, cloud=P5)
    est = _estimate()
    apply_embodied(_embodied_input(owned, rented), (owned, rented), est)
    assert est.embodied_kg_per_year == pytest.approx(2000.0 / 4)  # only the owned nodes
    assert est.finding("embodied_rented") is not None


def test_hardware_never_used_has_a_yearly_but_no_per_run_share():
    g = NodeGroup(H100, embodied_kg_per_node=1000.0)
    est = _estimate()
    apply_embodied(_embodied_input(g, utilization=0.0), (g,), est)
    assert est.embodied_kg_per_year == pytest.approx(250.0)
    assert est.embodied_kg_per_run is None
    est = _estimate(time_s=None)
    apply_embodied(_embodied_input(g), (g,), est)
    assert est.embodied_kg_per_run is None and est.embodied_kg_per_year == pytest.approx(250.0)


# --------------------------------------------------------------------------- cost.py


def test_break_even_is_capex_over_the_saving_per_run():
    # $100k of hardware saving $80 a 10-hour run: 1,250 runs; at 50% use a month holds 365 hours
    runs, months = break_even(100_000, 100.0, 20.0, 10.0, 0.5)
    assert runs == pytest.approx(1250.0)
    assert months == pytest.approx(1250 * 10 / 365)
    assert break_even(100_000, 20.0, 20.0, 10.0, 0.5) == (None, None)  # no saving, never
    assert break_even(100_000, 10.0, 20.0, 10.0, 0.5) == (None, None)
    assert break_even(100_000, 100.0, 20.0, 10.0, 0.0) == (pytest.approx(1250.0), None)


def test_hourly_price_follows_the_pricing_and_falls_back_to_on_demand():
    g = NodeGroup(H100, per_node=8, cloud=P5)
    assert hourly(g, "on_demand") == 98.32
    assert hourly(g, "spot") == 40.0
    assert hourly(g, "reserved") == 60.0
    bare = NodeGroup(H100, per_node=8, cloud=CloudOffer("c", "X", "x8", 20.0, 8))
    assert hourly(bare, "spot") == 20.0 and hourly(bare, "reserved") == 20.0
    assert hourly(NodeGroup(H100, cloud=P5, usd_per_hour_override=5.0), "spot") == 5.0


def _owned_input(rent: NodeGroup | None, **finance) -> tuple[EstimateInput, tuple, Estimate]:
    owned = NodeGroup(H100, per_node=8, capex_usd_per_node=300_000.0)
    fin = {"lifetime_years": 4.0, "utilization": 0.5, "maintenance_fraction_per_year": 0.1, **finance}
    inp = EstimateInput(Workload(), (owned,), Site(electricity_usd_per_kwh=0.2), Finance(rent, **fin))
    est = _estimate(Range(1800.0, 3600.0, 7200.0))  # one hour likely
    est.energy_kwh = Range(5.0, 10.0, 20.0)
    est.energy_kwh_per_year = 40_000.0
    return inp, (owned,), est


def _same_time(sub: EstimateInput) -> Estimate:
    return _estimate(Range(1800.0, 3600.0, 7200.0))


def test_hardware_never_used_costs_per_year_and_has_no_cost_per_run():
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5), utilization=0.0)
    out = cost(inp, groups, est, _same_time)  # no division by the zero runs a year
    assert out.owned_usd_per_run is None
    assert out.owned_usd_per_year == pytest.approx(75_000 + 30_000 + (est.energy_kwh_per_year or 0.0) * 0.2)


def test_owning_amortises_capex_over_the_runs_of_its_lifetime():
    # one-hour runs at 50% use: 4,380 runs a year. Maintenance 10% of $300k a year is $6.85 a run,
    # electricity 10 kWh × $0.2 = $2; capex over 4 years of runs is $17.12 a run
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5))
    out = cost(inp, groups, est, _same_time)
    maint = 30_000 / 4380
    amortised = 300_000 / (4380 * 4)
    assert out.capex_usd == 300_000
    assert out.electricity_usd_per_run.likely == pytest.approx(2.0)
    m = out.owned_marginal_usd_per_run
    assert (m.low, m.likely, m.high) == pytest.approx((1 + maint, 2 + maint, 4 + maint))
    o = out.owned_usd_per_run
    assert (o.low, o.likely, o.high) == pytest.approx((1 + maint + amortised / 2, 2 + maint + amortised,
                                                       4 + maint + amortised * 2))
    # a year: capex / 4 + 10% maintenance + 40 MWh at $0.2
    assert out.owned_usd_per_year == pytest.approx(75_000 + 30_000 + 8_000)
    # renting the same hour on a p5 costs $98.32; 4,380 of them a year
    assert out.cloud_usd_per_run.likely == pytest.approx(98.32)
    assert out.cloud_hours_per_run.likely == pytest.approx(1.0)
    assert out.rent_usd_per_year == pytest.approx(98.32 * 4380)
    assert out.rent_label == "1 × AWS p5.48xlarge"
    assert any(a.startswith("Owning: $300,000 capex over 4 years at 50% utilisation, maintenance 10%")
               for a in est.assumptions)


def test_break_even_range_pairs_the_dearest_rent_with_the_cheapest_owned_run():
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5))
    out = cost(inp, groups, est, _same_time)
    maint = 30_000 / 4380
    likely_runs = 300_000 / (98.32 - (2 + maint))
    assert out.break_even_runs == pytest.approx(likely_runs)
    assert out.break_even_months == pytest.approx(likely_runs * 1.0 / 365)
    # early: rent's high end (2 h × $98.32) against the cheapest owned run; late: the reverse
    early = 300_000 / (196.64 - (1 + maint))
    late = 300_000 / (49.16 - (4 + maint))
    r = out.break_even_runs_range
    assert (r.low, r.likely, r.high) == pytest.approx((early, likely_runs, late))
    mo = out.break_even_months_range
    assert (mo.low, mo.high) == pytest.approx((early * 2 / 365, late * 0.5 / 365))


def test_renting_cheaper_than_running_never_breaks_even():
    cheap = NodeGroup(H100, per_node=8, cloud=CloudOffer("c", "X", "x8", 1.0, 8))
    inp, groups, est = _owned_input(cheap)
    out = cost(inp, groups, est, _same_time)
    assert out.break_even_runs is None and out.break_even_months is None
    assert out.rent_usd_per_year is None
    assert est.finding("rent_cheaper") is not None


def test_a_late_end_that_never_breaks_even_is_unbounded():
    # $6/h renting: the likely hour saves $6 - $2 of electricity, the cheapest rented run (half an
    # hour, $3) saves nothing against the dearest owned run ($4 of electricity)
    offer = NodeGroup(H100, per_node=8, cloud=CloudOffer("c", "X", "x8", 6.0, 8))
    inp, groups, est = _owned_input(offer, maintenance_fraction_per_year=0.0)
    out = cost(inp, groups, est, _same_time)
    assert out.break_even_runs == pytest.approx(300_000 / 4.0)
    assert out.break_even_runs_range.high == math.inf
    assert out.break_even_months_range.high == math.inf


def test_spot_pricing_is_used_for_the_rented_alternative():
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5), pricing="spot")
    out = cost(inp, groups, est, _same_time)
    assert out.cloud_usd_per_run.likely == pytest.approx(40.0)
    assert any("$40.00/h (spot)" in a for a in est.assumptions)


def test_a_rented_cluster_costs_its_hours_times_its_rate():
    # two p5 instances for one hour: $196.64 a run; at 50% use a year holds 4,380 such runs
    rented = NodeGroup(H100, per_node=8, nodes=2, cloud=P5)
    inp = EstimateInput(Workload(), (rented,), Site(), Finance(utilization=0.5))
    est = _estimate(Range(1800.0, 3600.0, 7200.0))
    out = cost(inp, (rented,), est, _same_time)
    assert (out.cloud_usd_per_run.low, out.cloud_usd_per_run.likely, out.cloud_usd_per_run.high) == \
        pytest.approx((98.32, 196.64, 393.28))
    assert out.cloud_hours_per_run.high == pytest.approx(2.0)
    assert out.rent_label == "2 × AWS p5.48xlarge"
    assert out.rent_usd_per_year == pytest.approx(196.64 * 4380)
    assert out.capex_usd is None and out.owned_usd_per_run is None


def test_unpriced_hardware_has_no_capex_and_names_itself():
    owned = NodeGroup(NO_TDP, per_node=2)
    inp = EstimateInput(Workload(), (owned,), Site(), Finance(NodeGroup(H100, per_node=8, cloud=P5)))
    est = _estimate()
    est.energy_kwh = Range(1.0, 2.0, 3.0)
    out = cost(inp, (owned,), est, _same_time)
    assert out.capex_usd is None and out.break_even_runs is None
    assert est.finding("no_price").values == {"items": "Mystery board"}
    assert out.owned_marginal_usd_per_run is not None and out.owned_usd_per_run is None


def test_a_rented_alternative_that_cannot_run_is_no_comparison():
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5))
    out = cost(inp, groups, est, lambda sub: _estimate(None, feasible=False))
    assert out.cloud_usd_per_run is None and out.break_even_runs is None
    note = est.finding("rent_not_comparable")
    assert note is not None and "p5.48xlarge" in note.text and "no time estimate" in note.text


def test_the_rented_alternative_is_estimated_once_on_its_own_hardware():
    calls = []

    def counting(sub: EstimateInput) -> Estimate:
        calls.append(sub)
        return _same_time(sub)

    rent = NodeGroup(H100, per_node=8, cloud=P5)
    inp, groups, est = _owned_input(rent)
    cost(inp, groups, est, counting)
    cost(inp, groups, _owned_input(rent)[2], counting)
    assert len(calls) == 1
    assert calls[0].groups == (rent,) and calls[0].finance.rent is None
    assert calls[0].finance.utilization == 0.5 and calls[0].finance.lifetime_years == 4.0


# --------------------------------------------------------------------------- engine.py


def test_identical_groups_merge_into_one_with_their_nodes_added():
    a = NodeGroup(H100, per_node=8, nodes=2)
    b = NodeGroup(H100, per_node=8, nodes=3)
    c = NodeGroup(H100, per_node=4, nodes=1)
    merged = merge_groups((a, b, c))
    assert [(g.per_node, g.nodes) for g in merged] == [(8, 5), (4, 1)]
    assert merge_groups((a,)) == (a,)
    priced = NodeGroup(H100, per_node=8, nodes=1, capex_usd_per_node=1.0)
    assert len(merge_groups((a, priced))) == 2


def test_an_empty_cluster_or_a_zero_count_is_an_input_error():
    with pytest.raises(EstimateError, match="empty"):
        estimate(EstimateInput(Workload(), ()))
    with pytest.raises(EstimateError, match="H100 SXM: counts must be at least 1"):
        estimate(EstimateInput(Workload(), (NodeGroup(H100, per_node=0),)))
    with pytest.raises(EstimateError, match="rack: counts"):
        estimate(EstimateInput(Workload(), (NodeGroup(H100, nodes=0, label="rack"),)))


# --------------------------------------------------------------------------- comm.py

FAST = Topology(devices=32, per_node=8, nodes=4, domain=8, intra_gbs=100.0, intra_latency_s=1e-6, node_gbs=50.0,
                inter_latency_s=10e-6, nic_count=4, intra_name="fast", inter_name="net", intra_assumed=False,
                inter_assumed=False)


def test_two_ranks_already_exchange_and_pay_one_step():
    # a ring of 2 moves 2 × 1/2 of the data and takes 2 × 1 latency steps; a reduce-scatter half that
    pair = Group(2, 2)
    n = 1e9
    assert all_reduce(n, pair, FAST) == pytest.approx(n / 100e9 + 2e-6)
    assert reduce_scatter(n, pair, FAST) == pytest.approx(n / 2 / 100e9 + 1e-6)
    assert all_to_all(n, pair, FAST) == pytest.approx(n / 2 / 100e9 + 1e-6)


def test_one_byte_still_pays_the_latency_and_zero_bytes_cost_nothing():
    g = Group(8, 8)
    assert all_reduce(1.0, g, FAST) == pytest.approx(2 * 7 / 8 / 100e9 + 14e-6)
    assert reduce_scatter(1.0, g, FAST) == pytest.approx(7 / 8 / 100e9 + 7e-6)
    assert all_to_all(1.0, g, FAST) == pytest.approx(7 / 8 / 100e9 + 1e-6)
    assert point_to_point(1.0, False, FAST) == pytest.approx(1 / 100e9 + 1e-6)
    assert point_to_point(1.0, True, FAST) == pytest.approx(8 / 50e9 + 10e-6)
    for fn in (all_reduce, reduce_scatter, all_to_all):
        assert fn(0.0, g, FAST) == 0.0
    assert point_to_point(0.0, False, FAST) == 0.0


# --------------------------------------------------------------------------- topology.py

IB = Link("ndr", "InfiniBand NDR", "infiniband", 50.0)  # 400 Gb/s, 5 µs by default
GBE_25 = Link("eth-25g", "25 GbE", "ethernet", 3.125, 10.0)
GBE_400 = Link("eth-400g", "400 GbE", "ethernet", 50.0, 8.0)


def test_slow_ethernet_runs_tcp_and_pays_its_own_latency():
    # below 40 GbE Ethernet is TCP: 75% of the line rate and 60 µs whatever the link says
    assert link_family(GBE_25) == "ethernet-slow"
    assert link_family(GBE_400) == "ethernet"
    assert link_family(None) == "pcie"
    assert link_rate_gbs(GBE_25, 1.0) == pytest.approx(3.125 * 0.75)
    assert link_latency_s(GBE_25) == pytest.approx(60e-6)
    assert link_rate_gbs(GBE_400, 1.0) == pytest.approx(50.0 * 0.9)
    assert link_latency_s(GBE_400) == pytest.approx(8e-6)


def test_link_rates_and_latencies_fall_back_by_family():
    assert link_rate_gbs(IB, 1.0) == pytest.approx(45.0)
    assert link_rate_gbs(None, 16.0) == pytest.approx(16.0 * 0.7)  # an unnamed link is PCIe
    assert link_rate_gbs(Link("z", "Z", "infiniband", 0.0), 20.0) == pytest.approx(18.0)  # no rate: the fallback
    assert link_rate_gbs(Link("f", "F", "fancy", 10.0), 1.0) == pytest.approx(7.0)  # unknown family: 70%
    assert link_latency_s(None) == pytest.approx(10e-6)
    assert link_latency_s(Link("n", "N", "nvlink", 450.0, 0.0)) == pytest.approx(3e-6)
    assert link_latency_s(Link("f", "F", "fancy", 10.0, 0.0)) == pytest.approx(20e-6)


def test_a_cluster_topology_counts_nodes_domains_and_the_nic_rate_per_node():
    # 2 nodes of 8 devices with 900 GB/s of device links (450 one way, unnamed so taken as PCIe
    # efficiency 70%) and 8 NICs of 400 Gb/s each (90% of 50 GB/s)
    dev = Device("h", "H", "datacenter", tdp_w=700.0, intra_link_gbs=900.0)
    t = topology_of((NodeGroup(dev, per_node=8, nodes=2, inter=IB, nic_count=8),))
    assert (t.devices, t.per_node, t.nodes, t.domain, t.domains) == (16, 8, 2, 8, 2)
    assert t.intra_gbs == pytest.approx(450 * 0.7)
    assert t.node_gbs == pytest.approx(8 * 45.0)
    assert t.intra_latency_s == pytest.approx(10e-6) and t.inter_latency_s == pytest.approx(5e-6)
    assert t.nic_count == 8
    assert (t.intra_name, t.intra_assumed) == ("PCIe (assumed)", True)
    assert (t.inter_name, t.inter_assumed) == ("InfiniBand NDR", False)


def test_an_unnamed_network_is_assumed_and_one_node_has_none():
    plain = Device("p", "P", "workstation", tdp_w=300.0)
    t = topology_of((NodeGroup(plain, per_node=4, nodes=3),))
    assert t.inter_name == "1 Gb Ethernet (assumed)" and t.inter_assumed
    # rated as what it is named: 1 Gb Ethernet over TCP (75% of the wire, 60 µs), not as PCIe
    assert t.node_gbs == pytest.approx(0.125 * 0.75)
    assert t.inter_latency_s == pytest.approx(60e-6)
    assert t.intra_gbs == pytest.approx(16.0 * 0.7)  # PCIe fallback of 16 GB/s one way
    one = topology_of((NodeGroup(plain, per_node=1, nodes=1),))
    assert (one.inter_name, one.inter_assumed, one.inter_latency_s) == ("", False, 0.0)
    assert (one.intra_name, one.intra_assumed) == ("", False)


def test_a_tpu_slice_is_one_domain_and_mixed_groups_take_the_slowest():
    ici = Link("ici", "ICI", "ici", 100.0, 5.0)
    tpu = Device("v5p", "TPU v5p", "datacenter", tdp_w=400.0)
    t = topology_of((NodeGroup(tpu, per_node=4, nodes=4, intra=ici),))
    assert t.domain == 16 and t.domains == 1
    fast = NodeGroup(H100, per_node=8, nodes=2, inter=IB, nic_count=8)
    slow = NodeGroup(H100, per_node=4, nodes=1, inter=GBE_400, nic_count=1)
    t = topology_of((fast, slow))
    assert (t.devices, t.per_node, t.nodes) == (20, 4, 3)
    assert t.node_gbs == pytest.approx(45.0)  # one 400 GbE NIC sets the pace
    assert t.inter_name == "400 GbE"
    assert t.inter_latency_s == pytest.approx(8e-6)  # the worst of 5 and 8 µs
    assert t.nic_count == 1


def test_the_slowest_device_sets_the_pace_by_16_bit_peak_then_bandwidth():
    a = Device("a", "A", peak_tflops={"bf16": 300.0}, mem_bandwidth_gbs=2000.0)
    b = Device("b", "B", peak_tflops={"fp16": 200.0}, mem_bandwidth_gbs=3000.0)
    c = Device("c", "C", peak_tflops={"fp32": 250.0}, mem_bandwidth_gbs=1000.0)
    assert slowest_device((NodeGroup(a), NodeGroup(b), NodeGroup(c))) is b
    d = Device("d", "D", peak_tflops={"fp16": 200.0}, mem_bandwidth_gbs=1000.0)
    assert slowest_device((NodeGroup(b), NodeGroup(d))) is d
    assert slowest_device((NodeGroup(a), NodeGroup(Device("e", "E")))).id == "e"


# --------------------------------------------------------------------------- second pass: the survivors


def test_combine_below_one_and_with_a_zero_low_on_either_side():
    # likely 0.5: still the quadrature rule, ×/÷ 2^√2 (not the end points' products 0.125 and 2)
    r = combine(Range(0.25, 0.5, 1.0), Range(0.5, 1.0, 2.0))
    assert r.low == pytest.approx(0.5 / 2 ** math.sqrt(2))
    assert r.high == pytest.approx(0.5 * 2 ** math.sqrt(2))
    r = combine(Range.exact(3.0), Range(0.0, 2.0, 4.0))
    assert (r.low, r.likely, r.high) == pytest.approx((6.0, 6.0, 12.0))
    # a zero likely value multiplies the end points: (-1 × 2, 0, 2 × 4)
    r = combine(Range(-1.0, 0.0, 2.0), Range(2.0, 3.0, 4.0))
    assert (r.low, r.likely, r.high) == (-2.0, 0.0, 8.0)


def test_every_device_without_a_figure_is_named():
    other = Device("odd", "Odd card", "workstation", peak_tflops={"bf16": 10.0})
    groups = (NodeGroup(NO_TDP), NodeGroup(other))
    inp = EstimateInput(Workload(), groups)
    est = _estimate()
    apply_power(inp, groups, est)
    assert est.finding("no_tdp").values == {"items": "Mystery board, Odd card"}
    assert "for Mystery board, Odd card:" in est.finding("no_tdp").text
    apply_embodied(_embodied_input(*groups), groups, est)
    assert est.finding("no_embodied").values == {"items": "Mystery board, Odd card"}
    assert "for Mystery board, Odd card:" in est.finding("no_embodied").text
    cost(EstimateInput(Workload(), groups), groups, est, _same_time)
    assert est.finding("no_price").values == {"items": "Mystery board, Odd card"}
    assert "for Mystery board, Odd card:" in est.finding("no_price").text


def test_power_sentences_name_the_phase_the_rating_and_the_region():
    inp, groups = _power_input(region="eu-north")
    est = _estimate()
    apply_power(inp, groups, est)
    assert "while training" in est.assumptions[0]
    assert est.assumptions[-1].startswith("Grid eu-north: 400 gCO2e/kWh")
    one = NodeGroup(H100, per_node=8, system_power_w=10_000.0, label="DGX")
    est = _estimate()
    apply_power(EstimateInput(Workload(), (one,), Site(pue=1.0)), (one,), est)
    cap = next(a for a in est.assumptions if a.startswith("Rated system power"))
    assert cap.endswith("DGX at most 10 kW each.")  # one node: no "(1 of them)"; PUE 1: nothing on top


def test_energy_is_exactly_watts_times_seconds_over_3_6_million():
    # 1 kW for an hour is 1 kWh
    g = NodeGroup(Device("k", "K", "datacenter", tdp_w=1000.0, idle_w=1000.0), node_overhead_w=0.0)
    est = _estimate(Range.exact(3600.0))
    apply_power(EstimateInput(Workload(), (g,), Site(pue=1.0)), (g,), est)
    assert est.energy_kwh.likely == pytest.approx(1.0, rel=1e-12)


def test_embodied_sentences_and_notes_carry_their_bases_and_no_values():
    a = NodeGroup(H100, embodied_kg_per_node=1000.0, embodied_basis="vendor PCF")
    b = NodeGroup(H100, per_node=4, embodied_kg_per_node=500.0, embodied_basis="LCA")
    est = _estimate()
    apply_embodied(_embodied_input(a, b), (a, b), est)
    assert "(vendor PCF; LCA)" in est.assumptions[-1]
    assert f", {1500 * 2 / 17_520:,.3g} kg per run." in est.assumptions[-1]
    assert est.finding("embodied_rented") is None  # nothing rented
    rented = NodeGroup(H100, per_node=8, cloud=P5)
    apply_embodied(_embodied_input(a, rented), (a, rented), est)
    note = est.finding("embodied_rented")
    assert note.values == {} and "provider's" in note.text
    # hardware used a few minutes a year still carries its share per run
    est = _estimate()
    apply_embodied(_embodied_input(a, utilization=1e-5), (a,), est)
    assert est.embodied_kg_per_run.likely == pytest.approx(1000.0 * 2 / (4 * 8760 * 1e-5))


def test_two_groups_merge_and_different_devices_never_do():
    a = NodeGroup(H100, per_node=8, nodes=2)
    assert merge_groups((a, NodeGroup(H100, per_node=8, nodes=1))) == (NodeGroup(H100, per_node=8, nodes=3),)
    other = Device("a100", "A100", "datacenter", memory_gb=80, tdp_w=400, peak_tflops={"bf16": 312})
    merged = merge_groups((a, NodeGroup(other, per_node=8, nodes=2), NodeGroup(other, per_node=8)))
    assert [(g.device.id, g.nodes) for g in merged] == [("h100", 2), ("a100", 3)]


def test_a_whole_estimate_carries_its_workload_and_its_rent_comparison():
    w = Workload(kind="train", params=124e6, tokens=1e8, seq_len=1024, layers=12, d_model=768, heads=12,
                 kv_heads=12, vocab=50257)
    owned = NodeGroup(H100, per_node=8, capex_usd_per_node=300_000.0)
    inp = EstimateInput(w, (owned,), Site(), Finance(NodeGroup(H100, per_node=8, cloud=P5)))
    est = estimate(inp)
    assert est.workload is w
    assert est.cost.capex_usd == 300_000.0
    assert est.cost.rent_label == "1 × AWS p5.48xlarge"  # the rented alternative was estimated
    assert est.cost.cloud_usd_per_run.likely == pytest.approx(98.32 * est.cost.cloud_hours_per_run.likely)


def test_a_saving_below_a_dollar_still_breaks_even():
    runs, months = break_even(1000.0, 10.5, 10.0, 1.0, 0.5)
    assert runs == pytest.approx(2000.0) and months == pytest.approx(2000 / 365)


def test_a_rent_group_without_an_offer_is_not_estimated():
    calls = []
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8))
    out = cost(inp, groups, est, lambda sub: calls.append(sub) or _same_time(sub))
    assert calls == [] and out.cloud_usd_per_run is None


def test_the_rented_alternative_gets_the_scenarios_workload_site_and_terms():
    calls = []
    rent = NodeGroup(H100, per_node=8, cloud=P5)
    inp, groups, est = _owned_input(rent, pricing="reserved")
    # the user's calibration of the rented device applies to the rented run as well
    inp = replace(inp, calibrations=(Calibration("h100", "train", 0.9, 3),))
    cost(inp, groups, est, lambda sub: calls.append(sub) or _same_time(sub))
    sub = calls[0]
    assert sub.workload is inp.workload and sub.site is inp.site and sub.calibrations == inp.calibrations
    assert (sub.finance.maintenance_fraction_per_year, sub.finance.pricing) == (0.1, "reserved")
    # another workload on the same rented hardware is estimated anew, not taken from the cache
    other = EstimateInput(Workload(params=2e9), inp.groups, inp.site, inp.finance)
    cost(other, groups, _owned_input(rent)[2], lambda sub: calls.append(sub) or _same_time(sub))
    assert len(calls) == 2 and calls[1].workload.params == 2e9


def test_a_rented_alternative_that_is_infeasible_is_no_comparison_even_with_a_time():
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5))
    out = cost(inp, groups, est, lambda sub: _estimate(Range.exact(3600.0), feasible=False))
    assert out.cloud_usd_per_run is None
    assert est.finding("rent_not_comparable").values == {}


def test_several_rented_instances_and_nodes_multiply_the_rate():
    # the alternative is two p5 instances: $196.64 an hour
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, nodes=2, cloud=P5))
    out = cost(inp, groups, est, _same_time)
    assert out.cloud_usd_per_run.likely == pytest.approx(196.64)
    assert any("would take 1 h per run" in a for a in est.assumptions)
    # a rented cluster of two offers at spot prices: 2 × $40 + 1 × $20
    cheap = CloudOffer("c", "X", "x8", 30.0, 8, usd_per_hour_spot=20.0)
    rented = (NodeGroup(H100, per_node=8, nodes=2, cloud=P5), NodeGroup(H100, per_node=8, cloud=cheap))
    inp = EstimateInput(Workload(), rented, Site(), Finance(pricing="spot"))
    out = cost(inp, rented, _estimate(Range.exact(3600.0)), _same_time)
    assert out.cloud_usd_per_run.likely == pytest.approx(100.0)
    assert out.rent_label == "2 × AWS p5.48xlarge + 1 × X x8"


def test_owned_nodes_multiply_the_capex():
    owned = NodeGroup(H100, per_node=8, nodes=2, capex_usd_per_node=300_000.0)
    out = cost(EstimateInput(Workload(), (owned,)), (owned,), _estimate(), _same_time)
    assert out.capex_usd == 600_000.0


def test_two_hour_runs_amortise_over_fewer_runs_a_year():
    # two-hour runs at 50% use: 2,190 runs a year; maintenance $30k / 2,190 = $13.70 a run; capex
    # $300k / (2,190 × 4) = $34.25 a run, scaled by each case's hours over the likely 2
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5))
    est.time_s = TWO_HOURS
    out = cost(inp, groups, est, _same_time)
    maint, amortised = 30_000 / 2190, 300_000 / (2190 * 4)
    o = out.owned_usd_per_run
    assert (o.low, o.likely, o.high) == pytest.approx((1 + maint + amortised / 2, 2 + maint + amortised,
                                                       4 + maint + amortised * 2))
    # the rented alternative, one hour at $98.32, 4,380 times a year (its own runs are shorter)
    rented = NodeGroup(H100, per_node=8, cloud=P5)
    r_inp = EstimateInput(Workload(), (rented,), Site(), Finance(utilization=0.5))
    r_out = cost(r_inp, (rented,), _estimate(TWO_HOURS), _same_time)
    assert r_out.rent_usd_per_year == pytest.approx(2 * 98.32 * 0.5 * 8760 / 2)


def test_break_even_without_use_has_runs_but_no_months():
    # hardware never in use breaks even after as many runs as ever, but never in calendar time
    likely, runs, months = _break_even_range(300_000.0, Range(49.16, 98.32, 196.64), Range(1.0, 2.0, 4.0),
                                             Range(0.5, 1.0, 2.0), 0.0)
    assert likely == (pytest.approx(300_000 / 96.32), None)
    assert (runs.low, runs.likely, runs.high) == pytest.approx((300_000 / 195.64, 300_000 / 96.32, 300_000 / 45.16))
    assert months is None


def test_the_break_even_months_range_has_its_likely_value():
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5))
    out = cost(inp, groups, est, _same_time)
    assert out.break_even_months_range.likely == pytest.approx(out.break_even_months)
    note_est = _owned_input(NodeGroup(H100, per_node=8, cloud=CloudOffer("c", "X", "x8", 1.0, 8)))
    cost(note_est[0], note_est[1], note_est[2], _same_time)
    note = note_est[2].finding("rent_cheaper")
    assert note.values == {} and "never breaks even" in note.text


def test_without_an_energy_figure_no_electricity_is_counted():
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5))
    est.energy_kwh = None
    out = cost(inp, groups, est, _same_time)
    assert out.electricity_usd_per_run == Range.exact(0.0)
    assert out.owned_usd_per_run is None and out.rent_usd_per_year is None
    inp, groups, est = _owned_input(NodeGroup(H100, per_node=8, cloud=P5))
    est.energy_kwh_per_year = None
    assert cost(inp, groups, est, _same_time).owned_usd_per_year == pytest.approx(75_000 + 30_000)


def test_unpriced_hardware_has_no_maintenance_cost():
    owned = NodeGroup(NO_TDP)
    inp = EstimateInput(Workload(), (owned,), Site(electricity_usd_per_kwh=0.2),
                        Finance(maintenance_fraction_per_year=0.1))
    est = _estimate()
    est.energy_kwh = Range(5.0, 10.0, 20.0)
    m = cost(inp, (owned,), est, _same_time).owned_marginal_usd_per_run
    assert (m.low, m.likely, m.high) == pytest.approx((1.0, 2.0, 4.0))


# comm and topology

UNIT = Topology(devices=4, per_node=2, nodes=2, domain=2, intra_gbs=1.0, intra_latency_s=0.0, node_gbs=1.0,
                inter_latency_s=0.0, nic_count=1, intra_name="", inter_name="", intra_assumed=False,
                inter_assumed=False)


def test_a_gigabyte_per_second_is_ten_to_the_nine_bytes():
    # 1 GB over 1 GB/s with no latency takes exactly one second, inside and across nodes
    assert point_to_point(1e9, False, UNIT) == pytest.approx(1.0, rel=1e-12)
    assert point_to_point(1e9, True, UNIT) == pytest.approx(2.0, rel=1e-12)  # two devices share the NIC
    assert all_reduce(1e9, Group(2, 2), UNIT) == pytest.approx(1.0, rel=1e-12)  # 2 × 1/2 of the data
    assert all_reduce(1e9, Group(2, 1), UNIT) == pytest.approx(2.0, rel=1e-12)
    assert all_to_all(2e9, Group(2, 2), UNIT) == pytest.approx(1.0, rel=1e-12)
    # over two nodes a rank sends 1 GB to its neighbour and 2 GB across, and its node's two devices
    # share the NIC: 2 × 2 GB over 1 GB/s
    assert all_to_all(4e9, Group(4, 2), UNIT) == pytest.approx(4.0, rel=1e-12)


def test_two_ranks_are_placed_and_two_domains_pay_the_network_latency():
    assert place(2, 1, FAST) == Group(2, 2)
    assert place(4, 3, FAST) == Group(4, 2)  # 8 // 3 = 2 ranks of a domain, a whole number
    # one rank in each of two nodes: 2 × 1/2 of the data over the shared NICs, 2 × 1 network step
    n = 1e9
    assert all_reduce(n, Group(2, 1), FAST) == pytest.approx(8 * n / 50e9 + 2 * 10e-6)


def test_forty_gigabit_ethernet_is_rdma_and_named_links_are_named():
    assert link_family(Link("e40", "40 GbE", "ethernet", 5.0)) == "ethernet"
    nvlink = Link("nvl", "NVLink 4", "nvlink", 450.0, 1.0)
    t = topology_of((NodeGroup(H100, per_node=8, intra=nvlink),))
    assert (t.intra_name, t.intra_assumed, t.intra_latency_s) == ("NVLink 4", False, pytest.approx(1e-6))
    two = topology_of((NodeGroup(Device("p", "P", "workstation"), per_node=2, nodes=2),))
    assert (two.intra_name, two.intra_assumed) == ("PCIe (assumed)", True)
    assert (two.inter_name, two.inter_assumed) == ("1 Gb Ethernet (assumed)", True)


def test_the_slowest_network_is_named_by_its_rate_times_its_nics():
    # two single-node groups: four 25 GbE NICs (4 × 2.34 GB/s) are slower than one 400 Gb/s IB NIC
    a = NodeGroup(H100, per_node=8, inter=GBE_25, nic_count=4)
    b = NodeGroup(H100, per_node=8, inter=IB, nic_count=1)
    assert topology_of((b, a)).inter_name == "25 GbE"
    # one IB NIC (45 GB/s) is slower than two 33 GB/s Ethernet NICs (2 × 30 GB/s)
    c = NodeGroup(H100, per_node=8, inter=Link("e", "Eth 266G", "ethernet", 100 / 3), nic_count=2)
    assert topology_of((c, b)).inter_name == "InfiniBand NDR"


def test_the_pace_falls_back_to_fp16_then_zero_and_ties_go_to_less_bandwidth():
    a = Device("a", "A", peak_tflops={"bf16": 100.0})
    b = Device("b", "B", peak_tflops={"fp16": 200.0})
    assert slowest_device((NodeGroup(b), NodeGroup(a))) is a
    small = Device("f", "F", peak_tflops={"fp32": 0.5})
    assert slowest_device((NodeGroup(small), NodeGroup(Device("e", "E")))).id == "e"
    no_bw = Device("n", "N", peak_tflops={"bf16": 100.0})
    some_bw = Device("s", "S", peak_tflops={"bf16": 100.0}, mem_bandwidth_gbs=0.5)
    assert slowest_device((NodeGroup(some_bw), NodeGroup(no_bw))) is no_bw
