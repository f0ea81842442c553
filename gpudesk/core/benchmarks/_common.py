"""What the importers share: running a converter over the records of a JSON file, recognising
keys, and guessing a model's size and precision from its name."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

from gpudesk.core.benchmarks.reader import Record, Source, SourceError, iter_json, open_source
from gpudesk.core.benchmarks.types import Batch, Measurement, Problem, Setup, finish

Item = Measurement | Batch | Problem | dict
Converter = Callable[[dict, Record, str], Iterator[Item]]


def has_keys(text: str, *keys: str) -> bool:
    """True when every key appears as a JSON object key ("key": ...) in `text`."""
    return all(re.search(r'"' + re.escape(k) + r'"\s*:', text) for k in keys)


def any_key(text: str, *keys: str) -> bool:
    return any(re.search(r'"' + re.escape(k) + r'"\s*:', text) for k in keys)


def open_or_problem(source, source_name: str | None, max_bytes: int | None = None) -> tuple[Source | None, Problem | None]:
    if isinstance(source, Source):
        return source, None
    try:
        return open_source(source, source_name, max_bytes), None
    except SourceError as exc:
        return None, exc.problem


def opened(reader: Callable[..., Iterator[Item]]) -> Callable[..., Iterator[Item]]:
    """A reader of an opened Source made one of a path, a text or a Source and its name: the file is
    opened (and checked: size, binary content) when the stream is first read, and a file that cannot
    be read gives its one problem instead of the reader's items."""

    @functools.wraps(reader)
    def read(source, source_name: str | None = None, *args, **kwargs) -> Iterator[Item]:
        src, problem = open_or_problem(source, source_name)
        if problem is not None:
            yield problem
            return
        yield from reader(src, *args, **kwargs)

    return read


def repeats(out, said: set[str]) -> bool:
    """Whether `out` is a question or a note already said for this file (the same setup asks its
    question once, not once per record); remembers it otherwise."""
    if not isinstance(out, Problem) or out.severity not in ("question", "info"):
        return False
    if out.message in said:
        return True
    said.add(out.message)
    return False


class _Tally:
    """What a JSON importer found in a file: records it took, measurements made, and whether
    reading ran into an error."""

    __slots__ = ("records", "produced", "had_error")

    def __init__(self):
        self.records = 0
        self.produced = 0
        self.had_error = False


def _records(src: Source, what: str, is_record: Callable[[dict], bool], tally: _Tally,
             max_record_chars: int | None) -> Iterator[Record | Problem]:
    """The file's JSON records that `is_record` accepts; a problem for each other one."""
    name = src.name
    for item in iter_json(src, max_record_chars=max_record_chars):
        if type(item) is Record and type(item.value) is dict and is_record(item.value):
            tally.records += 1
            yield item
        else:
            yield _screened(item, name, what, tally)


def _screened(item: Record | Problem, name: str, what: str, tally: _Tally) -> Problem:
    """What iter_json gave that is not a record to convert: its problem, or why it is skipped."""
    if isinstance(item, Problem):
        tally.had_error = tally.had_error or item.severity == "error"
        return item
    if not isinstance(item.value, dict):
        return Problem(name, item.place, f"a JSON {type(item.value).__name__}, not a {what} result object; skipped",
                       "warning")
    return Problem(name, item.place, f"not a {what} result (its keys do not match); skipped", "warning")


def _closing(name: str, what: str, tally: _Tally) -> Iterator[Problem]:
    """The error for a file of which nothing at all could be read."""
    if tally.produced == 0 and not tally.had_error:
        if tally.records:
            yield Problem(name, "", f"no measurement could be taken from its {tally.records} {what} record(s)",
                          "error")
        else:
            yield Problem(name, "", f"no {what} results in this file", "error")


_RECORD_FAULTS = (TypeError, ValueError, KeyError, AttributeError, OverflowError, ZeroDivisionError)


def _unreadable(name: str, item: Record, exc: Exception) -> Problem:
    return Problem(name, item.place, f"the record could not be read ({type(exc).__name__}: {exc}); skipped", "warning")


@opened
def run_json(src: Source, fmt: str, what: str, is_record: Callable[[dict], bool], convert: Converter,
             max_record_chars: int | None = None) -> Iterator[Item]:
    """Convert every record of a JSON/JSONL file that `is_record` accepts; problems for the rest.
    Ends with an error problem when nothing at all could be read."""
    name = src.name
    tally = _Tally()
    said: set[str] = set()  # questions and notes are said once per file, not once per record
    try:
        for item in _records(src, what, is_record, tally, max_record_chars):
            if isinstance(item, Problem):
                yield item
                continue
            try:
                for out in convert(item.value, item, name):
                    if isinstance(out, Measurement):
                        tally.produced += 1
                        out.source_file = name
                        out.record_index = item.index
                        yield finish(out)
                    elif not repeats(out, said):
                        yield out
            except _RECORD_FAULTS as exc:
                yield _unreadable(name, item, exc)
    except OSError as exc:
        yield Problem(name, "", f"the file could not be read to the end ({exc.strerror or exc})", "error")
        return
    yield from _closing(name, what, tally)


BATCH_ROWS = 2000  # rows of one setup handed over together


# to_row(record, Record, file name) -> (the record's setup, problems, its row or None when skipped)
RowConverter = Callable[[dict, Record, str], tuple[Setup, list[Problem], tuple | None]]


@opened
def run_json_rows(src: Source, what: str, is_record: Callable[[dict], bool], to_row: RowConverter,
                  max_record_chars: int | None = None) -> Iterator[Item]:
    """As run_json, for importers whose every record gives one row (types.ROW_FIELDS) of one of a
    few setups: the rows of consecutive records of one setup come as a Batch (at most BATCH_ROWS),
    which the store writes in bulk. `to_row` returns the same Setup object for records that
    share their setup."""
    name = src.name
    tally = _Tally()
    said: set[str] = set()
    setup: Setup | None = None
    rows: list[tuple] = []
    try:
        for item in iter_json(src, max_record_chars=max_record_chars):  # as _records, one generator less
            if type(item) is Record and type(item.value) is dict and is_record(item.value):
                tally.records += 1
            else:
                yield _screened(item, name, what, tally)
                continue
            try:
                this, problems, row = to_row(item.value, item, name)
            except _RECORD_FAULTS as exc:
                yield _unreadable(name, item, exc)
                continue
            for out in problems:
                if not repeats(out, said):
                    yield out
            if row is None:
                continue
            if this is not setup or len(rows) >= BATCH_ROWS:
                if rows:
                    tally.produced += len(rows)
                    yield Batch(setup, rows, name)
                setup, rows = this, []
            rows.append(row)
    except OSError as exc:
        if rows:
            yield Batch(setup, rows, name)
        yield Problem(name, "", f"the file could not be read to the end ({exc.strerror or exc})", "error")
        return
    if rows:
        tally.produced += len(rows)
        yield Batch(setup, rows, name)
    yield from _closing(name, what, tally)


# ----------------------------------------------------------------------------------- models
_SIZE_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bBmM])(?![a-zA-Z])")
_MOE_RE = re.compile(r"(\d+)x(\d+(?:\.\d+)?)[bB]")
_ACTIVE_RE = re.compile(r"(\d+(?:\.\d+)?)[bB][.\-_]?[aA](\d+(?:\.\d+)?)[bB]")


def params_from_name(name: str) -> tuple[float | None, float | None]:
    """(total, active) parameters from names like 'Meta-Llama-3.1-8B-FP8', 'Qwen3-30B-A3B',
    'Mixtral-8x7B'; (None, None) when the name has no size."""
    text = name or ""
    m = _ACTIVE_RE.search(text)
    if m:
        return float(m.group(1)) * 1e9, float(m.group(2)) * 1e9
    m = _MOE_RE.search(text)
    if m:
        return int(m.group(1)) * float(m.group(2)) * 1e9, None
    sizes = [(float(v), u.lower()) for v, u in _SIZE_RE.findall(text)]
    if not sizes:
        return None, None
    value, unit = sizes[-1]
    return value * (1e9 if unit == "b" else 1e6), None


def precision_from_name(name: str) -> str | None:
    t = (name or "").lower()
    if re.search(r"nvfp4|mxfp4|\bfp4\b|[-_]fp4", t):
        return "fp4"
    if re.search(r"fp8|[-_]f8\b|w8a8", t):
        return "fp8"
    if re.search(r"awq|gptq|int4|w4a16|[-_]4bit|bnb[-_]4", t):
        return "int4"
    if re.search(r"int8|w8a16|[-_]8bit", t):
        return "int8"
    if re.search(r"bf16|bfloat16", t):
        return "bf16"
    if re.search(r"fp16|float16|[-_]f16\b", t):
        return "fp16"
    return None


def model_guess(name: str) -> dict:
    """Workload fields guessed from a model id, each marked as guessed."""
    out: dict = {}
    total, active = params_from_name(name)
    if total:
        out["params"] = total
        out["params_from"] = "model name"
    if active:
        out["active_params"] = active
        out["moe"] = True
    precision = precision_from_name(name)
    if precision:
        out["precision"] = precision
        out["precision_from"] = "model name"
    return out
