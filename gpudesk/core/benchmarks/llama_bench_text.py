"""llama.cpp `llama-bench` text outputs: the default Markdown table (`-o md`, the table people
paste into issues and READMEs) and `-o csv`. Each row becomes the record llama-bench would have
written as JSON, and llama_bench.convert maps it, so all outputs of the tool store the same figures.

Markdown: `| model | size | params | backend | ngl | ... | test | t/s |`, one row per test with
`pp512` / `tg128` / `pp512+tg128` / `pp512 @ d4096` (older builds: `pp 512`, `tg 128`) and the
speed as `mean ± stddev` tokens/s. The table itself names no GPU: the device lines llama.cpp prints
above it (`Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes`, `ggml_vulkan: 0 =
AMD Radeon RX 7900 XT (RADV NAVI31) (radv) | ...`, `ggml_metal_init: GPU name: Apple M2 Max`) and the
`build: 1d0125bc (6552)` line (printed after it) are read when they were pasted with it - anywhere
in the file, for all its tables; otherwise the GPU is asked.

CSV: a header row of the JSON field names and one quoted row per test.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator

from gpudesk.core.benchmarks import llama_bench
from gpudesk.core.benchmarks._common import Item, opened, repeats
from gpudesk.core.benchmarks.reader import Record, Source, iter_lines
from gpudesk.core.benchmarks.types import (
    Measurement,
    ParseResult,
    Problem,
    clean_scalar,
    clean_text,
    collect,
    finish,
)

FORMAT = llama_bench.FORMAT  # the same tool: measurements compare with those of its JSON output
MAX_ROWS = 100_000

_HEADER_RE = re.compile(r"^\s*\|\s*model\s*\|.*\|\s*test\s*\|\s*t/s\s*\|\s*$", re.M)
_SEPARATOR_RE = re.compile(r"^\s*\|(\s*:?-+:?\s*\|)+\s*$")
_TEST_RE = re.compile(r"^(?:(pp|tg)\s*(\d+))(?:\s*\+\s*tg\s*(\d+))?(?:\s*@\s*d\s*(\d+))?$")
_SPEED_RE = re.compile(r"^([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?:\s*±\s*(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?))?$")
_SIZE_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)$")
_PARAMS_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMBT])$")
_CUDA_DEVICE_RE = re.compile(r"^\s*Device\s+(\d+):\s*([^,]+?)\s*,")
_VULKAN_DEVICE_RE = re.compile(r"^\s*ggml_vulkan:\s*(\d+)\s*=\s*([^|]+?)\s*(?:\||$)")
_METAL_DEVICE_RE = re.compile(r"^\s*ggml_metal_init:\s*GPU name:\s*(.+?)\s*$")
_BUILD_RE = re.compile(r"^\s*build:\s*([0-9a-f]{6,40})\s*\((\d+)\)")
_SIZE_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_PARAM_UNITS = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
# Markdown column -> the JSON field llama-bench writes for it (llama-bench.cpp, markdown_printer)
_COLUMNS = {"model": "model_type", "size": "model_size", "params": "model_n_params", "backend": "backends",
            "ngl": "n_gpu_layers", "threads": "n_threads", "n_batch": "n_batch", "n_ubatch": "n_ubatch",
            "type_k": "type_k", "type_v": "type_v", "fa": "flash_attn", "mmap": "use_mmap", "nkvo": "no_kv_offload",
            "sm": "split_mode", "mg": "main_gpu", "ts": "tensor_split", "dev": "devices", "embd": "embeddings",
            "n_cpu_moe": "n_cpu_moe", "ot": "tensor_buft_overrides", "cpu_mask": "cpu_mask", "cpu_strict": "cpu_strict",
            "poll": "poll", "nopo": "no_op_offload", "load_mode": "load_mode", "dio": "use_direct_io"}


def looks_like_markdown(head: str) -> bool:
    return bool(_HEADER_RE.search(head))


def looks_like_csv(head: str) -> bool:
    for line in head.splitlines()[:50]:
        if line.startswith(("build_commit,", '"build_commit",')):
            return all(k in line for k in ("model_type", "n_prompt", "avg_ts"))
    return False


class _Reader:
    """What detect.IMPORTERS needs of a reader: iter_parse (and parse, for tests)."""

    def __init__(self, iter_parse: Callable[..., Iterator[Item]]):
        self.iter_parse = iter_parse

    def parse(self, source, source_name: str | None = None, **_ignored) -> ParseResult:
        return collect(self.iter_parse(source, source_name), FORMAT)


def _cells(line: str) -> list[str]:
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|"):
        text = text[:-1]
    return [c.strip() for c in text.split("|")]


def _size_bytes(text: str) -> float | None:
    m = _SIZE_RE.match(text.strip())
    return float(m.group(1)) * _SIZE_UNITS[m.group(2)] if m else None


def _params(text: str) -> float | None:
    m = _PARAMS_RE.match(text.strip())
    return float(m.group(1)) * _PARAM_UNITS[m.group(2)] if m else None


class _Devices:
    """The GPUs named in the lines llama.cpp prints before its table (one set per paste)."""

    def __init__(self):
        self.names: dict[tuple[str, int], str] = {}
        self.build: tuple[str, str] | None = None

    def read(self, line: str) -> bool:
        for kind, rx in (("cuda", _CUDA_DEVICE_RE), ("vulkan", _VULKAN_DEVICE_RE)):
            m = rx.match(line)
            if m:
                name = re.sub(r"(\s*\([^()]*\))+\s*$", "", m.group(2)).strip()  # "(RADV NAVI31) (radv)"
                self.names[(kind, int(m.group(1)))] = clean_text(name, 120)
                return True
        m = _METAL_DEVICE_RE.match(line)
        if m:
            self.names[("metal", 0)] = clean_text(m.group(1), 120)
            return True
        m = _BUILD_RE.match(line)
        if m:
            self.build = (m.group(1), m.group(2))
            return True
        return False

    @property
    def gpu_info(self) -> str:
        return ", ".join(name for _, name in sorted(self.names.items()))


def _record_from_row(header: list[str], cells: list[str], devices: _Devices, name: str,
                     place: str) -> tuple[dict | None, list[Problem], dict]:
    """(the JSON record llama-bench would have written, problems, columns kept as they are)."""
    problems: list[Problem] = []
    rec: dict = {}
    extra: dict = {}
    for col, raw in zip(header, cells, strict=False):
        key = col.strip()
        if key == "test":
            m = _TEST_RE.match(raw.replace("  ", " ").strip())
            if not m:
                return None, [Problem(name, place, f"test {raw!r} is not pp<N>, tg<N>, pp<N>+tg<N> or one of these "
                                      "'@ d<N>': row skipped", "warning")], extra
            kind, n, tg, depth = m.groups()
            rec["n_prompt"] = int(n) if kind == "pp" else 0
            rec["n_gen"] = int(tg) if tg else (int(n) if kind == "tg" else 0)
            rec["n_depth"] = int(depth) if depth else 0
        elif key == "t/s":
            m = _SPEED_RE.match(raw.strip())
            if not m:
                return None, [Problem(name, place, f"speed {raw!r} is not a number of tokens/s (with its ± "
                                      "deviation): row skipped", "warning")], extra
            rec["avg_ts"] = float(m.group(1))
            if m.group(2) is not None:
                rec["stddev_ts"] = float(m.group(2))
        elif key == "size":
            value = _size_bytes(raw)
            if value is None:
                problems.append(Problem(name, place, f"model size {raw!r} is not a size in B/KiB/MiB/GiB: ignored",
                                        "warning"))
            else:
                rec["model_size"] = value
        elif key == "params":
            value = _params(raw)
            if value is None:
                problems.append(Problem(name, place, f"parameter count {raw!r} is not a count in K/M/B: ignored",
                                        "warning"))
            else:
                rec["model_n_params"] = value
        elif key in _COLUMNS:
            rec[_COLUMNS[key]] = raw
        elif key:
            extra[clean_text(key, 40)] = clean_scalar(raw)
    rec.setdefault("model_type", "")
    if devices.gpu_info:
        rec["gpu_info"] = devices.gpu_info
    if devices.build:
        rec["build_commit"], rec["build_number"] = devices.build
    return rec, problems, extra


def _row_items(rec: dict, item: Record, extra: dict, name: str, cache: dict, said: set[str]) -> Iterator[Item]:
    """The measurements of one markdown table row, and its problems (each question or note said once a file)."""
    for out in llama_bench.convert(rec, item, name, cache):
        if isinstance(out, Measurement):
            out.source_file = name
            out.record_index = item.index
            out.conditions["output"] = "markdown table"
            out.conditions.update(extra)
            if not rec.get("gpu_info") and not out.cpu_only:
                out.hardware_key = f"sig:llama-bench-md:{rec.get('backends', '')}:{name}"
            out.content_hash = ""  # recomputed over everything stored, the extra columns included
            yield finish(out)
        elif not repeats(out, said):
            yield out


@opened
def iter_parse_markdown(src: Source, **_ignored) -> Iterator[Item]:
    name = src.name
    devices = _Devices()
    for _number, line in iter_lines(src):  # the device and build lines, wherever they were pasted
        if line is not None and not line.lstrip().startswith("|"):
            devices.read(line)
    header: list[str] | None = None
    cache: dict = {}
    said: set[str] = set()
    produced = rows = index = 0
    for number, line in iter_lines(src):
        if line is None:
            continue
        if header is None or not line.lstrip().startswith("|"):
            header = None
            if _HEADER_RE.match(line):
                header = _cells(line)
            continue
        if _SEPARATOR_RE.match(line):
            continue
        cells = _cells(line)
        place = f"line {number}"
        if len(cells) != len(header):
            yield Problem(name, place, f"the row has {len(cells)} cells where the table has {len(header)} columns: "
                          "skipped", "warning")
            continue
        rows += 1
        if rows > MAX_ROWS:
            yield Problem(name, place, f"more than {MAX_ROWS:,} table rows: the rest were not read", "warning")
            break
        rec, problems, extra = _record_from_row(header, cells, devices, name, place)
        yield from problems
        if rec is None:
            continue
        item = Record(rec, index, number, False)
        index += 1
        for out in _row_items(rec, item, extra, name, cache, said):
            if isinstance(out, Measurement):
                produced += 1
            yield out
    if produced and not devices.names:
        yield Problem(name, "", "the table names no GPU (llama.cpp prints the devices above it, e.g. 'Device 0: "
                      "NVIDIA GeForce RTX 4090, ...'; paste those lines with the table, or answer which "
                      "accelerator ran it)", "question")
    if not produced:
        yield Problem(name, "", f"no measurement could be taken from its {rows} llama-bench table row(s)" if rows
                      else "no llama-bench table rows in this file", "error")


@opened
def iter_parse_csv(src: Source, **_ignored) -> Iterator[Item]:
    name = src.name
    cache: dict = {}
    said: set[str] = set()
    produced = rows = 0
    header: list[str] | None = None
    with src.open() as stream:
        reader = csv.reader(stream)
        try:
            for cells in reader:
                number = reader.line_num
                if not cells or not any(c.strip() for c in cells):
                    continue
                if header is None:
                    if cells[0].strip() == "build_commit" and "avg_ts" in cells:
                        header = [c.strip() for c in cells]
                    continue
                place = f"line {number}"
                if len(cells) != len(header):
                    yield Problem(name, place, f"the row has {len(cells)} fields where the header has {len(header)}: "
                                  "skipped", "warning")
                    continue
                rows += 1
                if rows > MAX_ROWS:
                    yield Problem(name, place, f"more than {MAX_ROWS:,} rows: the rest were not read", "warning")
                    break
                rec = dict(zip(header, cells, strict=True))
                if not llama_bench.is_record(rec):
                    yield Problem(name, place, "not a llama-bench result row (its fields do not match): skipped",
                                  "warning")
                    continue
                item = Record(rec, rows - 1, number, False)
                for out in llama_bench.convert(rec, item, name, cache):
                    if isinstance(out, Measurement):
                        produced += 1
                        out.source_file = name
                        out.record_index = item.index
                        out.conditions["output"] = "csv"
                        out.content_hash = ""
                        yield finish(out)
                    elif not repeats(out, said):
                        yield out
        except csv.Error as exc:
            yield Problem(name, f"line {reader.line_num}", f"the CSV cannot be read further ({exc})", "warning")
    if not produced:
        yield Problem(name, "", f"no measurement could be taken from its {rows} llama-bench CSV row(s)" if rows
                      else "no llama-bench CSV header (build_commit, ..., avg_ts) in this file", "error")


MARKDOWN = _Reader(iter_parse_markdown)
CSV = _Reader(iter_parse_csv)
