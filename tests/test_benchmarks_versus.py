"""Measured against estimated, physical plausibility, and calibration from the stored measurements."""

from __future__ import annotations

import json
import math

import pytest

from gpudesk.core.benchmarks import llama_bench
from gpudesk.core.benchmarks.calibration import calibrations, error_before_after, median_abs_errors
from gpudesk.core.benchmarks.store import answer_hardware, import_files, stored_measurements
from gpudesk.core.benchmarks.versus import build_input, compare, compare_all, plausibility
from gpudesk.core.catalogue.convert import device_from_row
from gpudesk.core.estimate.engine import estimate
from gpudesk.core.estimate.types import Calibration

from .test_benchmarks_importers import (
    LLAMA_4080,
    LLAMA_CPU,
    LLAMA_M5,
    MLPERF_SUMMARY,
    MLPERF_SYSTEM,
    TRAINING_LOG,
    TRAINING_SYSTEM,
    TRTLLM,
    VLLM_RUN0,
)


def rtx4080(catalogue):
    import_files(catalogue, [LLAMA_4080])
    ms = stored_measurements(catalogue, accelerator_id="rtx-4080")
    return {m.metric: m for m in ms}


def test_llama_bench_rows_become_the_matching_workload(catalogue):
    ms = rtx4080(catalogue)
    inp, why, _notes = build_input(catalogue, ms["decode_tokens_per_s_per_user"])
    assert why == ""
    w = inp.workload
    assert (w.kind, w.params, w.weights_bytes, w.precision) == ("infer", 7615616512, 4677120000, "q4")
    assert (w.prompt_tokens, w.output_tokens, w.concurrency) == (0, 128, 1)
    assert inp.groups[0].device.id == "rtx-4080" and inp.groups[0].per_node == 1
    pp, _, _ = build_input(catalogue, ms["prefill_tokens_per_s"])
    assert (pp.workload.prompt_tokens, pp.workload.output_tokens) == (512, 1)


def test_versus_gives_the_engines_range_and_the_error(catalogue):
    ms = rtx4080(catalogue)
    for metric, field in (("decode_tokens_per_s_per_user", "decode_tokens_per_s_per_user"),
                          ("prefill_tokens_per_s", "prefill_tokens_per_s")):
        v = compare(catalogue, ms[metric])
        assert v.comparable and v.plausible, v.reason
        direct = getattr(estimate(v.estimate_input), field)
        assert v.estimated == direct
        assert v.error == pytest.approx((direct.likely - ms[metric].value) / ms[metric].value)
        assert v.kind == ("infer_decode" if "decode" in metric else "infer_prefill")
        assert json.dumps(v.to_json())


def test_not_comparable_says_why(catalogue):
    import_files(catalogue, [LLAMA_CPU, VLLM_RUN0, LLAMA_M5, MLPERF_SUMMARY, MLPERF_SYSTEM])
    reasons = {}
    for v in compare_all(catalogue):
        if not v.comparable:
            reasons.setdefault(v.measurement.metric + "/" + v.measurement.format, v.reason)
    assert "CPU-only" in reasons["prefill_tokens_per_s/llama-bench"]
    assert "hardware is not known" in reasons["request_throughput/vllm"]
    assert "no compute figure" in reasons.get("prompt_and_generation_tokens_per_s/llama-bench", "") or \
        "prompt processing" in reasons.get("prompt_and_generation_tokens_per_s/llama-bench", "")
    assert "latency_s" in reasons["latency_s/mlperf-inference"]
    m5 = [v for v in compare_all(catalogue, accelerator_id="apple-m5-max")
          if v.measurement.metric == "decode_tokens_per_s_per_user"][0]
    assert m5.comparable and any("Mixture of experts" in n for n in m5.notes)  # 3B of 35B used per token


def test_serving_files_compare_once_the_hardware_is_answered(catalogue):
    import_files(catalogue, [VLLM_RUN0])
    key = stored_measurements(catalogue, limit=1)[0].hardware_key
    answer_hardware(catalogue, key, "a100-sxm4-80gb", 1)
    got = {(v.measurement.metric, v.measurement.statistic): v for v in compare_all(catalogue)}
    tpot = got[("tpot_s", "mean")]
    assert tpot.comparable and tpot.estimated.low < tpot.estimated.likely < tpot.estimated.high
    assert any("guessed from the model name" in n for n in tpot.notes)
    assert got[("output_tokens_per_s", "mean")].comparable
    assert not got[("ttft_s", "p99")].comparable and "p99" in got[("ttft_s", "p99")].reason


def test_mlperf_and_trtllm_compare(catalogue):
    import_files(catalogue, [TRAINING_LOG, TRAINING_SYSTEM, TRTLLM])
    got = {(v.measurement.format, v.measurement.metric, v.measurement.statistic): v for v in compare_all(catalogue)}
    ttt = got[("mlperf-training", "time_to_train_s", "wall clock (RESULT line)")]
    assert ttt.comparable and ttt.kind == "train"
    assert ttt.estimate_input.workload.tokens == 2400288 * 512  # train_samples x sequence length
    assert ttt.estimate_input.groups[0].per_node == 4
    decode = got[("trtllm-bench", "decode_tokens_per_s_per_user", "mean")]
    assert decode.comparable and decode.estimate_input.workload.precision == "bf16"


def test_implausible_measurements_are_flagged_with_the_reason(catalogue):
    rec = json.loads(LLAMA_4080.read_text())
    rec[1]["avg_ts"] = 2000.0  # tg128 of a 4.7 GB model: 9.4 TB/s on a 717 GB/s card
    rec[0]["avg_ts"] = 50000.0  # pp512: 2 x 7.6e9 x 50,000 = 760 TFLOPS on a 195 TFLOPS card
    ms = {m.metric: m for m in llama_bench.parse(json.dumps(rec), "fast.json").measurements}
    device = device_from_row(catalogue.get("accelerators", "rtx-4080"))
    decode = plausibility(ms["decode_tokens_per_s_per_user"], device)
    assert decode and "717 GB/s" in decode[0] and "physically possible" in decode[0]
    prefill = plausibility(ms["prefill_tokens_per_s"], device)
    assert prefill and "TFLOPS" in prefill[0] and "peak" in prefill[0]
    real = {m.metric: m for m in llama_bench.parse(LLAMA_4080).measurements}
    assert plausibility(real["decode_tokens_per_s_per_user"], device) == []
    assert plausibility(real["prefill_tokens_per_s"], device) == []
    v = compare(catalogue, ms["decode_tokens_per_s_per_user"])
    assert not v.plausible and v.comparable


def test_calibration_moves_the_rtx4080_estimates_toward_the_measurements(catalogue):
    ms = rtx4080(catalogue)
    cals = {(c.device_id, c.kind): c for c in calibrations(catalogue)}
    decode, prefill = cals[("rtx-4080", "infer_decode")], cals[("rtx-4080", "infer_prefill")]
    assert decode.measurements == 1 and prefill.measurements == 1
    before_decode = compare(catalogue, ms["decode_tokens_per_s_per_user"])
    before_prefill = compare(catalogue, ms["prefill_tokens_per_s"])
    # factor = measured / estimated, with calibration off
    assert decode.factor == pytest.approx(ms["decode_tokens_per_s_per_user"].value / before_decode.estimated.likely)
    assert prefill.factor == pytest.approx(ms["prefill_tokens_per_s"].value / before_prefill.estimated.likely)
    rows = {r.measurement.metric: r for r in error_before_after(catalogue)}
    for metric in ("decode_tokens_per_s_per_user", "prefill_tokens_per_s"):
        r = rows[metric]
        assert abs(r.error_after) < abs(r.error_before), (metric, r.error_before, r.error_after)
        assert abs(r.error_after) < 0.1
        assert r.before == compare(catalogue, ms[metric]).estimated  # before = calibration off
        assert json.dumps(r.to_json())
    summary = median_abs_errors(rows.values())
    assert summary["after"] < summary["before"]
    # the engine reports that it used them
    est = estimate(build_input(catalogue, ms["decode_tokens_per_s_per_user"], tuple(cals.values()))[0])
    assert any(n.code == "calibrated" and "calibrated on 1 of your measurements" in str(n) for n in est.notes)


def test_calibration_uses_only_confirmed_plausible_measurements(catalogue, tmp_path):
    rec = json.loads(LLAMA_4080.read_text())[1]
    rec["avg_ts"] = 5000.0  # impossible on this card
    rec["test_time"] = "2025-04-25T00:00:00Z"
    impossible = tmp_path / "impossible.json"
    impossible.write_text(json.dumps([rec]))
    report = import_files(catalogue, [LLAMA_4080, LLAMA_CPU, impossible, VLLM_RUN0])
    assert report.ok
    cals = calibrations(catalogue)
    decode = [c for c in cals if c.device_id == "rtx-4080" and c.kind == "infer_decode"]
    assert decode and decode[0].measurements == 1  # the impossible row does not count
    assert {c.device_id for c in cals} == {"rtx-4080"}  # nor the CPU-only run, nor the unanswered vLLM run
    assert all(isinstance(c, Calibration) and math.isfinite(c.factor) and c.factor > 0 for c in cals)


def test_a_loaded_server_runs_what_fits_and_queues_the_rest(catalogue):
    from gpudesk.core.benchmarks.store import answer_model

    from .test_benchmarks_importers import SGLANG

    import_files(catalogue, [SGLANG])
    answer_hardware(catalogue, "sig:sglang:sglang", "h200-sxm-141gb", 8)
    answer_model(catalogue, "sig:sglang:sglang", model="Llama 3.1 70B", params=70.6e9, precision="bf16")
    got = {(v.measurement.metric, v.measurement.statistic): v
           for v in compare_all(catalogue, source_file=SGLANG.name) if v.measurement.record_index == 0}
    out = got[("output_tokens_per_s", "mean")]
    assert out.comparable and out.estimated.likely > 0
    assert 1 <= out.estimate_input.workload.concurrency < 3000
    assert any("queues the rest" in n for n in out.notes)
    e2e = got[("e2e_latency_s", "mean")]
    assert not e2e.comparable and "queued" in e2e.reason
