"""llama-bench records read field by field, pinned on the real files of tests/data/bench/llama-bench
and on records built from the RTX 4080 example (llama.cpp's README, build 5163), written to kill the
mutants that survived mutation testing of gpudesk/core/benchmarks/llama_bench.py (README "Mutation
testing"). Every expected value is read off the record by hand or follows from llama-bench's own
meaning of the field (n_prompt, n_gen, n_depth, avg_ts, samples_ts)."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.benchmarks import llama_bench as lb
from gpudesk.core.benchmarks.reader import Record

from .conftest import TEST_DATA

DIR = TEST_DATA / "bench" / "llama-bench"
RTX4080 = DIR / "llamacpp-README_RTX4080_CUDA_build5163_array.json"
OLD_CPU = DIR / "ik_llama.cpp_PR273-discussion_XeonE5-2690v3_CPU-only_old-schema.json"
M5 = DIR / "jimliddle_AppleM5Max_metal.jsonl"


def _tg128(**changes) -> dict:
    """The README's tg128 record: 118.881588 tokens/s, stddev 1.041811, five samples, with `changes` applied
    (a value of None removes the field)."""
    rec = json.loads(RTX4080.read_text())[1]
    for key, value in changes.items():
        if value is None:
            rec.pop(key, None)
        else:
            rec[key] = value
    return rec


def _convert(rec: dict):
    """One record through convert (a record skipped this way leaves the file with no measurement, which
    parse reports as an error of its own)."""
    out = list(lb.convert(rec, Record(rec, 0, 1, True), "built.json"))
    assert all((p.file, p.place) == ("built.json", "record 0 (line 1)") for p in out if not hasattr(p, "metric"))
    return ([m for m in out if hasattr(m, "metric")],
            [(p.severity, p.message) for p in out if not hasattr(p, "metric")])


def _read(*records):
    r = lb.parse(json.dumps(list(records)), "built.json")
    assert r.format == "llama-bench" and all(m.source_file == "built.json" for m in r.measurements)
    assert all(m.format == "llama-bench" for m in r.measurements)
    assert all(p.file == "built.json" and p.place.startswith("record ") for p in r.problems)
    return r.measurements, [(p.severity, p.message) for p in r.problems]


# --------------------------------------------------------------------------- names and classes


@pytest.mark.parametrize("model_type, quant", [
    ("llama 7B Q4_K - Large", "Q4_K_L"),
    ("llama 7B IQ3_XXS - Extra Small", "IQ3_XXS_XS"),
    ("llama 7B TQ1_0", "TQ1_0"),
    ("llama 7B NVFP4", "NVFP4"),
    ("llama 7B F16", "F16"),
    ("llama 7B", None),
    ("", None),
])
def test_the_quantisation_is_read_from_the_model_type(model_type, quant):
    assert lb.quantisation(model_type) == quant


@pytest.mark.parametrize("quant, precision", [
    ("q6_k", "q4"), ("IQ1_S", "q4"), ("TQ2_0", "q4"), ("NVFP4", "q4"), ("MXFP4", "q4"), ("Q8_K", "q8"),
    ("F32", "fp32"), ("f16", "fp16"), ("bf16", "bf16"), ("Q7_0", None), ("FP8", None), (None, None), ("", None),
])
def test_every_4_to_6_bit_format_is_the_q4_class(quant, precision):
    assert lb.precision_of(quant) == precision


@pytest.mark.parametrize("model_type, moe", [
    ("qwen3moe 30B.A3B Q4_K - Medium", (True, 3e9)),
    ("qwen3 1.5B.A0.5B Q8_0", (True, 0.5e9)),
    ("llama 8x7B Q4_0", (True, None)),
    ("Mixtral 47B Q4_0", (True, None)),
    ("GPT-OSS 20B MXFP4", (True, None)),
    ("deepseek2 16B Q4_0", (True, None)),
    ("llama 8B Q4_0", (False, None)),
    ("", (False, None)),
])
def test_a_mixture_of_experts_is_known_by_its_active_size_its_name_or_its_architecture(model_type, moe):
    assert lb._moe(model_type) == moe


def test_the_backend_comes_from_the_backends_text_or_the_old_per_backend_flags():
    assert lb._backends({"backends": " CUDA ", "cuda": False}) == "CUDA"
    assert lb._backends({"backends": "  ", "cuda": True, "metal": True, "rpc": "0"}) == "CUDA,Metal"
    assert lb._backends({"vulkan": True, "kompute": True, "sycl": True, "gpu_blas": True, "blas": True}) == \
        "Vulkan,Kompute,SYCL,GPU BLAS,BLAS"
    assert lb._backends({"cuda": 1}) == "CPU"  # only JSON true counts, as llama-bench writes it
    for off in (None, False, "0", 0, "", "false"):
        assert lb._backends({"rpc": off}) == "CPU", off
    assert lb._backends({"rpc": "host:50052"}) == "RPC"
    assert lb._backends({"cuda": True, "rpc": True}) == "CUDA,RPC"


def test_a_backend_list_is_cpu_only_when_every_part_runs_on_the_cpu():
    assert lb._is_cpu_backend("CPU")
    assert lb._is_cpu_backend("BLAS, Accelerate+RPC")
    assert lb._is_cpu_backend("OpenBLAS AMX")
    assert not lb._is_cpu_backend("CUDA,BLAS")
    assert not lb._is_cpu_backend("MTL")


def test_a_record_has_a_model_type_a_speed_and_a_token_count():
    assert lb.is_record({"model_type": "x", "avg_ts": 1, "n_prompt": 1})
    assert lb.is_record({"model_type": "x", "samples_ts": [1], "n_gen": 1})
    assert not lb.is_record({"avg_ts": 1, "n_prompt": 1})
    assert not lb.is_record({"model_type": "x", "n_prompt": 1})
    assert not lb.is_record({"model_type": "x", "avg_ts": 1})
    head = RTX4080.read_text()[:2000]
    assert lb.looks_like(head)
    assert not lb.looks_like(head.replace("build_commit", "commit"))
    assert not lb.looks_like(head.replace("n_prompt", "prompt"))
    assert not lb.looks_like(head.replace("avg_ts", "avg").replace("samples_ts", "samples").replace("n_gen", "gen"))
    assert lb.looks_like(head.replace("avg_ts", "avg").replace("samples_ts", "samples"))  # n_gen is enough


# --------------------------------------------------------------------------- setup


def test_the_readme_record_has_its_model_its_conditions_and_its_gpu():
    (m,), problems = _read(_tg128())
    assert problems == []
    assert m.workload == {"model": "Qwen2.5-7B-Instruct-Q4_K_M", "model_type": "qwen2 7B Q4_K - Medium",
                          "model_file": "Qwen2.5-7B-Instruct-Q4_K_M.gguf", "params": 7615616512,
                          "weights_bytes": 4677120000, "quantisation": "Q4_K_M", "precision": "q4",
                          "batch": 2048, "ubatch": 512, "concurrency": 1, "prompt_tokens": 0, "gen_tokens": 128,
                          "depth": 0, "test": "tg128"}
    assert m.conditions == {"backend": "CUDA", "build": "8cf427ff (5163)", "cpu": "AMD Ryzen 7 7800X3D 8-Core Processor",
                            "n_threads": 8, "cpu_mask": "0x0", "cpu_strict": False, "poll": 50, "type_k": "f16",
                            "type_v": "f16", "n_gpu_layers": 99, "split_mode": "layer", "main_gpu": 0,
                            "no_kv_offload": False, "flash_attn": False, "tensor_split": "0.00", "use_mmap": True,
                            "embeddings": False, "repetitions": 5, "test_time": "2025-04-24T11:58:51Z"}
    assert (m.hardware_key, m.statistic, m.stddev, m.cpu_only) == ("hw:NVIDIA GeForce RTX 4080", "mean",
                                                                   pytest.approx(1.041811), False)


def test_a_model_without_a_file_is_named_by_its_type_and_a_build_without_a_number_by_its_commit():
    (m,), _ = _read(_tg128(model_filename=None, build_number=None, cpu_info=None, n_batch="big", model_size=-1))
    assert m.workload["model"] == "qwen2 7B Q4_K - Medium" and m.workload["model_file"] == ""
    assert "batch" not in m.workload and "weights_bytes" not in m.workload
    assert m.conditions["build"] == "8cf427ff" and "cpu" not in m.conditions
    (m,), _ = _read(_tg128(model_filename="C:\\models\\Llama.GGUF", build_commit=None))
    assert m.workload["model"] == "Llama" and "build" not in m.conditions
    (m,), _ = _read(_tg128(model_n_params=-5))
    assert "params" not in m.workload


def test_a_moe_model_carries_its_active_parameters():
    (m,), _ = _read(_tg128(model_type="qwen3moe 30B.A3B Q4_K - Medium"))
    assert m.workload["moe"] is True and m.workload["active_params"] == 3e9
    (m,), _ = _read(_tg128(model_type="mixtral 8x7B Q4_0"))
    assert m.workload["moe"] is True and "active_params" not in m.workload
    (m,), _ = _read(_tg128())
    assert "moe" not in m.workload


def test_a_condition_given_as_null_is_kept_and_one_that_is_not_a_scalar_is_dropped():
    (m,), _ = _read(_tg128(type_k=[1, 2], n_cpu_moe=0))
    assert "type_k" not in m.conditions
    rec = _tg128()
    rec["main_gpu"] = None
    (m,), _ = _read(rec)
    assert "main_gpu" in m.conditions and m.conditions["main_gpu"] is None


def test_no_layers_offloaded_is_a_cpu_run_even_with_a_gpu_present():
    (m,), problems = _read(_tg128(n_gpu_layers=0))
    assert (m.cpu_only, m.accelerator_id, m.accelerator_count, m.match_confidence) == (True, None, 0, "exact")
    assert m.match_reason == ("no layers offloaded (n_gpu_layers = 0): a CPU run on AMD Ryzen 7 7800X3D 8-Core "
                              "Processor although NVIDIA GeForce RTX 4080 is present; kept, flagged")
    assert (m.hardware_text, m.hardware_key) == ("AMD Ryzen 7 7800X3D 8-Core Processor",
                                                 "cpu:AMD Ryzen 7 7800X3D 8-Core Processor")
    assert problems == [("info", "a CPU-only run (AMD Ryzen 7 7800X3D 8-Core Processor): kept, flagged, not "
                                 "matched to an accelerator")]
    (m,), problems = _read(_tg128(n_gpu_layers=0, cpu_info=None))
    assert "a CPU run on the CPU although" in m.match_reason
    assert problems == [("info", "a CPU-only run (CPU not named): kept, flagged, not matched to an accelerator")]


def test_a_cpu_backend_without_a_gpu_is_a_plain_cpu_run():
    (m,), _ = _read(_tg128(gpu_info="", backends="CPU"))
    assert m.cpu_only and m.match_reason.startswith("CPU-only run (AMD Ryzen 7")
    assert m.hardware_key == "cpu:AMD Ryzen 7 7800X3D 8-Core Processor"


def test_a_gpu_backend_without_a_gpu_name_asks_which_accelerator_ran_it():
    (m,), _ = _read(_tg128(gpu_info="", backends="Vulkan"))
    assert (m.accelerator_id, m.match_confidence, m.cpu_only) == (None, "ask", False)
    assert m.match_reason == "the record names no GPU (backend Vulkan): which accelerator ran it?"
    assert m.hardware_key == "sig:llama-bench:Vulkan:AMD Ryzen 7 7800X3D 8-Core Processor"


def test_the_device_list_counts_the_gpus_used():
    (m,), _ = _read(_tg128(devices="CUDA0/CUDA1"))
    assert m.accelerator_count == 2 and m.accelerator_id == "rtx-4080"
    (m,), _ = _read(_tg128(devices="CUDA0,CUDA1,, CUDA2"))
    assert m.accelerator_count == 3
    two = "NVIDIA GeForce RTX 4080, NVIDIA GeForce RTX 4080"
    for unnamed in ("auto", "NONE"):  # no list: the GPUs named in gpu_info count
        (m,), _ = _read(_tg128(devices=unnamed, gpu_info=two))
        assert m.accelerator_count == 2, unnamed
    # no split mode given is not split mode none
    (m,), _ = _read(_tg128(gpu_info=two, split_mode=None))
    assert m.accelerator_count == 2
    # split mode none runs on one of two listed GPUs
    (m,), _ = _read(_tg128(gpu_info="NVIDIA GeForce RTX 4080, NVIDIA GeForce RTX 4080", split_mode="none"))
    assert m.accelerator_count == 1
    (m,), _ = _read(_tg128(gpu_info="NVIDIA GeForce RTX 4080, NVIDIA GeForce RTX 4080"))
    assert m.accelerator_count == 2


def test_expert_layers_on_the_cpu_make_a_hybrid_run():
    (m,), problems = _read(_tg128(n_cpu_moe=12))
    assert m.conditions["hybrid"] is True and m.conditions["n_cpu_moe"] == 12
    assert problems == [("info", "12 expert layer(s) kept on the CPU (n_cpu_moe): a hybrid CPU+GPU run")]
    (m,), problems = _read(_tg128(n_cpu_moe=1))
    assert m.conditions["hybrid"] is True and problems[0][1].startswith("1 expert layer(s)")
    (m,), problems = _read(_tg128(n_cpu_moe=0))
    assert "hybrid" not in m.conditions and problems == []


def test_a_setups_problems_are_said_once_for_all_its_records():
    rec = _tg128(n_cpu_moe=2)
    ms, problems = _read(rec, dict(rec, n_gen=256, avg_ts=100.0))
    assert [m.workload["test"] for m in ms] == ["tg128", "tg256"]
    assert len(problems) == 1


# --------------------------------------------------------------------------- tests and speeds


def test_prompt_generation_and_combined_tests_are_three_metrics():
    ms, problems = _read(_tg128(n_prompt=512, n_gen=0, test="pp512"), _tg128(test="tg128"),
                         _tg128(n_prompt=512, test="pp512+tg128"), _tg128(n_prompt="512", n_gen=128.0))
    assert [(m.metric, m.workload["test"]) for m in ms] == [
        ("prefill_tokens_per_s", "pp512"), ("decode_tokens_per_s_per_user", "tg128"),
        ("prompt_and_generation_tokens_per_s", "pp512+tg128"), ("prompt_and_generation_tokens_per_s", "pp512+tg128")]
    assert problems == []


def test_a_test_name_that_disagrees_with_the_token_counts_is_flagged_and_the_counts_win():
    (m,), problems = _read(_tg128(test="pp512", n_depth=1024))
    assert m.workload["test"] == "tg128 @ d1024"
    assert problems == [("warning", "'test' says 'pp512' but the token counts say 'tg128 @ d1024': the token counts "
                                    "were used")]
    _, problems = _read(_tg128(test="  "))
    assert problems == []
    # the depth is not part of llama-bench's own test name
    (m,), problems = _read(_tg128(test="tg128", n_depth=512))
    assert m.workload["test"] == "tg128 @ d512" and problems == []
    # a one-token prompt is still prompt processing
    (m,), _ = _read(_tg128(n_prompt=1, n_gen=0, test="pp1"))
    assert m.metric == "prefill_tokens_per_s"


def test_token_counts_that_are_not_whole_skip_the_record():
    for bad in ({"n_prompt": "many"}, {"n_gen": -1}, {"n_prompt": -512}, {"n_gen": 1.5}):
        ms, problems = _convert(_tg128(**bad))
        assert ms == [] and problems == [("warning", "'n_prompt'/'n_gen' are not whole token counts; skipped")], bad
    # a missing count is none
    (m,), _ = _read(_tg128(n_prompt=None))
    assert m.workload["prompt_tokens"] == 0 and m.metric == "decode_tokens_per_s_per_user"


def test_a_bad_depth_is_taken_as_zero_and_flagged():
    for bad in ("deep", -1):
        (m,), problems = _read(_tg128(n_depth=bad))
        assert m.workload["depth"] == 0 and m.workload["test"] == "tg128"
        assert problems == [("warning", "'n_depth' is not a whole token count: taken as 0")]
    (m,), problems = _read(_tg128(n_depth=None))
    assert m.workload["depth"] == 0 and problems == []


def test_a_test_of_no_tokens_is_skipped():
    ms, problems = _convert(_tg128(n_gen=0))
    assert ms == [] and problems == [("warning", "a test with no prompt and no generated tokens (n_prompt = n_gen = "
                                                 "0); skipped")]


def test_without_avg_ts_the_mean_of_the_samples_is_the_speed():
    # 100 and 200 tokens/s; the text "fast" is not a number and is left out with a warning of its own
    (m,), problems = _read(_tg128(avg_ts=None, samples_ts=[100.0, "fast", 200]))
    assert m.value == pytest.approx(150.0)
    assert m.conditions["repetitions"] == 3  # the record's samples, as llama-bench ran them
    assert ("info", "'avg_ts' is missing: the mean of 'samples_ts' was used") in problems
    assert any("samples_ts" in message for severity, message in problems if severity == "warning")
    # a negative sample is no speed either: (100 + 200) / 2
    (m,), _ = _read(_tg128(avg_ts=None, samples_ts=[100.0, -50.0, 200.0]))
    assert m.value == pytest.approx(150.0)
    (m,), _ = _read(_tg128(avg_ts="118.5"))
    assert m.value == pytest.approx(118.5)


def test_a_record_without_a_speed_or_with_zero_is_skipped():
    for changes in ({"avg_ts": None, "samples_ts": None}, {"avg_ts": None, "samples_ts": ["x"]},
                    {"avg_ts": None, "samples_ts": "118"}, {"avg_ts": None, "samples_ts": []}):
        ms, problems = _convert(_tg128(**changes))
        assert ms == [] and problems[-1] == ("warning", "no speed in the record ('avg_ts' and 'samples_ts' missing "
                                                        "or not numbers); skipped"), changes
    ms, problems = _convert(_tg128(avg_ts=0.0))
    assert ms == [] and problems == [("warning", "the speed is 0 tokens/s: the test did not run; skipped")]
    # a negative avg_ts is no speed: the mean of the five samples is, (119.03 + 120.178 + 119.43 + 118.307
    # + 117.464) / 5 = 118.8818
    (m,), problems = _convert(_tg128(avg_ts=-5.0))
    assert m.value == pytest.approx(118.8818)
    assert problems[-1] == ("info", "'avg_ts' is missing: the mean of 'samples_ts' was used")


def test_repetitions_and_the_test_time_are_conditions():
    (m,), _ = _read(_tg128(samples_ts=None))
    assert m.conditions["repetitions"] is None
    (m,), _ = _read(_tg128(test_time="24 April 2025, 11:59"))
    assert m.conditions["test_time"] == "24 April 2025, 11:59"
    (m,), _ = _read(_tg128(test_time="2025-04-24T11:59:00Z" * 3))
    assert m.conditions["test_time"] == ("2025-04-24T11:59:00Z" * 3)[:39] + "…"
    forty = "2025-04-24T11:58:51Z" * 2  # 40 plain characters are kept whole, 41 are cut
    assert _read(_tg128(test_time=forty))[0][0].conditions["test_time"] == forty
    assert _read(_tg128(test_time=forty + "Z"))[0][0].conditions["test_time"] == forty[:39] + "…"
    (m,), _ = _read(_tg128(test_time=None))
    assert "test_time" not in m.conditions


def test_the_content_hash_changes_with_every_figure_of_the_run():
    base = _read(_tg128())[0][0].content_hash
    assert len(base) == 64
    others = [_read(_tg128(**c))[0][0].content_hash for c in (
        {"avg_ts": 118.0}, {"stddev_ts": 0.5}, {"n_depth": 512}, {"n_gen": 64}, {"samples_ts": [1.0, 2.0]},
        {"test_time": "2025-04-24T12:00:00Z"}, {"n_threads": 4}, {"model_type": "qwen2 7B Q8_0"},
        {"gpu_info": "NVIDIA GeForce RTX 4090"})]
    assert len(set(others)) == len(others) and base not in others
    assert _read(_tg128())[0][0].content_hash == base


# --------------------------------------------------------------------------- the setup cache


def test_records_of_one_setup_share_it_and_a_different_value_makes_a_new_one():
    rec = _tg128()
    cache: dict = {}
    item = Record(rec, 1, 1, True)
    first = list(lb.convert(rec, item, "f.json", cache))[0]
    second = list(lb.convert(dict(rec, n_gen=256, avg_ts=60.0), Record(rec, 2, 2, True), "f.json", cache))[0]
    assert second.hardware_key == first.hardware_key and second.workload["test"] == "tg256"
    assert len(cache) == 3  # the key order's getter, the one setup and (under None) the last one used
    assert cache[None][4] is cache[next(k for k in cache if k is not None and len(k) == 3)]
    third = list(lb.convert(dict(rec, n_threads=16), Record(rec, 3, 3, True), "f.json", cache))[0]
    assert third.conditions["n_threads"] == 16 and len(cache) == 4
    # no cache given: one is made for the call
    assert list(lb.convert(rec, item, "f.json"))[0].content_hash == first.content_hash


def test_a_setup_holding_a_list_is_never_cached_but_still_read():
    rec = _tg128(tensor_split=[0.5, 0.5])
    cache: dict = {}
    ms = [list(lb.convert(rec, Record(rec, i, i, True), "f.json", cache))[0] for i in range(2)]
    assert len(cache) == 1 and "tensor_split" not in ms[0].conditions
    assert ms[0].content_hash == ms[1].content_hash


def test_the_cache_is_emptied_when_full():
    cache = {i: i for i in range(256)}
    lb._cache_put(cache, "new", 1)
    assert cache == {"new": 1}
    cache = {i: i for i in range(255)}
    lb._cache_put(cache, "new", 1)
    assert len(cache) == 256


def test_a_layout_with_one_setup_field_gets_a_tuple_too():
    assert lb._setup_getter(("model_type", "n_prompt", "avg_ts"))({"model_type": "x", "n_prompt": 1}) == ("x",)
    assert lb._setup_getter(("a", "b", "avg_ts"))({"a": 1, "b": 2, "avg_ts": 3}) == (1, 2)
    assert lb._setup_getter(("avg_ts",))({"avg_ts": 1}) == ()


def test_small_helpers_read_floats_and_counts_without_a_detour():
    problems: list = []
    item = Record({}, 1, 1, True)
    assert lb._positive({"x": 2.5}, "x", "f", item, problems) == 2.5
    assert lb._positive({"x": 0.0}, "x", "f", item, problems) == 0.0
    assert lb._positive({}, "x", "f", item, problems) is None
    assert lb._positive({"x": "3"}, "x", "f", item, problems) == 3.0
    assert problems == []
    assert lb._positive({"x": -1.0}, "x", "f", item, problems) is None and len(problems) == 1
    assert lb._count(7) == 7 and lb._count(None) == 0 and lb._count("12") == 12 and lb._count(2**60) == 2**60
    assert lb._count(True) is None and lb._count(-3) == -3  # JSON true is no token count


def test_the_three_real_files_read_in_full():
    assert len(lb.parse(RTX4080).measurements) == 2
    old = lb.parse(OLD_CPU)
    assert [m.conditions["build"] for m in old.measurements] == ["ddc8eee1 (3599)"] * 2
    assert len(lb.parse(M5).measurements) == 5
