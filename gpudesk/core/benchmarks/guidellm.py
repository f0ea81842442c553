"""GuideLLM `guidellm benchmark ... --output-path benchmarks.json` reports (vllm-project/guidellm,
formerly neuralmagic): `{"benchmarks": [...]}` with one benchmark per load level of the run
(synchronous, concurrent N streams, throughput, constant or Poisson rate, or the steps of a sweep).
Each benchmark's `metrics` are distributions per request status ({"successful": {mean, median,
std_dev, percentiles: {p50, p99, ...}}, "errored": ..., "total": ...}); the successful requests'
figures are stored:

- requests_per_second -> request throughput; output_tokens_per_second -> output tokens/s;
  tokens_per_second -> prompt + output tokens/s (means);
- time_to_first_token_ms, inter_token_latency_ms, time_per_output_token_ms (ms, stored in s) and
  request_latency (s) -> mean (with std_dev), median and p99;
- prompt_token_count / output_token_count means -> the workload's tokens per request.

Concurrency: 1 for `synchronous`, the stream count for `concurrent`; otherwise the measured mean
request concurrency, marked as such. Versions 0.2-0.4 keep the load in `args.strategy` and the model
in `worker.backend_model`; 0.5+ in `config.strategy` and the top-level `args`/`config`. The
per-request records (`requests`: prompts and generated texts) are never stored. GuideLLM records no
accelerator (at most `metadata.platform`, the OS): it is asked.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpudesk.core.benchmarks._common import Item, model_guess, run_json
from gpudesk.core.benchmarks.reader import Record
from gpudesk.core.benchmarks.types import (
    Measurement,
    ParseResult,
    Problem,
    clean_scalar,
    clean_text,
    collect,
    parse_int,
    parse_number,
)

FORMAT = "guidellm"
QUESTION = ("GuideLLM reports do not record the accelerator: which one (and how many) served this model? Answer in "
            "the Benchmarks view or with --gpu ID --count N; the answer is remembered for this model")
MAX_BENCHMARKS = 10_000
# metric in the report -> (gpudesk metric, unit, scale to SI, statistics stored)
_METRICS = (
    ("requests_per_second", "request_throughput", "requests/s", 1.0, ("mean",)),
    ("output_tokens_per_second", "output_tokens_per_s", "tokens/s", 1.0, ("mean",)),
    ("tokens_per_second", "total_tokens_per_s", "tokens/s", 1.0, ("mean",)),
    ("time_to_first_token_ms", "ttft_s", "s", 1e-3, ("mean", "median", "p99")),
    ("inter_token_latency_ms", "itl_s", "s", 1e-3, ("mean", "median", "p99")),
    ("time_per_output_token_ms", "tpot_s", "s", 1e-3, ("mean", "median", "p99")),
    ("request_latency", "e2e_latency_s", "s", 1.0, ("mean", "median", "p99")),
)


def is_record(value: dict) -> bool:
    benchmarks = value.get("benchmarks")
    return isinstance(benchmarks, list) and any(isinstance(b, dict) and isinstance(b.get("metrics"), dict)
                                                 for b in benchmarks[:MAX_BENCHMARKS])


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


def iter_parse(source, source_name: str | None = None, **_ignored) -> Iterator[Item]:
    return run_json(source, source_name, FORMAT, "GuideLLM", is_record, convert)


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _status(dist) -> dict:
    """The successful requests' summary of a metric (the total when there is no split by status)."""
    d = _dict(dist)
    for key in ("successful", "total"):
        if isinstance(d.get(key), dict):
            return d[key]
    return d if "mean" in d else {}


def _stat(summary: dict, stat: str) -> float | None:
    if stat == "p99":
        return parse_number(_dict(summary.get("percentiles")).get("p99"))
    return parse_number(summary.get(stat))


def _model(report: dict, bench: dict) -> str:
    worker = _dict(bench.get("worker"))
    for value in (worker.get("backend_model"), _dict(bench.get("backend")).get("model"),
                  _dict(bench.get("config")).get("model"), _dict(report.get("args")).get("model"),
                  _dict(report.get("config")).get("model"), _dict(bench.get("args")).get("model")):
        if isinstance(value, str) and value.strip():
            return clean_text(value, 160)
    return ""


def _workload(model: str, bench: dict, metrics: dict, strategy: dict, kind: str) -> dict:
    workload: dict = {"model": model} if model else {}
    workload.update(model_guess(model))
    for key, target in (("prompt_token_count", "prompt_tokens"), ("output_token_count", "gen_tokens")):
        mean = parse_number(_status(metrics.get(key)).get("mean"))
        if mean is not None and mean >= 0:
            workload[target] = round(mean)
    totals = _dict(bench.get("request_totals")) or _dict(_dict(bench.get("run_stats")).get("requests_made"))
    successful = parse_int(totals.get("successful"))
    if successful is not None:
        workload["requests"] = successful
    measured_concurrency = parse_number(_status(metrics.get("request_concurrency")).get("mean"))
    if kind == "synchronous":
        workload["concurrency"] = 1
    elif kind == "concurrent" and parse_int(strategy.get("streams")):
        workload["concurrency"] = parse_int(strategy.get("streams"))
    elif measured_concurrency is not None and measured_concurrency > 0:
        workload["concurrency"] = max(1, round(measured_concurrency))
        workload["concurrency_from"] = "the measured mean number of requests in flight"
    return workload


def _conditions(report: dict, bench: dict, metrics: dict, strategy: dict, kind: str) -> dict:
    conditions: dict = {"strategy": kind or None, "backend": clean_text(
        _dict(bench.get("worker")).get("backend_type") or "", 40) or None}
    rate = parse_number(strategy.get("rate"))
    if rate is not None and rate > 0:
        conditions["request_rate"] = rate
    measured_concurrency = parse_number(_status(metrics.get("request_concurrency")).get("mean"))
    if measured_concurrency is not None:
        conditions["measured_concurrency"] = measured_concurrency
    if clean_scalar(bench.get("duration")) is not None:
        conditions["duration_s"] = clean_scalar(bench.get("duration"))
    platform = clean_text(_dict(report.get("metadata")).get("platform") or "", 120)
    if platform:
        conditions["platform"] = platform
    version = clean_text(_dict(report.get("metadata")).get("guidellm_version") or "", 40)
    if version:
        conditions["guidellm_version"] = version
    return {k: v for k, v in conditions.items() if v is not None}


def _measurements(metrics: dict, key: str, workload: dict, conditions: dict) -> list[Measurement]:
    out: list[Measurement] = []
    for source_key, metric, unit, scale, stats in _METRICS:
        summary = _status(metrics.get(source_key))
        if not summary:
            continue
        for stat in stats:
            value = _stat(summary, stat)
            if value is None or value <= 0:
                continue
            std = parse_number(summary.get("std_dev")) if stat == "mean" else None
            out.append(Measurement(
                format=FORMAT, metric=metric, value=value * scale, unit=unit, hardware_text="",
                match_confidence="ask", match_reason="GuideLLM does not record the hardware", hardware_key=key,
                statistic=stat, stddev=std * scale if std is not None and std >= 0 else None,
                workload=dict(workload), conditions=dict(conditions)))
    return out


def convert(report: dict, item: Record, name: str) -> Iterator[Item]:
    benchmarks = [b for b in report.get("benchmarks", [])[:MAX_BENCHMARKS] if isinstance(b, dict)]
    asked: set[str] = set()
    for index, bench in enumerate(benchmarks):
        place = f"{item.place}, benchmark {index}"
        metrics = _dict(bench.get("metrics"))
        if not metrics:
            yield Problem(name, place, "a benchmark without metrics: skipped", "warning")
            continue
        settings = _dict(bench.get("args")) or _dict(bench.get("config"))
        strategy = _dict(settings.get("strategy"))
        kind = clean_text(strategy.get("type_") or strategy.get("type") or "", 30)
        model = _model(report, bench)
        workload = _workload(model, bench, metrics, strategy, kind)
        if workload.get("requests", None) == 0:
            yield Problem(name, place, "no request succeeded in this benchmark: nothing stored from it", "warning")
            continue
        conditions = _conditions(report, bench, metrics, strategy, kind)
        key = "sig:guidellm:" + (model or name)
        out = _measurements(metrics, key, workload, conditions)
        if not out:
            yield Problem(name, place, "no throughput or latency figure in this benchmark", "warning")
            continue
        if "requests" in bench:
            yield Problem(name, place, "per-request records (prompts, generated texts) are not stored", "info")
        if key not in asked:
            asked.add(key)
            yield Problem(name, place, QUESTION, "question")
            if not model:
                yield Problem(name, place, "the report does not name the model: which model was served?", "question")
        yield from out
