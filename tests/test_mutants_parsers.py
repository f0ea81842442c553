"""The benchmark readers' figures, places and conditions pinned on the real files of tests/data/bench
and on small logs built from their lines, written to kill the mutants that survived mutation
testing (README "Mutation testing"). Every expected value is read off the file by hand (the line
is quoted or counted in the comment)."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.benchmarks import nccl_tests, vllm

from .conftest import TEST_DATA

BENCH = TEST_DATA / "bench"
NCCL = BENCH / "nccl-tests" / "lessizzmore_2node_16xH100-80GB_all_reduce_perf_stdout.txt"
VLLM_RUN0 = BENCH / "vllm" / "er0080_bench-sweep_run0.json"
VLLM_LAMBDA = BENCH / "vllm" / "LambdaLabsML_1xH100-80GB-SXM_benchmark-serving_llama3.1-8B-FP8_len2048.json"

# the column header nccl-tests prints above its table
TABLE_HEAD = """#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""
ROW_8G = "  8589934592    2147483648     float     sum      -1    44734  192.02  360.04      0    44670  192.30  360.56      0"


def _of(measurements, metric, placement=None, size=None):
    return [m for m in measurements if m.metric == metric
            and (placement is None or m.workload.get("placement") == placement)
            and (size is None or m.workload.get("size_bytes") == size)]


# --------------------------------------------------------------------------- nccl_tests.py


def test_nccl_two_node_log_counts_rows_ranks_nodes_and_its_header():
    # 31 table rows (8 B to 8 GiB, doubling), each with time, bus and algorithm bandwidth out of place
    # and in place, and one footer average: 31 × 6 + 1 measurements
    r = nccl_tests.parse(NCCL)
    ms = r.measurements
    assert len(ms) == 31 * 6 + 1
    first = ms[0]
    # "           8             2     float     sum      -1    135.8    0.00 ..."
    assert (first.metric, first.value, first.unit) == ("collective_time_s", pytest.approx(135.8e-6), "s")
    assert first.workload == {"collective": "all_reduce", "size_bytes": 8, "count": 2, "dtype": "float",
                              "redop": "sum", "placement": "out-of-place"}  # root -1: no root
    # "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20"
    cond = dict(first.conditions)
    run = cond.pop("run")
    assert len(run) == 16 and all(c in "0123456789abcdef" for c in run)
    assert cond == {"collective": "all_reduce", "nodes": 2, "ranks": 16, "n_threads": 1, "gpus_per_process": 1,
                    "min_bytes": 8, "max_bytes": 8589934592, "warmup_iters": 5, "iters": 20}
    assert {m.conditions["run"] for m in ms} == {run}
    assert first.hardware_key == "hw:NVIDIA H100 80GB HBM3"
    # rows are numbered in order; the average comes after the 31st
    assert [m.record_index for m in ms[:6]] == [0] * 6
    avg = ms[-1]
    assert (avg.metric, avg.record_index, avg.statistic, avg.workload) == (
        "avg_busbw_gbs", 31, "mean over sizes", {"collective": "all_reduce"})
    # the zero bandwidths of the 8-byte row are measurements (0.00 GB/s), not missing values
    assert _of(ms, "busbw_gbs", "out-of-place", 8)[0].value == 0.0
    # "  8589934592    2147483648     float     sum      -1    47535  180.71  338.82      0    47743  179.92  337.35"
    assert _of(ms, "algbw_gbs", "in-place", 8589934592)[0].value == pytest.approx(179.92)
    assert _of(ms, "algbw_gbs", "out-of-place", 8589934592)[0].value == pytest.approx(180.71)
    assert _of(ms, "busbw_gbs", "in-place", 8589934592)[0].value == pytest.approx(337.35)


def test_nccl_mpirun_lines_are_skipped_and_named_by_their_first_line():
    # lines 3-7 are the mpirun command; line 7 names all_reduce_perf (so it names the test), the
    # other four are neither comments nor rows
    problems = nccl_tests.parse(NCCL).problems
    skipped = next(p for p in problems if "neither comments nor table rows" in p.message)
    assert (skipped.place, skipped.severity) == ("line 3", "info")
    assert skipped.message.startswith("4 line(s)")
    wiring = next(p for p in problems if "how the GPUs are connected" in p.message)
    assert wiring.message.endswith("across its 2 nodes") and wiring.severity == "info"
    assert not [p for p in problems if p.severity in ("warning", "error", "question")]


def test_nccl_wrong_values_are_counted_over_the_log_and_flagged():
    text = (TABLE_HEAD + ROW_8G + "\n# Out of bounds values : 3 FAILED\n# Avg bus bandwidth    : 360.3\n"
            + TABLE_HEAD + ROW_8G + "\n# Out of bounds values : 2 FAILED\n# Avg bus bandwidth    : 360.3\n")
    r = nccl_tests.parse(text, "wrong.txt")
    warning = next(p for p in r.problems if "Out of bounds values" in p.message)
    assert warning.severity == "warning" and "'Out of bounds values: 5'" in warning.message
    assert len(r.measurements) == 2 * 7  # stored, flagged


def test_nccl_older_rows_without_a_root_column_and_rooted_collectives():
    # older nccl-tests print 12 columns (no root); broadcast rows carry a root rank
    no_root = "        1024           256     float     sum    10.50    0.10    0.18      0    10.40    0.10    0.18      0"
    rooted = "      262144         65536     float    none       2    43.00    6.10    6.10      0    42.86    6.12    6.12      0"
    r = nccl_tests.parse("# nThread 1 nGpus 8 minBytes 1024 maxBytes 1024\n" + TABLE_HEAD + no_root + "\n" + rooted
                         + "\n", "old.txt")
    ms = r.measurements
    small = _of(ms, "collective_time_s", "in-place", 1024)[0]
    assert small.value == pytest.approx(10.40e-6) and "root" not in small.workload
    assert _of(ms, "busbw_gbs", "out-of-place", 1024)[0].value == pytest.approx(0.18)
    assert _of(ms, "collective_time_s", "out-of-place", 262144)[0].workload["root"] == 2
    assert small.conditions["gpus_per_process"] == 8 and "warmup_iters" not in small.conditions
    # no '# Rank' lines: the GPU is asked, and the collective is unknown without a '*_perf' line
    assert small.hardware_key == "sig:nccl-tests" and small.accelerator_id is None
    messages = [p.message for p in r.problems]
    assert any("which accelerator and how many?" in m for m in messages)
    assert any("stored as 'unknown'" in m for m in messages)
    assert small.workload["collective"] == "unknown"


def test_nccl_rows_that_are_not_results_are_not_read():
    bad = [
        "        1024           256     float     sum      -1    10.50    0.10    0.18      0    10.40    0.10",  # short
        "        1k             256     float     sum      -1    10.50    0.10    0.18      0    10.40    0.10    0.18  0",
        "        1024           256     Float!    sum      -1    10.50    0.10    0.18      0    10.40    0.10    0.18  0",
        "        1024           256     float     sum      -1      N/A     N/A     N/A      0      N/A     N/A     N/A  0",
    ]
    r = nccl_tests.parse(TABLE_HEAD + "\n".join(bad) + "\n", "bad.txt")
    assert r.measurements == []
    assert r.errors and "no nccl-tests result table" in r.errors[0].message


def test_nccl_a_negative_bandwidth_or_zero_time_is_not_stored():
    row = "        1024           256     float     sum      -1        0   -1.00    0.18      0    10.40    0.10   -0.5      0"
    ms = nccl_tests.parse(TABLE_HEAD + row + "\n", "neg.txt").measurements
    got = sorted((m.metric, m.workload["placement"]) for m in ms)
    assert got == [("algbw_gbs", "in-place"), ("busbw_gbs", "out-of-place"), ("collective_time_s", "in-place")]


def test_nccl_one_device_line_per_rank_names_the_gpus_and_counts_them():
    devices = "".join(f"#  Rank  {i} Group  0 Pid  {100 + i} on nodeA device  {i} [0x{i:02x}] NVIDIA H100 80GB HBM3\n"
                      for i in range(4))
    mixed = devices.replace("device  3 [0x03] NVIDIA H100 80GB HBM3", "device  3 [0x03] NVIDIA A100-SXM4-80GB")
    one = nccl_tests.parse("# all_gather_perf\n" + devices + TABLE_HEAD + ROW_8G + "\n", "one.txt").measurements
    assert {(m.hardware_text, m.accelerator_count) for m in one} == {("NVIDIA H100 80GB HBM3", 4)}
    assert one[0].conditions["nodes"] == 1 and one[0].workload["collective"] == "all_gather"
    two = nccl_tests.parse(mixed + TABLE_HEAD + ROW_8G + "\n", "mixed.txt").measurements
    assert two[0].hardware_text == "NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3"


# --------------------------------------------------------------------------- vllm.py


def _run0() -> dict:
    return json.loads(VLLM_RUN0.read_text(encoding="utf-8"))


def _vllm(rec: dict, name: str = "serve.json"):
    return vllm.parse(json.dumps(rec), name)


def test_vllm_sweep_run_keeps_its_setup_and_derives_lengths_per_request():
    # "num_prompts": 8, "completed": 8, "total_input_tokens": 256, "total_output_tokens": 128,
    # "max_concurrency": 2, "request_rate": "inf", "max_num_seqs": 4, "rtfx": 0.0 (not a vLLM key)
    r = vllm.parse(VLLM_RUN0)
    m = r.measurements[0]
    assert m.workload == {"model": "facebook/opt-125m", "params": 125e6, "params_from": "model name",
                          "prompt_tokens": 256 // 8, "gen_tokens": 128 // 8, "requests": 8, "concurrency": 2}
    assert m.conditions == {"backend": "openai", "endpoint_type": "openai", "date": "20260818-021333",
                            "burstiness": 1.0, "run_number": 0, "num_prompts": 8, "request_rate": None,
                            "request_rate_unlimited": True, "max_concurrency": 2, "failed_requests": 0,
                            "max_num_seqs": 4, "metadata.rtfx": 0.0}
    assert (m.hardware_key, m.format, m.accelerator_id, m.match_confidence) == (
        "sig:vllm:facebook/opt-125m", "vllm", None, "ask")
    assert [p.severity for p in r.problems] == ["question"]


def test_vllm_latencies_are_milliseconds_stored_as_seconds_with_their_spread():
    ms = vllm.parse(VLLM_RUN0).measurements
    got = {(m.metric, m.statistic): (m.value, m.stddev, m.unit) for m in ms}
    # "mean_ttft_ms": 217.27, "std_ttft_ms": 309.14; only the mean carries the standard deviation
    assert got["ttft_s", "mean"] == (pytest.approx(0.21727289337468392), pytest.approx(0.3091373405846827), "s")
    assert got["ttft_s", "median"] == (pytest.approx(0.04492285849846667), None, "s")
    assert got["e2e_latency_s", "p99"][0] == pytest.approx(0.8768009717071254)
    assert got["itl_s", "mean"][1] == pytest.approx(2.8521622338226233e-3)
    # "max_output_tokens_per_s": 75.0 is the peak, not the mean; "request_goodput": null is left out
    assert got["output_tokens_per_s", "max"] == (75.0, None, "tokens/s")
    assert got["output_tokens_per_s", "mean"][0] == pytest.approx(93.74767963046673)
    assert got["total_tokens_per_s", "mean"][0] == pytest.approx(281.2430388914002)
    assert got["request_throughput", "mean"][2] == "requests/s"
    assert not any(m.metric == "request_goodput" for m in ms)
    assert len(ms) == 4 + 4 * 3  # four rates; ttft, tpot, itl, e2el × mean, median, p99


def test_vllm_some_failed_requests_are_a_warning_and_a_condition():
    rec = dict(_run0(), completed=6, failed=2)
    r = _vllm(rec)
    warning = next(p for p in r.problems if p.severity == "warning")
    assert warning.message.startswith("2 of 8 requests failed") and warning.place == "record 0 (line 1)"
    m = r.measurements[0]
    assert m.conditions["failed_requests"] == 2
    assert (m.workload["prompt_tokens"], m.workload["gen_tokens"], m.workload["requests"]) == (
        round(256 / 6), round(128 / 6), 6)


def test_vllm_all_failed_counts_the_failures_or_the_prompts():
    rec = dict(_run0(), completed=0, failed=8)
    r = _vllm(rec)
    assert r.measurements == []
    assert "(0 completed, 8 failed)" in r.problems[0].message
    rec = dict(_run0(), completed=0, failed=0)
    assert "(0 completed, 8 failed)" in _vllm(rec).problems[0].message  # the 8 prompts sent


def test_vllm_a_zero_figure_is_not_measured_and_named_by_its_key():
    rec = dict(_run0(), output_throughput=0.0)
    r = _vllm(rec)
    info = next(p for p in r.problems if "0 means not measured" in p.message)
    assert (info.place, info.severity) == ("record 0 (line 1), key output_throughput", "info")
    assert not any(m.metric == "output_tokens_per_s" and m.statistic == "mean" for m in r.measurements)


def test_vllm_goodput_a_finite_rate_and_a_tokenizer_of_its_own():
    rec = dict(_run0(), request_goodput=4.0, request_rate=2.5, tokenizer_id="hf-internal/tok", max_concurrency=None)
    m = _vllm(rec).measurements
    assert next(x for x in m if x.metric == "request_goodput").value == 4.0
    assert m[0].conditions["request_rate"] == 2.5 and "request_rate_unlimited" not in m[0].conditions
    assert m[0].conditions["max_concurrency"] is None and "concurrency" not in m[0].workload
    assert m[0].workload["tokenizer"] == "hf-internal/tok"


def test_vllm_per_request_details_are_counted_not_stored():
    r = vllm.parse(VLLM_LAMBDA)
    info = next(p for p in r.problems if "per-request details" in p.message)
    assert "(10 requests:" in info.message and info.severity == "info"
    assert r.measurements[0].workload["prompt_tokens"] == round(1369 / 10)


def test_vllm_latency_only_record_says_it_has_no_throughput():
    rec = {k: v for k, v in _run0().items() if not k.endswith("throughput") and k != "request_goodput"}
    r = _vllm(rec)
    assert r.measurements and all(m.unit == "s" or m.statistic == "max" for m in r.measurements)
    assert any("no throughput keys" in p.message for p in r.problems)


def test_vllm_metadata_names_the_hardware_with_or_without_a_count():
    assert vllm.hardware_hint({"gpu": "4xNVIDIA_L40S"}) == ("NVIDIA L40S", 4)
    assert vllm.hardware_hint({"device": "H100 SXM"}) == ("H100 SXM", None)
    assert vllm.hardware_hint({"gpu": "  ", "hardware": "2 × A100"}) == ("A100", 2)
    assert vllm.hardware_hint({"gpu": 4}) is None and vllm.hardware_hint({}) is None
    rec = dict(_run0(), gpu="2xNVIDIA_H100_80GB_HBM3")
    r = _vllm(rec)
    m = r.measurements[0]
    assert (m.hardware_text, m.accelerator_count, m.hardware_key) == ("NVIDIA H100 80GB HBM3", 2,
                                                                       "hw:NVIDIA H100 80GB HBM3")
    assert m.match_reason.startswith("from the file's --metadata (")
    info = next(p for p in r.problems if "--metadata" in p.message)
    assert info.message.endswith("NVIDIA H100 80GB HBM3 ×2") and info.severity == "info"
    bare = next(p for p in _vllm(dict(_run0(), gpu="L40S")).problems if "--metadata" in p.message)
    assert bare.message.endswith(": L40S")


def test_vllm_metadata_keeps_plain_values_and_drops_private_and_known_keys():
    meta = vllm.metadata_of({"deployment": "blue", "batch": 4, "ok": True, "nested": {"a": 1}, "backend": "vllm",
                             "mean_ttft_ms": 1.0, "std_foo_ms": 2.0, "dtype": "bf16", "hostname": "box",
                             "api_token": "x", "run_dir": "/tmp"})
    assert meta == {"deployment": "blue", "batch": 4}
    many = vllm.metadata_of({f"k{i}": i for i in range(40)})
    assert len(many) == 32


def test_vllm_offline_throughput_lengths_per_request_and_no_zero():
    rec = {"elapsed_time": 10.0, "num_requests": 100, "total_num_tokens": 30000, "total_input_tokens": 20000,
           "total_output_tokens": 10000, "requests_per_second": 10.0, "tokens_per_second": 3000.0,
           "output_tokens_per_second": 1000.0}
    r = vllm.parse(json.dumps(rec), "tp.json")
    m = r.measurements[0]
    assert m.workload == {"requests": 100, "total_tokens": 30000, "total_input_tokens": 20000,
                          "total_output_tokens": 10000, "prompt_tokens": 200, "gen_tokens": 100}
    assert m.conditions == {"elapsed_s": 10.0}
    assert {x.metric: x.value for x in r.measurements} == {"request_throughput": 10.0, "total_tokens_per_s": 3000.0,
                                                           "output_tokens_per_s": 1000.0}
    assert m.hardware_key == "sig:vllm-throughput:"
    zero = vllm.parse(json.dumps(dict(rec, requests_per_second=0.0, tokens_per_second=0.0,
                                      output_tokens_per_second=0.0)), "zero.json")
    assert zero.measurements == [] and any("zero or missing" in p.message for p in zero.problems)


def test_vllm_latency_percentiles_with_odd_labels_are_skipped():
    rec = {"avg_latency": 0.0, "latencies": [1.0], "percentiles": {"50": 1.0, " 90 ": 1.5, "p99": 2.0, "99.9": 2.5}}
    r = vllm.parse(json.dumps(rec), "lat.json")
    assert {(m.statistic, m.value) for m in r.measurements} == {("p50", 1.0), ("p90", 1.5), ("p99.9", 2.5)}
    assert all(m.format == "vllm-latency" for m in r.measurements)
    empty = vllm.parse(json.dumps({"avg_latency": 0.0, "percentiles": {}}), "none.json")
    assert empty.measurements == [] and any("no latency" in p.message for p in empty.problems)


# --------------------------------------------------------------------------- detection rules


def test_nccl_is_recognised_by_its_table_head_or_its_footer_alone():
    assert nccl_tests.looks_like(TABLE_HEAD)
    assert nccl_tests.looks_like("some output\n# Avg bus bandwidth    : 92.3405\n")  # a footer alone
    assert nccl_tests.looks_like("#       size         count      type   redop    root     time\n")  # columns alone
    assert not nccl_tests.looks_like("out-of-place copies are slow\n")  # no busbw column
    assert not nccl_tests.looks_like("busbw 12\n")
    assert not nccl_tests.looks_like("# avg bus bandwidth: 12\n")  # as nccl-tests writes it, capitalised


def test_vllm_is_recognised_by_each_of_its_three_outputs_alone():
    serving = '{"backend": "vllm", "completed": 10, "mean_ttft_ms": 44.1}'
    assert vllm.looks_like(serving) and vllm.looks_like_serving(serving)
    assert vllm.looks_like_serving('{"model_id": "m", "request_rate": "inf", "median_e2el_ms": 3}')
    assert not vllm.looks_like_serving('{"mean_ttft_ms": 44.1, "completed": 10}')  # no backend or model
    assert not vllm.looks_like_serving('{"backend": "vllm", "mean_ttft_ms": 44.1}')  # no run counts
    throughput = '{"elapsed_time": 1.0, "requests_per_second": 2.0, "tokens_per_second": 3.0}'
    assert vllm.looks_like(throughput) and not vllm.looks_like_serving(throughput)
    latency = '{"avg_latency": 1.25, "percentiles": {"50": 1.2}}'
    assert vllm.looks_like(latency) and not vllm.looks_like_throughput(latency)
    assert not vllm.looks_like('{"avg_latency": 1.25}')
    assert vllm.is_latency({"avg_latency": 1.0, "latencies": [1.0]}) and not vllm.is_latency({"avg_latency": 1.0})
    assert not vllm.is_throughput({"requests_per_second": 1.0})


def test_vllm_an_infinite_rate_written_as_a_number_or_a_word_is_unlimited():
    # Python's json writes float("inf") as Infinity, which vLLM's older files hold
    r = _vllm(dict(_run0(), request_rate=float("inf")))
    m = r.measurements[0]
    assert m.conditions["request_rate"] is None and m.conditions["request_rate_unlimited"] is True
    info = next(p for p in r.problems if "Infinity" in p.message)
    assert (info.file, info.place, info.severity) == ("serve.json", "record 0 (line 1)", "info")
    assert _vllm(dict(_run0(), request_rate=" Infinity ")).measurements[0].conditions["request_rate_unlimited"]
    assert not any("Infinity" in p.message for p in _vllm(_run0()).problems)  # the string "inf" is no problem
    # no rate at all is not an unlimited one
    rec = _run0()
    del rec["request_rate"]
    cond = _vllm(rec).measurements[0].conditions
    assert cond["request_rate"] is None and "request_rate_unlimited" not in cond


def test_vllm_results_carry_the_format_the_file_name_and_why_the_gpu_is_asked():
    r = _vllm(_run0(), "sweep/run0.json")
    assert r.format == "vllm"
    assert {p.file for p in r.problems} == {"run0.json"}
    assert r.measurements[0].match_reason == "the file does not record the hardware"
    assert r.measurements[0].source_file == "run0.json"


def test_vllm_negative_figures_are_refused_and_one_is_a_figure():
    rec = dict(_run0(), mean_ttft_ms=-5.0, std_tpot_ms=-1.0, request_throughput=1.0)
    ms = _vllm(rec).measurements
    assert not any(m.metric == "ttft_s" and m.statistic == "mean" for m in ms)
    tpot = next(m for m in ms if m.metric == "tpot_s" and m.statistic == "mean")
    assert tpot.value == pytest.approx(8.204553624697533e-3) and tpot.stddev is None
    assert next(m for m in ms if m.metric == "request_throughput").value == 1.0


def test_vllm_old_serving_files_keep_their_sampling_setup():
    # "best_of": 1, "use_beam_search": false in the Lambda Labs file
    cond = vllm.parse(VLLM_LAMBDA).measurements[0].conditions
    assert (cond["best_of"], cond["use_beam_search"], cond["backend"]) == (1, False, "vllm")
    # a metadata key is cut to 60 characters, its end marked
    key = next(iter(vllm.metadata_of({"k" * 70: 1})))
    assert len(key) == 60 and key.endswith("…")


# --------------------------------------------------------------------------- nccl_tests.py, second pass

RCCL_TWO = BENCH / "nccl-tests" / "rccl-tests_PR2078+PR2075_two-tests-in-turn_ASSEMBLED.txt"


def test_nccl_problems_carry_their_severity_and_no_place():
    # no device lines, no '*_perf' line, wrong values: a question, two warnings, the wiring note
    text = TABLE_HEAD + ROW_8G + "\n# Out of bounds values : 3 FAILED\n"
    r = nccl_tests.parse(text, "bare.txt")
    question = next(p for p in r.problems if "does not name the GPUs" in p.message)
    unknown = next(p for p in r.problems if "not named in the log" in p.message)
    wrong = next(p for p in r.problems if "Out of bounds" in p.message)
    wiring = next(p for p in r.problems if "how the GPUs are connected" in p.message)
    assert (question.severity, unknown.severity, wrong.severity, wiring.severity) == (
        "question", "warning", "warning", "info")
    assert {p.place for p in (question, unknown, wrong, wiring)} == {""}
    assert {p.file for p in r.problems} == {"bare.txt"}
    assert wiring.message.endswith("RoCE ...)")  # one node or none known: no "across its N nodes"
    assert not any("tests in this log" in p.message for p in r.problems)  # one test
    m = r.measurements[0]
    assert (m.match_confidence, m.format, m.statistic) == ("ask", "nccl-tests", "mean")
    assert m.match_reason == "the log has no '# Rank ... device' lines naming the GPUs"


def test_nccl_a_log_without_a_table_is_an_error_without_a_place():
    r = nccl_tests.parse("# nThread 1 nGpus 1 minBytes 8 maxBytes 8\n", "empty.txt")
    assert (r.errors[0].file, r.errors[0].place, r.errors[0].severity) == ("empty.txt", "", "error")


def test_nccl_a_footer_alone_is_still_a_measurement():
    r = nccl_tests.parse("# all_reduce_perf\n# Avg bus bandwidth    : 92.3405\n", "footer.txt")
    assert [(m.metric, m.value) for m in r.measurements] == [("avg_busbw_gbs", pytest.approx(92.3405))]


def test_nccl_dtypes_are_read_by_name_or_by_their_shape():
    def read(dtype: str) -> list:
        row = ROW_8G.replace("  float ", f"  {dtype} ")
        return nccl_tests.parse(TABLE_HEAD + row + "\n", "t.txt").measurements

    assert read("bfloat16")[0].workload["dtype"] == "bfloat16"
    assert read("Float")[0].workload["dtype"] == "Float"  # a known type in capitals
    assert read("custom_t")[0].workload["dtype"] == "custom_t"  # an unknown type written as a type is
    assert read("Custom-T") == []


def test_nccl_a_twelve_column_row_with_a_whole_number_time_has_no_root():
    row = "        1024           256     float     sum       44    0.10    0.18      0       45    0.10    0.18      0"
    ms = nccl_tests.parse(TABLE_HEAD + row + "\n", "t.txt").measurements
    assert all("root" not in m.workload for m in ms)
    assert _of(ms, "collective_time_s", "out-of-place")[0].value == pytest.approx(44e-6)


def test_nccl_a_one_microsecond_time_is_stored_and_rows_are_numbered():
    rows = [ROW_8G.replace("44734", "1.00"), ROW_8G.replace("8589934592", "4294967296")]
    ms = nccl_tests.parse(TABLE_HEAD + "\n".join(rows) + "\n", "t.txt").measurements
    assert _of(ms, "collective_time_s", "out-of-place", 8589934592)[0].value == pytest.approx(1e-6)
    assert {m.record_index for m in ms if m.workload["size_bytes"] == 4294967296} == {1}


def test_nccl_two_tests_in_turn_number_their_rows_on_and_share_the_first_header():
    # all_reduce: 4 rows (records 0-3) and its average (4); broadcast's first row is record 5
    ms = nccl_tests.parse(RCCL_TWO).measurements
    bc = [m for m in ms if m.workload["collective"] == "broadcast"]
    assert min(m.record_index for m in bc) == 5
    ar_avg = next(m for m in ms if m.metric == "avg_busbw_gbs" and m.workload["collective"] == "all_reduce")
    assert ar_avg.record_index == 4
    # broadcast printed no "# nThread" line: it shares all_reduce's (minBytes 1024, 20 iterations)
    assert bc[0].conditions["min_bytes"] == 1024 and bc[0].conditions["iters"] == 20
    assert bc[0].conditions["n_threads"] == 1


def test_nccl_headers_and_device_lines_after_a_table_start_the_next_test():
    devices = "#  Rank  0 Group  0 Pid  100 on nodeA device  0 [0x00] NVIDIA H100 80GB HBM3\n"
    header = "# nThread 2 nGpus 4 minBytes 8 maxBytes 8589934592\n"
    text = header + devices + TABLE_HEAD + ROW_8G + "\n" + devices + TABLE_HEAD + ROW_8G + "\n" + header + TABLE_HEAD \
        + ROW_8G + "\n"
    r = nccl_tests.parse(text, "three.txt")
    assert len({m.record_index for m in r.measurements}) == 3
    assert any(p.message.startswith("3 tests in this log (unknown, unknown, unknown)") for p in r.problems)
    c = r.measurements[0].conditions
    assert (c["n_threads"], c["gpus_per_process"]) == (2, 4)
    assert {m.accelerator_count for m in r.measurements} == {1}


def test_nccl_each_log_has_its_own_run_id_and_mixed_gpus_keep_their_count():
    one = nccl_tests.parse(TABLE_HEAD + ROW_8G + "\n", "a.txt").measurements[0].conditions["run"]
    other = nccl_tests.parse(TABLE_HEAD + ROW_8G.replace("44734", "44735") + "\n", "b.txt")
    assert other.measurements[0].conditions["run"] != one
    devices = "".join(f"#  Rank  {i} Group  0 Pid  {100 + i} on nodeA device  {i} [0x0{i}] {name}\n"
                      for i, name in enumerate(["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"] * 2))
    m = nccl_tests.parse(devices + TABLE_HEAD + ROW_8G + "\n", "mixed.txt").measurements[0]
    assert m.accelerator_count == 4 and "mixed devices" in m.match_reason


def test_nccl_an_overlong_line_is_skipped_and_the_rest_read():
    text = "x" * ((1 << 20) + 10) + "\n" + TABLE_HEAD + ROW_8G + "\n"
    assert len(nccl_tests.parse(text, "long.txt").measurements) == 6


# --------------------------------------------------------------------------- vllm.py, second pass


def test_vllm_each_identifying_key_is_enough_on_its_own():
    assert vllm.looks_like_serving('{"median_ttft_ms": 1, "endpoint_type": "openai", "num_prompts": 8}')
    assert vllm.looks_like_serving('{"mean_e2el_ms": 1, "model_id": "m", "request_throughput": 2}')
    assert not vllm.looks_like_throughput('{"requests_per_second": 1, "tokens_per_second": 2}')  # no elapsed_time
    assert vllm.is_serving({"request_throughput": 1.0, "median_ttft_ms": 2.0})
    assert vllm.is_serving({"request_throughput": 1.0, "completed": 3})
    assert not vllm.is_serving({"request_throughput": 1.0})
    assert vllm.is_serving({"p99_e2el_ms": 3.0, "date": "20260101-000000"})  # latency only, with its setup
    assert not vllm.is_serving({"p99_e2el_ms": 3.0})


def test_vllm_a_hinted_measurement_keeps_every_field_of_an_unhinted_one():
    plain = {(m.metric, m.statistic): m for m in _vllm(_run0()).measurements}
    hinted = {(m.metric, m.statistic): m for m in _vllm(dict(_run0(), gpu="NVIDIA_L40S")).measurements}
    assert plain.keys() == hinted.keys()
    for key, m in hinted.items():
        p = plain[key]
        assert (m.format, m.unit, m.value, m.stddev, m.workload) == (p.format, p.unit, p.value, p.stddev, p.workload)
        assert m.match_confidence is not None and m.statistic == key[1]
    p = plain["ttft_s", "mean"]
    assert (p.hardware_text, p.accelerator_count, p.statistic) == ("", None, "mean")


def test_vllm_records_without_a_completed_count():
    base = {k: v for k, v in _run0().items() if k != "completed"}
    # a throughput and two failures: the failures are counted against the failures alone
    r = _vllm(dict(base, failed=2))
    assert any(p.message.startswith("2 of 2 requests failed") for p in r.problems)
    # latencies only, no count, no throughput: still a measurement
    lat = {k: v for k, v in base.items() if not k.endswith("throughput") and "goodput" not in k}
    assert _vllm(lat).measurements
    # nothing measured at all (zero throughput, zero latencies): every request failed, the prompts counted
    empty = {k: (0.0 if k.endswith(("_ms", "throughput")) else v) for k, v in base.items()}
    warning = _vllm(empty).problems[0]
    assert warning.severity == "warning" and "(0 completed, 8 failed)" in warning.message
    none_sent = {k: v for k, v in empty.items() if k != "num_prompts"}
    assert "(0 completed, 0 failed)" in _vllm(none_sent).problems[0].message


def test_vllm_names_model_label_and_details_from_their_own_keys():
    rec = {k: v for k, v in _run0().items() if k not in ("model_id", "tokenizer_id")}
    rec.update(model="org/served-model-1b", label="nightly", ttfts="not a list", request_goodput=2.0)
    r = _vllm(rec, "x.json")
    m = r.measurements[0]
    assert m.workload["model"] == "org/served-model-1b" and "tokenizer" not in m.workload
    assert m.conditions["label"] == "nightly"
    details = next(p for p in r.problems if "per-request details" in p.message)
    assert "(0 requests:" in details.message and details.place == "record 0 (line 1)"
    assert next(x for x in r.measurements if x.metric == "request_goodput").unit == "requests/s"
    assert {p.file for p in r.problems} == {"x.json"}


def test_vllm_offline_and_latency_problems_name_their_file():
    tp = vllm.parse(json.dumps({"elapsed_time": 1.0, "requests_per_second": 0.0, "tokens_per_second": 0.0}), "t.json")
    lat = vllm.parse(json.dumps({"avg_latency": 0.0, "percentiles": {}}), "l.json")
    assert {p.file for p in tp.problems} == {"t.json"} and {p.file for p in lat.problems} == {"l.json"}
    assert tp.measurements == [] and lat.measurements == []


def test_vllm_batch_latencies_are_seconds_with_their_spread_and_refuse_negatives():
    rec = {"avg_latency": 1.25, "std_latency": 0.01, "latencies": [1.2], "percentiles": {"50": 1.25, "90": -1.0}}
    r = vllm.parse(json.dumps(rec), "lat.json")
    mean = next(m for m in r.measurements if m.statistic == "mean")
    assert (mean.unit, mean.stddev, mean.format, mean.hardware_key) == ("s", 0.01, "vllm-latency", "sig:vllm-latency:")
    assert [(m.statistic, m.unit) for m in r.measurements] == [("mean", "s"), ("p50", "s")]
    question = next(p for p in r.problems if p.severity == "question")
    assert (question.file, question.place) == ("lat.json", "record 0 (line 1)")
    assert question.message.endswith(vllm.QUESTION.split(": ", 1)[1])
    neg = vllm.parse(json.dumps(dict(rec, avg_latency=-1.0, std_latency=-0.5, percentiles={})), "neg.json")
    warning = next(p for p in neg.problems if "no latency" in p.message)
    assert neg.measurements == [] and (warning.severity, warning.place) == ("warning", "record 0 (line 1)")
    sd = vllm.parse(json.dumps(dict(rec, std_latency=-0.5)), "sd.json").measurements[0]
    assert sd.stddev is None


def test_vllm_offline_throughput_units_and_refused_negatives():
    rec = {"elapsed_time": -1.0, "num_requests": 10, "requests_per_second": 2.0, "tokens_per_second": -3.0}
    r = vllm.parse(json.dumps(rec), "tp.json")
    assert [(m.metric, m.unit) for m in r.measurements] == [("request_throughput", "requests/s")]
    m = r.measurements[0]
    assert m.conditions == {"elapsed_s": None}
    question = next(p for p in r.problems if p.severity == "question")
    assert (question.file, question.place) == ("tp.json", "record 0 (line 1)")
    assert question.message.endswith(vllm.QUESTION.split(": ", 1)[1])
    zero = vllm.parse(json.dumps(dict(rec, requests_per_second=0.0)), "z.json")
    warning = next(p for p in zero.problems if "zero or missing" in p.message)
    assert (warning.severity, warning.place) == ("warning", "record 0 (line 1)")


def test_vllm_serving_problems_name_their_record_and_negative_token_counts_are_refused():
    rec = dict(_run0(), total_input_tokens=-256, failed=1, gpu="NVIDIA_L40S")
    r = _vllm(rec)
    assert "prompt_tokens" not in r.measurements[0].workload
    for p in r.problems:
        assert (p.file, p.place[:17]) == ("serve.json", "record 0 (line 1)")
    info = next(p for p in r.problems if "--metadata" in p.message)
    assert info.severity == "info"
    failed = next(p for p in r.problems if "requests failed" in p.message)
    assert failed.severity == "warning"
    none = {k: v for k, v in _run0().items() if not k.endswith(("_ms", "throughput", "per_s"))}
    none["mean_ttft_ms"] = None
    warning = next(p for p in _vllm(dict(none, request_throughput=None)).problems if "no throughput or latency" in
                   p.message)
    assert (warning.severity, warning.place, warning.file) == ("warning", "record 0 (line 1)", "serve.json")
