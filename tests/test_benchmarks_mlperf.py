"""MLPerf results beyond the LoadGen logs: training logs that print their own system description
(:::SYSJSON), CPU-only systems, the endpoints harness's result_summary.json, and the hardware of the
newest submissions (GB300, MI355X). Real files from the MLCommons results repositories
(tests/data/bench/PROVENANCE.md); the expected figures are read off the files by hand."""

from __future__ import annotations

import json
import shutil

import pytest

from gpudesk.core.benchmarks import mlperf
from gpudesk.core.benchmarks.detect import detect, parse_any
from gpudesk.core.benchmarks.matching import match_hardware
from gpudesk.core.benchmarks.store import import_files, open_questions, stored_measurements

from .test_benchmarks_importers import BENCH, TRAINING_SYSTEM

SYSJSON_LOG = BENCH / "mlperf-training-sysjson" / "v4.0_NVIDIA_eos_n8_gnn_result_0_SYSJSON.txt"
EOS_SYSTEM = BENCH / "mlperf-training-sysjson" / "v4.0_NVIDIA_systems_eos_n8_ngc24.04_dgl.json"
CPU_SUMMARY = BENCH / "mlperf-inference-cpu" / "v5.1_Intel_1-node-2S-GNR_128C_llama3_1-8b_Offline_run_1_mlperf_log_summary.txt"
CPU_SYSTEM = BENCH / "mlperf-inference-cpu" / "v5.1_closed_Intel_systems_1-node-2S-GNR_128C.json"
RESULT_SUMMARY = BENCH / "mlperf-endpoints" / "v6.1_NVIDIA_VR-NVL72_deepseek-r1_Offline_performance_result_summary.json"
VR_SYSTEM = BENCH / "mlperf-endpoints" / "v6.1_closed_NVIDIA_systems_VR-NVL72_VR-288GB_aarch64x72_TRT.json"
GB300_SYSTEM = BENCH / "mlperf-systems" / "v5.1_closed_CoreWeave_systems_GB300-NVL8-CoreWeave_TRT.json"
MI355X_SYSTEM = BENCH / "mlperf-systems" / "v5.1_open_AMD_systems_8xMI355X_2xEPYC_9575F.json"


def by(measurements, metric, statistic):
    found = [m for m in measurements if m.metric == metric and m.statistic == statistic]
    assert len(found) == 1, (metric, statistic, [(m.metric, m.statistic) for m in measurements])
    return found[0]


# ----------------------------------------------------------------------------------- :::SYSJSON training logs
def test_a_training_log_with_sysjson_is_a_training_result_not_a_system_description():
    text = SYSJSON_LOG.read_text(encoding="utf-8")
    assert text.startswith(":::SYSJSON {")  # the system description comes first, twice
    assert detect(text) == "mlperf-training"
    assert not mlperf.looks_like_system(text[:16384]) and mlperf.looks_like_training(text[:16384])


def test_the_hardware_comes_from_the_sysjson_line_when_the_log_is_alone(tmp_path):
    alone = tmp_path / "result_0.txt"
    shutil.copy(SYSJSON_LOG, alone)
    r = parse_any(alone)
    assert r.format == "mlperf-training" and not r.errors
    ttt = by(r.measurements, "time_to_train_s", "run_start to run_stop")
    # run_start 1714155569585 ms, run_stop 1714155734127 ms (status "success")
    assert ttt.value == pytest.approx(164.542)
    assert (ttt.accelerator_id, ttt.accelerator_count, ttt.match_confidence) == ("h100-sxm5-80gb", 64, "exact")
    assert ttt.hardware_text == "NVIDIA H100-SXM5-80GB" and ttt.hardware_key == "hw:NVIDIA H100-SXM5-80GB"
    assert ttt.conditions["system_name"] == "Eos_n8" and ttt.conditions["number_of_nodes"] == 8
    assert ttt.workload["benchmark"] == "gnn" and ttt.conditions["submission_platform"] == "8xNVIDIA DGX H100"
    assert any(p.severity == "info" and ":::SYSJSON" in p.message and "64 × NVIDIA H100-SXM5-80GB" in p.message
               for p in r.problems)
    assert not any(p.severity == "question" for p in r.problems)  # nothing to ask


def test_a_system_description_given_with_the_log_is_still_honoured(tmp_path):
    dell, _ = mlperf.read_system(TRAINING_SYSTEM)  # 4 × L40S: not what the log says
    alone = tmp_path / "result_0.txt"
    shutil.copy(SYSJSON_LOG, alone)
    r = parse_any(alone, system=dell)
    ttt = by(r.measurements, "time_to_train_s", "run_start to run_stop")
    assert (ttt.accelerator_id, ttt.accelerator_count) == ("l40s", 4)
    warning = [p for p in r.problems if p.severity == "warning" and ":::SYSJSON" in p.message]
    assert warning and "4 × NVIDIA L40S" in warning[0].message and "64 × NVIDIA H100-SXM5-80GB" in warning[0].message


def test_importing_the_log_with_its_systems_json(catalogue):
    report = import_files(catalogue, [EOS_SYSTEM, SYSJSON_LOG])
    assert report.ok, report.format_text()
    assert [f.status for f in report.files] == ["context", "imported"]
    stored = stored_measurements(catalogue, source_file=SYSJSON_LOG.name)
    assert {(m.metric, m.accelerator_id, m.accelerator_count, m.match_confidence) for m in stored} == {
        ("time_to_train_s", "h100-sxm5-80gb", 64, "exact"), ("train_samples_per_s", "h100-sxm5-80gb", 64, "exact")}
    assert by(stored, "time_to_train_s", "run_start to run_stop").value == pytest.approx(164.542)


# ----------------------------------------------------------------------------------- CPU-only systems
def test_a_cpu_only_system_is_a_cpu_system_not_an_accelerator_named_na():
    info, problems = mlperf.read_system(CPU_SYSTEM)
    assert problems == []
    assert info["cpu_only"] is True and info["accelerator_model_name"] == "" and info["accelerator_count"] == 0
    assert info["host_processor_model_name"] == "INTEL(R) XEON(R) 6980P" and info["host_processors_per_node"] == 2
    r = parse_any(CPU_SYSTEM)
    assert r.format == "mlperf-system" and "CPU-only" in r.problems[0].message and "N/A" not in r.problems[0].message


def test_cpu_only_results_are_stored_as_cpu_runs(catalogue):
    report = import_files(catalogue, [CPU_SYSTEM, CPU_SUMMARY])
    assert report.ok, report.format_text()
    stored = stored_measurements(catalogue, source_file=CPU_SUMMARY.name)
    assert len(stored) == 11
    for m in stored:
        assert m.cpu_only and m.accelerator_id is None and m.accelerator_count == 0
        assert m.match_confidence == "exact" and m.hardware_text == "2 × INTEL(R) XEON(R) 6980P"
        assert "N/A" not in m.hardware_text and m.hardware_key == "cpu:2 × INTEL(R) XEON(R) 6980P"
        assert m.workload["benchmark"] == "llama3.1-8b" and m.workload["model"] == "Llama 3.1 8B"
    assert by(stored, "samples_per_s", "mean").value == pytest.approx(9.63192)
    assert by(stored, "output_tokens_per_s", "mean").value == pytest.approx(1232.89)
    assert by(stored, "latency_s", "p99").value == pytest.approx(1385.479444689)
    assert open_questions(catalogue) == []  # nothing to ask about a CPU run
    hw = report.files[1].hardware_list()
    assert [(h["accelerator_id"], h["count"], h["confidence"]) for h in hw] == [(None, 0, "exact")]
    assert "no accelerator" in report.format_text()


# ----------------------------------------------------------------------------------- result_summary.json
def test_the_endpoints_result_summary_is_recognised_and_read():
    text = RESULT_SUMMARY.read_text(encoding="utf-8")
    assert detect(text) == "mlperf-result-summary"
    system, _ = mlperf.read_system(VR_SYSTEM)
    r = parse_any(RESULT_SUMMARY, system=system)
    assert r.format == "mlperf-result-summary" and not r.errors
    ms = r.measurements
    assert len(ms) == 11 and all(m.format == "mlperf-inference" for m in ms)
    assert by(ms, "samples_per_s", "mean").value == pytest.approx(312.2314212203155)
    assert by(ms, "output_tokens_per_s", "mean").value == pytest.approx(1183326.8540322022)
    # ns -> s
    assert by(ms, "latency_s", "min").value == pytest.approx(8.755717433)
    assert by(ms, "latency_s", "mean").value == pytest.approx(2365.8640273136694)
    assert by(ms, "latency_s", "p99").value == pytest.approx(4798.364638562)
    assert by(ms, "latency_s", "p99.9").value == pytest.approx(5002.496035033)
    assert not [m for m in ms if m.metric in ("ttft_s", "tpot_s")]  # empty blocks in an Offline run
    m = ms[0]
    assert m.workload["benchmark"] == "deepseek-r1" and m.workload["model"] == "DeepSeek-R1"
    assert m.conditions["scenario"] == "Offline" and m.conditions["load_pattern"] == "max_throughput"
    assert m.conditions["samples_completed"] == 1600000 and m.conditions["qps_window"] == "run"
    assert m.conditions["duration_s"] == pytest.approx(5124.404179908)
    # Vera Rubin is not in the catalogue: 72 of them, asked
    assert (m.accelerator_id, m.accelerator_count, m.match_confidence) == (None, 72, "ask")
    assert "not a device gpudesk knows" in m.match_reason and m.hardware_text == "NVIDIA Vera Rubin"


def test_the_result_summary_finds_its_system_beside_it_and_imports(catalogue):
    report = import_files(catalogue, [RESULT_SUMMARY])
    assert report.ok and report.files[0].format == "mlperf-result-summary" and report.files[0].stored == 11
    assert any("found beside it" in p.message for p in report.files[0].problems)
    questions = open_questions(catalogue)
    assert [(q["hardware_text"], q["count"], q["measurements"]) for q in questions] == [("NVIDIA Vera Rubin", 72, 11)]


def test_a_bad_figure_in_a_result_summary_is_named_and_skipped(tmp_path):
    doc = json.loads(RESULT_SUMMARY.read_text(encoding="utf-8"))
    doc["qps"] = "fast"
    doc["state"], doc["complete"] = "interrupted", False
    doc["latency"]["min"] = -5
    path = tmp_path / "deepseek-r1_Server_result_summary.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = parse_any(path)
    assert r.format == "mlperf-result-summary"
    messages = {p.place: p.message for p in r.problems if p.severity == "warning"}
    assert "'fast' is not a number" in messages["key qps"]
    assert "interrupted" in messages["key state"] and "flagged" in messages["key state"]
    assert "negative min" in messages["key latency"]
    metrics = {(m.metric, m.statistic) for m in r.measurements}
    assert ("samples_per_s", "mean") not in metrics and ("latency_s", "min") not in metrics
    assert ("output_tokens_per_s", "mean") in metrics and len(r.measurements) == 9
    assert r.measurements[0].conditions["scenario"] == "Server"  # from the file's path


# ----------------------------------------------------------------------------------- the newest chips
@pytest.mark.parametrize("path, acc, count", [(GB300_SYSTEM, "gb300", 8), (MI355X_SYSTEM, "mi355x", 8)])
def test_newest_submissions_hardware(path, acc, count):
    info, problems = mlperf.read_system(path)
    assert problems == [] and not info["cpu_only"]
    m = match_hardware(info["accelerator_model_name"], info["accelerator_count"])
    assert (m.accelerator_id, m.count, m.confidence) == (acc, count, "exact")


def test_cpu_only_spelled_other_ways():
    # mlcommons/inference_results_v4.1 closed/Quanta_Cloud_Technology/systems/1-node-2S-EMR-PyTorch.json writes
    # "N/A" for the count as well as for the accelerator
    problems = []
    quanta = mlperf.system_info({"accelerator_model_name": "N/A", "accelerators_per_node": "N/A",
                                 "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8592+",
                                 "host_processors_per_node": 2, "number_of_nodes": "1"}, "quanta.json", problems)
    assert quanta["cpu_only"] and quanta["accelerator_count"] == 0 and problems == []
    # a system that names no accelerator but says it has 8 is not taken for a CPU system: its count is kept
    unnamed = mlperf.system_info({"accelerator_model_name": "", "accelerators_per_node": "8"}, "x.json", problems)
    assert not unnamed["cpu_only"] and unnamed["accelerator_count"] == 8
