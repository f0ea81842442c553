"""JSON lines that start with the same members as the line before (a tool's setup, then the figures
that change) have only the rest parsed (reader._SharedStart): the values, their types and their key
order must be exactly those of parsing each line whole, wherever a read chunk ends; and the
llama-bench importer, which takes a record's setup from the shared members without comparing them,
must still tell setups apart that differ in a field written after the figures."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.benchmarks import llama_bench, reader
from gpudesk.core.benchmarks.reader import Record, Source, iter_json
from gpudesk.core.benchmarks.types import Batch

from .test_benchmarks_importers import LLAMA_M5

LINES = [
    '{"setup": "A", "n": 1, "k": [1], "t": 1}',
    '{"setup": "A", "n": 1, "k": [1], "t": 2}',  # the common start is learnt here: up to "n" (a list is never shared)
    '{"setup": "A", "n": 1, "k": [1], "t": 3}',
    '{"setup": "A", "n": 1, "t": 4, "n": 5}',  # "n" written again after the start: the later value counts
    '{"setup": "A", "n": 1,}',  # the start, then nothing: no JSON
    '{"setup": "A", "n": 1 , "t": 5.5}',  # the start's text, then a space before the comma: read whole
    '{"setup": "A", "n": 1.0, "t": 6}',  # 1.0 is not 1: does not start the same way
    '{"setup": "A", "n": 1.0, "t": 7}',
    '{"setup": "A", "n": 1.0, "t": 8}   ',
    '{"setup": "A,\\"n\\": 2", "n": 1.0, "t": 9}',  # the next key's text inside a value
    '{"setup": {"n": 1, "m": 2}, "n": 3, "t": 10}',  # ... and as a key of a nested object
    '{"setup": {"n": 1, "m": 2}, "n": 3, "t": 11}',
    '{"setup": {"n": 1, "m": 2}, "n": 3, "t": 12}',
    '{"s": "A", "n": 1, "t": 13}',
    '{"s": "A", "n": 1, "t": 14}',
    '{"s": "A", "n": 1, "t": 15} trailing words',  # not one object alone on its line
    '{"s": "A", "n": 1, "big": 123456789012345678901234567890}',  # beyond 64 bits: the standard way
    '{"s": "A", "n": 1, "t": NaN}',  # orjson refuses NaN, the standard library reads it
    '{"s": "A", "n": 1, "t": 16}',
    '{"s": "A", "n": 1, "t": 17, "u": {"deep": [1, 2]}}',
    '{"s": "A", "n": true, "t": 18}',  # true is not 1
    '{"s": "A", "n": true, "t": 19}',
    '{"s": "A", "n": true, "t": 20}',
    '{"s": "B\\u00e9", "n": 2, "ü": 21}',
    '{"s": "B\\u00e9", "n": 2, "ü": 22}',
    '{"s": "B\\u00e9", "n": 2, "ü": 23}',
    '{"t": 5, "x": 1, "t": 6}',  # a key written twice, within the start and after it
    '{"t": 5, "x": 2, "t": 6}',
    '{"t": 5, "x": 3, "t": 6}',
]
TEXTS = {
    "lf": "\n".join(LINES) + "\n",
    "crlf": "\r\n".join(LINES) + "\r\n",
    "no final newline": "\n".join(LINES),
    "in an array": "[\n" + ",\n".join(LINES[:4] + LINES[6:15] + LINES[18:]) + "\n]\n",
}


def _read(text: str, chunk: int) -> list:
    out = []
    for item in iter_json(Source("t.jsonl", text=text), chunk=chunk):
        if isinstance(item, Record):
            # json.dumps keeps the key order and tells 1, 1.0 and true apart; repr the types too
            out.append(("record", json.dumps(item.value, ensure_ascii=False), repr(_types(item.value)), item.index,
                        item.line, item.in_array))
        else:
            out.append(("problem", item.place, item.message, item.severity))
    return out


def _types(value):
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


@pytest.mark.parametrize("name", list(TEXTS))
def test_lines_read_from_a_shared_start_give_what_reading_each_whole_gives(name, monkeypatch):
    text = TEXTS[name]
    shared = [_read(text, chunk) for chunk in (8, 64, 256, 1 << 16)]  # chunks ending inside lines too

    def standard_only(_text):
        raise ValueError("the standard way only")

    monkeypatch.setattr(reader, "_line_loads", standard_only)
    standard = _read(text, 1 << 16)
    assert shared == [standard] * 4
    assert sum(1 for x in standard if x[0] == "record") >= 20
    if name != "in an array":
        assert any(x[0] == "problem" and "not valid JSON" in x[2] for x in standard)  # the bare '{...,}'


def test_the_shared_start_is_used_and_shares_only_values_that_cannot_change():
    records = [r for r in iter_json(Source("t.jsonl", text=TEXTS["lf"])) if isinstance(r, Record)]
    by_line = {r.line: r for r in records}
    # line 3 is read from the start learnt from lines 1 and 2: the same objects
    assert by_line[3].shared == {"setup": "A", "n": 1}
    assert by_line[3].value["setup"] is by_line[3].shared["setup"]
    assert by_line[1].shared is None and by_line[2].shared is None  # read whole
    assert by_line[2].value["k"] is not by_line[3].value["k"]  # a list is each record's own
    # a key written again after the shared start: its later value, in its first place; not shared
    assert list(by_line[4].value.items()) == [("setup", "A"), ("n", 5), ("t", 4)] and by_line[4].shared is None
    # 1 and 1.0 and true are different starts
    assert by_line[8].shared == {"setup": "A"} and by_line[8].value["n"] == 1.0
    assert by_line[23].shared == {"s": "A", "n": True} and by_line[23].value["n"] is True
    # an object as the first member: nothing is shared
    assert by_line[13].shared is None
    assert by_line[26].shared == {"s": "Bé", "n": 2}
    # "t" twice: the start ends before "x" and holds the first "t"; the record keeps the later one
    assert list(by_line[29].value.items()) == [("t", 6), ("x", 3)] and by_line[29].shared is None


def test_a_nested_value_is_never_part_of_the_shared_start():
    lines = [json.dumps({"cfg": {"a": 1}, "x": "same", "t": i}) for i in range(5)]
    records = [r for r in iter_json(Source("t.jsonl", text="\n".join(lines) + "\n")) if isinstance(r, Record)]
    assert [r.shared for r in records] == [None] * 5  # the first member already differs in kind
    assert records[3].value["cfg"] is not records[4].value["cfg"]
    records[3].value["cfg"]["a"] = 99  # what an importer might do to its record ...
    assert records[4].value["cfg"] == {"a": 1}  # ... changes no other record


def test_lines_without_a_common_start_stop_the_looking_after_a_few(monkeypatch):
    calls = []
    real = reader._SharedStart._learn
    monkeypatch.setattr(reader._SharedStart, "_learn", lambda self, t, v: calls.append(t) or real(self, t, v))
    text = "".join(json.dumps({"id": i, "x": 1}) + "\n" for i in range(60))
    records = [r for r in iter_json(Source("t.jsonl", text=text)) if isinstance(r, Record)]
    assert [r.value["id"] for r in records] == list(range(60))
    assert len(calls) == reader._SharedStart.MAX_MISSES
    assert all(r.shared is None for r in records)


def test_a_real_llama_bench_file_shares_its_setup_and_reads_the_same():
    text = LLAMA_M5.read_text(encoding="utf-8")
    records = [r for r in iter_json(Source(LLAMA_M5.name, text=text)) if isinstance(r, Record)]
    assert [r.value for r in records] == [json.loads(line) for line in text.splitlines() if line.strip()]
    assert [list(r.value) for r in records] == [list(json.loads(line)) for line in text.splitlines() if line.strip()]
    shared = [r for r in records if r.shared is not None]
    assert len(shared) >= len(records) - 2
    assert {"model_type", "gpu_info", "n_gpu_layers"} <= set(shared[0].shared)
    assert not {"n_prompt", "n_gen", "avg_ts", "test_time"} & set(shared[0].shared)


def _llama_lines(tail_key: str | None, values: list) -> str:
    """The Apple M5 file's first record, repeated with changing figures; `tail_key` (a setup field)
    moved after the figures, with one of `values` per line."""
    base = json.loads(LLAMA_M5.read_text(encoding="utf-8").splitlines()[0])
    lines = []
    for i, v in enumerate(values):
        rec = dict(base, avg_ts=10.0 + i, test_time=f"2026-01-01T00:00:{i:02d}Z")
        if tail_key is not None:
            rec.pop(tail_key)
            rec[tail_key] = v
        lines.append(json.dumps(rec))
    return "\n".join(lines) + "\n"


def _setups(text: str) -> list:
    out = []
    for item in llama_bench.iter_batches(Source("t.jsonl", text=text)):
        if isinstance(item, Batch):
            out += [item.setup] * len(item.rows)
    return out


def test_llama_bench_records_sharing_their_setup_have_one_setup():
    setups = _setups(_llama_lines(None, [None] * 6))
    assert len(setups) == 6 and len({id(s) for s in setups}) == 1


def test_a_setup_field_written_after_the_figures_still_tells_setups_apart():
    # n_threads after test_time: it is not among the shared members, so the setup is compared
    setups = _setups(_llama_lines("n_threads", [8, 8, 8, 16, 16, 8]))
    assert [s.conditions["n_threads"] for s in setups] == [8, 8, 8, 16, 16, 8]
    assert setups[0] is setups[1] is setups[2] and setups[3] is setups[4] and setups[0] is not setups[3]


def test_a_setup_field_that_only_later_records_write_after_the_figures_makes_a_setup_of_its_own():
    base = json.loads(LLAMA_M5.read_text(encoding="utf-8").splitlines()[0])
    base.pop("n_threads")
    lines = []
    for i in range(5):
        rec = dict(base, avg_ts=10.0 + i, test_time=f"2026-01-01T00:00:{i:02d}Z")
        if i >= 3:
            rec["n_threads"] = 16  # the same shared start, one key more after it
        lines.append(json.dumps(rec))
    setups = _setups("\n".join(lines) + "\n")
    assert [s.conditions.get("n_threads") for s in setups] == [None, None, None, 16, 16]
