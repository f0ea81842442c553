"""Issue 11: detection that reads enough of a file (whole JSON documents), tools told apart by
structure (GuideLLM is not vLLM), nccl-tests logs with several tests / mpirun --tag-output /
rccl-tests device lines, and vLLM metadata, latency-only files and unlimited-rate concurrency.
Files: tests/data/bench (PROVENANCE.md there); inline texts are real published lines, cited."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.benchmarks import nccl_tests, vllm
from gpudesk.core.benchmarks.detect import detect, detect_text, parse_any
from gpudesk.core.benchmarks.reader import HEAD_CHARS

from .conftest import TEST_DATA

BENCH = TEST_DATA / "bench"
VLLM_LAMBDA = BENCH / "vllm" / "LambdaLabsML_1xH100-80GB-SXM_benchmark-serving_llama3.1-8B-FP8_len2048.json"
NCCL_TAGGED = BENCH / "nccl-tests" / "aws-k8s-tester_PR503_p5_mpirun-tag-output_FRAGMENT.txt"
NCCL_TWO = BENCH / "nccl-tests" / "rccl-tests_PR2078+PR2075_two-tests-in-turn_ASSEMBLED.txt"


def one(ms, **where):
    found = [m for m in ms if all((m.workload.get(k, getattr(m, k, None)) if k not in ("metric", "statistic") else
                                   getattr(m, k)) == v for k, v in where.items())]
    assert len(found) == 1, where
    return found[0]


def _lambda() -> dict:
    return json.loads(VLLM_LAMBDA.read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------------- detection
def test_vllm_save_detailed_summary_keys_past_the_head_are_found(tmp_path):
    rec = _lambda()
    # vLLM's order: throughput first, then the per-request arrays, the latency statistics last
    arrays = {k: rec.pop(k) for k in ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors")}
    stats = {k: rec.pop(k) for k in list(rec) if k.endswith("_ms")}
    arrays["generated_texts"] = arrays["generated_texts"] * (4 * HEAD_CHARS // max(1, len(json.dumps(
        arrays["generated_texts"]))) + 1)
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps({**rec, **arrays, **stats}), encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    assert text.index('"mean_ttft_ms"') > 2 * HEAD_CHARS
    detection = detect_text(text)
    assert detection.format == "vllm" and "vLLM" in detection.reason and "whole JSON" in detection.reason
    r = parse_any(path)
    assert r.format == "vllm" and not r.errors and r.detected_by == detection.reason
    assert one(r.measurements, metric="ttft_s", statistic="mean").value == pytest.approx(44.16175780061167e-3)
    assert one(r.measurements, metric="request_throughput").value == pytest.approx(9.364124289561836)


GUIDELLM = {  # the shape of a GuideLLM (>= 0.3) benchmarks.json: benchmarks of type_ generative_benchmark
    "benchmarks": [{
        "type_": "generative_benchmark", "run_id": "7313a0e4", "run_index": 0,
        "metrics": {"requests_per_second": {"successful": {"mean": 2.5}, "total": {"mean": 2.5}},
                    "tokens_per_second": {"successful": {"mean": 900.0}},
                    "output_tokens_per_second": {"successful": {"mean": 640.0}}},
    }],
    "requests_per_second": 2.5, "tokens_per_second": 900.0, "elapsed_time": 10.0,
}


def test_guidellm_is_not_taken_for_vllm_and_is_read_as_guidellm(tmp_path):
    assert vllm.looks_like(json.dumps(GUIDELLM))  # the key names alone would say vLLM
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(GUIDELLM), encoding="utf-8")
    detection = detect_text(path.read_text(encoding="utf-8"))
    assert detection.format == "guidellm" and "GuideLLM" in detection.reason
    r = parse_any(path)  # read by the GuideLLM reader (tests/test_benchmarks_new_readers.py), never as vLLM
    assert r.format == "guidellm" and not r.errors and {m.format for m in r.measurements} == {"guidellm"}
    assert one(r.measurements, metric="output_tokens_per_s").value == 640.0
    assert one(r.measurements, metric="request_throughput").value == 2.5


def test_detection_reason_is_in_the_import_report(tmp_path):
    from gpudesk.core.benchmarks.store import FileReport
    fr = FileReport(file="x", name="x", format="vllm", detected_by="vLLM benchmark: recognised from its keys")
    assert fr.to_json()["detected_by"].startswith("vLLM benchmark")


def test_text_logs_are_still_judged_by_their_start():
    assert detect(NCCL_TWO.read_text(encoding="utf-8")) == "nccl-tests"
    assert "result table" in detect_text(NCCL_TWO.read_text(encoding="utf-8")).reason


# ----------------------------------------------------------------------------------- nccl-tests
def test_nccl_tests_several_tests_in_one_log_each_under_its_own_collective():
    r = nccl_tests.parse(NCCL_TWO)
    ms = r.measurements
    assert {m.workload["collective"] for m in ms} == {"all_reduce", "broadcast"}
    avg = {m.workload["collective"]: m.value for m in ms if m.metric == "avg_busbw_gbs"}
    assert avg == {"all_reduce": pytest.approx(142.652), "broadcast": pytest.approx(3.41227)}
    ar = [m for m in ms if m.workload["collective"] == "all_reduce" and m.metric == "busbw_gbs"]
    bc = [m for m in ms if m.workload["collective"] == "broadcast" and m.metric == "busbw_gbs"]
    assert len(ar) == 4 * 2 and len(bc) == 10 * 2  # rows × (out-of-place, in-place)
    big = one(ms, metric="busbw_gbs", size_bytes=17179869184, placement="in-place")
    assert big.value == pytest.approx(361.17) and big.workload["collective"] == "all_reduce"
    small = one(ms, metric="collective_time_s", size_bytes=262144, placement="out-of-place")
    assert small.value == pytest.approx(43.00e-6) and small.workload["collective"] == "broadcast"
    assert small.workload["root"] == 0
    assert any("2 tests in this log" in p.message for p in r.problems)


# ROCm/rccl-tests output quoted in crickett-hpe/hpc-ai-envs PR #30 (8x MI300X, one table row)
MI300X = """# nThread 1 nGpus 8 minBytes 8388608 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
rccl-tests: Version develop:83d38d9
# Using devices
""" + "".join(f"#  Rank  {i} Group  0 Pid  37300 on   g100n126 device  {i} [0000:{bus}:00] AMD Instinct MI300X\n"
              for i, bus in enumerate(("05", "33", "53", "65", "85", "ad", "cd", "e7"))) + """#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     8388608       2097152     float     sum      -1    91.10   92.08  161.14      0    94.94   88.36  154.63      0
"""


def test_nccl_tests_gpu_count_not_multiplied_by_the_number_of_tests():
    # the same header and device lines printed once per test, as a script running two tests writes them
    text = ("# Collective test starting: all_reduce_perf\n" + MI300X + "# Avg bus bandwidth    : 161.14\n"
            "# Collective test starting: all_gather_perf\n" + MI300X + "# Avg bus bandwidth    : 154.63\n")
    r = nccl_tests.parse(text)
    ms = r.measurements
    assert {m.accelerator_count for m in ms} == {8}
    assert {m.hardware_text for m in ms} == {"AMD Instinct MI300X"}
    assert {m.accelerator_id for m in ms} == {"mi300x"}
    avg = {m.workload["collective"]: m.value for m in ms if m.metric == "avg_busbw_gbs"}
    assert avg == {"all_reduce": pytest.approx(161.14), "all_gather": pytest.approx(154.63)}


def test_nccl_tests_mpirun_tag_output_is_stripped():
    text = NCCL_TAGGED.read_text(encoding="utf-8")
    assert detect(text) == "nccl-tests"
    r = parse_any(NCCL_TAGGED)
    assert r.format == "nccl-tests" and not r.errors
    assert one(r.measurements, metric="collective_time_s", size_bytes=32, placement="out-of-place").value == \
        pytest.approx(22.25e-6)
    assert one(r.measurements, metric="avg_busbw_gbs").value == pytest.approx(92.3405)
    # mid-line prefixes, where the output of ranks interleaves
    mid = text.replace("     float     sum      -1    22.25", "     float     sum [1,0]<stdout>:     -1    22.25")
    assert one(nccl_tests.parse(mid).measurements, metric="collective_time_s", size_bytes=32,
               placement="out-of-place").value == pytest.approx(22.25e-6)


@pytest.mark.parametrize("line, name", [
    # crickett-hpe/hpc-ai-envs PR #21 (rccl-tests develop:448c4c7): no "Group" column
    ("#   Rank  0 Pid 590032 on pinoak0003 device  0 [0000:c1:00.0] AMD Instinct MI250X", "AMD Instinct MI250X"),
    # the form quoted in issue 11
    ("#  Rank  0 Pid 12 on node device  0 [0000:05:00.0] AMD Instinct MI300X", "AMD Instinct MI300X"),
    # NVIDIA/nccl issue #583: no leading '#'
    ("   Rank  0 Pid 1821213 on AI-A100-Beethoven01 device  0 [0x00] NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"),
])
def test_nccl_tests_device_lines_without_group(line, name):
    text = MI300X.replace(MI300X.splitlines()[4], line)
    text = "\n".join(x for x in text.splitlines() if "g100n126" not in x)
    ms = nccl_tests.parse(text).measurements
    assert {m.hardware_text for m in ms} == {name} and {m.accelerator_count for m in ms} == {1}


# ----------------------------------------------------------------------------------- vLLM
def test_vllm_metadata_kept_and_gpu_value_used_as_hardware(tmp_path):
    rec = _lambda()
    rec.update({"gpu": "4xNVIDIA_L40S", "deployment": "blue", "hostname": "alice-box", "api_token": "x"})
    path = tmp_path / "serve.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    r = vllm.parse(path)
    m = one(r.measurements, metric="request_throughput")
    assert m.conditions["metadata.deployment"] == "blue" and m.conditions["metadata.gpu"] == "4xNVIDIA_L40S"
    assert "metadata.hostname" not in m.conditions and "metadata.api_token" not in m.conditions
    assert (m.hardware_text, m.accelerator_id, m.accelerator_count) == ("NVIDIA L40S", "l40s", 4)
    assert not [p for p in r.problems if p.severity == "question"]


def test_vllm_serving_with_latencies_but_no_throughput_is_imported(tmp_path):
    rec = _lambda()
    for key in ("request_throughput", "input_throughput", "output_throughput"):
        rec.pop(key)
    path = tmp_path / "latency-only.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    assert detect(path.read_text(encoding="utf-8")) == "vllm"
    r = parse_any(path)
    assert not r.errors
    assert {m.metric for m in r.measurements} == {"ttft_s", "tpot_s", "itl_s", "e2e_latency_s"}
    assert one(r.measurements, metric="tpot_s", statistic="p99").value == pytest.approx(9.263060682011433e-3)


def test_vllm_unlimited_rate_does_not_store_prompts_as_concurrency(tmp_path):
    r = vllm.parse(VLLM_LAMBDA)  # request_rate "inf", no max_concurrency, num_prompts in the file
    for m in r.measurements:
        assert "concurrency" not in m.workload
        assert m.conditions["request_rate_unlimited"] is True
    rec = _lambda()
    rec["max_concurrency"] = 16
    path = tmp_path / "capped.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    assert {m.workload["concurrency"] for m in vllm.parse(path).measurements} == {16}


# Tools gpudesk names but does not import: a document shaped as each tool writes it (its keys, from
# the tool's output format; no figure in them is read), and the refusal that says what to do.
NOT_IMPORTED = {
    "pytest-benchmark": {"machine_info": {"node": "ci", "cpu": {"brand_raw": "AMD EPYC 7763"}}, "commit_info": {},
                         "benchmarks": [{"name": "test_encode", "stats": {"mean": 1.2e-6}}], "version": "4.0.0"},
    "llmperf": {"name": "llama-2-7b_128_128_summary", "model": "meta-llama/Llama-2-7b-chat-hf",
                "results_ttft_s_mean": 0.21, "results_ttft_s_quantiles_p50": 0.2},
    "nvbandwidth": {"nvbandwidth": {"CUDA Runtime Version": 12040,
                                    "testcases": [{"name": "host_to_device_memcpy_ce", "bandwidth_matrix": [["55.1"]]}]}},
    "inference-benchmarker": {"config": {"model_name": "x"},
                              "results": [{"id": "constant@1.00req/s", "token_throughput_secs": 210.5}]},
    "optimum-benchmark": {"config": {"name": "pytorch_bert", "backend": {"name": "pytorch"}},
                          "report": {"forward": {"latency": {"unit": "s", "values": [0.01], "mean": 0.01}}}},
    "torchbench": {"name": "test_bench", "environ": {"pytorch_version": "2.3.0"},
                   "metrics": {"model=resnet50, test=eval, device=cuda, latency": 12.3}},
    "nccl-tests-json": {"nccl_version": "2.21.5", "results": [{"size": 8, "type": "float", "busBw": 0.0, "algBw": 0.0}]},
}
GPU_BURN = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1234)\n"
            "10.0%  proc'd: 3434 (17745 Gflop/s)   errors: 0   temps: 45 C\n")


@pytest.mark.parametrize("fmt", sorted(NOT_IMPORTED) + ["gpu-burn"])
def test_a_tool_gpudesk_does_not_import_is_named_and_told_what_to_do(fmt):
    from gpudesk.core.benchmarks.detect import UNSUPPORTED, UNSUPPORTED_ADVICE

    text = GPU_BURN if fmt == "gpu-burn" else json.dumps(NOT_IMPORTED[fmt])
    detection = detect_text(text)
    assert detection.format == fmt
    assert detection.reason.startswith(UNSUPPORTED[fmt] + ": recognised from its ")
    result = parse_any(text, "results.json")
    assert result.measurements == [] and result.format == fmt
    (problem,) = result.problems
    assert (problem.file, problem.severity) == ("results.json", "error")
    assert problem.message.startswith(f"this looks like {UNSUPPORTED[fmt]}, which gpudesk does not import yet"
                                      + UNSUPPORTED_ADVICE[fmt] + "; or convert it to gpudesk's own JSON format")


@pytest.mark.parametrize("fmt", sorted(NOT_IMPORTED))
def test_a_json_file_too_large_to_parse_whole_is_named_from_its_start(fmt, monkeypatch, tmp_path):
    from gpudesk.core.benchmarks import detect as detect_module

    path = tmp_path / "big.json"
    path.write_text(json.dumps(NOT_IMPORTED[fmt], indent=1), encoding="utf-8")
    monkeypatch.setattr(detect_module, "JSON_FULL_CAP", 16)
    assert detect_module.parse_any(path).format == fmt


REAL_FILES = sorted(p for p in BENCH.rglob("*") if p.is_file() and p.suffix != ".md")


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name[:60])
def test_a_real_file_is_taken_for_the_same_tool_when_too_large_to_parse_whole(path, monkeypatch):
    """A JSON file over the cap is judged by the keys at its start and end, a text by its start (or
    its end): every real file must come out as the tool it is when read whole, and say how."""
    from gpudesk.core.benchmarks import detect as detect_module
    from gpudesk.core.benchmarks.reader import open_source

    whole = detect_module.detect_source(open_source(path, None, None))
    assert whole.format is not None
    monkeypatch.setattr(detect_module, "JSON_FULL_CAP", 16)
    large = detect_module.detect_source(open_source(path, None, None))
    assert large.format == whole.format
    is_json = path.read_text(encoding="utf-8", errors="replace").lstrip("\ufeff \t\r\n")[:1] in "[{"
    how = "the keys at the start and end of a JSON file over 0 MB" if is_json else " of the file"
    assert large.reason.startswith(detect_module.describe(whole.format) + ": recognised from ")
    assert large.reason.endswith(how)


GUIDELLM_FILE = BENCH / "guidellm" / "guidellm-tests_benchmarks_stripped_synchronous.json"


def test_guidellm_is_told_from_vllm_by_its_nested_metrics_when_its_type_is_missing():
    """A GuideLLM report whose benchmarks lost their type_ (older versions write none) is still
    GuideLLM: its rates are distributions (objects), where vLLM's are numbers."""
    doc = json.loads(GUIDELLM_FILE.read_text(encoding="utf-8"))
    assert doc["benchmarks"][0]["type_"] == "generative_benchmark"
    as_written = detect_text(json.dumps(doc))
    assert as_written.reason == ("GuideLLM: its 'benchmarks' hold GuideLLM benchmark objects "
                                 "(type_ 'generative_benchmark')")
    for b in doc["benchmarks"]:
        del b["type_"]
    untyped = detect_text(json.dumps(doc))
    assert untyped.format == "guidellm"
    assert untyped.reason.endswith("(requests_per_second/tokens_per_second as distributions)")
    for b in doc["benchmarks"]:
        b["metrics"] = {k: (v.get("successful", {}).get("mean") if isinstance(v, dict) else v)
                        for k, v in b["metrics"].items()}  # rates as plain numbers, as vLLM writes them
    assert detect_text(json.dumps(doc)).format == "guidellm"  # its run_stats object still says GuideLLM
    for b in doc["benchmarks"]:
        del b["run_stats"]
    assert detect_text(json.dumps(doc)).format != "guidellm"  # nothing of GuideLLM's own is left


def test_a_file_that_cannot_be_opened_or_read_to_the_end_is_named_with_the_reason(tmp_path, monkeypatch):
    from gpudesk.core.benchmarks import detect as detect_module

    missing = parse_any(tmp_path / "gone.json")
    assert missing.format is None and missing.measurements == []
    assert [(p.severity, p.file) for p in missing.problems] == [("error", "gone.json")]
    assert missing.problems[0].message == "the file does not exist"

    module = detect_module.IMPORTERS["ollama"][0]
    real = module.iter_parse

    def cut_short(src, **kwargs):
        yield from real(src, **kwargs)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(module, "iter_parse", cut_short)
    ollama_file = BENCH / "ollama" / "ollama-issue1806_mistral_run-verbose.txt"
    cut = parse_any(ollama_file)
    assert len(cut.measurements) == 2  # what was read before the fault is kept
    assert [(p.file, p.place, p.severity, p.message) for p in cut.problems if p.severity == "error"] == [
        (ollama_file.name, "", "error", "the file could not be read to the end ([Errno 5] Input/output error)")]

    def broken(src, **kwargs):
        yield from real(src, **kwargs)
        raise KeyError("eval_rate")

    monkeypatch.setattr(module, "iter_parse", broken)
    bug = parse_any(ollama_file)
    errors = [(p.file, p.place, p.message) for p in bug.problems if p.severity == "error"]
    assert errors == [(ollama_file.name, "", f"{detect_module.INTERNAL}: KeyError: 'eval_rate'); please report it")]


def test_what_is_not_imported_says_why_in_its_detection_and_its_one_error(tmp_path, monkeypatch):
    from gpudesk.core.benchmarks import detect as detect_module
    from gpudesk.core.benchmarks.detect import SUPPORTED_WORDS, iter_detected
    from gpudesk.core.benchmarks.reader import Source

    def outcome(source, name=None):
        detection, items = iter_detected(source, name)
        return detection, [(p.file, p.place, p.severity, p.message) for p in items]

    assert outcome(tmp_path / "gone.json") == (
        detect_module.Detection(None, "the file could not be opened"),
        [("gone.json", "", "error", "the file does not exist")])
    notes = tmp_path / "notes.txt"
    notes.write_text("GPU shopping list\nH100, maybe two\n", encoding="utf-8")
    assert outcome(notes) == (
        detect_module.Detection(None, "no known tool's keys or table headers in the file"),
        [("notes.txt", "", "error", "the format is not recognised from its content. gpudesk imports " + SUPPORTED_WORDS)])
    detection, said = outcome(json.dumps(NOT_IMPORTED["llmperf"]), "llmperf.json")
    assert detection.format == "llmperf" and [s[:3] for s in said] == [("llmperf.json", "", "error")]

    def unreadable(self, *args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Source, "head", unreadable)
    assert outcome(notes) == (detect_module.Detection(None, "the file could not be read"),
                              [("notes.txt", "", "error", "the file cannot be read (Input/output error)")])


# what the preview says a text file was recognised from, per tool (JSON files: "its keys")
TEXT_CLUES = {"nccl-tests": "its result table header (size, count, type ... busbw)",
              "mlperf-inference": "its LoadGen log lines", "mlperf-training": "its :::MLLOG lines",
              "ollama": "its 'eval count' and 'eval rate' lines",
              "llama-bench-md": "its table header (| model | ... | test | t/s |)",
              "llama-bench-csv": "its CSV header (build_commit, ..., avg_ts)",
              "trtllm-bench-text": "its PERFORMANCE OVERVIEW block",
              "lambda-dl-benchmark": "its columns (name_gpu, num_gpu, watt, then one per model)"}
TEXT_FILES = [p for p in REAL_FILES if p.read_text(encoding="utf-8", errors="replace").lstrip("\ufeff \t\r\n")[:1]
              not in "[{"]


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda p: p.name[:60])
def test_a_text_file_says_what_in_it_was_recognised_at_its_start_or_at_the_end_of_a_long_log(path, tmp_path):
    from gpudesk.core.benchmarks.detect import describe, detect_source
    from gpudesk.core.benchmarks.reader import open_source

    text = path.read_text(encoding="utf-8", errors="replace")
    found = detect_source(open_source(path, None, None))
    assert found.reason == f"{describe(found.format)}: recognised from {TEXT_CLUES[found.format]} at the start of the file"
    # the same output after a long console log (the tool's own lines come last): read from the end
    log = "".join(f"[worker {i}] loading shard {i} of 2600, nothing measured yet\n" for i in range(2600))
    assert len(log) > 2 * HEAD_CHARS
    long_file = tmp_path / path.name
    long_file.write_text(log + text[-HEAD_CHARS // 2:] if len(text) > HEAD_CHARS // 2 else log + text,
                         encoding="utf-8")
    for src in (open_source(long_file, None, None), open_source(long_file.read_text(encoding="utf-8"), "pasted.txt", None)):
        at_end = detect_source(src)
        if at_end.format is not None:  # a tool whose clue is only in its first lines is not found at the end
            assert at_end.reason == (f"{describe(at_end.format)}: recognised from {TEXT_CLUES[at_end.format]} "
                                     "at the end of the file")


def test_ollama_verbose_stats_after_a_long_session_are_found_at_the_end():
    from gpudesk.core.benchmarks.detect import detect_source
    from gpudesk.core.benchmarks.reader import open_source

    stats = (BENCH / "ollama" / "ollama-issue1806_mistral_run-verbose.txt").read_text(encoding="utf-8")
    chat = "".join(f">>> question {i}\nA long answer that goes on for a while, line {i}.\n" for i in range(1500))
    found = detect_source(open_source(chat + stats, "session.txt", None))
    assert found.format == "ollama" and found.reason.endswith("lines at the end of the file")
    assert detect_source(open_source(chat, "chat.txt", None)).format is None


def test_nccl_tests_json_is_named_by_either_of_its_key_pairs_and_a_blank_file_is_said_blank():
    assert detect_text(json.dumps({"nccl_version": "2.21.5", "results": []})).format == "nccl-tests-json"
    assert detect_text(json.dumps([{"size": 8, "busBw": 0.1, "algBw": 0.1}])).format == "nccl-tests-json"
    assert detect_text(json.dumps({"results": [{"size": 8, "busBw": 0.1}]})).format != "nccl-tests-json"
    blank = detect_text(" \n\t\n")
    assert (blank.format, blank.reason) == (None, "the file is empty or blank")
    llama = (BENCH / "llama-bench" / "llamacpp-README_RTX4080_CUDA_build5163_array.json").read_text(encoding="utf-8")
    assert detect_text("\ufeff \r\n\t" + llama).format == "llama-bench"  # a BOM and blank lines before the JSON


def test_the_skeleton_keeps_every_key_but_cuts_lists_and_depth():
    from gpudesk.core.benchmarks.detect import SKELETON_ITEMS, skeleton

    value = {"a": list(range(SKELETON_ITEMS + 5)), "b": {"c": [{"d": 1, "e": [1, 2]}]}}
    assert skeleton(value) == {"a": list(range(SKELETON_ITEMS)), "b": {"c": [{"d": 1, "e": [1, 2]}]}}
    deep = 0
    for _ in range(12):
        deep = {"k": deep}
    cut = skeleton(deep)
    for _ in range(8):
        cut = cut["k"]
    assert cut == {"k": None}  # nine levels kept, then nothing


def test_a_long_tagged_mpirun_log_is_read_from_its_end():
    """NCCL_DEBUG=INFO under `mpirun --tag-output`: thousands of '[1,0]<stdout>:... NCCL INFO' lines
    before the table. Every line starts with '[', which is not JSON; the table at the end is read
    (it was 'not recognised')."""
    tagged = NCCL_TAGGED.read_text(encoding="utf-8")
    info = "".join(f"[1,{i % 16}]<stdout>:node-{i % 2}:1234:1250 [{i % 8}] NCCL INFO Channel {i % 32:02d}/0 : "
                   f"{i % 16}[{i % 8}] -> {(i + 1) % 16}[{(i + 1) % 8}] via P2P/IPC/read\n" for i in range(1500))
    assert len(info) > 2 * HEAD_CHARS
    whole, long = parse_any(tagged, "short.txt"), parse_any(info + tagged, "long.txt")
    assert long.format == "nccl-tests" and long.detected_by.endswith("at the end of the file")
    assert [(m.metric, m.value) for m in long.measurements] == [(m.metric, m.value) for m in whole.measurements]
    assert len(whole.measurements) > 10
