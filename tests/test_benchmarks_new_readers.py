"""Issue 11, new readers: llama-bench's Markdown table and CSV, trtllm-bench's console summary, Ollama
--verbose, GuideLLM JSON, GenAI-Perf/AIPerf exports and Lambda's benchmark table. Every file is a
real published one (tests/data/bench/PROVENANCE.md); each test checks what the file was taken for
and the stored figures against the file's own numbers (values, units, hardware, model, load)."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.benchmarks import llama_bench_text, ollama
from gpudesk.core.benchmarks.detect import UNSUPPORTED, detect_text, parse_any
from gpudesk.core.benchmarks.store import import_files, stored_measurements
from gpudesk.core.benchmarks.types import METRICS

from .conftest import TEST_DATA

BENCH = TEST_DATA / "bench"
MD_README = BENCH / "llama-bench" / "llamacpp-README_5a32f10_prefilled-context_markdown.txt"
MD_VULKAN = BENCH / "llama-bench" / "geerlingguy-ai-benchmarks_issue23_RX7900XT-on-Pi5_vulkan_markdown.txt"
MD_CUDA = BENCH / "llama-bench" / "llamacpp-PR4812_RTX3090Ti_CUDA_nkvo_markdown.txt"
CSV_4080 = BENCH / "llama-bench" / "llamacpp-README_5a32f10_RTX4080_build5163.csv"
JSON_4080 = BENCH / "llama-bench" / "llamacpp-README_RTX4080_CUDA_build5163_array.json"
TRT_LOG = BENCH / "trtllm-bench" / "shaamil101-etched_8xH100_llama3.1-70B_result_128_128_30000.txt"
TRT_DOCS = BENCH / "trtllm-bench" / "TensorRT-LLM-docs_perf-benchmarking_Qwen2-VL-2B_multimodal_summary.txt"
OLLAMA_MISTRAL = BENCH / "ollama" / "ollama-issue1806_mistral_run-verbose.txt"
OLLAMA_GPTOSS = BENCH / "ollama" / "ollama-issue11676_gpt-oss-120b_verbose-stats.txt"
GUIDELLM = BENCH / "guidellm" / "guidellm-tests_benchmarks_stripped_synchronous.json"
AIPERF = BENCH / "genai-perf" / "aiperf-examples_run1_gpt-oss-20b_concurrency100_profile_export_aiperf.json"
LAMBDA = BENCH / "lambda" / "lambdal_pytorch-train-throughput-fp16.csv"


def one(ms, **where):
    found = [m for m in ms if all((getattr(m, k) if k in ("metric", "statistic") else m.workload.get(k)) == v
                                  for k, v in where.items())]
    assert len(found) == 1, (where, [(m.metric, m.statistic, m.workload.get("test")) for m in ms])
    return found[0]


def read(path, fmt: str, words: str):
    detection = detect_text(path.read_text(encoding="utf-8"))
    assert detection.format == fmt and words in detection.reason, detection
    r = parse_any(path)
    assert r.format == fmt and not r.errors, r.errors
    assert r.detected_by == detection.reason
    for m in r.measurements:
        assert m.unit == METRICS[m.metric][0] and m.source_file == path.name and len(m.content_hash) == 64
    return r


# ----------------------------------------------------------------------------------- llama-bench
def test_llama_bench_markdown_table_from_the_readme():
    r = read(MD_README, "llama-bench-md", "table header")
    assert len(r.measurements) == 4 and {m.format for m in r.measurements} == {"llama-bench"}
    pp = one(r.measurements, test="pp512")
    assert pp.metric == "prefill_tokens_per_s" and pp.value == 7340.20 and pp.stddev == 23.45
    assert pp.unit == "tokens/s" and pp.statistic == "mean"
    tg = one(r.measurements, test="tg128 @ d512")
    assert tg.metric == "decode_tokens_per_s_per_user" and tg.value == 116.71 and tg.stddev == 0.60
    assert tg.workload["depth"] == 512 and tg.workload["gen_tokens"] == 128 and tg.workload["concurrency"] == 1
    assert pp.workload["model"] == "qwen2 7B Q4_K - Medium" and pp.workload["quantisation"] == "Q4_K_M"
    assert pp.workload["params"] == pytest.approx(7.62e9)
    assert pp.workload["weights_bytes"] == pytest.approx(4.36 * 2**30)
    assert pp.conditions["backend"] == "CUDA" and pp.conditions["n_gpu_layers"] == "99"
    # the table names no GPU: asked, keyed to this file rather than to every CUDA table
    assert pp.accelerator_id is None and pp.match_confidence == "ask"
    assert pp.hardware_key == "sig:llama-bench-md:CUDA:" + MD_README.name
    assert any(p.severity == "question" and "names no GPU" in p.message for p in r.problems)


def test_llama_bench_markdown_with_the_device_and_build_lines_pasted_above_it():
    r = read(MD_VULKAN, "llama-bench-md", "table header")
    assert [m.workload["test"] for m in r.measurements] == ["pp512", "pp4096", "tg128", "pp4096+tg128"]
    blended = one(r.measurements, test="pp4096+tg128")
    assert blended.metric == "prompt_and_generation_tokens_per_s" and blended.value == 65.65
    assert blended.workload["prompt_tokens"] == 4096 and blended.workload["gen_tokens"] == 128
    tg = one(r.measurements, test="tg128")
    assert tg.value == 7.16 and tg.stddev == 0.15
    # both Vulkan devices are named, driver suffixes cut; the Raspberry Pi's own GPU is not counted
    assert tg.hardware_text == "AMD Radeon RX 7900 XT, V3D 7.1.10.2"
    assert (tg.accelerator_id, tg.accelerator_count, tg.match_confidence) == ("radeon-rx-7900-xt", 1, "likely")
    assert tg.conditions["build"] == "1d0125bc (6552)" and tg.conditions["backend"] == "Vulkan"

    r = read(MD_CUDA, "llama-bench-md", "table header")  # 2024 layout: "pp 512", an nkvo column
    assert len(r.measurements) == 4
    offloaded = [m for m in r.measurements if m.metric == "decode_tokens_per_s_per_user"]
    assert sorted((m.conditions["no_kv_offload"], m.value) for m in offloaded) == [("0", 127.43), ("1", 59.99)]
    assert offloaded[0].hardware_text == "NVIDIA GeForce RTX 3090 Ti"
    assert offloaded[0].conditions["build"] == "32d9f7d9 (1786)"
    assert len({m.content_hash for m in r.measurements}) == 4  # the nkvo rows are distinct measurements


def test_llama_bench_csv_maps_like_its_json():
    r = read(CSV_4080, "llama-bench-csv", "CSV header")
    assert len(r.measurements) == 2
    pp, tg = one(r.measurements, test="pp512"), one(r.measurements, test="tg128")
    assert pp.value == 7285.676949 and pp.stddev == 100.064434
    assert tg.value == 119.915244 and tg.metric == "decode_tokens_per_s_per_user"
    assert (tg.accelerator_id, tg.accelerator_count, tg.match_confidence) == ("rtx-4080", 1, "exact")
    assert tg.workload["model"] == "Qwen2.5-7B-Instruct-Q4_K_M" and tg.workload["params"] == 7615616512
    assert tg.conditions["build"] == "8cf427ff (5163)" and tg.conditions["output"] == "csv"
    # the same run's JSON (a different repetition, same setup) gives the same workload
    js = one(parse_any(JSON_4080).measurements, test="tg128")
    assert {k: v for k, v in js.workload.items()} == tg.workload


def test_llama_bench_markdown_bad_rows_are_named_and_skipped():
    text = MD_README.read_text(encoding="utf-8").splitlines()
    text.insert(3, "| qwen2 7B Q4_K - Medium | 4.36 GiB | 7.62 B | CUDA | 99 | warmup | 1.0 ± 0.1 |")
    text.insert(4, "| qwen2 7B Q4_K - Medium | 4.36 GiB | 7.62 B | CUDA | 99 | tg64 | fast |")
    r = llama_bench_text.MARKDOWN.parse("\n".join(text) + "\n", "pasted.md")
    assert len(r.measurements) == 4
    msgs = [str(p) for p in r.problems if p.severity == "warning"]
    assert any("line 4" in m and "'warmup'" in m for m in msgs) and any("line 5" in m and "'fast'" in m for m in msgs)


# ----------------------------------------------------------------------------------- trtllm-bench text
def test_trtllm_bench_console_log_with_its_summary_at_the_end():
    r = read(TRT_LOG, "trtllm-bench-text", "PERFORMANCE OVERVIEW")
    assert {m.metric: m.value for m in r.measurements} == {"request_throughput": 112.4203,
                                                            "output_tokens_per_s": 14389.7989}
    m = one(r.measurements, metric="output_tokens_per_s")
    assert m.workload["model"] == "meta-llama/Llama-3.1-70B-Instruct" and m.workload["precision"] == "fp8"
    assert m.workload["prompt_tokens"] == 128 and m.workload["gen_tokens"] == 128
    assert m.workload["requests"] == 30000 and m.workload["batch"] == 2048
    assert m.conditions["tp_size"] == 8 and m.conditions["trtllm_version"] == "0.16.0"
    assert m.conditions["kv_cache_percentage"] == pytest.approx(0.9) and m.conditions["backend"] == "TRT"
    # no MACHINE DETAILS in 0.16: 8 GPUs from TP x PP, which ones is asked
    assert m.accelerator_count == 8 and m.accelerator_id is None and m.match_confidence == "ask"
    assert any(p.severity == "question" and "names no GPU" in p.message for p in r.problems)
    assert any("2.98e+13" in p.message for p in r.problems)  # "no rate limit" issue rate, not kept


def test_trtllm_bench_summary_from_the_docs_with_latency_breakdown():
    r = read(TRT_DOCS, "trtllm-bench-text", "PERFORMANCE OVERVIEW")
    by = {(m.metric, m.statistic): m.value for m in r.measurements}
    assert by[("request_throughput", "mean")] == 1.4439
    assert by[("total_tokens_per_s", "mean")] == 780.1607
    assert by[("output_tokens_per_s_per_user", "mean")] == 38.1959
    assert by[("e2e_latency_s", "mean")] == pytest.approx(3.6718441)
    assert by[("e2e_latency_s", "p50")] == pytest.approx(3.9363022)
    assert by[("e2e_latency_s", "p99")] == pytest.approx(5.5144701)
    m = one(r.measurements, metric="request_throughput")
    assert m.workload["concurrency"] == 5 and m.workload["prompt_tokens"] == 412 and m.workload["batch"] == 4


# ----------------------------------------------------------------------------------- Ollama
def test_ollama_verbose_with_the_run_line():
    r = read(OLLAMA_MISTRAL, "ollama", "eval rate")
    pp, tg = one(r.measurements, metric="prefill_tokens_per_s"), one(r.measurements, metric="decode_tokens_per_s_per_user")
    assert (pp.value, pp.workload["prompt_tokens"]) == (53.77, 11)
    assert (tg.value, tg.workload["gen_tokens"], tg.workload["concurrency"]) == (24.61, 120, 1)
    assert tg.workload["model"] == "mistral" and tg.unit == "tokens/s"
    assert tg.conditions["total_duration_s"] == pytest.approx(5.088275983)
    assert tg.conditions["load_duration_s"] == pytest.approx(1.365523e-3)
    assert tg.match_confidence == "ask" and tg.hardware_key == "sig:ollama:mistral"
    assert [p.severity for p in r.problems] == ["question"]  # the hardware only; the generated text is ignored


def test_ollama_go_durations_with_minutes_and_no_model():
    r = read(OLLAMA_GPTOSS, "ollama", "eval rate")
    tg = one(r.measurements, metric="decode_tokens_per_s_per_user")
    assert tg.value == 3.35 and tg.workload["gen_tokens"] == 859 and "model" not in tg.workload
    assert tg.conditions["total_duration_s"] == pytest.approx(5 * 60 + 33.640378603)
    assert tg.conditions["eval_duration_s"] == pytest.approx(4 * 60 + 16.457263845)
    assert any("does not name the model" in p.message for p in r.problems)
    assert ollama.go_duration("945µs") == pytest.approx(945e-6) and ollama.go_duration("1h2m3s") == 3723
    assert ollama.go_duration("12 parsecs") is None


def test_ollama_two_answers_and_ansi_codes():
    block = OLLAMA_GPTOSS.read_text(encoding="utf-8")
    text = "\x1b[?25l\x1b[?2026h" + block + "\x1b[?25h>>> again\n" + block.replace("3.35 tokens/s", "3.41 tokens/s")
    r = ollama.parse(text, "two.txt")
    assert sorted(m.value for m in r.measurements if m.metric == "decode_tokens_per_s_per_user") == [3.35, 3.41]


# ----------------------------------------------------------------------------------- GuideLLM
def test_guidellm_report_read_per_benchmark():
    r = read(GUIDELLM, "guidellm", "GuideLLM")
    by = {(m.metric, m.statistic): m for m in r.measurements}
    assert by[("request_throughput", "mean")].value == pytest.approx(1.5481806532737452)
    assert by[("output_tokens_per_s", "mean")].value == pytest.approx(198.13346751788123)
    assert by[("ttft_s", "median")].value == pytest.approx(16.38054847717285e-3)
    assert by[("ttft_s", "mean")].stddev == pytest.approx(1.1303385708366516e-3)
    assert by[("itl_s", "p99")].value == pytest.approx(5.258346167136365e-3)
    assert by[("tpot_s", "mean")].value == pytest.approx(4.90300272307966e-3)
    assert by[("e2e_latency_s", "mean")].value == pytest.approx(0.6444743664368339)  # already in seconds
    m = by[("request_throughput", "mean")]
    assert m.workload["model"] == "example_model" and m.workload["concurrency"] == 1  # synchronous
    assert m.workload["prompt_tokens"] == 257 and m.workload["gen_tokens"] == 128 and m.workload["requests"] == 46
    assert m.conditions["strategy"] == "synchronous" and m.match_confidence == "ask"
    assert all("Pride" not in json.dumps(x.to_json()) and "Elizabeth" not in json.dumps(x.to_json())
               for x in r.measurements)  # the prompts and generated texts are never stored


def test_guidellm_concurrent_and_rate_benchmarks():
    doc = json.loads(GUIDELLM.read_text(encoding="utf-8"))
    b = doc["benchmarks"][0]
    concurrent = json.loads(json.dumps(b))
    concurrent["args"]["strategy"] = {"type_": "concurrent", "streams": 16}
    constant = json.loads(json.dumps(b))
    constant["args"]["strategy"] = {"type_": "constant", "rate": 4.0}
    doc["benchmarks"] = [b, concurrent, constant]
    r = parse_any(json.dumps(doc))
    rates = sorted((m.workload["concurrency"], m.conditions["strategy"]) for m in r.measurements
                   if m.metric == "request_throughput")
    assert rates == [(1, "constant"), (1, "synchronous"), (16, "concurrent")]
    const = [m for m in r.measurements if m.conditions["strategy"] == "constant"][0]
    assert const.conditions["request_rate"] == 4.0 and const.workload["concurrency_from"].startswith("the measured")


# ----------------------------------------------------------------------------------- GenAI-Perf / AIPerf
def test_aiperf_export():
    r = read(AIPERF, "genai-perf", "GenAI-Perf")
    by = {(m.metric, m.statistic): m for m in r.measurements}
    assert by[("request_throughput", "mean")].value == pytest.approx(9.551622221540914)
    assert by[("output_tokens_per_s", "mean")].value == pytest.approx(2320.7222350404572)
    assert by[("ttft_s", "mean")].value == pytest.approx(2.343219436988764)
    assert by[("ttft_s", "median")].value == pytest.approx(2.369317693)
    assert by[("itl_s", "p99")].value == pytest.approx(33.73224787406911e-3)
    assert by[("e2e_latency_s", "mean")].stddev == pytest.approx(0.22021827319725128)
    assert by[("decode_tokens_per_s_per_user", "mean")].value == pytest.approx(36.68434853220158)
    m = by[("request_throughput", "mean")]
    assert m.workload["model"] == "openai/gpt-oss-20b" and m.workload["concurrency"] == 100
    assert m.workload["prompt_tokens"] == 550 and m.workload["gen_tokens"] == 243 and m.workload["requests"] == 89
    assert m.conditions["errored_requests"] == 11 and m.conditions["streaming"] is True
    assert m.match_confidence == "ask" and any(p.severity == "question" for p in r.problems)


def test_genai_perf_top_level_metrics_and_gpu_telemetry():
    doc = json.loads(AIPERF.read_text(encoding="utf-8"))
    flat = {k: {kk: vv for kk, vv in v.items() if kk not in ("tag", "header")} for k, v in doc["records"].items()}
    flat["request_throughput"]["unit"] = "per sec"  # GenAI-Perf's spelling
    flat["input_config"] = doc["input_config"]
    flat["telemetry_data"] = {"endpoints": {"localhost:9400": {"gpus": {
        "gpu_0": {"gpu_name": "NVIDIA H100 80GB HBM3"}, "gpu_1": {"gpu_name": "NVIDIA H100 80GB HBM3"}}}}}
    r = parse_any(json.dumps(flat))
    assert r.format == "genai-perf" and not r.errors
    m = one(r.measurements, metric="request_throughput")
    assert m.value == pytest.approx(9.551622221540914) and m.unit == "requests/s"
    assert (m.accelerator_id, m.accelerator_count) == ("h100-sxm5-80gb", 2)


# ----------------------------------------------------------------------------------- Lambda table
def test_lambda_deeplearning_benchmark_table():
    r = read(LAMBDA, "lambda-dl-benchmark", "name_gpu")
    assert len(r.measurements) == 490
    rows = {(m.conditions["system"], m.workload["model"]): m for m in r.measurements}
    m = rows[("RTX 4090", "resnet50")]
    assert m.value == 1301.0 and m.metric == "train_samples_per_s" and m.workload["throughput_of"] == "images/s"
    assert (m.accelerator_id, m.accelerator_count, m.match_confidence) == ("rtx-4090", 1, "exact")
    assert m.workload["precision"] == "fp16" and m.workload["precision_from"] == "file name"
    eight = rows[("8x H100 80GB SXM5", "bert_large_squad")]
    assert eight.value == 2167.0
    assert (eight.accelerator_id, eight.accelerator_count) == ("h100-sxm5-80gb", 8)
    assert eight.hardware_text == "H100 80GB SXM5" and eight.conditions["watt_listed"] == 5600.0
    # 0.0 = not run on that system: skipped and counted
    assert ("Dell H100 80GB SXM5", "transformerxlbase") not in rows
    assert any("not run" in p.message and p.severity == "info" for p in r.problems)


# ----------------------------------------------------------------------------------- refusals and the store
@pytest.mark.parametrize("fmt", sorted(UNSUPPORTED))
def test_formats_still_not_read_are_refused_naming_the_tool(fmt):
    from gpudesk.core.benchmarks.detect import UNSUPPORTED_ADVICE

    assert fmt not in ("guidellm", "genai-perf", "ollama")
    assert UNSUPPORTED_ADVICE.get(fmt), f"{fmt}: the refusal must say what to do"


def test_new_formats_import_into_the_store_with_what_they_were_taken_for(catalogue):
    report = import_files(catalogue, [MD_VULKAN, OLLAMA_MISTRAL, LAMBDA])
    assert [f.format for f in report.files] == ["llama-bench-md", "ollama", "lambda-dl-benchmark"]
    assert all(f.ok and f.detected_by for f in report.files)
    stored = stored_measurements(catalogue)
    assert len(stored) == 4 + 2 + 490
    tg = next(m for m in stored if m.workload.get("test") == "tg128" and m.format == "llama-bench")
    assert tg.value == 7.16 and tg.accelerator_id == "radeon-rx-7900-xt"
    again = import_files(catalogue, [MD_VULKAN])
    assert again.files[0].stored == 0 and len(stored_measurements(catalogue)) == 496
