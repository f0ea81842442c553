"""Which tool wrote a file, judged from its content (never its name), and parsing any file with
the right importer. Detection follows FORMATS.md section 20: first match wins."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpudesk.core.benchmarks import (
    gpudesk_schema,
    llama_bench,
    mlperf,
    nccl_tests,
    sglang,
    trtllm_bench,
    vllm,
)
from gpudesk.core.benchmarks._common import Item, any_key, has_keys
from gpudesk.core.benchmarks.reader import HEAD_CHARS, Source, SourceError, open_source
from gpudesk.core.benchmarks.types import ParseResult, Problem, collect

# format name -> (module, words for messages)
IMPORTERS = {
    "gpudesk": (gpudesk_schema, "gpudesk benchmark JSON"),
    "llama-bench": (llama_bench, "llama.cpp llama-bench"),
    "trtllm-bench": (trtllm_bench, "TensorRT-LLM trtllm-bench report"),
    "sglang": (sglang, "SGLang bench_serving"),
    "vllm": (vllm, "vLLM benchmark"),
    "mlperf-inference": (mlperf, "MLPerf Inference LoadGen log"),
    "mlperf-training": (mlperf, "MLPerf Training result log"),
    "mlperf-system": (mlperf, "MLPerf system description"),
    "mlperf-scaling": (mlperf, "MLPerf Training scaling.json"),
    "nccl-tests": (nccl_tests, "nccl-tests output"),
}

# Recognised but not imported (yet): a clear message instead of "unknown format".
UNSUPPORTED = {
    "guidellm": "GuideLLM benchmarks JSON",
    "genai-perf": "NVIDIA GenAI-Perf / AIPerf export",
    "pytest-benchmark": "pytest-benchmark JSON",
    "llmperf": "Ray llmperf results",
    "optimum-benchmark": "Hugging Face optimum-benchmark report",
    "nvbandwidth": "nvbandwidth JSON",
    "nccl-tests-json": "nccl-tests JSON (-J)",
    "inference-benchmarker": "Hugging Face inference-benchmarker report",
    "torchbench": "TorchBench userbenchmark metrics",
    "ollama": "Ollama --verbose output",
    "gpu-burn": "gpu-burn output",
}

SUPPORTED_WORDS = ("llama-bench (JSON/JSONL), vLLM (serve --save-result, sweep, throughput, latency), SGLang "
                   "bench_serving, trtllm-bench --report_json, MLPerf Inference/Training logs and system JSON, "
                   "nccl-tests text output, and gpudesk's own JSON (resources/schema/benchmark.schema.json)")


def detect(text: str) -> str | None:
    """The format of a file from (the start of) its text: a key of IMPORTERS or UNSUPPORTED, else None."""
    head = text[:HEAD_CHARS] if text else ""
    if not head.strip():
        return None
    if gpudesk_schema.looks_like(head):
        return "gpudesk"
    if llama_bench.looks_like(head):
        return "llama-bench"
    if trtllm_bench.looks_like(head):
        return "trtllm-bench"
    if sglang.looks_like(head):
        return "sglang"
    if vllm.looks_like(head):
        return "vllm"
    if mlperf.looks_like_system(head):
        return "mlperf-system"
    if mlperf.looks_like_summary(head) or mlperf.looks_like_detail(head):
        return "mlperf-inference"
    if mlperf.looks_like_training(head):
        return "mlperf-training"
    if has_keys(head, "nccl_version", "results") or has_keys(head, "busBw", "algBw"):
        return "nccl-tests-json"
    if nccl_tests.looks_like(head):
        return "nccl-tests"
    if mlperf.looks_like_scaling(head):
        return "mlperf-scaling"
    # recognised, not imported
    if re.search(r'"type_"\s*:\s*"generative_benchmark"', head) or (has_keys(head, "benchmarks") and
                                                                     "guidellm" in head.lower()):
        return "guidellm"
    if has_keys(head, "input_config") and any_key(head, "time_to_first_token", "request_throughput",
                                                   "request_latency"):
        return "genai-perf"
    if has_keys(head, "machine_info", "benchmarks"):
        return "pytest-benchmark"
    if any_key(head, "results_ttft_s_mean", "results_ttft_s_quantiles_p50") or (
            has_keys(head, "ttft_s", "end_to_end_latency_s")):
        return "llmperf"
    if has_keys(head, "nvbandwidth") and has_keys(head, "testcases"):
        return "nvbandwidth"
    if has_keys(head, "token_throughput_secs"):
        return "inference-benchmarker"
    if re.search(r'"latency"\s*:\s*\{\s*"unit"\s*:\s*"s"', head) or (has_keys(head, "config", "report") and
                                                                      "optimum" in head.lower()):
        return "optimum-benchmark"
    if has_keys(head, "environ", "metrics") and "pytorch_version" in head:
        return "torchbench"
    if "eval rate:" in head and "tokens/s" in head:
        return "ollama"
    if "proc'd:" in head and "Gflop/s" in head:
        return "gpu-burn"
    return None


def describe(fmt: str | None) -> str:
    if fmt in IMPORTERS:
        return IMPORTERS[fmt][1]
    if fmt in UNSUPPORTED:
        return UNSUPPORTED[fmt]
    return "an unknown format"


def iter_any(source, source_name: str | None = None, *, system: dict | None = None,
             max_bytes: int | None = None, src: Source | None = None) -> tuple[str | None, Iterator[Item]]:
    """(format, stream of measurements/problems/context) for any supported file."""
    if src is None:
        try:
            src = open_source(source, source_name, max_bytes)
        except SourceError as exc:
            return None, iter([exc.problem])
    try:
        head = src.head()
    except OSError as exc:
        return None, iter([Problem(src.name, "", f"the file cannot be read ({exc.strerror or exc})", "error")])
    fmt = detect(head)
    if fmt is None:
        return None, iter([Problem(src.name, "", "the format is not recognised from its content. gpudesk imports "
                                   + SUPPORTED_WORDS, "error")])
    if fmt in UNSUPPORTED:
        return fmt, iter([Problem(src.name, "", f"this looks like {UNSUPPORTED[fmt]}, which gpudesk does not import "
                                  "yet; convert it to gpudesk's own JSON format (resources/schema/"
                                  "benchmark.schema.json, example beside it)", "error")])
    module = IMPORTERS[fmt][0]
    if module is mlperf:
        if system is None and src.path is not None and fmt in ("mlperf-inference", "mlperf-training"):
            system, where = mlperf.find_system_beside(src.path)
            if system is not None:
                return fmt, _guarded(src.name, module.iter_parse(src, system=system),
                                     Problem(src.name, "", f"hardware taken from the system description {where} "
                                             "found beside it", "info"))
        return fmt, _guarded(src.name, module.iter_parse(src, system=system))
    return fmt, _guarded(src.name, module.iter_parse(src))


INTERNAL = "gpudesk could not read this file (an error in gpudesk"


def _guarded(name: str, items: Iterator[Item], first: Item | None = None) -> Iterator[Item]:
    """The importer's stream, with an unexpected exception turned into an error naming the file
    (the fuzz tests check that it never happens)."""
    if first is not None:
        yield first
    try:
        yield from items
    except (OSError, UnicodeError) as exc:
        yield Problem(name, "", f"the file could not be read to the end ({exc})", "error")
    except Exception as exc:  # noqa: BLE001 - reported, never raised into the caller
        yield Problem(name, "", f"{INTERNAL}: {type(exc).__name__}: {exc}); please report it", "error")


def parse_any(path, source_name: str | None = None, *, system: dict | None = None,
              max_bytes: int | None = None) -> ParseResult:
    """Parse a result file of any supported format, detected from its content."""
    fmt, items = iter_any(path, source_name, system=system, max_bytes=max_bytes)
    result = collect(items, fmt)
    result.format = fmt
    return result

