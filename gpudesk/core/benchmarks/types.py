"""Plain values of benchmark import: a measurement read from a result file, a problem found while
reading it, and what one importer returns. No database, no Qt.

Units are SI and named: durations in seconds (`*_s`), rates in tokens/s, requests/s or samples/s,
bandwidths in GB/s (10^9 bytes per second, as the tools print them).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

# Severity of a problem: "error" - the file (or the record) could not be read; "warning" - something
# was skipped, normalised or looks wrong; "question" - something only the user can answer;
# "info" - what gpudesk did, for the record.
SEVERITIES = ("error", "warning", "question", "info")

# Every metric gpudesk stores, with its unit and what it means. Importers only use these names.
METRICS: dict[str, tuple[str, str]] = {
    "prefill_tokens_per_s": ("tokens/s", "prompt processing speed (prompt tokens per second)"),
    "decode_tokens_per_s_per_user": ("tokens/s", "generation speed seen by one user (one sequence)"),
    "decode_tokens_per_s_aggregate": ("tokens/s", "generated tokens per second over all concurrent sequences"),
    "prompt_and_generation_tokens_per_s": ("tokens/s", "llama-bench pp+tg: (prompt + generated tokens) / total "
                                                       "time, a blend of prefill and decode - not generation speed"),
    "output_tokens_per_s": ("tokens/s", "generated (output) tokens per second of the whole run"),
    "output_tokens_per_s_per_user": ("tokens/s", "generated tokens per second per request, including its wait "
                                                 "for the first token"),
    "output_tokens_per_s_per_gpu": ("tokens/s", "generated tokens per second divided by the GPU count"),
    "input_tokens_per_s": ("tokens/s", "prompt tokens per second of the whole run"),
    "total_tokens_per_s": ("tokens/s", "prompt + generated tokens per second of the whole run"),
    "request_throughput": ("requests/s", "completed requests per second"),
    "request_goodput": ("requests/s", "requests per second that met the service-level objectives"),
    "samples_per_s": ("samples/s", "MLPerf inference samples (queries) per second"),
    "train_samples_per_s": ("samples/s", "training samples per second"),
    "ttft_s": ("s", "time to first token"),
    "tpot_s": ("s", "time per output token after the first"),
    "itl_s": ("s", "inter-token latency"),
    "e2e_latency_s": ("s", "end-to-end latency of one request"),
    "latency_s": ("s", "latency of one query (MLPerf)"),
    "batch_latency_s": ("s", "time to process one whole batch (vLLM latency benchmark)"),
    "time_to_train_s": ("s", "time to train to the target quality"),
    "busbw_gbs": ("GB/s", "collective bus bandwidth (nccl-tests busbw)"),
    "algbw_gbs": ("GB/s", "collective algorithm bandwidth (size / time)"),
    "avg_busbw_gbs": ("GB/s", "nccl-tests average bus bandwidth over all message sizes"),
    "collective_time_s": ("s", "time of one collective operation"),
}

# Metrics where a smaller value is better (durations).
LOWER_IS_BETTER = {m for m, (unit, _) in METRICS.items() if unit == "s"}

_TIME_UNITS = {
    "ns": 1e-9, "nanoseconds": 1e-9,
    "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "microseconds": 1e-6,
    "ms": 1e-3, "milliseconds": 1e-3,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "min": 60.0, "minutes": 60.0, "h": 3600.0, "hours": 3600.0,
}
_RATE_UNITS = {
    "tokens/s": "tokens/s", "tok/s": "tokens/s", "tokens/sec": "tokens/s", "t/s": "tokens/s",
    "requests/s": "requests/s", "req/s": "requests/s", "requests/sec": "requests/s", "per sec": "requests/s",
    "samples/s": "samples/s", "samples/sec": "samples/s", "queries/s": "samples/s",
    "gb/s": "GB/s",
}


def to_seconds(value: float, unit: str) -> float | None:
    """`value` in `unit` (ns, us/µs, ms, s, min, h) as seconds; None for an unknown unit."""
    key = unit.strip()
    factor = _TIME_UNITS.get(key, _TIME_UNITS.get(key.lower()))
    return None if factor is None else value * factor


def canonical_unit(unit: str) -> str | None:
    """The stored spelling of a rate unit (tokens/s, requests/s, samples/s, GB/s), else None."""
    return _RATE_UNITS.get(unit.strip().lower())


@dataclass(frozen=True)
class Problem:
    """Something found while reading a file, naming the file, the place in it and the problem."""

    file: str
    place: str  # "line 12", "record 3 (line 40)", "key request_rate", "byte 1024", "" for the whole file
    message: str
    severity: str = "warning"

    def __str__(self) -> str:
        where = f"{self.file}: {self.place}" if self.place else self.file
        return f"{where}: {self.message}"

    def to_json(self) -> dict:
        return {"file": self.file, "place": self.place, "message": self.message, "severity": self.severity}

    @classmethod
    def from_json(cls, data: dict) -> Problem:
        return cls(str(data.get("file", "")), str(data.get("place", "")), str(data.get("message", "")),
                   str(data.get("severity", "warning")))


@dataclass
class Measurement:
    """One measured figure of one run, in SI units, with the setup that produced it.

    `workload` describes what ran (model, parameters, quantisation, prompt/generated tokens, batch,
    concurrency, depth, ...); `conditions` how it ran (backend, build, flash attention, offload,
    tensor-parallel size, ...). Neither holds local paths, host names, environment variables or
    generated texts: importers keep only the keys they know, with paths cut to their base name.
    """

    format: str
    metric: str
    value: float
    unit: str
    source_file: str = ""
    record_index: int = 0
    hardware_text: str = ""  # as written in the file ("NVIDIA GeForce RTX 4090, NVIDIA GeForce RTX 4090")
    accelerator_id: str | None = None  # catalogue id, None when unknown or CPU-only
    accelerator_count: int | None = None
    match_confidence: str = "ask"  # exact | likely | ask
    match_reason: str = ""
    hardware_key: str = ""  # what a remembered hardware answer is keyed by
    cpu_only: bool = False
    statistic: str = "mean"  # mean | median | min | max | p99 | ...
    stddev: float | None = None  # same unit as value
    workload: dict = field(default_factory=dict)
    conditions: dict = field(default_factory=dict)
    content_hash: str = ""
    id: int | None = None  # database id, once stored
    import_id: int | None = None

    def to_json(self) -> dict:
        out = asdict(self)
        return {k: _json_safe(v) for k, v in out.items()}

    @classmethod
    def from_json(cls, data: dict) -> Measurement:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)

    @property
    def label(self) -> str:
        """A short description for lists: 'decode 118.9 tokens/s · qwen2 7B Q4_K - Medium · tg128'."""
        bits = [f"{self.metric} {self.value:.4g} {self.unit}"]
        model = self.workload.get("model_type") or self.workload.get("model")
        if model:
            bits.append(str(model))
        if self.workload.get("test"):
            bits.append(str(self.workload["test"]))
        return " · ".join(bits)


# The shared part of a run of measurements (everything but the figure itself), and the columns of
# one measurement in a Batch: what the store writes per row.
ROW_FIELDS = ("content_hash", "metric", "statistic", "value", "unit", "stddev", "record_index", "workload_json",
              "conditions_json")


@dataclass
class Setup:
    """What the measurements of one setup share: how the hardware was named and matched, and the
    workload and conditions common to all of them (a Batch's rows add their own on top)."""

    format: str
    hardware_text: str = ""
    accelerator_id: str | None = None
    accelerator_count: int | None = None
    match_confidence: str = "ask"
    match_reason: str = ""
    hardware_key: str = ""
    cpu_only: bool = False
    workload: dict = field(default_factory=dict)
    conditions: dict = field(default_factory=dict)


@dataclass
class Batch:
    """Measurements of one setup, one tuple per measurement in ROW_FIELDS order; `workload_json`
    and `conditions_json` are the JSON texts of what a row adds to the setup's workload and
    conditions. Importers of files with many records of a few setups (llama-bench) hand these to
    the store, which writes the setup once and the rows in bulk; `measurements()` gives the same
    figures as Measurement objects for everything else."""

    setup: Setup
    rows: list[tuple]
    source_file: str = ""

    def measurements(self) -> Iterator[Measurement]:
        s = self.setup
        loads = json.loads
        for content, metric, statistic, value, unit, stddev, index, workload, conditions in self.rows:
            yield Measurement(
                format=s.format, metric=metric, value=value, unit=unit, source_file=self.source_file,
                record_index=index, hardware_text=s.hardware_text, accelerator_id=s.accelerator_id,
                accelerator_count=s.accelerator_count, match_confidence=s.match_confidence,
                match_reason=s.match_reason, hardware_key=s.hardware_key, cpu_only=s.cpu_only, statistic=statistic,
                stddev=stddev, workload={**s.workload, **loads(workload)},
                conditions={**s.conditions, **loads(conditions)}, content_hash=content)


def expand(items: Iterable) -> Iterator:
    """An importer's stream with every Batch given as its Measurements (the order kept)."""
    for item in items:
        if isinstance(item, Batch):
            yield from item.measurements()
        else:
            yield item


@dataclass
class ParseResult:
    measurements: list[Measurement] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    format: str | None = None
    context: dict = field(default_factory=dict)  # e.g. an MLPerf system description
    detected_by: str = ""  # which tool the file was taken for, and why

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


def collect(items: Iterable, format_name: str | None = None, max_problems: int = 1000) -> ParseResult:
    """A ParseResult from an importer's stream of measurements, problems and context dicts."""
    result = ParseResult(format=format_name)
    extra = 0
    last_file = ""
    for item in expand(items):
        if isinstance(item, Measurement):
            result.measurements.append(item)
        elif isinstance(item, Problem):
            last_file = item.file
            if len(result.problems) < max_problems:
                result.problems.append(item)
            else:
                extra += 1
        elif isinstance(item, dict):
            result.context.update(item)
    if extra:
        result.problems.append(Problem(last_file, "", f"{extra} further problems not listed", "warning"))
    return result


# ----------------------------------------------------------------------------------- helpers
class Numbers:
    """Reads numbers out of records: accepts ints, floats and numeric strings ("4", "46068 MiB",
    "inf"); turns NaN and infinities into None and says so."""

    def __init__(self, file: str, place: str, sink: list[Problem]):
        self.file = file
        self.place = place
        self.sink = sink

    def get(self, record: dict, key: str, *, required: bool = False, positive: bool = False,
            what: str = "") -> float | None:
        if key not in record or record[key] is None:
            if required:
                self.sink.append(Problem(self.file, self.place, f"'{key}' is missing{what}", "warning"))
            return None
        return self.value(record[key], key, positive=positive)

    def value(self, raw: Any, key: str, *, positive: bool = False) -> float | None:
        number = parse_number(raw)
        if number is None:
            if isinstance(raw, float) or (isinstance(raw, str) and raw.strip().lower().lstrip("+-") in
                                          ("inf", "infinity", "nan")):
                self.sink.append(Problem(self.file, self.place, f"'{key}' is {_show(raw)}, not a finite number: "
                                         "stored as unknown", "warning"))
            else:
                self.sink.append(Problem(self.file, self.place, f"'{key}' is {_show(raw)}, not a number: ignored",
                                         "warning"))
            return None
        if positive and number < 0:
            self.sink.append(Problem(self.file, self.place, f"'{key}' is negative ({number:g}): ignored", "warning"))
            return None
        return number


_NUMBER_RE = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/%µμ]*)\s*$")


def parse_number(raw: Any) -> float | None:
    """A finite float from an int, float or numeric string (a trailing unit word is allowed);
    None for booleans, NaN, infinities and anything else."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, int):
        try:
            value = float(raw)
        except OverflowError:
            return None
        return value
    if isinstance(raw, float):
        return raw if math.isfinite(raw) else None
    if isinstance(raw, str):
        m = _NUMBER_RE.match(raw)
        if not m:
            return None
        try:
            value = float(m.group(1))
        except (ValueError, OverflowError):
            return None
        return value if math.isfinite(value) else None
    return None


def parse_int(raw: Any) -> int | None:
    value = parse_number(raw)
    if value is None or abs(value) > 2**62:
        return None
    return int(value) if float(value).is_integer() else None


def _show(raw: Any) -> str:
    text = json.dumps(raw, allow_nan=True, default=str) if not isinstance(raw, str) else repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."


def basename(value: Any) -> str:
    """A path's last component, for either separator: local paths are never stored whole."""
    text = str(value or "").strip()
    if not text:
        return ""
    text = text.replace("\\", "/").rstrip("/")
    return text.rsplit("/", 1)[-1]


_PATHLIKE = re.compile(r"(^|[\s=:'\"])(~|/|[A-Za-z]:\\|\\\\)[^\s]*[/\\]")


def clean_text(value: Any, limit: int = 200) -> str:
    """A short, single-line string with any local path cut to its base name."""
    text = value if isinstance(value, str) else str(value if value is not None else "")
    if len(text) > 512:  # long texts are cut first, and never cached
        return _clean_text.__wrapped__(text[: limit * 2 + 64], limit)
    return _clean_text(text, limit)


@lru_cache(maxsize=8192)
def _clean_text(value: str, limit: int) -> str:
    text = " ".join(value.split())
    if _PATHLIKE.search(text):
        text = " ".join(basename(part) if ("/" in part or "\\" in part) else part for part in text.split(" "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_scalar(value: Any) -> Any:
    """A value fit for `conditions`/`workload`: numbers stay (non-finite become None), strings are
    cleaned, anything else is dropped (None)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None  # beyond any database integer (and float)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return clean_text(value)
    return None


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """A stable text of a JSON-like value (NaN and infinities spelled as Python's json does)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str, allow_nan=True)


def content_hash(*parts: Any) -> str:
    return hashlib.sha256(canonical(list(parts)).encode()).hexdigest()


def finish(m: Measurement) -> Measurement:
    """Fill the content hash (what deduplication compares) unless the importer set its own: the
    format, metric, statistic, value, unit, workload, conditions and hardware, never the file name."""
    if not m.content_hash:
        m.content_hash = content_hash(m.format, m.metric, m.statistic, repr(float(m.value)), m.unit, m.workload,
                                      m.conditions, m.hardware_text)
    return m


def source_label(source: Any, source_name: str | None) -> str:
    if source_name:
        return basename(source_name)
    if isinstance(source, os.PathLike):
        return basename(os.fspath(source))
    if isinstance(source, str) and "\n" not in source and not source.lstrip().startswith(("{", "[")):
        return basename(source)
    return "<text>"


def iter_only(items: Iterable, kind: type) -> Iterator:
    return (i for i in items if isinstance(i, kind))
