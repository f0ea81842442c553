"""NVIDIA GenAI-Perf `profile_export_genai_perf.json` and its successor AIPerf's
`profile_export_aiperf.json`: one object whose metrics are `{"unit": ..., "avg", "p50", "p90",
"p99", "min", "max", "std"}` - at the top level (GenAI-Perf), under `records` (AIPerf 0.1-0.3, each
with a `tag` and `header`) or under `llm_metrics` - plus `input_config` (the command's settings:
model names, concurrency or request rate) and, with GPU telemetry, `telemetry_data` (AIPerf: GPU
names per endpoint) or `telemetry_stats` (GenAI-Perf: no names).

Stored: request_throughput (requests/s), output_token_throughput (tokens/s, whole run),
output_token_throughput_per_user (AIPerf: tokens/s of one request's generation, 1/ITL - stored as
generation speed per user), output_token_throughput_per_request (older GenAI-Perf: output tokens /
request latency), time_to_first_token / ttft, inter_token_latency, request_latency (units as the
file gives them, stored in s) as mean (with std), median and p99. Input and output sequence length
means give the workload's tokens per request.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpudesk.core.benchmarks import matching
from gpudesk.core.benchmarks._common import Item, model_guess, run_json
from gpudesk.core.benchmarks.reader import Record
from gpudesk.core.benchmarks.types import (
    Measurement,
    ParseResult,
    Problem,
    canonical_unit,
    clean_text,
    collect,
    parse_int,
    parse_number,
    to_seconds,
)

FORMAT = "genai-perf"
QUESTION = ("GenAI-Perf/AIPerf exports name no accelerator unless GPU telemetry was collected: which one (and how "
            "many) served this model? Answer in the Benchmarks view or with --gpu ID --count N")
# name in the export -> (gpudesk metric, kind: "rate" | "time")
_METRICS = {
    "request_throughput": ("request_throughput", "rate"),
    "output_token_throughput": ("output_tokens_per_s", "rate"),
    "output_token_throughput_per_user": ("decode_tokens_per_s_per_user", "rate"),
    "output_token_throughput_per_request": ("output_tokens_per_s_per_user", "rate"),
    "time_to_first_token": ("ttft_s", "time"),
    "ttft": ("ttft_s", "time"),
    "inter_token_latency": ("itl_s", "time"),
    "request_latency": ("e2e_latency_s", "time"),
}
_RATE_UNITS = {"per sec": "requests/s", "requests/sec": "requests/s", "tokens/sec": "tokens/s",
               "tokens/sec/user": "tokens/s", "tokens/sec/request": "tokens/s"}
_STATS = (("avg", "mean"), ("p50", "median"), ("p99", "p99"))


def is_record(value: dict) -> bool:
    metrics = _metrics(value)
    return isinstance(value.get("input_config"), dict) or any(k in metrics for k in _METRICS)


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


def iter_parse(source, source_name: str | None = None, **_ignored) -> Iterator[Item]:
    return run_json(source, source_name, FORMAT, "GenAI-Perf/AIPerf export", is_record, convert)


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _metrics(report: dict) -> dict:
    for key in ("records", "llm_metrics"):
        if isinstance(report.get(key), dict):
            return report[key]
    return report


def _gpus(report: dict) -> list[str]:
    names = []
    for endpoint in _dict(_dict(report.get("telemetry_data")).get("endpoints")).values():
        for gpu in _dict(_dict(endpoint).get("gpus")).values():
            name = _dict(gpu).get("gpu_name")
            if isinstance(name, str) and name.strip():
                names.append(clean_text(name, 120))
    return names


def _workload(metrics: dict, config: dict, endpoint: dict, loadgen: dict) -> tuple[str, dict]:
    names = endpoint.get("model_names") or config.get("model_names") or config.get("model") or []
    model = clean_text(names[0] if isinstance(names, list) and names else names if isinstance(names, str) else "", 160)
    workload: dict = {"model": model} if model else {}
    workload.update(model_guess(model))
    for key, target in (("input_sequence_length", "prompt_tokens"), ("output_sequence_length", "gen_tokens")):
        mean = parse_number(_dict(metrics.get(key)).get("avg"))
        if mean is not None and mean >= 0:
            workload[target] = round(mean)
    requests = parse_number(_dict(metrics.get("request_count")).get("avg"))
    if requests is not None and requests >= 0:
        workload["requests"] = int(requests)
    concurrency = parse_int(loadgen.get("concurrency"))
    if concurrency is None:
        concurrency = parse_int(_dict(loadgen.get("stimulus")).get("concurrency"))
    if concurrency:
        workload["concurrency"] = concurrency
    return model, workload


def _conditions(metrics: dict, endpoint: dict, loadgen: dict, problems: list[Problem], name: str,
                place: str) -> dict:
    conditions: dict = {"streaming": endpoint.get("streaming") if isinstance(endpoint.get("streaming"), bool) else None,
                        "endpoint_type": clean_text(endpoint.get("type") or "", 30) or None}
    rate = parse_number(loadgen.get("request_rate"))
    if rate is not None and rate > 0:
        conditions["request_rate"] = rate
    errors = parse_number(_dict(metrics.get("error_request_count")).get("avg"))
    if errors:
        conditions["errored_requests"] = int(errors)
        problems.append(Problem(name, place, f"{int(errors)} request(s) ended in an error; the figures are of the "
                                "others", "info"))
    return {k: v for k, v in conditions.items() if v is not None}


def _scale(value: float, unit: str, metric: str, kind: str) -> tuple[float, str] | str:
    """(factor to the stored unit, stored unit), or the expected unit's name when `unit` does not fit."""
    if kind == "time":
        seconds = to_seconds(value, unit or "ms")
        return "a time unit" if seconds is None else (seconds / value, "s")
    expected = "requests/s" if metric == "request_throughput" else "tokens/s"
    # no unit: the metric's own; a unit this reader does not know (a time, "requests" ...) is not taken for it
    stored_unit = _RATE_UNITS.get(unit.strip().lower()) or canonical_unit(unit) or (None if unit.strip() else expected)
    return (1.0, stored_unit) if stored_unit == expected else expected


def _measurements(metrics: dict, common: dict, problems: list[Problem], name: str, place: str) -> list[Measurement]:
    out: list[Measurement] = []
    for source_key, (metric, kind) in _METRICS.items():
        entry = metrics.get(source_key)
        if not isinstance(entry, dict):
            continue
        unit = str(entry.get("unit") or "")
        for stat_key, statistic in _STATS:
            raw = entry.get(stat_key)
            if raw is None:
                continue
            value = parse_number(raw)
            if value is None or value <= 0:
                continue
            std = parse_number(entry.get("std")) if statistic == "mean" else None
            scaled = _scale(value, unit, metric, kind)
            if isinstance(scaled, str):
                problems.append(Problem(name, f"{place}, key {source_key}", f"unit {unit!r} is not {scaled}: "
                                        "ignored", "warning"))
                break
            scale, stored_unit = scaled
            out.append(Measurement(
                format=FORMAT, metric=metric, value=value * scale, unit=stored_unit, statistic=statistic,
                stddev=std * scale if std is not None and std >= 0 else None, workload=dict(common["workload"]),
                conditions=dict(common["conditions"]), **common["hardware"]))
    return out


def convert(report: dict, item: Record, name: str) -> Iterator[Item]:
    place = item.place
    problems: list[Problem] = []
    metrics = _metrics(report)
    config = _dict(report.get("input_config"))
    endpoint = _dict(config.get("endpoint"))
    loadgen = _dict(config.get("loadgen")) or _dict(config.get("perf_analyzer")) or config
    model, workload = _workload(metrics, config, endpoint, loadgen)
    conditions = _conditions(metrics, endpoint, loadgen, problems, name, place)
    gpus = _gpus(report)
    if gpus:
        match = matching.match_hardware(", ".join(gpus))
        hardware_text, key = ", ".join(gpus), "hw:" + ", ".join(gpus)
    else:
        match = matching.Match(None, None, "ask", "the export does not record the hardware (no GPU telemetry)")
        hardware_text, key = "", "sig:genai-perf:" + (model or name)
    hardware = dict(hardware_text=hardware_text, accelerator_id=match.accelerator_id, accelerator_count=match.count,
                    match_confidence=match.confidence, match_reason=match.reason, hardware_key=key)
    out = _measurements(metrics, {"workload": workload, "conditions": conditions, "hardware": hardware},
                        problems, name, place)
    yield from problems
    if not out:
        yield Problem(name, place, "no throughput or latency figure in the export", "warning")
        return
    if not gpus:
        yield Problem(name, place, QUESTION, "question")
    if not model:
        yield Problem(name, place, "the export does not name the model: which model was served?", "question")
    yield from out
