"""Which tool wrote a file, judged from its content (never its name), and parsing any file with
the right importer. Detection follows FORMATS.md section 20: first match wins."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpudesk.core.benchmarks import (
    genai_perf,
    gpudesk_schema,
    guidellm,
    lambda_dl,
    llama_bench,
    llama_bench_text,
    mlperf,
    nccl_tests,
    ollama,
    sglang,
    trtllm_bench,
    vllm,
)
from gpudesk.core.benchmarks._common import Item, any_key, has_keys
from gpudesk.core.benchmarks.reader import HEAD_CHARS, Record, Source, SourceError, iter_json, open_source
from gpudesk.core.benchmarks.types import ParseResult, Problem, collect

# format name -> (reader: a module or object with iter_parse, words for messages)
IMPORTERS = {
    "gpudesk": (gpudesk_schema, "gpudesk benchmark JSON"),
    "llama-bench": (llama_bench, "llama.cpp llama-bench"),
    "llama-bench-md": (llama_bench_text.MARKDOWN, "llama.cpp llama-bench Markdown table"),
    "llama-bench-csv": (llama_bench_text.CSV, "llama.cpp llama-bench CSV (-o csv)"),
    "trtllm-bench": (trtllm_bench, "TensorRT-LLM trtllm-bench report"),
    "trtllm-bench-text": (trtllm_bench.TEXT, "TensorRT-LLM trtllm-bench console summary"),
    "guidellm": (guidellm, "GuideLLM benchmarks JSON"),
    "genai-perf": (genai_perf, "NVIDIA GenAI-Perf / AIPerf export"),
    "ollama": (ollama, "Ollama --verbose output"),
    "lambda-dl-benchmark": (lambda_dl, "Lambda deeplearning-benchmark table"),
    "sglang": (sglang, "SGLang bench_serving"),
    "vllm": (vllm, "vLLM benchmark"),
    "mlperf-inference": (mlperf, "MLPerf Inference LoadGen log"),
    "mlperf-training": (mlperf, "MLPerf Training result log"),
    "mlperf-system": (mlperf, "MLPerf system description"),
    "mlperf-scaling": (mlperf, "MLPerf Training scaling.json"),
    "mlperf-result-summary": (mlperf, "MLPerf Inference result_summary.json (MLCommons endpoints)"),
    "nccl-tests": (nccl_tests, "nccl-tests output"),
}

# Recognised but not imported (yet): a clear message instead of "unknown format".
UNSUPPORTED = {
    "pytest-benchmark": "pytest-benchmark JSON",
    "llmperf": "Ray llmperf results",
    "optimum-benchmark": "Hugging Face optimum-benchmark report",
    "nvbandwidth": "nvbandwidth JSON",
    "nccl-tests-json": "nccl-tests JSON (-J)",
    "inference-benchmarker": "Hugging Face inference-benchmarker report",
    "torchbench": "TorchBench userbenchmark metrics",
    "gpu-burn": "gpu-burn output",
}

# what to do instead, said after "gpudesk does not import it yet"
UNSUPPORTED_ADVICE = {
    "pytest-benchmark": ": it times Python functions on the CPU and names no GPU; benchmark the model with a serving "
                        "or llama.cpp tool instead",
    "llmperf": ": re-run the same load with `vllm bench serve --save-result` or GenAI-Perf/AIPerf, whose files gpudesk "
               "reads",
    "optimum-benchmark": ": its latency and throughput figures can be entered in gpudesk's own JSON format",
    "nvbandwidth": ": it measures copy bandwidth, which gpudesk takes from the catalogue rather than from results",
    "nccl-tests-json": ": re-run without -J and import the text output (`all_reduce_perf ... > log.txt`)",
    "inference-benchmarker": ": re-run the same load with `vllm bench serve --save-result` or GenAI-Perf/AIPerf",
    "torchbench": ": its metrics name no model size or GPU; enter the figures in gpudesk's own JSON format",
    "gpu-burn": ": it is a stress test (Gflop/s of one kernel), not a model benchmark",
}

SUPPORTED_WORDS = ("llama-bench (JSON/JSONL, CSV, Markdown table), vLLM (serve --save-result, sweep, throughput, "
                   "latency), SGLang bench_serving, trtllm-bench (--report_json and console summary), GuideLLM JSON, "
                   "GenAI-Perf/AIPerf JSON exports, Ollama --verbose output, MLPerf Inference/Training logs, "
                   "result_summary.json and system JSON, nccl-tests text output, Lambda deeplearning-benchmark tables, and gpudesk's own JSON "
                   "(resources/schema/benchmark.schema.json)")


JSON_FULL_CAP = 64 << 20  # JSON files up to this size are parsed whole to decide their tool
MAX_DETECT_RECORDS = 20  # records of a JSON Lines/array file looked at before giving up
SKELETON_ITEMS = 3  # list elements kept in a record's skeleton (per-request arrays are cut to these)


@dataclass
class Detection:
    """Which tool a file was taken for (`format`: a key of IMPORTERS or UNSUPPORTED, None when
    unknown) and why (`reason`, a short sentence for the preview and the import report)."""

    format: str | None
    reason: str


def detect(text: str) -> str | None:
    """The format of a file from its text: a key of IMPORTERS or UNSUPPORTED, else None. A JSON text
    (up to JSON_FULL_CAP) is parsed whole, so keys anywhere in it count; other texts are judged
    from their start."""
    return detect_text(text).format


def detect_text(text: str) -> Detection:
    return detect_source(Source("<text>", text=text or ""))


def detect_source(src: Source) -> Detection:
    """Decide the tool from the content: JSON up to JSON_FULL_CAP is parsed whole (record by
    record, stopping at the first one that names its tool) and judged by its keys and structure;
    a larger JSON file by its start and end; any other text by its start."""
    head = src.head()
    if not head.strip():
        return Detection(None, "the file is empty or blank")
    first = head.lstrip("\ufeff \t\r\n")[:1]
    if first in ("{", "["):
        size = src.size()
        if size <= JSON_FULL_CAP:
            found = _detect_json(src)
            if found is not None:
                return found
        else:
            tail = _tail(src)
            fmt = _detect_head(head + "\n" + tail)
            if fmt is not None:
                return Detection(fmt, f"{describe(fmt)}: recognised from the keys at the start and end of a JSON "
                                 f"file over {JSON_FULL_CAP >> 20} MB")
    fmt = _detect_head(head[:HEAD_CHARS])
    if fmt is None and src.size() > HEAD_CHARS:
        # a long console log with the tool's output at its end (also one whose lines start with "[", as
        # `mpirun --tag-output` writes them, which the JSON reading above could not parse)
        fmt = _detect_head(_tail(src))
        if fmt is not None:
            return Detection(fmt, f"{describe(fmt)}: recognised from {_why_text(fmt)} at the end of the file")
    if fmt is None:
        return Detection(None, "no known tool's keys or table headers in the file")
    return Detection(fmt, f"{describe(fmt)}: recognised from {_why_text(fmt)} at the start of the file")


def _why_text(fmt: str) -> str:
    return {"nccl-tests": "its result table header (size, count, type ... busbw)",
            "mlperf-inference": "its LoadGen log lines", "mlperf-training": "its :::MLLOG lines",
            "ollama": "its 'eval count' and 'eval rate' lines", "gpu-burn": "its progress lines",
            "llama-bench-md": "its table header (| model | ... | test | t/s |)",
            "llama-bench-csv": "its CSV header (build_commit, ..., avg_ts)",
            "trtllm-bench-text": "its PERFORMANCE OVERVIEW block",
            "lambda-dl-benchmark": "its columns (name_gpu, num_gpu, watt, then one per model)"}.get(fmt, "its keys")


def _tail(src: Source, chars: int = HEAD_CHARS) -> str:
    if src.path is not None:
        with open(src.path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - chars * 4))
            return handle.read().decode("utf-8", errors="replace")[-chars:]
    return (src.text or "")[-chars:]


def skeleton(value: object, depth: int = 0) -> object:
    """A value with every list cut to its first SKELETON_ITEMS elements: all the keys of a record,
    at a size the text rules can read whatever the per-request arrays hold."""
    if depth > 8:
        return None
    if isinstance(value, dict):
        return {k: skeleton(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [skeleton(v, depth + 1) for v in value[:SKELETON_ITEMS]]
    return value


def _detect_json(src: Source) -> Detection | None:
    looked = 0
    plain = Source(src.name, path=src.path, text=src.text)  # no progress callbacks while detecting
    for item in iter_json(plain):
        if not isinstance(item, Record):
            continue
        looked += 1
        value = item.value
        if isinstance(value, dict):
            found = _detect_structure(value)
            if found is not None:
                return found
            text = json.dumps(skeleton(value), allow_nan=True, default=str)
            fmt = _detect_head(text)
            if fmt is not None:
                where = "the whole JSON document was read" if item.index == 0 and not item.in_array else \
                    f"record {item.index} of the file"
                return Detection(fmt, f"{describe(fmt)}: recognised from its keys ({where})")
        if looked >= MAX_DETECT_RECORDS:
            break
    return None


def _detect_structure(value: dict) -> Detection | None:
    """Tools told apart by structure rather than key names (GuideLLM shares requests_per_second and
    tokens_per_second with vLLM's throughput output, but nests them in its own objects)."""
    benchmarks = value.get("benchmarks")
    if isinstance(benchmarks, list) and benchmarks:
        for b in benchmarks[:5]:
            if not isinstance(b, dict):
                continue
            kind = str(b.get("type_") or "")
            metrics = b.get("metrics")
            nested = isinstance(metrics, dict) and any(
                isinstance(metrics.get(k), dict) for k in ("requests_per_second", "tokens_per_second",
                                                            "output_tokens_per_second", "request_latency"))
            if kind.endswith("benchmark") or nested or isinstance(b.get("run_stats"), dict):
                why = f"type_ '{kind}'" if kind else "requests_per_second/tokens_per_second as distributions"
                return Detection("guidellm", f"GuideLLM: its 'benchmarks' hold GuideLLM benchmark objects ({why})")
    return None


def _detect_head(head: str) -> str | None:
    if not head.strip():
        return None
    if gpudesk_schema.looks_like(head):
        return "gpudesk"
    if llama_bench.looks_like(head):
        return "llama-bench"
    if llama_bench_text.looks_like_csv(head):
        return "llama-bench-csv"
    if llama_bench_text.looks_like_markdown(head):
        return "llama-bench-md"
    if trtllm_bench.looks_like(head):
        return "trtllm-bench"
    if trtllm_bench.looks_like_text(head):
        return "trtllm-bench-text"
    if lambda_dl.looks_like(head):
        return "lambda-dl-benchmark"
    if sglang.looks_like(head):
        return "sglang"
    if vllm.looks_like(head):
        return "vllm"
    if mlperf.looks_like_result_summary(head):
        return "mlperf-result-summary"
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
    return _detect_not_imported(head)


def _detect_not_imported(head: str) -> str | None:
    """The formats gpudesk recognises but does not import (it names them), or None."""
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
    if ollama.looks_like(head):
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
    detection, items = iter_detected(source, source_name, system=system, max_bytes=max_bytes, src=src)
    return detection.format, items


def iter_detected(source, source_name: str | None = None, *, system: dict | None = None,
                  max_bytes: int | None = None, src: Source | None = None,
                  detection: Detection | None = None) -> tuple[Detection, Iterator[Item]]:
    """(what the file was taken for and why, stream of measurements/problems/context)."""
    if src is None:
        try:
            src = open_source(source, source_name, max_bytes)
        except SourceError as exc:
            return Detection(None, "the file could not be opened"), iter([exc.problem])
    if detection is None:
        try:
            detection = detect_source(src)
        except OSError as exc:
            return Detection(None, "the file could not be read"), iter(
                [Problem(src.name, "", f"the file cannot be read ({exc.strerror or exc})", "error")])
    fmt = detection.format
    if fmt is None:
        return detection, iter([Problem(src.name, "", "the format is not recognised from its content. gpudesk "
                                        "imports " + SUPPORTED_WORDS, "error")])
    if fmt in UNSUPPORTED:
        return detection, iter([Problem(src.name, "", f"this looks like {UNSUPPORTED[fmt]}, which gpudesk does not "
                                        "import yet" + UNSUPPORTED_ADVICE.get(fmt, "") + "; or convert it to gpudesk's "
                                        "own JSON format (resources/schema/benchmark.schema.json, example beside it)",
                                        "error")])
    module = IMPORTERS[fmt][0]
    if module is mlperf:
        if system is None and src.path is not None and fmt in mlperf.RESULT_FORMATS:
            system, where = mlperf.find_system_beside(src.path)
            if system is not None:
                return detection, _guarded(src.name, module.iter_parse(src, system=system),
                                           Problem(src.name, "", f"hardware taken from the system description "
                                                   f"{where} found beside it", "info"))
        return detection, _guarded(src.name, module.iter_parse(src, system=system))
    # an importer that hands its measurements over in batches of one setup (llama-bench) does so here
    return detection, _guarded(src.name, getattr(module, "iter_batches", module.iter_parse)(src))


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
    detection, items = iter_detected(path, source_name, system=system, max_bytes=max_bytes)
    result = collect(items, detection.format)
    result.format = detection.format
    result.detected_by = detection.reason
    return result
