"""The collectives and the power model against their textbook forms, on numbers a reader can check
by hand: a ring all-reduce moves 2(n-1)/n of the data per rank, a reduce-scatter half of that
(Patarasuk and Yuan 2009); across domains each device's share goes over its node's NICs, shared by
every device of the node; each step pays a latency; a system's rated power scales from its idle
share to its rating; independent uncertainties combine in quadrature on a log scale."""

from __future__ import annotations

import math

import pytest

from gpudesk.core.estimate import Device, NodeGroup
from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.comm import (
    Group,
    all_gather,
    all_reduce,
    all_to_all,
    exposed,
    place,
    point_to_point,
    reduce_scatter,
)
from gpudesk.core.estimate.power import combine, group_power
from gpudesk.core.estimate.topology import Topology
from gpudesk.core.estimate.types import Range

GB = 1e9
# 8 devices a node on a 100 GB/s fast link (1 us), 4 nodes joined by 50 GB/s of NICs (10 us)
TOPO = Topology(devices=32, per_node=8, nodes=4, domain=8, intra_gbs=100.0, intra_latency_s=1e-6,
                node_gbs=50.0, inter_latency_s=10e-6, nic_count=4, intra_name="fast", inter_name="net",
                intra_assumed=False, inter_assumed=False)


def test_groups_are_placed_by_their_stride():
    assert place(1, 1, TOPO) == Group(1, 1)
    assert place(8, 1, TOPO) == Group(8, 8)  # tensor parallel inside the node
    assert place(4, 8, TOPO) == Group(4, 1)  # data parallel across nodes, one rank a node
    assert place(16, 2, TOPO) == Group(16, 4)  # every other device: 4 a node, 4 nodes
    assert place(16, 2, TOPO).domains == 4
    assert Group(15, 8).domains == 2  # a partial domain is still a domain


def test_an_all_reduce_inside_a_node_is_the_ring_formula_plus_its_steps():
    g = place(8, 1, TOPO)
    n = 1 * GB
    expected = 2 * 7 / 8 * n / (100 * GB) + 2 * 7 * 1e-6
    assert all_reduce(n, g, TOPO) == pytest.approx(expected)
    assert reduce_scatter(n, g, TOPO) == pytest.approx(7 / 8 * n / (100 * GB) + 7 * 1e-6)
    assert all_gather is reduce_scatter
    # more messages pay more latency, not more bandwidth
    assert all_reduce(n, g, TOPO, messages=3) - all_reduce(n, g, TOPO) == pytest.approx(2 * 2 * 7 * 1e-6)


def test_across_nodes_the_nics_are_shared_by_every_device_of_a_node():
    g = place(4, 8, TOPO)  # one rank a node: the whole exchange is on the network
    n = 1 * GB
    across = 2 * 3 / 4 * n / 1 * 8 / (50 * GB)  # every one of the node's 8 devices sends at once
    latency = 2 * math.ceil(math.log2(4)) * 10e-6
    assert all_reduce(n, g, TOPO) == pytest.approx(across + latency)
    # hierarchical: the slower level sets the pace, the faster one hides under it
    h = place(32, 1, TOPO)
    t_in = 2 * 7 / 8 * n / (100 * GB)
    t_out = 8 * (2 * 3 / 4 * n / 8) / (50 * GB)
    assert all_reduce(n, h, TOPO) == pytest.approx(max(t_in, t_out) + 2 * 7 * 1e-6 + 2 * 2 * 10e-6)


def test_nothing_to_send_costs_nothing():
    for fn in (all_reduce, reduce_scatter):
        assert fn(0.0, place(8, 1, TOPO), TOPO) == 0.0
        assert fn(1 * GB, Group(1, 1), TOPO) == 0.0
    assert all_to_all(1 * GB, Group(1, 1), TOPO) == 0.0
    assert point_to_point(0.0, True, TOPO) == 0.0


def test_an_all_to_all_sends_each_peer_its_share():
    n = 1 * GB
    inside = place(8, 1, TOPO)
    assert all_to_all(n, inside, TOPO) == pytest.approx(7 / 8 * n / (100 * GB) + 1e-6)
    spread = place(16, 1, TOPO)  # 8 in this node, 8 in the next
    t_in = 7 / 16 * n / (100 * GB)
    t_out = 8 * (8 / 16 * n) / (50 * GB)
    assert all_to_all(n, spread, TOPO) == pytest.approx(max(t_in, t_out) + 1e-6 + 10e-6)


def test_a_pipeline_send_crossing_nodes_shares_the_nics():
    n = 0.1 * GB
    assert point_to_point(n, False, TOPO) == pytest.approx(n / (100 * GB) + 1e-6)
    assert point_to_point(n, True, TOPO) == pytest.approx(8 * n / (50 * GB) + 10e-6)


def test_exposed_communication_is_what_compute_cannot_hide():
    assert exposed(1.0, 10.0, 0.8) == pytest.approx(0.2)  # a long window hides the overlappable share
    assert exposed(1.0, 0.5, 0.8) == pytest.approx(0.6)  # a short one hides only 0.8 x its length
    assert exposed(1.0, 10.0, 0.0) == 1.0
    assert exposed(0.0, 1.0, 0.8) == 0.0


def test_a_rated_system_draws_from_its_idle_share_to_its_rating():
    dev = Device("x", "X", tdp_w=700.0)
    g = NodeGroup(dev, per_node=8, nodes=3, system_power_w=10_200.0)
    busy, idle = group_power(g, 1.0)
    assert busy == pytest.approx(3 * 10_200.0)  # never above the rating
    assert idle == pytest.approx(3 * 10_200.0 * C.SYSTEM_IDLE_SHARE)
    half, _ = group_power(g, 0.5)
    assert half == pytest.approx(3 * 10_200.0 * (C.SYSTEM_IDLE_SHARE + (1 - C.SYSTEM_IDLE_SHARE) * 0.5))
    assert 0.2 <= C.SYSTEM_IDLE_SHARE <= 0.4  # DGX-class servers idle at a quarter to a third of their rating


def test_hosts_add_their_share_and_an_unknown_tdp_is_unknown():
    dev = Device("x", "X", device_class="datacenter", tdp_w=500.0, idle_w=50.0)
    g = NodeGroup(dev, per_node=4, nodes=2)
    busy, idle = group_power(g, 1.0)
    share = C.NODE_OVERHEAD_SHARE.get("datacenter", 0.3)
    assert busy == pytest.approx(2 * (4 * 500.0 + share * 500.0 * 4))
    assert idle == pytest.approx(2 * (4 * 50.0 + share * 500.0 * 4 * 0.5))  # a catalogued idle figure wins
    own = NodeGroup(dev, per_node=4, nodes=2, node_overhead_w=800.0)
    assert group_power(own, 1.0)[0] == pytest.approx(2 * (4 * 500.0 + 800.0))
    assert group_power(own, 0.0)[1] == pytest.approx(2 * (4 * 50.0 + 400.0))
    assert group_power(NodeGroup(Device("y", "Y"), per_node=1), 1.0) == (None, None)


def test_independent_uncertainties_combine_in_quadrature():
    a = Range(0.5, 1.0, 2.0)
    b = Range(1.0, 2.0, 4.0)
    c = combine(a, b)
    assert c.likely == pytest.approx(2.0)
    spread = math.hypot(math.log(2), math.log(2))  # not log 4, the worst case on worst case
    assert c.low == pytest.approx(2.0 * math.exp(-spread))
    assert c.high == pytest.approx(2.0 * math.exp(spread))
    # a certain factor adds no spread
    sure = combine(a, Range(3.0, 3.0, 3.0))
    assert (sure.low, sure.likely, sure.high) == pytest.approx((1.5, 3.0, 6.0))
    assert combine(Range(0.0, 0.0, 1.0), b).likely == 0.0


def _site_run(workload, device, per_node=1, nodes=1, pue=1.25, grid=400.0, utilization=0.5):
    from gpudesk.core.estimate import EstimateInput, Site, estimate
    from gpudesk.core.estimate.types import Finance

    group = NodeGroup(device, per_node=per_node, nodes=nodes, node_overhead_w=0.0)
    return estimate(EstimateInput(workload, (group,), Site(grid_gco2e_per_kwh=grid, pue=pue),
                                  Finance(utilization=utilization)))


H100 = Device("h100", "H100 SXM", "datacenter", vendor="NVIDIA", memory_gb=80, mem_bandwidth_gbs=3350, tdp_w=700,
              peak_tflops={"bf16": 989, "fp16": 989}, architecture="Hopper", tensor_cores=528, form_factor="SXM")


def test_serving_draws_the_decode_share_and_energy_is_power_times_time():
    from gpudesk.core.estimate import Workload

    w = Workload(kind="infer", params=8e9, layers=32, d_model=4096, heads=32, kv_heads=8, vocab=128256,
                 prompt_tokens=512, output_tokens=256, concurrency=16)
    e = _site_run(w, H100)
    idle = 700 * C.IDLE_FRACTION
    for case, activity in zip(("low", "likely", "high"), sorted(C.ACTIVITY["decode"].pick(c) for c in (0, 1, 2))):
        assert getattr(e.power_w, case) == pytest.approx(1.25 * (idle + (700 - idle) * activity))
    assert C.ACTIVITY["decode"].likely < C.ACTIVITY["train"].likely  # decoding is memory-bound: less than training
    assert e.energy_kwh.likely == pytest.approx(e.power_w.likely * e.time_s.likely / 3.6e6)
    assert e.co2_kg.likely == pytest.approx(e.energy_kwh.likely * 0.4)
    # a year at 50% utilisation: busy half the hours at the likely draw, idle the rest
    assert e.energy_kwh_per_year == pytest.approx((e.power_w.likely * 0.5 + 1.25 * idle * 0.5) * 8760 / 1000)
    assert e.co2_kg_per_year == pytest.approx(e.energy_kwh_per_year * 0.4)


def test_a_device_without_a_power_figure_leaves_power_energy_and_co2_unknown():
    from dataclasses import replace

    from gpudesk.core.estimate import Workload

    w = Workload(kind="infer", params=8e9, layers=32, d_model=4096, heads=32, kv_heads=8, vocab=128256)
    e = _site_run(w, replace(H100, tdp_w=None, name="Mystery GPU"))
    assert e.feasible and e.power_w is None and e.energy_kwh is None and e.co2_kg is None
    note = next(n for n in e.notes if n.code == "no_tdp")
    assert "Mystery GPU" in note.text and note.values["items"] == "Mystery GPU"
