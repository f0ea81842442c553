"""vLLM benchmark results:

- serving: `benchmark_serving.py --save-result` / `vllm bench serve --save-result` - one object, or
  several separated by newlines with `--append-result` (JSON Lines in a .json file); `vllm bench
  sweep` run files (`run_number`) and summary arrays of those; the 2024-25 `"request_goodput:"`
  key (with a colon); `request_rate` the string "inf"; latencies in ms (stored in seconds);
- offline throughput (`--output-json`): requests/s and (prompt + output) tokens/s;
- latency (`--output-json`): seconds per whole batch.

None of them records the GPU: every measurement asks for it. A run whose requests all failed is
reported as a problem, never stored as a zero.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from gpudesk.core.benchmarks import matching
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

FORMAT = "vllm"
FORMAT_THROUGHPUT = "vllm-throughput"
FORMAT_LATENCY = "vllm-latency"
LATENCIES = {"ttft": "ttft_s", "tpot": "tpot_s", "itl": "itl_s", "e2el": "e2e_latency_s", "latency": "e2e_latency_s"}
_STAT_RE = re.compile(r"^(mean|median|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|latency)_ms$")
_SERVE_PARAM_RE = re.compile(r"^(max_num_seqs|max_num_batched_tokens|max_model_len|tensor_parallel_size|"
                             r"pipeline_parallel_size|data_parallel_size|gpu_memory_utilization|dtype|quantization|"
                             r"kv_cache_dtype|enable_prefix_caching|enable_chunked_prefill|block_size|"
                             r"num_scheduler_steps|speculative_\w+|max_seq_len_to_capture)$")
QUESTION = ("vLLM result files do not record the hardware: which accelerator (catalogue id) and how many ran this "
            "benchmark, with which tensor-parallel size? Answer with --gpu ID --count N (or in the Benchmarks view); "
            "the answer is remembered for this model's next files")


def looks_like(head: str) -> bool:
    return looks_like_serving(head) or looks_like_throughput(head) or looks_like_latency(head)


def looks_like_serving(head: str) -> bool:
    return any_key(head, "mean_ttft_ms", "median_ttft_ms", "mean_e2el_ms", "median_e2el_ms") and \
        any_key(head, "backend", "endpoint_type", "model_id") and \
        any_key(head, "request_throughput", "completed", "num_prompts", "request_rate")


def looks_like_throughput(head: str) -> bool:
    return has_keys(head, "requests_per_second", "tokens_per_second", "elapsed_time")


def looks_like_latency(head: str) -> bool:
    return has_keys(head, "avg_latency", "percentiles")


def is_serving(v: dict) -> bool:
    if "request_throughput" in v:
        return "mean_ttft_ms" in v or "median_ttft_ms" in v or "completed" in v
    # a latency-only serving result (no throughput keys): latency statistics and the run's setup
    return any(_STAT_RE.match(k) for k in v) and any(k in v for k in ("backend", "model_id", "completed", "date"))


# keys a serving result itself writes; any other scalar top-level key is `--metadata key=value`
_KNOWN_SERVE = {"date", "backend", "endpoint_type", "label", "model_id", "tokenizer_id", "best_of", "use_beam_search",
                "num_prompts", "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
                "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput",
                "request_goodput:", "output_throughput", "input_throughput", "total_token_throughput",
                "max_output_tokens_per_s", "max_concurrent_requests", "run_number", "input_lens", "output_lens",
                "ttfts", "itls", "generated_texts", "errors", "start_times", "model", "tokenizer", "num_requests",
                "elapsed_time", "requests_per_second", "tokens_per_second", "total_num_tokens", "request_goodput_slo",
                "goodput", "ready_checks", "max_num_completed_tokens"}
_STAT_KEY_RE = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_\w+_ms$")
# never kept, whatever the file holds: credentials, machines, people, paths, addresses
_PRIVATE_RE = re.compile(r"(?i)token|secret|passw|key|auth|cred|cookie|host|user|owner|email|env|path|dir|file|"
                         r"url|uri|addr|ip$|^ip|endpoint|api")
_GPU_HINT_KEYS = ("gpu", "gpus", "accelerator", "hardware", "gpu_type", "device")
_GPU_HINT_RE = re.compile(r"^\s*(?:(\d+)\s*[xX×]\s*)?(.+?)\s*$")


def metadata_of(rec: dict) -> dict:
    """`--metadata key=value` pairs: the scalar top-level keys vLLM itself does not write."""
    out = {}
    for key, value in rec.items():
        if key in _KNOWN_SERVE or _STAT_KEY_RE.match(key) or _SERVE_PARAM_RE.match(key) or _PRIVATE_RE.search(key):
            continue
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            cleaned = clean_scalar(value)
            if cleaned is not None and len(out) < 32:
                out[clean_text(key, 60)] = cleaned
    return out


def hardware_hint(metadata: dict) -> tuple[str, int | None] | None:
    """('NVIDIA L40S', 4) from a metadata value such as gpu=4xNVIDIA_L40S; None when there is none."""
    for key in _GPU_HINT_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            m = _GPU_HINT_RE.match(value.replace("_", " "))
            if m:
                return m.group(2), int(m.group(1)) if m.group(1) else None
    return None


def is_throughput(v: dict) -> bool:
    return "requests_per_second" in v and "tokens_per_second" in v


def is_latency(v: dict) -> bool:
    return "avg_latency" in v and ("percentiles" in v or "latencies" in v)


def is_record(v: dict) -> bool:
    return is_serving(v) or is_throughput(v) or is_latency(v)


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


def iter_parse(source, source_name: str | None = None, **_ignored) -> Iterator[Item]:
    return run_json(source, source_name, FORMAT, "vLLM benchmark", is_record, convert)


def convert(rec: dict, item: Record, name: str) -> Iterator[Item]:
    if is_serving(rec):
        yield from _serving(rec, item, name)
    elif is_throughput(rec):
        yield from _throughput(rec, item, name)
    else:
        yield from _latency(rec, item, name)


def _ask(model: str) -> matching.Match:
    return matching.Match(None, None, "ask", "the file does not record the hardware")


def _m(fmt: str, metric: str, value: float, unit: str, model: str, workload: dict, conditions: dict,
       statistic: str = "mean", stddev: float | None = None,
       hint: tuple[str, int | None] | None = None) -> Measurement:
    if hint is not None:
        match = matching.match_hardware(hint[0], hint[1])
        return Measurement(format=fmt, metric=metric, value=value, unit=unit, hardware_text=hint[0],
                           accelerator_id=match.accelerator_id, accelerator_count=match.count,
                           match_confidence=match.confidence,
                           match_reason=f"from the file's --metadata ({match.reason})",
                           hardware_key="hw:" + hint[0], statistic=statistic, stddev=stddev,
                           workload=dict(workload), conditions=dict(conditions))
    ask = _ask(model)
    return Measurement(format=fmt, metric=metric, value=value, unit=unit, hardware_text="",
                       accelerator_id=None, accelerator_count=None, match_confidence=ask.confidence,
                       match_reason=ask.reason, hardware_key=f"sig:{fmt}:{model}", statistic=statistic,
                       stddev=stddev, workload=dict(workload), conditions=dict(conditions))


def _serving_rate(rec: dict, problems: list[Problem], name: str, place: str) -> tuple[float | None, bool]:
    """The request rate and whether it was unlimited (`inf`)."""
    raw_rate = rec.get("request_rate")
    rate = parse_number(raw_rate)
    unlimited = rate is None and (isinstance(raw_rate, str) and raw_rate.strip().lower() in ("inf", "infinity")
                                  or isinstance(raw_rate, float) and math.isinf(raw_rate))
    if isinstance(raw_rate, float) and not math.isfinite(raw_rate):
        problems.append(Problem(name, place, "'request_rate' is Infinity (no rate limit): stored as unlimited",
                                "info"))
    return rate, unlimited


def _serving_workload(rec: dict, num: Numbers, model: str, completed: int | None) -> dict:
    concurrency = parse_int(rec.get("max_concurrency"))
    in_tokens = num.get(rec, "total_input_tokens", positive=True)
    out_tokens = num.get(rec, "total_output_tokens", positive=True)
    workload: dict = {"model": model, **model_guess(model)}
    if completed:
        if in_tokens is not None:
            workload["prompt_tokens"] = round(in_tokens / completed)
        if out_tokens is not None:
            workload["gen_tokens"] = round(out_tokens / completed)
        workload["requests"] = completed
    if concurrency:
        workload["concurrency"] = concurrency
    # without a concurrency cap the number of requests in flight is not known (with no rate limit
    # either, at most num_prompts, but the server's batch limits decide): left unknown
    tokenizer = clean_text(rec.get("tokenizer_id") or "", 160)
    if tokenizer and tokenizer != model:
        workload["tokenizer"] = tokenizer
    return workload


def _serving_conditions(rec: dict, rate: float | None, unlimited: bool, failed: int) -> dict:
    conditions: dict = {}
    for key in ("backend", "endpoint_type", "label", "date", "burstiness", "run_number", "best_of",
                "use_beam_search", "num_prompts"):
        if key in rec and clean_scalar(rec[key]) is not None:
            conditions[key] = clean_scalar(rec[key])
    conditions["request_rate"] = rate
    if unlimited:
        conditions["request_rate_unlimited"] = True
    conditions["max_concurrency"] = parse_int(rec.get("max_concurrency"))
    conditions["failed_requests"] = failed
    for key, value in rec.items():
        if _SERVE_PARAM_RE.match(key) and clean_scalar(value) is not None:
            conditions[key] = clean_scalar(value)
    for key, value in metadata_of(rec).items():
        conditions["metadata." + key] = value
    return conditions


def _serving_measurements(rec: dict, num: Numbers, problems: list[Problem], name: str, place: str, model: str,
                          workload: dict, conditions: dict,
                          hint: tuple[str, int | None] | None) -> list[Measurement]:
    out: list[Measurement] = []

    def add(metric, key, unit, scale=1.0, statistic="mean", stddev_key=None):
        if key not in rec or rec[key] is None:
            return
        value = num.value(rec[key], key, positive=True)
        if value is None:
            return
        if value == 0:
            problems.append(Problem(name, f"{place}, key {key}", "0 means not measured here; not stored",
                                    "info"))
            return
        sd = num.value(rec[stddev_key], stddev_key, positive=True) if stddev_key and rec.get(stddev_key) is not None \
            else None
        out.append(_m(FORMAT, metric, value * scale, unit, model, workload, conditions, statistic,
                      sd * scale if sd is not None else None, hint))

    add("request_throughput", "request_throughput", "requests/s")
    goodput_key = "request_goodput" if "request_goodput" in rec else "request_goodput:"
    add("request_goodput", goodput_key, "requests/s")
    add("output_tokens_per_s", "output_throughput", "tokens/s")
    add("input_tokens_per_s", "input_throughput", "tokens/s")
    add("total_tokens_per_s", "total_token_throughput", "tokens/s")
    add("output_tokens_per_s", "max_output_tokens_per_s", "tokens/s", statistic="max")
    for key in rec:
        m = _STAT_RE.match(key)
        if not m:
            continue
        stat, what = m.groups()
        add(LATENCIES[what], key, "s", 1e-3, stat, f"std_{what}_ms" if stat == "mean" else None)
    return out


def _serving(rec: dict, item: Record, name: str) -> Iterator[Item]:
    problems: list[Problem] = []
    num = Numbers(name, item.place, problems)
    model = clean_text(rec.get("model_id") or rec.get("model") or "", 160)
    completed = parse_int(rec.get("completed"))
    failed = parse_int(rec.get("failed")) or 0
    prompts = parse_int(rec.get("num_prompts"))
    throughput = parse_number(rec.get("request_throughput"))
    has_latency = any(_STAT_RE.match(k) and parse_number(rec[k]) for k in rec)
    if completed == 0 or (completed is None and not throughput and not has_latency):
        total = failed or prompts or 0
        yield Problem(name, item.place, f"every request failed ({completed or 0} completed, {total} failed): the run "
                      "measured nothing, so nothing is stored (a zero here is not a speed)", "warning")
        return
    if failed:
        problems.append(Problem(name, item.place, f"{failed} of {failed + (completed or 0)} requests failed: the "
                                "figures cover the completed ones", "warning"))
    rate, unlimited = _serving_rate(rec, problems, name, item.place)
    workload = _serving_workload(rec, num, model, completed)
    conditions = _serving_conditions(rec, rate, unlimited, failed)
    hint = hardware_hint(metadata_of(rec))
    if any(k in rec for k in ("ttfts", "itls", "generated_texts")):
        n = len(rec.get("ttfts") or []) if isinstance(rec.get("ttfts"), list) else 0
        problems.append(Problem(name, item.place, f"per-request details ({n} requests: times, generated texts) are "
                                "not stored", "info"))
    out = _serving_measurements(rec, num, problems, name, item.place, model, workload, conditions, hint)
    if throughput is None and out:
        problems.append(Problem(name, item.place, "the record has latencies but no throughput keys: only the "
                                "latencies are stored", "info"))
    yield from problems
    if not out:
        yield Problem(name, item.place, "no throughput or latency figure in the record", "warning")
        return
    if hint is None:
        yield Problem(name, item.place, QUESTION, "question")
    else:
        yield Problem(name, item.place, f"hardware taken from the file's --metadata: {hint[0]}"
                      + (f" ×{hint[1]}" if hint[1] else ""), "info")
    yield from out


def _throughput(rec: dict, item: Record, name: str) -> Iterator[Item]:
    problems: list[Problem] = []
    num = Numbers(name, item.place, problems)
    requests = parse_int(rec.get("num_requests"))
    elapsed = num.get(rec, "elapsed_time", positive=True)
    workload: dict = {"requests": requests, "total_tokens": parse_int(rec.get("total_num_tokens"))}
    for key in ("total_input_tokens", "total_output_tokens"):
        if parse_int(rec.get(key)) is not None and num.value(rec[key], key, positive=True) is not None:
            workload[key] = parse_int(rec[key])  # a count: a negative one is named and left out
    if requests and workload.get("total_input_tokens") is not None:
        workload["prompt_tokens"] = round(workload["total_input_tokens"] / requests)
    if requests and workload.get("total_output_tokens") is not None:
        workload["gen_tokens"] = round(workload["total_output_tokens"] / requests)
    workload = {k: v for k, v in workload.items() if v is not None}
    conditions = {"elapsed_s": elapsed}
    out = []
    for metric, key, unit in (("request_throughput", "requests_per_second", "requests/s"),
                              ("total_tokens_per_s", "tokens_per_second", "tokens/s"),
                              ("output_tokens_per_s", "output_tokens_per_second", "tokens/s")):
        value = num.get(rec, key, positive=True)
        if value:
            out.append(_m(FORMAT_THROUGHPUT, metric, value, unit, "", workload, conditions))
    yield from problems
    if not out:
        yield Problem(name, item.place, "no throughput in the record (zero or missing)", "warning")
        return
    yield Problem(name, item.place, "'tokens_per_second' counts prompt and output tokens together (stored as "
                  "total_tokens_per_s). The model, input/output lengths and batch size are not in the file: say which "
                  "model ran, and " + QUESTION.split(": ", 1)[1], "question")
    yield from out


def _latency(rec: dict, item: Record, name: str) -> Iterator[Item]:
    problems: list[Problem] = []
    num = Numbers(name, item.place, problems)
    workload: dict = {}
    conditions: dict = {}
    out = []
    avg = num.get(rec, "avg_latency", positive=True)
    sd = num.get(rec, "std_latency", positive=True)
    if avg:
        out.append(_m(FORMAT_LATENCY, "batch_latency_s", avg, "s", "", workload, conditions, "mean", sd))
    pct = rec.get("percentiles")
    if isinstance(pct, dict):
        for key, raw in pct.items():
            label = str(key).strip()
            if not re.fullmatch(r"\d+(?:\.\d+)?", label):
                continue
            value = num.value(raw, f"percentiles.{label}", positive=True)
            if value:
                out.append(_m(FORMAT_LATENCY, "batch_latency_s", value, "s", "", workload, conditions, f"p{label}"))
    yield from problems
    if not out:
        yield Problem(name, item.place, "no latency in the record (zero or missing)", "warning")
        return
    yield Problem(name, item.place, "times are seconds per whole batch; the batch size, input and output lengths and "
                  "the model are command-line arguments, not in the file: say which, and "
                  + QUESTION.split(": ", 1)[1], "question")
    yield from out
