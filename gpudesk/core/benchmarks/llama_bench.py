"""llama.cpp `llama-bench -o json|jsonl` results (and the old schema of 2024 builds and the
ik_llama.cpp fork, with per-backend booleans instead of `backends`).

One record is one test: prompt processing ("pp512": n_prompt > 0, n_gen = 0) -> prefill tokens/s;
generation ("tg128": n_prompt = 0, n_gen > 0) -> decode tokens/s of one user; combined "-pg"
tests ("pp512+tg128") -> a blended rate kept under its own metric, never as generation speed.
`n_depth` (tokens already in the KV cache) is kept as a condition of the workload.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache, partial
from hashlib import sha256
from operator import itemgetter

from gpudesk.core.benchmarks import matching
from gpudesk.core.benchmarks._common import Item, has_keys, run_json_rows
from gpudesk.core.benchmarks.reader import Record
from gpudesk.core.benchmarks.types import (
    Batch,
    Numbers,
    ParseResult,
    Problem,
    Setup,
    basename,
    clean_scalar,
    clean_text,
    collect,
    content_hash,
    expand,
    parse_int,
)

FORMAT = "llama-bench"
OLD_BACKEND_FLAGS = ("cuda", "vulkan", "kompute", "metal", "sycl", "gpu_blas", "blas")
_BACKEND_NAMES = {"cuda": "CUDA", "vulkan": "Vulkan", "kompute": "Kompute", "metal": "Metal", "sycl": "SYCL",
                  "gpu_blas": "GPU BLAS", "blas": "BLAS"}
_CPU_BACKENDS = {"cpu", "blas", "accelerate", "openblas", "rpc", "amx", ""}
# architectures whose model_type does not say "MoE" although they are mixtures of experts
_MOE_ARCHS = ("deepseek2", "deepseek3", "gpt-oss", "mixtral", "dbrx", "grok", "olmoe", "arctic", "jamba", "llama4",
              "glm4moe", "ernie4_5-moe", "hunyuan-moe", "granitemoe", "minimax")
_QUANT_RE = re.compile(
    r"\b(all F32|F32|F16|BF16|MXFP4|NVFP4|TQ\d_\d|IQ\d_[A-Z0-9]+(?:_[A-Z0-9]+)*|Q\d_[A-Z0-9]+(?:_[A-Z0-9]+)*|Q\d_\d)\b"
    r"(?:\s*-\s*(Small|Medium|Large|Extra Small))?")
_SUFFIX = {"Small": "_S", "Medium": "_M", "Large": "_L", "Extra Small": "_XS"}
_CONDITION_KEYS = ("n_threads", "cpu_mask", "cpu_strict", "poll", "type_k", "type_v", "n_gpu_layers", "n_cpu_moe",
                   "split_mode", "main_gpu", "no_kv_offload", "flash_attn", "devices", "tensor_split",
                   "tensor_buft_overrides", "use_mmap", "load_mode", "use_direct_io", "embeddings", "no_op_offload",
                   "no_host", "mla_attn", "fused_moe", "repack", "rtr", "ser", "attn_max_batch", "f16_kv")


def looks_like(head: str) -> bool:
    return has_keys(head, "build_commit", "model_type") and has_keys(head, "n_prompt") and \
        (has_keys(head, "avg_ts") or has_keys(head, "samples_ts") or has_keys(head, "n_gen"))


def is_record(value: dict) -> bool:
    return "model_type" in value and ("avg_ts" in value or "samples_ts" in value) and \
        ("n_prompt" in value or "n_gen" in value)


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


def iter_parse(source, source_name: str | None = None, **_ignored) -> Iterator[Item]:
    """Measurements and problems, record by record."""
    return expand(iter_batches(source, source_name))


def iter_batches(source, source_name: str | None = None, **_ignored) -> Iterator[Item]:
    """The same as Batches of one setup's measurements (what the store writes in bulk) and problems."""
    return run_json_rows(source, source_name, "llama-bench", is_record, partial(to_row, cache={}))


@lru_cache(maxsize=1024)
def quantisation(model_type: str) -> str | None:
    """'qwen2 7B Q4_K - Medium' -> 'Q4_K_M'; 'gpt-oss 20B MXFP4 MoE' -> 'MXFP4'; 'llama 7B F16' -> 'F16'."""
    m = _QUANT_RE.search(model_type or "")
    if not m:
        return None
    q = m.group(1).replace("all ", "")
    return q + _SUFFIX.get(m.group(2) or "", "")


def precision_of(quant: str | None) -> str | None:
    """The estimator's precision for a GGUF quantisation: F16/BF16/F32 as such, Q8_0 the 'q8' class,
    every 4-6-bit k-/i-quant and MXFP4 the 'q4' class (block formats dequantised on the fly, 16-bit
    math); None when unknown."""
    if not quant:
        return None
    q = quant.upper()
    if q in ("F32",):
        return "fp32"
    if q in ("F16",):
        return "fp16"
    if q in ("BF16",):
        return "bf16"
    if q.startswith("Q8"):
        return "q8"
    if q in ("MXFP4", "NVFP4") or re.match(r"^(I?Q[1-6]|TQ)", q):
        return "q4"
    return None


@lru_cache(maxsize=1024)
def _moe(model_type: str) -> tuple[bool, float | None]:
    text = model_type or ""
    m = re.search(r"\b\d+(?:\.\d+)?B\.A(\d+(?:\.\d+)?)B\b", text)
    if m:
        return True, float(m.group(1)) * 1e9
    low = text.lower()
    arch = low.split(" ", 1)[0]
    if "moe" in low or re.search(r"\b\d+x\d+(?:\.\d+)?b\b", low) or arch.startswith(_MOE_ARCHS):
        return True, None
    return False, None


def _backends(rec: dict) -> str:
    if isinstance(rec.get("backends"), str) and rec["backends"].strip():
        return clean_text(rec["backends"], 60)
    names = [_BACKEND_NAMES[k] for k in OLD_BACKEND_FLAGS if rec.get(k) is True]
    rpc = rec.get("rpc")
    if rpc not in (None, False, "0", 0, "", "false"):
        names.append("RPC")
    return ",".join(names) or "CPU"


def _is_cpu_backend(backends: str) -> bool:
    parts = {p.strip().lower() for p in re.split(r"[,+ ]", backends)}
    return parts <= _CPU_BACKENDS


# Fields that change from test to test; everything else describes the setup and repeats in every
# record of a file, so it is worked out once per distinct setup (see _setup).
VARIABLE_KEYS = frozenset(("n_prompt", "n_gen", "n_depth", "test", "test_time", "avg_ns", "stddev_ns", "avg_ts",
                           "stddev_ts", "samples_ns", "samples_ts"))
_SETUP_CACHE_SIZE = 256
_FLOAT_MAX = sys.float_info.max
_EXACT_INT = 2**53  # ints up to this size are floats without loss: parse_int returns them unchanged
_PLAIN = re.compile(r"[\w:.+\-]+")  # no space, no path separator: a text clean_text leaves as it is
# the ASCII characters _PLAIN takes: a text is plain when deleting them from its UTF-8 leaves nothing
# (a text with other characters, which may be plain too, is checked with _PLAIN)
_PLAIN_ASCII = bytes(c for c in range(128) if _PLAIN.fullmatch(chr(c)))


@dataclass
class _Setup:
    workload: dict
    conditions: dict
    hardware_text: str
    key: str
    match: matching.Match
    problems: list[Problem]
    digest: str  # hash of the setup, part of every measurement's content hash
    shared: Setup  # what the store writes once for all the setup's measurements


def _setup(rec: dict, name: str, item: Record, cache: dict) -> _Setup:
    """The record's setup, from `cache` when an earlier record of the file had the same one.

    The cache holds four kinds of entries: for each key order of the records (a tuple of key
    names; the records of one file list their keys in the same order), the getter of its setup
    fields; for each setup, keyed by (key order, setup values, their types), what _new_setup made
    of it; under None the last of these, which the next record most often shares; and under
    "shared", when every setup field of that record was among the members the reader shared
    between records (Record.shared: the very same values), those members, the key order and the
    setup, which a record sharing the same members in the same key order has without comparing
    values. The types are part of the key because True == 1 == 1.0 in Python but not in the
    stored JSON."""
    layout = tuple(rec)
    shared = item.shared
    if shared is not None:
        same = cache.get("shared")
        if same is not None and same[0] is shared and same[1] == layout:
            return same[2]
    last = cache.get(None)
    if last is not None and layout == last[0]:
        values = last[1](rec)
        types = tuple(map(type, values))
        if values == last[2] and types == last[3]:
            _remember_shared(cache, shared, layout, last[4])
            return last[4]
    getter = cache.get(layout)
    if getter is None:
        getter = _setup_getter(layout)
        _cache_put(cache, layout, getter)
    values = getter(rec)
    types = tuple(map(type, values))
    cache_key = (layout, values, types)
    try:
        hit = cache.get(cache_key)
    except TypeError:  # a list or object among the setup fields: no caching
        return _new_setup(rec, name, item.place)
    if hit is None:
        hit = _new_setup(rec, name, item.place)
        _cache_put(cache, cache_key, hit)
    cache[None] = (layout, getter, values, types, hit)
    _remember_shared(cache, shared, layout, hit)
    return hit


def _remember_shared(cache: dict, shared: dict | None, layout: tuple, setup: _Setup) -> None:
    """Remember `setup` for the records that share `shared` in the same key order, when all its
    setup fields are among the shared members."""
    if shared is None:
        return
    same = cache.get("shared")
    if same is not None and same[0] is shared and same[1] == layout:
        return
    if all(k in shared for k in layout if k not in VARIABLE_KEYS):
        cache["shared"] = (shared, layout, setup)


def _setup_getter(layout: tuple) -> Callable[[dict], tuple]:
    """A function returning the values of a record's setup fields (all but VARIABLE_KEYS), as a tuple."""
    keys = tuple(k for k in layout if k not in VARIABLE_KEYS)
    if len(keys) >= 2:
        return itemgetter(*keys)
    return lambda rec: tuple(rec[k] for k in keys)


def _cache_put(cache: dict, key: tuple, value) -> None:
    if len(cache) >= _SETUP_CACHE_SIZE:
        cache.clear()
    cache[key] = value


def _new_setup(rec: dict, name: str, place: str) -> _Setup:
    """A setup not seen before in the file (built once per setup, not once per record)."""
    problems: list[Problem] = []
    workload = _setup_workload(rec, Numbers(name, place, problems))
    backends = _backends(rec)
    cpu_info = clean_text(rec.get("cpu_info") or "", 200)
    conditions = _setup_conditions(rec, backends, cpu_info)
    hardware_text, key, match = _setup_hardware(rec, backends, cpu_info, conditions, problems, name, place)
    shared = Setup(FORMAT, hardware_text, match.accelerator_id, match.count, match.confidence, match.reason, key,
                   match.cpu_only, workload, conditions)
    return _Setup(workload, conditions, hardware_text, key, match, problems,
                  content_hash(FORMAT, workload, conditions, hardware_text), shared)


def _setup_workload(rec: dict, num: Numbers) -> dict:
    model_type = clean_text(rec.get("model_type") or "", 120)
    quant = quantisation(model_type)
    moe, active = _moe(model_type)
    model_file = basename(rec.get("model_filename"))
    workload = {
        "model": re.sub(r"\.gguf$", "", model_file, flags=re.I) or model_type,
        "model_type": model_type,
        "model_file": model_file,
        "params": num.get(rec, "model_n_params", positive=True),
        "weights_bytes": num.get(rec, "model_size", positive=True),
        "quantisation": quant,
        "precision": precision_of(quant),
        "batch": parse_int(rec.get("n_batch")),
        "ubatch": parse_int(rec.get("n_ubatch")),
        "concurrency": 1,
    }
    if moe:
        workload["moe"] = True
        if active:
            workload["active_params"] = active
    return {k: v for k, v in workload.items() if v is not None}


def _setup_conditions(rec: dict, backends: str, cpu_info: str) -> dict:
    conditions: dict = {"backend": backends}
    build = rec.get("build_commit")
    if build is not None:
        conditions["build"] = clean_text(build, 40) + (f" ({clean_text(rec['build_number'], 20)})"
                                                       if rec.get("build_number") is not None else "")
    if cpu_info:
        conditions["cpu"] = cpu_info
    for k in _CONDITION_KEYS:
        if k in rec:
            value = clean_scalar(rec[k])
            if value is not None or rec[k] is None:
                conditions[k] = value
    return conditions


def _setup_hardware(rec: dict, backends: str, cpu_info: str, conditions: dict, problems: list[Problem], name: str,
                    place: str) -> tuple[str, str, matching.Match]:
    """(hardware text, hardware key, match): a CPU-only run, the GPU(s) named, or a question."""
    gpu_info = clean_text(rec.get("gpu_info") or "", 300)
    ngl = parse_int(rec.get("n_gpu_layers"))
    if (not gpu_info and _is_cpu_backend(backends)) or ngl == 0:
        match = matching.cpu_only(cpu_info)
        if gpu_info and ngl == 0:
            match = matching.Match(None, 0, "exact", f"no layers offloaded (n_gpu_layers = 0): a CPU run on "
                                   f"{cpu_info or 'the CPU'} although {gpu_info} is present; kept, flagged",
                                   cpu_only=True)
        problems.append(Problem(name, place, f"a CPU-only run ({cpu_info or 'CPU not named'}): kept, flagged, not "
                                "matched to an accelerator", "info"))
        return cpu_info, "cpu:" + cpu_info, match
    count = None
    devices = rec.get("devices")
    if isinstance(devices, str) and devices.strip() and devices.strip().lower() not in ("auto", "none"):
        count = len([d for d in re.split(r"[/,]", devices) if d.strip()])
    elif str(rec.get("split_mode", "")).lower() == "none" and gpu_info.count(",") >= 1:
        count = 1
    match = matching.match_hardware(gpu_info, count)
    key = "hw:" + gpu_info
    if not gpu_info:
        match = matching.Match(None, None, "ask", f"the record names no GPU (backend {backends}): which "
                               "accelerator ran it?")
        key = "sig:llama-bench:" + backends + ":" + cpu_info
    n_cpu_moe = parse_int(rec.get("n_cpu_moe")) or 0
    if n_cpu_moe > 0:
        problems.append(Problem(name, place, f"{n_cpu_moe} expert layer(s) kept on the CPU (n_cpu_moe): a hybrid "
                                "CPU+GPU run", "info"))
        conditions["hybrid"] = True
    return gpu_info, key, match


def _positive(rec: dict, key: str, name: str, item: Record, problems: list[Problem]) -> float | None:
    """Numbers.get(rec, key, positive=True), with a float read without building a Numbers."""
    raw = rec.get(key)
    if type(raw) is float and 0.0 <= raw <= _FLOAT_MAX:  # finite and not negative (NaN fails both)
        return raw
    if raw is None:
        return None
    return Numbers(name, item.place, problems).value(raw, key, positive=True)


def _count(raw) -> int | None:
    """parse_int(raw), 0 for None; an int that a float holds exactly is returned as it is."""
    if type(raw) is int and -_EXACT_INT <= raw <= _EXACT_INT:
        return raw
    return 0 if raw is None else parse_int(raw)


def convert(rec: dict, item: Record, name: str, cache: dict | None = None) -> Iterator[Item]:
    """The record's problems and its measurement (for readers that go record by record: the
    Markdown and CSV tables); `cache` carries the setups between the records of one file."""
    setup, problems, row = to_row(rec, item, name, {} if cache is None else cache)
    yield from problems
    if row is not None:
        yield from Batch(setup, [row], name).measurements()



_FIGURES = itemgetter("n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts", "samples_ts", "test_time")


def to_row(rec: dict, item: Record, name: str, cache: dict) -> tuple[Setup, list[Problem], tuple | None]:
    """(the record's setup, its problems, its row in types.ROW_FIELDS order, or None when it is skipped)."""
    setup = _setup(rec, name, item, cache)
    problems, setup.problems = setup.problems, []  # a setup's problems are said once, not once per record
    try:
        n_prompt, n_gen, n_depth, rate, stddev, samples, test_time = _FIGURES(rec)
    except KeyError:
        figures = None
    else:  # the usual record, read without a call per figure (this runs 100,000 times for a big file)
        figures = (n_prompt, n_gen, n_depth, rate, stddev, len(samples), test_time, True) if (
            type(n_prompt) is int and type(n_gen) is int and type(n_depth) is int and type(rate) is float
            and type(stddev) is float and type(samples) is list and samples and type(test_time) is str
            and 0 <= n_prompt <= _EXACT_INT and 0 <= n_gen <= _EXACT_INT and 0 <= n_depth <= _EXACT_INT
            and (n_prompt or n_gen) and 0.0 < rate <= _FLOAT_MAX and 0.0 <= stddev <= _FLOAT_MAX
            and len(test_time) <= 40 and not test_time.encode().translate(None, _PLAIN_ASCII)) else None
    if figures is None:
        figures = _figures(rec, item, name, problems)
        if figures is None:
            return setup.shared, problems, None
    return setup.shared, problems, _row(setup, figures, rec.get("test"), item, name, problems)


def _figures(rec: dict, item: Record, name: str, problems: list[Problem]) -> tuple | None:
    """(n_prompt, n_gen, n_depth, speed, its stddev, repetitions, test time, whether that time is
    plain text JSON takes as it is) of any record, each checked, with a problem for what is odd;
    None, with the reason, for a record that is skipped."""
    n_prompt = _count(rec.get("n_prompt"))
    n_gen = _count(rec.get("n_gen"))
    n_depth = _count(rec.get("n_depth"))
    if n_prompt is None or n_gen is None or n_prompt < 0 or n_gen < 0:
        problems.append(Problem(name, item.place, "'n_prompt'/'n_gen' are not whole token counts; skipped",
                                "warning"))
        return None
    if n_depth is None or n_depth < 0:
        problems.append(Problem(name, item.place, "'n_depth' is not a whole token count: taken as 0", "warning"))
        n_depth = 0
    if n_prompt == 0 and n_gen == 0:
        problems.append(Problem(name, item.place, "a test with no prompt and no generated tokens (n_prompt = n_gen = "
                                "0); skipped", "warning"))
        return None
    rate = _positive(rec, "avg_ts", name, item, problems)
    samples = rec.get("samples_ts")
    if not isinstance(samples, list):
        samples = []
    if rate is None and samples:
        num = Numbers(name, item.place, problems)
        finite = [v for v in (num.value(s, "samples_ts", positive=True) for s in samples[:10000]) if v is not None]
        if finite:
            rate = sum(finite) / len(finite)
            problems.append(Problem(name, item.place, "'avg_ts' is missing: the mean of 'samples_ts' was used",
                                    "info"))
    if rate is None:
        problems.append(Problem(name, item.place, "no speed in the record ('avg_ts' and 'samples_ts' missing or not "
                                "numbers); skipped", "warning"))
        return None
    if rate == 0:
        problems.append(Problem(name, item.place, "the speed is 0 tokens/s: the test did not run; skipped", "warning"))
        return None
    stddev = _positive(rec, "stddev_ts", name, item, problems)
    test_time = rec.get("test_time")
    if isinstance(test_time, str) and not (len(test_time) <= 40 and _PLAIN.fullmatch(test_time)):
        test_time = clean_text(test_time, 40)
    elif not isinstance(test_time, str):
        test_time = None
    plain = test_time is not None and _PLAIN.fullmatch(test_time) is not None
    return n_prompt, n_gen, n_depth, rate, stddev, len(samples) if samples else None, test_time, plain


def _row(setup: _Setup, figures: tuple, declared, item: Record, name: str, problems: list[Problem]) -> tuple:
    """The stored row of a record's figures (types.ROW_FIELDS), and a problem when its 'test' disagrees."""
    n_prompt, n_gen, n_depth, rate, stddev, repetitions, test_time, plain = figures
    metric, base_test, workload = _test(n_prompt, n_gen, n_depth)
    if declared is not None and isinstance(declared, str) and declared.strip() and declared.strip() != base_test:
        test = base_test + (f" @ d{n_depth}" if n_depth else "")
        problems.append(Problem(name, item.place, f"'test' says {clean_text(declared, 40)!r} but the token counts say "
                                f"{test!r}: the token counts were used", "warning"))
    # the test time is either plain (a timestamp such as 2025-04-24T11:58:50Z, which JSON takes as it
    # is) or cleaned text, which is encoded
    if test_time is None:
        conditions = f'{{"repetitions":{repetitions or "null"}}}'
    elif plain:
        conditions = f'{{"repetitions":{repetitions or "null"},"test_time":"{test_time}"}}'
    else:
        conditions = f'{{"repetitions":{repetitions or "null"},"test_time":{_JSON.encode(test_time)}}}'
    return (sha256(f"{setup.digest}|{metric}|{rate!r}|{stddev!r}|{n_prompt}|{n_gen}|{n_depth}|{repetitions}|"
                   f"{test_time}".encode()).hexdigest(),
            metric, "mean", rate, "tokens/s", stddev, item.index, workload, conditions)


@lru_cache(maxsize=4096)
def _test(n_prompt: int, n_gen: int, n_depth: int) -> tuple[str, str, str]:
    """(metric, llama-bench's name of the test, the row's workload JSON) of a test's token counts (a
    file has a few distinct tests, each repeated for every setup and time)."""
    if n_prompt > 0 and n_gen == 0:
        metric, test = "prefill_tokens_per_s", f"pp{n_prompt}"
    elif n_prompt == 0:
        metric, test = "decode_tokens_per_s_per_user", f"tg{n_gen}"
    else:
        metric, test = "prompt_and_generation_tokens_per_s", f"pp{n_prompt}+tg{n_gen}"
    shown = test + (f" @ d{n_depth}" if n_depth else "")
    return metric, test, f'{{"prompt_tokens":{n_prompt},"gen_tokens":{n_gen},"depth":{n_depth},"test":"{shown}"}}'


_JSON = json.JSONEncoder(ensure_ascii=False)
