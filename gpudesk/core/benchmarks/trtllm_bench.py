"""TensorRT-LLM `trtllm-bench ... --report_json report.json`: one object with `engine`,
`machine` (GPU name and memory of the first GPU; newer versions only), `world_info` (tensor /
pipeline parallel sizes and world size = GPU count), `request_info`, `performance` (ms, tok/s,
req/s) and `streaming_metrics` (when streaming).

Also the text summary `trtllm-bench throughput|latency` prints (and people keep as their log): the
`= ENGINE DETAILS` / `= PYTORCH BACKEND`, `= MACHINE DETAILS`, `= WORLD + RUNTIME INFORMATION`,
`= REQUEST DETAILS` and `= PERFORMANCE OVERVIEW` blocks, `Key:<tabs or spaces>value` lines and
`[Latency] P50 : 54486.1063` breakdowns (tensorrt_llm/bench/dataclasses/reporting.py,
report_statistics). It is read into the report's JSON shape and converted the same way. Before
the 0.18-era summaries, `Token Throughput (tokens/sec)` in PERFORMANCE OVERVIEW was the output
token throughput (output tokens / total latency: 3000 x 128 / 13.5257 s = 28390 in the
documentation's example), stored as such.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpudesk.core.benchmarks import matching
from gpudesk.core.benchmarks._common import Item, has_keys, model_guess, opened, run_json
from gpudesk.core.benchmarks.reader import Record, Source, iter_lines
from gpudesk.core.benchmarks.types import (
    Measurement,
    Numbers,
    ParseResult,
    Problem,
    basename,
    clean_scalar,
    clean_text,
    collect,
    finish,
    parse_int,
    parse_number,
)

FORMAT = "trtllm-bench"
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "fp8": "fp8", "bf16": "bf16",
           "fp16": "fp16"}
_QUANT = {"fp8": "fp8", "fp8_block_scales": "fp8", "nvfp4": "fp4", "w4a16_awq": "int4", "w4a8_awq": "int4",
          "int4_awq": "int4", "w8a16": "int8", "int8": "int8", "w4a16_gptq": "int4", "w4a16": "int4"}


def looks_like(head: str) -> bool:
    return has_keys(head, "engine", "world_info", "performance")


def is_record(v: dict) -> bool:
    return isinstance(v.get("world_info"), dict) and isinstance(v.get("performance"), dict)


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


def iter_parse(source, source_name: str | None = None, **_ignored) -> Iterator[Item]:
    return run_json(source, source_name, FORMAT, "trtllm-bench report", is_record, convert)


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _workload(engine: dict, req: dict, world: dict) -> dict:
    model = clean_text(engine.get("model") or "", 160)
    dtype = str(engine.get("dtype") or "").lower()
    quant = str(engine.get("quantization") or "").lower()
    precision = _QUANT.get(quant) or _DTYPES.get(dtype)
    workload: dict = {"model": model, **model_guess(model)}
    if precision:
        workload["precision"] = precision
        workload.pop("precision_from", None)
    for key, target in (("avg_input_length", "prompt_tokens"), ("avg_output_length", "gen_tokens")):
        value = parse_number(req.get(key))
        if value is not None:
            workload[target] = round(value)
    requests = parse_int(req.get("num_requests"))
    if requests is not None:
        workload["requests"] = requests
    conc = parse_number(req.get("avg_num_concurrent_requests"))
    if conc is not None:
        workload["concurrency"] = max(1, round(conc))
    mbs = parse_int(world.get("max_batch_size"))
    if mbs is not None:
        workload["batch"] = mbs
    return workload


def _conditions(engine: dict, world: dict, problems: list[Problem], name: str, place: str) -> dict:
    tp, pp = parse_int(world.get("tp_size")) or 1, parse_int(world.get("pp_size")) or 1
    world_size = parse_int(world.get("world_size")) or tp * pp
    conditions: dict = {"backend": clean_text(engine.get("backend") or "", 20),
                        "trtllm_version": clean_text(engine.get("version") or "", 20),
                        "tp_size": tp, "pp_size": pp, "world_size": world_size,
                        "dtype": clean_text(engine.get("dtype") or "", 20) or None,
                        "quantization": clean_text(engine.get("quantization") or "", 30) or None,
                        "kv_cache_dtype": clean_text(engine.get("kv_cache_dtype") or "", 20) or None}
    for key in ("ep_size", "max_num_tokens", "scheduling_policy", "kv_cache_percentage"):
        if key in world and clean_scalar(world[key]) is not None:
            conditions[key] = clean_scalar(world[key])
    issue = parse_number(world.get("issue_rate"))
    if issue is not None and issue > 1e6:
        problems.append(Problem(name, f"{place}, key world_info.issue_rate", f"{issue:.3g} requests/s is not a real "
                                "rate (no limit set?): ignored", "info"))
    elif issue is not None:
        conditions["issue_rate"] = issue
    return conditions


def _hardware(machine: dict, model: str, conditions: dict, problems: list[Problem], name: str, place: str,
              no_machine: str) -> dict:
    """The Measurement fields naming the hardware; adds the GPU memory to `conditions`, or the question."""
    world_size = conditions["world_size"]
    gpu_name = clean_text(machine.get("name") or "", 120)
    if gpu_name:
        match = matching.match_hardware(gpu_name, world_size)
        key = "hw:" + gpu_name
        mem = parse_number(machine.get("memory.total"))
        if mem:
            conditions["gpu_memory_gib"] = round(mem, 2)
    else:
        match = matching.Match(None, world_size, "ask", "this trtllm-bench version does not record the GPU (no "
                               "'machine' section)")
        key = "sig:trtllm-bench:" + model
        problems.append(Problem(name, place, f"{no_machine}: which accelerator ran this ({world_size} GPU(s) "
                                "according to the tensor and pipeline parallel sizes)? Answer with --gpu ID", "question"))
    return dict(hardware_text=gpu_name, accelerator_id=match.accelerator_id, accelerator_count=match.count,
                match_confidence=match.confidence, match_reason=match.reason, hardware_key=key)


def _measurements(perf: dict, stream: dict, num: Numbers, hardware: dict, workload: dict,
                  conditions: dict) -> list[Measurement]:
    out: list[Measurement] = []

    def add(metric, section, k, unit, scale=1.0, statistic="mean"):
        raw = section.get(k)
        if raw is None:
            return
        value = num.value(raw, k, positive=True)
        if not value:
            return
        out.append(Measurement(format=FORMAT, metric=metric, value=value * scale, unit=unit, statistic=statistic,
                               workload=dict(workload), conditions=dict(conditions), **hardware))

    add("request_throughput", perf, "request_throughput_req_s", "requests/s")
    add("output_tokens_per_s", perf, "system_output_throughput_tok_s", "tokens/s")
    add("total_tokens_per_s", perf, "system_total_throughput_tok_s", "tokens/s")
    add("output_tokens_per_s_per_user", perf, "output_throughput_per_user_tok_s", "tokens/s")
    add("output_tokens_per_s_per_gpu", perf, "output_throughput_per_gpu_tok_s", "tokens/s")
    add("e2e_latency_s", perf, "avg_request_latency_ms", "s", 1e-3)
    pct = _dict(perf.get("request_latency_percentiles_ms"))
    for k in ("p50", "p90", "p95", "p99"):
        add("e2e_latency_s", pct, k, "s", 1e-3, k)
    add("decode_tokens_per_s_per_user", stream, "token_output_speed_tok_s", "tokens/s")
    add("ttft_s", stream, "avg_ttft_ms", "s", 1e-3)
    add("tpot_s", stream, "avg_tpot_ms", "s", 1e-3)
    for section, metric in (("ttft_percentiles", "ttft_s"), ("tpot_percentiles", "tpot_s")):
        values = _dict(stream.get(section))
        for k in ("p50", "p90", "p99"):
            add(metric, values, k, "s", 1e-3, k)
    return out


def convert(rec: dict, item: Record, name: str, no_machine: str = "no 'machine' section") -> Iterator[Item]:
    problems: list[Problem] = []
    engine, world = _dict(rec.get("engine")), _dict(rec.get("world_info"))
    place = item.place
    num = Numbers(name, place, problems)
    workload = _workload(engine, _dict(rec.get("request_info")), world)
    conditions = _conditions(engine, world, problems, name, place)
    hardware = _hardware(_dict(rec.get("machine")), workload["model"], conditions, problems, name, place, no_machine)
    out = _measurements(_dict(rec.get("performance")), _dict(rec.get("streaming_metrics")), num, hardware, workload,
                        conditions)
    yield from problems
    if not out:
        yield Problem(name, place, "no throughput or latency figure in the report", "warning")
        return
    yield from out


# ----------------------------------------------------------------------------------- text summary
_SECTION_RE = re.compile(r"^\s*=?\s*(ENGINE DETAILS|PYTORCH BACKEND|PyTorch backend|_AUTODEPLOY BACKEND|MACHINE DETAILS|"
                         r"WORLD \+ RUNTIME INFORMATION|REQUEST DETAILS|PERFORMANCE OVERVIEW|DATASET DETAILS|"
                         r"DECODING STATISTICS)\b.*$")
_BREAKDOWN_RE = re.compile(r"^\s*\[(Latency|TTFT|TPOT|GTPS)\]\s*([A-Z0-9]+)\s*:\s*(\S+)\s*$")
_LINE_RE = re.compile(r"^\s*([A-Za-z][^:]*?)\s*:\s*(.*?)\s*$")
_VERSION_RE = re.compile(r"TensorRT-LLM version:\s*(\S+)")
_MACHINE_RE = re.compile(r"^\s*(.+?),\s*memory\s+([\d.]+)\s*GB\b")
_BACKEND_SECTIONS = ("ENGINE DETAILS", "PYTORCH BACKEND", "PyTorch backend", "_AUTODEPLOY BACKEND")
# text label -> (section of the JSON report, key)
_TEXT_KEYS = {
    "model": ("engine", "model"), "tensorrt-llm version": ("engine", "version"),
    "tensorrt llm version": ("engine", "version"), "dtype": ("engine", "dtype"),
    "kv cache dtype": ("engine", "kv_cache_dtype"), "quantization": ("engine", "quantization"),
    "tp size": ("world_info", "tp_size"), "pp size": ("world_info", "pp_size"), "ep size": ("world_info", "ep_size"),
    "max runtime batch size": ("world_info", "max_batch_size"), "max runtime tokens": ("world_info", "max_num_tokens"),
    "scheduling policy": ("world_info", "scheduling_policy"), "kv memory percentage": ("world_info", "kv_cache_percentage"),
    "issue rate (req/sec)": ("world_info", "issue_rate"),
    "number of requests": ("request_info", "num_requests"),
    "number of concurrent requests": ("request_info", "avg_num_concurrent_requests"),
    "average input length (tokens)": ("request_info", "avg_input_length"),
    "average output length (tokens)": ("request_info", "avg_output_length"),
    "request throughput (req/sec)": ("performance", "request_throughput_req_s"),
    "total output throughput (tokens/sec)": ("performance", "system_output_throughput_tok_s"),
    "token throughput (tokens/sec)": ("performance", "system_output_throughput_tok_s"),
    "total token throughput (tokens/sec)": ("performance", "system_total_throughput_tok_s"),
    "total latency (ms)": ("performance", "total_latency_ms"),
    "average request latency (ms)": ("performance", "avg_request_latency_ms"),
    "per user output throughput [w/ ctx] (tps/user)": ("performance", "output_throughput_per_user_tok_s"),
    "per user output throughput (tokens/sec/user)": ("performance", "output_throughput_per_user_tok_s"),
    "per gpu output throughput (tps/gpu)": ("performance", "output_throughput_per_gpu_tok_s"),
    "per gpu output throughput (tokens/sec/gpu)": ("performance", "output_throughput_per_gpu_tok_s"),
    "average time-to-first-token [ttft] (ms)": ("streaming_metrics", "avg_ttft_ms"),
    "average time-per-output-token [tpot] (ms)": ("streaming_metrics", "avg_tpot_ms"),
    "per user output speed (tps/user)": ("streaming_metrics", "token_output_speed_tok_s"),
}
_BREAKDOWN_TARGET = {"Latency": ("performance", "request_latency_percentiles_ms"),
                     "TTFT": ("streaming_metrics", "ttft_percentiles"),
                     "TPOT": ("streaming_metrics", "tpot_percentiles"),
                     "GTPS": ("streaming_metrics", "gen_tps_percentiles")}
_PERF_SECTIONS = ("REQUEST DETAILS", "PERFORMANCE OVERVIEW")
MAX_SUMMARIES = 10_000


def looks_like_text(head: str) -> bool:
    return bool(re.search(r"^\s*=?\s*PERFORMANCE OVERVIEW", head, re.M)) and (
        "Request Throughput (req/sec)" in head or "Token Throughput (tokens/sec)" in head)


def _text_value(key: str, raw: str):
    if key == "kv_cache_percentage":
        number = parse_number(raw.rstrip("%").strip())
        return None if number is None else number / 100.0
    if key in ("model", "version", "dtype", "kv_cache_dtype", "quantization", "scheduling_policy"):
        text = raw.strip()
        return None if text in ("", "None", "N/A") else text
    if key == "ep_size":
        return parse_int(raw)
    number = parse_number(raw)
    return int(number) if number is not None and number.is_integer() and abs(number) < 2**53 else number


def _empty_summary() -> dict:
    return {"engine": {}, "world_info": {}, "request_info": {}, "performance": {}}


def _read_line(current: dict, section: str, line: str) -> None:
    """One line inside a summary block (not a section heading) into the summary being read."""
    if section == "MACHINE DETAILS":
        m = _MACHINE_RE.match(line)
        if m:
            current["machine"] = {"name": m.group(1), "memory.total": parse_number(m.group(2))}
        return
    if section == "DATASET DETAILS" or section == "DECODING STATISTICS":
        return
    m = _BREAKDOWN_RE.match(line)
    if m:
        target = _BREAKDOWN_TARGET[m.group(1)]
        stat = m.group(2).lower()
        value = parse_number(m.group(3))
        if value is not None:
            current.setdefault(target[0], {}).setdefault(target[1], {})[stat] = value
        return
    m = _LINE_RE.match(line)
    if not m or not section:
        return
    key = " ".join(m.group(1).lower().split())
    target = _TEXT_KEYS.get(key)
    if target is None:
        return
    value = _text_value(target[1], m.group(2))
    if value is not None:
        current.setdefault(target[0], {})[target[1]] = value


def _read_summaries(src) -> tuple[list[tuple[dict, int]], str | None]:
    """The summaries in the log (each with its first line) and the TensorRT-LLM version it prints."""
    current, start, section = _empty_summary(), 0, ""
    version = None
    summaries: list[tuple[dict, int]] = []

    def close():
        nonlocal current
        if current["performance"] or current["request_info"]:
            summaries.append((current, start))
        current = _empty_summary()

    for number, line in iter_lines(src):
        if line is None:
            continue
        line = line.replace("\t", " ")
        m = _VERSION_RE.search(line)
        if m and version is None:
            version = m.group(1)
        m = _SECTION_RE.match(line)
        if not m:
            _read_line(current, section, line)
            continue
        new = m.group(1)
        if new in _BACKEND_SECTIONS + ("REQUEST DETAILS",) and current["performance"]:
            close()
        if not (current["performance"] or current["request_info"] or current["engine"] or current["world_info"]):
            start = number
        section = new
        if new in _BACKEND_SECTIONS:
            current["engine"]["backend"] = "TRT" if new == "ENGINE DETAILS" else \
                ("_autodeploy" if "AUTODEPLOY" in new else "Pytorch")
        if len(summaries) >= MAX_SUMMARIES:
            break
    close()
    return summaries, version


@opened
def iter_parse_text(src: Source, **_ignored) -> Iterator[Item]:
    """The summaries of a trtllm-bench console log (one per benchmark run printed in it)."""
    name = src.name
    summaries, version = _read_summaries(src)
    produced = 0
    for index, (summary, line_no) in enumerate(summaries):
        if version and not summary["engine"].get("version"):
            summary["engine"]["version"] = version
        if summary["engine"].get("model"):
            summary["engine"]["model"] = clean_text(summary["engine"]["model"], 160)
        item = Record(summary, index, line_no, False)
        for out in convert(summary, item, name, "the summary names no GPU (no MACHINE DETAILS block)"):
            if isinstance(out, Measurement):
                produced += 1
                out.source_file = name
                out.record_index = index
                out.conditions["output"] = "console summary"
                if not out.hardware_text:
                    out.hardware_key = "sig:trtllm-bench:" + (summary["engine"].get("model") or basename(name))
                yield finish(out)
            else:
                yield out
    if not produced:
        yield Problem(name, "", "no trtllm-bench PERFORMANCE OVERVIEW with figures in this file", "error")


class _TextReader:
    iter_parse = staticmethod(iter_parse_text)

    @staticmethod
    def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
        return collect(iter_parse_text(source, source_name), FORMAT)


TEXT = _TextReader()
