"""The estimation engine on the seeds' questions and on hand-checkable cases."""

from __future__ import annotations

import json
import math

import pytest

from gpudesk.cli import main
from gpudesk.core.estimate import Device, EstimateInput, Link, NodeGroup, Site, Workload, estimate
from gpudesk.core.estimate.engine import break_even
from gpudesk.core.resolve import estimate_option, estimate_scenario
from gpudesk.core.scenario import load_scenario, parse_scenario

from .conftest import ROOT

EXAMPLES = ROOT / "resources" / "examples"


def options(catalogue, name):
    scenario = load_scenario(EXAMPLES / name)
    return {o.name: estimate_option(scenario, o, catalogue, "compare") for o in scenario.options()}


def pinned_options(catalogue, name, **workload):
    """The example's options with part of the workload pinned (as a user would in the editor)."""
    doc = json.loads((EXAMPLES / name).read_text())
    doc["workload"].update(workload)
    scenario = parse_scenario(doc, name)
    return {o.name: estimate_option(scenario, o, catalogue, "compare") for o in scenario.options()}


def test_100_jetson_nanos_are_far_slower_than_one_a100_and_say_why(catalogue):
    # the seed's question: with the best plan each cluster can run, how far behind are the Nanos?
    results = options(catalogue, "a100-vs-jetson-nanos.json")
    a100 = results["1 × A100 PCIe 40GB"]
    ten, hundred = results["10 × Jetson Nano (1 GbE)"], results["100 × Jetson Nano (1 GbE)"]
    assert a100.feasible and ten.feasible and hundred.feasible
    # 100 boards of 0.24 TFLOPS (FP32 accumulate) against one 312 TFLOPS tensor-core GPU
    assert hundred.time_s.likely > 10 * a100.time_s.likely
    assert ten.time_s.likely > 5 * hundred.time_s.likely
    # no tensor cores: the Nanos train at their FP32 rate, well below their FP16 figure
    assert any(n.code == "no_tensor_cores" and n.values["rate_tflops"] < n.values["peak_tflops"] for n in hundred.notes)
    assert hundred.mfu.likely < 0.25 < a100.mfu.likely
    # a Nano cannot hold the model's training state: the plan splits it across boards
    assert hundred.plan["pp"] * hundred.plan["tp"] > 1 or hundred.plan["sharding"] in ("zero2", "zero3", "hsdp")
    assert hundred.memory.capacity_gb < 4.0  # shared with the CPU and OS


def test_jetson_nanos_with_plain_data_parallelism_cannot_hold_561m_model_and_say_why(catalogue):
    results = pinned_options(catalogue, "a100-vs-jetson-nanos.json", sharding="none", tp=1, pp=1)
    for name in ("10 × Jetson Nano (1 GbE)", "100 × Jetson Nano (1 GbE)"):
        nano = results[name]
        assert not nano.feasible and not nano.memory.fits
        assert nano.reasons[0].code == "memory"
        text = " ".join(str(r) for r in nano.reasons)
        assert "cannot hold" in text and "GB" in text
        assert "full copy" in text  # plain data parallelism: adding devices does not help
        assert nano.memory.per_device_gb > nano.memory.capacity_gb
        assert nano.memory.min_devices is not None and nano.memory.min_devices > 1


def test_small_model_fits_nanos_but_gradient_exchange_is_a_large_cost(catalogue):
    results = options(catalogue, "a100-vs-jetson-nanos-small-model.json")
    a100 = results["1 × A100 PCIe 40GB"]
    nanos = results["100 × Jetson Nano (1 GbE)"]
    assert nanos.feasible and nanos.memory.fits
    # 28 MB of FP16 gradients ring-all-reduced over 1 GbE every step: 2·(n−1)/n · 28 MB at about
    # 0.09 GB/s is about 0.6 s, as long as most of the step's compute; DDP hides part of it behind
    # the backward pass
    b = nanos.breakdown
    assert 0.4 < b["gradient_exchange_s"] < 1.0
    assert b["gradient_exchange_s"] > 0.5 * b["compute_s"]
    assert b["gradient_exchange_exposed_s"] < b["gradient_exchange_s"]
    assert nanos.comm_share.likely > 0.1
    assert "Ethernet" in nanos.slowest_link
    assert a100.time_s.likely < nanos.time_s.likely  # one A100 still wins


def test_70b_fp16_needs_two_80gb_gpus(catalogue):
    results = options(catalogue, "llama3-70b-fp16-one-or-two-gpus.json")
    one, two = results["1 × H100 SXM 80GB"], results["2 × H100 SXM 80GB"]
    assert not one.feasible and not one.memory.fits and one.memory.min_devices == 2
    reason = str(one.reasons[0])
    assert "cannot serve" in reason and "141.2 GB" in reason
    assert two.feasible and two.memory.fits
    assert two.decode_tokens_per_s_per_user.likely > 0 and two.ttft_s.likely > 0


def test_nanochat_rented_h100_against_dgx_spark(catalogue):
    results = options(catalogue, "nanochat-8xh100-rented-vs-dgx-spark.json")
    cloud, spark = results["8 × H100 rented (Lambda)"], results["DGX Spark (owned)"]
    assert cloud.feasible and spark.feasible
    assert cloud.time_s.likely < spark.time_s.likely
    assert cloud.cost.cloud_usd_per_run.likely > 0
    assert spark.cost.capex_usd > 0 and spark.cost.break_even_runs > 0
    # the Spark draws far less power, but runs so much longer that a run costs more energy
    assert spark.power_w.likely < cloud.power_w.likely / 10
    assert spark.energy_kwh.likely > 0 and cloud.energy_kwh.likely > 0
    assert spark.co2_kg.likely == pytest.approx(spark.energy_kwh.likely * 0.38355, rel=1e-3)
    # the rented run on its own hardware sets the price the Spark has to beat
    assert spark.cost.cloud_usd_per_run.likely == pytest.approx(cloud.cost.cloud_usd_per_run.likely, rel=1e-6)


def test_break_even_from_the_seeds_own_inputs():
    # seed 002: about $3,000 of hardware, about $100 a cloud run, about $0.50 of power a run -> about 30 runs
    runs, months = break_even(3000, 100, 0.5, run_hours=10, utilization=0.5)
    assert runs == pytest.approx(30.15, abs=0.01)
    assert months == pytest.approx(runs * 10 / (730 * 0.5), rel=1e-9)
    assert break_even(3000, 0.4, 0.5, 10, 0.5) == (None, None)


def _device(**kw):
    base = dict(id="x", name="X", device_class="datacenter", memory_gb=80.0, mem_bandwidth_gbs=2000.0, tdp_w=400.0,
                peak_tflops={"bf16": 300.0, "fp16": 300.0, "fp32": 20.0})
    base.update(kw)
    return Device(**base)


def test_training_time_is_tokens_times_flops_over_rate_on_one_device():
    w = Workload(kind="train", params=1e9, tokens=1e10, seq_len=1024, precision="bf16", layers=24, d_model=1856,
                 heads=16, mfu=0.5, global_batch_tokens=262144)
    est = estimate(EstimateInput(w, (NodeGroup(_device()),), Site(grid_gco2e_per_kwh=400, pue=1.0)))
    flops = est.breakdown["flops_per_token"]
    assert flops == pytest.approx(6 * 1e9 + 12 * 24 * 1856 * 1024)
    assert est.time_s.likely == pytest.approx(1e10 * flops / (300e12 * 0.5), rel=1e-9)
    assert est.mfu.likely == pytest.approx(0.5, rel=1e-9)
    # energy = power x time and CO2 = energy x intensity, exactly
    assert est.energy_kwh.likely == pytest.approx(est.power_w.likely * est.time_s.likely / 3.6e6, rel=1e-12)
    assert est.co2_kg.likely == pytest.approx(est.energy_kwh.likely * 0.4, rel=1e-12)


def test_decode_is_bandwidth_bound_for_one_user():
    w = Workload(kind="infer", params=7e9, precision="fp16", layers=32, d_model=4096, heads=32, kv_heads=32,
                 prompt_tokens=128, output_tokens=128, concurrency=1)
    est = estimate(EstimateInput(w, (NodeGroup(_device(mem_bandwidth_gbs=1000.0)),)))
    bytes_per_token = 7e9 * 2
    upper = 1000e9 / bytes_per_token  # tokens/s if every byte moved at peak bandwidth
    assert est.breakdown["decode_bound"] == "memory bandwidth"
    assert 0.4 * upper < est.decode_tokens_per_s_per_user.likely < upper
    assert est.decode_tokens_per_s_per_user.high <= upper


def test_fp8_is_faster_than_bf16_but_less_than_twice():
    dev = _device(peak_tflops={"bf16": 1000.0, "fp8": 2000.0})
    def run(precision):
        w = Workload(kind="train", params=7e9, tokens=1e11, seq_len=4096, precision=precision, layers=32, d_model=4096)
        return estimate(EstimateInput(w, (NodeGroup(dev, per_node=8, intra=Link("nv", "NVLink", "nvlink", 450.0)),)))
    bf16, fp8 = run("bf16"), run("fp8")
    speedup = bf16.time_s.likely / fp8.time_s.likely
    assert 1.2 < speedup < 2.0


def test_missing_peak_is_a_reason_not_a_crash():
    w = Workload(kind="train", params=1e8, tokens=1e9, precision="bf16")
    est = estimate(EstimateInput(w, (NodeGroup(_device(peak_tflops={"fp4": 500.0})),)))
    assert not est.feasible
    assert est.reasons[0].code == "no_peak" and "no dense BF16 figure" in str(est.reasons[0])


def test_rent_comparison_uses_the_rented_hardware(catalogue):
    scenario = load_scenario(EXAMPLES / "nanochat-d20-8xh100.json")
    est = estimate_scenario(scenario, catalogue)
    assert est.cost.rent_label.endswith("p5.48xlarge")
    assert est.cost.cloud_usd_per_run.likely == pytest.approx(55.04 * est.time_s.likely / 3600, rel=1e-6)
    assert est.cost.break_even_runs > 1


def test_estimate_cli_json_contract(catalogue, capsys):
    code = main(["estimate", str(EXAMPLES / "nanochat-d20-8xh100.json"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    for key in ("feasible", "reasons", "tokens_per_s", "time_s", "mfu", "memory", "power_w", "energy_kwh", "co2_kg",
                "cost", "assumptions"):
        assert key in data, key
    for key in ("tokens_per_s", "time_s", "mfu", "power_w", "energy_kwh", "co2_kg"):
        assert set(data[key]) == {"low", "likely", "high"}
        assert data[key]["low"] <= data[key]["likely"] <= data[key]["high"]
    assert set(data["memory"]) >= {"per_device_gb", "capacity_gb", "fits", "min_devices"}
    assert set(data["cost"]) >= {"cloud_usd_per_run", "capex_usd", "owned_usd_per_run", "break_even_runs",
                                 "break_even_months"}
    assert data["assumptions"] and all(isinstance(a, str) for a in data["assumptions"])


def test_estimate_cli_inference_keys(catalogue, capsys):
    code = main(["estimate", str(EXAMPLES / "llama3-70b-serving-20-users.json"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["feasible"]
    assert set(data["ttft_s"]) == {"low", "likely", "high"}
    assert data["decode_tokens_per_s_per_user"]["likely"] > 0


def test_estimate_cli_text(catalogue, capsys):
    assert main(["estimate", str(EXAMPLES / "nanochat-d20-8xh100.json")]) == 0
    out = capsys.readouterr().out
    assert "Time to train" in out and "Break-even" in out and "Assumptions" in out


def test_estimate_cli_reports_bad_scenario(catalogue, capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"gpudesk_scenario": 1, "workload": {"kind": "train", "params": -5}, '
                   '"cluster": [{"item": "h100-sxm"}]}')
    assert main(["estimate", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "workload.params" in err and "greater than 0" in err
    bad.write_text('{"gpudesk_scenario": 1, "workload": {"kind": "train", "params": 5e8}, "cluster": [{"item": "h100-sxm"}]}')
    assert main(["estimate", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "cluster[0].item" in err and "h100-sxm5-80gb" in err  # names the field and suggests


def test_no_nan_in_any_example(catalogue):
    for path in EXAMPLES.glob("*.json"):
        scenario = load_scenario(path)
        for option in scenario.options():
            data = estimate_option(scenario, option, catalogue, "compare").to_json()
            text = json.dumps(data, allow_nan=False)  # raises on NaN or infinity
            assert text
            for value in _numbers(data):
                assert value >= 0 and not math.isnan(value), (path.name, option.name)


def _numbers(data):
    if isinstance(data, dict):
        for v in data.values():
            yield from _numbers(v)
    elif isinstance(data, list):
        for v in data:
            yield from _numbers(v)
    elif isinstance(data, (int, float)) and not isinstance(data, bool):
        yield float(data)


def test_the_optimistic_case_never_runs_recomputed_flops_past_the_ceiling(catalogue):
    """PaLM's 540B on two TPU v4 pods with rematerialisation: the high case used to reach 111% hardware
    utilisation, since the ceiling counted model FLOPs only; recomputed passes run on the chips too."""
    from gpudesk.core.estimate import constants as C

    doc = {"gpudesk_scenario": 1, "name": "palm", "workload": {
        "kind": "train", "params": 540.35e9, "tokens": 780e9, "seq_len": 2048, "layers": 118, "d_model": 18432,
        "heads": 48, "kv_heads": 1, "vocab": 256000, "precision": "bf16", "global_batch_tokens": 4194304,
        "tp": 12, "pp": 1, "checkpointing": True},
        "cluster": [{"item": "tpu-v4", "per_node": 3072, "nodes": 2, "intra": "tpu-ici-v4", "inter": "eth-100g",
                     "nic_count": 768}]}
    est = estimate_scenario(parse_scenario(doc, "palm"), catalogue)
    assert est.plan["recompute"] == "full"
    assert est.hfu.high == pytest.approx(C.UTILISATION_MAX, rel=0.01)  # the ceiling binds here
    assert est.hfu.high <= C.UTILISATION_MAX * (1 + 1e-9)
    assert est.mfu.high == pytest.approx(est.hfu.high / C.RECOMPUTE_FACTOR)
