"""How the Benchmarks view words what it shows: metric names, tools, values with their units,
signed errors. Shared by the view and its panels."""

from __future__ import annotations

import math

from gpudesk.core.format import duration, si

KIND_WORDS = {"train": "training", "infer_decode": "generation", "infer_prefill": "prompt processing"}
# what each stored metric is called on screen (its unit is shown with the value, never in the name)
METRIC_LABELS = {
    "prefill_tokens_per_s": "Prompt processing speed",
    "decode_tokens_per_s_per_user": "Generation speed per user",
    "decode_tokens_per_s_aggregate": "Generation speed, all users",
    "prompt_and_generation_tokens_per_s": "Prompt + generation speed (blended)",
    "output_tokens_per_s": "Output token throughput",
    "output_tokens_per_s_per_user": "Output tokens per user (with wait)",
    "output_tokens_per_s_per_gpu": "Output token throughput per GPU",
    "input_tokens_per_s": "Input token throughput",
    "total_tokens_per_s": "Total token throughput (in + out)",
    "request_throughput": "Request throughput",
    "request_goodput": "Request goodput",
    "samples_per_s": "Inference samples/queries",
    "train_samples_per_s": "Training throughput",
    "ttft_s": "TTFT",
    "tpot_s": "TPOT",
    "itl_s": "ITL",
    "e2e_latency_s": "Request latency",
    "latency_s": "Query latency",
    "batch_latency_s": "Batch latency",
    "time_to_train_s": "Time to train",
    "busbw_gbs": "Bus bandwidth",
    "algbw_gbs": "Algorithm bandwidth",
    "avg_busbw_gbs": "Average bus bandwidth",
    "collective_time_s": "Collective time",
}
STATISTIC_WORDS = {"mean": "mean", "median": "median", "p50": "median", "avg": "mean"}
ERROR_HEADER = "Estimate vs measured\n(+ = estimate higher)"
ERROR_TIP = ("(estimated − measured) ÷ measured, from the estimate's likely value: +20% means the estimate is 20% "
             "higher than the measurement, −20% that it is 20% lower")


def metric_label(metric: str, statistic: str = "") -> str:
    """'ttft_s', 'median' -> 'TTFT (median)'; an unknown metric keeps its stored name."""
    name = METRIC_LABELS.get(metric, metric.replace("_", " "))
    stat = STATISTIC_WORDS.get(statistic, statistic) if statistic else ""
    return f"{name} ({stat})" if stat else name


def tool_words(fmt: str | None) -> str:
    """What a file was taken for, in words ('llama.cpp llama-bench Markdown table')."""
    from gpudesk.core.benchmarks.detect import describe

    return describe(fmt) if fmt else "unknown"


def value_text(v: float | None, unit: str) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if unit == "s":
        if v < 1e-3:
            return f"{v * 1e6:.3g} µs"
        return duration(v)
    return f"{si(v, digits=3)} {unit}".replace("  ", " ")


def pct(e: float | None) -> str:
    return "" if e is None else f"{e * 100:+.0f}%"


SEVERITY = {"error": "error", "warning": "warning", "question": "accent_ink", "info": "muted"}  # theme names
