"""Physical consequences of the engine's constants: each test fails when a constant it names is
changed, by asserting what that constant means (hidden communication makes a step faster, a higher
idle draw costs energy, a bubble of (p-1)/(m*v), a Volta without FlashAttention) rather than by
repeating the number."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpudesk.core.estimate import Device, EstimateInput, Link, NodeGroup, Site, Workload, estimate, training
from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.power import group_power
from gpudesk.core.estimate.profiles import profile_of

H100 = Device("h100", "H100 SXM", "datacenter", vendor="NVIDIA", memory_gb=80, memory_type="HBM3",
              mem_bandwidth_gbs=3350, tdp_w=700, peak_tflops={"bf16": 989, "fp16": 989, "fp8": 1979},
              architecture="Hopper", tensor_cores=528, form_factor="SXM")
NVLINK = Link("nvlink4", "NVLink 4", "nvlink", 450.0, 1.0)
ETH_25 = Link("eth-25g", "25 GbE", "ethernet", 3.125, 10.0)


def _run(workload: Workload, nodes: int = 1, inter: Link | None = None, **group) -> EstimateInput:
    g = NodeGroup(H100, per_node=8, nodes=nodes, intra=NVLINK, inter=inter, **group)
    return EstimateInput(workload, (g,), Site(grid_gco2e_per_kwh=400.0, pue=1.0))


GPT2 = Workload(kind="train", params=124e6, tokens=1e9, seq_len=1024, layers=12, d_model=768, heads=12,
                kv_heads=12, vocab=50257, global_batch_tokens=524288, dp=16, tp=1, pp=1, sharding="zero1",
                tied_embeddings=True)


@pytest.fixture(autouse=True)
def _fresh_plans():
    training._SEARCH_CACHE.clear()
    yield
    training._SEARCH_CACHE.clear()


def test_hidden_gradient_exchange_is_the_overlap_share_and_makes_the_step_faster(monkeypatch):
    # two 8-GPU nodes on 400 Gb/s: the backward pass is longer than the gradient all-reduce, so
    # what hides behind it is the documented share (ZeRO-1 can overlap all of its exchange)
    inp = _run(GPT2, nodes=2, inter=replace(ETH_25, unidirectional_gbs=50.0))
    base = estimate(inp)
    b = base.breakdown
    assert 0 < b["gradient_exchange_s"] < b["compute_s"] / 3
    hidden = 1 - b["gradient_exchange_exposed_s"] / b["gradient_exchange_s"]
    assert hidden == pytest.approx(C.OVERLAP.likely, abs=0.02)
    assert 0.5 <= C.OVERLAP.likely <= 0.95  # what PyTorch DDP's bucketed all-reduce reaches
    # hiding nothing makes the step longer by the whole exchange's hidden part
    training._SEARCH_CACHE.clear()
    monkeypatch.setattr(C, "OVERLAP", C.Band(0.0, 0.0, 0.0, "nothing hidden"))
    exposed = estimate(inp)
    assert exposed.breakdown["gradient_exchange_exposed_s"] == pytest.approx(exposed.breakdown["gradient_exchange_s"])
    assert exposed.time_s.likely > base.time_s.likely
    assert exposed.time_s.likely - base.time_s.likely == pytest.approx(
        (exposed.breakdown["gradient_exchange_s"] - b["gradient_exchange_exposed_s"])
        * base.time_s.likely / b["step_s"], rel=0.1)  # the step's fixed overhead scales with it
    # on 25 GbE the exchange outlasts the backward pass: only the backward pass's length hides
    training._SEARCH_CACHE.clear()
    monkeypatch.setattr(C, "OVERLAP", C.Band(0.5, 0.8, 0.92, "as documented"))
    slow = estimate(_run(GPT2, nodes=2, inter=ETH_25)).breakdown
    assert slow["gradient_exchange_exposed_s"] > 0.5 * slow["gradient_exchange_s"]


def test_idle_draw_is_twelve_percent_of_tdp_and_a_higher_one_costs_energy(monkeypatch):
    g = NodeGroup(H100, per_node=8, nodes=1, node_overhead_w=0)
    busy, idle = group_power(g, 0.85)
    # an H100 with no catalogued idle figure draws 12% of its 700 W idle (nvidia-smi on idle
    # SXM boards reads 60-90 W) and the rest in proportion to its activity
    assert idle == pytest.approx(8 * 0.12 * 700)
    assert busy == pytest.approx(8 * (0.12 * 700 + 0.85 * 0.88 * 700))
    one_node = replace(GPT2, dp=8)
    base = estimate(_run(one_node, node_overhead_w=0))
    training._SEARCH_CACHE.clear()
    monkeypatch.setattr(C, "IDLE_FRACTION", 0.40)
    hungrier = estimate(_run(one_node, node_overhead_w=0))
    assert hungrier.time_s.likely == pytest.approx(base.time_s.likely)
    # while training the devices are busy 85% of the way from idle to TDP: a higher idle floor
    # raises the draw by (0.40 + 0.60 * 0.85) / (0.12 + 0.88 * 0.85)
    a = C.ACTIVITY["train"].likely
    assert hungrier.energy_kwh.likely / base.energy_kwh.likely == pytest.approx(
        (0.40 + 0.60 * a) / (0.12 + 0.88 * a), rel=0.01)
    assert hungrier.energy_kwh_per_year > base.energy_kwh_per_year


def test_the_pipeline_bubble_is_p_minus_one_over_m_v():
    w = Workload(kind="train", params=8e9, tokens=1e9, seq_len=4096, layers=32, d_model=4096, heads=32, kv_heads=8,
                 vocab=128256, global_batch_tokens=4096 * 64, tp=1, pp=4, dp=2, micro_batch=1, vpp=2,
                 sharding="zero1", recompute="none")
    est = estimate(_run(w))
    b = est.breakdown
    m = 64 // 2  # micro-batches per pipeline
    assert b["pipeline_bubble_s"] == pytest.approx(b["compute_s"] * (4 - 1) / (m * 2), rel=0.02)


def test_volta_has_no_flashattention_and_its_matmul_share_is_measured():
    v100 = replace(H100, id="v100", name="V100", architecture="Volta", peak_tflops={"fp16": 125}, form_factor="SXM2")
    profile = profile_of(v100)
    assert profile.key == "nvidia-volta"
    assert not profile.flash  # FlashAttention needs sm75/sm80 and later
    assert profile.matmul == pytest.approx(85 / 125, abs=0.01)


def test_a_slower_network_never_makes_training_faster():
    fast = estimate(_run(GPT2, nodes=2, inter=replace(ETH_25, unidirectional_gbs=50.0)))
    training._SEARCH_CACHE.clear()
    slow = estimate(_run(GPT2, nodes=2, inter=ETH_25))
    assert slow.time_s.likely >= fast.time_s.likely
    assert slow.breakdown["gradient_exchange_s"] > 4 * fast.breakdown["gradient_exchange_s"]
