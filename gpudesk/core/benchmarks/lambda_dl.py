"""Lambda's published GPU benchmark tables (github.com/lambdal/deeplearning-benchmark,
`pytorch/pytorch-train-throughput-{fp16,fp32}.csv` and the same records as `.json`): one row per
system (`name_gpu` such as "H100 80GB SXM5", "2x RTX 4090", "LambdaCloud A10"; `num_gpu`; `watt`
and `price` of the whole system as Lambda lists them: 700 W for one H100 SXM5, 5600 W for eight), then one column per NVIDIA DeepLearningExamples training
workload with the training throughput of the whole system.

What a column counts follows Lambda's compile script (pytorch/scripts/compile_results_pytorch.py,
the log line each figure is read from): images/s for ssd and resnet50, sequences/s for the BERT
SQuAD fine-tunes, tokens/s for gnmt and Transformer-XL, samples/s for ncf, items/s (the script's
`train_epoch_avg_items/sec`) for tacotron2 and waveglow. Each is stored as training samples per
second with that item named in the workload. `0.0` (and `-1.0` in older tables) means "not run" and
is skipped. The table does not say its precision: the file name does (fp16/fp32), and it is asked
when the name does not.

These are image, speech, recommendation and translation models rather than the language models
gpudesk estimates: they are stored for comparing hardware with each other, and marked so that no
model question is asked for them.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator

from gpudesk.core.benchmarks import matching
from gpudesk.core.benchmarks._common import Item, has_keys, opened
from gpudesk.core.benchmarks.reader import Source
from gpudesk.core.benchmarks.types import (
    Measurement,
    ParseResult,
    Problem,
    clean_text,
    collect,
    finish,
    parse_number,
)

FORMAT = "lambda-dl-benchmark"
MAX_ROWS = 100_000
ITEMS = {"ssd": "images", "resnet50": "images", "maskrcnn": "images", "bert_base_squad": "sequences",
         "bert_large_squad": "sequences", "gnmt": "tokens", "transformerxlbase": "tokens",
         "transformerxllarge": "tokens", "ncf": "samples", "tacotron2": "items", "waveglow": "items"}
_SYSTEM_COLUMNS = ("name_gpu", "num_gpu", "watt", "price")
_COUNT_RE = re.compile(r"\b(\d+)\s*x\s*(?=[A-Za-z])")


def looks_like(head: str) -> bool:
    first = next((line for line in head.splitlines() if line.strip()), "")
    if first.replace(" ", "").startswith("name_gpu,num_gpu,"):
        return True
    return has_keys(head, "name_gpu", "num_gpu") and has_keys(head, "watt")


def parse(source, source_name: str | None = None, **_ignored) -> ParseResult:
    return collect(iter_parse(source, source_name), FORMAT)


def _rows(src, name: str) -> Iterator[tuple[int, dict] | Problem]:
    head = src.head(4096).lstrip("\ufeff \t\r\n")
    if head[:1] and head[:1] in "[{":  # ("" is in every string: an empty table is not JSON)
        try:
            with src.open() as handle:
                data = json.loads(handle.read())
        except (ValueError, RecursionError) as exc:
            yield Problem(name, "", f"not valid JSON ({exc})", "error")
            return
        records = data if isinstance(data, list) else [data]
        for i, rec in enumerate(records[:MAX_ROWS]):
            if isinstance(rec, dict):
                yield i + 1, rec
            else:
                yield Problem(name, f"record {i}", "not an object with name_gpu and num_gpu: skipped", "warning")
        if len(records) > MAX_ROWS:
            yield Problem(name, f"record {MAX_ROWS}", f"more than {MAX_ROWS:,} records: the rest were not read",
                          "warning")
        return
    with src.open() as handle:
        reader = csv.reader(handle)
        header = None
        rows = 0
        try:
            for cells in reader:
                if not cells or not any(c.strip() for c in cells):
                    continue
                if header is None:
                    header = [c.strip() for c in cells]
                    if header[:2] != ["name_gpu", "num_gpu"]:
                        yield Problem(name, "line 1", "the header does not start with name_gpu,num_gpu", "error")
                        return
                    continue
                rows += 1
                if rows > MAX_ROWS:
                    yield Problem(name, f"line {reader.line_num}", f"more than {MAX_ROWS:,} rows: the rest were not "
                                  "read", "warning")
                    return
                if len(cells) != len(header):
                    yield Problem(name, f"line {reader.line_num}", f"{len(cells)} fields where the header has "
                                  f"{len(header)}: skipped", "warning")
                    continue
                yield reader.line_num, dict(zip(header, cells, strict=True))
        except csv.Error as exc:
            yield Problem(name, f"line {reader.line_num}", f"the CSV cannot be read further ({exc})", "warning")


def _workload(column: str, precision: str | None) -> dict:
    """A column's workload: the model trained, what its throughput counts, the file name's precision."""
    item = ITEMS.get(column, "items")
    workload = {"model": clean_text(column, 60), "training": True, "throughput_of": f"{item}/s",
                "language_model": False}
    if precision:
        workload["precision"] = precision
        workload["precision_from"] = "file name"
    return workload


@opened
def iter_parse(src: Source, **_ignored) -> Iterator[Item]:
    name = src.name
    low = name.lower()
    precision = "fp16" if "fp16" in low else "fp32" if "fp32" in low else None
    produced = not_run = 0
    for entry in _rows(src, name):
        if isinstance(entry, Problem):
            yield entry
            continue
        line, row = entry
        place = f"line {line}"
        system = clean_text(row.get("name_gpu") or "", 120)
        count_raw = parse_number(row.get("num_gpu"))
        if not system:
            yield Problem(name, place, "no name_gpu: row skipped", "warning")
            continue
        count = int(count_raw) if count_raw is not None and count_raw >= 1 and float(count_raw).is_integer() else None
        if count is None:
            yield Problem(name, place, f"num_gpu {row.get('num_gpu')!r} is not a whole number of GPUs: taken from the "
                          "name", "warning")
        hardware_text = _COUNT_RE.sub("", system).strip()
        match = matching.match_hardware(hardware_text, count)
        conditions: dict = {"system": system}
        watt = parse_number(row.get("watt"))
        if watt is not None and watt > 0:
            conditions["watt_listed"] = watt  # the system's, as Lambda lists it (not measured)
        for column, raw in row.items():
            if column in _SYSTEM_COLUMNS or not column:
                continue
            value = parse_number(raw)
            if value is None:
                if raw not in (None, ""):
                    yield Problem(name, f"{place}, column {column}", f"{str(raw)[:30]!r} is not a number: ignored",
                                  "warning")
                continue
            if value <= 0:
                not_run += 1
                continue
            workload = _workload(column, precision)
            produced += 1
            yield finish(Measurement(
                format=FORMAT, metric="train_samples_per_s", value=value, unit="samples/s", source_file=name,
                record_index=line, hardware_text=hardware_text, accelerator_id=match.accelerator_id,
                accelerator_count=match.count, match_confidence=match.confidence, match_reason=match.reason,
                hardware_key="hw:" + hardware_text, statistic="mean", workload=workload, conditions=dict(conditions)))
    if not_run:
        yield Problem(name, "", f"{not_run} cell(s) hold 0 or -1 (the workload was not run on that system): skipped",
                      "info")
    if produced and precision is None:
        yield Problem(name, "", "the table does not say its precision (Lambda publishes fp16 and fp32 tables, named "
                      "so): which one is this?", "question")
    if not produced:
        yield Problem(name, "", "no throughput figure in this Lambda benchmark table", "error")
