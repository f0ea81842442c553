"""The importers on the real files (tests/data/bench, see PROVENANCE.md there): format detected from
the content, hardware, metrics, units and values checked by hand against the files; and bad input
for every importer: each problem names the file, the place and what is wrong."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.benchmarks import (
    gpudesk_schema,
    llama_bench,
    mlperf,
    nccl_tests,
    sglang,
    trtllm_bench,
    vllm,
)
from gpudesk.core.benchmarks.detect import detect, parse_any
from gpudesk.core.benchmarks.types import METRICS, parse_number, to_seconds

from .conftest import TEST_DATA

BENCH = TEST_DATA / "bench"
LLAMA_4080 = BENCH / "llama-bench" / "llamacpp-README_RTX4080_CUDA_build5163_array.json"
LLAMA_M5 = BENCH / "llama-bench" / "jimliddle_AppleM5Max_metal.jsonl"
LLAMA_CPU = BENCH / "llama-bench" / "ik_llama.cpp_PR273-discussion_XeonE5-2690v3_CPU-only_old-schema.json"
VLLM_LAMBDA = BENCH / "vllm" / "LambdaLabsML_1xH100-80GB-SXM_benchmark-serving_llama3.1-8B-FP8_len2048.json"
VLLM_FAILED = BENCH / "vllm" / "er0080_bench-serve_all-failed.json"
VLLM_RUN0 = BENCH / "vllm" / "er0080_bench-sweep_run0.json"
VLLM_SUMMARY = BENCH / "vllm" / "er0080_bench-sweep_summary-array.json"
SGLANG = BENCH / "sglang" / "datacrunch_H200_llama70b_offline_Infinity.jsonl"
TRTLLM = BENCH / "trtllm-bench" / "masahiro_RTX4070Ti_report.json"
MLPERF_DIR = BENCH / "mlperf-inference"
MLPERF_SUMMARY = MLPERF_DIR / "v4.1_AMD_8xMI300X_llama2-70b-99_Offline_run_1_mlperf_log_summary.txt"
MLPERF_DETAIL = MLPERF_DIR / "v4.1_AMD_8xMI300X_llama2-70b-99_Offline_run_1_mlperf_log_detail_EXCERPT_first3_last22_lines.txt"
MLPERF_SYSTEM = MLPERF_DIR / "v4.1_closed_AMD_systems_8xMI300X_2xEPYC-9374F.json"
TRAINING_DIR = BENCH / "mlperf-training"
TRAINING_LOG = TRAINING_DIR / "v4.0_Dell_R760xax4L40S_bert_result_0_EXCERPT.txt"
TRAINING_SYSTEM = TRAINING_DIR / "v4.0_Dell_systems_R760xax4L40S.json"
TRAINING_SCALING = TRAINING_DIR / "v4.0_Dell_R760xax4L40S_bert_scaling.json"
NCCL = BENCH / "nccl-tests" / "lessizzmore_2node_16xH100-80GB_all_reduce_perf_stdout.txt"

ALL_FILES = sorted(p for p in BENCH.rglob("*") if p.is_file() and p.suffix != ".md")


def one(measurements, **where):
    found = [m for m in measurements if all(getattr(m, k) == v if k != "test" else m.workload.get("test") == v
                                              for k, v in where.items())]
    assert len(found) == 1, (where, [(m.metric, m.statistic, m.workload.get("test")) for m in measurements])
    return found[0]


# ----------------------------------------------------------------------------------- every real file
@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name[:50])
def test_every_real_file_is_detected_by_content_and_read(path, tmp_path):
    expected = {"llama-bench": "llama-bench", "vllm": "vllm", "sglang": "sglang", "trtllm-bench": "trtllm-bench",
                "nccl-tests": "nccl-tests", "guidellm": "guidellm", "genai-perf": "genai-perf", "ollama": "ollama",
                "lambda": "lambda-dl-benchmark"}.get(path.parent.name)
    # the name says nothing: copy under a neutral name
    neutral = tmp_path / "results.txt"
    neutral.write_bytes(path.read_bytes())
    fmt = detect(neutral.read_text(encoding="utf-8"))
    if expected:
        assert fmt == expected or fmt.startswith(expected + "-")  # llama-bench-md, trtllm-bench-text, ...
    else:
        assert fmt.startswith("mlperf-")
    result = parse_any(path)
    assert result.format == fmt
    for m in result.measurements:
        assert m.metric in METRICS and m.unit == METRICS[m.metric][0], m.metric
        assert m.value >= 0 and m.source_file == path.name and len(m.content_hash) == 64
    for p in result.problems:
        assert p.file == path.name and p.message


def test_llama_bench_rtx4080_array():
    r = llama_bench.parse(LLAMA_4080)
    assert r.problems == []
    pp = one(r.measurements, metric="prefill_tokens_per_s")
    tg = one(r.measurements, metric="decode_tokens_per_s_per_user")
    # "avg_ts": 7100.002165, "stddev_ts": 140.341520 (pp512); "avg_ts": 118.881588 (tg128)
    assert pp.value == pytest.approx(7100.002165) and pp.stddev == pytest.approx(140.34152)
    assert tg.value == pytest.approx(118.881588) and tg.unit == "tokens/s"
    for m in (pp, tg):
        assert (m.accelerator_id, m.accelerator_count, m.match_confidence) == ("rtx-4080", 1, "exact")
        assert m.hardware_text == "NVIDIA GeForce RTX 4080"
        assert m.workload["quantisation"] == "Q4_K_M" and m.workload["precision"] == "q4"
        assert m.workload["params"] == 7615616512 and m.workload["weights_bytes"] == 4677120000
        assert m.workload["model_file"] == "Qwen2.5-7B-Instruct-Q4_K_M.gguf"
        assert m.conditions["backend"] == "CUDA" and m.conditions["build"] == "8cf427ff (5163)"
        assert m.conditions["flash_attn"] is False and m.conditions["n_gpu_layers"] == 99
        assert m.conditions["repetitions"] == 5
    assert pp.workload["test"] == "pp512" and (pp.workload["prompt_tokens"], pp.workload["gen_tokens"]) == (512, 0)
    assert tg.workload["test"] == "tg128" and (tg.workload["prompt_tokens"], tg.workload["gen_tokens"]) == (0, 128)


def test_llama_bench_m5_max_jsonl_keeps_combined_rows_apart():
    r = llama_bench.parse(LLAMA_M5)
    ms = r.measurements
    assert len(ms) == 5 and all(m.accelerator_id == "apple-m5-max" and m.accelerator_count == 1 for m in ms)
    assert one(ms, test="pp512").value == pytest.approx(2989.133549)
    assert one(ms, test="pp2048").value == pytest.approx(2893.858642)
    tg = one(ms, test="tg128")
    assert tg.metric == "decode_tokens_per_s_per_user" and tg.value == pytest.approx(95.980588)
    # pp512+tg128 -> 411.65 t/s is a blend, never generation speed
    pg = one(ms, test="pp512+tg128")
    assert pg.metric == "prompt_and_generation_tokens_per_s" and pg.value == pytest.approx(411.651833)
    assert one(ms, test="pp2048+tg128").metric == "prompt_and_generation_tokens_per_s"
    assert [m for m in ms if m.metric == "decode_tokens_per_s_per_user"] == [tg]
    assert tg.workload["quantisation"] == "Q5_K_S" and tg.workload["moe"] is True
    assert tg.workload["active_params"] == 3e9 and tg.workload["depth"] == 0
    assert tg.conditions["backend"] == "MTL,BLAS" and tg.conditions["flash_attn"] == 1
    # the local path with the user's name is cut to the file's name
    assert tg.workload["model_file"] == "Qwen3.5-35B-A3B-Q5_K_S.gguf"
    assert "/Users/" not in json.dumps(tg.to_json()) and ".lmstudio" not in json.dumps(tg.to_json())


def test_llama_bench_old_schema_cpu_only_is_kept_and_flagged():
    r = llama_bench.parse(LLAMA_CPU)
    pp = one(r.measurements, metric="prefill_tokens_per_s")
    tg = one(r.measurements, metric="decode_tokens_per_s_per_user")
    assert pp.value == pytest.approx(8.204253) and tg.value == pytest.approx(2.967723)
    for m in (pp, tg):
        assert m.cpu_only and m.accelerator_id is None and m.accelerator_count == 0
        assert m.conditions["backend"] == "CPU"  # from the per-backend booleans, all false
        assert m.hardware_text == "Intel(R) Xeon(R) CPU E5-2690 v3 @ 2.60GHz"
        assert m.workload["quantisation"] == "IQ4_K_R4" and m.workload["moe"] is True  # deepseek2
        assert m.conditions["mla_attn"] == 3 and m.conditions["fused_moe"] is True
    assert any("CPU-only" in p.message for p in r.problems)


def test_llama_bench_depth_is_a_condition_of_the_workload():
    rec = json.loads(LLAMA_4080.read_text())[1]
    rec["n_depth"] = 4096
    r = llama_bench.parse(json.dumps([rec]), "depth.json")
    m = r.measurements[0]
    assert m.workload["test"] == "tg128 @ d4096" and m.workload["depth"] == 4096


def test_llama_bench_records_differing_only_in_how_a_value_is_written_keep_their_own_values():
    """Setups are shared between records with equal values; 0 and false are equal in Python but are
    not the same text, and each record keeps what its own file says."""
    rec = json.loads(LLAMA_4080.read_text())[1]
    as_zero = dict(rec, flash_attn=0, n_threads=8.0)
    as_false = dict(rec, flash_attn=False, n_threads=8, test_time="2025-04-24T12:00:00Z")
    r = llama_bench.parse(json.dumps([as_zero, as_false]), "mixed.json")
    first, second = r.measurements
    assert first.conditions["flash_attn"] == 0 and first.conditions["flash_attn"] is not False
    assert second.conditions["flash_attn"] is False


@pytest.mark.parametrize("model_type, quant, precision", [
    ("qwen2 7B Q4_K - Medium", "Q4_K_M", "q4"),
    ("llama 7B Q4_0", "Q4_0", "q4"),
    ("llama 7B F16", "F16", "fp16"),
    ("llama 8B BF16", "BF16", "bf16"),
    ("llama 7B Q8_0", "Q8_0", "q8"),
    ("gpt-oss 20B MXFP4 MoE", "MXFP4", "q4"),
    ("llama 7B IQ2_XXS - 2.0625 bpw", "IQ2_XXS", "q4"),
    ("llama 7B all F32", "F32", "fp32"),
    ("qwen35moe 35B.A3B Q5_K - Small", "Q5_K_S", "q4"),
])
def test_llama_bench_quantisation_from_model_type(model_type, quant, precision):
    assert llama_bench.quantisation(model_type) == quant
    assert llama_bench.precision_of(quant) == precision


def test_vllm_serving_old_schema_lambda_h100():
    r = vllm.parse(VLLM_LAMBDA)
    ms = r.measurements
    assert one(ms, metric="request_throughput").value == pytest.approx(9.364124289561836)
    assert one(ms, metric="output_tokens_per_s").value == pytest.approx(413.89429359863317)
    assert one(ms, metric="input_tokens_per_s").value == pytest.approx(1281.9486152410154)
    ttft = one(ms, metric="ttft_s", statistic="mean")
    assert ttft.unit == "s" and ttft.value == pytest.approx(44.16175780061167e-3)  # mean_ttft_ms 44.16
    assert ttft.stddev == pytest.approx(28.919739520207084e-3)
    assert one(ms, metric="tpot_s", statistic="p99").value == pytest.approx(9.263060682011433e-3)
    assert one(ms, metric="e2e_latency_s", statistic="median").value == pytest.approx(87.63665999867953e-3)
    m = ms[0]
    assert m.accelerator_id is None and m.match_confidence == "ask"
    assert m.workload["model"] == "neuralmagic/Meta-Llama-3.1-8B-FP8"
    assert m.workload["params"] == 8e9 and m.workload["precision"] == "fp8"  # guessed from the name, and marked
    assert m.workload["params_from"] == "model name"
    assert m.conditions["request_rate"] is None and m.conditions["request_rate_unlimited"] is True
    # generated texts are not kept
    text = json.dumps([x.to_json() for x in ms])
    assert "Gino Wickman" not in text and "generated" not in text.replace("generated_", "")
    questions = [p for p in r.problems if p.severity == "question"]
    assert len(questions) == 1 and "--gpu" in questions[0].message and questions[0].file == VLLM_LAMBDA.name


def test_vllm_all_failed_run_is_a_problem_not_a_zero():
    r = vllm.parse(VLLM_FAILED)
    assert r.measurements == []
    warning = next(p for p in r.problems if "every request failed" in p.message)
    assert warning.file == VLLM_FAILED.name and warning.place == "record 0 (line 1)"
    assert "8 failed" in warning.message
    assert r.errors


def test_vllm_sweep_run_and_summary_hash_alike():
    run0 = vllm.parse(VLLM_RUN0).measurements
    summary = vllm.parse(VLLM_SUMMARY).measurements
    assert len(run0) == 16 and len(summary) == 32
    assert {m.content_hash for m in run0} < {m.content_hash for m in summary}
    second = [m for m in summary if m.record_index == 1]
    assert one(second, metric="request_throughput").value == pytest.approx(12.460566958863927)
    assert one(second, metric="e2e_latency_s", statistic="mean").value == pytest.approx(0.15949398987686436)
    assert second[0].conditions["run_number"] == 1 and second[0].conditions["max_num_seqs"] == 4
    assert second[0].workload["concurrency"] == 2


def test_vllm_goodput_key_with_colon_and_append_result_jsonl():
    record = json.loads(VLLM_RUN0.read_text())
    first = dict(record)
    first.pop("request_goodput")
    first["request_goodput:"] = 4.5
    second = dict(record, date="20260818-021400", request_throughput=7.0)
    text = json.dumps(first) + "\n" + json.dumps(second) + "\n"  # --append-result: JSONL in a .json
    r = vllm.parse(text, "appended.json")
    assert one(r.measurements, metric="request_goodput").value == 4.5
    assert sorted(m.value for m in r.measurements if m.metric == "request_throughput") == pytest.approx(
        [5.859229976904171, 7.0])


def test_vllm_throughput_and_latency_outputs():
    tp = vllm.parse(json.dumps({"elapsed_time": 12.5, "num_requests": 1000, "total_num_tokens": 250000,
                                "requests_per_second": 80.0, "tokens_per_second": 20000.0}), "tp.json")
    assert {m.metric: m.value for m in tp.measurements} == {"request_throughput": 80.0, "total_tokens_per_s": 20000.0}
    assert tp.measurements[0].format == "vllm-throughput"
    assert any("prompt and output" in p.message for p in tp.problems)
    lat = vllm.parse(json.dumps({"avg_latency": 1.25, "std_latency": 0.01, "latencies": [1.2, 1.3],
                                 "percentiles": {"10": 1.2, "50": 1.25, "99": 1.31}}), "lat.json")
    got = {(m.metric, m.statistic): m.value for m in lat.measurements}
    assert got == {("batch_latency_s", "mean"): 1.25, ("batch_latency_s", "p10"): 1.2,
                   ("batch_latency_s", "p50"): 1.25, ("batch_latency_s", "p99"): 1.31}
    assert any("batch size" in p.message for p in lat.problems)


def test_sglang_h200_infinity_lines():
    r = sglang.parse(SGLANG)
    first = [m for m in r.measurements if m.record_index == 0]
    # line 1: "request_rate": Infinity, "output_throughput": 4520.698730654741, "median_ttft_ms": 91282.2...
    assert one(first, metric="output_tokens_per_s").value == pytest.approx(4520.698730654741)
    assert one(first, metric="ttft_s", statistic="median").value == pytest.approx(91.28220983641222)
    assert one(first, metric="e2e_latency_s", statistic="mean").value == pytest.approx(224.91879882259612)
    assert one(first, metric="itl_s", statistic="median").value == pytest.approx(0.15901175909675658)
    m = first[0]
    assert m.conditions["request_rate"] is None and m.conditions["request_rate_unlimited"] is True
    assert m.workload["prompt_tokens"] == round(1525074 / 3000) and m.workload["gen_tokens"] == round(1544818 / 3000)
    assert m.accelerator_id is None and m.match_confidence == "ask"
    inf = next(p for p in r.problems if "Infinity" in p.message)
    assert inf.place == "record 0 (line 1), key request_rate"
    assert len({m.record_index for m in r.measurements}) == 7  # seven runs, seven lines
    assert sum(1 for p in r.problems if p.severity == "question") == 2  # hardware and model, once each


def test_trtllm_bench_rtx4070ti():
    r = trtllm_bench.parse(TRTLLM)
    ms = r.measurements
    assert all(m.accelerator_id == "rtx-4070-ti" and m.accelerator_count == 1 for m in ms)
    assert one(ms, metric="output_tokens_per_s").value == pytest.approx(219.03760101612704)
    assert one(ms, metric="request_throughput").value == pytest.approx(5.475940025403176)
    assert one(ms, metric="ttft_s", statistic="mean").value == pytest.approx(15.69475855e-3)
    assert one(ms, metric="tpot_s", statistic="mean").value == pytest.approx(4.279331844871795e-3)
    assert one(ms, metric="decode_tokens_per_s_per_user").value == pytest.approx(283.4811877253002)
    m = ms[0]
    assert m.workload["precision"] == "bf16" and m.workload["prompt_tokens"] == 64 and m.workload["gen_tokens"] == 40
    assert m.conditions["tp_size"] == 1 and m.conditions["trtllm_version"] == "1.2.0"
    text = json.dumps([x.to_json() for x in ms])
    assert "/media/masa" not in text and "in64_out40" not in text  # engine_dir, dataset_path
    assert any("issue_rate" in p.place and "not a real rate" in p.message for p in r.problems)


def test_mlperf_inference_summary_with_its_system():
    system, problems = mlperf.read_system(MLPERF_SYSTEM)
    assert problems == [] and system["accelerator_count"] == 8
    r = mlperf.parse(MLPERF_SUMMARY, system=system)
    ms = r.measurements
    tokens = one(ms, metric="output_tokens_per_s")
    assert tokens.value == pytest.approx(23514.8) and tokens.unit == "tokens/s"  # "Tokens per second: 23514.8"
    assert one(ms, metric="samples_per_s").value == pytest.approx(80.15)
    mean = one(ms, metric="latency_s", statistic="mean")
    assert mean.value == pytest.approx(900.073095219)  # 900073095219 ns
    assert one(ms, metric="latency_s", statistic="p99.9").value == pytest.approx(919.874478157)
    assert (tokens.accelerator_id, tokens.accelerator_count, tokens.match_confidence) == ("mi300x", 8, "exact")
    assert tokens.workload["benchmark"] == "llama2-70b" and tokens.workload["scenario"] == "Offline"
    assert tokens.conditions["result_validity"] == "VALID" and tokens.conditions["system_name"]


def test_mlperf_summary_and_detail_log_hash_alike():
    system, _ = mlperf.read_system(MLPERF_SYSTEM)
    summary = mlperf.parse(MLPERF_SUMMARY, system=system).measurements
    detail = mlperf.parse(MLPERF_DETAIL, system=system).measurements
    assert one(detail, metric="output_tokens_per_s").value == pytest.approx(23514.8)
    assert {m.content_hash for m in summary} == {m.content_hash for m in detail}


def test_mlperf_result_alone_finds_the_system_beside_it_or_asks(tmp_path):
    beside = parse_any(MLPERF_SUMMARY)
    assert beside.measurements[0].accelerator_id == "mi300x"
    assert any("found beside it" in p.message for p in beside.problems)
    lonely = tmp_path / "mlperf_log_summary.txt"
    lonely.write_text(MLPERF_SUMMARY.read_text())
    alone = parse_any(lonely)
    assert alone.measurements and alone.measurements[0].accelerator_id is None
    assert any(p.severity == "question" and "systems/" in p.message for p in alone.problems)


def test_mlperf_training_bert_l40s():
    system, _ = mlperf.read_system(TRAINING_SYSTEM)
    assert system["accelerator_count"] == 4  # "accelerators_per_node": "4" - a number as a string
    r = mlperf.parse(TRAINING_LOG, system=system)
    ttt = one(r.measurements, metric="time_to_train_s")
    assert ttt.value == 4983.0 and ttt.format == "mlperf-training"  # RESULT,bert,...,4983,...
    assert "RESULT" in ttt.statistic
    tput = one(r.measurements, metric="train_samples_per_s")
    assert tput.value == pytest.approx(484.97636474647135)
    assert (ttt.accelerator_id, ttt.accelerator_count) == ("l40s", 4)
    assert ttt.workload["benchmark"] == "bert" and ttt.workload["global_batch_size"] == 176
    assert ttt.conditions["eval_accuracy"] == pytest.approx(0.7205622792243958)
    assert any("RESULT line" in p.message and p.place.startswith("line ") for p in r.problems)
    assert "/workspace" not in json.dumps(ttt.to_json())


def test_mlperf_training_run_start_stop_and_failed_runs():
    ev = ':::MLLOG {{"namespace": "", "time_ms": {t}, "event_type": "{e}", "key": "{k}", "value": null, ' \
         '"metadata": {{"status": "{s}"}}}}'
    good = "\n".join([ev.format(t=1000, e="INTERVAL_START", k="run_start", s=""),
                      ev.format(t=1000, e="INTERVAL_START", k="run_start", s=""),  # every rank logs it
                      ev.format(t=61000, e="INTERVAL_END", k="run_stop", s="success")]) + "\n"
    r = mlperf.parse(good, "result_1.txt")
    assert [m.value for m in r.measurements if m.metric == "time_to_train_s"] == [60.0]
    bad = good.replace("success", "aborted")
    r = mlperf.parse(bad, "result_2.txt")
    assert not r.measurements
    assert any("aborted" in p.message for p in r.problems) and r.errors


def test_mlperf_context_files_have_nothing_to_import():
    for path in (TRAINING_SCALING, TRAINING_SYSTEM, MLPERF_SYSTEM):
        r = parse_any(path)
        assert r.measurements == [] and not r.errors and r.context.get("nothing_to_import")


def test_nccl_tests_two_nodes_of_h100():
    r = nccl_tests.parse(NCCL)
    ms = r.measurements
    big = [m for m in ms if m.workload.get("size_bytes") == 8589934592]
    out_bus = next(m for m in big if m.metric == "busbw_gbs" and m.workload["placement"] == "out-of-place")
    assert out_bus.value == pytest.approx(338.82) and out_bus.unit == "GB/s"
    t = next(m for m in big if m.metric == "collective_time_s" and m.workload["placement"] == "in-place")
    assert t.value == pytest.approx(47743e-6) and t.unit == "s"  # 47743 µs
    assert one(ms, metric="avg_busbw_gbs").value == pytest.approx(70.742)
    m = ms[0]
    assert (m.accelerator_id, m.accelerator_count, m.match_confidence) == ("h100-sxm5-80gb", 16, "likely")
    assert m.conditions["nodes"] == 2 and m.conditions["collective"] == "all_reduce"
    text = json.dumps([x.to_json() for x in ms])
    assert "ztan-mig" not in text and "hostfile" not in text and "HOST_VARS" not in text


def test_gpudesk_example_file():
    r = gpudesk_schema.parse(gpudesk_schema.example_path())
    assert not r.errors
    ttft = one(r.measurements, metric="ttft_s")
    assert ttft.value == pytest.approx(0.0451) and ttft.unit == "s"  # given as 45.1 ms
    assert ttft.accelerator_id == "rtx-4090" and ttft.workload["prompt_tokens"] == 512


# ----------------------------------------------------------------------------------- helpers and units
def test_units_and_numbers():
    assert to_seconds(47743, "µs") == pytest.approx(0.047743)
    assert to_seconds(5, "us") == pytest.approx(5e-6)
    assert to_seconds(900073095219, "ns") == pytest.approx(900.073095219)
    assert to_seconds(44.1, "ms") == pytest.approx(0.0441)
    assert to_seconds(1, "fortnights") is None
    assert parse_number("4") == 4.0 and parse_number("46068 MiB") == 46068.0 and parse_number(" 80.15 ") == 80.15
    for bad in ("inf", "NaN", float("nan"), float("inf"), True, None, "fast", [1]):
        assert parse_number(bad) is None


# ----------------------------------------------------------------------------------- bad input
IMPORTERS = [llama_bench, vllm, sglang, trtllm_bench, mlperf, nccl_tests, gpudesk_schema]


@pytest.mark.parametrize("module", IMPORTERS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_bad_input_names_file_place_and_problem(module, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    binary = tmp_path / "weights.bin"
    binary.write_bytes(bytes(range(256)) * 40)
    missing = tmp_path / "nowhere.json"
    wrong = BENCH / ("trtllm-bench/masahiro_RTX4070Ti_report.json" if module is not trtllm_bench
                     else "sglang/datacrunch_H200_llama70b_offline_Infinity.jsonl")
    for path, words in ((empty, "empty"), (binary, "binary"), (missing, "does not exist")):
        r = module.parse(path)
        assert r.measurements == []
        assert r.errors and r.errors[0].file == path.name and words in r.errors[0].message
    r = module.parse(wrong)
    assert r.measurements == [] and r.errors
    assert all(p.file == wrong.name for p in r.problems)


@pytest.mark.parametrize("module, good", [
    (llama_bench, LLAMA_4080), (vllm, VLLM_SUMMARY), (trtllm_bench, TRTLLM), (gpudesk_schema, None),
])
def test_malformed_and_truncated_json(module, good, tmp_path):
    text = good.read_text() if good else gpudesk_schema.example_path().read_text()
    # broken in the middle: a problem with the line, the rest of the file still read where possible
    broken = text.replace('"', "'", 3) if module is not llama_bench else text.replace('"n_batch": 2048,', '"n_batch": ,', 1)
    path = tmp_path / "broken.json"
    path.write_text(broken)
    r = module.parse(path)
    bad = [p for p in r.problems if "not valid JSON" in p.message or p.severity == "error"]
    assert bad and all(p.file == "broken.json" for p in bad)
    assert any(p.place.startswith(("record", "line")) for p in bad) or r.errors
    # cut in the middle of the first record: nothing complete, an error naming the place
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 3 if module is not llama_bench else 200])
    r = module.parse(cut)
    assert r.measurements == []
    places = [p.place for p in r.problems if p.place]
    assert places and any("line" in p for p in places)


def test_truncated_llama_bench_array_keeps_complete_records(tmp_path):
    text = LLAMA_4080.read_text()
    cut = text[: text.index('"n_prompt": 0')]  # inside the second record, no closing ]
    path = tmp_path / "crashed.json"
    path.write_text("ggml_cuda_init: found 1 CUDA devices:\n" + cut)
    r = llama_bench.parse(path)
    assert [m.metric for m in r.measurements] == ["prefill_tokens_per_s"]
    msgs = " | ".join(p.message for p in r.problems)
    assert "not closed" in msgs and "1 complete record" in msgs and "not JSON" in msgs


def test_log_noise_and_markdown_around_json():
    text = "```json\n" + LLAMA_4080.read_text() + "```\nmain: done\n"
    noisy = "llama_model_loader: loaded meta data\nggml_cuda_init: found 1 CUDA devices\n" + text
    r = llama_bench.parse(noisy, "pasted.md")
    assert len(r.measurements) == 2
    assert any(p.severity == "info" and "not JSON" in p.message for p in r.problems)


def test_nan_and_numbers_as_strings_are_normalised():
    rec = json.loads(LLAMA_4080.read_text())[0]
    rec["avg_ts"] = "7100.5"
    rec["stddev_ts"] = float("nan")
    rec["model_size"] = "4677120000"
    text = json.dumps([rec])  # Python writes NaN
    r = llama_bench.parse(text, "strings.json")
    m = r.measurements[0]
    assert m.value == 7100.5 and m.stddev is None and m.workload["weights_bytes"] == 4677120000
    nan = next(p for p in r.problems if "stddev_ts" in p.message)
    assert "not a finite number" in nan.message and nan.place == "record 0 (line 1)"


def test_wrong_format_for_text_importers(tmp_path):
    r = nccl_tests.parse(MLPERF_SUMMARY)
    assert r.errors and "no nccl-tests result table" in r.errors[0].message
    r = mlperf.parse(NCCL)
    assert r.errors and "not an MLPerf result" in r.errors[0].message


def test_unknown_and_unsupported_formats_are_named(tmp_path):
    unknown = tmp_path / "notes.txt"
    unknown.write_text("just some notes\nnothing to see\n")
    r = parse_any(unknown)
    assert r.format is None and "not recognised" in r.errors[0].message and r.errors[0].file == "notes.txt"
    guidellm = tmp_path / "benchmarks.json"
    guidellm.write_text(json.dumps({"metadata": {"version": 1}, "benchmarks": [{"type_": "generative_benchmark"}]}))
    r = parse_any(guidellm)  # read since issue 11 (new readers); a report without metrics names the tool
    assert r.format == "guidellm" and "GuideLLM" in r.errors[0].message and not r.measurements
    pytest_bench = tmp_path / "bench.json"
    pytest_bench.write_text(json.dumps({"machine_info": {"cpu": {}}, "benchmarks": [{"name": "t", "stats": {}}]}))
    r = parse_any(pytest_bench)
    assert r.format == "pytest-benchmark" and "pytest-benchmark" in r.errors[0].message
    assert "schema" in r.errors[0].message and "names no GPU" in r.errors[0].message


def test_windows_files_bom_crlf_and_paths(tmp_path):
    rec = json.loads(LLAMA_4080.read_text())[0]
    rec["model_filename"] = "C:\\Users\\bob\\models\\qwen.gguf"
    path = tmp_path / "windows.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([rec], indent=2).replace("\n", "\r\n").encode())
    r = parse_any(path)
    assert r.format == "llama-bench" and len(r.measurements) == 1
    assert r.measurements[0].workload["model_file"] == "qwen.gguf"
    utf16 = tmp_path / "utf16.json"
    utf16.write_bytes(json.dumps([rec]).encode("utf-16"))
    r = parse_any(utf16)
    assert r.errors and "UTF-16" in r.errors[0].message


def test_vllm_offline_throughput_leaves_out_a_negative_token_count_and_names_it():
    record = {"elapsed_time": 10.0, "num_requests": 100, "total_num_tokens": 60000, "requests_per_second": 10.0,
              "tokens_per_second": 6000.0, "total_input_tokens": -50000, "total_output_tokens": 10000}
    r = vllm.parse(json.dumps(record), "throughput.json")
    assert r.measurements
    workload = r.measurements[0].workload
    assert "total_input_tokens" not in workload and "prompt_tokens" not in workload
    assert workload["gen_tokens"] == 100
    assert any("'total_input_tokens' is negative (-50000): ignored" in p.message for p in r.problems)
