"""SGLang `python -m sglang.bench_serving --output-file F.jsonl`: one JSON line appended per run,
with `request_rate` written as the non-standard literal `Infinity` when unlimited, latencies in ms
(stored in seconds). The lines name neither the hardware nor (in 2024-25 versions) the model:
both are asked for.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from gpudesk.core.benchmarks._common import Item, any_key, has_keys, model_guess, run_json
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

FORMAT = "sglang"
_STAT_RE = re.compile(r"^(mean|median|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2e_latency)_ms$")
_METRIC = {"ttft": "ttft_s", "tpot": "tpot_s", "itl": "itl_s", "e2e_latency": "e2e_latency_s"}
QUESTION = ("SGLang result lines do not record the hardware: which accelerator (catalogue id) and how many ran this "
            "benchmark (with which tensor/data-parallel sizes)? Answer with --gpu ID --count N (or in the Benchmarks "
            "view); the answer is remembered")
MODEL_QUESTION = ("the line does not name the model: which model ran (parameters, precision)? Needed to compare the "
                  "figures with an estimate (answer in the Benchmarks view)")


def looks_like(head: str) -> bool:
    return has_keys(head, "total_output_tokens_retokenized") or (
        has_keys(head, "backend", "dataset_name") and any_key(head, "output_throughput", "median_e2e_latency_ms"))


def is_record(v: dict) -> bool:
    return "total_output_tokens_retokenized" in v or ("dataset_name" in v and "output_throughput" in v)


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


def iter_parse(source, source_name: str | None = None, **_ignored) -> Iterator[Item]:
    return run_json(source, source_name, FORMAT, "SGLang bench_serving", is_record, convert)


def _request_rate(rec: dict, problems: list[Problem], name: str, place: str) -> tuple[float | None, bool]:
    """The request rate and whether it was unlimited (`Infinity`)."""
    raw_rate = rec.get("request_rate")
    rate = parse_number(raw_rate)
    unlimited = isinstance(raw_rate, float) and math.isinf(raw_rate) or (
        isinstance(raw_rate, str) and raw_rate.strip().lower() in ("inf", "infinity"))
    if unlimited:
        problems.append(Problem(name, f"{place}, key request_rate", "Infinity (no rate limit; not valid strict "
                                "JSON): stored as unlimited", "info"))
    elif isinstance(raw_rate, float) and math.isnan(raw_rate):
        problems.append(Problem(name, f"{place}, key request_rate", "NaN: stored as unknown", "warning"))
    return rate, unlimited


def _workload(rec: dict, num: Numbers, model: str, completed: int | None, unlimited: bool) -> dict:
    concurrency = parse_int(rec.get("max_concurrency"))
    in_tokens = num.get(rec, "total_input_tokens", positive=True)
    out_tokens = num.get(rec, "total_output_tokens", positive=True)
    workload: dict = {"model": model} if model else {}
    workload.update(model_guess(model))
    if completed:
        workload["requests"] = completed
        if in_tokens is not None:
            workload["prompt_tokens"] = round(in_tokens / completed)
        if out_tokens is not None:
            workload["gen_tokens"] = round(out_tokens / completed)
    if concurrency:
        workload["concurrency"] = concurrency
    elif unlimited and completed:
        workload["concurrency"] = completed
        workload["concurrency_from"] = "all requests sent at once (no rate limit, no concurrency cap)"
    workload["dataset"] = clean_text(rec.get("dataset_name") or "", 40)
    return workload


def _conditions(rec: dict, rate: float | None, unlimited: bool) -> dict:
    conditions: dict = {"backend": clean_text(rec.get("backend") or "", 40), "request_rate": rate,
                        "max_concurrency": parse_int(rec.get("max_concurrency"))}
    if unlimited:
        conditions["request_rate_unlimited"] = True
    for key in ("random_input_len", "random_output_len", "random_range_ratio", "sharegpt_output_len", "duration",
                "accept_length", "tag", "date"):
        if key in rec and clean_scalar(rec[key]) is not None:
            conditions[key] = clean_scalar(rec[key])
    return conditions


def _measurements(rec: dict, num: Numbers, key: str, workload: dict, conditions: dict) -> list[Measurement]:
    out: list[Measurement] = []

    def add(metric, k, unit, scale=1.0, statistic="mean", std=None):
        if rec.get(k) is None:
            return
        value = num.value(rec[k], k, positive=True)
        if not value:
            return
        sd = num.value(rec[std], std, positive=True) if std and rec.get(std) is not None else None
        out.append(Measurement(format=FORMAT, metric=metric, value=value * scale, unit=unit, hardware_text="",
                               match_confidence="ask", match_reason="the file does not record the hardware",
                               hardware_key=key, statistic=statistic, stddev=sd * scale if sd is not None else None,
                               workload=dict(workload), conditions=dict(conditions)))

    add("output_tokens_per_s", "output_throughput", "tokens/s")
    add("input_tokens_per_s", "input_throughput", "tokens/s")
    add("total_tokens_per_s", "total_throughput", "tokens/s")
    add("request_throughput", "request_throughput", "requests/s")
    for k in rec:
        m = _STAT_RE.match(k)
        if m:
            stat, what = m.groups()
            add(_METRIC[what], k, "s", 1e-3, stat, f"std_{what}_ms" if stat == "mean" else None)
    return out


def convert(rec: dict, item: Record, name: str) -> Iterator[Item]:
    problems: list[Problem] = []
    num = Numbers(name, item.place, problems)
    completed = parse_int(rec.get("completed"))
    if completed == 0:
        yield Problem(name, item.place, "no request completed: the run measured nothing, so nothing is stored",
                      "warning")
        return
    rate, unlimited = _request_rate(rec, problems, name, item.place)
    model = clean_text(rec.get("model_id") or rec.get("model") or rec.get("model_path") or "", 160)
    workload = _workload(rec, num, model, completed, unlimited)
    conditions = _conditions(rec, rate, unlimited)
    if any(k in rec for k in ("generated_texts", "ttfts", "itls")):
        problems.append(Problem(name, item.place, "per-request details (times, generated texts) are not stored",
                                "info"))
    key = "sig:sglang:" + (model or conditions["backend"] or "sglang")
    out = _measurements(rec, num, key, workload, conditions)
    yield from problems
    if not out:
        yield Problem(name, item.place, "no throughput or latency figure in the line", "warning")
        return
    yield Problem(name, item.place, QUESTION, "question")
    if not model:
        yield Problem(name, item.place, MODEL_QUESTION, "question")
    yield from out
