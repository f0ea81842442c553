"""MLPerf results as published in the MLCommons results repositories:

- Inference: LoadGen's `mlperf_log_summary.txt` (text; latencies in ns) and `mlperf_log_detail.txt`
  (`:::MLLOG {json}` events in namespace "mlperf::logging"); the hardware comes from the
  submission's `systems/<system>.json` (accelerator_model_name × accelerators_per_node ×
  number_of_nodes), imported with the results or found beside them.
- Training: `result_N.txt` console logs with `:::MLLOG` events (time to train = run_stop - run_start,
  valid when run_stop's status is "success"), with the same system description; logs that print it
  themselves (`:::SYSJSON {...}` lines, NVIDIA's and others' since v3.x) name their own hardware.
- Inference with MLCommons' endpoints harness: `performance/result_summary.json` (qps, tps, and
  ttft/tpot/latency distributions in ns).
- CPU-only systems (`accelerators_per_node` 0, accelerator "N/A") are CPU runs: no accelerator.

The summary and the detail log of one run hold the same results: their measurements hash alike,
so importing both stores each figure once.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

from gpudesk.core.benchmarks import matching
from gpudesk.core.benchmarks._common import Item, any_key, has_keys, open_or_problem, opened
from gpudesk.core.benchmarks.reader import Source, iter_json, iter_lines
from gpudesk.core.benchmarks.types import (
    Measurement,
    ParseResult,
    Problem,
    clean_scalar,
    clean_text,
    collect,
    content_hash,
    finish,
    parse_int,
    parse_number,
)

FORMAT_INFERENCE = "mlperf-inference"
FORMAT_TRAINING = "mlperf-training"
FORMAT_SYSTEM = "mlperf-system"
FORMAT_SCALING = "mlperf-scaling"
FORMAT_RESULT_SUMMARY = "mlperf-result-summary"  # detection only: its measurements are mlperf-inference
RESULT_FORMATS = (FORMAT_INFERENCE, FORMAT_TRAINING, FORMAT_RESULT_SUMMARY)  # results whose hardware a system file names
FORMAT = FORMAT_INFERENCE

# MLPerf benchmark names as they appear in result paths, with the model they run.
BENCHMARKS = {
    "llama2-70b": {"model": "Llama 2 70B", "params": 68.98e9, "layers": 80, "d_model": 8192, "heads": 64,
                   "kv_heads": 8, "vocab": 32000},
    "llama3.1-405b": {"model": "Llama 3.1 405B", "params": 405e9, "layers": 126, "d_model": 16384, "heads": 128,
                      "kv_heads": 8, "vocab": 128256},
    "llama3.1-8b": {"model": "Llama 3.1 8B", "params": 8.03e9, "layers": 32, "d_model": 4096, "heads": 32,
                    "kv_heads": 8, "vocab": 128256},
    "mixtral-8x7b": {"model": "Mixtral 8x7B", "params": 46.7e9, "active_params": 12.9e9, "moe": True},
    "gptj": {"model": "GPT-J 6B", "params": 6.05e9, "layers": 28, "d_model": 4096, "heads": 16, "vocab": 50400},
    "gpt-j": {"model": "GPT-J 6B", "params": 6.05e9, "layers": 28, "d_model": 4096, "heads": 16, "vocab": 50400},
    "bert": {"model": "BERT-Large", "params": 3.35e8, "layers": 24, "d_model": 1024, "heads": 16, "vocab": 30522,
             "seq_len": 512},
    "llama2_70b_lora": {"model": "Llama 2 70B (LoRA fine-tuning)", "params": 68.98e9, "layers": 80, "d_model": 8192,
                        "heads": 64, "kv_heads": 8, "vocab": 32000, "seq_len": 8192, "method": "lora"},
    "gpt3": {"model": "GPT-3 175B", "params": 175e9, "layers": 96, "d_model": 12288, "heads": 96, "vocab": 50257,
             "seq_len": 2048},
    "resnet50": {"model": "ResNet-50"}, "resnet": {"model": "ResNet-50"}, "retinanet": {"model": "RetinaNet"},
    "3d-unet": {"model": "3D U-Net"}, "unet3d": {"model": "3D U-Net"}, "rnnt": {"model": "RNN-T"},
    "dlrm-v2": {"model": "DLRM v2"}, "dlrm_dcnv2": {"model": "DLRM v2"},
    "stable-diffusion-xl": {"model": "Stable Diffusion XL"}, "stable_diffusion": {"model": "Stable Diffusion v2"},
    "ssd": {"model": "SSD (RetinaNet)"}, "maskrcnn": {"model": "Mask R-CNN"}, "gnn": {"model": "R-GAT"},
    "deepseek-r1": {"model": "DeepSeek-R1", "params": 671e9, "active_params": 37e9, "moe": True},
    "rgat": {"model": "R-GAT"}, "whisper": {"model": "Whisper Large v3"},
}
# how some submitters spell a benchmark in their paths
BENCHMARK_SPELLINGS = {"llama3_1-8b": "llama3.1-8b", "llama3_1-405b": "llama3.1-405b"}
_BENCH_RE = re.compile(r"(?<![a-z0-9])(" + "|".join(sorted((re.escape(k) for k in [*BENCHMARKS, *BENCHMARK_SPELLINGS]),
                                                              key=len, reverse=True))
                       + r")(?:-99(?:\.9)?)?(?![a-z0-9])", re.I)
_LAT_RE = re.compile(r"^(min|max|mean|(\d+(?:\.\d+)?) percentile|(\d+)th percentile)\s+"
                     r"(latency|first token latency|time to output token)\s*\(ns\)$", re.I)


def looks_like_summary(head: str) -> bool:
    return "MLPerf Results Summary" in head


def looks_like_detail(head: str) -> bool:
    return ":::MLLOG" in head and "mlperf::logging" in head


def looks_like_training(head: str) -> bool:
    return (":::MLLOG" in head or ":::SYSJSON" in head) and "mlperf::logging" not in head


def looks_like_system(head: str) -> bool:
    """A systems/<system>.json (not a training log that prints one on a :::SYSJSON line)."""
    return (has_keys(head, "accelerator_model_name", "accelerators_per_node") and ":::SYSJSON" not in head
            and ":::MLLOG" not in head)


def looks_like_result_summary(head: str) -> bool:
    """The endpoints harness's performance/result_summary.json."""
    return has_keys(head, "n_samples_issued", "n_samples_completed", "duration_ns") and any_key(
        head, "ttft", "tpot", "latency", "qps", "tps")


def looks_like_scaling(head: str) -> bool:
    return has_keys(head, "scaling_factor") and head.count('":') <= 3


def looks_like(head: str) -> bool:
    return (looks_like_summary(head) or looks_like_detail(head) or looks_like_training(head)
            or looks_like_system(head) or looks_like_scaling(head) or looks_like_result_summary(head))


def benchmark_from_name(name: str) -> str | None:
    """The MLPerf benchmark a result path names ('.../llama2-70b-99/Offline/...' -> 'llama2-70b')."""
    m = _BENCH_RE.search(name or "")
    if not m:
        return None
    found = m.group(1).lower()
    return BENCHMARK_SPELLINGS.get(found, found)


def parse(source, source_name: str | None = None, system: dict | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name, system=system), FORMAT)


@opened
def iter_parse(src: Source, system: dict | None = None, **_ignored) -> Iterator[Item]:
    head = src.head(16 << 10)
    hint = str(src.path) if src.path is not None else src.name
    if looks_like_summary(head):
        yield from _summary(src, system, hint)
    elif looks_like_detail(head):
        yield from _detail(src, system, hint)
    elif looks_like_training(head):
        yield from _training(src, system, hint)
    elif looks_like_result_summary(head):
        yield from _result_summary(src, system, hint)
    elif looks_like_system(head):
        yield from _system_file(src)
    elif looks_like_scaling(head):
        yield Problem(src.name, "", "an MLPerf Training scaling.json (used to normalise scores): no measurements in "
                      "it; nothing to import", "info")
        yield {"nothing_to_import": True}
    else:
        yield Problem(src.name, "", "not an MLPerf result: no 'MLPerf Results Summary' heading and no ':::MLLOG' "
                      "lines", "error")


# ----------------------------------------------------------------------------------- system description
def read_system(source, source_name: str | None = None) -> tuple[dict | None, list[Problem]]:
    """The hardware facts of an MLPerf `systems/<system>.json`, or None with the problems."""
    src, problem = open_or_problem(source, source_name)
    if problem is not None:
        return None, [problem]
    problems: list[Problem] = []
    for item in iter_json(src, max_record_chars=4 << 20):
        if isinstance(item, Problem):
            problems.append(item)
            continue
        if isinstance(item.value, dict) and "accelerator_model_name" in item.value:
            return system_info(item.value, src.name, problems), problems
    problems.append(Problem(src.name, "", "not an MLPerf system description (no accelerator_model_name)", "error"))
    return None, problems


NO_ACCELERATOR = ("n/a", "na", "none", "-", "no", "cpu")  # accelerator_model_name of CPU-only systems


def system_info(raw: dict, name: str, problems: list[Problem]) -> dict:
    per_node = parse_int(raw.get("accelerators_per_node"))
    nodes = parse_int(raw.get("number_of_nodes")) or 1
    model = clean_text(raw.get("accelerator_model_name") or "", 120)
    cpu_only = per_node == 0 or (per_node is None and model.strip().lower() in NO_ACCELERATOR)
    if cpu_only:
        per_node = 0
    elif per_node is None:
        problems.append(Problem(name, "key accelerators_per_node", f"{raw.get('accelerators_per_node')!r} is not a "
                                "whole number: the accelerator count is unknown", "warning"))
    info = {
        "system_file": name,
        "system_name": clean_text(raw.get("system_name") or "", 120),
        "submitter": clean_text(raw.get("submitter") or "", 60),
        "division": clean_text(raw.get("division") or "", 20),
        "status": clean_text(raw.get("status") or "", 40),
        "accelerator_model_name": "" if cpu_only else model,
        "cpu_only": cpu_only,
        "host_processors_per_node": parse_int(raw.get("host_processors_per_node")),
        "accelerators_per_node": per_node,
        "number_of_nodes": nodes,
        "accelerator_count": per_node * nodes if per_node is not None else None,
        "accelerator_memory_capacity": clean_text(raw.get("accelerator_memory_capacity") or "", 40),
        "accelerator_interconnect": clean_text(raw.get("accelerator_interconnect") or "", 60),
        "host_processor_model_name": clean_text(raw.get("host_processor_model_name") or "", 80),
        "framework": clean_text(raw.get("framework") or "", 160),
    }
    return info


def _system_file(src: Source) -> Iterator[Item]:
    info, problems = read_system(src)
    yield from problems
    if info is None:
        return
    count = info["accelerator_count"]
    what = (f"a CPU-only system, {_cpu_text(info)}" if info.get("cpu_only")
            else f"{count or '?'} × {info['accelerator_model_name']}")
    yield Problem(src.name, "", f"an MLPerf system description ({what}, {info['system_name']}): no measurements in "
                  "it; it names the hardware of the MLPerf results imported with it or found beside it", "info")
    yield {"system": info, "nothing_to_import": True}


def _cpu_text(system: dict) -> str:
    cpu = system.get("host_processor_model_name") or "CPU not named"
    n = (system.get("host_processors_per_node") or 0) * (system.get("number_of_nodes") or 1)
    return f"{n} × {cpu}" if n else cpu


def _describe_system(system: dict) -> str:
    if system.get("cpu_only"):
        what = f"CPU-only, {_cpu_text(system)}"
    else:
        what = f"{system.get('accelerator_count') or '?'} × {system.get('accelerator_model_name') or '?'}"
    return what + (f", {system['system_name']}" if system.get("system_name") else "")


def _hardware(system: dict | None, fallback_key: str, count_hint: int | None = None):
    if system and system.get("cpu_only"):
        cpu = _cpu_text(system)
        return matching.cpu_only(cpu), cpu, "cpu:" + cpu
    if system and system.get("accelerator_model_name"):
        match = matching.match_hardware(system["accelerator_model_name"], system.get("accelerator_count"))
        if system.get("accelerator_count") is None:  # unreadable accelerators_per_node: the name says no count
            match = dataclasses.replace(match, count=None)
        return match, system["accelerator_model_name"], "hw:" + system["accelerator_model_name"]
    match = matching.Match(None, count_hint, "ask", "MLPerf result logs do not name the hardware; its system "
                           "description (systems/<system>.json) does")
    return match, "", fallback_key


def _system_conditions(system: dict | None) -> dict:
    if not system:
        return {}
    out = {k: system[k] for k in ("system_name", "submitter", "division", "framework", "accelerator_interconnect",
                                  "number_of_nodes", "accelerators_per_node") if system.get(k) not in (None, "")}
    return out


def _ask_system(name: str) -> Problem:
    return Problem(name, "", "which system ran this MLPerf result? Import its systems/<system>.json with it (or put "
                   "it in the same folder), or answer with --gpu ID --count N", "question")


# ----------------------------------------------------------------------------------- inference
def _stat(label: str) -> str:
    label = label.strip().lower()
    if label in ("min", "max", "mean"):
        return label
    m = re.match(r"(\d+(?:\.\d+)?)", label)
    if not m:
        return label
    value = float(m.group(1))
    return f"p{value:g}"


def _latency_metric(kind: str) -> str:
    kind = kind.lower()
    if "first token" in kind or "first_token" in kind:
        return "ttft_s"
    if "output token" in kind or "output_token" in kind or "tpot" in kind:
        return "tpot_s"
    return "latency_s"


def _inference_measurement(metric: str, statistic: str, value: float, unit: str, match, hardware_text: str,
                           key: str, workload: dict, conditions: dict, index: int, name: str) -> Measurement:
    m = Measurement(format=FORMAT_INFERENCE, metric=metric, value=value, unit=unit, hardware_text=hardware_text,
                    source_file=name,
                    accelerator_id=match.accelerator_id, accelerator_count=match.count, cpu_only=match.cpu_only,
                    match_confidence=match.confidence, match_reason=match.reason, hardware_key=key,
                    statistic=statistic, workload=dict(workload), conditions=dict(conditions), record_index=index)
    # the same figure from the summary and from the detail log of one run hash alike
    m.content_hash = content_hash(FORMAT_INFERENCE, metric, statistic, repr(float(value)), workload.get("benchmark"))
    return finish(m)


def _workload(benchmark: str | None, scenario: str | None) -> dict:
    out: dict = {}
    if benchmark:
        out["benchmark"] = benchmark
        out.update(BENCHMARKS.get(benchmark, {}))
    if scenario:
        out["scenario"] = scenario
    return out


def _benchmark_problem(name: str, benchmark: str | None, what: str) -> Problem:
    """Where the benchmark (model) came from, or the question of which it was."""
    if benchmark is None:
        return Problem(name, "", f"{what} does not name the benchmark (model) and its path does not either: say "
                       "which model ran to compare it with an estimate", "question")
    return Problem(name, "", f"benchmark '{benchmark}' taken from the file's name/path", "info")


def _summary_figure(key: str) -> tuple[str, str, str, float] | None:
    """(metric, statistic, unit, scale) of a LoadGen summary line's key, or None if it is no figure."""
    low = key.lower()
    if low in ("samples per second", "completed samples per second"):
        return "samples_per_s", "mean", "samples/s", 1.0
    if low in ("tokens per second", "completed tokens per second"):
        return "output_tokens_per_s", "mean", "tokens/s", 1.0
    lm = _LAT_RE.match(key)
    if lm:
        return _latency_metric(lm.group(4)), _stat(lm.group(1)), "s", 1e-9
    return None


def _read_summary(src: Source) -> tuple[dict[str, tuple[int, str]], list, list[Problem]]:
    """(fields: key -> (line, text), figures: (metric, statistic, value, unit, line), problems) of a
    LoadGen summary; the test parameters' keys are prefixed 'param:'."""
    name = src.name
    fields: dict[str, tuple[int, str]] = {}
    section = ""
    results: list[tuple[str, str, float, str, int]] = []
    problems: list[Problem] = []
    for number, line in iter_lines(src):
        if line is None:
            problems.append(Problem(name, f"line {number}", "a line over 1 MiB: skipped", "warning"))
            continue
        text = line.strip()
        if not text or set(text) <= set("="):
            continue
        if ":" not in text:
            section = text
            continue
        key, _, raw = text.partition(":")
        key, raw = key.strip(), raw.strip()
        if section.lower().startswith("test parameters"):
            fields.setdefault("param:" + key, (number, raw))
            continue
        fields.setdefault(key, (number, raw))
        figure = _summary_figure(key)
        if figure is None:
            continue
        metric, statistic, unit, scale = figure
        value = parse_number(raw)
        if value is None or value < 0:
            problems.append(Problem(name, f"line {number}", f"'{key}' is {raw!r}, not a number: skipped", "warning"))
            continue
        results.append((metric, statistic, value * scale, unit, number))
    return fields, results, problems


def _summary(src: Source, system: dict | None, hint: str) -> Iterator[Item]:
    name = src.name
    fields, results, problems = _read_summary(src)
    scenario = fields.get("Scenario", (0, ""))[1] or None
    mode = fields.get("Mode", (0, ""))[1]
    validity = fields.get("Result is", (0, ""))[1]
    benchmark = benchmark_from_name(hint)
    yield from problems
    if not results:
        yield Problem(name, "", "an MLPerf summary without any throughput or latency figure", "error")
        return
    if mode and "performance" not in mode.lower():
        yield Problem(name, f"line {fields['Mode'][0]}", f"mode {mode!r}: only performance runs are measurements; "
                      "nothing stored", "error")
        return
    if validity and validity.upper() != "VALID":
        yield Problem(name, f"line {fields['Result is'][0]}", f"LoadGen judged this run {validity}: its figures are "
                      "stored but flagged", "warning")
    yield _benchmark_problem(name, benchmark, "the summary")
    sut = clean_text(fields.get("SUT name", (0, ""))[1], 80)
    match, hardware_text, key = _hardware(system, f"sig:{FORMAT_INFERENCE}:{sut}")
    if not system:
        yield _ask_system(name)
    conditions = {"scenario": scenario, "mode": mode or None, "result_validity": validity or None, "sut_name": sut,
                  **_system_conditions(system)}
    conditions.update(_summary_parameters(fields))
    workload = _workload(benchmark, scenario)
    for index, (metric, statistic, value, unit, _line) in enumerate(results):
        yield _inference_measurement(metric, statistic, value, unit, match, hardware_text, key, workload, conditions,
                                     index, name)


def _summary_parameters(fields: dict[str, tuple[int, str]]) -> dict:
    """The test parameters a summary's conditions keep (target_qps, min_duration_ms ...), as numbers."""
    out = {}
    for pkey in ("target_qps", "samples_per_query", "min_duration (ms)", "ttft_latency (ns)", "tpot_latency (ns)",
                 "target_latency (ns)"):
        if "param:" + pkey in fields:
            value = parse_number(fields["param:" + pkey][1])
            if value is not None:
                out[re.sub(r"\W+", "_", pkey).strip("_")] = value
    return out


def _mllog_events(src: Source) -> Iterator[tuple[int, dict] | Problem]:
    decoder = json.JSONDecoder()
    name = src.name
    bad = 0
    first_bad = 0
    for number, line in iter_lines(src):
        if line is None:
            yield Problem(name, f"line {number}", "a line over 1 MiB: skipped", "warning")
            continue
        at = line.find(":::MLLOG")
        if at < 0:
            continue
        brace = line.find("{", at)
        try:
            if brace < 0:
                raise ValueError("no JSON after :::MLLOG")
            event, _end = decoder.raw_decode(line, brace)
            if not isinstance(event, dict) or "key" not in event:
                raise ValueError("not an event object")
        except (ValueError, RecursionError):
            bad += 1
            first_bad = first_bad or number
            continue
        yield number, event
    if bad:
        yield Problem(name, f"line {first_bad}", f"{bad} ':::MLLOG' line(s) with broken JSON (cut or interleaved "
                      "output) were skipped", "warning")


def _detail_figure(key: str, value: float) -> tuple[str, str, float, str] | None:
    """(metric, statistic, value, unit) of a detail log's result_* event, or None if it is no figure."""
    if key in ("result_samples_per_second", "result_completed_samples_per_sec"):
        return "samples_per_s", "mean", value, "samples/s"
    if key in ("result_tokens_per_second", "result_completed_tokens_per_second"):
        return "output_tokens_per_s", "mean", value, "tokens/s"
    if key.endswith("_ns"):
        m = re.match(r"result_(?:(first_token|time_to_output_token|time_per_output_token)_)?"
                     r"(min|max|mean|\d+(?:\.\d+)?_percentile)_(?:latency_)?ns$", key)
        if m:
            kind = {"first_token": "first token latency", "time_to_output_token": "time to output token",
                    "time_per_output_token": "time to output token"}.get(m.group(1) or "", "latency")
            return _latency_metric(kind), _stat(m.group(2).replace("_percentile", "")), value * 1e-9, "s"
    return None


def _detail(src: Source, system: dict | None, hint: str) -> Iterator[Item]:
    name = src.name
    results: list[tuple[str, str, float, str]] = []
    facts: dict = {}
    problems: list[Problem] = []
    for item in _mllog_events(src):
        if isinstance(item, Problem):
            problems.append(item)
            continue
        number, event = item
        key = str(event.get("key"))
        value = event.get("value")
        if key in ("effective_scenario", "test_datetime", "result_validity", "loadgen_version", "effective_test_mode",
                   "sut_name", "effective_target_qps", "effective_samples_per_query"):
            facts[key] = clean_scalar(value)
            continue
        if not key.startswith("result_"):
            continue
        number_value = parse_number(value)
        if number_value is None or number_value < 0:
            continue
        figure = _detail_figure(key, number_value)
        if figure is not None:
            results.append(figure)
    yield from problems
    if not results:
        yield Problem(name, "", "an MLPerf detail log without result_* events (cut before the end of the run?)",
                      "error")
        return
    mode = str(facts.get("effective_test_mode") or "")
    if mode and "performance" not in mode.lower():
        yield Problem(name, "", f"test mode {mode!r}: only performance runs are measurements; nothing stored", "error")
        return
    validity = str(facts.get("result_validity") or "")
    if validity and validity.upper() != "VALID":
        yield Problem(name, "", f"LoadGen judged this run {validity}: its figures are stored but flagged", "warning")
    scenario = facts.get("effective_scenario") or None
    benchmark = benchmark_from_name(hint)
    yield _benchmark_problem(name, benchmark, "the log")
    match, hardware_text, key = _hardware(system, f"sig:{FORMAT_INFERENCE}:{facts.get('sut_name') or 'loadgen'}")
    if not system:
        yield _ask_system(name)
    conditions = {"scenario": scenario, "result_validity": validity or None, "test_datetime": facts.get("test_datetime"),
                  "loadgen_version": facts.get("loadgen_version"), **_system_conditions(system)}
    workload = _workload(benchmark, scenario)
    for index, (metric, statistic, value, unit) in enumerate(results):
        yield _inference_measurement(metric, statistic, value, unit, match, hardware_text, key, workload, conditions,
                                     index, name)


# ----------------------------------------------------------------------------------- endpoints result_summary.json
SCENARIOS = ("Offline", "Server", "Interactive", "SingleStream", "MultiStream")
LOAD_PATTERN_SCENARIO = {"max_throughput": "Offline", "poisson": "Server"}
SUMMARY_PERCENTILES = ("50", "90", "95", "97", "99", "99.9")  # those LoadGen's summary prints


def _scenario_from(hint: str, load_type: str) -> str | None:
    for scenario in SCENARIOS:
        if re.search(r"(?<![A-Za-z])" + scenario + r"(?![A-Za-z])", hint or "", re.I):
            return scenario
    return LOAD_PATTERN_SCENARIO.get(load_type)


def _picked_statistics(stats: dict) -> list[tuple[str, object]]:
    """(statistic, raw value) of a result_summary latency block: min, max, mean and the percentiles
    LoadGen's summary prints (p50 falling back on 'median')."""
    picked: list[tuple[str, object]] = [("min", stats.get("min")), ("max", stats.get("max")),
                                        ("mean", stats.get("avg"))]
    percentiles = stats.get("percentiles") if isinstance(stats.get("percentiles"), dict) else {}
    by_value = {}
    for k, v in percentiles.items():
        number = parse_number(k)
        if number is not None:
            by_value[f"{number:g}"] = v
    for p in SUMMARY_PERCENTILES:
        raw = by_value.get(p, stats.get("median") if p == "50" else None)
        picked.append((f"p{p}", raw))
    return picked


def _summary_latencies(doc: dict, name: str, results: list) -> Iterator[Problem]:
    """Append the ttft/tpot/latency figures (nanoseconds to seconds) to results; yield the skipped ones."""
    for block, metric in (("ttft", "ttft_s"), ("tpot", "tpot_s"), ("latency", "latency_s")):
        stats = doc.get(block)
        if not isinstance(stats, dict) or not stats:
            continue
        for statistic, raw in _picked_statistics(stats):
            value = parse_number(raw)
            if value is None:
                continue
            if value < 0:
                yield Problem(name, f"key {block}", f"a negative {statistic} ({raw!r}): skipped", "warning")
                continue
            results.append((metric, statistic, value * 1e-9, "s", block))


def _first_object(src: Source) -> Iterator[Problem]:
    """Yield the reading problems up to the file's first JSON object; return it (None if none)."""
    for item in iter_json(src, max_record_chars=64 << 20):
        if isinstance(item, Problem):
            yield item
            continue
        if isinstance(item.value, dict):
            return item.value
    return None


def _result_summary(src: Source, system: dict | None, hint: str) -> Iterator[Item]:
    """MLCommons endpoints' performance/result_summary.json: qps (completed samples per second),
    tps (output tokens per second) and ttft/tpot/latency distributions in nanoseconds."""
    name = src.name
    doc = yield from _first_object(src)
    if doc is None:
        yield Problem(name, "", "not an MLPerf result_summary.json: no JSON object in it", "error")
        return
    completed = parse_int(doc.get("n_samples_completed"))
    failed = parse_int(doc.get("n_samples_failed")) or 0
    state = clean_text(str(doc.get("state") or ""), 40)
    if doc.get("complete") is False or (state and state != "complete"):
        yield Problem(name, "key state", f"the run is {state or 'not complete'} (complete: {doc.get('complete')}): "
                      "its figures are stored but flagged", "warning")
    if failed:
        yield Problem(name, "key n_samples_failed", f"{failed} sample(s) failed: the figures count the completed ones "
                      "only", "warning")
    run_config = doc.get("run_config") if isinstance(doc.get("run_config"), dict) else {}
    load = run_config.get("load_pattern") if isinstance(run_config.get("load_pattern"), dict) else {}
    load_type = clean_text(str(load.get("type") or ""), 40)
    scenario = _scenario_from(hint, load_type)
    benchmark = benchmark_from_name(hint)
    results: list[tuple[str, str, float, str, str]] = []  # metric, statistic, value, unit, key
    for key, metric, unit in (("qps", "samples_per_s", "samples/s"), ("tps", "output_tokens_per_s", "tokens/s")):
        value = parse_number(doc.get(key))
        if value is not None and value >= 0:
            results.append((metric, "mean", value, unit, key))
        elif doc.get(key) is not None:
            yield Problem(name, f"key {key}", f"{doc.get(key)!r} is not a number: skipped", "warning")
    yield from _summary_latencies(doc, name, results)
    if not results:
        yield Problem(name, "", "an MLPerf result_summary.json without qps, tps or latency figures", "error")
        return
    yield _benchmark_problem(name, benchmark, "the file")
    legacy = parse_number(doc.get("legacy_loadgen_window_duration_ns"))
    duration = parse_number(doc.get("duration_ns"))
    match, hardware_text, key = _hardware(system, f"sig:{FORMAT_INFERENCE}:endpoints")
    if not system:
        yield _ask_system(name)
    conditions = {"scenario": scenario, "harness": "MLCommons endpoints", "result_summary_version":
                  clean_text(str(doc.get("version") or ""), 20) or None, "state": state or None,
                  "samples_completed": completed, "samples_failed": failed,
                  "duration_s": duration * 1e-9 if duration is not None else None,
                  "load_pattern": load_type or None, "target_qps": parse_number(load.get("target_qps")),
                  "target_concurrency": parse_number(load.get("target_concurrency")),
                  # qps/tps over LoadGen's Server window (first issue to the last-issued completion) or the whole run
                  "qps_window": "loadgen" if legacy is not None else "run",
                  **_system_conditions(system)}
    conditions = {k: v for k, v in conditions.items() if v is not None}
    workload = _workload(benchmark, scenario)
    for index, (metric, statistic, value, unit, _key) in enumerate(results):
        m = Measurement(format=FORMAT_INFERENCE, metric=metric, value=value, unit=unit, hardware_text=hardware_text,
                        source_file=name, accelerator_id=match.accelerator_id, accelerator_count=match.count,
                        cpu_only=match.cpu_only, match_confidence=match.confidence, match_reason=match.reason,
                        hardware_key=key, statistic=statistic, workload=dict(workload), conditions=dict(conditions),
                        record_index=index)
        m.content_hash = content_hash("mlperf-result-summary", metric, statistic, repr(float(value)), benchmark,
                                      scenario, doc.get("duration_ns"), completed)
        yield finish(m)


# ----------------------------------------------------------------------------------- training
_TRAINING_FACTS = ("submission_benchmark", "submission_org", "submission_division", "submission_status",
                   "submission_platform", "global_batch_size", "seed", "train_samples", "eval_samples",
                   "max_sequence_length", "opt_base_learning_rate")


class _TrainingLog:
    """What one pass over an MLPerf training log found: its facts, runs, RESULT lines and problems."""

    def __init__(self, name: str):
        self.name = name
        self.facts: dict = {}
        self.runs: list[dict] = []
        self.current: dict | None = None
        self.seen: set[tuple] = set()
        self.results_lines: list[tuple[int, list[str]]] = []
        self.n_gpu: int | None = None
        self.problems: list[Problem] = []
        self.bad = 0
        self.first_bad = 0
        self.sysjson: tuple[int, dict] | None = None  # (line, the log's own system description)

    def read(self, src: Source) -> _TrainingLog:
        decoder = json.JSONDecoder()
        for number, line in iter_lines(src):
            if line is None:
                self.problems.append(Problem(self.name, f"line {number}", "a line over 1 MiB: skipped", "warning"))
                continue
            if line.startswith("RESULT,"):
                self.results_lines.append((number, line.split(",")))
                continue
            if self.sysjson is None and ":::SYSJSON" in line:
                self._sysjson(decoder, line, number)
                continue
            m = re.search(r"\bn_gpu:\s*(\d+)", line)
            if m:
                self.n_gpu = int(m.group(1))
            self._mllog_events(decoder, line, number)
        if self.bad:
            self.problems.append(Problem(self.name, f"line {self.first_bad}", f"{self.bad} ':::MLLOG' line(s) with "
                                         "broken JSON were skipped", "warning"))
        return self

    def _sysjson(self, decoder: json.JSONDecoder, line: str, number: int) -> None:
        brace = line.find("{", line.find(":::SYSJSON"))
        try:
            raw, _end = decoder.raw_decode(line, brace) if brace >= 0 else (None, 0)
        except (ValueError, RecursionError):
            raw = None
        if isinstance(raw, dict):
            self.sysjson = (number, raw)
        else:
            self.problems.append(Problem(self.name, f"line {number}", "a ':::SYSJSON' line without a readable system "
                                         "description: skipped", "warning"))

    def _mllog_events(self, decoder: json.JSONDecoder, line: str, number: int) -> None:
        at = line.find(":::MLLOG")
        while at >= 0:
            brace = line.find("{", at)
            try:
                if brace < 0:
                    raise ValueError
                event, end = decoder.raw_decode(line, brace)
                if not isinstance(event, dict):
                    raise ValueError
            except (ValueError, RecursionError):
                self.bad += 1
                self.first_bad = self.first_bad or number
                break
            at = line.find(":::MLLOG", end)
            self._event(event, number)

    def _event(self, event: dict, number: int) -> None:
        key = str(event.get("key"))
        sig = (key, event.get("time_ms"), json.dumps(event.get("value"), sort_keys=True, default=str))
        if sig in self.seen:  # every rank logs the same events
            return
        if len(self.seen) < 100_000:
            self.seen.add(sig)
        meta = event.get("metadata") if isinstance(event.get("metadata"), dict) else {}
        t = parse_number(event.get("time_ms"))
        if key == "run_start":
            self.current = {"start": t, "line": number}
            self.runs.append(self.current)
        elif key == "run_stop":
            if self.current is None:
                self.current = {"start": None, "line": number}
                self.runs.append(self.current)
            self.current["stop"] = t
            self.current["status"] = str(meta.get("status") or "")
            self.current = None
        elif key in _TRAINING_FACTS:
            self.facts[key] = clean_scalar(event.get("value"))
        elif key == "eval_accuracy":
            self.facts["eval_accuracy"] = parse_number(event.get("value"))
        elif key == "tracked_stats" and isinstance(event.get("value"), dict):
            tp = parse_number(event["value"].get("throughput"))
            if tp is not None:
                self.facts["throughput"] = tp


def _training_workload(facts: dict, hint: str) -> tuple[str | None, dict, dict]:
    """(benchmark key, workload, conditions) from a training log's facts."""
    benchmark = str(facts.get("submission_benchmark") or "") or benchmark_from_name(hint)
    bench_key = benchmark.lower() if benchmark else None
    workload: dict = {"benchmark": bench_key}
    if bench_key in BENCHMARKS:
        workload.update(BENCHMARKS[bench_key])
    for key in ("global_batch_size", "train_samples", "max_sequence_length"):
        if facts.get(key) is not None:
            workload[key] = facts[key]
    workload = {k: v for k, v in workload.items() if v is not None}
    conditions = {k: facts.get(k) for k in ("submission_org", "submission_division", "submission_status",
                                            "submission_platform", "seed", "eval_accuracy") if facts.get(k) is not None}
    return bench_key, workload, conditions


def _training_system(log: _TrainingLog, system: dict | None) -> Iterator[Item]:
    """The problems of the log's own :::SYSJSON line against the system given with it; returns the
    system to use (the given one, else the log's own)."""
    if log.sysjson is None:
        return system
    name = log.name
    number, raw = log.sysjson
    found: list[Problem] = []
    embedded = system_info(raw, name, found)
    yield from found
    if system is None:
        yield Problem(name, f"line {number}", "hardware taken from the log's own system description (:::SYSJSON "
                      f"line: {_describe_system(embedded)})", "info")
        return embedded
    if (system.get("accelerator_model_name"), system.get("accelerator_count"), bool(system.get("cpu_only"))) != (
            embedded.get("accelerator_model_name"), embedded.get("accelerator_count"),
            bool(embedded.get("cpu_only"))):
        yield Problem(name, f"line {number}", f"the system description {system.get('system_file') or ''} given with "
                      f"it says {_describe_system(system)}, the log's :::SYSJSON line "
                      f"{_describe_system(embedded)}: the one given with it is used", "warning")
    return system


def _training_times(log: _TrainingLog, add) -> Iterator[Problem]:
    """Store the time to train of each successful run (or, with no run pair, of the RESULT line)."""
    name = log.name
    timed = False
    for index, run in enumerate(log.runs):
        if run.get("start") is None or run.get("stop") is None:
            continue
        status = run.get("status") or ""
        if status != "success":
            yield Problem(name, f"line {run['line']}", f"run_stop status is {status or 'missing'!r}, not 'success': "
                          "the run did not reach its target; no time to train stored", "warning")
            continue
        add("time_to_train_s", (run["stop"] - run["start"]) / 1000.0, "s", "run_start to run_stop",
            {"run_status": status}, index)
        timed = True
    if not timed and log.results_lines:
        # NVIDIA-style wrappers print RESULT,<benchmark>,<seed>,<seconds>,<user>,<start>
        durations = []
        for number, parts in log.results_lines:
            seconds = parse_number(parts[3]) if len(parts) > 3 else None
            if seconds and seconds > 0:
                durations.append((number, seconds))
        if durations:
            number, seconds = durations[0]
            yield Problem(name, f"line {number}", "no run_start/run_stop pair (an excerpt?): time to train taken from "
                          "the RESULT line, whole seconds including initialisation (the official score counts "
                          "run_start to run_stop)", "warning")
            add("time_to_train_s", seconds, "s", "wall clock (RESULT line)", {"timing": "RESULT line"}, 0)
    elif not timed and log.runs:
        yield Problem(name, "", "no complete run_start/run_stop pair: no time to train", "warning")


def _training(src: Source, system: dict | None, hint: str) -> Iterator[Item]:
    name = src.name
    log = _TrainingLog(name).read(src)
    yield from log.problems
    facts = log.facts
    bench_key, workload, conditions = _training_workload(facts, hint)
    system = yield from _training_system(log, system)
    conditions.update(_system_conditions(system))
    platform = str(facts.get("submission_platform") or "")
    match, hardware_text, hkey = _hardware(system, f"sig:{FORMAT_TRAINING}:{platform}", log.n_gpu)
    if not system:
        yield _ask_system(name)
    out: list[Measurement] = []

    def add(metric, value, unit, statistic, extra: dict, index: int):
        m = Measurement(format=FORMAT_TRAINING, metric=metric, value=value, unit=unit, hardware_text=hardware_text,
                        source_file=name,
                        accelerator_id=match.accelerator_id, accelerator_count=match.count, cpu_only=match.cpu_only,
                        match_confidence=match.confidence, match_reason=match.reason, hardware_key=hkey,
                        statistic=statistic, workload=dict(workload), conditions={**conditions, **extra},
                        record_index=index)
        m.content_hash = content_hash(FORMAT_TRAINING, metric, statistic, repr(float(value)), bench_key,
                                      facts.get("seed"), platform)
        out.append(finish(m))

    yield from _training_times(log, add)
    if facts.get("throughput"):
        add("train_samples_per_s", facts["throughput"], "samples/s", "last tracked_stats", {}, 0)
    if not out:
        yield Problem(name, "", "an MLPerf training log without a time to train or a throughput (run_start/run_stop, "
                      "tracked_stats)", "error")
        return
    yield from out


def find_system_beside(path: Path) -> tuple[dict | None, str]:
    """An MLPerf system description near a result file: in its folder, else in a `systems/` folder
    of one of its parents (the results repositories' layout). Returns (info, where)."""
    candidates: list[Path] = []
    try:
        folder = path.resolve().parent
        candidates += [p for p in sorted(folder.glob("*.json")) if p.is_file() and p.stat().st_size < 1 << 20]
        for parent in list(folder.parents)[:6]:
            systems = parent / "systems"
            if systems.is_dir():
                found = [p for p in sorted(systems.glob("*.json")) if p.stat().st_size < 1 << 20]
                named = [p for p in found if p.stem and p.stem in str(path)]
                candidates += named or (found if len(found) == 1 else [])
                break
    except OSError:
        return None, ""
    infos = []
    for candidate in candidates:
        if candidate == path:
            continue
        try:
            head = candidate.read_text(encoding="utf-8", errors="replace")[:16384]
        except OSError:
            continue
        if looks_like_system(head):
            info, _problems = read_system(candidate)
            if info:
                infos.append((info, candidate.name))
    if len(infos) == 1:
        return infos[0]
    return None, ""
