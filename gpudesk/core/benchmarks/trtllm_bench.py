"""TensorRT-LLM `trtllm-bench ... --report_json report.json`: one object with `engine`,
`machine` (GPU name and memory of the first GPU; newer versions only), `world_info` (tensor /
pipeline parallel sizes and world size = GPU count), `request_info`, `performance` (ms, tok/s,
req/s) and `streaming_metrics` (when streaming)."""

from __future__ import annotations

from collections.abc import Iterator

from gpudesk.core.benchmarks import matching
from gpudesk.core.benchmarks._common import Item, has_keys, model_guess, run_json
from gpudesk.core.benchmarks.reader import Record
from gpudesk.core.benchmarks.types import (
    Measurement,
    Numbers,
    ParseResult,
    Problem,
    clean_scalar,
    clean_text,
    collect,
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


def convert(rec: dict, item: Record, name: str) -> Iterator[Item]:
    problems: list[Problem] = []
    engine, machine, world = _dict(rec.get("engine")), _dict(rec.get("machine")), _dict(rec.get("world_info"))
    req, perf, stream = _dict(rec.get("request_info")), _dict(rec.get("performance")), \
        _dict(rec.get("streaming_metrics"))
    place = item.place
    num = Numbers(name, place, problems)

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
        problems.append(Problem(name, place, f"no 'machine' section: which accelerator ran this ({world_size} GPU(s) "
                                "according to world_info)? Answer with --gpu ID", "question"))

    out: list[Measurement] = []

    def add(metric, section, k, unit, scale=1.0, statistic="mean"):
        raw = section.get(k)
        if raw is None:
            return
        value = num.value(raw, k, positive=True)
        if not value:
            return
        out.append(Measurement(format=FORMAT, metric=metric, value=value * scale, unit=unit, hardware_text=gpu_name,
                               accelerator_id=match.accelerator_id, accelerator_count=match.count,
                               match_confidence=match.confidence, match_reason=match.reason, hardware_key=key,
                               statistic=statistic, workload=dict(workload), conditions=dict(conditions)))

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
    yield from problems
    if not out:
        yield Problem(name, place, "no throughput or latency figure in the report", "warning")
        return
    yield from out
